"""XGBoost trees whose leaves hold a vector (``multi_strategy="multi_output_tree"``).

One tree per round feeds every class (or target) at once.  XGBoost's own
``pred_contribs`` / ``pred_interactions`` refuse such models (3.2: "not yet
implemented"), so the oracles here are independent of our parser and kernels:

* the brute-force Shapley value and interaction index of the path-dependent
  game, each coalition's value the cover-weighted walk of XGBoost's JSON
  document read afresh in this file (``sum_hessian`` covers, ``leaf_weights``
  rows named by a leaf's ``right_children`` entry);
* the model-agnostic ``algorithm="exact"`` on XGBoost's own margins with the
  same background (interventional values and interaction values);
* the brute-force H statistics on the margins, and the same walk with one
  feature set for the tree partial dependence.

XGBoost adds its leaves in float32, so comparisons with its own margins allow
float32 rounding (1e-6 of the output's spread); a misread leaf or cover is off
by a leaf value, orders of magnitude more.
"""

import itertools
import json
import math

import numpy as np
import pytest

import modellens as ml
from modellens.trees import tree_ensemble

xgb = pytest.importorskip("xgboost")


def _data(n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.digitize(X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n), [-0.5, 0.5])
    Y = np.c_[X[:, 0] + X[:, 1] * X[:, 3], np.sin(X[:, 2]) * X[:, 0]]
    return X, y, Y


@pytest.fixture(scope="module")
def models():
    X, y, Y = _data()
    kw = dict(n_estimators=6, max_depth=3, multi_strategy="multi_output_tree",
              tree_method="hist", learning_rate=0.4)
    return X, {"classifier": xgb.XGBClassifier(**kw).fit(X, y),
               "regressor": xgb.XGBRegressor(**kw).fit(X, Y)}


class _Margins:
    """XGBoost's own margins, every output: the model-agnostic algorithms' model."""

    def __init__(self, model):
        self.booster = model.get_booster()

    def predict(self, Z):
        return self.booster.predict(xgb.DMatrix(np.asarray(Z)),
                                    output_margin=True).astype(np.float64)


def _json_game(model):
    """The path-dependent game of the model, read from its JSON: ``v(x, S) -> (k,)``."""
    raw = json.loads(model.get_booster().save_raw("json"))
    learner = raw["learner"]
    base = np.array(json.loads(learner["learner_model_param"]["base_score"]), np.float64)
    trees = learner["gradient_booster"]["model"]["trees"]
    k = len(base)

    def walk(t, node, x, S):
        left, right = t["left_children"], t["right_children"]
        if left[node] < 0:
            return np.array(t["leaf_weights"][right[node] * k:(right[node] + 1) * k],
                            np.float64)
        f = t["split_indices"][node]
        if f in S:  # XGBoost: x < t goes left, compared in float32
            go = left if np.float32(x[f]) < np.float32(t["split_conditions"][node]) else right
            return walk(t, go[node], x, S)
        h = t["sum_hessian"]
        a, b = left[node], right[node]
        return (h[a] * walk(t, a, x, S) + h[b] * walk(t, b, x, S)) / h[node]

    return lambda x, S: base + sum(walk(t, 0, x, S) for t in trees)


def _brute_shapley(v, d):
    """Shapley values ``(d, k)`` and interaction indices ``(d, d, k)`` of the game ``v``."""
    worth = {S: v(set(S)) for r in range(d + 1) for S in itertools.combinations(range(d), r)}
    phi = np.zeros((d,) + worth[()].shape)
    pairs = np.zeros((d, d) + worth[()].shape)
    for i in range(d):
        rest = [j for j in range(d) if j != i]
        for r in range(d):
            for S in itertools.combinations(rest, r):
                w = math.factorial(r) * math.factorial(d - r - 1) / math.factorial(d)
                phi[i] += w * (worth[tuple(sorted(S + (i,)))] - worth[S])
    for i, j in itertools.combinations(range(d), 2):
        rest = [m for m in range(d) if m not in (i, j)]
        for r in range(d - 1):
            for S in itertools.combinations(rest, r):
                w = math.factorial(r) * math.factorial(d - r - 2) / math.factorial(d - 1)
                delta = (worth[tuple(sorted(S + (i, j)))] - worth[tuple(sorted(S + (i,)))]
                         - worth[tuple(sorted(S + (j,)))] + worth[S])
                pairs[i, j] += w * delta / 2
                pairs[j, i] += w * delta / 2
    for i in range(d):
        pairs[i, i] = phi[i] - pairs[i].sum(axis=0)
    return phi, pairs


