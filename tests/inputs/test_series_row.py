"""A one-row Series (``df.iloc[i]``: index = the feature names) is that row, as shap reads it.

Every Shapley algorithm (TreeSHAP included), LIME and predict give for it the
numbers of the one-row frame ``df.iloc[[i]]``; a Series that is neither that
row nor the one column of a one-feature model is an error saying how to pass it.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression

import modellens as ml
from modellens import InvalidParameterError

_rng = np.random.default_rng(0)
X = pd.DataFrame(_rng.normal(size=(120, 4)), columns=["a", "b", "c", "d"])
X["kind"] = pd.Series(_rng.choice(["u", "v"], 120), dtype=object)
Y = X["a"] * 2 + X["b"] * X["c"] + (X["kind"] == "u")
NUMERIC = X[["a", "b", "c", "d"]]


def _boosters():
    models = [RandomForestRegressor(10, max_depth=4, random_state=0).fit(NUMERIC, Y)]
    lightgbm = pytest.importorskip("lightgbm")
    xgboost = pytest.importorskip("xgboost")
    models.append(lightgbm.LGBMRegressor(n_estimators=10, verbose=-1).fit(NUMERIC, Y))
    models.append(xgboost.XGBRegressor(n_estimators=10).fit(NUMERIC, Y))
    return models


def test_treeshap_reads_a_series_as_its_row():
    shap = pytest.importorskip("shap")
    for model in _boosters():
        row = NUMERIC.iloc[7]
        got = ml.shapley(model, row)
        want = ml.shapley(model, NUMERIC.iloc[[7]])
        assert np.array_equal(got.values, want.values), type(model).__name__
        theirs = shap.TreeExplainer(model).shap_values(NUMERIC.iloc[[7]])
        assert np.allclose(got.values, theirs, atol=1e-6), type(model).__name__
        assert np.allclose(np.asarray(ml.predict(model, row)), model.predict(NUMERIC.iloc[[7]]),
                           rtol=1e-6)


def _model(frame):
    return (frame["a"].to_numpy(float) * 2 + frame["b"].to_numpy(float) * frame["c"].to_numpy(float)
            + (frame["kind"] == "u").to_numpy(float))


@pytest.mark.parametrize("algorithm", ["exact", "permutation", "kernel"])
def test_every_shapley_algorithm_reads_a_series_as_its_row(algorithm):
    opts = dict(background=X.iloc[:30], algorithm=algorithm, random_state=0)
    if algorithm != "exact":
        opts["n_samples" if algorithm == "kernel" else "n_permutations"] = 64
    got = ml.shapley(_model, X.iloc[40], **opts)
    want = ml.shapley(_model, X.iloc[[40]], **opts)
    assert np.array_equal(got.values, want.values)


def test_lime_and_predict_read_a_series_as_its_row():
    got = ml.lime(_model, X.iloc[3], training_data=X, num_samples=200, random_state=0)
    want = ml.lime(_model, X.iloc[[3]], training_data=X, num_samples=200, random_state=0)
    assert np.array_equal(got.values, want.values)
    model = LinearRegression().fit(NUMERIC, Y)
    assert np.array_equal(np.asarray(ml.predict(model, NUMERIC.iloc[5])),
                          model.predict(NUMERIC.iloc[[5]]))


def test_a_series_that_is_neither_row_nor_column_says_how_to_pass_it():
    model = RandomForestRegressor(5, max_depth=3, random_state=0).fit(NUMERIC, Y)
    with pytest.raises(InvalidParameterError, match=r"df\.iloc\[\[i\]\]"):
        ml.shapley(model, NUMERIC["a"])  # a column, for a four-feature model
    with pytest.raises(InvalidParameterError, match=r"df\.iloc\[\[i\]\]"):
        ml.predict(model, NUMERIC["a"])
    # the one column of a one-feature model stays a column
    one = LinearRegression().fit(NUMERIC[["a"]], Y)
    assert np.array_equal(np.asarray(ml.predict(one, NUMERIC["a"])), one.predict(NUMERIC[["a"]]))
