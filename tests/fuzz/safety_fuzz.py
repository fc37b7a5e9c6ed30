"""Seeded randomized fuzzers of issue 40: hostile strings, output paths, Dask faults.

Three generators, each drawing cases from one ``numpy`` seed, and one tally
of what every case gave:

* :func:`string_case` plants hostile strings (links, styled spans, scripts,
  ``<!--``, template strings, U+2028, right-to-left and zero-width
  characters, 6,000-character names) at random in the feature names, the
  category levels, the class labels, the target's name and the data file's
  name; the command line writes the interactive report and headless
  Chromium opens it, redraws every chart for every feature and class, and
  counts the markup found (a link, a styled label, an element with an event
  handler, a script that ran).
* :func:`path_case` writes the report to a random output path (a folder, a
  link to the data or the model, a dangling link, a missing parent, a
  read-only folder, a file as parent, names with odd characters, a name
  over the file system's limit), or kills the writing process at a random
  moment; a run either exits 0 with a whole report at that path or refuses
  in one line, the inputs unchanged, and never leaves a partial file under
  the name asked for.
* :func:`dask_case` explains a Dask frame of random partitions with a
  random fault (empty partitions, a model failing on one partition, a
  partition with another schema, a worker killed mid-run): the in-memory
  answer on the same rows, or a refusal (the library's error, or the
  model's own error), never the answer of the other partitions.

Every case runs in a child process under a time limit and an address-space
cap (``RLIMIT_AS``), so a hang or a memory blow-up is counted, not suffered.
``tests/fuzz/test_fuzz_safety.py`` runs a few cases in CI;
``benchmarks/fuzz_safety.py`` runs many and prints the counts.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import json
import os
import queue
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np

SRC = str(Path(__file__).resolve().parents[2] / "src")
HERE = Path(__file__).resolve().parent

LINK = '<a href="https://evil.example/" target="_blank">Session expired: log in</a>'
SPAN = '<span style="font-size:90px">HUGE</span>'
SCRIPT = "<script>document.body.setAttribute('data-pwned', 1)</script>"
HANDLER = "<img src=x onerror=\"document.body.setAttribute('data-pwned', 1)\">"
FRAGMENTS = (LINK, SPAN, SCRIPT, HANDLER, "<b>bold</b>", "<i>it</i>", "<sub>2</sub>",
             "one<br>two", "<!--", "-->", "{{7*7}}", "${7*7}", "{% raw %}", "`${x}`",
             "\u2028", "\u2029", "\u202eevil\u202c", "\u200b", "\u200d", "\ufeff",
             "&lt;b&gt;", "&amp;", "'\"", "</script>", "javascript:alert(1)", "%s%n",
             "\\u003c", "plain")
#: Characters a file name may not hold (the separator, NUL) and a CSV header newline.
_NOT_IN_NAMES = str.maketrans({"/": "\u2215", "\0": "", "\n": " ", "\r": " "})


def hostile(rng, *, long_ok=True) -> str:
    """One random hostile string: a few fragments, now and then 6,000 characters long."""
    parts = [FRAGMENTS[i] for i in rng.integers(0, len(FRAGMENTS), rng.integers(1, 4))]
    text = "".join(parts)
    if long_ok and rng.random() < 0.15:
        text = (text + "n" * 6000)[:6000]
    return text


def _digest(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _cap_memory(limit_bytes):
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
        os.setsid()  # its own group: a timeout ends the case's every process
    return cap


#: A process that imports what the cases import once, then forks a child per case
#: (:func:`forking`): each case still its own process (its own session, address-space cap,
#: working directory and output files; a crash, hang or blow-up ends only it), as
#: ``python -c code args`` would run it, without paying ``import modellens.cli`` and
#: ``import skops.io`` (about 5 s of CPU) again before a refusal that takes milliseconds.
FORK_SERVER = """\
import atexit, json, os, resource, sys, traceback
import modellens.cli, skops.io, sklearn.ensemble, sklearn.compose, pandas
for line in sys.stdin:
    case = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.setsid()  # its own group: a timeout ends the case's every process
        resource.setrlimit(resource.RLIMIT_AS, (case["memory"], case["memory"]))
        os.chdir(case["cwd"])
        for fd, name in ((1, "out"), (2, "err")):
            os.dup2(os.open(case[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
        sys.stdin = open(os.devnull)
        sys.argv = ["-c", *case["args"]]
        try:
            exec(compile(case["code"], "<string>", "exec"), {"__name__": "__main__"})
            code = 0
        except SystemExit as stop:  # its status as the interpreter reads it
            code = stop.code if isinstance(stop.code, int) else stop.code is not None
            if not isinstance(stop.code, (int, type(None))):
                print(stop.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
            code = 1
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # (no teardown of the modules the server imported: ~1 s of CPU)
    print(json.dumps({"pid": pid}), flush=True)
    print(json.dumps({"code": os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])}), flush=True)
os._exit(0)  # (as its children: nothing to tear down)
"""

_server = None


@contextlib.contextmanager
def forking():
    """Within it, :func:`run_child` forks each case from one process that imported the
    command line (``FORK_SERVER``) instead of starting an interpreter."""
    global _server
    env = dict(os.environ, PYTHONPATH=SRC, MPLBACKEND="Agg", PYTHONHASHSEED="0")
    proc = subprocess.Popen([sys.executable, "-c", FORK_SERVER], env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout] + [lines.put(None)],
                     daemon=True).start()
    with tempfile.TemporaryDirectory() as streams:
        _server = proc, lines, itertools.count(), Path(streams)
        try:
            yield
        finally:
            _server = None
            proc.stdin.close()
            try:
                proc.wait(timeout=600)
            finally:
                proc.kill()  # (an ended one: nothing)


def _run_forked(code, args, *, cwd, timeout, memory_gb):
    proc, lines, count, streams = _server
    case = streams / str(next(count))
    request = {"code": code, "args": [str(a) for a in args], "cwd": str(cwd),
               "memory": int(memory_gb * 2**30), "out": f"{case}.out", "err": f"{case}.err"}
    proc.stdin.write(json.dumps(request) + "\n")
    proc.stdin.flush()
    pid = json.loads(lines.get(timeout=600))["pid"]  # (the first waits for the imports)
    try:
        code = json.loads(lines.get(timeout=timeout))["code"]
    except queue.Empty:  # (a server that ended puts None: a TypeError, not a hang)
        with contextlib.suppress(ProcessLookupError):  # (one that ended meanwhile)
            os.killpg(pid, signal.SIGKILL)
        lines.get(timeout=600)  # the server reaped it
        code = None
    out, err = (Path(request[k]).read_text(errors="replace") for k in ("out", "err"))
    for k in ("out", "err"):
        os.unlink(request[k])
    return code, out, err


def run_child(code: str, args, *, cwd, timeout, memory_gb=4.0):
    """Run ``code`` in a child interpreter (``-I``: the worktree's code on its path only),
    or a child forked from one that imported the command line, within :func:`forking`."""
    if _server is not None:
        return _run_forked(code, args, cwd=cwd, timeout=timeout, memory_gb=memory_gb)
    env = dict(os.environ, PYTHONPATH=SRC, MPLBACKEND="Agg", PYTHONHASHSEED="0")
    proc = subprocess.Popen([sys.executable, "-c", code, *map(str, args)], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_cap_memory(int(memory_gb * 2**30)))
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return None, out, err
    return proc.returncode, out, err


def _memory_blowup(err: str) -> bool:
    return "MemoryError" in err or "std::bad_alloc" in err or "Cannot allocate memory" in err


def _one_line_refusal(code, err) -> bool:
    """Exit 1 (the command's error) or 2 (argparse's), one line saying what is wrong."""
    lines = [line for line in err.strip().splitlines() if line.strip()]
    return (code in (1, 2) and "Traceback" not in err and bool(lines)
            and "error:" in lines[-1] and "Error:" not in lines[-1].split("error:")[0])


# --- the small model and data every command-line case uses --------------------------------

MAKE_FILES = """
import sys, json
import numpy as np, pandas as pd, skops.io as sio
from sklearn.compose import make_column_transformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder
spec = json.loads(open(sys.argv[1], encoding="utf-8").read())
rng = np.random.default_rng(spec["seed"])
n = 80
num, cat, levels, classes = spec["numeric"], spec["categorical"], spec["levels"], spec["classes"]
X = pd.DataFrame({name: rng.normal(size=n) for name in num})
X[cat] = rng.choice(levels, size=n)
y = np.where(X[num[0]] + (X[cat] == levels[0]) > 0.3, classes[0], classes[1])
X.assign(**{spec["target"]: y}).to_csv(spec["data"], index=False)
encode = make_column_transformer((OneHotEncoder(handle_unknown="ignore"), [cat]),
                                 remainder="passthrough")
model = make_pipeline(encode, RandomForestClassifier(n_estimators=8, max_depth=3,
                                                     random_state=0)).fit(X, y)
sio.dump(model, spec["model"])
"""

REPORT = """
import sys
from modellens.cli import main
sys.exit(main(sys.argv[1:]))
"""

FAST = ["--sample", "40", "--explain", "2", "--grid", "3", "--seed", "0"]


def _unique(names):
    """Names made distinct by a suffix (a table's columns must differ)."""
    seen, out = set(), []
    for i, name in enumerate(names):
        while name in seen or not name.strip():
            name = f"{name} #{i}"
        seen.add(name)
        out.append(name)
    return out


def _make_files(folder, rng, *, hostile_names: bool, data_name="data.csv"):
    folder.mkdir(parents=True, exist_ok=True)
    pick = (lambda: hostile(rng)) if hostile_names else None
    names = _unique([pick() if pick else c for c in ("a", "b", "c", "d", "y")])
    levels = _unique([pick() if pick else c for c in ("u", "v", "w")])
    classes = _unique([hostile(rng, long_ok=False) if pick else c for c in ("no", "yes")])
    spec = {"seed": int(rng.integers(2**31)), "numeric": names[:3], "categorical": names[3],
            "levels": levels, "classes": classes, "target": names[4],
            "data": str(folder / data_name), "model": str(folder / "model.skops")}
    (folder / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    code, _, err = run_child(MAKE_FILES, [folder / "spec.json"], cwd=folder, timeout=300)
    if code != 0:
        raise RuntimeError("the fuzz case's files could not be made: " + err[-2000:])
    return spec


# --- hostile strings in every report position, opened in Chromium -------------------------

#: What the page holds that markup would have made: links to the planted site, styled or
#: bold labels, elements with event handlers, a script that ran.
PROBE = r"""(() => {
  const plots = [...document.querySelectorAll(".js-plotly-plot")];
  const inPlots = sel => plots.reduce((k, p) => k + p.querySelectorAll(sel).length, 0);
  const styled = plots.reduce((k, p) => k + [...p.querySelectorAll("tspan, text")].filter(
      t => /90px|bold|italic|baseline-shift/.test((t.getAttribute("style") || "") +
                                                 (t.getAttribute("font-weight") || ""))
    ).length, 0);
  // anywhere in the page (tables, notes, headings): elements the planted tags would make;
  // the page's own markup has none of these (no b, i, sub, no inline 90px, no handlers)
  const planted = document.querySelectorAll(
    'a[href*="evil"], a[href^="javascript"], [onerror], [onload], [style*="90px"], ' +
    'b, i, sub, img[src="x"]').length;
  return {
    plots: plots.length,
    markup: planted + inPlots("a") + styled +
            (document.body.hasAttribute("data-pwned") ? 1 : 0),
    text: plots.map(p => p.textContent).join("\n").length,
  };
})()"""

#: Hover labels are drawn only on hover: each trace of each chart hovered at its first
#: point, the label's markup counted (a link, styled text) and the labels drawn.
HOVER = r"""(() => {
  let labels = 0, markup = 0;
  for (const p of document.querySelectorAll(".js-plotly-plot")) {
    (p.data || []).forEach((t, c) => {
      try {
        Plotly.Fx.hover(p, [{curveNumber: c, pointNumber: t.type === "heatmap" ? [0, 0] : 0}]);
      } catch (e) { return; }
      const layer = p.querySelectorAll(".hoverlayer");
      const texts = [...layer].flatMap(l => [...l.querySelectorAll("text, tspan")]);
      labels += texts.length > 0;
      markup += [...layer].reduce((k, l) => k + l.querySelectorAll("a").length, 0) +
        texts.filter(t => /90px|bold|italic|baseline-shift/.test(
          (t.getAttribute("style") || "") + (t.getAttribute("font-weight") || ""))).length;
      Plotly.Fx.unhover(p);
    });
  }
  return {labels, markup};
})()"""

SWITCH = """(() => {{ const s = document.querySelector('[data-ml-control="{step}"]');
  s.value = {value}; s.dispatchEvent(new Event('change')); return true; }})()"""


def look(browser) -> dict:
    """The page's charts and markup as drawn, with every trace's hover label drawn once."""
    seen, hover = browser.evaluate(PROBE), browser.evaluate(HOVER)
    return {**seen, "markup": seen["markup"] + hover["markup"], "hovered": hover["labels"]}


def _browse(page, tmp):
    for folder in (HERE.parent, HERE.parent / "report"):  # support.py, the browser driver
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    from test_report_browser import _at_width

    browser = _at_width(page, tmp, 1280, height=2400)
    try:
        seen = [look(browser)]
        for step in ("feature", "class"):
            options = browser.evaluate(
                f"[...document.querySelector('[data-ml-control=\"{step}\"]')?.options || []]"
                ".map(o => o.value)")
            for value in options:
                browser.evaluate(SWITCH.format(step=step, value=json.dumps(value)))
                seen.append(look(browser))
    finally:
        browser.close()
    return seen


def string_case(seed: int, tmp: Path, *, browser=True) -> tuple[str, dict]:
    """One report of hostile names; its outcome and the markup counted in the page."""
    rng = np.random.default_rng(seed)
    name = hostile(rng, long_ok=False).translate(_NOT_IN_NAMES)[:120] + ".csv"
    spec = _make_files(tmp, rng, hostile_names=True, data_name=name)
    before = {p: _digest(p) for p in (spec["data"], spec["model"])}
    out = tmp / "report.html"
    code, _, err = run_child(REPORT, ["report", "--data", spec["data"], "--model",
                                      spec["model"], "--target", spec["target"],
                                      "--out", out, *FAST], cwd=tmp, timeout=600)
    facts = {"changed": sum(_digest(p) != d for p, d in before.items()), "markup": 0}
    if code is None:
        return "hang", facts
    if _memory_blowup(err):
        return "memory", facts
    if code != 0:
        return ("refusal" if _one_line_refusal(code, err) else "crash"), {**facts, "err": err}
    page = out.read_text(encoding="utf-8")
    if "<!--" in page.split("<body", 1)[-1].replace("<!-- -->", ""):
        facts["markup"] += 1  # a planted comment opener raw in the page
    if browser:
        seen = _browse(out, tmp)
        facts["markup"] += sum(s["markup"] for s in seen)
        if seen[0]["plots"] < 3 or seen[0]["hovered"] < 3:
            return "crash", {**facts, "err": f"only {seen[0]['plots']} charts drawn, "
                                             f"{seen[0]['hovered']} hover labels"}
    return "result", facts


# --- output paths and interrupted writes --------------------------------------------------

PATH_KINDS = ("folder", "link_to_data", "link_to_model", "dangling_link", "missing_parent",
              "read_only_folder", "file_as_parent", "odd_name", "too_long", "the_data",
              "old_report", "killed")


def _out_path(kind, rng, tmp, spec):
    """The ``--out`` of a case, made on disk as the kind says; the old report if one."""
    old = None
    if kind == "folder":
        out = tmp / "out"
        out.mkdir()
        if rng.random() < 0.5:
            (out / "keep.txt").write_text("keep")
    elif kind in ("link_to_data", "link_to_model"):
        out = tmp / "report.html"
        out.symlink_to(spec["data" if kind == "link_to_data" else "model"])
    elif kind == "dangling_link":
        out = tmp / "report.html"
        out.symlink_to(tmp / "nowhere" / "r.html")
    elif kind == "missing_parent":
        out = tmp / "no" / "such" / "r.html"
    elif kind == "read_only_folder":
        folder = tmp / "ro"
        folder.mkdir()
        folder.chmod(0o500)
        out = folder / "r.html"
    elif kind == "file_as_parent":
        out = Path(spec["data"]) / "r.html"
    elif kind == "odd_name":
        out = tmp / (hostile(rng, long_ok=False).translate(_NOT_IN_NAMES)[:100] + " -x.html")
    elif kind == "too_long":
        out = tmp / ("n" * int(rng.integers(250, 300)) + ".html")
    elif kind == "the_data":
        out = Path(spec["data"])
    else:  # old_report, killed: a whole older report is there
        out = tmp / "report.html"
        old = "<!doctype html><html><body>the old, whole report</body></html>\n"
        out.write_text(old, encoding="utf-8")
    return out, old


def _whole(path) -> bool:
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    return text.lower().startswith("<!doctype html>") and text.rstrip().endswith("</html>")


def path_case(seed: int, tmp: Path, spec=None) -> tuple[str, dict]:
    """One report written to a random output path, or killed at a random moment."""
    rng = np.random.default_rng(seed)
    kind = PATH_KINDS[int(rng.integers(len(PATH_KINDS)))]
    inputs = tmp.parent / "inputs"  # one model and data file for every case of a run
    spec_file = inputs / "spec.json"
    if spec is None:
        spec = json.loads(spec_file.read_text(encoding="utf-8")) if spec_file.exists() else \
            _make_files(inputs, np.random.default_rng(0), hostile_names=False)
    work = tmp / f"case{seed}"
    work.mkdir()
    before = {p: _digest(p) for p in (spec["data"], spec["model"])}
    listing = sorted(p.name for p in inputs.iterdir())
    out, old = _out_path(kind, rng, work, spec)
    argv = ["report", "--data", spec["data"], "--model", spec["model"], "--target",
            spec["target"], "--out", out, "--static", *FAST]
    timeout = float(rng.uniform(0.5, 25.0)) if kind == "killed" else 600
    code, _, err = run_child(REPORT, argv, cwd=work, timeout=timeout)
    facts = {"kind": kind, "changed": sum(_digest(p) != d for p, d in before.items())
             + (sorted(p.name for p in inputs.iterdir()) != listing)}
    if kind == "read_only_folder":
        (work / "ro").chmod(0o700)
    if kind == "killed" and code is None:
        # killed: the old report whole, or a whole new one; any part file hidden
        whole = out.exists() and (out.read_text(encoding="utf-8") == old or _whole(out))
        return ("result" if whole else "partial"), facts
    if code is None:
        return "hang", facts
    if _memory_blowup(err):
        return "memory", facts
    if code == 0:
        if not (out.is_file() and not out.is_symlink() and _whole(out)):
            return "partial", {**facts, "err": f"exit 0 but {out} is not a whole report"}
        return "result", facts
    if not _one_line_refusal(code, err):
        return "crash", {**facts, "err": err[-2000:]}
    if old is not None and out.read_text(encoding="utf-8") != old:
        return "partial", {**facts, "err": "the old report was changed by a refused run"}
    if kind == "folder" and sorted(p.name for p in out.iterdir()) not in ([], ["keep.txt"]):
        return "partial", {**facts, "err": "the folder got files"}
    return "refusal", facts


# --- Dask faults --------------------------------------------------------------------------

DASK_CASE = r"""
import json, os, signal, sys, threading, time
import numpy as np, pandas as pd
import dask, dask.dataframe as dd
import modellens as ml

class Failed(Exception):
    pass

def outcome(case):
    rng = np.random.default_rng(case["seed"])
    parts = [part(rng, case, i) for i in range(len(case["rows"]))]
    meta = pd.DataFrame({"a": [0.0], "b": [0.0], "c": [0.0]}).iloc[:0]
    X = dd.from_delayed([dask.delayed(lambda p: p)(p) for p in parts], meta=meta,
                        verify_meta=False)
    try:
        got = explain(case, X)
    except (ml.InvalidParameterError, ml.ModelError, Failed) as exc:
        return "refusal", type(exc).__name__ + ": " + str(exc)[:300]
    return compare(case, parts, got)

def part(rng, case, i):
    n = case["rows"][i]
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                          "c": rng.integers(0, 4, size=n).astype(float)})
    if i == case["odd"]:
        fault = case["fault"]
        if fault == "fails":
            frame.loc[frame.index[:1], "a"] = 999.0
        elif fault == "text":
            frame["b"] = frame["b"].astype(str)
        elif fault == "missing":
            frame = frame.drop(columns="c")
        elif fault == "extra":
            frame["d"] = 1.0
        elif fault == "int":
            frame["c"] = frame["c"].astype(np.int64)
        elif fault == "renamed":
            frame = frame.rename(columns={"b": "B"})
    return frame

def f(D):
    a = np.asarray(D["a"], dtype=float)
    if (a == 999.0).any():
        raise Failed("the model refuses a row")
    return a * 2 + np.asarray(D["b"], dtype=float) - np.asarray(D["c"], dtype=float)

def explain(case, X):
    if case["fault"] != "killed":
        with dask.config.set(scheduler="synchronous"):
            return ml.pdp(f, X, case["features"], grid=case["grid"])
    with ml.config(n_workers=2, progress=False):
        from modellens._config import get_config
        client = get_config()["client"]
        pid = next(iter(client.run(os.getpid).values()))
        timer = threading.Timer(case["delay"], os.kill, (pid, signal.SIGKILL))
        timer.start()
        try:
            return ml.pdp(f, X, case["features"], grid=case["grid"])
        finally:
            timer.cancel()

def compare(case, parts, got):
    features = case["features"]
    whole = pd.concat([p for p in parts if len(p)], ignore_index=True) if any(
        len(p) for p in parts) else None
    try:
        want = ml.pdp(f, whole, features, grid=case["grid"])
    except Exception as exc:
        return "partial", "a result where the rows in memory give " + repr(exc)[:300]
    for name in features:
        if not (np.allclose(got[name].values, want[name].values, rtol=1e-9, atol=1e-9)
                and np.allclose(got[name].grid, want[name].grid)):
            return "partial", f"{name}: not the answer on the same rows in memory"
    return "result", ""

if __name__ == "__main__":
    import faulthandler  # a case the watchdog ends (600 s) first says where it waited
    faulthandler.dump_traceback_later(540)
    print(json.dumps(outcome(json.loads(sys.argv[1]))))
"""

DASK_FAULTS = ("none", "empty", "fails", "text", "missing", "extra", "int", "renamed",
               "killed")


def dask_case(seed: int, tmp: Path, *, faults=DASK_FAULTS,
              in_process=False) -> tuple[str, dict]:
    """One Dask frame of random partitions with one random fault, explained by ``pdp``.

    ``in_process`` runs it here (no hang or memory watch: CI's small run, which
    leaves out the killed worker), else in a watched child.
    """
    rng = np.random.default_rng(seed)
    fault = faults[int(rng.integers(len(faults)))]
    k = int(rng.integers(2, 6))
    rows = [int(rng.integers(5, 60)) for _ in range(k)]
    if fault == "empty":
        for i in rng.choice(k, size=int(rng.integers(1, k + 1)), replace=False):
            rows[i] = 0
    if fault == "killed":
        rows = [r * 400 for r in rows]  # long enough to be killed while it runs
    case = {"seed": seed, "rows": rows, "odd": int(rng.integers(k)), "fault": fault,
            "features": sorted(rng.choice(["a", "b", "c"], size=int(rng.integers(1, 3)),
                                          replace=False).tolist()),
            "grid": int(rng.integers(2, 6)), "delay": float(rng.uniform(0.0, 2.0))}
    if in_process:
        space = {"__name__": "dask_case"}
        exec(DASK_CASE, space)  # noqa: S102 - this module's own code
        code, out, err = 0, json.dumps(space["outcome"](case)), ""
    else:
        code, out, err = run_child(DASK_CASE, [json.dumps(case)], cwd=tmp, timeout=600)
    facts = {"fault": fault, "changed": 0}
    if code is None:  # (its stacks, dumped at 540 s)
        return "hang", {**facts, "err": err[-4000:]}
    if _memory_blowup(err):
        return "memory", facts
    if code != 0 or not out.strip():
        return "crash", {**facts, "err": err[-2000:]}
    kind, why = json.loads(out.strip().splitlines()[-1])
    if kind == "result" and fault in ("fails", "text", "missing", "renamed"):
        kind, why = "partial", f"a {fault} partition gave a result"
    if kind == "refusal" and (fault == "none" or fault == "empty" and sum(rows) > 0
                              and not why.startswith("InvalidParameterError")):
        kind = "crash"  # a sound frame refused, or refused without saying why and what to do
    return kind, {**facts, "why": why}


# --- the tally ----------------------------------------------------------------------------

OUTCOMES = ("result", "refusal", "crash", "hang", "memory", "partial")


def tally(cases, run, tmp_root: Path, *, seconds=None, **kwargs) -> dict:
    """Run ``run(seed, folder)`` for each seed (until ``seconds`` pass); count what each gave."""
    counts = Counter({name: 0 for name in OUTCOMES})
    counts.update(inputs=0, markup=0, changed=0)
    failures, cases_seen = [], []
    start = time.monotonic()
    for seed in cases:
        if seconds is not None and time.monotonic() - start > seconds:
            break
        folder = tmp_root / f"{run.__name__}-{seed}"
        folder.mkdir(parents=True)
        try:
            kind, facts = run(seed, folder, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the harness's own failure: counted
            kind, facts = "crash", {"err": repr(exc)}
        counts["inputs"] += 1
        counts[kind] += 1
        cases_seen.append((seed, kind, facts.get("fault") or facts.get("kind") or ""))
        counts["markup"] += facts.get("markup", 0)
        counts["changed"] += facts.get("changed", 0)
        if kind in ("crash", "hang", "memory", "partial") or facts.get("markup") or \
                facts.get("changed"):
            failures.append((seed, kind, {k: str(v)[-1500:] for k, v in facts.items()}))
    drawn = Counter(f"{what}:{kind}" for _, kind, what in cases_seen)
    return {"counts": dict(counts), "failures": failures, "cases": cases_seen,
            "drawn": dict(sorted(drawn.items()))}


#: Cases of one run's seed: a block of their own (seeds 11 and 12 ran cases 11... and
#: 12..., nearly all the same ones).
SEED_BLOCK = 1_000_000


def case_seeds(seed: int, n: int) -> range:
    """The case seeds of a run with ``--seed seed``: disjoint blocks for distinct seeds."""
    if not 0 <= n <= SEED_BLOCK:
        raise ValueError(f"--inputs must be between 0 and {SEED_BLOCK}")
    return range(seed * SEED_BLOCK, seed * SEED_BLOCK + n)


def main(argv=None) -> int:
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--which", nargs="+", default=["strings", "paths", "dask"],
                        choices=["strings", "paths", "dask"])
    parser.add_argument("--inputs", type=int, default=50, help="cases of each fuzzer")
    parser.add_argument("--seconds", type=float, default=600, help="time per fuzzer")
    parser.add_argument("--seed", type=int, default=0,
                        help="the run's seed: its cases are seeds seed*10**6 + i")
    args = parser.parse_args(argv)
    runs = {"strings": string_case, "paths": path_case, "dask": dask_case}
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for which in args.which:
            seeds = case_seeds(args.seed, args.inputs)
            got = tally(seeds, runs[which], Path(tmp), seconds=args.seconds)
            print(which, json.dumps(got["counts"]), flush=True)
            print("   drawn:", json.dumps(got["drawn"]), flush=True)
            for failure in got["failures"]:
                print("   ", json.dumps(failure)[:3000], flush=True)
            bad += len(got["failures"])
    return 1 if bad else 0
