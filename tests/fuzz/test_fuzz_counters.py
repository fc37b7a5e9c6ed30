"""Every count of the fuzzing suites can fire (issue 40): one planted bad case per count.

A long run's closing counts (crashes, hangs, memory blow-ups, markup found in
the page, files changed, partial results presented as whole, foreign errors)
are only worth their zeros if each check can fail.  Each test below plants
one case known to be bad, through the suite's own runner and classification,
and sees it counted.  The browser's markup probe is planted in
``test_fuzz_safety.py``, on the page its CI case has already written.
"""

import contextlib
import json
import sys
import textwrap
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import model_fuzz as mf  # noqa: E402
import result_fuzz as rf  # noqa: E402
import safety_fuzz as sf  # noqa: E402

import modellens as ml  # noqa: E402


# --- result dicts -------------------------------------------------------------------------

class _Planted:
    """A result type whose ``from_dict`` does what the dict's ``how`` says."""

    def __init__(self, how):
        self.how = how

    @classmethod
    def from_dict(cls, d):
        how = d["how"]
        if how == "refuse":
            raise ml.InvalidParameterError("field 'how': planted")
        if how == "foreign":
            raise IndexError("planted")
        if how == "change":
            d["seen"] = True  # the caller's dict written to
        return cls(how)

    def to_frame(self):
        if self.how == "unusable":
            raise ValueError("planted: accepted, then fails in use")

    def to_dict(self):
        return {"how": self.how}


@pytest.mark.parametrize("how, outcome", [
    ("fine", "result"), ("refuse", "refused"), ("foreign", "foreign"),
    ("unusable", "unusable"), ("change", "changed")])
def test_result_fuzz_counts_each_outcome(monkeypatch, how, outcome):
    monkeypatch.setattr(ml, "PlantedResult", _Planted, raising=False)
    assert rf.run_one("PlantedResult", {"how": how})[0] == outcome


# --- model files: the runner's watchdog and counts ----------------------------------------

#: A stand-in for ``model_fuzz.py --child``: the same protocol, each input doing as told.
FAKE_CHILD = """
import json, os, signal, sys, time
from pathlib import Path
inputs = json.loads(Path(sys.argv[2]).read_text())
for i in range(int(sys.argv[3]), len(inputs)):
    print(f"B {i}", flush=True)
    how = inputs[i]["how"]
    if how == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif how == "hang":
        time.sleep(600)
    elif how == "slow":
        time.sleep(3)
    elif how == "exit":
        sys.exit(0)
    elif how == "change":
        Path(inputs[i]["path"]).write_bytes(b"written to")
    print(f"E {i} {inputs[i]['says']}", flush=True)
"""


def _fake_run(tmp_path, monkeypatch, plan, **kwargs):
    child = tmp_path / "child.py"
    child.write_text(FAKE_CHILD)
    monkeypatch.setattr(mf, "HERE", child)
    inputs = []
    for k, (how, says, fmt) in enumerate(plan):
        path = tmp_path / f"in{k}"
        path.write_bytes(b"model")
        inputs.append({"path": str(path), "format": fmt, "seed": "s", "how": how,
                       "says": says})
    return mf.run_inputs(inputs, tmp_path, **kwargs)


def test_model_fuzz_counts_crashes_hangs_memory_changes_and_disagreements(tmp_path,
                                                                          monkeypatch):
    plan = [("ok", "refused", "x"), ("ok", "loaded", "x"), ("hang", "", "x"),
            ("crash", "", "x"), ("ok", "unclean:MemoryError", "x"),
            ("change", "loaded", "x"), ("ok", "loaded-disagree", "x")]
    result = _fake_run(tmp_path, monkeypatch, plan, timeout=2, first_timeout=60)
    counts = result["counts"]
    assert counts == {"refused": 1, "loaded": 2, "hang": 1, "crash": 1,
                      "unclean:MemoryError": 1, "loaded-disagree": 1}
    assert result["changed"] == 1 and result["tried"] == len(plan)
    text = mf.summary(result)
    for part in ("crashes 1", "hangs 1", "memory blow-ups 1", "inputs changed 1",
                 "disagreeing with the model 1"):
        assert part in text, text


def test_model_fuzz_names_a_child_that_exits_in_the_middle_of_an_input(tmp_path, monkeypatch):
    plan = [("ok", "loaded", "x"), ("exit", "", "x"), ("ok", "refused", "x")]
    result = _fake_run(tmp_path, monkeypatch, plan, timeout=5, first_timeout=60)
    assert result["counts"] == {"loaded": 1, "lost": 1, "refused": 1}
    assert "other outcomes {'lost': 1}" in mf.summary(result)  # not dropped from the line


def test_a_childs_first_input_of_a_format_is_not_a_hang_while_it_warms_up(tmp_path,
                                                                          monkeypatch):
    # the first input of each format imports its library and compiles the scans: on a
    # loaded machine that took past the 30 s watchdog, counted as a hang of a valid file
    plan = [("slow", "loaded", "x"), ("ok", "loaded", "x"), ("slow", "loaded", "y"),
            ("slow", "", "y")]
    result = _fake_run(tmp_path, monkeypatch, plan, timeout=1, first_timeout=60)
    assert result["counts"] == {"loaded": 3, "hang": 1}  # the warm "y" still times out


