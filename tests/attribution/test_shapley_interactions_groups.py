"""Shapley interaction values of any model, and groups of features as players.

Every expected number here is computed in the test by brute force over the
coalitions of the game (or read from interventional TreeSHAP, a separate
implementation), never taken from the code under test.
"""

from itertools import combinations
from math import factorial

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t

import modellens as ml
from modellens import InvalidParameterError, ModellensWarning


def _worth(model, x, B, S):
    """v(S): the mean prediction with the features of S from x, the others from B."""
    rows = B.copy()
    rows[:, list(S)] = x[list(S)]
    return float(np.mean(model(rows)))


def _enumerate(v, G):
    """Shapley values and SHAP interaction values of the game ``v`` (a function of a set
    of the players ``0 .. G-1``), by enumerating every coalition."""
    phi = np.zeros(G)
    for i in range(G):
        rest = [k for k in range(G) if k != i]
        for s in range(G):
            w = factorial(s) * factorial(G - s - 1) / factorial(G)
            for S in combinations(rest, s):
                phi[i] += w * (v(set(S) | {i}) - v(set(S)))
    inter = np.zeros((G, G))
    for i, j in combinations(range(G), 2):
        rest = [k for k in range(G) if k not in (i, j)]
        for s in range(G - 1):
            w = factorial(s) * factorial(G - s - 2) / (2 * factorial(G - 1))
            for S in combinations(rest, s):
                S = set(S)
                inter[i, j] += w * (v(S | {i, j}) - v(S | {i}) - v(S | {j}) + v(S))
        inter[j, i] = inter[i, j]
    inter[np.arange(G), np.arange(G)] = phi - inter.sum(axis=1)
    return phi, inter


def _brute(model, x, B, players):
    """Shapley values and SHAP interaction values of the game whose players are
    ``players`` (lists of columns), by enumerating every coalition."""
    cache = {}

    def v(T):
        T = frozenset(T)
        if T not in cache:
            cache[T] = _worth(model, x, B, [j for g in T for j in players[g]])
        return cache[T]

    return _enumerate(v, len(players))


def _model(A):
    # pairwise and three-way interactions, so that sampled estimates are not exact
    return (A[:, 0] * A[:, 1] + np.sin(A[:, 2]) * A[:, 3] * A[:, 0] + 0.5 * A[:, 4] ** 2
            + A[:, 1] * A[:, 2] * A[:, 4])


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 5))
    return X[:3], X[20:45]


def test_exact_interactions_of_any_model_equal_brute_force(data):
    X, B = data
    attr = ml.shapley(_model, X, background=B, interactions=True)
    assert attr.method == "shapley-exact" and attr.interactions.shape == (3, 5, 5)
    for r in range(3):
        phi, inter = _brute(_model, X[r], B, [[j] for j in range(5)])
        np.testing.assert_allclose(attr.values[r], phi, rtol=0, atol=1e-12)
        np.testing.assert_allclose(attr.interactions[r], inter, rtol=0, atol=1e-12)
    np.testing.assert_allclose(attr.interactions.sum(axis=2), attr.values, rtol=0, atol=1e-12)
    # the values are those of the call without interactions
    np.testing.assert_allclose(attr.values, ml.shapley(_model, X, background=B).values,
                               rtol=0, atol=1e-12)


def _model10(A):
    # interactions of order 3 and more: the sampled pair draws vary (up to order 3 the
    # antithetic draws of a pair are exact)
    return (A[:, 0] * A[:, 1] * A[:, 2] + np.tanh(A[:, 3] * A[:, 4] + A[:, 5]) * A[:, 6]
            + A[:, 7] ** 2 * A[:, 0] * A[:, 3] + A[:, 8] * A[:, 9] * A[:, 1] * A[:, 5])


@pytest.fixture(scope="module")
def data10():
    X = np.random.default_rng(7).normal(size=(60, 10))
    return X[:3], X[20:45]


