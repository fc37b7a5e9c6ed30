"""ml.compare of two tree ensembles: exact Shapley values of f_B - f_A from one traversal.

Oracles: brute-force enumeration of the interventional game of f_B - f_A (written
here, from the models' own predict), TreeSHAP(B) - TreeSHAP(A), additivity.
"""

from itertools import combinations
from math import factorial

import numpy as np
import pytest

import modellens as ml
from modellens.attribution.compare import difference_ensemble
from modellens.attribution._difference import float64_thresholds
from modellens.trees import tree_ensemble

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")
from sklearn.ensemble import GradientBoostingRegressor, RandomForestClassifier  # noqa: E402
from sklearn.ensemble import HistGradientBoostingRegressor  # noqa: E402


def _data(d=4, n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X[:, 0] * X[:, 1] + X[:, 2] + 0.1 * rng.normal(size=n)
    return X, y


def _models(X, y):
    return {
        "sklearn": GradientBoostingRegressor(n_estimators=15, max_depth=3, random_state=0).fit(X, y),
        "xgboost": xgb.XGBRegressor(n_estimators=15, max_depth=3, random_state=0).fit(
            X, y + 0.5 * X[:, 3]),
        "lightgbm": lgb.LGBMRegressor(n_estimators=15, num_leaves=8, verbose=-1,
                                      random_state=0).fit(X, y - 0.5 * X[:, 3]),
    }


def brute_force_shapley(f, x, background):
    """Interventional Shapley values of ``f`` at ``x`` by enumerating every coalition
    (every coalition's rows in one call of ``f``)."""
    d, m = len(x), len(background)
    coalitions = [S for k in range(d + 1) for S in combinations(range(d), k)]
    rows = np.tile(background, (len(coalitions), 1))
    for c, S in enumerate(coalitions):
        rows[c * m:(c + 1) * m, list(S)] = x[list(S)]
    worth = dict(zip(coalitions, f(rows).reshape(len(coalitions), m).mean(axis=1)))
    phi = np.zeros(d)
    for j in range(d):
        others = [i for i in range(d) if i != j]
        for k in range(d):
            w = factorial(k) * factorial(d - k - 1) / factorial(d)
            for S in combinations(others, k):
                phi[j] += w * (worth[tuple(sorted(S + (j,)))] - worth[S])
    return phi


@pytest.fixture(scope="module")
def fitted():
    X, y = _data()
    return X, _models(X, y)


@pytest.mark.parametrize("a, b", [("sklearn", "xgboost"), ("xgboost", "lightgbm"),
                                  ("lightgbm", "sklearn")])
def test_equals_brute_force_of_the_difference(fitted, a, b):
    X, models = fitted
    A, B = models[a], models[b]
    bg = X[:30]
    diff = ml.compare(A, B, X[:4], background=bg)
    assert diff.diagnostics["compare"] == "trees"
    for i in range(4):
        want = brute_force_shapley(lambda R: B.predict(R).astype(float) - A.predict(R), X[i], bg)
        # xgboost predicts in float32: its rounding is the tolerance
        np.testing.assert_allclose(diff.values[i], want, atol=2e-5)


@pytest.mark.parametrize("background", [None, 40])
@pytest.mark.parametrize("a, b", [("sklearn", "xgboost"), ("xgboost", "lightgbm"),
                                  ("lightgbm", "sklearn")])
def test_equals_treeshap_b_minus_treeshap_a(fitted, a, b, background):
    X, models = fitted
    bg = None if background is None else X[-background:]
    diff = ml.compare(models[a], models[b], X[:25], background=bg)
    ta = ml.shapley(models[a], X[:25], background=bg, algorithm="tree")
    tb = ml.shapley(models[b], X[:25], background=bg, algorithm="tree")
    np.testing.assert_allclose(diff.values, tb.values - ta.values, rtol=0, atol=1e-9)
    np.testing.assert_allclose(diff.base_values, tb.base_values - ta.base_values, atol=1e-9)
    # additivity: each row's values add up to its difference of raw outputs
    np.testing.assert_allclose(diff.values.sum(axis=1) + diff.base_values,
                               tb.prediction - ta.prediction, atol=1e-9)
    assert diff.value_function == ("tree_path_dependent" if bg is None else "interventional")


def test_every_output_of_two_forests():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    y = np.digitize(X[:, 0] + X[:, 1], [-0.5, 0.5])
    A = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    B = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=1).fit(X, y)
    diff = ml.compare(A, B, X[:10], algorithm="tree")
    ta, tb = (ml.shapley(m, X[:10], algorithm="tree") for m in (A, B))
    assert diff.values.shape == (10, 3, 3) and len(diff.outputs) == 3
    np.testing.assert_allclose(diff.values, tb.values - ta.values, atol=1e-12)
    one = ml.compare(A, B, X[:10], algorithm="tree", target=2)
    np.testing.assert_allclose(one.values, diff.for_output(2).values, atol=1e-12)


