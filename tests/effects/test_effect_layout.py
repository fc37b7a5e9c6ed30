"""Which arrays of an Effect run along the grid and which along the bins (Effect's Notes)."""

import numpy as np
import pandas as pd

import modellens as ml


def _data(n=500, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                         "c": pd.Categorical(rng.choice(list("pqr"), n)),
                         "d": rng.integers(0, 4, n)})


def f(F):
    return (np.asarray(F["a"]) * np.asarray(F["b"]) + (np.asarray(F["c"]) == "p")
            + np.asarray(F["d"]))


def test_ale_and_dale_of_numeric_features_keep_per_bin_std_and_counts():
    X = _data()
    effects = list(ml.ale(f, X, ["a", ("a", "b")], bins=5).values())
    effects.append(ml.dale(lambda A: A[:, 0] * A[:, 1], X[["a", "b"]].to_numpy(), bins=5)["x0"])
    for e in effects:
        grid = e.grid if e.is_2d else (e.grid,)
        per_bin = tuple(len(g) - 1 for g in grid)
        assert np.shape(e.bins.std) == np.shape(e.bins.counts) == per_bin
        assert e.std is e.bins.std
        np.testing.assert_array_equal(e.counts, e.bins.counts)
        assert np.shape(e.values) == tuple(len(g) for g in grid)


def test_level_features_count_rows_per_grid_point_and_spread_per_step():
    X = _data()
    for name in ("c", "d"):  # categorical, and discrete numeric
        e = ml.ale(f, X, [name])[name]
        assert len(e.counts) == len(e.grid) and e.counts.sum() == len(X)
        assert e.std is e.bins.std and len(e.bins.std) == len(e.grid) - 1


def test_mplot_std_and_counts_belong_to_each_grid_point():
    X = _data()
    for name in ("a", "c"):
        e = ml.mplot(f, X, [name], grid=5)[name]
        assert e.bins is None
        assert len(e.std) == len(e.counts) == len(e.grid) == len(e.values)