def test_sampled_interactions_are_unbiased_with_calibrated_errors(data10):
    X, B = data10
    exact = ml.shapley(_model10, X, background=B, interactions=True, algorithm="exact")
    off = ~np.eye(10, dtype=bool)
    inside_off, inside_diag, inside_values, errors = [], [], [], []
    for seed in range(30):
        attr = ml.shapley(_model10, X, background=B, interactions=True,
                          algorithm="permutation", n_permutations=100, random_state=seed)
        assert attr.method == "shapley-permutation" and np.all(attr.sampling.dof == 9)
        np.testing.assert_allclose(attr.interactions.sum(axis=2), attr.values, rtol=0,
                                   atol=1e-12)
        np.testing.assert_allclose(attr.interactions, attr.interactions.transpose(0, 2, 1),
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(attr.values.sum(axis=1) + attr.base_values,
                                   attr.prediction, rtol=0, atol=1e-12)
        q = t.ppf(0.975, attr.sampling.dof)[:, None, None]
        err = attr.interactions - exact.interactions
        std = attr.sampling.interactions_std
        moving = std > 1e-9  # pairs without higher-order terms are exact (std 0)
        hit = np.abs(err) <= q * std
        inside_off.append(hit[moving & off])
        inside_diag.append(hit[moving & ~off])
        lower, upper = attr.confidence_interval()
        inside_values.append((lower <= exact.values + 1e-12) & (exact.values <= upper + 1e-12))
        errors.append(err)
    # 95% t intervals from 10 rounds; measured 0.90-0.94 off the diagonal (heavy-tailed
    # draws of products), 0.93-0.95 on it: a wrong standard error (no sqrt(rounds), the
    # spread of single orders) lands far outside these bounds
    assert 0.86 <= np.mean(np.concatenate(inside_off)) <= 0.99
    assert 0.90 <= np.mean(np.concatenate(inside_diag)) <= 0.99
    assert 0.90 <= np.mean(inside_values) <= 0.99
    # unbiased: the mean error over seeds is within a few of its standard errors of 0
    mean_err, se = np.mean(errors, axis=0), np.std(errors, axis=0) / np.sqrt(len(errors))
    assert np.all(np.abs(mean_err) <= 4.5 * se + 1e-12)


class _TableGame:
    """A game of d players whose worths are random numbers (interactions of every order)."""

    n_explained = 1

    def __init__(self, d, seed):
        self.n_players = d
        self.worth = np.random.default_rng(seed).normal(size=2 ** d)

    def v(self, S):
        return self.worth[sum(1 << int(j) for j in S)]

    def coalition_rows(self, masks, rows=None):
        seg = type("Seg", (), {})()
        seg.result = np.array([self.v(np.flatnonzero(m)) for m in masks])
        return seg

    def ends(self):
        return self.worth[0], np.array([self.worth[-1]])


@pytest.mark.parametrize("d", [2, 3, 4, 5, 6, 7])
def test_sampled_interactions_of_odd_and_even_games_converge(d):
    from modellens.attribution._interaction_values import PairPermutationEstimator
    from modellens.attribution._streams import RowStreams

    game = _TableGame(d, seed=d)
    phi, inter = _enumerate(game.v, d)
    est = PairPermutationEstimator(game, 3000, RowStreams(1)).estimate(game)
    np.testing.assert_allclose(est.interactions[0].sum(axis=1), est.values[0], atol=1e-12)
    # 3000 rounds: within 5 standard errors (and the errors are small)
    assert np.all(np.abs(est.values[0] - phi) <= 5 * est.std[0] + 1e-12)
    assert np.all(np.abs(est.interactions[0] - inter) <= 5 * est.interactions_std[0] + 1e-12)
    assert np.abs(est.interactions[0] - inter).max() < 0.05 * np.abs(inter).max()


def test_a_budget_of_nearly_every_coalition_enumerates_them(data):
    X, B = data
    attr = ml.shapley(_model, X, background=B, interactions=True, algorithm="permutation",
                      n_permutations=600, random_state=0)
    exact = ml.shapley(_model, X, background=B, interactions=True, algorithm="exact")
    assert attr.method == "shapley-exact"
    np.testing.assert_allclose(attr.interactions, exact.interactions, rtol=0, atol=1e-12)


def test_interactions_equal_interventional_treeshap_on_gradient_boosting():
    from sklearn.ensemble import GradientBoostingRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    y = X[:, 0] * X[:, 1] + np.where(X[:, 2] > 0, X[:, 3], -X[:, 4]) + 0.1 * rng.normal(size=300)
    model = GradientBoostingRegressor(n_estimators=30, max_depth=3, random_state=0).fit(X, y)
    Xe, B = X[:4], X[100:140]
    tree = ml.shapley(model, Xe, background=B, algorithm="tree", interactions=True)
    agnostic = ml.shapley(model.predict, Xe, background=B, algorithm="exact", interactions=True)
    scale = np.ptp(model.predict(X))
    np.testing.assert_allclose(agnostic.interactions, tree.interactions, rtol=0,
                               atol=1e-10 * scale)
    np.testing.assert_allclose(agnostic.values, tree.values, rtol=0, atol=1e-10 * scale)


def test_interactions_of_every_output_at_once(data, data10):
    X, B = data

    def two(A):
        return np.c_[_model(A), A[:, 0] * A[:, 3]]

    both = ml.shapley(two, X, background=B, interactions=True)
    assert both.interactions.shape == (3, 5, 5, 2)
    for c, f in enumerate((_model, lambda A: A[:, 0] * A[:, 3])):
        for r in range(3):
            _, inter = _brute(f, X[r], B, [[j] for j in range(5)])
            np.testing.assert_allclose(both.interactions[r, :, :, c], inter, rtol=0, atol=1e-12)
    X, B = data10

    def two10(A):
        return np.c_[_model10(A), A[:, 0] * A[:, 3] * A[:, 8]]

    sampled = ml.shapley(two10, X, background=B, interactions=True, algorithm="permutation",
                         n_permutations=60, random_state=0)
    assert sampled.method == "shapley-permutation"
    assert sampled.sampling.interactions_std.shape == (3, 10, 10, 2)
    one = ml.shapley(lambda A: two10(A)[:, 1], X, background=B, interactions=True,
                     algorithm="permutation", n_permutations=60, random_state=0)
    np.testing.assert_allclose(sampled.for_output(1).interactions, one.interactions, atol=1e-12)
    np.testing.assert_allclose(sampled.for_output(1).sampling.interactions_std,
                               one.sampling.interactions_std, atol=1e-12)


def test_auto_enumerates_small_games_and_samples_larger_ones(data):
    X, B = data
    assert ml.shapley(_model, X[:1], background=B, interactions=True).method == "shapley-exact"
    wide = np.random.default_rng(0).normal(size=(20, 12))
    attr = ml.shapley(lambda A: A[:, 0] * A[:, 1] * A[:, 11], wide[:1], background=wide[5:15],
                      interactions=True, random_state=0)
    assert attr.method == "shapley-permutation" and attr.sampling.n_permutations == 120
    assert attr.interactions.shape == (1, 12, 12) and np.all(attr.sampling.dof == 9)


def test_interaction_options_are_checked(data):
    X, B = data
    with pytest.raises(InvalidParameterError, match="KernelSHAP"):
        ml.shapley(_model, X, background=B, interactions=True, algorithm="kernel")
    with pytest.raises(InvalidParameterError, match="n_permutations"):
        ml.shapley(_model, X, background=B, interactions=True, algorithm="permutation",
                   n_permutations=1)

def test_few_rounds_give_no_standard_errors_and_say_so(data10):
    X, B = data10
    with pytest.warns(ModellensWarning, match="too few"):
        attr = ml.shapley(_model10, X, background=B, interactions=True,
                          algorithm="permutation", n_permutations=20, random_state=0)
    assert np.isnan(attr.sampling.interactions_std).all()


def test_same_seed_same_interactions(data10):
    X, B = data10
    kw = dict(background=B, interactions=True, algorithm="permutation", n_permutations=50)
    a = ml.shapley(_model10, X, random_state=5, **kw)
    b = ml.shapley(_model10, X, random_state=5, **kw)
    assert a.method == "shapley-permutation"
    np.testing.assert_array_equal(a.interactions, b.interactions)
    assert not np.array_equal(a.interactions, ml.shapley(_model10, X, random_state=6,
                                                         **kw).interactions)


# ------------------------------------------------------------------- pairs summary
def test_interaction_pairs_rank_mean_absolute_values(data):
    X, B = data
    attr = ml.shapley(_model, X, background=B, interactions=True)
    pairs = attr.interaction_pairs()
    frame = pairs.to_frame()
    assert list(frame.columns[:4]) == ["feature_1", "feature_2", "mean_abs", "mean"]
    assert len(frame) == 10
    expected = {}
    for i, j in combinations(range(5), 2):
        inter = [_brute(_model, X[r], B, [[k] for k in range(5)])[1][i, j] for r in range(3)]
        expected[(f"x{i}", f"x{j}")] = np.mean(np.abs(inter))
    got = {(a, b): m for a, b, m in zip(frame.feature_1, frame.feature_2, frame.mean_abs)}
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-12)
    assert list(frame.mean_abs) == sorted(frame.mean_abs, reverse=True)
    assert len(attr.interaction_pairs(max_pairs=3).to_frame()) == 3


