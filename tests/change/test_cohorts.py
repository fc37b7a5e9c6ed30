"""attr.compare_groups: the difference of two groups' mean attributions, with tests."""

import json

import numpy as np
import pytest
from scipy import stats

import modellens as ml


def _attr(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, ml.shapley(lambda A: A @ [1.0, 2.0, 0.5], X, background=X[:50])


def test_difference_interval_and_welch_test():
    X, attr = _attr()
    mask = X[:, 0] > 0
    g = attr.compare_groups(mask, n_boot=400, random_state=0)
    # a linear model: phi_j = w_j (x_j - mean of the background's x_j)
    want = attr.values[mask].mean(axis=0) - attr.values[~mask].mean(axis=0)
    np.testing.assert_allclose(g.difference, want)
    welch = stats.ttest_ind(attr.values[mask], attr.values[~mask], equal_var=False)
    np.testing.assert_allclose(g.p_value_unadjusted, welch.pvalue, rtol=1e-10)
    assert np.all(g.ci_low <= g.difference) and np.all(g.difference <= g.ci_high)
    assert g.p_value[0] < 1e-10 and g.p_value[2] > 0.01  # only x0 was split on
    # Holm: the smallest p-value times the number of features
    k = int(np.argmin(g.p_value_unadjusted))
    assert np.isclose(g.p_value[k], min(1.0, 3 * g.p_value_unadjusted[k]))
    back = ml.GroupComparison.from_dict(json.loads(json.dumps(g.to_dict())))
    assert back.to_frame().equals(g.to_frame())


def test_bootstrap_interval_covers_a_known_difference():
    """The interval of a mean difference of normal rows against its t interval."""
    X, attr = _attr(n=2000, seed=1)
    mask = np.random.default_rng(2).random(2000) < 0.5
    g = attr.compare_groups(mask, n_boot=500, random_state=0)
    half = stats.norm.ppf(0.975) * g.std
    np.testing.assert_allclose(g.ci_high - g.ci_low, 2 * half, rtol=0.15)


def test_refusals():
    X, attr = _attr()
    with pytest.raises(ml.InvalidParameterError, match="boolean"):
        attr.compare_groups(np.arange(len(X)))
    with pytest.raises(ml.InvalidParameterError, match="at least 2"):
        attr.compare_groups(np.arange(len(X)) == 0)
