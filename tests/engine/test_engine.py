"""The engine: chunking, tuning of chunk sizes, folding of predictions."""

import numpy as np
import pytest

import modellens as ml
from modellens.engine import _tuner


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


def test_explicit_chunk_size_is_used_exactly():
    sizes = []

    def f(A):
        sizes.append(len(A))
        return A.sum(axis=1)

    X = np.random.default_rng(1).normal(size=(500, 3))
    ml.pdp(f, X, grid=4, chunk_size=1000)
    assert sizes == [1] + [1000] * 6  # (the first: the row that tells f's outputs)
    with pytest.raises(ValueError, match="chunk_size must be a positive"):
        ml.pdp(f, X, chunk_size=0)
