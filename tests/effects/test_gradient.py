"""Gradients for DALE (autograd, JAX, finite differences) and torch models in the Model."""

import sys
import warnings

import numpy as np
import pytest

import modellens as ml
from modellens import ModelError


def tanh_mlp_numpy(W1, b1, w2, b2):
    """A one-hidden-layer tanh network and its analytic input gradient, in numpy."""
    def f(X):
        return np.tanh(X @ W1.T + b1) @ w2 + b2

    def grad(X):
        h = np.tanh(X @ W1.T + b1)
        return ((1 - h ** 2) * w2) @ W1
    return f, grad


def torch_mlp(W1, b1, w2, b2, dtype):
    torch = pytest.importorskip("torch")
    net = torch.nn.Sequential(torch.nn.Linear(W1.shape[1], W1.shape[0]), torch.nn.Tanh(),
                              torch.nn.Linear(W1.shape[0], 1)).to(dtype)
    with torch.no_grad():
        net[0].weight.copy_(torch.as_tensor(W1))
        net[0].bias.copy_(torch.as_tensor(b1))
        net[2].weight.copy_(torch.as_tensor(w2[None, :]))
        net[2].bias.fill_(b2)
    return net


@pytest.fixture
def mlp():
    rng = np.random.default_rng(0)
    W1, b1 = rng.normal(size=(16, 4)), rng.normal(size=16)
    w2, b2 = rng.normal(size=16), 0.3
    X = rng.normal(size=(400, 4))
    return X, (W1, b1, w2, b2)


# ------------------------------------------------------------------ autograd
@pytest.mark.parametrize("dtype_name, rtol", [("float64", 1e-12), ("float32", 1e-5)])
def test_autograd_of_a_torch_module_equals_the_analytic_gradient(mlp, dtype_name, rtol):
    torch = pytest.importorskip("torch")
    X, params = mlp
    net = torch_mlp(*params, getattr(torch, dtype_name))
    _, grad = tanh_mlp_numpy(*params)
    effects = ml.dale(net, X, bins=10)
    G = grad(X)
    scale = np.abs(G).max()
    for j in range(4):
        eff = effects[f"x{j}"]
        assert eff.extra["gradient"] == "torch"
        np.testing.assert_allclose(eff.local_effects, G[:, j], rtol=rtol, atol=rtol * scale)


def test_autograd_of_a_torch_function_and_chunking():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(50, 3))
    calls = []

    def f(x):
        calls.append(x.shape[0])
        return x[:, 0] * x[:, 1] + torch.sin(x[:, 2]) + x[:, 0] ** 3

    analytic = np.column_stack([X[:, 1] + 3 * X[:, 0] ** 2, X[:, 0], np.cos(X[:, 2])])
    effects = ml.dale(f, X, bins=5, gradient="torch", chunk_size=7)
    # the one row that tells its outputs, asked when it is wrapped: refused as an array, then
    # answered as a tensor (so it is known to take tensors); then the chunks
    assert calls == [1, 1] + [7] * 7 + [1]
    for j in range(3):
        np.testing.assert_allclose(effects[f"x{j}"].local_effects, analytic[:, j], rtol=1e-5,
                                   atol=1e-6)


def test_torch_module_with_several_outputs_explains_each(mlp):
    torch = pytest.importorskip("torch")
    X, _ = mlp
    net = torch.nn.Linear(4, 3).double()
    every = ml.dale(net, X, bins=4)  # every output: the slope of each is its weight
    assert every.outputs == ["output[0]", "output[1]", "output[2]"]
    np.testing.assert_allclose(every["x1"].local_effects, np.broadcast_to(
        net.weight[:, 1].detach().numpy(), every["x1"].local_effects.shape), rtol=1e-12)
    eff = ml.dale(net, X, target=2, bins=4)["x1"]
    np.testing.assert_allclose(eff.local_effects, net.weight[2, 1].item(), rtol=1e-12)
    assert eff.output == "output[2]"
    with pytest.raises(ValueError, match="index of the output"):
        ml.pdp(net, X, target="a")


# ------------------------------------------------ torch models for plain prediction
def test_pdp_of_a_torch_module_equals_pdp_of_its_numpy_twin(mlp):
    torch = pytest.importorskip("torch")
    X, params = mlp
    net = torch_mlp(*params, torch.float64)
    f, _ = tanh_mlp_numpy(*params)
    ours = ml.pdp(net, X, features=[0, 2], grid=6, ice=True)
    twin = ml.pdp(f, X, features=[0, 2], grid=6, ice=True)
    for name in ("x0", "x2"):
        np.testing.assert_allclose(ours[name].values, twin[name].values, rtol=1e-12)
        np.testing.assert_allclose(ours[name].ice, twin[name].ice, rtol=1e-12)
    # parameters untouched, no gradients accumulated on them
    assert all(p.grad is None for p in net.parameters())


