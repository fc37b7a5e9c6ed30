"""Parsed trees are reused across calls on the same fitted booster, and read again when it
changes (issue 41); LightGBM's trees are read from its model text."""

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.trees import tree_ensemble

lgb = pytest.importorskip("lightgbm")


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 5)), columns=[f"x{j}" for j in range(5)])
    X["c"] = pd.Categorical.from_codes(rng.integers(0, 6, n), list("abcdef"))
    X = X.mask(rng.random(X.shape) < 0.08)
    X.loc[rng.random(n) < 0.05, "x1"] = 0.0
    score = np.nan_to_num(X["x0"].to_numpy()) + (X["c"].cat.codes.to_numpy() % 3)
    y = np.digitize(score, [0.2, 1.4])
    return X, y


def _contrib(model, X):
    """LightGBM's own contributions ``(n, d, k)`` (its last column per class is the base)."""
    raw = model.predict(X, pred_contrib=True)
    k = 3
    return np.stack(np.split(raw, k, axis=1), axis=-1)[:, :-1, :]


def test_a_second_call_reuses_the_parsed_trees():
    X, y = _data()
    model = lgb.LGBMClassifier(n_estimators=20, verbose=-1).fit(X, y)
    assert tree_ensemble(model) is tree_ensemble(model)


@pytest.mark.parametrize("change", ["refit", "leaf", "more rounds"])
def test_a_changed_booster_is_read_again(change):
    X, y = _data()
    if change == "more rounds":  # a Booster trained on: more trees in the same object
        model = lgb.train({"objective": "multiclass", "num_class": 3, "verbose": -1},
                          lgb.Dataset(X, y), 20, keep_training_booster=True)
    else:
        model = lgb.LGBMClassifier(n_estimators=20, verbose=-1).fit(X, y)
    first = tree_ensemble(model)
    before = ml.shapley(model, X[:20], algorithm="tree", target="all", progress=False).values
    if change == "refit":
        model.fit(X, (y + 1) % 3)
    elif change == "leaf":  # a leaf set by hand: same trees, same sizes, another value
        booster = model.booster_
        booster.set_leaf_output(0, 0, booster.get_leaf_output(0, 0) + 5.0)
    else:
        for _ in range(5):
            model.update()
    assert tree_ensemble(model) is not first
    after = ml.shapley(model, X[:20], algorithm="tree", target="all", progress=False).values
    np.testing.assert_allclose(after, _contrib(model, X[:20]), rtol=0, atol=1e-9)
    assert np.abs(after - before).max() > 1e-3


def test_xgboost_refit_is_read_again():
    xgb = pytest.importorskip("xgboost")
    X, y = _data()
    model = xgb.XGBRegressor(n_estimators=10, max_depth=3).fit(X.drop(columns="c"), y)
    first = tree_ensemble(model)
    assert tree_ensemble(model) is first
    model.fit(X.drop(columns="c"), -y)
    assert tree_ensemble(model) is not first
    raw = model.predict(X.drop(columns="c")[:30], output_margin=True)
    ens = tree_ensemble(model)
    np.testing.assert_allclose(ens.predict_raw(X.drop(columns="c")[:30].to_numpy())[:, 0], raw,
                               rtol=0, atol=1e-5)


@pytest.mark.parametrize("params", [
    {"n_estimators": 30},
    {"n_estimators": 30, "zero_as_missing": True},
    {"n_estimators": 30, "use_missing": False},
    {"n_estimators": 10, "min_child_samples": 300},  # one-leaf trees
    {"n_estimators": 10, "boosting_type": "rf", "bagging_freq": 1, "bagging_fraction": 0.7},
])
def test_the_text_reader_predicts_what_lightgbm_predicts(params):
    # the raw scores of every class, categorical splits and missing values included
    X, y = _data(seed=1)
    model = lgb.LGBMClassifier(verbose=-1, **params).fit(X, y)
    ens = tree_ensemble(model)
    codes = X.assign(c=X["c"].cat.codes.replace(-1, np.nan).astype(float)).to_numpy(float)
    ours = ens.predict_raw(codes)  # the frame's codes are the model's (same categories)
    theirs = model.predict(X, raw_score=True)
    if params.get("boosting_type") == "rf":  # predict averages the trees, raw_score sums them
        theirs = theirs / model.booster_.current_iteration()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


