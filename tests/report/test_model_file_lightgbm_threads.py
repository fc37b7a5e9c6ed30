"""A LightGBM text is checked on the threads LightGBM's own load runs on (issue 40).

LightGBM reads a model text's trees in an OpenMP loop of OpenMP's default
thread count, whatever ``n_jobs`` says; the compiled check that runs just
before it (``_checks_lightgbm_pass._trees_at``) takes as many threads, or more
where ``n_jobs`` asks, and splits the trees into runs of about as many bytes
each.  Oracles: OpenMP's documented default (``OMP_NUM_THREADS``) and
LightGBM's own cap (``LGBM_SetMaxThreads``) in a fresh process; the thread
count numba runs the check on; a brute-force split of the bytes.
"""

import subprocess
import sys

import numba
import numpy as np
import pytest

import modellens as ml
from modellens.files import _models, load_model
from modellens.trees import _checks_lightgbm_pass as one_pass
from modellens.trees import _checks_lightgbm_scan as scan

lgb = pytest.importorskip("lightgbm")

_COUNT = """
import ctypes, sys, lightgbm
from modellens.files._models import _lightgbm_threads
if len(sys.argv) > 1:
    lightgbm.basic._LIB.LGBM_SetMaxThreads(ctypes.c_int(int(sys.argv[1])))
print(_lightgbm_threads(lightgbm))
"""


def _count_in_a_fresh_process(omp, *cap):
    env = {**__import__("os").environ, "OMP_NUM_THREADS": str(omp)}
    out = subprocess.run([sys.executable, "-c", _COUNT, *map(str, cap)], env=env,
                         capture_output=True, text=True, timeout=120, check=True)
    return int(out.stdout.split()[-1])


@pytest.mark.parametrize("omp", [1, 3])
def test_the_count_is_openmps_default_in_lightgbms_runtime(omp):
    assert _count_in_a_fresh_process(omp) == omp


def test_the_count_keeps_lightgbms_own_cap():
    assert _count_in_a_fresh_process(3, 2) == 2


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    booster = lgb.train({"num_leaves": 7, "verbose": -1, "min_data_in_leaf": 5},
                        lgb.Dataset(X, X[:, 0] - X[:, 1]), num_boost_round=6)
    path = tmp_path_factory.mktemp("lgb") / "m.txt"
    path.write_text(booster.model_to_string())
    return path, booster, X


@pytest.mark.parametrize("n_jobs, lightgbm_threads", [(1, 2), (2, 1), (1, 1)])
def test_the_check_runs_on_lightgbms_load_threads_or_n_jobs(model_file, monkeypatch,
                                                             n_jobs, lightgbm_threads):
    path, booster, X = model_file
    threads, real = [], scan._trees_at
    monkeypatch.setattr(scan, "_trees_at",
                        lambda *a: threads.append(numba.get_num_threads()) or real(*a))
    monkeypatch.setattr(_models, "_lightgbm_threads", lambda lightgbm: lightgbm_threads)
    with ml.config(n_jobs=n_jobs):
        model = load_model(path)
    want = max(n_jobs, lightgbm_threads)
    assert threads == [min(want, numba.config.NUMBA_NUM_THREADS)]
    np.testing.assert_array_equal(model.predict(X), booster.predict(X))


def _runs_by_brute_force(offsets, chunks):
    """Run ``c`` starts at the first tree that starts at or past ``c / chunks`` of the bytes."""
    n, span = len(offsets) - 1, offsets[-1] - offsets[0]
    out = []
    for c in range(chunks):
        target = offsets[0] + c * span // chunks
        out.append(next((t for t in range(n) if offsets[t] >= target), n))
    return out + [n]


@pytest.mark.parametrize("seed", range(40))
def test_the_runs_split_the_bytes_not_the_trees(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    sizes = rng.integers(1, 50, n)
    sizes[: int(rng.integers(0, n + 1)) // 4] *= 100  # a boosting's first trees are bigger
    offsets = np.concatenate([[int(rng.integers(0, 1000))], sizes]).cumsum()
    chunks = int(rng.integers(1, n + 1))
    got = one_pass._runs(offsets, chunks)
    assert got.tolist() == _runs_by_brute_force(offsets, chunks)


def test_one_big_tree_first_is_a_run_of_its_own():
    offsets = np.concatenate([[0], [1000], np.ones(100, np.int64)]).cumsum()
    # equal counts of trees would give the first thread the big tree and 50 more
    assert one_pass._runs(offsets, 2).tolist() == [0, 1, 101]
