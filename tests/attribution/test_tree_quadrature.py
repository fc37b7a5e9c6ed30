"""Path-dependent TreeSHAP by quadrature against brute-force enumeration of the game.

The enumeration here shares nothing with the kernels but the trees' arrays
and the rule that sends a row left: for every coalition ``S`` at once it sends
the weight of a row down each tree (a split on a feature of ``S`` follows the
row, any other split shares the weight by the children's covers), in
``np.longdouble``, and then sums Shapley, Banzhaf and interaction weights over
all subsets.  Depths 2 to 24, every library the trees come from, native
categorical splits, missing values, features split on many times per path.
"""

import math

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.attribution.tree import TreePaths
from modellens.data import Dataset
from modellens.trees import kernels as K
from modellens.trees import tree_ensemble

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")
shap = pytest.importorskip("shap")

from sklearn.ensemble import (GradientBoostingRegressor,  # noqa: E402
                              HistGradientBoostingRegressor, RandomForestRegressor)
from sklearn.tree import DecisionTreeRegressor  # noqa: E402

LD = np.longdouble


def _goes_left(ens, node, x):
    f = ens.feature[node]
    # the kernels' own split rule, in Python
    from modellens.trees._traverse import _goes_left as rule

    return bool(rule.py_func(x[f], ens.threshold[node], ens.default_left[node],
                             ens.missing[node], ens.cat_left))


def _coalition_values(ens, x):
    """``v(S)`` of the path-dependent game for every ``S`` (bit ``j``: feature ``j``)."""
    d = ens.n_features
    masks = np.arange(2 ** d)
    member = ((masks[:, None] >> np.arange(d)) & 1).astype(bool)
    total = np.full(2 ** d, LD(ens.base[0]))
    cover = ens.cover.astype(LD)
    for t in range(ens.n_trees):
        stack = [(ens.roots[t], np.ones(2 ** d, dtype=LD))]
        while stack:
            node, w = stack.pop()
            lc, rc = ens.left[node], ens.right[node]
            if lc < 0:
                total += w * LD(ens.value[node, 0])
                continue
            inside = member[:, ens.feature[node]]
            go = _goes_left(ens, node, x)
            share = cover[lc] / cover[node] if cover[node] > 0 else LD(0)
            stack.append((lc, w * np.where(inside, LD(go), share)))
            stack.append((rc, w * np.where(inside, LD(not go), 1 - share
                                            if cover[node] > 0 else LD(0))))
    return total


def _enumerate(ens, x):
    """Exact Shapley values, Banzhaf values and SHAP interaction values of row ``x``."""
    d = ens.n_features
    v = _coalition_values(ens, x)
    size = np.array([bin(m).count("1") for m in range(2 ** d)])
    fact = [LD(math.factorial(k)) for k in range(d + 1)]
    phi, beta = np.zeros(d, dtype=LD), np.zeros(d, dtype=LD)
    inter = np.zeros((d, d), dtype=LD)
    for j in range(d):
        rest = np.array([m for m in range(2 ** d) if not m >> j & 1])
        gain = v[rest | 1 << j] - v[rest]
        w = np.array([fact[s] * fact[d - s - 1] / fact[d] for s in size[rest]])
        phi[j] = np.sum(w * gain)
        beta[j] = np.sum(gain) / LD(2 ** (d - 1))
        for k in range(j + 1, d):
            sub = rest[(rest >> k & 1) == 0]
            grad = v[sub | 1 << j | 1 << k] - v[sub | 1 << j] - v[sub | 1 << k] + v[sub]
            wk = np.array([fact[s] * fact[d - s - 2] / fact[d - 1] for s in size[sub]])
            inter[j, k] = inter[k, j] = np.sum(wk * grad) / 2
    inter[np.arange(d), np.arange(d)] = phi - inter.sum(axis=1)
    return phi, beta, inter, v[0]