def test_a_function_on_tensors_works_for_prediction():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 2))

    def f(x):  # torch.sin rejects numpy arrays: recognised as a function on tensors
        return torch.sin(x[:, 0]) * x[:, 1]

    pd_torch = ml.pdp(f, X, features="x0", grid=[0.0, 0.5])["x0"].values
    expected = [np.mean(np.sin(v) * X[:, 1]) for v in (0.0, 0.5)]
    np.testing.assert_allclose(pd_torch, expected, rtol=1e-6, atol=1e-7)
    mp = ml.mplot(f, X, features="x1", grid=3)["x1"]
    assert np.all(np.isfinite(mp.values))


def test_a_broken_function_still_reports_its_own_error():
    pytest.importorskip("torch")
    X = np.ones((5, 2))

    def f(Z):
        raise KeyError("no such column")

    with pytest.raises(ModelError, match="KeyError"):
        ml.pdp(f, X, grid=2)


def test_training_mode_with_dropout_warns():
    torch = pytest.importorskip("torch")
    net = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Dropout(0.5), torch.nn.Linear(4, 1))
    X = np.ones((10, 2))
    with pytest.warns(UserWarning, match="model.eval"):
        ml.pdp(net, X, grid=2)
    net.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ml.pdp(net, X, grid=2)


def test_missing_torch_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    X = np.ones((10, 2))
    with pytest.raises(ImportError, match=r"pip install modellens\[torch\]"):
        ml.dale(lambda Z: Z.sum(1), X, gradient="torch")


def test_missing_jax_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax", None)
    X = np.ones((10, 2))
    with pytest.raises(ImportError, match=r"pip install modellens\[jax\]"):
        ml.dale(lambda Z: Z.sum(1), X, gradient="jax")


# ----------------------------------------------------------------------- JAX
def test_jax_gradient_equals_the_analytic_gradient():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(80, 3))

    def f(x):
        return x[:, 0] * x[:, 1] + jnp.sin(x[:, 2])

    analytic = np.column_stack([X[:, 1], X[:, 0], np.cos(X[:, 2])])
    effects = ml.dale(f, X, bins=4, gradient="jax", chunk_size=30)
    for j in range(3):
        np.testing.assert_allclose(effects[f"x{j}"].local_effects, analytic[:, j], rtol=1e-5,
                                   atol=1e-6)
    jitted = ml.dale(jax.jit(f), X, bins=4)  # a jitted function is recognised
    assert jitted["x0"].extra["gradient"] == "jax"


# --------------------------------------------------------- finite differences
def test_finite_differences_equal_analytic_gradients_at_any_feature_scale():
    rng = np.random.default_rng(4)
    n = 300
    X = np.column_stack([rng.normal(0, 1e-3, n), rng.normal(0, 1, n), rng.normal(5e3, 1e3, n)])
    calls = []

    def f(Z):
        calls.append(len(Z))
        return np.sin(Z[:, 0] * 1e3) + Z[:, 1] ** 3 + np.exp(Z[:, 2] / 1e3) * Z[:, 1]

    analytic = np.column_stack([1e3 * np.cos(X[:, 0] * 1e3),
                                3 * X[:, 1] ** 2 + np.exp(X[:, 2] / 1e3),
                                np.exp(X[:, 2] / 1e3) / 1e3 * X[:, 1]])
    effects = ml.dale(f, X, bins=5)
    # the one row that tells its outputs (asked when it is wrapped), a two-row probe (does
    # it take torch tensors? torch is loaded in this session), then every feature's shifted
    # rows in one engine pass: 2 n rows per feature, plus the check at a wider step on 256
    # of them, in one model call
    assert calls[-1] == 2 * n * 3 + 2 * 256 * 3 and calls[:-1] in ([1], [1, 2])
    for j in range(3):
        eff = effects[f"x{j}"]
        assert eff.extra["gradient"] == "finite_differences"
        np.testing.assert_allclose(eff.local_effects, analytic[:, j], rtol=1e-5,
                                   atol=1e-6 * np.abs(analytic[:, j]).max())


def test_finite_differences_of_an_estimator_and_a_classifier():
    from sklearn.linear_model import LinearRegression, LogisticRegression

    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 3))
    y = X @ [1.0, -2.0, 0.5]
    reg = LinearRegression().fit(X, y)
    eff = ml.dale(reg, X, bins=4)
    for j in range(3):
        np.testing.assert_allclose(eff[f"x{j}"].local_effects, reg.coef_[j], rtol=1e-7)
    clf = LogisticRegression().fit(X, y > 0)
    p = clf.predict_proba(X)[:, 1]
    eff = ml.dale(clf, X, features="x1", bins=4)["x1"]
    np.testing.assert_allclose(eff.local_effects, clf.coef_[0, 1] * p * (1 - p), rtol=1e-5)
    assert np.isfinite(eff.band.lower).all() and np.isfinite(eff.band.upper).all()
    assert (eff.band.upper - eff.band.lower > 0).any()  # a band, not the curve twice
