"""A model that edits its input in place gets the same answers as one that does not.

Hand-written wrappers often clean their input in place (``X.fillna(0,
inplace=True)``); the engine hands the model a copy wherever the rows it
passes are the library's own memory that it reads again (the data of an
M-plot, the background, LIME's samples).
"""

import numpy as np
import pandas as pd
import pytest

import modellens as ml


def _frame(n=240, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                      "c": rng.choice(["x", "y", "z"], n)})
    X.loc[rng.choice(n, 25, replace=False), "a"] = np.nan
    return X


def _pure(A):
    return 2 * A["a"].fillna(0).to_numpy() + A["b"].to_numpy() ** 2 + (A["c"] == "x").to_numpy()


def _fillna(A):
    A.fillna({"a": 0.0}, inplace=True)
    return _pure(A)


def _overwrite(A):
    out = _pure(A)
    A["a"] = 5.0
    A.iloc[:, 1] = -1.0
    return out


def _pure_array(A):
    return 2 * np.nan_to_num(A[:, 0]) + A[:, 1] ** 2


def _zero_array(A):
    out = _pure_array(A)
    A[:] = 0
    return out


def _fill_array(A):
    np.nan_to_num(A, copy=False)
    return _pure_array(A)


def _same_effects(e0, e1):
    for f in e0:
        assert np.allclose(e0[f].values, e1[f].values, equal_nan=True), f
        grid0, grid1 = np.asarray(e0[f].grid), np.asarray(e1[f].grid)
        assert grid0.tolist() == grid1.tolist(), f


CASES = [("frame", _frame, _pure, _fillna), ("frame", _frame, _pure, _overwrite),
         ("array", lambda: _frame()[["a", "b"]].to_numpy(), _pure_array, _zero_array),
         ("array", lambda: _frame()[["a", "b"]].to_numpy(), _pure_array, _fill_array)]


@pytest.mark.parametrize("form, data, pure, mutating", CASES,
                         ids=[f"{c[0]}-{c[3].__name__}" for c in CASES])
def test_effects_of_a_mutating_model_equal_those_of_a_pure_one(form, data, pure, mutating):
    X = data()
    kept = X.copy()
    features = ["a", "b"] if form == "frame" else ["x0", "x1"]
    for method in (ml.mplot, ml.pdp, ml.ale):
        _same_effects(method(pure, X, features, grid=6) if method is not ml.ale else
                      method(pure, X, features, bins=6),
                      method(mutating, X, features, grid=6) if method is not ml.ale else
                      method(mutating, X, features, bins=6))
    if form == "array":  # finite differences need complete rows
        full = np.nan_to_num(X)
        _same_effects(ml.dale(pure, full, gradient="finite_differences", bins=5),
                      ml.dale(mutating, full, gradient="finite_differences", bins=5))
    if form == "frame":
        assert X.equals(kept)
    else:
        assert np.array_equal(X, kept, equal_nan=True)


@pytest.mark.parametrize("form, data, pure, mutating", CASES,
                         ids=[f"{c[0]}-{c[3].__name__}" for c in CASES])
@pytest.mark.parametrize("algorithm", ["exact", "permutation", "kernel"])
def test_shapley_of_a_mutating_model_equals_that_of_a_pure_one(form, data, pure, mutating,
                                                               algorithm):
    X = data()
    rows, background = X[:4], X[40:80]
    a = ml.shapley(pure, rows, background=background, algorithm=algorithm, random_state=0)
    b = ml.shapley(mutating, rows, background=background, algorithm=algorithm, random_state=0)
    assert np.allclose(a.values, b.values) and np.allclose(a.base_values, b.base_values)


@pytest.mark.parametrize("mutating", [_zero_array, _fill_array])
def test_lime_of_a_mutating_model_equals_that_of_a_pure_one(mutating):
    X = np.nan_to_num(_frame()[["a", "b"]].to_numpy())
    a = ml.lime(_pure_array, X[:3], training_data=X, num_samples=300, random_state=0)
    b = ml.lime(mutating, X[:3], training_data=X, num_samples=300, random_state=0)
    assert np.allclose(a.values, b.values)
    assert np.allclose(a.surrogate.score_holdout, b.surrogate.score_holdout)
