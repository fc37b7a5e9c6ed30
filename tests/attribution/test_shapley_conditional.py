"""Conditional Shapley values (``dependence=``) against closed-form and simulated truth."""

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import modellens as ml
from modellens._validation import InvalidParameterError
from modellens.attribution import _forest, _samplers
from modellens.attribution._msev import msev

from shapley_games import coalition_shapley

D = 4
CORR = 0.6 * np.ones((D, D)) + 0.4 * np.eye(D)
W = np.array([1.0, 2.0, -1.0, 0.5])


def linear(A):
    return np.asarray(A, dtype=float) @ W


def gaussian_data(seed=0, m=1500, n=4):
    rng = np.random.default_rng(seed)
    return (rng.multivariate_normal(np.zeros(D), CORR, size=n),
            rng.multivariate_normal(np.zeros(D), CORR, size=m))


def shapley_of(worth, d, players=None):
    """Brute-force Shapley values of ``worth(coalition of features)`` over ``players``."""
    players = [[j] for j in range(d)] if players is None else players
    return coalition_shapley(lambda T: worth(sorted(sum((players[k] for k in T), []))),
                             len(players))


def gaussian_worth(x, mu, cov):
    """E[w . X | X_S = x_S] of a normal law (the closed form)."""
    def worth(S):
        o = [j for j in range(D) if j not in S]
        z = np.array(x, dtype=float)
        if S:
            z[o] = mu[o] + cov[np.ix_(o, S)] @ np.linalg.solve(cov[np.ix_(S, S)], x[S] - mu[S])
        else:
            z[o] = mu[o]
        return z @ W
    return worth


