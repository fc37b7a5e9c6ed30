"""DALE refuses or warns where its derivatives would not be the model's: trees, steps, data changed after the call; autograd for functions on tensors."""

import warnings

import numpy as np
import pytest

import modellens as ml
from modellens import InvalidParameterError, ModellensWarning


def _regression(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 3))
    y = X[:, 0] ** 2 + 2 * X[:, 1] + rng.normal(0, 0.1, n)
    return X, y


def test_dale_refuses_tree_models_and_pipelines_ending_in_one():
    from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _regression()
    hgb = HistGradientBoostingRegressor(max_iter=20).fit(X, y)
    with pytest.raises(InvalidParameterError, match="HistGradientBoostingRegressor is a tree "
                                                    "model.*ml.ale"):
        ml.dale(hgb, X)
    pipe = make_pipeline(StandardScaler(), RandomForestRegressor(n_estimators=5)).fit(X, y)
    with pytest.raises(InvalidParameterError, match="RandomForestRegressor"):
        ml.dale(pipe, X, gradient="finite_differences")
    # with derivatives given, the model itself is not differentiated: allowed
    grad = lambda A: np.zeros(A.shape)  # noqa: E731
    assert ml.dale(hgb, X, gradient=grad)["x0"].extra["gradient"] == "callable"


def test_dale_warns_when_finite_differences_meet_a_step_function():
    X, _ = _regression()
    steps = lambda A: np.floor(3 * A[:, 0]) + A[:, 1]  # noqa: E731
    with pytest.warns(ModellensWarning, match=r"unreliable for 'x0': at 100% of the \d+ of 256"):
        out = ml.dale(steps, X)
    # the smooth feature of the same model gets no warning, a smooth model none at all
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModellensWarning)
        ml.dale(steps, X, features="x1")
        ml.dale(lambda A: np.sin(A[:, 0]) * A[:, 1] + A[:, 2] ** 3, X)
        ml.dale(lambda A: A[:, 1] * 0.0 + A[:, 0], X)  # a feature the model ignores
    assert np.ptp(out["x1"].values) == pytest.approx(4 * 1.0, rel=0.05)


def test_a_function_on_tensors_gets_autograd():
    torch = pytest.importorskip("torch")
    X, _ = _regression()
    f = lambda x: torch.sin(x[:, 0]) * x[:, 1]  # noqa: E731
    out = ml.dale(f, X)
    assert out["x0"].extra["gradient"] == "torch"
    np.testing.assert_allclose(out["x0"].local_effects, np.cos(X[:, 0]) * X[:, 1], rtol=1e-5,
                               atol=1e-6)  # float32: torch's default dtype
    with pytest.raises(InvalidParameterError, match="gradient='torch' needs a torch.nn.Module"):
        ml.dale(lambda A: np.sin(A[:, 0]), X, gradient="torch")


def test_rebin_refuses_data_changed_in_place_after_the_call():
    rng = np.random.default_rng(13)
    X = rng.uniform(-1, 1, size=(300, 2))
    grad = lambda A: np.column_stack([2 * A[:, 0], np.ones(len(A))])  # noqa: E731
    eff = ml.dale(lambda A: A[:, 0] ** 2 + A[:, 1], X, bins=5, gradient=grad)["x0"]
    again = eff.rebin(4)  # fine while X is as it was; the re-binned effect keeps the check
    np.testing.assert_array_equal(again.values, eff.rebin(4).values)
    X[:, 0] = rng.permutation(X[:, 0])
    for effect in (eff, again):
        with pytest.raises(InvalidParameterError, match="changed after ml.dale"):
            effect.rebin(3)
