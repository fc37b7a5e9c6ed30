"""Exact ICE and tree ALE of a log-link booster (Poisson, Gamma, Tweedie): its prediction is
``exp`` of its trees' raw output, the response ``"exp"`` of ``trees.respond``.

Oracles: the model's own ``predict`` on each grid value written into a copy of X (ICE), the
ALE of the model's rows (the same curves), and the rows the model was asked for (the
trees cost the check's rows only)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor

import modellens as ml
from modellens.effects import _tree_ale
from modellens.effects._tree_ale import EVALUATED_BY_TREES as ALE_BY_TREES
from modellens.effects._tree_ice import EVALUATED_BY_TREES as ICE_BY_TREES
from modellens.trees import RESPONSE_CHECK_ROWS


@pytest.fixture(autouse=True)
def _trees_always(monkeypatch):
    # small data: the trees serve whatever the model rows and the walk's cost
    monkeypatch.setattr("modellens.effects._tree_ice.MIN_GRID_ROWS", 0)
    monkeypatch.setattr(_tree_ale, "MIN_MODEL_ROWS", 0)
    monkeypatch.setattr(_tree_ale, "_walk_rows", lambda n, ens, axes: 0)


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    return X, np.exp(X.a / 2 + X.b / 2 + X.b * X.c / 3)


def _models():
    X, y = _data()
    made = {loss: HistGradientBoostingRegressor(loss=loss, max_iter=12, random_state=0)
            for loss in ("poisson", "gamma")}
    lgb = pytest.importorskip("lightgbm")
    made["lightgbm tweedie"] = lgb.LGBMRegressor(objective="tweedie", n_estimators=8,
                                                 num_leaves=6, verbose=-1)
    return X, {name: m.fit(X, y) for name, m in made.items()}


def _counted(model):
    asked = []
    own = model.predict
    model.predict = lambda rows: asked.append(len(rows)) or own(rows)
    return asked, own


def test_exact_ice_of_a_log_link_is_its_prediction_from_the_trees():
    X, models = _models()
    for name, model in models.items():
        asked, predict = _counted(model)
        effect = ml.pdp(model, X, ["a"], grid=6, ice=True, progress=False)["a"]
        assert effect.extra["evaluated"] == ICE_BY_TREES, (name, effect.extra)
        # the probe of the outputs (uncounted by every method), then the check's rows only
        assert asked == [1, RESPONSE_CHECK_ROWS], name
        brute = np.column_stack([predict(X.assign(a=g)) for g in effect.grid])
        assert np.ptp(brute) > 0.1  # curves that move: the check has teeth
        np.testing.assert_allclose(effect.ice, brute, rtol=1e-10, atol=0, err_msg=name)


def test_tree_ale_of_a_log_link_is_the_model_rows_ale(monkeypatch):
    X, models = _models()
    for name, model in models.items():
        asked, _ = _counted(model)
        trees = ml.ale(model, X, ["a", "b"], bins=5, progress=False)
        assert asked == [1, RESPONSE_CHECK_ROWS], name
        with monkeypatch.context() as m:
            m.setattr(_tree_ale, "MIN_MODEL_ROWS", 10 ** 12)
            ref = ml.ale(model, X, ["a", "b"], bins=5, progress=False)
        for key in ("a", "b"):
            assert trees[key].extra["evaluated"] == ALE_BY_TREES, (name, trees[key].extra)
            assert np.ptp(ref[key].values) > 1e-3
            for field in ("values", "std"):
                np.testing.assert_allclose(getattr(trees[key], field),
                                           getattr(ref[key], field), rtol=1e-10, atol=1e-12,
                                           err_msg=f"{name} {key} {field}")
