"""ALE at its edges: empty bins, level features with missing values."""

import numpy as np
import pytest

import modellens as ml
from modellens import InvalidParameterError, ModellensWarning


def test_ale_warns_about_empty_bins_and_can_interpolate_across_them():
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(0, 1, 300), rng.uniform(2, 3, 300)])  # no data in (1, 2)
    X = np.column_stack([x, rng.normal(size=600)])
    f = lambda A: 3 * A[:, 0] + A[:, 1]  # noqa: E731
    edges = [0, 0.5, 1, 1.5, 2, 2.5, 3]
    with pytest.warns(ModellensWarning, match=r"2 of the 6 bins of 'x0' hold no data; their "
                                              r"effect is taken as 0"):
        zero = ml.ale(f, X, features="x0", bins={"x0": edges})["x0"]
    assert zero.values[-1] - zero.values[0] == pytest.approx(6.0)  # flat across the gap
    with pytest.warns(ModellensWarning, match="interpolated"):
        filled = ml.ale(f, X, features="x0", bins={"x0": edges}, empty_bins="interpolate")["x0"]
    assert filled.values[-1] - filled.values[0] == pytest.approx(9.0)  # slope 3 throughout
    with pytest.warns(ModellensWarning, match="interpolated"):
        d = ml.dale(f, X, features="x0", bins={"x0": edges}, empty_bins="interpolate",
                    gradient=lambda A: np.column_stack([np.full(len(A), 3.0), np.ones(len(A))]))
    assert d["x0"].values[-1] - d["x0"].values[0] == pytest.approx(9.0)
    with pytest.raises(InvalidParameterError, match="empty_bins must be one of"):
        ml.ale(f, X, empty_bins="drop")


def test_ale_of_a_level_feature_with_missing_values_leaves_those_rows_out():
    rng = np.random.default_rng(11)
    X = np.column_stack([rng.integers(0, 4, 400).astype(float), rng.normal(size=400)])
    X[::9, 0] = np.nan

    def f(A):
        if np.isnan(A).any():
            raise ValueError("NaN reached the model")
        return A[:, 0] ** 2 + A[:, 1]

    with pytest.warns(ModellensWarning, match="missing value in 'x0'"):
        eff = ml.ale(f, X, features=["x0"])["x0"]
    np.testing.assert_allclose(np.diff(eff.values), [1.0, 3.0, 5.0])  # steps of x^2
    assert eff.counts.sum() == np.count_nonzero(~np.isnan(X[:, 0]))
