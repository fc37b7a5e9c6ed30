"""The net under every tree route (issue #40): trees that answer otherwise than the model are
never used for a number.  Asked for explicitly, the tree method is refused with the gap;
chosen by ``"auto"``, the model's own rows answer instead, with a warning.

The oracle is the model: a planted disagreement (the parsed trees' leaves scaled, as a damaged
file or a field the reader does not model would leave them), and two real files that load
and pass every file check (a skops HistGradientBoosting whose ``verbose`` was edited, an
XGBoost categorical JSON with a stored level of -2**31)."""

import dataclasses
import io
import json
import re
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest
import xgboost as xgb
from sklearn.ensemble import (ExtraTreesClassifier, GradientBoostingClassifier,
                              HistGradientBoostingClassifier, HistGradientBoostingRegressor,
                              RandomForestClassifier, RandomForestRegressor)

import modellens as ml
from modellens import ModellensWarning, NotATreeModelError
from modellens.data import Dataset
from modellens.trees import tree_ensemble

GAP = "the trees' answers differ from the model's"


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    return X, X.a * X.b + X.c


@pytest.fixture
def model():
    X, y = _data()
    return RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0).fit(X, y)


@pytest.fixture
def planted(monkeypatch):
    """The readers' trees with every leaf scaled by 1.5: they no longer answer as the model."""
    import modellens.trees._route as route_module

    real = route_module.tree_ensemble

    def scaled(model):
        ens = real(model)
        return dataclasses.replace(ens, value=ens.value * 1.5)
    monkeypatch.setattr(route_module, "tree_ensemble", scaled)


SHAPLEY_CASES = {
    "path-dependent": {},
    "interventional": {"background": "bg"},
    "groups": {"background": "bg", "groups": {"ab": ["a", "b"], "c": ["c"]}},
    "interactions": {"interactions": True},
}


@pytest.mark.parametrize("case", list(SHAPLEY_CASES))
def test_shapley_tree_refuses_trees_that_disagree_with_the_model(model, planted, case):
    X, _ = _data()
    kw = {k: (X.iloc[:20] if v == "bg" else v) for k, v in SHAPLEY_CASES[case].items()}
    with pytest.raises(NotATreeModelError, match="algorithm='tree' cannot explain") as err:
        ml.shapley(model, X.iloc[:10], algorithm="tree", progress=False, **kw)
    assert err.value.reason.startswith(GAP)
    assert "of 10 checked rows" in err.value.reason


def test_shapley_auto_falls_back_on_the_model_with_a_warning(model, planted):
    X, _ = _data()
    with pytest.warns(ModellensWarning, match="TreeSHAP is not used: " + GAP):
        auto = ml.shapley(model, X.iloc[:10], background=X.iloc[:20], progress=False)
    exact = ml.shapley(model, X.iloc[:10], background=X.iloc[:20], algorithm="exact",
                       progress=False)
    assert auto.method == exact.method == "shapley-exact"
    np.testing.assert_allclose(auto.values, exact.values, rtol=1e-12, atol=1e-12)


def test_treeshap_that_agrees_counts_the_checked_rows_and_keeps_its_numbers(model):
    X, _ = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModellensWarning)
        attr = ml.shapley(model, X.iloc[:10], algorithm="tree", progress=False)
    assert attr.diagnostics["n_model_rows"] == 10  # the check's model rows, nothing else
    np.testing.assert_allclose(attr.values.sum(axis=1) + attr.base_values,
                               model.predict(X.iloc[:10]), rtol=1e-12, atol=1e-12)


def test_compare_refuses_trees_that_disagree(model, planted):
    X, y = _data()
    other = RandomForestRegressor(n_estimators=5, max_depth=3, random_state=1).fit(X, y)
    with pytest.raises(NotATreeModelError, match=GAP):
        ml.compare(model, other, X.iloc[:5], algorithm="tree", progress=False)


def test_tree_h_statistics_refuse_and_auto_falls_back(model, planted):
    X, _ = _data()
    with pytest.raises(NotATreeModelError, match="method='tree' cannot be used here") as err:
        ml.interactions(model, X, method="tree", sample=30, random_state=0, progress=False)
    assert err.value.reason.startswith(GAP)
    with pytest.warns(ModellensWarning, match="tree H statistics are not used: " + GAP):
        auto = ml.interactions(model, X, method="auto", sample=30, random_state=0,
                               progress=False)
    brute = ml.interactions(model, X, method="brute", sample=30, random_state=0,
                            progress=False)
    assert auto.method == "brute"
    pd.testing.assert_frame_equal(auto.pairwise, brute.pairwise)


def test_tree_partial_dependence_refuses(model, planted):
    X, _ = _data()
    with pytest.raises(NotATreeModelError, match="method='tree' cannot use this data") as err:
        ml.pdp(model, X, ["a"], method="tree", grid=4, progress=False)
    assert err.value.reason.startswith(GAP)


