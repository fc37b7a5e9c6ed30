"""Every method that can take the tree route reports the model rows the model answered,
the rows of the trees' agreement check included, whether the trees served or were refused.

The oracle is the model itself: a counting wrapper (its ``predict``, ``predict_proba`` and
``decision_function`` record the rows of each call) counts every row the model answered,
and the result's count must equal it.  The models are classifiers, whose classes tell the
outputs: the request's seam asks no row to learn them (``Model._probe``, a row no method
counts by design), so every row the wrapper sees is a row the method spent.  A refusal is
planted as in ``test_tree_agreement.py``: the parsed trees' leaves scaled, as a damaged file
would leave them.
"""

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest
import xgboost as xgb
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier

import modellens as ml
from modellens import ModellensWarning, NotATreeModelError
from modellens.data import Dataset
from modellens.engine import open_request
from modellens.trees import route

GAP = "the trees' answers differ from the model's"


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    return X, ((X.a * X.b + X.c) > 0).astype(int)


def _forest(seed=0, depth=4):
    X, y = _data()
    return RandomForestClassifier(n_estimators=5, max_depth=depth, random_state=seed).fit(X, y)


def _counted(model):
    """``model`` whose answers record the rows of each call; returns the record."""
    asked = []
    for name in ("predict", "predict_proba", "decision_function"):
        own = getattr(model, name, None)
        if own is not None:
            def counting(rows, *args, own=own, **kwargs):
                asked.append(len(rows))
                return own(rows, *args, **kwargs)
            setattr(model, name, counting)
    return asked


@pytest.fixture(params=["served", "refused"])
def verdict(request, monkeypatch):
    """Whether the trees pass their check ("served") or answer otherwise ("refused")."""
    if request.param == "refused":
        import modellens.trees._route as route_module

        real = route_module.tree_ensemble
        monkeypatch.setattr(route_module, "tree_ensemble",
                            lambda m: dataclasses.replace(real(m), value=real(m).value * 1.5))
    return request.param


@pytest.fixture
def trees_tried(monkeypatch):
    """Small data: the exact ICE and tree ALE try the trees whatever the model rows."""
    import modellens.effects._tree_ale as tree_ale
    import modellens.effects._tree_ice as tree_ice

    monkeypatch.setattr(tree_ice, "MIN_GRID_ROWS", 0)
    monkeypatch.setattr(tree_ale, "MIN_MODEL_ROWS", 0)
    monkeypatch.setattr(tree_ale, "_walk_rows", lambda n, ens, axes: 0)


