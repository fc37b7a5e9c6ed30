"""OpenMP threads of the engine's model calls: one on small chunks or busy cores,
restored after, never raised, and the same answers."""

import numpy as np
import pytest
from threadpoolctl import threadpool_info

import modellens as ml
from modellens.engine import _threads
from modellens.engine._threads import ROWS_PER_THREAD, model_threads, openmp_threads


def test_model_threads_rule():
    assert model_threads(10, cores=4, load=0.5) == 1  # a small chunk: one thread
    assert model_threads(3 * ROWS_PER_THREAD, cores=4, load=0.5) == 3
    assert model_threads(100 * ROWS_PER_THREAD, cores=4, load=0.5) == 4
    assert model_threads(100 * ROWS_PER_THREAD, cores=4, load=3.9) == 4
    # every core busy besides this call: the threads would wait on each other
    assert model_threads(100 * ROWS_PER_THREAD, cores=4, load=5.0) == 1


def _openmp_counts():
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "openmp"]


def test_openmp_capped_then_restored():
    pytest.importorskip("sklearn.ensemble")
    before = _openmp_counts()
    if not before or max(before) < 2:
        pytest.skip("no OpenMP library with more than one thread here")
    with openmp_threads(1):
        assert max(_openmp_counts()) == 1
    assert _openmp_counts() == before
    with openmp_threads(10_000):  # never raised above the count found
        assert _openmp_counts() == before


def test_same_answers_on_one_thread_and_all(monkeypatch):
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    model = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(
        X, X[:, 0] + X[:, 1] * X[:, 2])
    capped = ml.pdp(model, X, [0, 1], ice=True, grid=5, progress=False)
    calls = []
    monkeypatch.setattr(_threads, "model_threads", lambda rows, **k: calls.append(rows) or 64)
    free = ml.pdp(model, X, [0, 1], ice=True, grid=5, progress=False)
    assert calls  # the engine asked the rule for its chunks
    for f in (0, 1):
        np.testing.assert_array_equal(capped[f].ice, free[f].ice)
