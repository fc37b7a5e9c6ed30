"""Options that mean nothing for the algorithm asked are refused, never ignored."""

import numpy as np
import pytest

import modellens as ml
from modellens._validation import InvalidParameterError

STOPPING = [dict(tol=0.05), dict(tol_abs=0.01), dict(tol=0.05, max_evals=64)]


def _linear():
    X = np.random.default_rng(0).normal(size=(40, 4))
    return (lambda A: A @ np.array([1.0, -2.0, 0.5, 3.0])), X


@pytest.mark.parametrize("kw", STOPPING)
@pytest.mark.parametrize("groups", [None, {"pair": [0, 1]}])
def test_exact_refuses_a_stopping_rule(kw, groups):
    model, X = _linear()
    with pytest.raises(InvalidParameterError,
                       match=r"algorithm='exact' enumerates every coalition and needs no "
                             r"tolerance: drop them, or pick algorithm='permutation' or 'kernel'"):
        ml.shapley(model, X[:2], background=X, algorithm="exact", groups=groups, **kw)


def test_tree_and_exact_refuse_with_the_same_rule():
    from sklearn.tree import DecisionTreeRegressor

    model, X = _linear()
    tree = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, model(X))
    messages = []
    for algorithm, fitted in (("exact", model), ("tree", tree)):
        with pytest.raises(InvalidParameterError) as caught:
            ml.shapley(fitted, X[:2], background=X, algorithm=algorithm, tol=0.05)
        messages.append(str(caught.value))
    # one explanation of what the options do and which algorithms take them
    head = messages[0].split("; ")[0]
    assert head.startswith("tol= / tol_abs= (and max_evals=, their cap) stop the sampling "
                           "algorithms ('permutation', 'kernel', and 'auto' when it samples)")
    assert messages[1].split("; ")[0] == head
    assert "TreeSHAP (algorithm='tree') is exact and needs no tolerance" in messages[1]


@pytest.mark.parametrize("algorithm", ["exact", "permutation", "kernel", "auto"])
def test_interactions_refuse_a_stopping_rule_whatever_the_algorithm(algorithm):
    model, X = _linear()
    with pytest.raises(InvalidParameterError, match="interactions=True draws its own rounds and "
                                                    "has no stopping rule yet"):
        ml.shapley(model, X[:2], background=X, algorithm=algorithm, interactions=True,
                   tol=0.05)


def test_a_text_with_exact_refuses_a_stopping_rule():
    def positive(texts):
        return np.array([t.count("good") for t in texts], dtype=float)

    with pytest.raises(InvalidParameterError, match="algorithm='exact' enumerates every"):
        ml.shapley(positive, "good film, good cast", algorithm="exact", tol=0.05)


@pytest.mark.parametrize("algorithm", ["permutation", "kernel", "auto"])
def test_the_sampling_algorithms_still_take_the_rule(algorithm):
    # phi_j = beta_j (x_j - mean of the background's x_j): the closed form under the rule
    model, X = _linear()
    attr = ml.shapley(model, X[:3], background=X, algorithm=algorithm, tol=0.05,
                      random_state=0)
    expected = (X[:3] - X.mean(axis=0)) * np.array([1.0, -2.0, 0.5, 3.0])
    np.testing.assert_allclose(attr.values, expected, atol=1e-9)