def _check(ens, X, *, tol=1e-9):
    """Every row's values, Banzhaf values and interaction values equal the enumeration."""
    paths = TreePaths(ens)
    Xc = np.ascontiguousarray(ens.cast(X))
    values, inter = paths.path_dependent(Xc, pairs=True)
    banzhaf, _ = paths.path_dependent(Xc, index="banzhaf")
    raw = ens.predict_raw(Xc)[:, 0]
    scale = max(np.abs(raw).max(), 1.0)
    errors = []
    for i, x in enumerate(Xc):
        phi, beta, I, empty = _enumerate(ens, x)
        np.testing.assert_allclose(values[i], phi.astype(float), rtol=0, atol=tol * scale)
        np.testing.assert_allclose(banzhaf[i], beta.astype(float), rtol=0, atol=tol * scale)
        np.testing.assert_allclose(inter[i], I.astype(float), rtol=0, atol=tol * scale)
        assert abs(paths.expected_value() - float(empty)) <= tol * scale
        errors.append(np.abs(values[i] - phi).max())
    return values, inter, np.array(errors, dtype=float), scale


def _data(n=500, d=5, seed=0, nan=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, max(d, 5)))
    X[:, 3] = np.round(X[:, 3], 1)
    y = X[:, 0] + X[:, 1] * X[:, 2] + np.sin(3 * X[:, 3]) + 0.3 * rng.normal(size=n)
    if nan:
        X[rng.random(n) < 0.15, 1] = np.nan
        X[rng.random(n) < 0.1, 4] = np.nan
    return X[:, :d], y


@pytest.mark.parametrize("depth", [2, 5, 9, 16, 24])
def test_decision_tree_equals_enumeration_at_every_depth(depth):
    X, y = _data(n=1500)
    model = DecisionTreeRegressor(max_depth=depth, random_state=0).fit(X, y)
    assert model.get_depth() == depth
    _check(tree_ensemble(model), X[:6])


@pytest.mark.parametrize("name", ["rf", "gb", "hgb", "xgb", "lgb"])
def test_ensembles_with_missing_values_equal_enumeration(name):
    X, y = _data(nan=name not in ("gb",))
    if name == "gb":
        model = GradientBoostingRegressor(n_estimators=6, max_depth=4, random_state=0)
    elif name == "rf":
        model = RandomForestRegressor(n_estimators=4, max_depth=12, random_state=0)
    elif name == "hgb":
        model = HistGradientBoostingRegressor(max_iter=6, max_depth=6, random_state=0)
    elif name == "xgb":
        model = xgb.XGBRegressor(n_estimators=6, max_depth=10, random_state=0)
    else:
        model = lgb.LGBMRegressor(n_estimators=6, num_leaves=40, min_child_samples=3,
                                  verbose=-1, random_state=0)
    model.fit(X, y)
    ens = tree_ensemble(model)
    # the enumeration routes rows by the same rule: that rule is the model's own
    np.testing.assert_allclose(ens.predict_raw(ens.cast(X))[:, 0],
                               np.ravel(model.predict(X)),
                               rtol=1e-5, atol=1e-5)
    rows = np.vstack([X[:5], np.full((1, X.shape[1]), np.nan)])
    _check(ens, rows)


def _frames(n=600, seed=0):
    """Two categorical columns (8 and 3 levels, some missing) between two numeric ones."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 8, n), rng.integers(0, 3, n)
    num = rng.normal(size=(n, 2))
    y = num[:, 0] + np.array([1, -1, 2, 0, .5, -2, 3, 1.5])[codes[0]] + (codes[1] == 1) * num[:, 1]
    X = pd.DataFrame({"a": np.where(rng.random(n) < 0.05, np.nan, num[:, 0]),
                      "c1": pd.Categorical.from_codes(np.where(rng.random(n) < 0.05, -1,
                                                               codes[0]), list("pqrstuvw")),
                      "b": num[:, 1],
                      "c2": pd.Categorical.from_codes(codes[1], ["x", "y", "z"])})
    return X, y + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("name", ["xgb", "lgb", "hgb"])
def test_native_categorical_splits_equal_enumeration(name):
    X, y = _frames()
    if name == "xgb":
        model = xgb.XGBRegressor(n_estimators=5, max_depth=6, enable_categorical=True,
                                 max_cat_to_onehot=1, tree_method="hist", random_state=0)
    elif name == "lgb":
        model = lgb.LGBMRegressor(n_estimators=5, num_leaves=20, min_child_samples=5,
                                  min_data_per_group=5, cat_smooth=1, verbose=-1,
                                  random_state=0)
    else:
        model = HistGradientBoostingRegressor(max_iter=5, max_depth=6,
                                              categorical_features="from_dtype",
                                              random_state=0)
    model.fit(X, y)
    ens = tree_ensemble(model)
    assert (ens.missing == 3).any()  # the trees hold set-membership splits
    ds = Dataset.from_data(X.iloc[:6])
    coded = ens.encode(ds.values, ds.columns)
    _check(ens, coded)


def test_deep_tree_many_features_per_path_and_many_paths():
    """A depth-22 tree on 3 features (each split on 7 times per path on average) and a
    forest of such trees: a feature's merged factor replaced at each of its splits."""
    X, y = _data(n=4000, d=3)
    y = y + 50 * np.sin(7 * X[:, 0]) * np.cos(5 * X[:, 1])
    tree = DecisionTreeRegressor(max_depth=22, min_samples_leaf=1, random_state=0).fit(X, y)
    ens = tree_ensemble(tree)
    _check(ens, X[:8])
    forest = RandomForestRegressor(n_estimators=30, max_depth=20, random_state=0).fit(X, y)
    _check(tree_ensemble(forest), X[:4])


