"""Hostile data files through ``modellens report``: a clean exit, an inert page, an untouched input.

Each input (CSV and Parquet files with a byte-order mark, decimal commas,
huge lines, formula-looking cells, HTML and terminal escapes in names, levels
and the target's name, control characters, empty files, headers only,
duplicated headers, mixed types, and seeded byte mutations of a valid file)
runs through the command line in a child process, with a deadline per input:

* the exit is clean: 0 with a report, or 1 with one line saying what is
  wrong, never a traceback nor an error the command line did not foresee
  (its catch-all names the exception type: ``error: ValueError: ...``);
* a page built from names and levels that are HTML shows them as text (the
  page's own nonce script is its only script, no element has an event
  handler, and no payload appears unescaped in its source);
* the input file is byte-for-byte what it was.

The inputs share one child process (the import costs once), which reports
each result as a JSON line; a child that dies counts a crash and one that
misses an input's deadline counts a hang, and a fresh child goes on with the
next input.  The counts are printed (``pytest -s``) and asserted.
"""

import hashlib
import json
import os
import queue
import random
import re
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from sklearn.compose import make_column_transformer
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder
from support import _parse

import modellens

SRC = str(Path(modellens.__file__).resolve().parents[1])
#: Seconds one input may take: a report on 40 rows takes a few seconds; a hang is one
#: that never ends (the slowest input once took minutes: a date parser on a 2 MB level).
DEADLINE = 120
FAST = ["--sample", "30", "--explain", "1", "--grid", "3", "--seed", "0"]

SCRIPT = "<script>alert('name')</script>"
IMG = "\"><img src=x onerror=alert(1)>"
FORMULA = "=cmd|' /C calc'!A0"
ESCAPE = "\x1b[2J\x1b]0;pwned\x07"
#: Strings that must never appear in a page's source as they are.
PAYLOADS = [SCRIPT, "<img src=x onerror", "<b onmouseover", "<svg onload"]

DRIVER = textwrap.dedent("""\
    import contextlib, io, json, sys
    from modellens.cli import main
    cases = json.load(open(sys.argv[1]))
    for i in range(int(sys.argv[2]), len(cases)):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(cases[i])
            except SystemExit as exc:
                code = exc.code
        print(json.dumps({"i": i, "code": code, "out": out.getvalue(),
                          "err": err.getvalue()}), flush=True)
    """)


def _frame(n=40, seed=0, names=("age", "income", "city"), levels=("Oslo", "Lima", "Pune")):
    rng = np.random.default_rng(seed)
    a, b, c = names
    X = pd.DataFrame({a: rng.uniform(20, 70, n).round(2), b: rng.normal(50, 10, n).round(3),
                      c: rng.choice(list(levels), n)})
    y = 0.1 * X[a] + 0.05 * X[b] + (X[c] == levels[1]) + rng.normal(0, 0.1, n)
    return X, y.round(4)


def _model(X, y):
    a, b, c = X.columns
    return make_pipeline(make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), [c]), ("passthrough", [a, b])), Ridge()).fit(X, y)


HOSTILE_NAMES = (SCRIPT, IMG, FORMULA + ESCAPE)
HOSTILE_LEVELS = ("<b onmouseover=alert(1)>x</b>", FORMULA, "Oslo\x1b[31m\r\x0b",
                  "<svg onload=alert(2)>")
HOSTILE_TARGET = "<b>target</b>\x1b[2J"


