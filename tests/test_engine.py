"""The engine: chunking, tuning of chunk sizes, folding of predictions."""

import time

import numpy as np
import pytest

import modellens as ml
from modellens.data import Dataset
from modellens.engine import GridRows, _tuner, evaluate
from modellens.models import Model


def _pd_values(monkeypatch, start_rows, X):
    monkeypatch.setattr(_tuner, "DEFAULT_CHUNK_ROWS", start_rows)
    f = lambda A: np.sin(A[:, 0]) * A[:, 1] + A[:, 2] ** 2  # noqa: E731
    return ml.pdp(f, X, grid=7, progress=False)


def test_numbers_do_not_depend_on_tuned_chunk_sizes(monkeypatch):
    X = np.random.default_rng(0).normal(size=(30_001, 3)) * 1e3
    a = _pd_values(monkeypatch, 2048, X)
    b = _pd_values(monkeypatch, 16_384, X)
    c = _pd_values(monkeypatch, 5 * 1024, X)
    for k in a:
        # bit for bit: every group is summed in the same pieces
        assert np.array_equal(a[k].values, b[k].values)
        assert np.array_equal(a[k].values, c[k].values)
        expected = ml.pdp(lambda A: np.sin(A[:, 0]) * A[:, 1] + A[:, 2] ** 2, X, features=k,
                          grid=7, ice=True)[k].ice.mean(axis=0)
        np.testing.assert_allclose(a[k].values, expected, rtol=1e-12)


def _chunk_sizes(f, n_rows):
    X = np.zeros((n_rows // 4, 2))
    dataset = Dataset.from_data(X)
    sizes = []

    def model(A):
        sizes.append(len(A))
        return f(A)

    seg = GridRows(dataset.values, (0,), np.arange(4.0), average=True)
    evaluate(Model(model, dataset), [seg])
    assert sizes and sum(sizes) == n_rows
    return sizes


def test_tuner_grows_chunks_for_a_model_with_a_fixed_cost_per_call():
    def per_call(A):
        time.sleep(0.004)
        return A[:, 0]

    sizes = _chunk_sizes(per_call, 2_000_000)
    assert sizes[0] == _tuner.DEFAULT_CHUNK_ROWS
    assert max(sizes) >= 16 * _tuner.DEFAULT_CHUNK_ROWS


def test_tuner_keeps_small_chunks_when_larger_ones_are_slower_per_row():
    def superlinear(A):
        time.sleep(len(A) ** 2 / 4e9)  # 65k rows cost 16x the time of 16k rows
        return A[:, 0]

    sizes = _chunk_sizes(superlinear, 300_000)
    assert max(sizes) <= 4 * _tuner.DEFAULT_CHUNK_ROWS
    assert sizes[-2] == _tuner.DEFAULT_CHUNK_ROWS  # back to the best size after one try


def test_explicit_chunk_size_is_used_exactly():
    sizes = []

    def f(A):
        sizes.append(len(A))
        return A.sum(axis=1)

    X = np.random.default_rng(1).normal(size=(500, 3))
    ml.pdp(f, X, grid=4, chunk_size=1000)
    assert sizes == [1000] * 6
    with pytest.raises(ValueError, match="chunk_size must be a positive"):
        ml.pdp(f, X, chunk_size=0)
