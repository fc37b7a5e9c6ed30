"""Raw XGBoost and LightGBM Boosters through every method that calls the model."""

import numpy as np
import pandas as pd
import pytest

import modellens as ml

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")

D = 4


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, D)), columns=["age", "bmi", "bp", "s1"])
    y = X["age"] + X["bmi"] * X["bp"] + 0.1 * rng.normal(size=300)
    return X, y


def _boosters(X, y):
    """(raw booster, its sklearn wrapper: the same trees) for each library and task."""
    out = {}
    for task, target in (("reg", y), ("bin", (y > y.median()).astype(int))):
        xw = (xgb.XGBRegressor if task == "reg" else xgb.XGBClassifier)(
            n_estimators=10, max_depth=3, random_state=0).fit(X, target)
        lw = (lgb.LGBMRegressor if task == "reg" else lgb.LGBMClassifier)(
            n_estimators=10, num_leaves=8, verbose=-1, random_state=0).fit(X, target)
        out[f"xgb-{task}"] = (xw.get_booster(), xw)
        out[f"lgb-{task}"] = (lw.booster_, lw)
    return out


@pytest.fixture(scope="module")
def boosters(data):
    return _boosters(*data)


def _predict(wrapper, X):
    """What the raw booster's predict returns: the wrapper's prediction or P(y = 1)."""
    if hasattr(wrapper, "predict_proba"):
        return wrapper.predict_proba(X)[:, 1]
    return wrapper.predict(X)


@pytest.mark.parametrize("name", ["xgb-reg", "xgb-bin", "lgb-reg", "lgb-bin"])
@pytest.mark.parametrize("as_array", [False, True])
def test_pd_ale_exact_shapley_and_lime_take_a_raw_booster(boosters, data, name, as_array):
    X, _ = data
    booster, wrapper = boosters[name]
    Xin = X.to_numpy() if as_array else X
    f = lambda A: _predict(wrapper, pd.DataFrame(np.asarray(A), columns=X.columns))  # noqa

    pd_b = ml.pdp(booster, Xin, [0, 1], grid=5)
    pd_f = ml.pdp(f, X.to_numpy(), [0, 1], grid=5)
    for a, b in zip(pd_b.values(), pd_f.values()):
        np.testing.assert_allclose(a.values, b.values, rtol=0, atol=1e-6)

    ale_b = ml.ale(booster, Xin, [1], bins=5)
    ale_f = ml.ale(f, X.to_numpy(), [1], bins=5)
    np.testing.assert_allclose(ale_b[0].values, ale_f[0].values, rtol=0, atol=1e-6)

    sh_b = ml.shapley(booster, Xin[:3], background=Xin[:20], algorithm="exact")
    sh_f = ml.shapley(f, X.to_numpy()[:3], background=X.to_numpy()[:20], algorithm="exact")
    np.testing.assert_allclose(sh_b.values, sh_f.values, rtol=0, atol=1e-6)
    if not as_array:
        assert sh_b.feature_names == list(X.columns)

    li_b = ml.lime(booster, Xin[:2], training_data=Xin, num_samples=300, random_state=0)
    li_f = ml.lime(f, X.to_numpy()[:2], training_data=X.to_numpy(), num_samples=300,
                   random_state=0)
    np.testing.assert_allclose(li_b.values, li_f.values, rtol=0, atol=1e-6)


def test_raw_booster_treeshap_agrees_with_its_wrapper(boosters, data):
    X, _ = data
    for name in ("xgb-reg", "lgb-reg"):
        booster, wrapper = boosters[name]
        a = ml.shapley(booster, X[:5], algorithm="tree")
        b = ml.shapley(wrapper, X[:5], algorithm="tree")
        np.testing.assert_allclose(a.values, b.values, rtol=0, atol=1e-12)
