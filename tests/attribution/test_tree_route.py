"""``modellens.trees.route``: one answer to "can the trees serve this request, and if not why",
reached through each tree method (TreeSHAP, the tree H statistics, tree partial dependence)."""

import warnings

import numpy as np
import pandas as pd
import pytest
import xgboost as xgb
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import modellens as ml
from modellens import NotATreeModelError
from modellens.trees import Route, route

pytestmark = pytest.mark.filterwarnings("ignore")


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    y = X.a * X.b + X.c
    return X, y


def _call(method, model, X, **kw):
    """The tree method ``method`` of the library on ``model``, with the tree algorithm asked."""
    if method == "shapley":
        return ml.shapley(model, X.iloc[:5], algorithm="tree", progress=False, **kw)
    if method == "interactions":
        return ml.interactions(model, X, method="tree", sample=30, random_state=0,
                               progress=False, **kw)
    return ml.pdp(model, X, ["a"], method="tree", grid=4, progress=False, **kw)


METHODS = ("shapley", "interactions", "pdp")


@pytest.mark.parametrize("method", METHODS)
def test_a_model_that_is_not_a_tree_ensemble_is_refused_by_every_method(method):
    X, y = _data()
    with pytest.raises(NotATreeModelError, match="cannot read LinearRegression"):
        _call(method, LinearRegression().fit(X, y), X)


@pytest.mark.parametrize("method", METHODS)
def test_a_pipeline_of_trees_is_refused_with_its_reason_by_every_method(method):
    X, y = _data()
    pipe = make_pipeline(StandardScaler(), RandomForestRegressor(n_estimators=3, max_depth=3,
                                                                 random_state=0)).fit(X, y)
    with pytest.raises(NotATreeModelError) as err:
        _call(method, pipe, X)
    assert err.value.reason.startswith("a Pipeline")


@pytest.mark.parametrize("method", METHODS)
def test_a_categorical_column_the_trees_split_as_numbers_is_refused_by_every_method(method):
    X, y = _data()
    model = xgb.XGBRegressor(n_estimators=5, max_depth=3).fit(X, y)
    Xc = X.copy()
    Xc["c"] = pd.Categorical(np.where(X.c > 0, "hi", "lo"))
    with pytest.raises(NotATreeModelError) as err:
        _call(method, model, Xc)
    assert "['c'] are categorical or text but the trees split on them as numbers" \
        in err.value.reason
    assert err.value.reason in str(err.value)


@pytest.mark.parametrize("method", METHODS)
def test_columns_in_another_order_are_refused_by_every_method(method):
    X, y = _data()
    import lightgbm as lgb

    model = lgb.LGBMRegressor(n_estimators=5, num_leaves=4, verbose=-1).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(NotATreeModelError) as err:
            _call(method, model, X[["b", "a", "c"]])
    assert "are not the model's columns" in err.value.reason


@pytest.mark.parametrize("method,response,fragment", [
    ("shapley", "predict_proba", "TreeSHAP explains the raw output"),
    ("interactions", "predict_proba", "computes the statistics of the raw output"),
    ("pdp", "predict_proba", "reads the trees' raw output (response_method='auto')"),
])
def test_a_response_that_is_not_the_raw_output_is_refused_by_every_method(method, response,
                                                                           fragment):
    X, y = _data()
    model = xgb.XGBClassifier(n_estimators=5, max_depth=3).fit(X, (y > 0).astype(int))
    with pytest.raises(NotATreeModelError) as err:
        _call(method, model, X, response_method=response)
    assert fragment in str(err.value)
    assert err.value.reason.startswith("response_method='predict_proba'")


@pytest.mark.parametrize("options", [{"ice": True}, {"sample": 20}])
def test_the_tree_partial_dependence_refuses_what_it_has_not(options):
    X, y = _data()
    model = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    with pytest.raises(NotATreeModelError, match="no ICE curves and uses no sample") as err:
        ml.pdp(model, X, ["a"], method="tree", grid=4, progress=False, **options)
    assert err.value.reason == "ICE curves and samples need model rows"


def test_route_answers_with_the_trees_or_the_reason():
    from modellens.data import Dataset

    X, y = _data()
    model = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    dataset = Dataset.from_data(X)
    for method in METHODS:
        ok = route(model, dataset, X, method=method)
        assert isinstance(ok, Route) and ok and ok.reason is None and ok.error is None
        np.testing.assert_allclose(ok.ensemble.predict_raw(X.to_numpy())[:, 0],
                                   model.predict(X))
    no = route(model, dataset, X, method="shapley", response_method="decision_function")
    assert not no and no.ensemble is None
    assert isinstance(no.error, NotATreeModelError) and no.error.reason == no.reason
    with pytest.raises(ValueError, match="route"):
        route(model, dataset, X, method="dale")


def test_the_automatic_choices_fall_back_where_the_trees_cannot_serve():
    """algorithm='auto' / method='auto' take the model-agnostic path on a refusal."""
    from sklearn.ensemble import GradientBoostingClassifier

    X, y = _data()
    model = GradientBoostingClassifier(n_estimators=5, max_depth=2,
                                       random_state=0).fit(X, (y > 0).astype(int))
    inter = ml.interactions(model, X, sample=20, random_state=0, progress=False)
    assert inter.method == "brute"  # the default response is the probability, not the log-odds
    raw = ml.interactions(model, X, sample=20, random_state=0, progress=False,
                          response_method="decision_function")
    assert raw.method == "tree"
