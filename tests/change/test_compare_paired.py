"""ml.compare of any two models: one paired game of f_B - f_A.

Oracles: the exact mode equals the difference of two exact explanations; the
paired estimator's error against "explain twice and subtract" with independent
draws at the same model-row budget; a linear pair's closed form.
"""

import numpy as np
import pytest

import modellens as ml


def _pair():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 6))

    def f_a(A):
        return A[:, 0] * A[:, 1] + np.sin(A[:, 2]) + A[:, 3] * A[:, 4] * A[:, 5]

    def f_b(A):  # a retrained model: close to A's, one effect grown, a three-way term (a
        # game of order 3: antithetic orders are not exact for it)
        return f_a(A) + 0.3 * A[:, 2] + 0.2 * A[:, 0] * A[:, 1] * A[:, 5]

    return X, f_a, f_b


def test_exact_equals_difference_of_two_exact_explanations():
    X, f_a, f_b = _pair()
    kw = dict(background=X[:20], algorithm="exact")
    diff = ml.compare(f_a, f_b, X[:5], **kw)
    want = ml.shapley(f_b, X[:5], **kw).values - ml.shapley(f_a, X[:5], **kw).values
    np.testing.assert_allclose(diff.values, want, atol=1e-12)
    np.testing.assert_allclose(diff.values.sum(axis=1) + diff.base_values,
                               f_b(X[:5]) - f_a(X[:5]), atol=1e-12)
    assert diff.diagnostics["compare"] == "paired" and diff.output.endswith("model_b - model_a")


def test_linear_pair_closed_form_and_classifier_outputs():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1], [-0.5, 0.5])
    A = LogisticRegression().fit(X, y)
    B = LogisticRegression(C=0.01).fit(X, y)
    diff = ml.compare(A, B, X[:4], background=X[:30], algorithm="exact")
    assert diff.values.shape == (4, 3, 3)  # every class, as ml.shapley
    pa, pb = A.predict_proba(X[:4]), B.predict_proba(X[:4])
    np.testing.assert_allclose(diff.values.sum(axis=1) + diff.base_values, pb - pa, atol=1e-12)


def test_paired_sampling_standard_errors_and_tol():
    X, f_a, f_b = _pair()
    diff = ml.compare(f_a, f_b, X[:3], background=X[:20], algorithm="permutation",
                      n_permutations=40, random_state=0)
    assert diff.std.shape == (3, 6) and np.all(np.isfinite(diff.std))
    again = ml.compare(f_a, f_b, X[:3], background=X[:20], algorithm="permutation",
                       n_permutations=40, random_state=0)
    np.testing.assert_array_equal(diff.values, again.values)
    stopped = ml.compare(f_a, f_b, X[:2], background=X[:20], algorithm="kernel", tol=0.05,
                         random_state=0)
    assert stopped.sampling.converged is not None


def _mse(estimates, truth):
    return float(np.mean((np.asarray(estimates) - truth) ** 2))


@pytest.mark.filterwarnings("ignore:n_permutations=4")
def test_paired_beats_explaining_twice_at_the_same_budget():
    """Same model rows for both: paired (n orders, each row answered by both models)
    against two explanations of n orders each with independent draws."""
    X, f_a, f_b = _pair()
    bg, x = X[:15], X[20:22]
    truth = ml.compare(f_a, f_b, x, background=bg, algorithm="exact").values
    paired, twice = [], []
    for seed in range(6):
        kw = dict(background=bg, algorithm="permutation", n_permutations=4)
        paired.append(ml.compare(f_a, f_b, x, random_state=seed, **kw).values)
        twice.append(ml.shapley(f_b, x, random_state=1000 + seed, **kw).values
                     - ml.shapley(f_a, x, random_state=2000 + seed, **kw).values)
    mse_paired, mse_twice = _mse(paired, truth), _mse(twice, truth)
    assert 0 < mse_paired <= 0.1 * mse_twice


def test_conditional_game_is_paired_too():
    X, f_a, f_b = _pair()
    kw = dict(background=X, algorithm="exact", dependence="gaussian", n_draws=20,
              random_state=0)
    diff = ml.compare(f_a, f_b, X[:2], **kw)
    # the same draws for both: the model B - A evaluated on them
    want = ml.shapley(lambda A: f_b(A) - f_a(A), X[:2], **kw).values
    np.testing.assert_allclose(diff.values, want, atol=1e-12)


def test_compare_effects_are_differences_of_curves():
    X, f_a, f_b = _pair()
    d = ml.compare(f_a, f_b, X, method="pdp", features=[2], grid=5)
    pa, pb = ml.pdp(f_a, X, [2], grid=5), ml.pdp(f_b, X, [2], grid=5)
    np.testing.assert_allclose(d["x2"].values, pb["x2"].values - pa["x2"].values, atol=1e-12)
    a = ml.compare(f_a, f_b, X, method="ale", features=[2], bins=5)
    aa, ab = ml.ale(f_a, X, [2], bins=5), ml.ale(f_b, X, [2], bins=5)
    np.testing.assert_allclose(a["x2"].values, ab["x2"].values - aa["x2"].values, atol=1e-12)
    assert a["x2"].output.endswith("model_b - model_a")


def test_bad_pairs_are_refused():
    from sklearn.linear_model import LogisticRegression

    X, f_a, _ = _pair()
    A = LogisticRegression().fit(X, X[:, 0] > 0)
    B = LogisticRegression().fit(X, np.digitize(X[:, 0], [-1, 1]))
    with pytest.raises(ml.InvalidParameterError, match="classes differ"):
        ml.compare(A, B, X[:2], background=X[:5])
    with pytest.raises(ml.InvalidParameterError, match="method"):
        ml.compare(f_a, f_a, X[:2], method="lime")
    with pytest.raises(ml.InvalidParameterError, match="background"):
        ml.compare(f_a, f_a, X[:2], method="pdp", background=X)