def test_model_fuzz_counts_parsed_trees_that_disagree_with_the_model(tmp_path, monkeypatch):
    pytest.importorskip("xgboost")
    seeds = [s for s in mf.make_seeds(tmp_path) if s["path"].endswith("xgb.json")]
    frames = mf._frames(seeds, tmp_path)
    assert mf.run_one(seeds[0], frames) == "loaded"
    own = mf._raw_output
    monkeypatch.setattr(mf, "_raw_output", lambda model, X: own(model, X) + 0.5)
    assert mf.run_one(seeds[0], frames) == "loaded-disagree"


# --- safety: the watched child, the command-line cases, the tally -------------------------

def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"  # (a zombie has ended)
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("forked", [False, True])
def test_the_watched_child_reports_a_hang_a_memory_blowup_and_a_crash(tmp_path, forked):
    """In a fresh interpreter and forked from the server (sf.forking): the same outcomes,
    the hang's every process ended, each case in its own folder with its own streams."""
    with sf.forking() if forked else contextlib.nullcontext():
        code, out, err = sf.run_child("import os, sys\nprint(os.getcwd(), sys.argv[1:])\n"
                                      "print('to stderr', file=sys.stderr)\nsys.exit(3)",
                                      ["a", 1], cwd=tmp_path, timeout=60)
        assert (code, out, err) == (3, f"{tmp_path} ['a', '1']\n", "to stderr\n")
        code, out, _ = sf.run_child("import subprocess, sys, time\n"
                                    "p = subprocess.Popen([sys.executable, '-c', 'import time; "
                                    "time.sleep(600)'])\n"
                                    "print(p.pid, flush=True); time.sleep(60)", [],
                                    cwd=tmp_path, timeout=4)
        assert code is None
        # the process it started went with it (its group was killed): one left alive would
        # sleep on long after the case's own 60 s
        for _ in range(600):
            if not _alive(int(out)):
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the hung case's own child outlived it")
        # (the cases' cap of 4 GB over what the server holds, ~3 GB of address space)
        code, _, err = sf.run_child(f"x = bytearray({3 if forked else 2} * 2**30)", [],
                                    cwd=tmp_path, timeout=60, memory_gb=4.0 if forked else 1.0)
        assert code != 0 and sf._memory_blowup(err)
        code, _, err = sf.run_child("import os; os.abort()", [], cwd=tmp_path, timeout=60)
        assert code not in (None, 0) and not sf._one_line_refusal(code, err)
        code, _, err = sf.run_child("raise ValueError('boom')", [], cwd=tmp_path, timeout=60)
        assert code == 1 and "Traceback" in err and "ValueError: boom" in err
        code, out, err = sf.run_child("import atexit, sys\natexit.register(print, 'at exit')\n"
                                      "sys.exit('bye')", [], cwd=tmp_path, timeout=60)
        assert (code, out, err) == (1, "at exit\n", "bye\n")


#: A stand-in for the command line: writes half a report to --out, one byte to --data.
HALF_REPORT = textwrap.dedent("""
    import sys
    args = sys.argv[1:]
    out, data = args[args.index("--out") + 1], args[args.index("--data") + 1]
    open(out, "w").write("<!doctype html><html><body>half")
    open(data, "a").write("x")
""")


def _planted_inputs(tmp_path):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "data.csv").write_text("a,y\n1,0\n")
    (inputs / "model.skops").write_bytes(b"model")
    return {"data": str(inputs / "data.csv"), "model": str(inputs / "model.skops"),
            "target": "y"}


def test_path_case_counts_a_partial_report_and_a_changed_input(tmp_path, monkeypatch):
    spec = _planted_inputs(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setattr(sf, "REPORT", HALF_REPORT)
    kind, facts = sf.path_case(0, work, spec=spec)  # seed 0: an old report at --out
    assert kind == "partial" and facts["changed"] == 1, facts
    monkeypatch.setattr(sf, "REPORT", "raise SystemExit(bytearray(8 * 2**30))")
    assert sf.path_case(2, work, spec=spec)[0] == "memory"  # seed 2: an old report too
    monkeypatch.setattr(sf, "REPORT", "import sys; raise KeyError(sys.argv[1])")
    assert sf.path_case(13, work, spec=spec)[0] == "crash"


def test_dask_case_counts_a_result_from_a_faulty_partition_as_partial(tmp_path, monkeypatch):
    # seed 21 draws a partition on which the model fails; seed 23 no fault
    monkeypatch.setattr(sf, "DASK_CASE", 'print(\'["result", ""]\')')
    assert sf.dask_case(21, tmp_path)[0] == "partial"
    monkeypatch.setattr(sf, "DASK_CASE", 'print(\'["refusal", "ModelError: x"]\')')
    assert sf.dask_case(23, tmp_path)[0] == "crash"  # a sound frame refused


def test_tally_counts_markup_and_changed_inputs_and_lists_them(tmp_path):
    def planted(seed, folder):
        return ["result", "result", "refusal"][seed], {"markup": seed == 0,
                                                        "changed": 2 * (seed == 1)}

    got = sf.tally(range(3), planted, tmp_path)
    assert got["counts"]["markup"] == 1 and got["counts"]["changed"] == 2
    assert [seed for seed, _, _ in got["failures"]] == [0, 1]


def test_run_seeds_are_disjoint_blocks():
    # seeds 11 and 12 of 2,000 cases each ran 1,999 of the same cases
    assert not set(sf.case_seeds(11, 2000)) & set(sf.case_seeds(12, 2000))
    assert list(sf.case_seeds(0, 3)) == [0, 1, 2]  # seed 0: the cases it always ran
    with pytest.raises(ValueError):
        sf.case_seeds(1, sf.SEED_BLOCK + 1)
    json.dumps(list(sf.case_seeds(3, 2)))
