"""Shapley values: input errors that name the argument, cost warnings, intervals at small budgets."""

import warnings

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens import InvalidParameterError, ModellensWarning


def test_shapley_input_errors_name_the_argument():
    frame = pd.DataFrame({"x": np.arange(30.0), "c": pd.Categorical(list("ab") * 15)})
    model = lambda D: D["x"].to_numpy() + (D["c"] == "a").to_numpy()  # noqa: E731
    with pytest.raises(InvalidParameterError, match="background has no rows"):
        ml.shapley(model, frame.iloc[:3], background=frame.iloc[:0])
    with pytest.raises(InvalidParameterError, match="X has no rows"):
        ml.shapley(model, frame.iloc[:0], background=frame)
    with pytest.raises(InvalidParameterError, match="background has no rows"):
        ml.shapley(lambda A: A[:, 0], np.ones((2, 2)), background=np.ones((0, 2)))


def test_a_row_given_as_a_series_is_one_row():
    frame = pd.DataFrame({"x": np.arange(30.0), "y": np.arange(30.0) ** 2,
                          "c": pd.Categorical(list("abc") * 10)})
    model = lambda D: D["x"].to_numpy() * 2 + D["y"].to_numpy() + (D["c"] == "a").to_numpy()  # noqa: E731,E501
    one = ml.shapley(model, frame.iloc[4], background=frame)
    same = ml.shapley(model, frame.iloc[4:5], background=frame)
    assert one.values.shape == (1, 3)
    np.testing.assert_allclose(one.values, same.values)


def test_a_large_background_gets_a_cost_warning(monkeypatch):
    import importlib

    module = importlib.import_module("modellens.attribution._shapley_setup")

    monkeypatch.setattr(module, "COSTLY_ROWS", 10_000)
    X = np.random.default_rng(0).normal(size=(400, 6))
    with pytest.warns(ModellensWarning, match=r"plans [\d,]+ model rows \(5 explained rows x "
                                              r"62 coalitions x 400 background rows\)"):
        ml.shapley(lambda A: A.sum(axis=1), X[:5], background=X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModellensWarning)
        ml.shapley(lambda A: A.sum(axis=1), X[:5], background=X[:100])  # sampled: no warning


def _three_way(A):
    return (A @ [0.5, -1.0, 0.3, 0.8, -0.2, 0.1] + 2 * A[:, 0] * A[:, 1] * A[:, 2]
            + np.sin(3 * A[:, 2] * A[:, 3] * A[:, 4]) + np.maximum(A[:, 4] + A[:, 5] + A[:, 0],
                                                                   0) ** 2)


def test_intervals_at_a_small_budget_cover_and_tiny_budgets_give_no_number():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 6))
    bg = X[:30]
    exact = ml.shapley(_three_way, X[:150], background=bg, algorithm="exact").values
    res = ml.shapley(_three_way, X[:150], background=bg, algorithm="permutation",
                     n_permutations=16, random_state=1)  # 8 antithetic pairs: dof 7
    np.testing.assert_array_equal(res.sampling.dof, 7.0)
    lo, hi = res.confidence_interval(0.95)
    t_cover = np.mean((exact >= lo) & (exact <= hi))
    z_cover = np.mean(np.abs(res.values - exact) <= 1.96 * res.std)
    # 900 intervals: t quantiles hold the nominal level, normal ones fall short
    assert 0.92 <= t_cover <= 0.98 and t_cover > z_cover + 0.02
    # 5 pairs covered 88% here: below 8 pairs no standard error is given
    with pytest.warns(ModellensWarning, match="too few to estimate standard errors"):
        tiny = ml.shapley(_three_way, X[:5], background=bg, algorithm="permutation",
                          n_permutations=10, random_state=1)
    assert np.isnan(tiny.std).all()
    lo, hi = tiny.confidence_interval()
    assert np.isnan(lo).all() and np.isnan(hi).all()
