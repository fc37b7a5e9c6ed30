"""Causal and asymmetric Shapley values against brute force on a linear-Gaussian structural
model, whose interventional expectations are read off its equations (not from the code)."""

from itertools import combinations, permutations
from math import factorial

import numpy as np
import pytest

import modellens as ml
from modellens._validation import InvalidParameterError
from modellens.attribution import _causal, _samplers

# the structural model: X0 = e0; X1 = A X0 + U + e1; X2 = B X0 + G U + e2 (U a hidden
# confounder of X1 and X2); X3 = C1 X1 + C2 X2 + e3
A, B, G, C1, C2 = 0.8, -0.6, 1.5, 1.0, 0.7
NOISE = np.array([1.0, 1.0, 0.5, 0.5, 0.3])  # variances of e0, U, e1, e2, e3
W = np.array([1.0, 2.0, -1.0, 0.5])
ORDER = [[0], [1, 2], [3]]


def linear(Z):
    return np.asarray(Z, dtype=float) @ W


def structural_covariance():
    # X = M @ (e0, U, e1, e2, e3)
    M = np.zeros((4, 5))
    M[0] = [1, 0, 0, 0, 0]
    M[1] = [A, 1, 1, 0, 0]
    M[2] = [B, G, 0, 1, 0]
    M[3] = C1 * M[1] + C2 * M[2] + [0, 0, 0, 0, 1]
    return M @ np.diag(NOISE) @ M.T


def exact_background(m=400, seed=0):
    """Rows whose sample mean is 0 and sample covariance the model's exactly (the Gaussian
    fit is then the model's law, not an estimate of it)."""
    z = np.random.default_rng(seed).standard_normal((m, 4))
    z -= z.mean(axis=0)
    z = z @ np.linalg.inv(np.linalg.cholesky(np.cov(z, rowvar=False))).T
    return z @ np.linalg.cholesky(structural_covariance()).T


def do_worth(x):
    """E[f(X) | do(X_S = x_S)] from the structural equations (noises have mean 0)."""
    def worth(S):
        v = np.zeros(4)
        v[0] = x[0] if 0 in S else 0.0
        v[1] = x[1] if 1 in S else A * v[0]
        v[2] = x[2] if 2 in S else B * v[0]
        v[3] = x[3] if 3 in S else C1 * v[1] + C2 * v[2]
        return v @ W
    return worth


def conditional_worth(x, cov):
    def worth(S):
        S = list(S)
        o = [j for j in range(4) if j not in S]
        z = np.array(x, dtype=float)
        z[o] = cov[np.ix_(o, S)] @ np.linalg.solve(cov[np.ix_(S, S)], x[S]) if S else 0.0
        return z @ W
    return worth


def shapley_of(worth, d=4):
    phi = np.zeros(d)
    for j in range(d):
        others = [k for k in range(d) if k != j]
        for r in range(d):
            for T in combinations(others, r):
                wt = factorial(r) * factorial(d - r - 1) / factorial(d)
                phi[j] += wt * (worth(sorted(T + (j,))) - worth(sorted(T)))
    return phi


def consistent_average(worth, order, d=4):
    """Average marginal contributions over the permutations consistent with ``order``."""
    rank = {j: t for t, comp in enumerate(order) for j in comp}
    phi, count = np.zeros(d), 0
    for perm in permutations(range(d)):
        if any(rank[perm[i]] > rank[perm[i + 1]] for i in range(d - 1)):
            continue
        count += 1
        for i, j in enumerate(perm):
            phi[j] += worth(sorted(perm[:i + 1])) - worth(sorted(perm[:i]))
    return phi / count


@pytest.fixture
def centred(monkeypatch):
    """Random numbers with sample mean exactly 0: a linear model's worths are then the
    conditional means of the fitted law, free of Monte Carlo error."""
    init_causal, init_gauss = _causal.CausalSampler.__init__, _samplers.GaussianSampler.__init__

    def causal(self, *args, **kwargs):
        init_causal(self, *args, **kwargs)
        self.noise = [z - z.mean(axis=0) for z in self.noise]

    def gauss(self, *args, **kwargs):
        init_gauss(self, *args, **kwargs)
        self.z = self.z - self.z.mean(axis=0)

    monkeypatch.setattr(_causal.CausalSampler, "__init__", causal)
    monkeypatch.setattr(_samplers.GaussianSampler, "__init__", gauss)


def _rows():
    return np.array([[1.0, -0.5, 2.0, 0.3], [-1.2, 0.4, -0.8, 1.5], [0.3, 1.1, 0.2, -0.7]])


def test_causal_values_equal_brute_force_on_the_structural_model(centred):
    X, bg = _rows(), exact_background()
    attr = ml.shapley(linear, X, background=bg, dependence="gaussian", causal_order=ORDER,
                      confounding=[False, True, False], random_state=0)
    truth = np.array([shapley_of(do_worth(x)) for x in X])
    np.testing.assert_allclose(attr.values, truth, atol=1e-8)
    assert attr.diagnostics["confounding"] == [False, True, False]
    # the causal values are not the conditional ones (the test can tell them apart)
    cond = np.array([shapley_of(conditional_worth(x, structural_covariance())) for x in X])
    assert np.abs(cond - truth).max() > 0.1
    # ignoring the hidden confounder of X1 and X2 (conditioning on each other) is wrong here
    wrong = ml.shapley(linear, X, background=bg, dependence="gaussian", causal_order=ORDER,
                       confounding=False, random_state=0)
    assert np.abs(wrong.values - truth).max() > 0.1