def test_gaussian_exact_equals_closed_form_when_draws_have_zero_mean(monkeypatch):
    """With draws whose sample mean is exactly 0, a linear model's v(S) is the conditional
    mean of the fitted normal: the values equal the closed form to 1e-8."""
    init = _samplers.GaussianSampler.__init__

    def centred(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.z = self.z - self.z.mean(axis=0)

    monkeypatch.setattr(_samplers.GaussianSampler, "__init__", centred)
    X, bg = gaussian_data()
    attr = ml.shapley(linear, X, background=bg, dependence="gaussian", random_state=0)
    mu, cov = bg.mean(axis=0), np.cov(bg, rowvar=False)
    truth = np.array([shapley_of(gaussian_worth(x, mu, cov), D) for x in X])
    np.testing.assert_allclose(attr.values, truth, atol=1e-8)
    assert attr.method == "shapley-exact" and attr.value_function == "conditional"
    # the marginal values differ from these by far more than 1e-8
    marginal = ml.shapley(linear, X, background=bg)
    assert np.abs(marginal.values - truth).max() > 0.1


def test_gaussian_within_reported_standard_errors():
    X, bg = gaussian_data(1)
    mu, cov = bg.mean(axis=0), np.cov(bg, rowvar=False)
    truth = np.array([shapley_of(gaussian_worth(x, mu, cov), D) for x in X])
    for seed in range(3):
        attr = ml.shapley(linear, X, background=bg, dependence="gaussian", n_draws=100,
                          random_state=seed)
        assert attr.sampling.dof[0] == 19  # 20 batches of 5 draws
        z = (attr.values - truth) / attr.std
        assert np.all(np.abs(z) < 4.5), z
        assert np.allclose(attr.base_values + attr.values.sum(axis=1), attr.prediction)


def _coverage(n_seeds, algorithm="exact", **kw):
    X, bg = gaussian_data(2, n=1)
    mu, cov = bg.mean(axis=0), np.cov(bg, rowvar=False)
    truth = shapley_of(gaussian_worth(X[0], mu, cov), D)
    hits = []
    for seed in range(n_seeds):
        attr = ml.shapley(linear, X, background=bg, dependence="gaussian", n_draws=40,
                          algorithm=algorithm, random_state=seed, **kw)
        lo, hi = attr.confidence_interval(0.95)
        hits.append((lo[0] <= truth) & (truth <= hi[0]))
    return np.mean(hits)


def test_gaussian_coverage_smoke():
    assert _coverage(20) >= 0.75


@pytest.mark.slow
def test_gaussian_coverage_study():
    """95% intervals cover the closed-form values 92-98% of the time over seeds."""
    assert 0.92 <= _coverage(400) <= 0.98


@pytest.mark.parametrize("algorithm, kw", [("kernel", {"n_samples": 14}),
                                           ("permutation", {"n_permutations": 16})])
def test_gaussian_sampling_algorithms_within_errors(algorithm, kw):
    X, bg = gaussian_data(3)
    mu, cov = bg.mean(axis=0), np.cov(bg, rowvar=False)
    truth = np.array([shapley_of(gaussian_worth(x, mu, cov), D) for x in X])
    attr = ml.shapley(linear, X, background=bg, dependence="gaussian", algorithm=algorithm,
                      random_state=0, **kw)
    z = (attr.values - truth) / attr.std
    assert np.all(np.abs(z) < 5), z
    assert np.allclose(attr.base_values + attr.values.sum(axis=1), attr.prediction)


def test_groups_match_the_closed_form_of_the_group_game(monkeypatch):
    init = _samplers.GaussianSampler.__init__

    def centred(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.z = self.z - self.z.mean(axis=0)

    monkeypatch.setattr(_samplers.GaussianSampler, "__init__", centred)
    X, bg = gaussian_data(4)
    attr = ml.shapley(linear, X, background=bg, dependence="gaussian",
                      groups={"ab": [0, 1]}, random_state=0)
    mu, cov = bg.mean(axis=0), np.cov(bg, rowvar=False)
    truth = np.array([shapley_of(gaussian_worth(x, mu, cov), D, [[0, 1], [2], [3]])
                      for x in X])
    np.testing.assert_allclose(attr.values, truth, atol=1e-8)


# ------------------------------------------------ a non-Gaussian law: exponential margins
def copula_data(seed, m, n):
    rng = np.random.default_rng(seed)
    Z = rng.multivariate_normal(np.zeros(D), CORR, size=m + n)
    X = stats.expon.ppf(stats.norm.cdf(Z))
    return X[:n], X[n:]


def copula_truth(x):
    """Exact Shapley values of the linear model under the true law (Gauss-Hermite in z)."""
    z = stats.norm.ppf(stats.expon.cdf(x))
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    weights = weights / weights.sum()

    def worth(S):
        o = [j for j in range(D) if j not in S]
        e = np.array(x, dtype=float)
        if S:
            A = np.linalg.solve(CORR[np.ix_(S, S)], CORR[np.ix_(S, o)]).T
            mean = A @ z[S]
            sd = np.sqrt(np.diag(CORR[np.ix_(o, o)] - A @ CORR[np.ix_(S, o)]))
        else:
            mean, sd = np.zeros(len(o)), np.ones(len(o))
        for k, j in enumerate(o):  # E[expon.ppf(Phi(Z_j))], Z_j normal
            e[j] = weights @ -stats.norm.logcdf(-(mean[k] + sd[k] * nodes))  # -log(1 - Phi)
        return e @ W
    return shapley_of(worth, D)


#: largest error allowed per approach, as a fraction of the marginal game's error
#: (measured with seed 0: copula 0.09, empirical 0.13, tree 0.21 (whole leaves; 0.25 with
#: 200 draws of them), forest 0.18, gaussian 0.18)
LIMITS = {"copula": 0.15, "empirical": 0.25, "tree": 0.35, "forest": 0.3, "gaussian": 0.3}


@pytest.mark.parametrize("approach", sorted(LIMITS))
def test_non_gaussian_law_against_the_truth(approach):
    X, bg = copula_data(5, m=3000, n=6)
    truth = np.array([copula_truth(x) for x in X])
    # the background's mean prediction stands for E f(X) = sum(W) in both
    marginal = ml.shapley(linear, X, background=bg)
    attr = ml.shapley(linear, X, background=bg, dependence=approach, random_state=0)
    err = np.sqrt(np.mean((attr.values - truth) ** 2))
    base = np.sqrt(np.mean((marginal.values - truth) ** 2))
    assert err <= LIMITS[approach] * base, (err, base)


def bumpy(A):
    A = np.asarray(A, dtype=float)
    return A @ W + 2.0 * np.sin(A[:, 0] * A[:, 1]) + np.abs(A[:, 2])


def leaf_worth(f, x, bg):
    """The tree approach's worth as documented, built here with scikit-learn: the mean of f
    over the background rows sharing x_S's leaf of a CART tree (leaves of at least
    max(7, round(sqrt(m))) rows) grown on bg[:, S] to predict the standardised others."""
    from sklearn.tree import DecisionTreeRegressor

    m, d = bg.shape
    leaf = max(7, int(round(np.sqrt(m))))

    def worth(S):
        if not S:
            return f(bg).mean()
        S = list(S)
        o = [j for j in range(d) if j not in S]
        if not o:
            return f(x[None, :])[0]
        target = (bg[:, o] - bg[:, o].mean(axis=0)) / bg[:, o].std(axis=0)
        tree = DecisionTreeRegressor(min_samples_leaf=leaf, min_samples_split=2 * leaf,
                                     random_state=0).fit(bg[:, S], target)
        same = tree.apply(bg[:, S]) == tree.apply(x[None, S])[0]
        rows = bg[same].copy()
        rows[:, S] = x[S]
        return f(rows).mean()
    return worth


def test_tree_worths_are_whole_leaves():
    """A leaf of at most n_draws rows is evaluated on each of its rows once: the exact values
    equal the brute-force Shapley values of the leaves' means (no draws' error; 200 draws
    with replacement from leaves of 20-39 rows were off by about 0.05), whatever the chunks."""
    X, bg = gaussian_data(3, m=400, n=3)
    truth = np.array([shapley_of(leaf_worth(bumpy, x, bg), D) for x in X])
    attr = ml.shapley(bumpy, X, background=bg, dependence="tree", algorithm="exact",
                      random_state=0)
    np.testing.assert_allclose(attr.values, truth, rtol=0, atol=1e-10)
    chunked = ml.shapley(bumpy, X, background=bg, dependence="tree", algorithm="exact",
                         random_state=5, chunk_size=37)
    np.testing.assert_allclose(chunked.values, truth, rtol=0, atol=1e-10)
    # every (row, coalition) query costs its leaf's rows, fewer than the 200 draws
    assert attr.diagnostics["n_model_rows"] < 3 * 14 * 40 + 400 + 3


def test_tree_leaves_larger_than_the_draws_are_sampled():
    """n_draws below the leaves' size: the leaves are sampled again, and the errors count
    the draws' error (the values within them of the whole leaves' means)."""
    X, bg = gaussian_data(3, m=400, n=3)
    truth = np.array([shapley_of(leaf_worth(bumpy, x, bg), D) for x in X])
    attr = ml.shapley(bumpy, X, background=bg, dependence="tree", algorithm="exact",
                      n_draws=8, random_state=0)
    assert np.all(attr.std > 0)
    assert attr.sampling is None or attr.sampling.dof.max() <= 7
    z = (attr.values - truth) / attr.std
    assert np.all(np.abs(z) < 6.0), z
    assert np.abs(attr.values - truth).max() > 1e-6  # (sampled: not the leaves' means)


@pytest.fixture
def forests(monkeypatch):
    """The forest samplers a call fits, recorded."""
    made = []
    init = _forest.ForestSampler.__init__

    def record(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(_forest.ForestSampler, "__init__", record)
    return made


def forest_worth(f, x, bg, sampler):
    """Brute force from the sampler's fitted trees, read with scikit-learn's apply: the mean
    over the trees of f's mean over the background rows in x_S's leaf."""
    d = bg.shape[1]

    def worth(S):
        if not S:
            return f(bg).mean()
        if len(S) == d:
            return f(x[None, :])[0]
        mask = np.isin(np.arange(d), S)
        fits = sampler._fitted(mask)
        total = 0.0
        for tree, _, _ in fits:
            same = tree.apply(bg[:, mask]) == tree.apply(x[None, mask])[0]
            rows = bg[same].copy()
            rows[:, mask] = x[mask]
            total += f(rows).mean()
        return total / len(fits)
    return worth


def test_forest_worths_average_the_trees_leaves(forests):
    X, bg = gaussian_data(3, m=400, n=3)
    attr = ml.shapley(bumpy, X, background=bg, dependence="forest", algorithm="exact",
                      random_state=0)
    (sampler,) = forests
    truth = np.array([shapley_of(forest_worth(bumpy, x, bg, sampler), D) for x in X])
    np.testing.assert_allclose(attr.values, truth, rtol=0, atol=1e-10)
    assert attr.std is None  # each query's union of leaves evaluated whole: no draws
    # the documented forest: 5 trees, each grown on its half of the background, with
    # leaves of at least round(sqrt(200)) = 14 of its rows
    fits = sampler._fitted(np.array([True, False, True, False]))
    assert len(fits) == 5
    for tree, _, _ in fits:
        counts = tree.tree_.n_node_samples
        assert counts[0] == 200
        assert counts[tree.tree_.children_left == -1].min() >= 14
    single = ml.shapley(bumpy, X, background=bg, dependence="tree", algorithm="exact",
                        random_state=0)
    assert np.abs(single.values - attr.values).max() > 1e-3


def test_forest_unions_larger_than_the_draws_are_sampled(forests):
    X, bg = gaussian_data(3, m=400, n=3)
    attr = ml.shapley(bumpy, X, background=bg, dependence="forest", algorithm="exact",
                      n_draws=10, random_state=0)
    (sampler,) = forests
    truth = np.array([shapley_of(forest_worth(bumpy, x, bg, sampler), D) for x in X])
    assert np.all(attr.std > 0)
    z = (attr.values - truth) / attr.std
    assert np.all(np.abs(z) < 6.0), z
    assert np.abs(attr.values - truth).max() > 1e-6


# ------------------------------------------------------------------------ MSEv
def test_msev_by_hand():
    rows = np.array([0, 0, 0, 0, 1, 1])
    masks = np.array([[1, 0], [0, 1], [1, 0], [0, 0], [1, 0], [1, 1]], dtype=bool)
    worths = np.array([1.0, 3.0, 1.0, 9.0, 0.0, 5.0])
    fx = np.array([2.0, 2.0])
    value, se, per_row = msev(rows, masks, worths, fx)
    # row 0: coalitions {0} (once) and {1}: ((2-1)^2 + (2-3)^2) / 2 = 1; row 1: {0}: 4
    np.testing.assert_allclose(per_row, [1.0, 4.0])
    assert value == pytest.approx(2.5)
    assert se == pytest.approx(np.std([1.0, 4.0], ddof=1) / np.sqrt(2))


def test_msev_of_the_marginal_game_by_brute_force():
    rng = np.random.default_rng(0)
    X, bg = rng.normal(size=(3, 3)), rng.normal(size=(7, 3))

    def model(A):
        return A[:, 0] * A[:, 1] + np.sin(A[:, 2])

    attr = ml.shapley(model, X, background=bg, algorithm="exact")
    per_row = []
    for x in X:
        fx = model(x[None])[0]
        errs = []
        for r in (1, 2):
            for S in combinations(range(3), r):
                Z = bg.copy()
                Z[:, list(S)] = x[list(S)]
                errs.append((fx - model(Z).mean()) ** 2)
        per_row.append(np.mean(errs))
    assert attr.diagnostics["msev"] == pytest.approx(np.mean(per_row), rel=1e-12)
    assert attr.diagnostics["msev_se"] == pytest.approx(np.std(per_row, ddof=1) / np.sqrt(3),
                                                        rel=1e-12)


def test_conditional_msev_lower_on_dependent_data():
    X, bg = gaussian_data(6, n=30)
    marginal = ml.shapley(linear, X, background=bg)
    cond = ml.shapley(linear, X, background=bg, dependence="gaussian", random_state=0)
    assert cond.diagnostics["msev"] < 0.8 * marginal.diagnostics["msev"]


# ------------------------------------------------------- the marginal game unchanged
@pytest.mark.parametrize("kw", [{"algorithm": "exact"},
                                {"algorithm": "kernel", "n_samples": 20},
                                {"algorithm": "permutation", "n_permutations": 16},
                                {"groups": {"ab": [0, 1]}}])
def test_independent_is_the_default(kw):
    X, bg = gaussian_data(7)
    a = ml.shapley(linear, X, background=bg, random_state=0, **kw)
    b = ml.shapley(linear, X, background=bg, random_state=0, dependence="independent", **kw)
    assert np.array_equal(a.values, b.values)
    assert a.value_function == "interventional"
    if a.std is not None:
        assert np.array_equal(a.std, b.std)


# ------------------------------------------------- categorical, missing, multiclass
def mixed_frame(seed=0, m=400):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=m)
    colour = np.where(a + 0.3 * rng.normal(size=m) > 0, "red", "blue")
    b = a + 0.5 * rng.normal(size=m)
    b[rng.random(m) < 0.1] = np.nan
    return pd.DataFrame({"a": a, "colour": pd.Categorical(colour), "b": b})


def mixed_model(frame):
    b = np.nan_to_num(frame["b"].to_numpy(dtype=float))
    return frame["a"].to_numpy() + 2.0 * (frame["colour"] == "red").to_numpy() + b


@pytest.mark.parametrize("approach", ["tree", "empirical"])
def test_categorical_and_missing_values(approach):
    frame = mixed_frame()
    attr = ml.shapley(mixed_model, frame.iloc[:5], background=frame.iloc[5:],
                      dependence=approach, random_state=0)
    assert np.all(np.isfinite(attr.values))
    assert np.allclose(attr.base_values + attr.values.sum(axis=1), attr.prediction)
    if approach == "empirical":
        ess = attr.diagnostics["effective_sample_size"]
        assert ess["min"] >= 1.0 and ess["per_coalition_mean"].shape == (6,)


@pytest.mark.parametrize("approach", ["gaussian", "copula"])
def test_gaussian_refuses_categorical(approach):
    frame = mixed_frame()
    with pytest.raises(InvalidParameterError, match="categorical"):
        ml.shapley(mixed_model, frame.iloc[:5], background=frame.iloc[5:], dependence=approach)


def test_every_output_from_the_same_draws(iris, logistic):
    X, _ = iris
    # (8 draws from leaves of at least 11 rows: sampled, with the draws' errors)
    both = ml.shapley(logistic, X.iloc[:3], background=X.iloc[3:120], dependence="tree",
                      n_draws=8, random_state=0)
    one = ml.shapley(logistic, X.iloc[:3], background=X.iloc[3:120], dependence="tree",
                     n_draws=8, random_state=0, target="virginica")
    assert both.values.shape == (3, 4, 3)
    np.testing.assert_array_equal(both.values[..., 2], one.values)
    np.testing.assert_array_equal(both.std[..., 2], one.std)


def test_same_seed_same_numbers_whatever_the_chunks():
    X, bg = gaussian_data(8)
    a = ml.shapley(linear, X, background=bg, dependence="copula", random_state=3)
    again = ml.shapley(linear, X, background=bg, dependence="copula", random_state=3)
    np.testing.assert_array_equal(a.values, again.values)
    # the draws of a query do not depend on the chunk that builds them (the sums of the
    # engine's folds may differ in the last bit for chunks off its alignment, as for the
    # marginal game)
    b = ml.shapley(linear, X, background=bg, dependence="copula", random_state=3,
                   chunk_size=37)
    np.testing.assert_allclose(a.values, b.values, rtol=0, atol=1e-12)
    other = ml.shapley(linear, X, background=bg, dependence="copula", random_state=4)
    assert np.abs(other.values - a.values).max() > 1e-6


def test_stopping_rule_counts_the_monte_carlo_error():
    """tol= on a conditional game: the rule stops on errors that count the draws' error too,
    and the stopped values lie within those errors of the closed form."""
    X, bg = gaussian_data(6)
    mu, cov = bg.mean(axis=0), np.cov(bg, rowvar=False)
    truth = np.array([shapley_of(gaussian_worth(x, mu, cov), D) for x in X])
    attr = ml.shapley(linear, X, background=bg, dependence="gaussian", algorithm="permutation",
                      tol=0.05, n_draws=200, random_state=0)
    spread = attr.values.max(axis=1) - attr.values.min(axis=1)
    assert attr.sampling.converged.all()
    assert np.all(attr.std.max(axis=1) <= 0.05 * spread)
    z = (attr.values - truth) / attr.std
    assert np.all(np.abs(z) < 4.5), z
    # the draws' error is part of the errors the rule read: the same coalitions' errors
    # without it are smaller
    assert attr.sampling.dof.max() <= 19


@pytest.mark.parametrize("kw, match", [
    ({"algorithm": "tree"}, "TreeSHAP"),
    ({"dependence": "independent", "n_draws": 10}, "n_draws"),
    ({"n_draws": 0}, "n_draws"),
    ({"interactions": True}, "interaction"),
])
def test_refusals(kw, match):
    X, bg = gaussian_data(9)
    kw = {"dependence": "gaussian", **kw}
    with pytest.raises(InvalidParameterError, match=match):
        ml.shapley(linear, X, background=bg, **kw)


# ------------------------------------------------------------------ surrogate
@pytest.mark.slow
def test_surrogate_on_the_non_gaussian_law():
    """No draws, no model rows for the worths; error against the truth stated."""
    X, bg = copula_data(5, m=1000, n=6)
    truth = np.array([copula_truth(x) for x in X])
    marginal = ml.shapley(linear, X, background=bg)
    attr = ml.shapley(linear, X, background=bg, dependence="surrogate", random_state=0)
    err = np.sqrt(np.mean((attr.values - truth) ** 2))
    base = np.sqrt(np.mean((marginal.values - truth) ** 2))
    # err / base measured 0.37-0.66 over random_state 0-5 with scikit-learn 1.9.1 (0.51 at 0;
    # 0.41 at 0 with 1.8.0: HGB's fit changed); the marginal values score 1, a surrogate
    # blind to the dependence about as much
    assert err <= 0.75 * base, (err, base)
    assert attr.diagnostics["n_model_rows"] == bg.shape[0] + X.shape[0] + bg.shape[0]
    # out-of-fold error of predicting f(z) from z_S: positive, below f's variance
    assert 0 < attr.diagnostics["surrogate_oof_mse"] < np.var(linear(bg))


def test_surrogate_categorical_and_missing():
    frame = mixed_frame(m=200)
    attr = ml.shapley(mixed_model, frame.iloc[:5], background=frame.iloc[5:],
                      dependence="surrogate", random_state=0)
    assert np.allclose(attr.base_values + attr.values.sum(axis=1), attr.prediction)
    assert attr.diagnostics["surrogate_oof_mse"] > 0


@pytest.mark.slow
def test_surrogate_every_output(iris, logistic):
    X, _ = iris
    both = ml.shapley(logistic, X.iloc[:3], background=X.iloc[3:120],
                      dependence="surrogate", random_state=0)
    assert both.values.shape == (3, 4, 3) and len(both.diagnostics["surrogate_oof_mse"]) == 3


def test_auto_picks_the_lowest_cross_validated_msev():
    X, bg = gaussian_data(10, m=600)
    attr = ml.shapley(linear, X, background=bg, dependence="auto", n_draws=40, random_state=0)
    scores = attr.diagnostics["dependence_cv_msev"]
    assert set(scores) == {"gaussian", "copula", "empirical", "tree", "forest"}
    assert attr.diagnostics["dependence"] == min(scores, key=scores.get)
    # on normal data the normal model's worths beat one tree's (the forest's average of
    # leaves, free of draws, came out ahead of 40 normal draws here)
    assert scores["gaussian"] < scores["tree"]
    frame = mixed_frame(m=200)
    mixed = ml.shapley(mixed_model, frame.iloc[:3], background=frame.iloc[3:],
                       dependence="auto", n_draws=20, random_state=0)
    assert set(mixed.diagnostics["dependence_cv_msev"]) == {"empirical", "tree", "forest"}
