"""Small calls run the tree kernels' serial twins: the same bits as the threaded kernels."""

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.trees import kernels as K


def _data():
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(400, 5)), columns=list("abcde"))
    X["c"] = pd.Categorical(rng.choice(["x", "y", "z"], 400))
    y = X["a"] * X["b"] + (X["c"] == "y") * X["d"] + rng.normal(0, 0.1, 400)
    return X, y


@pytest.mark.parametrize("index", ["shapley", "banzhaf"])
def test_serial_twins_give_the_same_values(monkeypatch, index):
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = _data()
    model = HistGradientBoostingRegressor(max_iter=30, categorical_features="from_dtype",
                                          random_state=0).fit(X, y)
    calls = []
    plain = K.sized

    def run(force):
        def pick(kernel, rows, *, limit=K.SERIAL_ROWS, work=0):
            chosen = plain(kernel, 0 if force == "serial" else np.inf)
            calls.append(chosen is not kernel)
            return chosen
        monkeypatch.setattr(K, "sized", pick)
        attr = ml.shapley(model, X.iloc[:60], background=X.iloc[100:180], algorithm="tree",
                          index=index, progress=False)
        path = ml.shapley(model, X.iloc[:60], algorithm="tree", index=index, progress=False,
                          interactions=index == "shapley")
        inter = ml.interactions(model, X, sample=200, method="tree", random_state=0,
                                progress=False)
        # exact tree ICE (PD and ALE from the trees run the same kernel)
        curves = ml.pdp(model, X.iloc[:60], method="tree", grid=5, progress=False)
        pairs = path.interactions if index == "shapley" else path.values
        return (attr.values, path.values, pairs, inter.pairwise.to_numpy(),
                *[curves[name].values for name in X.columns])

    serial = run("serial")
    assert calls and all(calls)
    calls.clear()
    threaded = run("threaded")
    assert calls and not any(calls)
    for a, b in zip(serial, threaded):
        np.testing.assert_array_equal(a, b)


def test_small_calls_take_the_serial_twin_and_large_ones_the_threaded_kernel():
    assert K.sized(K.leaf_values, K.SERIAL_ROWS) is K.leaf_values
    twin = K.sized(K.leaf_values, 10)
    assert twin is not K.leaf_values and twin is K.sized(K.leaf_values, 5)
    assert twin.py_func.__qualname__ == "leaf_values_serial"
    assert not twin.targetoptions.get("parallel")


def test_smoke_no_kernel_is_typed_on_a_literal():
    """In this process, whatever ran before, no tree kernel holds a signature typed on a
    literal (a literal 0 typed ``Literal[int](0)`` and compiled a kernel twice).  The check
    that each kernel is compiled once for one type, in a fresh process on the cache warm_up
    filled, is in tests/report/test_warm_up.py."""
    import numba

    from modellens.datasets import load_demo

    m, X, _ = load_demo()
    ml.shapley(m, X[:2], background=X[:2], algorithm="tree", progress=False)
    ml.shapley(m, X[:3], algorithm="tree", progress=False)
    ml.interactions(m, X[:3], sample=None, method="tree", progress=False)
    typed = {name: f.signatures for name, f in vars(K).items()
             if isinstance(f, numba.core.registry.CPUDispatcher)}
    assert typed and any(typed.values())
    literal = {name: sigs for name, sigs in typed.items() if "Literal" in str(sigs)}
    assert not literal, literal