def _cases(tmp: Path):
    """(name, data file, model file, target) of every input, written into ``tmp``."""
    X, y = _frame()
    plain = tmp / "plain.skops"
    sio.dump(_model(X, y), plain)
    Xh, yh = _frame(names=HOSTILE_NAMES, levels=HOSTILE_LEVELS)
    hostile = tmp / "hostile.skops"
    sio.dump(_model(Xh, yh), hostile)
    good = X.assign(price=y)
    csv_text = good.to_csv(index=False)
    cases = []

    def add(name, content, *, model=plain, target="price", suffix=".csv"):
        path = tmp / f"{len(cases):02d}-{re.sub(r'[^a-z0-9]+', '-', name)}{suffix}"
        if isinstance(content, pd.DataFrame):
            if suffix == ".parquet":
                content.to_parquet(path)
            else:
                content.to_csv(path, index=False)
        else:
            path.write_bytes(content if isinstance(content, bytes) else content.encode())
        cases.append((name, path, model, target))

    add("valid csv", csv_text)
    add("valid parquet", good, suffix=".parquet")
    add("byte-order mark", "\ufeff" + csv_text)
    add("utf-16 with bom", csv_text.encode("utf-16"))
    add("latin-1 bytes", csv_text.replace("Oslo", "Øslo").encode("latin-1"))
    add("decimal commas", good.to_csv(index=False, sep=";", decimal=","))
    add("decimal commas, comma separated",
        good.astype({"age": str}).assign(age=lambda d: d.age.str.replace(".", ","))
        .to_csv(index=False))
    add("huge line", csv_text.replace("Oslo", "Oslo" + "x" * 2_000_000, 1))
    add("huge header", ",".join(["age", "income", "city", "price"]
                                + [f"c{i}" for i in range(20_000)]) + "\n"
        + "\n".join(line + "," * 20_000 for line in csv_text.splitlines()[1:]) + "\n")
    add("formula cells", good.assign(city=np.where(np.arange(40) % 2, "Oslo", FORMULA)))
    add("formula and html unused column",
        good.assign(**{SCRIPT: FORMULA, "note": "<svg onload=alert(2)>"}))
    add("html names, levels and target", Xh.assign(**{HOSTILE_TARGET: yh}), model=hostile,
        target=HOSTILE_TARGET)
    add("html names, parquet", Xh.assign(**{HOSTILE_TARGET: yh}), model=hostile,
        target=HOSTILE_TARGET, suffix=".parquet")
    add("control characters", csv_text.replace("Lima", "Li\x00ma\x1b[31m").replace(
        "Pune", "Pu\rne"))
    add("nul bytes", csv_text.replace(",", ",\x00", 5))
    add("empty file", b"")
    add("header only", csv_text.splitlines()[0] + "\n")
    add("one row", "\n".join(csv_text.splitlines()[:2]) + "\n")
    add("duplicated headers", csv_text.replace("age,income,city,price",
                                               "age,age,city,price", 1))
    add("duplicated headers, parquet", b"", suffix=".parquet")
    _duplicate_parquet(cases[-1][1], good)  # pandas does not write duplicate names
    add("mixed types", good.assign(age=np.where(np.arange(40) % 5, good.age.astype(str), "n/a")))
    add("inf and overflowing numbers", good.assign(income=np.where(
        np.arange(40) % 7, good.income.astype(str), "1e400")))
    add("all missing feature", good.assign(income=np.nan))
    add("one value feature", good.assign(income=np.where(np.arange(40) == 3, 5.0, np.nan)))
    add("text in the target", good.assign(price=np.where(np.arange(40) % 3, "high", "low")))
    add("unterminated quote", csv_text.replace("Oslo", '"Oslo', 1))
    add("ragged rows", csv_text.replace("\n", ",extra,cells\n", 3))
    add("windows line endings", csv_text.replace("\n", "\r\n"))
    add("truncated parquet", (good.to_parquet() or b"")[:300], suffix=".parquet")
    add("not parquet at all", b"PAR1 this is not a parquet file PAR1", suffix=".parquet")
    add("many levels", good.assign(city=[f"town {i}" for i in range(40)]))
    rng = random.Random(0)
    raw = csv_text.encode()
    for k in range(8):  # seeded byte mutations of the valid file
        data = bytearray(raw)
        for _ in range(rng.randint(1, 6)):
            at = rng.randrange(len(data))
            op = rng.choice(["flip", "insert", "delete", "cut"])
            if op == "flip":
                data[at] = rng.randrange(256)
            elif op == "insert":
                data[at:at] = bytes(rng.choice([b'"', b",", b"\n", b"\x00", b"\xff", b"\\"]))
            elif op == "delete":
                del data[at]
            else:
                del data[at:]
        add(f"mutation {k}", bytes(data))
    return cases


def _duplicate_parquet(path, good):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table([pa.array(good.age), pa.array(good.age), pa.array(good.city),
                      pa.array(good.price)], names=["age", "age", "city", "price"])
    pq.write_table(table, path)


