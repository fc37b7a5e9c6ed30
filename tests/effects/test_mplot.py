import numpy as np
import pandas as pd
import pytest

import modellens as ml


def test_mplot_is_mean_prediction_in_quantile_bins():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 2))
    f = lambda A: A[:, 0] ** 2 + A[:, 1]  # noqa: E731
    eff = ml.mplot(f, X, features=0, grid=10)["x0"]
    # independent computation: sort, split into 10 equal groups of 100
    order = np.argsort(X[:, 0], kind="stable")
    groups = np.split(order, 10)
    pred = f(X)
    np.testing.assert_allclose(eff.values, [pred[g].mean() for g in groups], atol=1e-12)
    np.testing.assert_allclose(eff.std, [pred[g].std() for g in groups], atol=1e-9)
    np.testing.assert_array_equal(eff.counts, 100)
    np.testing.assert_allclose(eff.grid, [np.sort(X[g, 0])[49] for g in groups])


def test_mplot_evaluates_only_real_rows_once():
    X = np.random.default_rng(1).normal(size=(400, 5))
    seen = []

    def f(A):
        seen.append(A.copy())
        return A.sum(axis=1)

    ml.mplot(f, X)
    # the first row, which tells f's outputs when it is wrapped, then every row once
    assert len(seen) == 2
    np.testing.assert_array_equal(seen[0], X[:1])
    np.testing.assert_array_equal(seen[1], X)


def test_mplot_explicit_grid_window_and_discrete():
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 1, 500)
    X = np.column_stack([x, rng.integers(0, 4, 500)])
    f = lambda A: 3 * A[:, 0] + A[:, 1]  # noqa: E731
    eff = ml.mplot(f, X, features=0, grid=[0.25, 0.5, 0.75], window=0.1)["x0"]
    pred = f(X)
    for g, v, c in zip(eff.grid, eff.values, eff.counts):
        # the 10% of points whose ranks are nearest to g's rank
        rank = np.searchsorted(np.sort(x), g)
        near = np.argsort(np.abs(np.argsort(np.argsort(x)) - rank + 0.5))[:c]
        assert c == 50
        assert v == pytest.approx(pred[near].mean(), abs=1e-9)
    disc = ml.mplot(f, X, features=1)["x1"]
    np.testing.assert_allclose(disc.grid, [0, 1, 2, 3])
    for level, v in zip(disc.grid, disc.values):
        assert v == pytest.approx(pred[X[:, 1] == level].mean())


def test_mplot_categorical_frame_and_pairs_rejected():
    X = pd.DataFrame({"g": pd.Series(["a", "b", "a", "c"] * 10), "v": np.arange(40.0)})
    f = lambda df: df["v"].to_numpy() * (df["g"] == "a").to_numpy()  # noqa: E731
    eff = ml.mplot(f, X, features="g")["g"]
    assert list(eff.grid) == ["a", "b", "c"]
    np.testing.assert_allclose(eff.values, [X["v"][X["g"] == "a"].mean(), 0, 0])
    with pytest.raises(ValueError, match="pairs are not supported"):
        ml.mplot(f, X, features=[("g", "v")])


def test_mplot_bins_never_split_tied_values():
    rng = np.random.default_rng(3)
    x0 = np.r_[np.zeros(30), rng.normal(size=30)]
    X = np.c_[x0, rng.normal(size=60)]
    f = lambda A: A[:, 1]  # noqa: E731
    eff = ml.mplot(f, X, features=0, grid=4)["x0"]
    assert len(np.unique(eff.grid)) == len(eff.grid)
    assert eff.counts.sum() == 60
    # the bin holding the zeros holds all of them, and its value is their mean with
    # whatever else falls in that bin
    order = np.argsort(x0, kind="stable")
    zero_bin = int(np.flatnonzero(eff.grid == 0)[0])
    start = int(eff.counts[:zero_bin].sum())
    members = order[start:start + eff.counts[zero_bin]]
    assert set(np.flatnonzero(x0 == 0)) <= set(members)
    assert eff.values[zero_bin] == pytest.approx(X[members, 1].mean())
    # the same data in another row order gives the same curve
    perm = rng.permutation(60)
    again = ml.mplot(f, X[perm], features=0, grid=4)["x0"]
    np.testing.assert_allclose(again.values, eff.values)


def test_grid_points_no_row_is_near_are_said_once_not_left_as_silent_nan():
    import warnings

    from modellens._validation import ModellensWarning

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"c": pd.Categorical(rng.choice(["a", "b"], 200),
                                          categories=["a", "b", "z"]),
                      "x": rng.normal(size=200)})
    a = (X["c"] == "a").to_numpy()

    def f(D):  # two outputs: the warning is one per call, not one per output
        return np.c_[(D["c"] == "a").to_numpy() + D["x"].to_numpy(), D["x"].to_numpy()]

    with pytest.warns(ModellensWarning, match=r"'c'.*\['z'\].*undefined") as caught:
        effect = ml.mplot(f, X, ["c"], grid={"c": ["a", "b", "z"]})["c"]
    assert sum("no rows have or are near" in str(w.message) for w in caught) == 1
    # the other levels are the conditional means by hand
    np.testing.assert_allclose(effect.values[:2, 0],
                               [(1 + X["x"][a]).mean(), X["x"][~a].mean()], rtol=1e-12)
    assert np.isnan(effect.values[2]).all() and effect.counts[2] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModellensWarning)  # every level has rows: no warning
        ml.mplot(f, X, ["c"], grid={"c": ["a", "b"]})
