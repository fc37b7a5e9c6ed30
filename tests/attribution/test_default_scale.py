"""The default Shapley values explain the number the model predicts.

A boosted classifier's trees add up to log-odds while ``ml.predict``, PD,
ALE and LIME explain its probability; the default algorithm must explain the
same number (TreeSHAP of the log-odds stays available as ``algorithm="tree"``,
named by its output).
"""

import numpy as np
import pandas as pd
import pytest

import modellens as ml


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=["a", "b", "c", "d"])
    logit = 2 * X["a"] - X["b"] + X["a"] * X["c"]
    y = (logit + rng.logistic(size=n) > 0).astype(int)
    return X, y


def _classifier(library, X, y):
    if library == "xgboost":
        xgb = pytest.importorskip("xgboost")
        return xgb.XGBClassifier(n_estimators=30, max_depth=3).fit(X, y)
    lgb = pytest.importorskip("lightgbm")
    return lgb.LGBMClassifier(n_estimators=30, num_leaves=8, verbose=-1).fit(X, y)


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_default_shapley_explains_the_prediction(library):
    X, y = _data()
    model = _classifier(library, X, y)
    rows, background = X.iloc[:6], X.iloc[100:160]
    attr = ml.shapley(model, rows, background=background)
    predicted = np.asarray(ml.predict(model, rows), dtype=float)
    np.testing.assert_allclose(predicted, model.predict_proba(rows)[:, 1], atol=1e-12)
    np.testing.assert_allclose(attr.prediction, predicted, rtol=0, atol=1e-6)
    np.testing.assert_allclose(attr.base_values + attr.values.sum(axis=1), predicted,
                               rtol=0, atol=1e-6)
    # the base value is the mean probability over the background
    np.testing.assert_allclose(attr.base_values, model.predict_proba(background)[:, 1].mean(),
                               atol=1e-6)
    assert attr.output == "P(y = 1)"
    # TreeSHAP of the log-odds, when asked for, says so in its output name
    tree = ml.shapley(model, rows, background=background, algorithm="tree")
    assert tree.output.startswith("log-odds")
    margin = model.predict(rows, output_margin=True) if library == "xgboost" \
        else model.predict(rows, raw_score=True)
    np.testing.assert_allclose(tree.base_values + tree.values.sum(axis=1), margin, atol=1e-5)


def test_regressor_default_stays_treeshap():
    xgb = pytest.importorskip("xgboost")
    X, y = _data()
    model = xgb.XGBRegressor(n_estimators=20, max_depth=3).fit(X, y.astype(float))
    attr = ml.shapley(model, X.iloc[:4], background=X.iloc[100:140])
    assert attr.method == "shapley-tree"
    np.testing.assert_allclose(attr.base_values + attr.values.sum(axis=1),
                               model.predict(X.iloc[:4]), atol=1e-5)
