"""Two reports built at once in threads of one process keep their warnings apart."""

import threading
import warnings

import numpy as np
import pandas as pd

import modellens as ml


def _model(tag, barrier):
    calls = []

    def predict(A):
        calls.append(len(A))
        # the first two predict the data (its first row, which tells the outputs, then every
        # row), before any section
        if len(calls) == 3:
            try:  # both reports are inside their sections before either warns
                barrier.wait(timeout=30)
            except threading.BrokenBarrierError:
                pass
        warnings.warn(f"warning of report {tag}", ml.ModellensWarning)
        return A["a"].to_numpy() - A["b"].to_numpy()
    return predict


def test_reports_in_threads_record_only_their_own_warnings():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    barrier = threading.Barrier(2)
    out, errors = {}, []

    def build(tag):
        try:
            out[tag] = ml.report(_model(tag, barrier), X, sections=["effects"], sample=40,
                                 grid=4, progress=False)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=build, args=(tag,)) for tag in "AB"]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    for tag, other in ("A", "B"), ("B", "A"):
        shown = out[tag].sections["effects"].warnings
        assert f"warning of report {tag}" in shown
        assert f"warning of report {other}" not in shown
    # the process's handler and filters are as they were
    assert warnings.showwarning.__module__ != "modellens.report._warnings"
    assert not any(f[2] is ml.ModellensWarning and f[0] == "always" for f in warnings.filters)


def test_a_second_report_records_the_warning_the_first_one_gave():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.normal(size=50), "b": rng.normal(size=50)})

    def predict(A):
        warnings.warn("the same warning, from the same line", ml.ModellensWarning)
        return A["a"].to_numpy()

    for _ in range(2):
        rep = ml.report(predict, X, sections=["effects"], sample=30, grid=3, progress=False)
        assert "the same warning, from the same line" in rep.sections["effects"].warnings
