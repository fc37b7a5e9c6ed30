"""target= picks the output a method explains: positions, negative positions, classes."""

import numpy as np
import pytest

import modellens as ml
from modellens import ModelError


def _regression(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 3))
    y = X[:, 0] ** 2 + 2 * X[:, 1] + rng.normal(0, 0.1, n)
    return X, y


def test_negative_target_on_a_torch_model_with_one_output_is_that_output():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    net = net.double()
    X, _ = _regression(200)
    for method in (ml.pdp, ml.mplot, ml.ale):
        plain = method(net, X, features="x0")["x0"].values
        for target in (0, -1):
            np.testing.assert_array_equal(method(net, X, features="x0", target=target)["x0"]
                                          .values, plain)
    base = ml.shapley(net, X[:3], background=X[:20])
    last = ml.shapley(net, X[:3], background=X[:20], target=-1)
    np.testing.assert_array_equal(base.values, last.values)
    np.testing.assert_array_equal(ml.dale(net, X, target=-1)["x0"].values,
                                  ml.dale(net, X)["x0"].values)
    with pytest.raises(ModelError, match="target=3 is out of range: the model returns 1 output"):
        ml.pdp(net, X, features="x0", target=3)
    with pytest.raises(ModelError, match="out of range"):
        ml.dale(net, X, target=3)


def test_target_picks_a_column_of_a_plain_function_with_several_outputs():
    X, _ = _regression(100)
    two = lambda A: np.column_stack([A[:, 0], 5 * A[:, 1]])  # noqa: E731
    both = ml.pdp(two, X, features="x1")["x1"]  # every output
    assert both.outputs == ["f(x)[0]", "f(x)[1]"]
    a = ml.pdp(two, X, features="x1", target=1)["x1"]
    np.testing.assert_array_equal(both.values[:, 1], a.values)
    b = ml.pdp(two, X, features="x1", target=-1)["x1"]
    np.testing.assert_allclose(a.values, 5 * a.grid - 5 * a.grid.mean() + a.values.mean())
    np.testing.assert_array_equal(a.values, b.values)
    assert a.output == "f(x)[1]"


def test_negative_target_of_a_classifier_is_a_position():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 2))
    y = np.digitize(X[:, 0], [-0.5, 0.5])  # three classes 0, 1, 2
    clf = LogisticRegression().fit(X, y)
    last = ml.pdp(clf, X, features="x0", target=-1)["x0"]
    two = ml.pdp(clf, X, features="x0", target=2)["x0"]
    np.testing.assert_array_equal(last.values, two.values)
    assert last.output == "P(y = 2)"
