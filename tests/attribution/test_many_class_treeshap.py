"""TreeSHAP of 7-class boosters with missing values (issue 41), against independent oracles.

Interventional values are checked against the Shapley values of the raw
margin computed by brute force (every coalition, the library's own predict on
the background rows with the coalition's features taken from the row), the
path-dependent values and their interactions against shap's TreeExplainer.
shap's interventional values of a HistGradientBoosting model with missing
values are not an oracle: they miss the brute-force values by about 0.2.
XGBoost's own margins are summed in float32: its tolerance is float32's.
"""

import itertools
import math

import numpy as np
import pytest

import modellens as ml

K, D = 7, 6


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(700, D))
    X[rng.random(X.shape) < 0.08] = np.nan
    score = np.nan_to_num(X[:, :4]) @ rng.normal(size=(4, K))
    y = np.argmax(score + rng.gumbel(size=score.shape), axis=1)
    return X, y


def _fit(name, X, y):
    if name == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        model = lgb.LGBMClassifier(n_estimators=6, num_leaves=7, verbose=-1).fit(X, y)
        return model, lambda Z: model.predict(Z, raw_score=True), 1e-9
    if name == "xgboost":
        xgb = pytest.importorskip("xgboost")
        model = xgb.XGBClassifier(n_estimators=6, max_depth=3).fit(X, y)
        return model, lambda Z: model.predict(Z, output_margin=True), 1e-5
    from sklearn.ensemble import HistGradientBoostingClassifier
    model = HistGradientBoostingClassifier(max_iter=6, max_depth=3,
                                           early_stopping=False).fit(X, y)
    return model, model.decision_function, 1e-9


def _brute_force(raw, rows, background):
    """Interventional Shapley values of every class's margin, every coalition enumerated."""
    masks = np.array(list(itertools.product([False, True], repeat=D)))
    where = {m.tobytes(): j for j, m in enumerate(masks)}
    out = np.zeros((len(rows), D, K))
    for i, x in enumerate(rows):
        Z = np.where(masks[:, None, :], x, background[None]).reshape(-1, D)
        v = raw(Z).reshape(len(masks), len(background), K).mean(axis=1)
        for j, m in enumerate(masks):
            for f in np.flatnonzero(~m):
                on = m.copy()
                on[f] = True
                s = int(m.sum())
                weight = math.factorial(s) * math.factorial(D - s - 1) / math.factorial(D)
                out[i, f] += weight * (v[where[on.tobytes()]] - v[j])
    return out


@pytest.mark.parametrize("name", ["lightgbm", "hgb", "xgboost"])
def test_interventional_values_equal_the_brute_force_shapley_values(data, name):
    X, y = data
    model, raw, tol = _fit(name, X, y)
    rows, background = X[:3], X[300:320]
    assert np.isnan(rows).any() and np.isnan(background).any()
    ours = ml.shapley(model, rows, algorithm="tree", background=background, target="all",
                      progress=False).values
    np.testing.assert_allclose(ours, _brute_force(raw, rows, background), rtol=0, atol=tol)


@pytest.mark.parametrize("name", ["lightgbm", "hgb", "xgboost"])
def test_path_dependent_values_and_interactions_equal_shap(data, name):
    shap = pytest.importorskip("shap")
    X, y = data
    model, _, tol = _fit(name, X, y)
    rows = X[:4]
    attr = ml.shapley(model, rows, algorithm="tree", interactions=True, target="all",
                      progress=False)
    explainer = shap.TreeExplainer(model)
    values = np.asarray(explainer.shap_values(rows, check_additivity=False))
    pairs = np.asarray(explainer.shap_interaction_values(rows))
    assert values.shape == attr.values.shape == (4, D, K)
    np.testing.assert_allclose(attr.values, values, rtol=0, atol=tol)
    np.testing.assert_allclose(attr.interactions, pairs, rtol=0, atol=tol)


def test_few_rows_of_a_many_class_booster_give_every_thread_work(data):
    # issue 41: 100 rows of a 7-class booster of 1,400 trees ran on one thread (the
    # kernels' serial twin below 1,024 rows) and in row blocks of 64 (two unequal blocks)
    numba = pytest.importorskip("numba")
    from modellens.attribution.tree import TreePaths, task_rows
    from modellens.models import kernel_threads
    from modellens.trees import kernels, tree_ensemble

    X, y = data
    model, _, _ = _fit("lightgbm", X, y)
    paths = TreePaths(tree_ensemble(model))
    off, trees, o_lo, o_hi = paths.split
    # a group per class: its trees in order, feeding that class alone; every tree once
    assert len(off) - 1 == K
    np.testing.assert_array_equal(np.sort(trees), np.arange(len(paths.tree_out)))
    for q in range(K):
        group = trees[off[q]:off[q + 1]]
        assert len(group) and (np.diff(group) > 0).all()
        assert (paths.tree_out[group] == o_lo[q]).all() and o_hi[q] == o_lo[q] + 1
    # a few rows of a model of many nodes: the threaded kernel, however few the rows
    big = 100 * 85_400  # the benchmark's rows x nodes
    assert kernels.sized(kernels.pd_quadrature, 100, work=big) is kernels.pd_quadrature
    assert kernels.sized(kernels.leaf_values, 100, work=big) is kernels.leaf_values
    assert kernels.sized(kernels.pd_quadrature, 100, work=100 * 500) \
        is not kernels.pd_quadrature
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one thread: no split to check")
    with kernel_threads(2):
        assert task_rows(100, 64, K) == 50  # 2 equal blocks x 7 classes: 7 tasks a thread
        assert task_rows(10, 64, 1) == 5  # one output: a block per thread
        assert task_rows(1000, 64, 1) == 63  # enough blocks already: equal ones of <= 64
