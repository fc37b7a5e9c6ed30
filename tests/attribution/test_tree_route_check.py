"""The check of the trees' answers, run by ``trees.route()`` for every tree method (issue #40),
and the net's loose ends: the tree PD counts its check's rows, a Poisson / Gamma
HistGradientBoosting is read with its log link, a forest classifier's labels are not explained
as its probabilities, and the unknown-levels warning says how XGBoost reads an unseen level.

Oracles: the model's own predict / ``_raw_predict``, shap's TreeExplainer, and rows counted
as the model is asked for them."""

import warnings

import numpy as np
import pandas as pd
import pytest
import xgboost as xgb
from sklearn.ensemble import (HistGradientBoostingRegressor, RandomForestClassifier,
                              RandomForestRegressor)

import modellens as ml
from modellens import ModellensWarning, NotATreeModelError
from modellens.engine import open_request
from modellens.trees import DATA_CHECK_ROWS, route, tree_ensemble


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    return X, X.a * X.b + X.c


def test_the_tree_partial_dependence_counts_the_rows_of_its_check():
    X, y = _data(1500)
    model = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    asked = []
    own = model.predict
    model.predict = lambda rows: asked.append(len(rows)) or own(rows)  # rows counted
    effects = ml.pdp(model, X, ["a", "b"], method="tree", grid=4, progress=False)
    assert sum(asked) == DATA_CHECK_ROWS  # the check's rows: the model's only ones
    for name in ("a", "b"):
        assert effects[name].extra["n_model_rows"] == sum(asked)


