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


def test_a_tree_ensemble_gets_its_rows_in_chunks_at_the_cap():
    # a tree ensemble answers fastest in the largest calls: 18,000 rows of ALE in one call,
    # not the tuner's 16,384 and the rest (the numbers do not depend on the chunks)
    from sklearn.ensemble import HistGradientBoostingRegressor
    from modellens.models import Model
    from modellens.data import Dataset

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))
    hgb = HistGradientBoostingRegressor(max_iter=5, random_state=0).fit(X, X[:, 0])
    calls = []
    own = hgb.predict

    def counted(A):
        calls.append(len(A))
        return own(A)

    hgb.predict = counted  # (the type is still a tree ensemble)
    assert Model(hgb, Dataset.from_data(X)).large_chunks
    assert not Model(lambda A: A[:, 0], Dataset.from_data(X)).large_chunks
    tuned = ml.ale(hgb, X, bins=5, chunk_size=1000)
    calls.clear()
    effects = ml.ale(hgb, X, bins=5)
    assert calls[-1:] == [2 * 3000 * 3] and len(calls) <= 2  # (a probe row first)
    for name in effects.keys():
        np.testing.assert_array_equal(effects[name].values, tuned[name].values)


def test_gradient_chunks_are_sized_with_their_answers(monkeypatch):
    # a gradient answers a value per feature for every row: as much memory as the rows,
    # which the byte cap counts (it did only for several outputs)
    from modellens.engine import _run

    widths = []
    real = _run.ChunkSizer

    def spy(width, *args, **kwargs):
        widths.append(width)
        return real(width, *args, **kwargs)

    monkeypatch.setattr(_run, "ChunkSizer", spy)
    X = np.random.default_rng(0).normal(size=(200, 3))
    ml.dale(lambda A: A @ [1.0, 2.0, 3.0], X, gradient=lambda A: np.tile([1.0, 2.0, 3.0],
                                                                          (len(A), 1)))
    assert widths == [6]  # 3 columns of rows and 3 derivatives per row
