"""A UBJSON file's node checks run on several threads, a run of trees at a time (issue 40).

The compiled scan reads each tree's keys in turn and notes where its node
arrays lie; then the calling thread and helper threads check the trees' nodes
(:func:`_check_runs`), each claiming runs of consecutive trees (:func:`_runs`)
by an atomic counter, with scratch room sized by the run's largest tree.  A
fault planted in the first or the last tree of any run must mark that tree,
and only that one, whatever the count of runs and threads (a run that stopped
a tree short, a bound off by one, or a run claimed twice or never, leaves a
tree reading as clean: ``_tree`` fills its row with -1, a tree without a
split).  The oracle is numpy's reading of the trees' arrays.
"""

import threading
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

from modellens.files import FileError, load_model
from modellens.files._ubjson import Ubjson, ubjson_bytes
from modellens.trees import _checks_xgboost_scan as scan
from test_model_file_scan import _FAULTS, _trees

xgb = pytest.importorskip("xgboost")

N_TREES = 7


@pytest.fixture(scope="module")
def doc():
    rng = np.random.default_rng(5)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    y = X.a - 2 * X.b + X.c ** 2 + rng.normal(scale=0.1, size=len(X))
    model = xgb.XGBRegressor(n_estimators=N_TREES, max_depth=3).fit(X, y)
    return Ubjson(bytes(model.get_booster().save_raw("ubj"))).document()


def _largest_feature(tree):
    """The oracle: the largest split feature of a tree's splits, by numpy (-1: none)."""
    split = np.asarray(tree["left_children"]) != -1
    return int(np.asarray(tree["split_indices"])[split].max(initial=-1))


def _checked(data, chunks, threads=2):
    """Every tree's answer, the node checks run in ``chunks`` runs shared by ``threads``
    threads at once; and the runs' bounds."""
    buf = np.frombuffer(data, np.uint8)
    rows, table = scan._scan(buf, scan._NAME_BYTES, scan._NAME_STARTS)
    assert len(rows) and len(table) == N_TREES  # taken by the scan
    bounds, counts = scan._runs(table, chunks), np.zeros(2, np.int64)
    with ThreadPoolExecutor(threads) as pool:
        done = list(pool.map(lambda _: scan._check_runs(buf, table, bounds, counts),
                             range(threads)))
    # each run claimed once and checked, then each thread's last claim found none left
    assert max(done) == chunks and counts.tolist() == [chunks + threads, chunks]
    return table[:, scan._T_CHECK].tolist(), bounds.tolist()


@pytest.mark.parametrize("chunks, threads", [(1, 1), (2, 2), (3, 4), (N_TREES, 3),
                                             (N_TREES + 2, 2)])
def test_every_run_count_answers_each_tree_alike(doc, chunks, threads):
    answers, bounds = _checked(ubjson_bytes(doc), chunks, threads)
    assert answers == [_largest_feature(t) for t in _trees(doc)]
    # the runs cover the trees once, in order (a run may be empty)
    assert bounds[0] == 0 and bounds[-1] == N_TREES and bounds == sorted(bounds)
    assert len(bounds) == chunks + 1


@pytest.mark.parametrize("name", ["a child outside the tree", "a shared subtree",
                                  "a parent that is not the splitting node", "num_nodes wrong"])
@pytest.mark.parametrize("chunks", [2, 3, N_TREES])
def test_a_fault_at_either_end_of_each_run_marks_its_tree(doc, name, chunks):
    _, bounds = _checked(ubjson_bytes(doc), chunks)
    ends = {t for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo for t in (lo, hi - 1)}
    assert N_TREES - 1 in ends and len(ends) >= min(chunks, N_TREES)
    for k in sorted(ends):
        planted = Ubjson(ubjson_bytes(doc)).document()
        _FAULTS[name](_trees(planted)[k])
        expected = [_largest_feature(t) for t in _trees(doc)]
        expected[k] = -2
        assert _checked(ubjson_bytes(planted), chunks)[0] == expected, k


class _Idle:
    """A pool whose threads never start (a loaded machine's helpers, not yet scheduled)."""

    def submit(self, *args):
        return Future()


def test_the_calling_thread_checks_every_run_no_helper_started(doc, monkeypatch):
    monkeypatch.setattr(scan, "_NODES_FOR_THREADS", 0)
    monkeypatch.setattr(scan.numba, "get_num_threads", lambda: 3)
    monkeypatch.setattr(scan, "_pool", lambda helpers: _Idle())
    planted = Ubjson(ubjson_bytes(doc)).document()
    _FAULTS["a child outside the tree"](_trees(planted)[-1])
    found = []
    # in a thread of its own: waiting on a helper that never starts would never return
    runner = threading.Thread(target=lambda: found.append(
        _trees(scan.scan_xgboost_ubjson(ubjson_bytes(planted))).checked.tolist()), daemon=True)
    runner.start()
    runner.join(60)
    assert not runner.is_alive()
    expected = [_largest_feature(t) for t in _trees(doc)]
    expected[-1] = -2
    assert found == [expected]


def test_a_fault_in_the_files_last_tree_is_refused(doc, tmp_path, monkeypatch):
    monkeypatch.setattr(scan, "_NODES_FOR_THREADS", 0)  # helpers for this small file too
    planted = Ubjson(ubjson_bytes(doc)).document()
    _FAULTS["a child outside the tree"](_trees(planted)[-1])
    (tmp_path / "m.ubj").write_bytes(ubjson_bytes(planted))
    with pytest.raises(FileError, match="refusing"):
        load_model(tmp_path / "m.ubj")