def test_exact_ice_and_tree_ale_fall_back_on_model_rows(model, planted, monkeypatch):
    import modellens.effects._tree_ale as tree_ale
    import modellens.effects._tree_ice as tree_ice

    # small data: the trees would serve whatever the model rows
    monkeypatch.setattr(tree_ice, "MIN_GRID_ROWS", 0)
    monkeypatch.setattr(tree_ale, "MIN_MODEL_ROWS", 0)
    monkeypatch.setattr(tree_ale, "_walk_rows", lambda n, ens, axes: 0)
    X, _ = _data()
    curve = ml.pdp(model, X, ["a"], grid=4, ice=True, progress=False)["a"]
    brute = ml.pdp(model, X, ["a"], grid=4, ice=True, method="brute", progress=False)["a"]
    local = ml.ale(model, X, ["a"], bins=4, progress=False)["a"]
    for effect in (curve, local):
        assert effect.extra["evaluated"] == "model rows"
        assert effect.extra["trees_refused"].startswith(GAP)
    np.testing.assert_allclose(curve.ice, brute.ice, rtol=0, atol=0)


def test_tree_h_statistics_that_agree_count_the_checked_rows(model):
    X, _ = _data()
    inter = ml.interactions(model, X, method="tree", sample=30, random_state=0,
                            progress=False)
    assert inter.n_model_rows == 30


# ------------------------------------------------------------ the two files of the fuzz run
def _hgb_skops_verbose_edited(tmp_path):
    import skops.io as sio

    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                      "c": rng.integers(0, 6, n).astype(float)})
    y = X.a - 2 * X.b + (X.c == 2) + rng.normal(scale=0.1, size=n)
    model = HistGradientBoostingRegressor(max_iter=6, max_depth=3,
                                          categorical_features=[2]).fit(X, y)
    src = zipfile.ZipFile(io.BytesIO(sio.dumps(model)))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            raw = src.read(name)
            if name == "schema.json":  # the estimator's verbose 0 -> 2, as the fuzz did
                schema = json.loads(raw)
                state = schema["content"]["content"]
                assert state["verbose"]["content"] == "0"
                state["verbose"]["content"] = "2"
                raw = json.dumps(schema).encode()
            dst.writestr(name, raw)
    path = tmp_path / "hgb.skops"
    path.write_bytes(out.getvalue())
    return path, X