def _regression_booster(X, y, rounds=8):
    return lgb.train({"objective": "regression", "verbose": -1, "num_leaves": 7},
                     lgb.Dataset(X, y.astype(float)), rounds, keep_training_booster=True)


def test_a_hit_serializes_nothing(monkeypatch):
    # the state of an unchanged LightGBM booster is read without its model text (issue 41)
    X, y = _data()
    model = lgb.LGBMClassifier(n_estimators=20, verbose=-1).fit(X, y)
    first = tree_ensemble(model)

    def no_text(*args, **kwargs):
        raise AssertionError("the model was serialized to learn that it is unchanged")

    monkeypatch.setattr(model.booster_, "model_to_string", no_text)
    assert tree_ensemble(model) is first


@pytest.mark.parametrize("where", ["first", "last"])
def test_a_leaf_set_in_any_tree_is_read_again(where):
    X, y = _data()
    model = _regression_booster(X, y)
    first = tree_ensemble(model)
    tree = 0 if where == "first" else model.num_trees() - 1
    leaf = 0 if where == "first" else int(model.dump_model()["tree_info"][tree]["num_leaves"]) - 1
    model.set_leaf_output(tree, leaf, model.get_leaf_output(tree, leaf) - 3.0)
    ens = tree_ensemble(model)
    assert ens is not first
    codes = X.assign(c=X["c"].cat.codes.replace(-1, np.nan).astype(float)).to_numpy(float)
    np.testing.assert_allclose(ens.predict_raw(codes)[:, 0], model.predict(X, raw_score=True),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("change", ["regrown tree", "another model loaded", "best iteration"])
def test_a_booster_changed_in_place_is_read_again(change):
    X, y = _data()
    model = _regression_booster(X, y)
    first = tree_ensemble(model)
    if change == "regrown tree":  # the same number of trees, the last one grown again
        model.rollback_one_iter()

        def steeper(preds, data):  # another objective: another last tree
            resid = preds - data.get_label()
            return 3.0 * resid, np.ones_like(resid)

        model.update(fobj=steeper)
        assert model.current_iteration() == 8
    elif change == "another model loaded":
        other = _regression_booster(X, -y)
        model.model_from_string(other.model_to_string())
    else:  # the model text, and LightGBM's predict, stop at best_iteration
        model.best_iteration = 5
    ens = tree_ensemble(model)
    assert ens is not first
    codes = X.assign(c=X["c"].cat.codes.replace(-1, np.nan).astype(float)).to_numpy(float)
    np.testing.assert_allclose(ens.predict_raw(codes)[:, 0], model.predict(X, raw_score=True),
                               rtol=0, atol=1e-12)


def test_xgboost_booster_loaded_in_place_is_read_again():
    xgb = pytest.importorskip("xgboost")
    X, y = _data()
    Xn = X.drop(columns="c")
    model = xgb.XGBRegressor(n_estimators=10, max_depth=3).fit(Xn, y)
    other = xgb.XGBRegressor(n_estimators=10, max_depth=3).fit(Xn, -y)
    first = tree_ensemble(model)
    # the same object, the same number of trees, other trees
    model.get_booster().load_model(other.get_booster().save_raw("json"))
    ens = tree_ensemble(model)
    assert ens is not first
    np.testing.assert_allclose(ens.predict_raw(Xn[:30].to_numpy())[:, 0],
                               model.predict(Xn[:30], output_margin=True), rtol=0, atol=1e-5)
