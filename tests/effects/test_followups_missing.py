"""Missing values in a feature are said once per call, whatever the number of outputs."""

import warnings

import numpy as np
import pytest

import modellens as ml
from modellens._validation import ModellensWarning


def _three_outputs(A):
    A = np.nan_to_num(A)
    return np.stack([A[:, 0] + A[:, 1], 2 * A[:, 1], A[:, 0] * A[:, 2]], axis=1)


@pytest.mark.parametrize("method, what", [("dale", "DALE bins"),
                                          ("mplot", "grid and neighbourhoods"),
                                          ("ale", "ALE bins"), ("pdp", "grid")])
def test_one_warning_per_feature_for_a_three_output_model(method, what):
    X = np.random.default_rng(0).normal(size=(300, 3))
    X[::10, 0] = np.nan
    X[::25, 2] = np.nan
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        effects = getattr(ml, method)(_three_outputs, X)
    assert effects.outputs == ["f(x)[0]", "f(x)[1]", "f(x)[2]"]
    ours = [w for w in caught if issubclass(w.category, ModellensWarning)]
    said = [str(w.message) for w in ours]
    assert said == [f"30 of 300 rows have a missing value in 'x0'; they are left out of its "
                    f"{what}.",
                    f"12 of 300 rows have a missing value in 'x2'; they are left out of its "
                    f"{what}."]
    # the warning points at the caller's line
    assert {w.filename for w in ours} == {__file__}


@pytest.mark.parametrize("method", ["dale", "mplot"])
def test_each_output_still_leaves_the_missing_rows_out(method):
    # the effect of output c equals its single-output call's (target=c), rows left out alike
    X = np.random.default_rng(1).normal(size=(200, 3))
    X[::7, 1] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModellensWarning)
        every = getattr(ml, method)(_three_outputs, X, features=["x1"])
        for c in range(3):
            one = getattr(ml, method)(_three_outputs, X, features=["x1"], target=c)
            np.testing.assert_array_equal(every["x1"].for_output(c).values, one["x1"].values)
    assert every["x1"].for_output(0).counts.sum() == 200 - len(range(0, 200, 7))
