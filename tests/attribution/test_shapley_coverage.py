"""Calibrated errors: the 95% intervals of every sampling estimator cover the exact values.

A seeded, CI-sized version of the coverage study of
``benchmarks/bench_shapley_frontier.py``: 10 correlated features, a linear
model (additive: exact at any budget), an MLP, a gradient-boosting model and a
model with 3- and 4-way interactions; budgets from 4d to 64d coalitions; exact
values by enumerating every coalition (``shapley_games.exact_values``).  Each
estimator is checked on 960 to 1,440 intervals, enough to tell 95% from 90%
(the standard error of a coverage of 0.95 over 960 intervals is 0.007).
"""

import warnings

import numpy as np
import pytest

import modellens as ml
from modellens._validation import ModellensWarning
from shapley_games import correlated_normal, exact_values, interacting

D = 10


@pytest.fixture(scope="module")
def suite():
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.neural_network import MLPRegressor

    rng = np.random.default_rng(0)
    X = correlated_normal(1400, D, 0.6, rng)
    y = interacting(X) + 0.1 * rng.normal(size=len(X))
    mlp = MLPRegressor(hidden_layer_sizes=(24, 24), max_iter=200, random_state=0)
    gbr = GradientBoostingRegressor(n_estimators=60, max_depth=4, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the MLP need not converge to be a fine game
        games = {"mlp": mlp.fit(X[:1000], y[:1000]).predict,
                 "gbr": gbr.fit(X[:1000], y[:1000]).predict, "interactions": interacting}
    bg, rows = X[1000:1016], X[1200:1208]
    return {name: (f, rows, bg, exact_values(f, rows, bg)) for name, f in games.items()}


def coverage(suite, seeds, proxy=None, **kw):
    """Share of the 95% intervals that hold the exact value, and how many there were.

    ``proxy``: whether the proxy must have corrected every row (True) or none (False).
    """
    hits = checks = 0
    for f, rows, bg, exact in suite.values():
        for seed in seeds:
            attr = ml.shapley(f, rows, background=bg, random_state=seed, **kw)
            if proxy is not None:
                assert attr.diagnostics["proxy_rows"].all() == proxy
                assert attr.diagnostics["proxy_rows"].any() == proxy
            lo, hi = attr.confidence_interval(0.95)
            assert np.isfinite(lo).all()
            slack = 1e-9 * (1 + np.abs(exact))
            hits += int(((lo - slack <= exact) & (exact <= hi + slack)).sum())
            checks += exact.size
    return hits / checks, checks


@pytest.mark.study
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("algorithm, budgets", [
    # KernelSHAP from 4d (the smallest budget with standard errors) to 64d coalitions
    ("kernel", [dict(n_samples=4 * D), dict(n_samples=8 * D), dict(n_samples=16 * D),
                dict(n_samples=32 * D), dict(n_samples=64 * D)]),
    # permutation sampling from 8 antithetic pairs (16d coalitions) to 32 (64d)
    ("permutation", [dict(n_permutations=16), dict(n_permutations=32),
                     dict(n_permutations=64)]),
])
def test_fixed_budget_intervals_hold_95_percent(suite, algorithm, budgets):
    found = {}
    for kw in budgets:
        # the proxy corrects KernelSHAP from 2d sampled pairs on (6d coalitions on 10
        # features), so 4d is plain KernelSHAP and 8d on are the proxy's
        proxy = None if algorithm != "kernel" else kw["n_samples"] >= 8 * D
        found[str(kw)] = coverage(suite, seeds=range(2), algorithm=algorithm, proxy=proxy, **kw)
    pooled = sum(c * k for c, k in found.values()) / sum(k for _, k in found.values())
    assert sum(k for _, k in found.values()) >= 400 * len(budgets) / 1.5
    assert 0.92 <= pooled <= 0.98, found
    assert all(0.90 <= c <= 0.99 for c, _ in found.values()), found


@pytest.mark.study
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("algorithm, tol", [("kernel", 0.05), ("kernel", 0.02),
                                            ("permutation", 0.05)])
def test_intervals_after_the_stopping_rule_hold_95_percent(suite, algorithm, tol):
    # stopping when the errors look small selects runs whose errors were estimated low;
    # the intervals must cover anyway (KernelSHAP: with the proxy, whose errors come
    # from the spread of every draw's term)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModellensWarning)  # a row or two may reach the cap
        cov, checks = coverage(suite, seeds=range(4), algorithm=algorithm, tol=tol,
                               max_evals=4000, proxy=True if algorithm == "kernel" else None)
    assert checks >= 960
    assert 0.92 <= cov <= 0.98


@pytest.mark.parametrize("algorithm, kw", [("kernel", dict(n_samples=8 * D)),
                                           ("permutation", dict(n_permutations=32))])
def test_smoke_intervals_cover_on_one_game(algorithm, kw):
    """The fast loop's version of the studies above: one game, one seed, 80 intervals."""
    rng = np.random.default_rng(0)
    X = correlated_normal(60, D, 0.6, rng)
    rows, bg = X[:8], X[40:56]
    exact = exact_values(interacting, rows, bg)
    attr = ml.shapley(interacting, rows, background=bg, algorithm=algorithm, random_state=0,
                      **kw)
    lo, hi = attr.confidence_interval(0.95)
    assert np.isfinite(lo).all() and np.all(hi > lo)
    share = np.mean((lo <= exact) & (exact <= hi))
    # 80 intervals: the share's SD is 0.024 at 95%; errors half their size cover about 0.67
    assert share >= 0.85, share


def test_additive_games_are_exact_with_zero_errors():
    # paired sampling is exact on an additive game (linear, correlated features)
    rng = np.random.default_rng(1)
    X = correlated_normal(200, D, 0.8, rng)
    beta = rng.normal(size=D)
    rows, bg = X[:6], X[100:130]
    closed = (rows - bg.mean(axis=0)) * beta
    for kw in (dict(algorithm="kernel", n_samples=4 * D),
               dict(algorithm="permutation", n_permutations=16)):
        attr = ml.shapley(lambda A: A @ beta, rows, background=bg, random_state=0, **kw)
        np.testing.assert_allclose(attr.values, closed, atol=1e-10)
        assert np.all(attr.std < 1e-10)


def test_budgets_without_an_error_estimate_say_so():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, D))
    # 15 coalitions: the fit has fewer sampled pairs than features, so no standard error
    with pytest.warns(ModellensWarning, match=r"n_samples=15 leaves 7 sampled pairs .* too "
                                              r"few to estimate standard errors .* use "
                                              r"n_samples >= 20"):
        attr = ml.shapley(interacting, X[:2], background=X[10:20], algorithm="kernel",
                          n_samples=15, random_state=0)
    assert np.isnan(attr.std).all()
    lo, hi = attr.confidence_interval()
    assert np.isnan(lo).all() and np.isnan(hi).all()
    with pytest.warns(ModellensWarning, match="use at least 16 permutations"):
        ml.shapley(interacting, X[:2], background=X[10:20], algorithm="permutation",
                   n_permutations=14, random_state=0)
