"""Interventional TreeSHAP at data scale: values, Banzhaf values and interaction values
against a brute-force enumeration of the game, and the planned cost of a large background."""

import threading
from itertools import combinations
from math import factorial

import numpy as np
import pytest

import modellens as ml
from modellens import InvalidParameterError
from modellens.attribution.tree import TreePaths
from modellens.trees import tree_ensemble

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")

from sklearn.ensemble import (GradientBoostingRegressor,  # noqa: E402
                              HistGradientBoostingRegressor, RandomForestRegressor)

D = 5
POOL = 20_000


def _data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    X[:, 3] = np.round(X[:, 3], 1)  # ties and values on thresholds
    y = X[:, 0] + X[:, 1] * X[:, 2] + np.sin(3 * X[:, 3]) + 0.3 * X[:, 4] * X[:, 0]
    return X, y + 0.1 * rng.normal(size=n)


def _raw(model):
    """The library's own raw output, a function of rows."""
    if type(model).__module__.startswith("xgboost"):
        return lambda A: model.predict(A, output_margin=True).astype(np.float64)
    if type(model).__module__.startswith("lightgbm"):
        return lambda A: model.predict(A, raw_score=True)
    return model.predict


@pytest.fixture(scope="module")
def models():
    X, y = _data(3000, 0)
    return {
        "sklearn-gb": GradientBoostingRegressor(n_estimators=12, max_depth=3,
                                                random_state=0).fit(X, y),
        "sklearn-hgb": HistGradientBoostingRegressor(max_iter=12, max_depth=4,
                                                     random_state=0).fit(X, y),
        "xgboost": xgb.XGBRegressor(n_estimators=12, max_depth=4, learning_rate=0.3,
                                    random_state=0).fit(X, y),
        "lightgbm": lgb.LGBMRegressor(n_estimators=12, num_leaves=12, verbose=-1,
                                      random_state=0).fit(X, y),
    }


@pytest.fixture(scope="module")
def pool():
    return _data(POOL, 1)[0]


def _game(f, x, B):
    """v(S) = mean over background rows of f(x_S, b_rest), for every coalition S (bit mask)."""
    v = np.empty(2 ** D)
    for S in range(2 ** D):
        rows = B.copy()
        cols = [j for j in range(D) if (S >> j) & 1]
        rows[:, cols] = x[cols]
        v[S] = f(rows).mean()
    return v


def _indices(v):
    """Shapley values, Banzhaf values and SHAP interaction values of the game ``v``."""
    phi, beta = np.zeros(D), np.zeros(D)
    inter = np.zeros((D, D))
    for j in range(D):
        for S in range(2 ** D):
            if (S >> j) & 1:
                continue
            s = bin(S).count("1")
            gain = v[S | 1 << j] - v[S]
            phi[j] += factorial(s) * factorial(D - s - 1) / factorial(D) * gain
            beta[j] += gain / 2 ** (D - 1)
    for i, j in combinations(range(D), 2):
        for S in range(2 ** D):
            if (S >> i) & 1 or (S >> j) & 1:
                continue
            s = bin(S).count("1")
            delta = v[S | 1 << i | 1 << j] - v[S | 1 << i] - v[S | 1 << j] + v[S]
            w = factorial(s) * factorial(D - s - 2) / factorial(D - 1)
            inter[i, j] += 0.5 * w * delta
            inter[j, i] = inter[i, j]
    inter[np.diag_indices(D)] = phi - inter.sum(axis=1)
    return phi, beta, inter


def _tolerance(name, model, pool):
    scale = np.ptp(_raw(model)(pool[:2000]))
    # XGBoost sums its leaves in float32; the others agree to float64 rounding
    return (1e-6 if name == "xgboost" else 1e-10) * scale


