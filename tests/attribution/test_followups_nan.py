"""A model that answers NaN on rows a method builds is refused with the row, never averaged."""

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.models import ModelError


def _undefined_at_the_background():
    X = np.random.default_rng(0).normal(size=(40, 4))
    background = X[:10]

    def model(A):
        # defined on X's rows, NaN once feature 0 takes the first background row's value:
        # only rows the sampling estimators build (coalitions) reach it
        A = np.asarray(A, dtype=float)
        out = A.sum(axis=1)
        out[A[:, 0] == background[0, 0]] = np.nan
        return out

    assert np.isfinite(model(X[20:22])).all()
    return model, X[20:22], background


@pytest.mark.parametrize("kw", [dict(algorithm="permutation", n_permutations=20),
                                dict(algorithm="kernel", n_samples=40),
                                dict(algorithm="kernel", tol=0.05),
                                dict(algorithm="exact")])
def test_nan_on_coalition_rows_is_an_error_naming_a_row(kw):
    model, rows, background = _undefined_at_the_background()
    with pytest.raises(ModelError) as caught:
        ml.shapley(model, rows, background=background, random_state=0, **kw)
    message = str(caught.value)
    assert message.startswith("the model returned NaN or inf for ")
    # the row shown is one the model refused: feature 0 at the background's value
    assert f"{{x0={background[0, 0]:.6g}, x1=" in message
    assert "Every row a method builds from X and the background" in message


def test_a_categorical_row_is_shown_with_its_label():
    X = pd.DataFrame({"a": np.linspace(-1, 1, 30),
                      "e": pd.Categorical(np.where(np.arange(30) % 2, "u", "v"))})

    def model(F):
        out = F["a"].to_numpy(dtype=float).copy()
        out[(F["e"] == "v").to_numpy() & (F["a"].to_numpy() > 0.5)] = np.inf
        return out

    with pytest.raises(ModelError, match=r"The first: \{a=[0-9.]+, e='v'\}"):
        ml.pdp(model, X, ["a"])