@pytest.mark.parametrize("name", ["classifier", "regressor"])
def test_vector_leaves_are_read_as_xgboost_predicts(models, name):
    X, fitted = models
    model = fitted[name]
    ens = tree_ensemble(model)
    k = 3 if name == "classifier" else 2
    assert ens.n_outputs == k and ens.n_trees == 6  # one tree per round, every output
    margins = _Margins(model).predict(X)
    np.testing.assert_allclose(ens.predict_raw(X), margins, rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", ["classifier", "regressor"])
def test_path_dependent_values_and_interactions_equal_the_brute_force(models, name):
    X, fitted = models
    model = fitted[name]
    rows = X[:4]
    ours = ml.shapley(model, rows, algorithm="tree", interactions=True)
    game = _json_game(model)
    for i, x in enumerate(rows):
        phi, pairs = _brute_shapley(lambda S: game(x, S), X.shape[1])
        np.testing.assert_allclose(ours.values[i], phi, rtol=0, atol=1e-6)
        np.testing.assert_allclose(ours.interactions[i], pairs, rtol=0, atol=1e-6)
        np.testing.assert_allclose(ours.base_values[i], game(x, set()), rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", ["classifier", "regressor"])
def test_background_values_and_interactions_equal_the_exact_algorithm(models, name):
    X, fitted = models
    model = fitted[name]
    rows, background = X[:5], X[-25:]
    ours = ml.shapley(model, rows, algorithm="tree", background=background, interactions=True)
    exact = ml.shapley(_Margins(model), rows, algorithm="exact", background=background,
                       interactions=True)
    spread = float(np.ptp(_Margins(model).predict(X)))
    assert ours.values.shape == exact.values.shape
    np.testing.assert_allclose(ours.values, exact.values, rtol=0, atol=1e-6 * spread)
    np.testing.assert_allclose(ours.interactions, exact.interactions, rtol=0,
                               atol=1e-6 * spread)
    # additive to XGBoost's own margins
    np.testing.assert_allclose(ours.values.sum(axis=1) + ours.base_values,
                               _Margins(model).predict(rows), rtol=0, atol=1e-6 * spread)


def test_every_target_equals_its_single_target_call(models):
    X, fitted = models
    model = fitted["regressor"]
    rows, background = X[:6], X[-20:]
    for kw in (dict(), dict(background=background)):
        every = ml.shapley(model, rows, algorithm="tree", **kw)
        for c in range(2):
            one = ml.shapley(model, rows, algorithm="tree", target=c, **kw)
            np.testing.assert_allclose(every.for_output(c).values, one.values, rtol=0,
                                       atol=1e-12)


def test_tree_partial_dependence_equals_the_cover_walk(models):
    X, fitted = models
    model = fitted["regressor"]
    grid = np.linspace(-1.5, 1.5, 5)
    ours = ml.pdp(model, X, [2], method="tree", grid={2: grid})[0]
    game = _json_game(model)
    expect = np.array([game(np.array([0, 0, g, 0]), {2}) for g in grid])
    values = np.asarray(ours.values)
    values = values if values.shape == expect.shape else values.T
    np.testing.assert_allclose(values, expect, rtol=0, atol=1e-6)


def test_tree_interactions_equal_the_brute_force_on_the_margins(models):
    X, fitted = models
    model = fitted["regressor"]
    margins = _Margins(model)
    for c in range(2):
        tree = ml.interactions(model, X, sample=60, random_state=3, method="tree", target=c)
        brute = ml.interactions(lambda Z: margins.predict(Z)[:, c], X, sample=60,
                                random_state=3, method="brute", progress=False)
        a = tree.pairwise.sort_values(["feature_1", "feature_2"]).reset_index(drop=True)
        b = brute.pairwise.sort_values(["feature_1", "feature_2"]).reset_index(drop=True)
        np.testing.assert_allclose(a.h2, b.h2, rtol=0, atol=1e-5)
        assert a.h2.max() > 0.01  # a real structure, not all zeros


def test_several_targets_of_one_output_trees_equal_the_exact_algorithm():
    # multi_strategy="one_output_per_tree" with two targets: a tree per target and round
    X, _, Y = _data(seed=1)
    model = xgb.XGBRegressor(n_estimators=5, max_depth=3, tree_method="hist").fit(X, Y)
    rows, background = X[:5], X[-20:]
    ours = ml.shapley(model, rows, algorithm="tree", background=background)
    exact = ml.shapley(_Margins(model), rows, algorithm="exact", background=background)
    assert ours.values.shape == (5, 4, 2)
    np.testing.assert_allclose(ours.values, exact.values, rtol=0, atol=1e-6)


def test_a_leaf_naming_a_row_outside_its_leaf_weights_is_refused(models):
    from modellens.trees import UnsafeModelError, check_xgboost_model

    _, fitted = models
    raw = json.loads(fitted["regressor"].get_booster().save_raw("json"))
    tree = raw["learner"]["gradient_booster"]["model"]["trees"][0]
    check_xgboost_model(raw)  # as saved: accepted
    leaf = tree["left_children"].index(-1)
    tree["right_children"][leaf] = len(tree["leaf_weights"])  # past the last row
    with pytest.raises(UnsafeModelError, match="leaf_weights"):
        check_xgboost_model(raw)
