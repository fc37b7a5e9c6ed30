"""TreeSHAP against woodelf (an independent pure-NumPy implementation) on the workloads it reads.

woodelf computes path-dependent and background (interventional) Shapley and
Banzhaf values, and interaction values, of XGBoost and LightGBM models from a
pseudo-Boolean form of each tree: a different algorithm from our kernels, so
agreement checks both.  The two differ only by woodelf's float32 arrays of
path weights (below 1e-6 of the values' scale here; with them in float64 the
two agree to 1e-12, the last test); a wrong weight or a mis-routed split
moves values by far more than the 1e-5 allowed here.
"""

import numpy as np
import pandas as pd
import pytest

import modellens as ml

woodelf = pytest.importorskip("woodelf")
xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")

TOL = 1e-5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(600, 6)), columns=[f"f{i}" for i in range(6)])
    y = X.f0 * X.f1 + np.sin(X.f2) + 0.3 * X.f3 + rng.normal(0, 0.1, 600)
    return X, y


@pytest.fixture(scope="module", params=["xgboost", "lightgbm"])
def model(request, data):
    X, y = data
    if request.param == "xgboost":
        return xgb.XGBRegressor(n_estimators=20, max_depth=4, random_state=0).fit(X, y)
    return lgb.LGBMRegressor(n_estimators=20, num_leaves=15, verbose=-1).fit(X, y)


def _close(ours, theirs):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape
    scale = np.abs(theirs).max()
    assert scale > 0.1  # the models are not flat: the comparison has something to compare
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=TOL * scale)


@pytest.mark.parametrize("index", ["shapley", "banzhaf"])
def test_path_dependent_values_equal_woodelf(data, model, index):
    X, _ = data
    rows = X.iloc[:200]
    explainer = woodelf.WoodelfExplainer(model)
    theirs = (explainer.shap_values if index == "shapley" else explainer.banzhaf_values)(
        rows, verbose=False)
    ours = ml.shapley(model, rows, algorithm="tree", index=index)
    assert ours.value_function == "tree_path_dependent"
    _close(ours.values, theirs)


@pytest.mark.parametrize("index", ["shapley", "banzhaf"])
def test_background_values_equal_woodelf(data, model, index):
    X, _ = data
    rows, background = X.iloc[:200], X.iloc[300:500]
    explainer = woodelf.WoodelfExplainer(model, background, feature_perturbation="interventional")
    theirs = (explainer.shap_values if index == "shapley" else explainer.banzhaf_values)(
        rows, verbose=False)
    ours = ml.shapley(model, rows, background=background, algorithm="tree", index=index)
    assert ours.value_function == "interventional"
    _close(ours.values, theirs)


def test_background_interaction_values_equal_woodelf(data, model):
    X, _ = data
    rows, background = X.iloc[:100], X.iloc[300:500]
    explainer = woodelf.WoodelfExplainer(model, background, feature_perturbation="interventional")
    theirs = explainer.shap_interaction_values(rows, verbose=False)
    ours = ml.shapley(model, rows, background=background, algorithm="tree", interactions=True)
    _close(ours.interactions, theirs)


def _woodelf_in_float64(monkeypatch):
    """woodelf with its float32 arrays of path weights in float64 (undone after the test)."""
    import importlib
    import pkgutil
    import types

    class Float64Numpy(types.ModuleType):
        def __getattr__(self, name):
            return np.float64 if name == "float32" else getattr(np, name)

    wide = Float64Numpy("numpy")
    for info in pkgutil.walk_packages(woodelf.__path__, "woodelf."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # optional parts (GPU)
            continue
        if getattr(module, "np", None) is np:
            monkeypatch.setattr(module, "np", wide)


def test_woodelf_differs_by_its_float32_weights_only(data, monkeypatch):
    """On a deep forest woodelf differs from us by ~1e-6 of the values' scale (the 1e-5 of
    bench_tree_frontier.py): its path weights are float32 arrays.  In float64 it agrees to
    1e-12 of scale, path-dependent and with a background: no other difference (an
    approximation of its own, a routing of its own) hides under the tolerance above."""
    from sklearn.ensemble import RandomForestRegressor

    X, y = data
    model = RandomForestRegressor(n_estimators=5, max_depth=12, random_state=0).fit(X, y)
    rows, background = X.iloc[:100], X.iloc[300:400]
    ours = ml.shapley(model, rows, algorithm="tree").values
    ours_bg = ml.shapley(model, rows, algorithm="tree", background=background).values
    scale = np.abs(ours).max()
    as_shipped = woodelf.WoodelfExplainer(model).shap_values(rows, verbose=False)
    assert np.abs(as_shipped - ours).max() > 1e-9 * scale  # float32 shows
    _woodelf_in_float64(monkeypatch)
    wide = woodelf.WoodelfExplainer(model).shap_values(rows, verbose=False)
    wide_bg = woodelf.WoodelfExplainer(model, background, feature_perturbation="interventional"
                                       ).shap_values(rows, verbose=False)
    np.testing.assert_allclose(wide, ours, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(wide_bg, ours_bg, rtol=0, atol=1e-12 * scale)