def test_mixed_libraries_read_every_row_as_each_library_does():
    """Rows on and next to every threshold: the difference's raw output is B's minus A's."""
    X, y = _data(d=3, n=400, seed=2)
    sk = HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(X, y)
    lg = lgb.LGBMRegressor(n_estimators=10, num_leaves=6, verbose=-1).fit(X, y)
    xg = xgb.XGBRegressor(n_estimators=10, max_depth=3).fit(X, y)
    for A, B in ((sk, lg), (lg, xg)):  # float32 readers with LightGBM's, both ways
        ea, eb = tree_ensemble(A), tree_ensemble(B)
        ens = difference_ensemble(ea, eb)
        inner = np.concatenate([ea.threshold[ea.left >= 0], eb.threshold[eb.left >= 0]])
        near = np.concatenate([inner, np.nextafter(inner, np.inf), np.nextafter(inner, -np.inf),
                               inner.astype(np.float32).astype(float)])
        rows = np.tile(X[:len(near) % 50 + 50][:1], (len(near), 1))
        for j in range(3):
            rows[:, j] = near
            got = ens.predict_raw(rows)[:, 0]
            want = eb.predict_raw(rows)[:, 0] - ea.predict_raw(rows)[:, 0]
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)  # leaves differ by far more


def test_float64_thresholds_match_float32_rounding():
    rng = np.random.default_rng(3)
    t = np.concatenate([rng.normal(size=200) * 10.0 ** rng.integers(-30, 30, 200),
                        [0.0, -0.0, 1.0, -1.0, 3.4e38, np.inf, -np.inf]])
    t2 = float64_thresholds(t)
    keep = np.isfinite(t2)
    t, t2 = t[keep], t2[keep]
    for delta in (0, 1, -1, 2, -2):
        x = t2.copy()
        for _ in range(abs(delta)):
            x = np.nextafter(x, np.sign(delta) * np.inf)
        with np.errstate(over="ignore"):
            rounded = x.astype(np.float32).astype(float)
        np.testing.assert_array_equal(rounded <= t, x <= t2)


def test_refuses_models_of_other_outputs():
    X, y = _data(d=3, n=200)
    A = GradientBoostingRegressor(n_estimators=5).fit(X, y)
    B = xgb.XGBClassifier(n_estimators=5).fit(X, y > 0)
    with pytest.raises(ml.InvalidParameterError, match="outputs differ"):
        ml.compare(A, B, X[:5], algorithm="tree")


@pytest.mark.parametrize("background", [None, 30])
def test_trees_both_models_share_cancel(background):
    """A booster trained on from another keeps its trees: only the new ones are walked."""
    X, y = _data(d=4, n=300, seed=4)
    A = xgb.XGBRegressor(n_estimators=8, max_depth=3).fit(X, y)
    B = xgb.XGBRegressor(n_estimators=5, max_depth=3).fit(X, y + X[:, 3], xgb_model=A)
    bg = None if background is None else X[-background:]
    diff = ml.compare(A, B, X[:20], background=bg)
    assert diff.diagnostics["n_trees"] == 5
    ta, tb = (ml.shapley(m, X[:20], background=bg, algorithm="tree") for m in (A, B))
    np.testing.assert_allclose(diff.values, tb.values - ta.values, atol=1e-9)
    np.testing.assert_allclose(diff.base_values, tb.base_values - ta.base_values, atol=1e-9)
    same = ml.compare(A, A, X[:5], background=bg)
    np.testing.assert_allclose(same.values, 0, atol=1e-12)


def test_tree_algorithm_refuses_sampling_options(fitted):
    X, models = fitted
    with pytest.raises(ml.InvalidParameterError, match="sampling options"):
        ml.compare(models["sklearn"], models["xgboost"], X[:3], algorithm="tree",
                   dependence="gaussian")
