"""Data and model handling: pandas through Pipelines, and bad input."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import modellens as ml


@pytest.fixture(scope="module")
def frame_pipeline():
    rng = np.random.default_rng(0)
    n = 240
    X = pd.DataFrame({
        "age": rng.uniform(20, 70, n),
        "income": rng.normal(50, 10, n),
        "city": pd.Categorical(rng.choice(["Oslo", "Rome", "Lima"], n)),
        "plan": pd.Series(rng.choice(["basic", "pro"], n), dtype="str"),
        "legacy": pd.Series(rng.choice(["x", "y"], n), dtype=object),
    })
    city = X["city"].map({"Oslo": 1.0, "Rome": -1.0, "Lima": 0.0}).astype(float)
    y = 0.05 * X["age"] + 0.1 * X["income"] + city + (X["plan"] == "pro") * 2.0
    pre = ColumnTransformer([
        ("num", StandardScaler(), ["age", "income"]),
        ("cat", OneHotEncoder(handle_unknown="ignore"), ["city", "plan", "legacy"]),
    ])
    model = make_pipeline(pre, Ridge(alpha=1e-6)).fit(X, y)
    return model, X


def test_pipeline_with_categorical_and_string_columns(frame_pipeline):
    model, X = frame_pipeline
    before = X.copy(deep=True)
    dtypes = X.dtypes.copy()
    effects = ml.pdp(model, X, features=["age", "city", "plan", "legacy", ("age", "city")],
                     ice=True)
    # the model is linear in the one-hot codes: PD differences equal the fitted coefficients
    city = effects["city"]
    assert set(city.grid) == {"Lima", "Oslo", "Rome"}
    by_level = dict(zip(city.grid, city.values))
    assert by_level["Oslo"] - by_level["Rome"] == pytest.approx(2.0, abs=1e-3)
    plan = dict(zip(effects["plan"].grid, effects["plan"].values))
    assert plan["pro"] - plan["basic"] == pytest.approx(2.0, abs=1e-3)
    age = effects["age"]
    assert np.polyfit(age.grid, age.values, 1)[0] == pytest.approx(0.05, abs=1e-4)
    pair = effects[("age", "city")]
    assert pair.values.shape == (20, 3)
    for name, eff in (("mplot", ml.mplot(model, X)),):
        assert list(eff) == list(X.columns), name
    # the caller's frame is untouched, dtypes included
    pd.testing.assert_frame_equal(X, before)
    pd.testing.assert_series_equal(X.dtypes, dtypes)


def test_model_receives_frame_with_original_dtypes(frame_pipeline):
    _, X = frame_pipeline
    seen = []

    def f(df):
        seen.append(df)
        return np.zeros(len(df))

    ml.pdp(f, X, features="city", grid=3)
    got = seen[0]
    assert list(got.columns) == list(X.columns)
    assert isinstance(got["city"].dtype, pd.CategoricalDtype)
    assert got["city"].dtype == X["city"].dtype
    assert got["plan"].dtype == X["plan"].dtype
    assert got["legacy"].dtype == object
    assert set(got["legacy"]) <= {"x", "y"}


def test_array_model_fed_array_even_if_frame_given():
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(50, 2)), columns=["a", "b"])
    lm = LinearRegression().fit(X.to_numpy(), X["a"] * 2)
    eff = ml.pdp(lm, X, features="a")["a"]  # no "fitted without feature names" warning
    assert np.polyfit(eff.grid, eff.values, 1)[0] == pytest.approx(2)


def test_nan_in_explained_feature_left_out_with_count():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 2))
    X[:7, 0] = np.nan
    original = X.copy()
    with pytest.warns(UserWarning, match="7 of 100 rows have a missing value in 'x0'"):
        eff = ml.pdp(lambda A: np.nan_to_num(A).sum(axis=1), X, features=0)["x0"]
    assert np.isfinite(eff.grid).all()
    assert eff.grid.min() == pytest.approx(np.nanmin(X[:, 0]))
    with pytest.warns(UserWarning, match="7 of 100"):
        m = ml.mplot(lambda A: np.nan_to_num(A).sum(axis=1), X, features=0)["x0"]
    assert m.counts.sum() == 93
    np.testing.assert_array_equal(X, original)


def test_nan_elsewhere_reaches_model_and_nan_output_is_explained():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 3))
    X[5:9, 2] = np.nan
    hgb = HistGradientBoostingRegressor(max_iter=10).fit(X, X[:, 0])
    eff = ml.pdp(hgb, X, features=0)["x0"]  # tree models accept NaN
    assert np.isfinite(eff.values).all()
    with pytest.raises(ml.ModelError, match=r"NaN or inf for .* X holds NaN in 4 rows "
                                            r"\(columns \['x2'\]\)"):
        ml.pdp(lambda A: A.sum(axis=1), X, features=0)


def test_inf_unknown_feature_empty_and_shapes():
    X = np.random.default_rng(4).normal(size=(20, 2))
    bad = X.copy()
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match=r"infinite values in column\(s\) \['x1'\]"):
        ml.pdp(lambda A: A[:, 0], bad)
    with pytest.raises(ValueError, match=r"unknown feature 'zz'; valid names are \['x0', 'x1'\]"):
        ml.pdp(lambda A: A[:, 0], X, features="zz")
    with pytest.raises(ValueError, match="out of range"):
        ml.pdp(lambda A: A[:, 0], X, features=5)
    with pytest.raises(ValueError, match="no rows"):
        ml.pdp(lambda A: A[:, 0], X[:0])
    with pytest.raises(ValueError, match="2-D"):
        ml.pdp(lambda A: A[:, 0], X[:, 0])
    with pytest.raises(ValueError, match="unknown feature"):
        ml.mplot(lambda A: A[:, 0], pd.DataFrame(X, columns=["a", "b"]), features="c")


def test_model_wrong_length_shape_and_raising():
    X = np.random.default_rng(5).normal(size=(30, 2))
    with pytest.raises(ml.ModelError, match=r"returned shape \(3,\) for 600 rows; expected \(600,\)"):
        ml.pdp(lambda A: np.zeros(3), X, features=0)
    # several outputs per row are explained together, by the attributions too
    attr = ml.shapley(lambda A: np.zeros((len(A), 2)), X[:2], background=X[:5])
    assert attr.values.shape == (2, 2, 2) and attr.outputs == ["f(x)[0]", "f(x)[1]"]

    def broken(A):
        raise KeyError("column missing")

    with pytest.raises(ml.ModelError, match="the model raised KeyError while predicting") as info:
        ml.mplot(broken, X)
    assert isinstance(info.value.__cause__, KeyError)
    with pytest.raises(TypeError, match="cannot explain"):
        ml.pdp(object(), X)


def test_constant_column_gives_flat_curve():
    rng = np.random.default_rng(6)
    X = np.column_stack([np.full(50, 3.0), rng.normal(size=50)])
    lm = LinearRegression().fit(X, 2 * X[:, 1])
    eff = ml.pdp(lm, X, features=0)["x0"]
    np.testing.assert_allclose(eff.grid, [3.0])
    m = ml.mplot(lm, X, features=0)["x0"]
    assert m.counts.tolist() == [50]
    fig = ml.pdp(lm, X, ice=True).plot().flat[0].figure
    assert len(fig.axes) >= 2


def test_ndarray_of_strings_and_feature_names():
    X = np.array([["a", 1.0], ["b", 2.0], ["a", 3.0], ["c", 4.0]], dtype=object)
    seen = []

    def f(A):
        seen.append(A)
        return np.array([{"a": 0.0, "b": 1.0, "c": 2.0}[v] for v in A[:, 0]]) + A[:, 1].astype(float)

    eff = ml.pdp(f, X, features="kind", feature_names=["kind", "size"])["kind"]
    assert list(eff.grid) == ["a", "b", "c"]
    np.testing.assert_allclose(eff.values, [2.5, 3.5, 4.5])
    assert isinstance(seen[0], np.ndarray)


def test_integer_column_labels_reach_the_model_unchanged():
    X = np.random.default_rng(7).normal(size=(40, 3))
    frame = pd.DataFrame(X, columns=[2, 1, 0])
    f = lambda df: 5.0 * df[2].to_numpy() + df[0].to_numpy()  # noqa: E731
    # an integer that is a column label means that column
    eff = ml.pdp(f, frame, features=2)["2"]
    assert np.polyfit(eff.grid, eff.values, 1)[0] == pytest.approx(5.0)
    np.testing.assert_allclose(eff.grid[[0, -1]], [X[:, 0].min(), X[:, 0].max()])


def test_features_argument_errors():
    X = np.random.default_rng(8).normal(size=(30, 3))
    f = lambda A: A[:, 0]  # noqa: E731
    with pytest.raises(TypeError, match="features must be None, a name"):
        ml.pdp(f, X, features=1.0)
    with pytest.raises(TypeError, match="column name or an integer position"):
        ml.pdp(f, X, features=[1.5])
    with pytest.raises(ValueError, match="'x0' is asked for more than once"):
        ml.pdp(f, X, features=["x0", 0])


def test_pair_grid_list_is_points_and_dict_entries_apply_per_axis():
    X = np.random.default_rng(9).normal(size=(30, 3))
    f = lambda A: A[:, 0] * A[:, 1]  # noqa: E731
    eff = ml.pdp(f, X, features=[(0, 1)], grid=[3.0, 4.0])[("x0", "x1")]
    np.testing.assert_allclose(eff.grid[0], [3, 4])
    np.testing.assert_allclose(eff.grid[1], [3, 4])
    np.testing.assert_allclose(eff.values, np.outer([3, 4], [3, 4]))
    eff = ml.pdp(f, X, features=[(0, 1)], grid={"x0": [0.0, 1.0], "x1": 3})[("x0", "x1")]
    np.testing.assert_allclose(eff.grid[0], [0, 1])
    assert len(eff.grid[1]) == 3
