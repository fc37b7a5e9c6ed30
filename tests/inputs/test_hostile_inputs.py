"""Small hostile inputs: duplicate names, outputs of the wrong kind, predictions near overflow."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.models import _answers as adapter


def _frame(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])


def _f(A):
    return np.asarray(A, dtype=float)[:, 0]


@pytest.mark.parametrize("call", [
    lambda X: ml.shapley(_f, X[:2], background=X),
    lambda X: ml.lime(_f, X[:2], training_data=X),
    lambda X: ml.pdp(_f, X),
], ids=["shapley", "lime", "pdp"])
def test_duplicate_column_names_are_one_clear_error_everywhere(call):
    X = _frame().set_axis(["a", "a", "b"], axis=1)
    with pytest.raises(ml.InvalidParameterError, match=r"X has duplicate column names \['a'\]"):
        call(X)


@pytest.mark.parametrize("what", ["background", "training_data"])
def test_duplicate_names_in_the_second_table_are_named(what):
    X = _frame()
    other = X.set_axis(["a", "b", "b"], axis=1)
    with pytest.raises(ml.InvalidParameterError, match=rf"{what} has duplicate column names"):
        if what == "background":
            ml.shapley(_f, X[:2], background=other)
        else:
            ml.lime(_f, X[:2], training_data=other)


def test_duplicate_feature_names_of_an_array_are_refused():
    X = _frame().to_numpy()
    with pytest.raises(ml.InvalidParameterError, match="feature_names has duplicate"):
        ml.shapley(_f, X[:2], background=X, feature_names=["a", "b", "a"])


@pytest.mark.parametrize("model, what", [
    (lambda A: np.asarray(A)[:, 0].astype(str), "text"),
    (lambda A: np.asarray(A)[:, 0] > 0, "True/False values"),
    (lambda A: np.asarray(A)[:, 0] + 1j, "complex numbers"),
    (lambda A: pd.Series(np.asarray(A)[:, 0] > 0, dtype=object).to_numpy(), "True/False"),
    (lambda A: np.array(["yes"] * len(A), dtype=object), "text"),
], ids=["str", "bool", "complex", "object-bool", "object-str"])
def test_outputs_that_are_not_numbers_are_refused(model, what):
    with pytest.raises(ml.ModelError, match=what):
        ml.pdp(model, _frame(), ["a"], grid=3)


@pytest.mark.parametrize("model", [
    lambda A: np.asarray(A)[:, :1],  # (n, 1): one output per row
    lambda A: list(np.asarray(A)[:, 0]),
    lambda A: np.asarray(A)[:, 0].astype(object),  # numbers in an object array
    lambda A: np.asarray(A)[:, 0].astype(np.float32),
], ids=["n-by-1", "list", "object-floats", "float32"])
def test_numeric_outputs_of_other_forms_give_the_same_effect(model):
    X = _frame()
    ref = ml.pdp(_f, X, ["a"], grid=4)["a"].values
    assert np.allclose(ml.pdp(model, X, ["a"], grid=4)["a"].values, ref, rtol=1e-6)


@pytest.mark.parametrize("model, shape", [
    (lambda A: np.asarray(A)[:, 0][None, :], "(1, "),
    (lambda A: 1.0, "shape ()"),
], ids=["1-by-n", "scalar"])
def test_outputs_that_would_broadcast_are_refused(model, shape):
    with pytest.raises(ml.ModelError, match=re.escape(shape)):
        ml.pdp(model, _frame(), ["a"], grid=3)


def _huge(A):
    # finite, but their sums overflow float64
    return np.where(np.asarray(A)[:, 0] > 0, 1.6e308, 1.5e308)


@pytest.mark.parametrize("method", ["pdp", "ale", "mplot", "shapley", "lime"])
def test_predictions_near_the_float64_limit_are_refused_with_the_reason(method):
    X = _frame()
    calls = {"pdp": lambda: ml.pdp(_huge, X, ["a"]), "ale": lambda: ml.ale(_huge, X, ["a"]),
             "mplot": lambda: ml.mplot(_huge, X, ["a"]),
             "shapley": lambda: ml.shapley(_huge, X[:2], background=X[:20]),
             "lime": lambda: ml.lime(_huge, X[:2], training_data=X, num_samples=100)}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow reached numpy
        with pytest.raises(ml.ModelError, match="overflow"):
            calls[method]()


def test_large_predictions_below_the_limit_are_exact():
    # 2**900 (about 8e270): sums of billions of them still fit in float64; PD is exact
    X = _frame()
    scale = 2.0 ** 900
    pd_a = ml.pdp(lambda A: scale * (1 + np.asarray(A)[:, 0]), X, ["a"], grid=4)["a"]
    assert np.allclose(pd_a.values / scale, 1 + np.asarray(pd_a.grid, dtype=float),
                       rtol=1e-12)
    assert scale < adapter.MAX_MAGNITUDE < np.finfo(np.float64).max / 2 ** 15


@pytest.mark.parametrize("method", ["mplot", "interactions"])
def test_results_that_overflow_below_the_seams_limit_are_refused(method):
    # up to 2.6e303 per prediction passes the seam; an M-plot's running sum over 150,000
    # of them and the H statistic's squares overflow (inf / NaN values, an OverflowError)
    n = 150_000 if method == "mplot" else 500
    X = pd.DataFrame(np.random.default_rng(3).uniform(1, 2, size=(n, 2)), columns=["a", "b"])

    def f(A):
        return 1.3e303 * np.asarray(A)[:, 0]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ml.ModelError, match="overflowed"):
            if method == "mplot":
                ml.mplot(f, X, ["a"])
            else:
                ml.interactions(f, X, sample=100)


def test_huge_answers_of_several_outputs_are_refused_as_one_output_is():
    # the seam's magnitude check and the engine's overflow bookkeeping cover (n, k) answers
    X = np.random.default_rng(0).normal(size=(40, 2))
    with pytest.raises(ml.ModelError, match="magnitude"):
        ml.predict(lambda A: np.column_stack([A[:, 0] * 1e305, A[:, 1]]), X)
    with pytest.raises(ml.ModelError, match="magnitude"):
        ml.ale(lambda A: np.column_stack([A[:, 0] * 1e306, A[:, 1]]), X, bins=4)


def test_a_model_that_raises_says_so_when_outputs_are_named():
    X = np.random.default_rng(0).normal(size=(40, 2))

    def broken(A):
        raise RuntimeError("a bug inside the model")

    with pytest.raises(ml.ModelError, match="raised RuntimeError.*a bug inside the model"):
        ml.pdp(broken, X, target=[0, 1])