def test_interaction_pairs_plot_and_refusal(data):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, B = data
    attr = ml.shapley(_model, X, background=B, interactions=True)
    fig, ax = plt.subplots()
    assert attr.plot.interactions(ax=ax, max_display=4) is ax
    assert len(ax.patches) == 4
    assert attr.interaction_pairs().plot() is not None
    plt.close("all")
    with pytest.raises(InvalidParameterError, match="interactions=True"):
        ml.shapley(_model, X, background=B).interaction_pairs()


# ------------------------------------------------------------------------- groups
@pytest.mark.parametrize("algorithm", ["exact", "permutation", "kernel"])
def test_group_values_equal_the_shapley_values_of_the_groups_game(data, algorithm):
    X, B = data
    groups = {"ab": ["x0", "x1"], "cde": [2, 4]}
    players = [[0, 1], [2, 4], [3]]
    budget = {"permutation": dict(n_permutations=2000), "kernel": dict(n_samples=6)}
    attr = ml.shapley(_model, X, background=B, groups=groups, algorithm=algorithm,
                      random_state=0, **budget.get(algorithm, {}))
    assert attr.feature_names == ["ab", "cde", "x3"]
    assert attr.diagnostics["groups"] == {"ab": ["x0", "x1"], "cde": ["x2", "x4"],
                                          "x3": ["x3"]}
    np.testing.assert_allclose(attr.values.sum(axis=1) + attr.base_values, attr.prediction,
                               rtol=0, atol=1e-12)
    tol = 1e-12 if algorithm != "permutation" else 0.05
    for r in range(3):
        phi, _ = _brute(_model, X[r], B, players)
        np.testing.assert_allclose(attr.values[r], phi, rtol=0, atol=tol)