def test_asymmetric_causal_values_average_the_consistent_orders(centred):
    X, bg = _rows(), exact_background()
    attr = ml.shapley(linear, X, background=bg, dependence="gaussian", causal_order=ORDER,
                      confounding=[False, True, False], asymmetric=True, random_state=0)
    truth = np.array([consistent_average(do_worth(x), ORDER) for x in X])
    np.testing.assert_allclose(attr.values, truth, atol=1e-8)
    # 2 consistent orders; the proper coalitions on them: {0}, {0,1}, {0,2}, {0,1,2}
    assert attr.diagnostics["n_coalitions"][0] == 4
    assert np.allclose(attr.base_values + attr.values.sum(axis=1), attr.prediction)


def test_asymmetric_conditional_values_average_the_consistent_orders(centred):
    X, bg = _rows(), exact_background()
    order = [[2, 1], [0, 3]]  # any order, not the model's
    attr = ml.shapley(linear, X, background=bg, dependence="gaussian", causal_order=order,
                      asymmetric=True, random_state=0)
    truth = np.array([consistent_average(conditional_worth(x, structural_covariance()), order)
                      for x in X])
    np.testing.assert_allclose(attr.values, truth, atol=1e-8)
    assert np.abs(truth - np.array([shapley_of(conditional_worth(x, structural_covariance()))
                                    for x in X])).max() > 0.1


def test_asymmetric_permutation_sampling_is_exact_for_components_of_two(centred):
    """An order and its partner (each component reversed) cover both orders of a component
    of two features: every pair gives the consistent average exactly (which differs from
    the symmetric values by more than 0.1 on these rows: the test above)."""
    X, bg = _rows(), exact_background()
    order = [[2, 1], [0, 3]]
    attr = ml.shapley(linear, X, background=bg, dependence="gaussian", causal_order=order,
                      asymmetric=True, algorithm="permutation", n_permutations=4,
                      random_state=0)
    truth = np.array([consistent_average(conditional_worth(x, structural_covariance()), order)
                      for x in X])
    assert attr.method == "shapley-permutation"
    np.testing.assert_allclose(attr.values, truth, atol=1e-8)
    exact = ml.shapley(linear, X, background=bg, dependence="gaussian", causal_order=order,
                       asymmetric=True, random_state=0)
    np.testing.assert_allclose(attr.values, exact.values, atol=1e-8)


@pytest.mark.parametrize("tol", [None, 0.05])
def test_asymmetric_permutation_sampling_within_its_errors(centred, tol):
    """A component of three features: the sampled consistent orders estimate the consistent
    average within their standard errors (and the stopping rule reaches its tolerance)."""
    X, bg = _rows(), exact_background()
    order = [[0], [1, 2, 3]]
    kw = {"n_permutations": 40} if tol is None else {"tol": tol}
    attr = ml.shapley(linear, X, background=bg, dependence="gaussian", causal_order=order,
                      asymmetric=True, algorithm="permutation", random_state=1, **kw)
    truth = np.array([consistent_average(conditional_worth(x, structural_covariance()), order)
                      for x in X])
    symmetric = np.array([shapley_of(conditional_worth(x, structural_covariance())) for x in X])
    assert np.abs(truth - symmetric).max() > 0.1  # the order matters on these rows
    std = np.where(attr.std > 0, attr.std, np.inf)
    assert np.all(np.abs(attr.values - truth) <= 4.5 * attr.std + 1e-9), (attr.values - truth) / std
    assert np.allclose(attr.values[:, 0], truth[:, 0], atol=1e-8)  # always joins first
    assert np.allclose(attr.base_values + attr.values.sum(axis=1), attr.prediction)
    if tol is not None:
        spread = attr.values.max(axis=1) - attr.values.min(axis=1)
        assert attr.sampling.converged.all()
        assert np.all(attr.std.max(axis=1) <= tol * spread)


@pytest.mark.parametrize("approach", ["copula", "empirical", "tree"])
def test_other_samplers_follow_the_chain(approach):
    """Without the shortcut: every sampler's causal values near the truth (its own error on
    this data is stated by the tolerance), within the model's efficiency."""
    rng = np.random.default_rng(1)
    bg = rng.multivariate_normal(np.zeros(4), structural_covariance(), size=2000)
    X = _rows()[:2]
    attr = ml.shapley(linear, X, background=bg, dependence=approach, causal_order=ORDER,
                      confounding=[False, True, False], n_draws=400, random_state=0)
    truth = np.array([shapley_of(do_worth(x)) for x in X])
    assert np.abs(attr.values - truth).max() < 0.5
    assert np.allclose(attr.base_values + attr.values.sum(axis=1), attr.prediction)


@pytest.mark.parametrize("kw, match", [
    ({"causal_order": [[0], [1, 2]], "confounding": True}, "exactly once"),
    ({"causal_order": [[0], [1, 2], [3, "nope"]], "confounding": True}, "not a feature"),
    ({"causal_order": ORDER, "confounding": [True, False]}, "one bool per component"),
    ({"causal_order": ORDER}, "changes nothing"),
    ({"confounding": True}, "causal_order"),
    ({"causal_order": ORDER, "asymmetric": True, "algorithm": "kernel"}, "'permutation' samples"),
    ({"causal_order": ORDER, "confounding": True, "dependence": "independent"},
     "conditional game"),
    ({"causal_order": ORDER, "confounding": True, "dependence": "surrogate"}, "causal chain"),
    ({"causal_order": ORDER, "confounding": True, "groups": {"ab": [0, 1]}}, "groups"),
])
def test_bad_causal_requests_say_what_is_wrong(kw, match):
    X, bg = _rows(), exact_background(50)
    kw = {"dependence": "gaussian", **kw}
    with pytest.raises(InvalidParameterError, match=match):
        ml.shapley(linear, X, background=bg, random_state=0, **kw)
