"""ml.compare's per-feature test: "the mean attribution of f_B - f_A over the rows'
population is 0" (Student's t, Holm over the features).

Oracles: scipy's one-sample t test and a step-down Holm written here; the null
and a planted change simulated where the truth is known.  The setting: the
background a fixed sample centred exactly at 0 (each row and its negative), the
explained rows independent draws of N(0, I), and f_B - f_A = sum_j c_j x_j + (a
term of x1 and x2 that cancels in the mean): every feature's attributions change
row by row (slopes c_j), but their mean over N(0, I) is exactly 0, so the null holds
for every feature.  The planted change moves the rows' population of x0 by a tenth
of a standard deviation: the mean attribution of x0 in f_B - f_A is then c_0 / 10,
a tenth of its standard deviation c_0.
"""

import numpy as np
import pytest
from scipy import stats

import modellens as ml

D = 4
W = np.array([1.0, -2.0, 0.5, 1.5])
C = np.array([0.8, 0.5, -0.6, 0.3])  # the slopes model_b changed


def f_a(A):
    return A @ W + np.sin(A[:, 1])


def f_b(A):
    # sin(x1) unchanged, every slope changed, and an interaction x1 * x2 ** 2 whose
    # attributions to x1 and x2 have mean 0 over N(0, I) against a background symmetric
    # in sign (it is odd in x1)
    return f_a(A) + A @ C + 0.3 * A[:, 1] * A[:, 2] ** 2


def holm_loop(p):
    """Holm's step-down adjustment, the textbook loop (an oracle for ml's vectorised one)."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p)
    out, running = np.empty_like(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        out[i] = running
    return out


def _simulate(seed, shift=0.0, n=2000, algorithm="exact"):
    rng = np.random.default_rng(seed)
    half = rng.normal(size=(5, D))
    background = np.vstack([half, -half])  # mean exactly 0, symmetric in sign
    X = rng.normal(size=(n, D))
    X[:, 0] += shift
    kw = {} if algorithm == "exact" else dict(n_permutations=4, random_state=seed)
    diff = ml.compare(f_a, f_b, X, background=background, algorithm=algorithm, **kw)
    return diff.mean_test()


def test_mean_test_is_students_t_with_holm():
    table = _simulate(0, shift=0.3, n=300)
    diff = ml.compare(f_a, f_b, np.random.default_rng(0).normal(size=(7, D)),
                      background=np.eye(D), algorithm="exact")
    for t in (table, diff.mean_test(confidence=0.9)):
        assert list(t.columns) == ["feature", "mean", "std", "ci_low", "ci_high", "p_value",
                                   "p_value_unadjusted", "mean_abs"]
    values = diff.values
    want = stats.ttest_1samp(values, 0.0, axis=0)
    got = diff.mean_test(confidence=0.9)
    np.testing.assert_allclose(got["p_value_unadjusted"], want.pvalue, rtol=1e-10)
    np.testing.assert_allclose(got["p_value"], holm_loop(want.pvalue), rtol=1e-10)
    low, high = stats.t.interval(0.9, len(values) - 1, loc=values.mean(axis=0),
                                 scale=stats.sem(values, axis=0))
    np.testing.assert_allclose(got["ci_low"], low, rtol=1e-10)
    np.testing.assert_allclose(got["ci_high"], high, rtol=1e-10)
    np.testing.assert_allclose(got["mean_abs"], np.abs(values).mean(axis=0))
    # the rows' population moved in x0: its test is the one that rejects
    assert table["p_value"].idxmin() == 0 and table["p_value"][0] < 1e-3


def test_a_feature_the_difference_does_not_use_has_p_value_one():
    X = np.random.default_rng(1).normal(size=(50, 3))
    diff = ml.compare(lambda A: A[:, 0], lambda A: 2 * A[:, 0] + A[:, 1], X,
                      background=np.ones((4, 3)), algorithm="exact")
    t = diff.mean_test()
    # x2's values are 0 up to rounding (exact enumeration sums differences of outputs): its
    # test says 0, not a t of the rounding noise
    assert np.abs(diff.values[:, 2]).max() < 1e-12 and t["p_value"][2] == 1.0
    assert t["p_value"][0] < 1e-6  # the background sits at 1: x0's mean is about -1
    with pytest.raises(ml.InvalidParameterError, match="at least 2"):
        diff[:1].mean_test()
    with pytest.raises(ml.InvalidParameterError, match="confidence"):
        diff.mean_test(confidence=1.5)


@pytest.mark.filterwarnings("ignore:n_permutations=4")
def test_calibration_smoke():
    """A few null and planted simulations (the study below runs 1,000; sampled values
    here: the permutation estimator's own noise is in the rows' spread)."""
    null = np.array([_simulate(s, n=200, algorithm="permutation")["p_value_unadjusted"]
                     for s in range(20)])
    assert np.mean(null < 0.05) <= 0.2  # every feature is a null one
    planted = [_simulate(100 + s, shift=0.4, n=200)["p_value"][0] for s in range(6)]
    assert np.mean(np.array(planted) < 0.05) >= 0.8


@pytest.mark.study
def test_calibration_study():
    """1,000 null simulations (500 rows, 4 features, exact values): the test rejects at
    5% +- 1.5% (x0's, and every feature's pooled), Holm's family-wise rate at most that; the
    planted change (the mean attribution of x0 a tenth of its standard deviation) is found
    (Holm, 5%) in at least 90% of 200 runs of 2,000 rows.  (The null's rows are fewer: a
    t test's level does not need the rows that its power at a tenth of a std does.)"""
    null = np.array([_simulate(s, n=500)["p_value_unadjusted"] for s in range(1000)])
    assert abs(np.mean(null[:, 0] < 0.05) - 0.05) <= 0.015  # the feature planted below
    assert abs(np.mean(null < 0.05) - 0.05) <= 0.015  # every feature's test, pooled
    assert np.mean(null.min(axis=1) * D < 0.05) <= 0.065  # Holm's smallest is m p
    planted = np.array([_simulate(10_000 + s, shift=0.1)["p_value"][0] for s in range(200)])
    assert np.mean(planted < 0.05) >= 0.9
