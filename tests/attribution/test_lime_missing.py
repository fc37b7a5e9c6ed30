"""LIME on data with missing values: drawn at the data's own missing rate."""

import numpy as np
import pandas as pd
import pytest

import modellens as ml


def _data(n=500, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    X["g"] = pd.Categorical(rng.choice(["u", "v", "w"], n))
    y = 2 * X["a"] - X["b"] + (X["g"] == "v") * 1.5
    X.loc[rng.random(n) < 0.2, "a"] = np.nan
    X.loc[rng.random(n) < 0.05, "g"] = np.nan
    return X, y


def _model(X, y):
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(max_iter=30, categorical_features="from_dtype",
                                         random_state=0).fit(X, y)


class _Rows:
    """Keeps every frame the model is asked to predict."""

    def __init__(self, model):
        self.frames, self._inner = [], model.predict
        model.predict = self

    def __call__(self, X):
        self.frames.append(X.copy())
        return self._inner(X)


@pytest.mark.parametrize("discretize", ["quartile", "decile", None])
def test_lime_samples_missing_values_at_the_training_rate(discretize):
    X, y = _data()
    model = _model(X, y)
    spy = _Rows(model)
    num_samples = 4000
    rows = X.iloc[[1, 2]]
    attr = ml.lime(model, rows, training_data=X, num_samples=num_samples,
                   discretize=discretize, random_state=3)
    assert np.all(np.isfinite(attr.values))
    # every row the model saw: the draws and the two explained rows (one each, negligible)
    drawn = pd.concat(spy.frames, ignore_index=True)
    assert len(drawn) >= 2 * (num_samples - 1)
    for column in ("a", "g"):
        rate = X[column].isna().mean()
        got = drawn[column].isna().mean()
        sd = np.sqrt(rate * (1 - rate) / len(drawn))
        assert abs(got - rate) < 5 * sd, (column, got, rate)
    for column in ("b", "c"):
        assert not drawn[column].isna().any()
    # the same seed, the same numbers
    again = ml.lime(model, rows, training_data=X, num_samples=num_samples,
                    discretize=discretize, random_state=3)
    np.testing.assert_array_equal(attr.values, again.values)


def test_an_explained_row_with_a_missing_value_reads_missing_as_its_own_bin():
    X, y = _data()
    model = _model(X, y)
    row = X[X["a"].isna()].iloc[:1]
    attr = ml.lime(model, row, training_data=X, num_samples=2000, random_state=0)
    assert attr.extra["conditions"][0][0] == "a is missing"
    assert np.all(np.isfinite(attr.values))


def test_model_without_missing_value_support_says_why():
    from sklearn.linear_model import LinearRegression

    X, y = _data()
    numeric = X[["a", "b", "c"]]
    model = LinearRegression().fit(numeric.fillna(0), y)
    with pytest.raises(ml.ModelError, match="NaN"):
        ml.lime(model, numeric.dropna().iloc[:1], training_data=numeric, num_samples=200,
                random_state=0)


def test_a_first_bin_of_the_minimum_alone_reads_as_equality():
    # fares: a third of the tickets free, so the first quartile edge is the minimum
    rng = np.random.default_rng(0)
    fare = np.where(rng.random(400) < 0.35, 0.0, rng.exponential(30, 400))
    X = pd.DataFrame({"fare": fare, "age": rng.normal(40, 10, 400)})
    f = lambda df: np.log1p(df["fare"].to_numpy()) + 0.01 * df["age"].to_numpy()  # noqa: E731
    attr = ml.lime(f, X[X["fare"] == 0].iloc[:1], training_data=X, num_samples=300,
                   random_state=0)
    assert attr.extra["conditions"][0][0] == "fare = 0"