def _digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _run_all(argvs, tmp):
    """Run every argv in children; ``{i: result}`` with result a dict or "crash"/"hang"."""
    manifest = tmp / "cases.json"
    manifest.write_text(json.dumps(argvs))
    results: dict = {}
    start = 0
    env = {**os.environ, "PYTHONPATH": SRC, "MPLBACKEND": "Agg"}
    while start < len(argvs):
        child = subprocess.Popen([sys.executable, "-c", DRIVER, str(manifest), str(start)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 cwd=tmp, env=env)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in child.stdout] + [lines.put(None)],
                         daemon=True).start()
        errors: list = []
        threading.Thread(target=lambda: errors.append(child.stderr.read()), daemon=True).start()
        i = start
        while i < len(argvs):
            try:
                line = lines.get(timeout=DEADLINE)
            except queue.Empty:
                child.kill()
                child.wait()
                results[i] = "hang"
                break
            if line is None:  # the child ended before answering input i
                child.wait()
                results[i] = f"crash (exit {child.returncode}): {''.join(errors)[-2000:]}"
                break
            answer = json.loads(line)
            results[answer["i"]] = answer
            i = answer["i"] + 1
        else:
            child.wait(timeout=DEADLINE)
        start = i + 1 if i < len(argvs) and i in results and not isinstance(
            results[i], dict) else i
    return results


def _clean_refusal(err):
    lines = [x for x in err.strip().splitlines() if x]
    return (bool(lines) and lines[-1].startswith("modellens report: error: ")
            and not re.match(r"modellens report: error: \w+(Error|Exception|Warning): ",
                             lines[-1])
            and all(x.startswith("modellens: warning: ") for x in lines[:-1]))


def _inert(page):
    parsed = _parse(page)
    nonce = re.search(r"script-src 'nonce-([^']+)'", page)
    scripts = [a for t, a in parsed.elements if t == "script"]
    problems = []
    own = None if nonce is None else {"nonce": nonce.group(1)}
    # the page's error box; with the explorer, plotly.js, its data (JSON, not run), its script
    explorer = [own, {**(own or {}), "type": "application/json", "id": "ml-data"}, own]
    if own is None or scripts not in ([own], [own] + explorer):
        problems.append(f"scripts {scripts}")
    for tag, attrs in parsed.elements:
        if any(k.startswith("on") for k in attrs) or tag in ("b", "svg", "iframe"):
            problems.append(f"element {tag} {attrs}")
        if tag == "img" and not attrs.get("src", "").startswith("data:image/png;base64,"):
            problems.append(f"img {attrs}")
    problems += [f"payload {p!r} unescaped" for p in PAYLOADS if p in page]
    return problems


@pytest.mark.slow
def test_hostile_data_files_exit_cleanly_and_leave_their_inputs(tmp_path):
    cases = _cases(tmp_path)
    before = {path: _digest(path) for _, path, _, _ in cases}
    outs = [tmp_path / f"report-{i:02d}.html" for i in range(len(cases))]
    argvs = [["report", "--data", str(path), "--model", str(model), "--target", target,
              "--out", str(out), *FAST] for (_, path, model, target), out in zip(cases, outs)]
    began = time.perf_counter()
    results = _run_all(argvs, tmp_path)
    seconds = time.perf_counter() - began
    counts = dict(tried=len(cases), refusals=0, reports=0, crashes=0, hangs=0,
                  unforeseen=0, changed=0, unsafe_pages=0)
    failures = []
    for i, (name, path, _, _) in enumerate(cases):
        got = results.get(i, "no result")
        if _digest(path) != before[path]:
            counts["changed"] += 1
            failures.append(f"{name}: the input file changed")
        if not isinstance(got, dict):
            counts["hangs" if got == "hang" else "crashes"] += 1
            failures.append(f"{name}: {got}")
            continue
        out, err = got["out"], got["err"]
        if "Traceback" in err or "Traceback" in out:
            counts["crashes"] += 1
            failures.append(f"{name}: traceback\n{err[-2000:]}")
        elif got["code"] == 0 and outs[i].is_file():
            counts["reports"] += 1
            problems = _inert(outs[i].read_text(encoding="utf-8"))
            if problems:
                counts["unsafe_pages"] += 1
                failures.append(f"{name}: page {problems[:3]}")
        elif got["code"] == 1 and _clean_refusal(err):
            counts["refusals"] += 1
        else:
            counts["unforeseen"] += 1
            failures.append(f"{name}: exit {got['code']}, stderr {err.strip()[-600:]!r}")
        for stream in (out, err):
            if "\x1b" in stream or "\x07" in stream:
                failures.append(f"{name}: a terminal escape was printed raw")
    print(f"\nfuzz (hostile data): {counts} in {seconds:.0f} s")
    for name, line in ((c[0], results.get(i)) for i, c in enumerate(cases)):
        if isinstance(line, dict):
            print(f"  {name}: exit {line['code']}: "
                  f"{(line['err'].strip().splitlines() or [''])[-1][:150]!r}")
    assert not failures, "\n".join(failures)
    assert counts["reports"] >= 5  # the valid files, and the hostile names, do give reports