def test_group_interactions_equal_brute_force_and_tables_name_groups(data):
    X, B = data
    frame = pd.DataFrame(X, columns=["lat", "lon", "age", "income", "size"])
    bg = pd.DataFrame(B, columns=frame.columns)
    attr = ml.shapley(lambda D: _model(np.asarray(D, dtype=float)), frame, background=bg,
                      groups={"location": ["lat", "lon"]}, interactions=True)
    assert attr.feature_names == ["location", "age", "income", "size"]
    for r in range(3):
        phi, inter = _brute(_model, X[r], B, [[0, 1], [2], [3], [4]])
        np.testing.assert_allclose(attr.interactions[r], inter, rtol=0, atol=1e-12)
    table = attr.to_frame()
    assert "location" in set(table["feature"])
    assert set(attr.interaction_pairs().to_frame().feature_1) <= set(attr.feature_names)
    # a one-feature group keeps its column's data, a larger one has none to show
    assert np.isnan(attr.codes[:, 0]).all()
    np.testing.assert_array_equal(attr.codes[:, 1], X[:, 2])
    assert attr[:, "location"].values.shape == (3, 1)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    assert attr.plot.beeswarm() is not None and attr.plot.dependence("age") is not None
    with pytest.raises(InvalidParameterError, match="group of 2 features"):
        attr.plot.dependence("location")
    plt.close("all")


@pytest.mark.parametrize("groups, match", [
    ({"g": []}, "empty"),
    ({"g": ["nope"]}, "not a feature"),
    ({"g": [7]}, "not a feature"),
    ({"g": ["x0"], "h": ["x0", "x1"]}, "one group at most"),
    ({"x1": ["x0", "x2"]}, "rename the group"),
    ([["x0", "x1"]], "dict"),
])
def test_bad_groups_are_refused_clearly(data, groups, match):
    X, B = data
    with pytest.raises(InvalidParameterError, match=match):
        ml.shapley(_model, X, background=B, groups=groups)