@pytest.mark.parametrize("loss", ["poisson", "gamma"])
def test_a_log_link_histgradientboosting_is_explained_on_its_raw_output(loss):
    shap = pytest.importorskip("shap")
    X, _ = _data()
    model = HistGradientBoostingRegressor(loss=loss, max_iter=10).fit(X, np.exp(X.a / 2))
    assert tree_ensemble(model).link == "log"
    rows = X.iloc[:10]
    attr = ml.shapley(model, rows, algorithm="tree", progress=False)
    total = attr.values.sum(axis=1) + attr.base_values
    # the raw output is the log of the prediction: the model's own raw predict
    np.testing.assert_allclose(total, np.log(model.predict(rows)), rtol=0, atol=1e-12)
    np.testing.assert_allclose(total, model._raw_predict(rows.to_numpy())[:, 0], rtol=0,
                               atol=1e-12)
    assert attr.output == "raw prediction"  # the scale explained is named
    np.testing.assert_allclose(attr.values, shap.TreeExplainer(model).shap_values(rows),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("loss", ["poisson", "gamma"])
def test_a_log_link_prediction_is_never_explained_on_the_log_scale(loss):
    X, _ = _data()
    model = HistGradientBoostingRegressor(loss=loss, max_iter=10).fit(X, np.exp(X.a / 2))
    rows = X.iloc[:6]
    with pytest.raises(NotATreeModelError, match="is not the trees' raw output"):
        ml.shapley(model, rows, algorithm="tree", response_method="predict", progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        attr = ml.shapley(model, rows, background=X.iloc[:20], progress=False)
    assert not attr.method.endswith("tree")  # the model's prediction, from its rows
    np.testing.assert_allclose(attr.values.sum(axis=1) + attr.base_values,
                               model.predict(rows), rtol=1e-9)


def test_a_forest_classifiers_labels_are_not_explained_as_its_probabilities():
    """``response_method="predict"`` of a classifier is its labels; the trees hold the
    probabilities: TreeSHAP refuses it (as the H statistics did) and ``"auto"`` explains the
    labels from the model's rows."""
    from modellens.trees import raw_is_response

    X, y = _data()
    model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(
        X, (y > 0).astype(int))
    assert not raw_is_response(tree_ensemble(model), "predict")
    with pytest.raises(NotATreeModelError, match="is not the trees' raw output"):
        ml.shapley(model, X.iloc[:5], algorithm="tree", response_method="predict",
                   progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        attr = ml.shapley(model, X.iloc[:5], background=X.iloc[:20],
                          response_method="predict", progress=False)
    assert not attr.method.endswith("tree")
    np.testing.assert_allclose(attr.values.sum(axis=1) + attr.base_values,
                               model.predict(X.iloc[:5]), rtol=1e-9)


def test_route_checks_the_rows_it_is_given_and_says_so_in_each_methods_words(monkeypatch):
    import dataclasses

    import modellens.trees._route as route_module

    X, y = _data()
    model = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    request = open_request(model, X, dask="in_memory", wrap_model=False)
    dataset = request.dataset
    ok = route(model, dataset, X, method="shapley", rows=dataset.values[:7], request=request)
    assert ok and request.n_model_rows == 7 and ok.raw.shape == (7, 1)
    np.testing.assert_allclose(ok.raw[:, 0], model.predict(X.iloc[:7]), rtol=1e-12)
    real = route_module.tree_ensemble
    monkeypatch.setattr(route_module, "tree_ensemble",
                        lambda m: dataclasses.replace(real(m), value=real(m).value * 2))
    with pytest.warns(ModellensWarning, match="^TreeSHAP is not used: the trees' answers"):
        no = route(model, dataset, X, method="shapley", rows=dataset.values[:7],
                   request=request)
    assert not no and no.reason.startswith("the trees' answers differ")
    assert request.n_model_rows == 14  # (refused: its rows counted all the same)
    with pytest.warns(ModellensWarning, match="^the tree H statistics are not used"):
        assert not route(model, dataset, X, method="interactions", rows=dataset.values,
                         request=request)
    with pytest.raises(NotATreeModelError, match="^method='tree' cannot use this data: the"):
        route(model, dataset, X, method="pdp", rows=dataset.values, strict=True,
              request=request)


def test_a_selection_says_whether_it_sums_as_its_source():
    """``sums_as_source``: where it holds, the selected columns' raw output is the source's
    to the bit; a forest's one class is summed per output, not leaf row by leaf row."""
    X, y = _data()
    forest = tree_ensemble(RandomForestClassifier(n_estimators=7, max_depth=4, random_state=0)
                           .fit(X, np.digitize(y, [-0.5, 0.5])))
    booster = tree_ensemble(xgb.XGBClassifier(n_estimators=7, max_depth=3)
                            .fit(X, np.digitize(y, [-0.5, 0.5])))
    rows = X.to_numpy()
    assert not forest.select_outputs([(1, False)]).sums_as_source
    assert forest.select_outputs([(0, False), (2, False)]).sums_as_source
    for ens in (booster, forest):
        for outputs in ([(1, False)], [(2, True), (0, False)]):
            chosen = ens.select_outputs(outputs)
            if chosen.sums_as_source:
                own = chosen.predict_raw(rows)
                full = ens.predict_raw(rows)
                for k, (c, negate) in enumerate(outputs):
                    np.testing.assert_array_equal(own[:, k], -full[:, c] if negate
                                                  else full[:, c])
    assert booster.select_outputs([(1, False)]).sums_as_source


def test_the_unknown_levels_warning_says_how_xgboost_reads_an_unseen_level():
    """XGBoost 3.1+ reads a level it never saw as the next larger one it stores: the
    warning says so (the model's answers at 'b' are those at 'c')."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"c": pd.Categorical(rng.choice(["a", "c", "e"], 200)),
                      "x": rng.normal(size=200)})
    model = xgb.XGBRegressor(n_estimators=5, enable_categorical=True, tree_method="hist").fit(
        X, (X.c == "c") * 1.0 + X.x)
    data = X.assign(c=pd.Categorical(X.c.astype(str).where(X.index > 0, "b")))
    at_c = X.iloc[:1].assign(c=pd.Categorical(["c"], categories=["a", "c", "e"]))
    if model.get_booster().get_categories() is None or \
            model.predict(data.iloc[:1])[0] != model.predict(at_c)[0]:
        pytest.skip("this XGBoost does not read an unseen level as the next larger one")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ml.pdp(model, data, ["c"], progress=False)
    found = [w.message for w in caught if isinstance(w.message, ml.UnknownLevelsWarning)]
    assert found and found[0].unknown_levels == ["b"]
    assert "XGBoost reads as the next larger level it knows" in str(found[0])
    assert "reads as unknown levels" not in str(found[0])


def test_the_unknown_levels_warning_of_other_models_keeps_its_words():
    X = pd.DataFrame({"hour": np.arange(40) % 4, "x": np.linspace(0, 1, 40)})
    model = HistGradientBoostingRegressor(max_iter=5, categorical_features=["hour"]).fit(
        X, X["x"] + X["hour"])
    data = X.assign(hour=X["hour"].where(X.index > 0, 7))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ml.pdp(model, data, ["hour"], progress=False)
    found = [w.message for w in caught if isinstance(w.message, ml.UnknownLevelsWarning)]
    assert found and "which the model reads as unknown levels" in str(found[0])
