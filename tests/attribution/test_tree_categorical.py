"""Native categorical splits of XGBoost (partition and one-hot) and LightGBM (bitsets):
routing, TreeSHAP in both games and tree PD, with unseen and missing categories."""

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.data import Dataset
from modellens.trees import tree_ensemble

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")

LEVELS = list("pqrstuvw")


def _frames(seed=0, n=600):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n),
                      "c1": pd.Categorical(rng.choice(LEVELS, n)),
                      "b": rng.normal(size=n),
                      "c2": pd.Categorical(rng.choice(["x", "y", "z"], n))})
    effect = X["c1"].map(dict(zip(LEVELS, [1, -1, 2, 0, .5, -2, 3, 1.5]))).astype(float)
    y = X["a"] + effect + (X["c2"] == "y") * X["b"] + 0.1 * rng.normal(size=n)
    X.loc[rng.random(n) < 0.05, "c1"] = np.nan  # missing categories in training
    # rows to explain: an unseen category, missing categories, a missing number
    T = X.copy()
    T["c1"] = T["c1"].cat.add_categories(["zz"])
    T.loc[0, "c1"] = "zz"
    T.loc[1, "c2"] = np.nan
    T.loc[2, "c1"] = np.nan
    T.loc[3, "a"] = np.nan
    return X, y, T


@pytest.fixture(scope="module")
def models():
    X, y, T = _frames()
    kw = dict(n_estimators=12, max_depth=4, enable_categorical=True, tree_method="hist",
              random_state=0)
    return T, {
        "xgb-partition": xgb.XGBRegressor(max_cat_to_onehot=1, **kw).fit(X, y),
        "xgb-onehot": xgb.XGBRegressor(max_cat_to_onehot=16, **kw).fit(X, y),
        "lgb": lgb.LGBMRegressor(n_estimators=12, num_leaves=12, min_child_samples=5,
                                 min_data_per_group=5, cat_smooth=1, verbose=-1,
                                 random_state=0).fit(X, y),
    }


def _library(model, T):
    """The library's own raw output and pred_contribs (with the bias column last).

    XGBoost re-codes a frame and refuses a category it never saw: it gets the
    frame's codes (the unseen one a code past the known ones), its own rule
    for codes."""
    if isinstance(model, xgb.XGBModel):
        codes = np.column_stack([T["a"], T["c1"].cat.codes, T["b"], T["c2"].cat.codes])
        codes = np.where(codes == -1, np.nan, codes).astype(float)
        codes[np.isnan(T["a"]), 0] = np.nan
        dm = xgb.DMatrix(codes, feature_types=["q", "c", "q", "c"],
                         feature_names=list(T.columns), enable_categorical=True)
        booster = model.get_booster()
        return (booster.predict(dm, output_margin=True).astype(float),
                booster.predict(dm, pred_contribs=True).astype(float))
    return model.predict(T, raw_score=True), model.predict(T, pred_contrib=True)


def _split_kinds(model):
    ens = tree_ensemble(model)
    return set(np.unique(ens.missing[ens.left >= 0]).tolist())


@pytest.mark.parametrize("name", ["xgb-partition", "xgb-onehot", "lgb"])
def test_categorical_routing_values_and_pd(models, name):
    T, all_models = models
    model = all_models[name]
    assert 3 in _split_kinds(model)  # the model did split on categories
    ens = tree_ensemble(model)
    assert [list(ens.categories[f]) for f in (1, 3)] == [LEVELS, ["x", "y", "z"]]
    raw, contribs = _library(model, T)
    ds = Dataset.from_data(T)
    ours = ens.predict_raw(ens.encode(ds.values, ds.columns))[:, 0]
    tol = 1e-6 if name.startswith("xgb") else 1e-12
    scale = np.ptp(raw)
    np.testing.assert_allclose(ours, raw, rtol=0, atol=tol * scale)
    # path-dependent values equal the library's own contributions, rows 0-3 included
    attr = ml.shapley(model, T.iloc[:60], algorithm="tree")
    assert attr.method == "shapley-tree"
    np.testing.assert_allclose(attr.values, contribs[:60, :-1], rtol=0, atol=tol * scale)
    np.testing.assert_allclose(attr.base_values, contribs[:60, -1], rtol=0, atol=tol * scale)
    # interventional values equal exact enumeration of the raw output on the same codes
    fg, bg = T.iloc[:15], T.iloc[100:140]
    tree = ml.shapley(model, fg, background=bg, algorithm="tree")
    coded = ens.encode(ds.values, ds.columns)
    exact = ml.shapley(lambda A: ens.predict_raw(A)[:, 0], coded[:15],
                       background=coded[100:140], algorithm="exact")
    np.testing.assert_allclose(tree.values, exact.values, rtol=0, atol=1e-10 * scale)
    # and the library's raw output is what the exact game is made of
    np.testing.assert_allclose(tree.values.sum(1) + tree.base_values, raw[:15], rtol=0,
                               atol=tol * scale)
    # tree partial dependence reads categorical splits too
    pdc = ml.pdp(model, T, ["c1"], method="tree")
    assert list(pdc[0].grid)[:8] == LEVELS
    # PD of one categorical feature: the cover-weighted mean of the leaves a level reaches
    np.testing.assert_allclose(pdc[0].values[:8], [_cover_pd(ens, 1, LEVELS.index(c))
                                                   for c in LEVELS], rtol=0, atol=1e-10)


