"""The warnings a program reads carry their facts as fields (issue 46): no text to parse."""

import warnings

import numpy as np
import pandas as pd
import pytest

import modellens as ml


def _caught(call, category):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [w.message for w in caught if issubclass(w.category, category)]


def test_missing_values_warning_carries_column_counts_and_use():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=80), "b": rng.normal(size=80)})
    X.loc[[3, 7, 11], "b"] = np.nan
    model = lambda D: np.nan_to_num(D["a"].to_numpy()) + np.nan_to_num(D["b"].to_numpy())  # noqa: E731
    found = _caught(lambda: ml.ale(model, X, ["a", "b"], bins=4), ml.MissingValuesWarning)
    assert len(found) == 1
    w = found[0]
    assert isinstance(w, ml.ModellensWarning)
    assert (w.column, w.n_missing, w.n_rows, w.used_for) == ("b", 3, 80, "ALE bins")
    assert str(w) == "3 of 80 rows have a missing value in 'b'; they are left out of its ALE bins."
    found = _caught(lambda: ml.pdp(model, X, ["b"], grid=3), ml.MissingValuesWarning)
    assert [(w.column, w.used_for) for w in found] == [("b", "grid")]


@pytest.mark.parametrize("dtype", ["str", "category"])
def test_unknown_levels_warning_carries_the_levels(dtype):
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(3)
    X = pd.DataFrame({"city": rng.choice(["Oslo", "Lima"], 200), "x": rng.normal(size=200)})
    y = X["city"].map({"Oslo": 5.0, "Lima": 1.0}) + X["x"]
    model = make_pipeline(make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["city"]), remainder="passthrough"),
        LinearRegression()).fit(X, y)
    data = X.copy()
    data.loc[0, "city"] = "Rome"
    data["city"] = data["city"].astype(dtype)
    found = _caught(lambda: ml.pdp(model, data, ["city"]), ml.UnknownLevelsWarning)
    assert found, "no UnknownLevelsWarning"
    w = found[0]
    assert isinstance(w, ml.ModellensWarning)
    assert w.column == "city" and w.unknown_levels == ["Rome"]
    assert sorted(w.known_levels) == ["Lima", "Oslo"]