def test_more_features_on_a_path_than_eight_nodes_integrate():
    """17+ distinct features on a path need more than 8 Gauss-Legendre nodes; the count
    follows the deepest path, so the values stay exact (here against shap, d = 30)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 30))
    y = X.sum(axis=1)
    model = DecisionTreeRegressor(max_depth=24, random_state=0).fit(X, y)
    paths = TreePaths(tree_ensemble(model))
    assert paths.p_max >= 17 and len(K.gauss_nodes(paths.p_max)[0]) >= 9
    values, _ = paths.path_dependent(np.ascontiguousarray(X[:50]))
    theirs = shap.TreeExplainer(model).shap_values(X[:50])
    np.testing.assert_allclose(values, theirs, rtol=0, atol=1e-9 * np.ptp(y))
    # with too few nodes the integral is not exact: the node count matters
    t, w = K.gauss_nodes(8)
    out, none = np.zeros((50, 30, 1)), np.zeros((0, 0, 0, 0))
    p = paths
    K.pd_quadrature(np.ascontiguousarray(X[:50].T), p.nodes, p.lay, t, w, 64, out, none,
                    p.split)
    assert np.abs(out[..., 0] - theirs).max() > 1e-9 * np.ptp(y)


def test_public_values_and_interactions_match_the_libraries():
    """ml.shapley(algorithm='tree') against XGBoost's pred_contribs / pred_interactions
    and LightGBM's pred_contrib (float32 thresholds: 1e-5 of scale)."""
    X, y = _data(n=800, d=6, nan=True)
    model = xgb.XGBRegressor(n_estimators=30, max_depth=7, random_state=0).fit(X, y)
    res = ml.shapley(model, X[:40], algorithm="tree", interactions=True)
    booster = model.get_booster()
    contribs = booster.predict(xgb.DMatrix(X[:40]), pred_contribs=True)
    inter = booster.predict(xgb.DMatrix(X[:40]), pred_interactions=True)
    scale = np.ptp(y)
    np.testing.assert_allclose(res.values, contribs[:, :-1], atol=1e-5 * scale)
    np.testing.assert_allclose(res.interactions, inter[:, :-1, :-1], atol=1e-5 * scale)
    lmodel = lgb.LGBMRegressor(n_estimators=20, num_leaves=63, min_child_samples=3,
                               verbose=-1, random_state=0).fit(X, y)
    res = ml.shapley(lmodel, X[:40], algorithm="tree")
    np.testing.assert_allclose(res.values, lmodel.predict(X[:40], pred_contrib=True)[:, :-1],
                               atol=1e-5 * scale)


def test_deep_sums_keep_their_digits():
    """A depth-24 tree and a depth-20 forest with leaf values of 1e6 and more on top of a
    mean of 1e6 (values and interaction values sum many large terms that cancel): they
    equal the long-double enumeration to 1e-14 of the output's scale."""
    X, y = _data(n=6000, d=6)
    y = 1e6 + 1e6 * np.sin(9 * X[:, 0]) * X[:, 1] + 1e3 * X[:, 2]
    tree = DecisionTreeRegressor(max_depth=24, random_state=0).fit(X, y)
    _check(tree_ensemble(tree), X[:6], tol=1e-14)
    forest = RandomForestRegressor(n_estimators=10, max_depth=20, random_state=0).fit(X, y)
    _check(tree_ensemble(forest), X[:3], tol=1e-14)