def _cover_pd(ens, f, code):
    """Partial dependence by the cover recursion, in plain Python, from the parsed arrays."""
    total = ens.base[0]
    for k in range(ens.n_trees):
        stack = [(ens.roots[k], 1.0)]
        while stack:
            node, w = stack.pop()
            if ens.left[node] < 0:
                total += w * ens.value[node, 0]
                continue
            if ens.feature[node] == f:
                left = ens.cat_left[int(ens.threshold[node]), code] == 1 \
                    if ens.missing[node] == 3 else code <= ens.threshold[node]
                stack.append((ens.left[node] if left else ens.right[node], w))
            else:
                for c in (ens.left[node], ens.right[node]):
                    stack.append((c, w * ens.cover[c] / ens.cover[node]))
    return total


def test_lightgbm_sends_missing_categories_right_when_code_0_is_listed():
    # trained without missing values, LightGBM's category splits have missing type None;
    # one that lists code 0 ("p", the level of the large effect) sent a missing or unseen
    # category left as code 0, where LightGBM sends it right: TreeSHAP's values did not add
    # up to the prediction (off by about 10) and differed from LightGBM's own
    rng = np.random.default_rng(5)
    n = 500
    X = pd.DataFrame({"c": pd.Categorical(rng.choice(["p", "q", "r"], n)),
                      "a": rng.normal(size=n)})
    y = np.where(X["c"] == "p", 10.0, 0.0) + X["a"] + 0.1 * rng.normal(size=n)
    model = lgb.LGBMRegressor(n_estimators=10, min_child_samples=5, verbose=-1,
                              random_state=0).fit(X, y)
    dump = model.booster_.dump_model()["tree_info"]
    splits = []

    def walk(node):
        if "split_feature" in node:
            if node["decision_type"] == "==":
                splits.append((node["missing_type"], node["threshold"].split("||")))
            walk(node["left_child"])
            walk(node["right_child"])
    for tree in dump:
        walk(tree["tree_structure"])
    assert any(kind == "None" and "0" in codes for kind, codes in splits)
    T = X.iloc[:40].copy()
    T["c"] = T["c"].cat.add_categories(["s"])
    T.loc[:3, "c"] = np.nan
    T.loc[4:7, "c"] = "s"  # a level LightGBM never saw
    raw, contribs = _library(model, T)
    assert raw[:8].max() + 4 < raw[np.asarray(T["c"] == "p")].min()  # they go right, not "p"
    attr = ml.shapley(model, T, algorithm="tree")
    np.testing.assert_allclose(attr.values, contribs[:, :-1], rtol=0, atol=1e-10)
    np.testing.assert_allclose(attr.values.sum(1) + attr.base_values, raw, rtol=0, atol=1e-10)
    tree = ml.shapley(model, T.iloc[:10], background=T.iloc[10:40], algorithm="tree")
    np.testing.assert_allclose(tree.values.sum(1) + tree.base_values, raw[:10], rtol=0,
                               atol=1e-10)
    # tree PD at the unseen level: LightGBM's own answer (its "q" / "r" side), averaged
    pdc = ml.pdp(model, T, ["c"], grid=["s"], method="tree")["c"]
    brute = ml.pdp(model, T, ["c"], grid=["s"])["c"]
    assert abs(pdc.values[0] - brute.values[0]) < 0.5  # tree PD averages the training data
    assert pdc.values[0] < 5