def _quiet(call):
    """``call()``, the fallback's warning (or none) let through."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModellensWarning)
        return call()


@pytest.mark.parametrize("background", [None, 20], ids=["path-dependent", "interventional"])
def test_treeshap_counts_every_row_the_model_answered(verdict, background):
    X, _ = _data()
    model = _forest()
    asked = _counted(model)
    bg = None if background is None else X.iloc[:background]
    attr = _quiet(lambda: ml.shapley(model, X.iloc[:10], background=bg, progress=False))
    assert attr.method.endswith("tree") == (verdict == "served")
    assert asked[0] == 10  # the check, on the explained rows
    assert attr.diagnostics["n_model_rows"] == sum(asked)


def test_treeshap_of_a_softmax_booster_counts_its_margin_check():
    """The check asks XGBoost's margin (``output_margin=True``, a column per class) through
    a seam of its own: no row to learn its columns, every row it asks counted."""
    X, _ = _data()
    y = np.digitize(X.a + X.b, [-0.5, 0.5])
    model = xgb.XGBClassifier(n_estimators=5, max_depth=3).fit(X, y)
    asked = _counted(model)
    attr = ml.shapley(model, X.iloc[:10], algorithm="tree", progress=False)
    assert asked == [10]
    assert attr.diagnostics["n_model_rows"] == 10


def test_tree_h_statistics_count_every_row_the_model_answered(verdict):
    X, _ = _data()
    model = _forest()
    asked = _counted(model)
    inter = _quiet(lambda: ml.interactions(model, X, sample=30, random_state=0,
                                           progress=False))
    assert inter.method == ("tree" if verdict == "served" else "brute")
    assert asked[0] == 30
    assert inter.n_model_rows == sum(asked)


def test_tree_h_statistics_of_a_margin_count_its_check():
    X, y = _data()
    model = HistGradientBoostingClassifier(max_iter=5, max_depth=3).fit(X, y)
    asked = _counted(model)
    inter = ml.interactions(model, X, method="tree", sample=30, random_state=0,
                            response_method="decision_function", progress=False)
    assert asked == [30]
    assert inter.n_model_rows == 30


def test_tree_partial_dependence_counts_its_check(verdict):
    X, _ = _data()
    model = _forest()
    asked = _counted(model)
    if verdict == "refused":  # asked for explicitly: refused, no number
        with pytest.raises(NotATreeModelError, match=GAP):
            ml.pdp(model, X, ["a"], method="tree", grid=4, progress=False)
        assert asked == [len(X)]
        return
    effects = ml.pdp(model, X, ["a", "b"], method="tree", grid=4, progress=False)
    assert asked == [len(X)]
    assert all(e.extra["n_model_rows"] == sum(asked) for e in effects.values())


@pytest.mark.parametrize("features", [["a"], ["a", ("a", "b")]], ids=["1-D", "with a pair"])
def test_exact_ice_counts_every_row_the_model_answered(verdict, trees_tried, features):
    X, _ = _data()
    model = _forest()
    asked = _counted(model)
    effects = ml.pdp(model, X, features, grid=4, ice=True, progress=False)
    curve = effects["a"]
    assert asked[0] == 16  # the check, on the first rows
    served = curve.extra["evaluated"] != "model rows"
    assert served == (verdict == "served")
    if served:
        assert "beyond the 16-row agreement check" in curve.extra["evaluated"]
    assert all(e.extra["n_model_rows"] == sum(asked) for e in effects.values())


def test_tree_ale_counts_every_row_the_model_answered(verdict, trees_tried):
    X, _ = _data()
    model = _forest()
    asked = _counted(model)
    effects = ml.ale(model, X, ["a", "b"], bins=4, progress=False)
    assert asked[0] == 16
    for effect in effects.values():
        assert (effect.extra["evaluated"] != "model rows") == (verdict == "served")
        assert effect.extra["n_model_rows"] == sum(asked)


def test_compare_counts_the_rows_of_both_models(verdict):
    """Served: both models' checks; refused (model_a's check fails first): its check, then
    every planned row answered by both models."""
    X, _ = _data()
    model_a, model_b = _forest(), _forest(seed=1, depth=3)
    asked_a, asked_b = _counted(model_a), _counted(model_b)
    diff = _quiet(lambda: ml.compare(model_a, model_b, X.iloc[:5], background=X.iloc[:20],
                                     progress=False))
    assert diff.diagnostics["compare"] == ("trees" if verdict == "served" else "paired")
    assert diff.diagnostics["n_model_rows"] == sum(asked_a) + sum(asked_b)
    if verdict == "refused":
        paired = diff.diagnostics["model_rows_each"]
        assert asked_a == [5, paired] and asked_b == [paired]


def test_route_counts_its_check_on_the_request_whatever_it_finds(verdict):
    """The check's rows are the request's as soon as they are spent: no caller can leave
    them out, served or refused (the request's model, wrapped later, holds them)."""
    X, _ = _data()
    model = _forest()
    asked = _counted(model)
    request = open_request(model, X, dask="in_memory", wrap_model=False, several=True)
    answer = _quiet(lambda: route(model, request.dataset, X, method="shapley",
                                  rows=request.dataset.values[:7], request=request))
    assert bool(answer) == (verdict == "served")
    assert asked == [7] and request.n_model_rows == 7
    assert request.model.n_rows == 7  # (wrapped after the check: it counts it too)
    with pytest.raises(TypeError, match="pass request="):
        route(model, Dataset.from_data(X), X, method="shapley", rows=X.to_numpy())


def test_rows_checked_again_through_a_copy_of_the_seam_are_counted():
    """A model that refuses the rows (XGBoost, a category it never saw) is checked again on
    the rows it knows, through a copy of the check's seam: those rows are counted too."""
    from modellens.trees import margin_disagreement, tree_ensemble

    X, _ = _data()
    model = _forest()
    own, asked = model.predict_proba, []

    def refuses_once(rows):
        asked.append(len(rows))
        if len(asked) == 1:
            raise ValueError("a category the model never saw")
        return own(rows)
    model.predict_proba = refuses_once
    request = open_request(model, X, dask="in_memory", wrap_model=False)
    why, _ = margin_disagreement(model, tree_ensemble(model), request.dataset,
                                 request.dataset.values, request)
    assert why is None and asked == [len(X), len(X)]
    assert request.n_model_rows == len(X)  # (the refused call answered no row)