@pytest.mark.parametrize("m", [1, 7, 1000, pytest.param(20_000, marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", ["sklearn-gb", "sklearn-hgb", "xgboost", "lightgbm"])
def test_background_values_equal_enumeration(models, pool, name, m):
    model = models[name]
    X, B = pool[:3], pool[-m:]
    f = _raw(model)
    tol = _tolerance(name, model, pool)
    shap_ = ml.shapley(model, X, background=B, algorithm="tree")
    banz = ml.shapley(model, X, background=B, algorithm="tree", index="banzhaf")
    assert shap_.method == "shapley-tree" and banz.method == "banzhaf-tree"
    assert banz.value_function == "interventional"
    for r in range(len(X)):
        v = _game(f, X[r], B)
        phi, beta, _ = _indices(v)
        np.testing.assert_allclose(shap_.values[r], phi, rtol=0, atol=tol)
        np.testing.assert_allclose(banz.values[r], beta, rtol=0, atol=tol)
        np.testing.assert_allclose(shap_.base_values[r], v[0], rtol=0, atol=tol)
    np.testing.assert_allclose(shap_.values.sum(1) + shap_.base_values, f(X), rtol=0,
                               atol=tol)


@pytest.mark.parametrize("m", [7, 1000])
@pytest.mark.parametrize("name", ["sklearn-gb", "xgboost", "lightgbm"])
def test_interventional_interactions_equal_enumeration_and_add_up(models, pool, name, m):
    model = models[name]
    X, B = pool[:3], pool[-m:]
    tol = _tolerance(name, model, pool)
    attr = ml.shapley(model, X, background=B, algorithm="tree", interactions=True)
    assert attr.interactions.shape == (3, D, D)
    np.testing.assert_allclose(attr.interactions.sum(axis=2), attr.values, rtol=0, atol=tol)
    np.testing.assert_allclose(attr.interactions, attr.interactions.transpose(0, 2, 1),
                               rtol=0, atol=tol)
    for r in range(len(X)):
        _, _, inter = _indices(_game(_raw(model), X[r], B))
        np.testing.assert_allclose(attr.interactions[r], inter, rtol=0, atol=tol)


def _cover_game(model, x):
    """The path-dependent game of a GradientBoostingRegressor, from sklearn's own nodes."""
    def expect(t, i, S):
        if t.children_left[i] < 0:
            return t.value[i, 0, 0]
        lc, rc = t.children_left[i], t.children_right[i]
        if t.feature[i] in S:
            return expect(t, lc if np.float32(x[t.feature[i]]) <= t.threshold[i] else rc, S)
        w = t.weighted_n_node_samples
        return (w[lc] * expect(t, lc, S) + w[rc] * expect(t, rc, S)) / w[i]

    base = model._raw_predict_init(x[None, :])[0, 0]
    return np.array([base + model.learning_rate * sum(
        expect(e.tree_, 0, {j for j in range(D) if (S >> j) & 1})
        for e in model.estimators_[:, 0]) for S in range(2 ** D)])


def test_path_dependent_banzhaf_equals_enumeration(models, pool):
    model = models["sklearn-gb"]
    X = pool[:4]
    attr = ml.shapley(model, X, algorithm="tree", index="banzhaf")
    assert attr.value_function == "tree_path_dependent"
    # both kernels: leaves read from tables (many rows), leaves computed per row (few)
    many = ml.shapley(model, pool[:300], algorithm="tree", index="banzhaf")
    for r in range(len(X)):
        v = _cover_game(model, X[r])
        phi, beta, _ = _indices(v)
        np.testing.assert_allclose(attr.values[r], beta, rtol=0, atol=1e-12)
        np.testing.assert_allclose(many.values[r], beta, rtol=0, atol=1e-12)
        np.testing.assert_allclose(attr.base_values[r], v[0], rtol=0, atol=1e-12)
    shap_ = ml.shapley(model, X, algorithm="tree")
    np.testing.assert_allclose(shap_.values[0], _indices(_cover_game(model, X[0]))[0],
                               rtol=0, atol=1e-12)


def test_banzhaf_needs_treeshap_and_no_interactions(models, pool):
    model = models["sklearn-gb"]
    with pytest.raises(InvalidParameterError, match="TreeSHAP only"):
        ml.shapley(model, pool[:3], background=pool[:10], algorithm="exact", index="banzhaf")
    with pytest.raises(InvalidParameterError, match="index="):
        ml.shapley(model, pool[:3], algorithm="tree", index="banzhaf", interactions=True)
    with pytest.raises(InvalidParameterError, match="index"):
        ml.shapley(model, pool[:3], algorithm="tree", index="owen")


def test_repeated_background_rows_count_once_each(models, pool):
    """The background enters as counts: a background repeated 50 times gives the same values."""
    model = models["lightgbm"]
    X, B = pool[:20], pool[-40:]
    once = ml.shapley(model, X, background=B, algorithm="tree")
    many = ml.shapley(model, X, background=np.tile(B, (50, 1)), algorithm="tree")
    np.testing.assert_allclose(many.values, once.values, rtol=0, atol=1e-12)


def test_large_background_cost_is_planned_n_plus_m_not_n_times_m(models, pool):
    """The work of 2,000 rows against 100,000 background rows, counted from the plan."""
    ens = tree_ensemble(models["xgboost"])
    paths = TreePaths(ens)
    n_nodes = len(ens.left)

    def work(n, m):
        plan = paths.plan(n, m, game="interventional")
        return plan, sum(plan[k] for k in ("row_node_visits", "background_node_visits",
                                           "leaf_lookups", "leaf_games", "sparse_pairs"))

    plan, big = work(2000, 100_000)
    assert plan["background_node_visits"] == 100_000 * n_nodes
    assert plan["row_node_visits"] == 2000 * n_nodes
    assert plan["sparse_pairs"] == 0
    # the tables do not grow with the background or the rows (count tables: one per thread)
    small_plan, _ = work(2000, 1000)
    assert plan["table_entries"] == small_plan["table_entries"]
    assert plan["count_entries"] <= 2 * (2 ** paths.p).sum() * plan["n_parts"]
    # additive in n and m: the cross term n * m is absent
    cross = work(4000, 200_000)[1] - work(4000, 100_000)[1] - work(2000, 200_000)[1] + big
    assert cross == 0
    assert big < 2000 * 100_000


@pytest.mark.slow
def test_a_100000_row_background_equals_its_distinct_rows_weighted(models, pool):
    """100,000 background rows made of 500 distinct rows: equal to those rows' enumeration."""
    model = models["sklearn-hgb"]
    X, distinct = pool[:3], pool[-500:]
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 500, size=100_000)
    attr = ml.shapley(model, X, background=distinct[idx], algorithm="tree")
    reps = np.bincount(idx, minlength=500)
    for r in range(len(X)):
        v = np.empty(2 ** D)
        for S in range(2 ** D):
            rows = distinct.copy()
            cols = [j for j in range(D) if (S >> j) & 1]
            rows[:, cols] = X[r, cols]
            v[S] = np.average(model.predict(rows), weights=reps)
        np.testing.assert_allclose(attr.values[r], _indices(v)[0], rtol=0,
                                   atol=1e-10 * np.ptp(model.predict(pool[:2000])))


def test_deep_leaves_count_distinct_background_masks():
    """Leaves of more features than a dense count table allows take the sparse path."""
    from modellens.attribution import tree as T
    X, y = _data(600, 2)
    model = RandomForestRegressor(n_estimators=3, max_depth=10, random_state=0).fit(X, y)
    Xe, B = X[:6], X[300:340]
    dense = ml.shapley(model, Xe, background=B, algorithm="tree", interactions=True)
    old = T.DENSE_MAX_FEATURES
    T.DENSE_MAX_FEATURES = 2
    try:
        paths = TreePaths(tree_ensemble(model))
        assert paths.plan(6, 40, game="interventional")["big"].any()
        sparse = ml.shapley(model, Xe, background=B, algorithm="tree", interactions=True)
    finally:
        T.DENSE_MAX_FEATURES = old
    np.testing.assert_allclose(sparse.values, dense.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sparse.interactions, dense.interactions, rtol=0, atol=1e-12)
    for r in range(2):
        phi, _, inter = _indices(_game(model.predict, Xe[r], B))
        np.testing.assert_allclose(dense.values[r], phi, rtol=0, atol=1e-10 * np.ptp(y))
        np.testing.assert_allclose(dense.interactions[r], inter, rtol=0, atol=1e-10 * np.ptp(y))


def test_two_threads_explaining_at_once_keep_their_thread_counts(models, pool):
    """numba's thread count is thread-local: n_jobs in one thread does not leak to another."""
    import numba
    model = models["xgboost"]
    X, B = pool[:200], pool[-300:]
    want = ml.shapley(model, X, background=B, algorithm="tree").values
    before = numba.get_num_threads()
    results, errors = {}, []

    def work(k, n_jobs):
        try:
            for _ in range(3):
                a = ml.shapley(model, X, background=B, algorithm="tree", n_jobs=n_jobs)
                results.setdefault(k, []).append((a.values, numba.get_num_threads()))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k, 1 + k % 2)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(2):
        for values, count in results[k]:
            np.testing.assert_array_equal(values, want)
            assert count == before  # restored in the calling thread
    assert numba.get_num_threads() == before