def test_groups_in_interventional_treeshap_equal_brute_force():
    from sklearn.ensemble import GradientBoostingRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    y = X[:, 0] * X[:, 1] + np.where(X[:, 2] > 0, X[:, 3], -X[:, 4]) + X[:, 1] * X[:, 3]
    model = GradientBoostingRegressor(n_estimators=25, max_depth=4, random_state=0).fit(X, y)
    Xe, B = X[:3], X[100:130]
    groups = {"a": [0, 3], "b": [1, 4]}
    players = [[0, 3], [1, 4], [2]]
    attr = ml.shapley(model, Xe, background=B, algorithm="tree", groups=groups,
                      interactions=True)
    assert attr.method == "shapley-tree" and attr.feature_names == ["a", "b", "x2"]
    scale = np.ptp(model.predict(X))
    for r in range(3):
        phi, inter = _brute(model.predict, Xe[r], B, players)
        np.testing.assert_allclose(attr.values[r], phi, rtol=0, atol=1e-10 * scale)
        np.testing.assert_allclose(attr.interactions[r], inter, rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(attr.values.sum(axis=1) + attr.base_values, attr.prediction,
                               rtol=0, atol=1e-10 * scale)
    # the model-agnostic exact values of the same groups agree
    agnostic = ml.shapley(model.predict, Xe, background=B, groups=groups)
    np.testing.assert_allclose(agnostic.values, attr.values, rtol=0, atol=1e-10 * scale)
    with pytest.raises(InvalidParameterError, match="needs a background"):
        ml.shapley(model, Xe, algorithm="tree", groups=groups)


@pytest.mark.parametrize("library", ["hgb", "forest", "xgboost", "lightgbm"])
def test_groups_in_treeshap_of_every_library_equal_the_model_agnostic_values(library):
    from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    y = X[:, 0] * X[:, 1] + np.where(X[:, 2] > 0, X[:, 3], -X[:, 4])
    if library == "xgboost":
        model = pytest.importorskip("xgboost").XGBRegressor(n_estimators=20, max_depth=4)
    elif library == "lightgbm":
        model = pytest.importorskip("lightgbm").LGBMRegressor(n_estimators=20, verbose=-1)
    elif library == "hgb":
        model = HistGradientBoostingRegressor(max_iter=20)
    else:
        model = RandomForestRegressor(n_estimators=10, max_depth=5, random_state=0)
    model.fit(X, y)
    groups = {"a": [0, 3], "b": [1, 4]}
    tree = ml.shapley(model, X[:3], background=X[100:130], algorithm="tree", groups=groups,
                      interactions=True)
    agnostic = ml.shapley(model.predict, X[:3], background=X[100:130], algorithm="exact",
                          groups=groups, interactions=True)
    # XGBoost predicts in float32: its own predictions differ from the trees' sums by ~1e-8
    tol = (1e-6 if library == "xgboost" else 1e-10) * np.ptp(y)
    np.testing.assert_allclose(tree.values, agnostic.values, rtol=0, atol=tol)
    np.testing.assert_allclose(tree.interactions, agnostic.interactions, rtol=0, atol=tol)


def test_groups_in_treeshap_of_every_class():
    from sklearn.ensemble import GradientBoostingClassifier

    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int) + (X[:, 3] > 1)
    model = GradientBoostingClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    Xe, B = X[:2], X[50:70]
    attr = ml.shapley(model, Xe, background=B, algorithm="tree", groups={"g": [1, 2]})
    assert attr.values.shape == (2, 3, 3) and attr.feature_names == ["x0", "g", "x3"]
    for c in range(3):
        def margin(A, c=c):
            return model.decision_function(A)[:, c]
        for r in range(2):
            phi, _ = _brute(margin, Xe[r], B, [[0], [1, 2], [3]])
            np.testing.assert_allclose(attr.values[r, :, c], phi, rtol=0, atol=1e-9)


def test_groups_leave_the_callers_data_alone(data):
    X, B = data
    X0, B0 = X.copy(), B.copy()
    groups = {"ab": ["x0", "x1"]}
    ml.shapley(_model, X, background=B, groups=groups, interactions=True)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(B, B0)
    assert groups == {"ab": ["x0", "x1"]}


def test_exact_interactions_equal_shapiq_shapley_interaction_index(data):
    shapiq = pytest.importorskip("shapiq")
    X, B = data
    attr = ml.shapley(_model, X[:1], background=B, interactions=True)

    def game(coalitions):
        return np.array([_worth(_model, X[0], B, np.flatnonzero(c)) for c in coalitions])

    sii = shapiq.ExactComputer(game, n_players=5)("SII", order=2)
    for i, j in combinations(range(5), 2):
        # the SHAP interaction value is half the index
        assert attr.interactions[0, i, j] == pytest.approx(0.5 * sii[(i, j)], abs=1e-12)
    for i in range(5):  # shapiq's order-1 SII entries are the Shapley values
        assert attr.values[0, i] == pytest.approx(sii[(i,)], abs=1e-12)


def test_sampled_interactions_survive_a_json_round_trip(data10):
    import json

    X, B = data10
    attr = ml.shapley(_model10, X, background=B, interactions=True, algorithm="permutation",
                      n_permutations=60, random_state=0, groups={"ab": ["x0", "x1"]})
    assert attr.method == "shapley-permutation"
    back = ml.Attributions.from_dict(json.loads(json.dumps(attr.to_dict())))
    np.testing.assert_array_equal(back.interactions, attr.interactions)
    np.testing.assert_array_equal(back.sampling.interactions_std, attr.sampling.interactions_std)
    assert back.feature_names == ["ab"] + [f"x{j}" for j in range(2, 10)]
    assert back.diagnostics["groups"]["ab"] == ["x0", "x1"]
