"""PD and ICE of tree ensembles from their trees (``method="auto"``): the model's own curves.

The oracle is brute force with the library itself: each grid value written into a copy
of X and the model's own ``predict_proba`` / ``predict`` on it, row by row.  The trees'
curves must equal it to 1e-9 for scikit-learn, XGBoost and LightGBM models with missing
values and categorical splits, binary and multiclass in probability, and must say which
path ran.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (HistGradientBoostingClassifier, RandomForestClassifier,
                              RandomForestRegressor)

import modellens as ml
from modellens.effects._tree_ice import EVALUATED_BY_TREES


@pytest.fixture(autouse=True)
def _always_the_trees(monkeypatch):
    # these data are small: the trees serve them when asked for any grid rows
    monkeypatch.setattr("modellens.effects._tree_ice.MIN_GRID_ROWS", 0)


def _frame(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(-2, 2, n),
                      "c": pd.Categorical(rng.choice(["p", "q", "r", "s"], n)),
                      "d": rng.normal(size=n)})
    X.loc[rng.random(n) < 0.15, "a"] = np.nan
    X.loc[rng.random(n) < 0.1, "b"] = 0.0  # zeros: LightGBM's zero-as-missing routing
    score = np.nan_to_num(X.a.to_numpy()) + X.b * X.d + (X.c.cat.codes.to_numpy() % 2)
    return X, score


#: LightGBM splits on a category of a few rows (its defaults want 100 rows a group)
_LGB_CATEGORIES = dict(min_data_per_group=5, cat_smooth=1.0, cat_l2=1.0)


def _brute(model, X, feature, grid, column):
    """ICE ``(n, G)`` of ``column`` of predict_proba (None: predict), one grid value at a time."""
    curves = []
    for g in grid:
        Z = X.copy()
        if isinstance(X[feature].dtype, pd.CategoricalDtype):
            Z[feature] = pd.Categorical([g] * len(Z), categories=X[feature].cat.categories)
        else:
            Z[feature] = g
        out = model.predict(Z) if column is None else model.predict_proba(Z)[:, column]
        curves.append(np.asarray(out, dtype=float))
    return np.column_stack(curves)


def _check(model, X, column=None, target=None, features=("a", "b", "c"), atol=1e-9):
    effects = ml.pdp(model, X, list(features), grid=7, ice=True, target=target)
    for name in features:
        effect = effects[name]
        assert effect.extra["evaluated"] == EVALUATED_BY_TREES, effect.extra
        ref = _brute(model, X, name, list(effect.grid), column)
        np.testing.assert_allclose(effect.ice, ref, rtol=0, atol=atol)
        np.testing.assert_allclose(effect.values, ref.mean(axis=0), rtol=0, atol=atol)
    return effects


def test_lightgbm_multiclass_with_missing_values_and_categories():
    lgb = pytest.importorskip("lightgbm")
    X, score = _frame()
    y = pd.qcut(score, 3, labels=False)
    model = lgb.LGBMClassifier(n_estimators=15, num_leaves=7, min_child_samples=5,
                               verbose=-1, random_state=0, **_LGB_CATEGORIES).fit(X, y)
    for k in range(3):
        _check(model, X, column=k, target=k)
    # every class at once: the softmax over the classes, from one walk of the trees
    every = ml.pdp(model, X, ["c"], grid=7, ice=True)
    ref = _brute(model, X, "c", list(every["c"].grid), 2)
    np.testing.assert_allclose(every.for_output(2)["c"].ice, ref, rtol=0, atol=1e-9)


def test_lightgbm_binary_zero_as_missing():
    lgb = pytest.importorskip("lightgbm")
    X, score = _frame(seed=1)
    y = (score > np.median(score)).astype(int)
    model = lgb.LGBMClassifier(n_estimators=12, num_leaves=6, min_child_samples=5,
                               zero_as_missing=True, verbose=-1, random_state=0,
                               **_LGB_CATEGORIES).fit(X, y)
    _check(model, X, column=1)
    _check(model, X, column=0, target=0)


def test_xgboost_multiclass_with_missing_values_and_categories():
    xgb = pytest.importorskip("xgboost")
    X, score = _frame(seed=2)
    y = pd.qcut(score, 3, labels=False)
    model = xgb.XGBClassifier(n_estimators=10, max_depth=3, enable_categorical=True,
                              tree_method="hist").fit(X, y)
    # XGBoost adds its leaves and applies the softmax in float32: its own answers are the
    # exact ones rounded to float32's resolution
    _check(model, X, column=1, target=1, atol=1e-6)


def test_scikit_learn_boosting_and_forests():
    X, score = _frame(seed=3)
    y = pd.qcut(score, 3, labels=["lo", "mid", "hi"]).astype(str)
    hgb = HistGradientBoostingClassifier(max_iter=10, categorical_features="from_dtype",
                                         random_state=0).fit(X, y)
    _check(hgb, X, column=list(hgb.classes_).index("mid"), target="mid")
    Xn = X.assign(c=X.c.cat.codes.astype(float), a=X.a.fillna(0.0))
    forest = RandomForestClassifier(n_estimators=8, max_depth=5, random_state=0).fit(Xn, y)
    _check(forest, Xn, column=0, target=forest.classes_[0])
    reg = RandomForestRegressor(n_estimators=8, max_depth=5, random_state=0).fit(Xn, score)
    _check(reg, Xn)


def test_the_trees_evaluate_no_grid_rows():
    lgb = pytest.importorskip("lightgbm")
    from modellens.trees import RESPONSE_CHECK_ROWS as CHECK_ROWS

    X, score = _frame(seed=4)
    y = (score > 0).astype(int)
    model = lgb.LGBMClassifier(n_estimators=5, num_leaves=4, verbose=-1,
                               **_LGB_CATEGORIES).fit(X, y)
    rows = []
    own = model.predict_proba
    model.predict_proba = lambda Z, *a, **k: rows.append(len(Z)) or own(Z, *a, **k)
    trees = ml.pdp(model, X, ["a", "b"], grid=9, ice=True)
    assert sum(rows) == CHECK_ROWS  # the check on a few data rows, no grid row
    rows.clear()
    brute = ml.pdp(model, X, ["a", "b"], grid=9, ice=True, method="brute")
    assert sum(rows) == len(X) * 9 * 2 and "evaluated" not in brute["a"].extra
    for name in ("a", "b"):
        np.testing.assert_allclose(trees[name].ice, brute[name].ice, rtol=0, atol=1e-9)


def test_a_link_the_reader_does_not_model_is_refused_by_the_models_answers():
    # LightGBM's sigmoid parameter scales the log-odds inside predict_proba: the trees'
    # raw output with the plain logistic function would be wrong, the check on data rows
    # sees it, and the model rows give the curves (with the reason in the result)
    lgb = pytest.importorskip("lightgbm")
    X, score = _frame(seed=5)
    y = (score > np.median(score)).astype(int)
    model = lgb.LGBMClassifier(n_estimators=8, num_leaves=5, sigmoid=3.0, verbose=-1,
                               random_state=0, **_LGB_CATEGORIES).fit(X, y)
    effect = ml.pdp(model, X, ["b"], grid=5, ice=True)["b"]
    assert effect.extra["evaluated"] == "model rows"
    assert "differ from the model's" in effect.extra["trees_refused"]
    ref = _brute(model, X, "b", list(effect.grid), 1)
    np.testing.assert_allclose(effect.ice, ref, rtol=0, atol=1e-12)


def test_a_response_the_trees_do_not_give_falls_back_with_the_reason():
    X, score = _frame(seed=6)
    Xn = X.assign(c=X.c.cat.codes.astype(float), a=X.a.fillna(0.0))
    y = (score > 0).astype(int)
    forest = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0).fit(Xn, y)
    effect = ml.pdp(forest, Xn, ["b"], grid=4, response_method="predict")["b"]
    assert effect.extra["evaluated"] == "model rows"
    assert "prediction" in effect.extra["trees_refused"]
    same = ml.pdp(forest, Xn, ["b"], grid=4, method="brute")["b"]
    assert "evaluated" not in same.extra  # asked for model rows: nothing to say


def test_weights_sample_center_and_pairs_keep_their_meaning():
    X, score = _frame(seed=7)
    Xn = X.assign(c=X.c.cat.codes.astype(float), a=X.a.fillna(0.0))
    reg = RandomForestRegressor(n_estimators=6, max_depth=4, random_state=0).fit(Xn, score)
    w = np.random.default_rng(0).uniform(0.5, 2, len(Xn))
    kw = dict(grid=5, center=True, sample=60, random_state=1, sample_weight=w)
    trees = ml.pdp(reg, Xn, ["a", ("b", "d")], **kw)
    brute = ml.pdp(reg, Xn, ["a", ("b", "d")], method="brute", **kw)
    assert trees["a"].extra["evaluated"] == EVALUATED_BY_TREES
    np.testing.assert_allclose(trees["a"].values, brute["a"].values, rtol=0, atol=1e-9)
    np.testing.assert_allclose(trees[("b", "d")].values, brute[("b", "d")].values, atol=1e-12)


def test_few_grid_rows_stay_on_the_model(monkeypatch):
    # below MIN_GRID_ROWS the model's own time is small: no compile of the trees' kernel
    monkeypatch.setattr("modellens.effects._tree_ice.MIN_GRID_ROWS", 10 ** 9)
    X, score = _frame(seed=8)
    Xn = X.assign(c=X.c.cat.codes.astype(float), a=X.a.fillna(0.0))
    reg = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(Xn, score)
    assert "evaluated" not in ml.pdp(reg, Xn, ["b"], grid=4)["b"].extra