def _xgb_category_level_edited(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    X = pd.DataFrame({"a": rng.normal(size=n), "k": pd.Categorical(rng.integers(0, 5, n))})
    y = ((X.a > 0) ^ (X.k.cat.codes % 2 == 0)).astype(int)
    model = xgb.XGBClassifier(n_estimators=20, max_depth=3, enable_categorical=True,
                              tree_method="hist").fit(X, y)
    path = tmp_path / "cat.json"
    model.save_model(path)
    doc = json.loads(path.read_text())
    cats = doc["learner"]["gradient_booster"]["model"].get("cats")
    if cats is None:
        pytest.skip("this XGBoost stores no category levels")
    level = next(e for e in cats["enc"] if e.get("values"))
    level["values"][0] = -(2 ** 31)
    path.write_text(json.dumps(doc))
    return path, X


@pytest.mark.parametrize("build", [_hgb_skops_verbose_edited, _xgb_category_level_edited])
def test_a_fuzzed_file_never_gives_tree_values(tmp_path, build):
    path, X = build(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the unknown levels of the edited categories)
        try:
            model = ml.load_model(path)
        except Exception as exc:  # the file checks refuse it: fine, no values either
            assert not isinstance(exc, (AssertionError, pytest.fail.Exception))
            return
        try:
            attr = ml.shapley(model, X.iloc[:50], algorithm="tree", progress=False)
        except NotATreeModelError as exc:
            assert re.search(GAP, str(exc)), exc
            return
    # values only where they add up to the model's own margin (XGBoost reads a level it
    # never stored as the next larger stored one, and so do the parsed trees now)
    margin = model.decision_function(X.iloc[:50]) if hasattr(model, "decision_function") \
        else model.predict(X.iloc[:50], output_margin=True)
    np.testing.assert_allclose(attr.base_values + attr.values.sum(axis=1), margin,
                               rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------ good models pass the check
def _good_models():
    rng = np.random.default_rng(1)
    n = 400
    X = rng.normal(size=(n, 4))
    X[rng.random((n, 4)) < 0.1] = np.nan
    Xf = np.nan_to_num(X)
    y = (Xf[:, 0] > 0).astype(int)
    y3 = y + (Xf[:, 1] > 0)
    yr = Xf.sum(axis=1)
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["k"] = pd.Categorical(rng.choice(list("pqrs"), n))
    yk = frame.k.isin(["p", "q"]).astype(int) + y
    import lightgbm as lgb

    return [
        (RandomForestClassifier(10, random_state=0).fit(Xf, y3), Xf),
        (RandomForestRegressor(10, random_state=0).fit(Xf, yr), Xf),
        (ExtraTreesClassifier(10, random_state=0).fit(Xf, y), Xf),
        (GradientBoostingClassifier(n_estimators=20, random_state=0).fit(Xf, y3), Xf),
        (HistGradientBoostingClassifier(max_iter=20).fit(X, y), X),
        (HistGradientBoostingRegressor(max_iter=20, categorical_features="from_dtype")
         .fit(frame, yr), frame),
        (xgb.XGBClassifier(n_estimators=100).fit(X, y3), X),
        (xgb.XGBRegressor(n_estimators=100).fit(X, yr), X),
        (xgb.XGBClassifier(n_estimators=50, enable_categorical=True, tree_method="hist")
         .fit(frame, yk), frame),
        (xgb.train({"objective": "multi:softmax", "num_class": 3}, xgb.DMatrix(X, y3), 20), X),
        (lgb.LGBMClassifier(n_estimators=50, verbose=-1).fit(X, y), X),
        (lgb.LGBMClassifier(n_estimators=50, verbose=-1).fit(X, y3), X),
        (lgb.LGBMRegressor(n_estimators=50, verbose=-1).fit(frame, yr), frame),
    ]


class _Rows:
    """What a route counts its check's model rows on (a request's ``account``)."""

    def __init__(self):
        self.n_calls = self.n_rows = 0

    def account(self, calls, rows):
        self.n_calls += calls
        self.n_rows += rows


def test_good_models_of_every_library_agree_with_their_trees():
    from modellens.trees import margin_disagreement

    for model, X in _good_models():
        ens = tree_ensemble(model)
        dataset = Dataset.from_data(X)
        spent = _Rows()
        why, raw = margin_disagreement(model, ens, dataset, dataset.values, spent)
        assert why is None, (type(model).__name__, why)
        # one call of every row, counted (no row asked to learn the margin's columns)
        assert (spent.n_calls, spent.n_rows) == (1, len(dataset.values))


@pytest.mark.parametrize("target", [None, 0, "all"])
def test_the_checked_raw_output_is_treeshaps_own_prediction(target):
    """TreeSHAP reuses the raw output the check computed: the same numbers, to the bit, as
    the selected outputs' own (a binary model's negated column for classes_[0])."""
    from modellens.attribution._games import TreeGame, tree_ensemble_for

    reused = 0
    for model, X in _good_models():
        dataset = Dataset.from_data(X)
        try:
            checked = tree_ensemble_for(model, dataset, X, strict=True,
                                        response_method="auto", request=_Rows())
        except NotATreeModelError:  # (a route refused before the check: not this test's)
            continue
        classes = checked.ensemble.classes
        if target == "all" and classes is None and checked.ensemble.n_outputs == 1:
            continue
        if target == 0 and classes is None and checked.ensemble.n_outputs == 1:
            continue
        game = TreeGame(checked.ensemble, model, dataset, len(X), None, "", target=target,
                        model_rows=len(X), raw=checked.raw)
        if game.prediction is None:  # (summed in another order: computed again)
            continue
        reused += 1
        own = game.ensemble.predict_raw(game.X)
        np.testing.assert_array_equal(game.prediction, own, err_msg=type(model).__name__)
    assert reused >= 5


def _counted(model):
    """``model`` whose ``predict`` records the rows of each call (the first: the seam's
    one-row probe of the outputs, which no method counts)."""
    asked = []
    own = model.predict
    model.predict = lambda rows: asked.append(len(rows)) or own(rows)
    return asked


def test_a_fallback_counts_the_rows_that_checked_the_trees(model, planted):
    """Trees refused after their check: the model rows of the fallback include the check's
    (every row the model answered but the uncounted probe; compare: both models' rows)."""
    X, y = _data()
    asked = _counted(model)
    with pytest.warns(ModellensWarning, match="TreeSHAP is not used"):
        attr = ml.shapley(model, X.iloc[:10], background=X.iloc[:20], progress=False)
    assert sorted(asked[:2]) == [1, 10]  # the probe, the check
    assert attr.diagnostics["n_model_rows"] == sum(asked) - 1
    asked.clear()
    with pytest.warns(ModellensWarning, match="tree H statistics are not used"):
        inter = ml.interactions(model, X, sample=30, random_state=0, progress=False)
    assert sorted(asked[:2]) == [1, 30]
    assert inter.n_model_rows == sum(asked) - 1
    asked.clear()
    other = RandomForestRegressor(n_estimators=5, max_depth=3, random_state=1).fit(X, y)
    asked_b = _counted(other)
    with pytest.warns(ModellensWarning, match="TreeSHAP is not used"):
        diff = ml.compare(model, other, X.iloc[:5], background=X.iloc[:20], progress=False)
    paired = diff.diagnostics["model_rows_each"]  # answered by both models
    assert asked == [5, 1, paired] and asked_b == [1, paired]  # A's check, probes, pairs
    assert diff.diagnostics["n_model_rows"] == (sum(asked) - 1) + (sum(asked_b) - 1)
