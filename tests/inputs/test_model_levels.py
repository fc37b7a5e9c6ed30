"""A column the model takes as categorical is explained at the model's levels.

A CSV or Parquet file gives an integer-coded category (hours, codes) as plain
integers; a numeric grid between the levels would send rows down the
model's unknown-category branch without an error.  Every method reads the
model's levels instead, and never hands the model a value it did not see as
a level.
"""

import numpy as np
import pandas as pd
import pytest

import modellens as ml

#: Integer levels that are not 0..k-1 (codes and values differ), more of them than the
#: default grid has points (a column with fewer values gets a grid at its values anyway).
LEVELS = 2 * np.arange(24) + 1


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    level = rng.choice(LEVELS, n)
    x = rng.normal(size=n)
    # a non-monotone effect of the level: no numeric reading matches it
    y = 4 * np.sin(level) + x + 0.1 * rng.normal(size=n)
    return pd.DataFrame({"hour": level, "x": x}), y


def _as_file(frame, tmp_path, kind):
    """The frame written to and read back from a file: integer columns stay integers."""
    if kind == "csv":
        path = tmp_path / "data.csv"
        frame.to_csv(path, index=False)
        return pd.read_csv(path)
    pytest.importorskip("pyarrow")
    path = tmp_path / "data.parquet"
    frame.to_parquet(path, index=False)
    return pd.read_parquet(path)


def _hgb(kind, X, y):
    from sklearn.ensemble import HistGradientBoostingRegressor

    if kind == "hgb-dtype":
        fit = X.astype({"hour": "category"})
        spec = "from_dtype"
    else:
        fit = X
        spec = ["hour"] if kind == "hgb-name" else [True, False]
    return HistGradientBoostingRegressor(max_iter=30, categorical_features=spec,
                                         random_state=0).fit(fit, y), fit


def _model(kind, X, y):
    if kind.startswith("hgb"):
        return _hgb(kind, X, y)
    if kind == "xgboost":
        xgb = pytest.importorskip("xgboost")
        fit = X.astype({"hour": "category"})
        return xgb.XGBRegressor(n_estimators=20, max_depth=3, enable_categorical=True,
                                tree_method="hist", max_cat_to_onehot=1).fit(fit, y), fit
    lgb = pytest.importorskip("lightgbm")
    if kind == "lightgbm-dtype":
        fit = X.astype({"hour": "category"})
        return lgb.LGBMRegressor(n_estimators=20, min_child_samples=5, verbose=-1).fit(fit, y), \
            fit
    return lgb.LGBMRegressor(n_estimators=20, min_child_samples=5, min_data_per_group=5,
                             cat_smooth=1, verbose=-1).fit(X, y, categorical_feature=["hour"]), X


def _in_fit_form(rows, fit):
    """``rows`` with the dtypes the model was fit on (what the user would pass it)."""
    return rows.astype(fit.dtypes.to_dict())


class _Spy:
    """Records the values of ``hour`` every call of the model receives."""

    def __init__(self, model):
        self.model = model
        self.seen = set()
        self.predict = self._predict
        self._inner = model.predict

    def install(self):
        self.model.predict = self._predict  # an instance attribute: the method is shadowed
        return self.model

    def _predict(self, X):
        col = X["hour"] if isinstance(X, pd.DataFrame) else X[:, 0]
        values = pd.Series(np.asarray(col, dtype=object)).dropna().astype(float)
        self.seen.update(values.tolist())
        return self._inner(X)


KINDS = ["hgb-name", "hgb-mask", "hgb-dtype", "xgboost", "lightgbm", "lightgbm-dtype"]


@pytest.mark.parametrize("source", ["csv", "parquet"])
@pytest.mark.parametrize("kind", KINDS)
def test_pd_of_integer_categories_is_at_the_models_levels(kind, source, tmp_path):
    X, y = _data()
    model, fit = _model(kind, X, y)
    data = _as_file(X, tmp_path, source)
    assert pd.api.types.is_integer_dtype(data["hour"])  # as a file delivers it
    spy = _Spy(model)
    spy.install()
    effect = ml.pdp(model, data, ["hour"], ice=True)["hour"]
    np.testing.assert_array_equal(np.asarray(effect.grid, dtype=float), LEVELS)
    # every value the model received is one of its levels
    assert spy.seen <= set(LEVELS.astype(float))
    # brute force: the mean prediction with the column set to each level, in the fit form
    expected = []
    for level in LEVELS:
        rows = data.copy()
        rows["hour"] = level
        expected.append(np.mean(spy._inner(_in_fit_form(rows, fit))))
    np.testing.assert_allclose(effect.values, expected, rtol=0, atol=1e-6)
    # a non-flat effect: the levels are told apart (the unknown branch would be flat)
    assert np.ptp(effect.values) > 3


@pytest.mark.parametrize("kind", KINDS)
def test_attributions_of_integer_categories(kind, tmp_path):
    X, y = _data()
    model, fit = _model(kind, X, y)
    data = _as_file(X, tmp_path, "csv")
    spy = _Spy(model)
    spy.install()
    prediction = spy._inner(_in_fit_form(data.iloc[:5], fit))
    for algorithm in ("auto", "permutation"):
        attr = ml.shapley(model, data.iloc[:5], background=data.iloc[:40], algorithm=algorithm,
                          random_state=0)
        np.testing.assert_allclose(attr.base_values + attr.values.sum(axis=1), prediction,
                                   atol=1e-5)
    lime = ml.lime(model, data.iloc[:3], training_data=data, num_samples=300, random_state=0)
    assert np.all(np.isfinite(lime.values))
    ale = ml.ale(model, data, ["hour"])["hour"]
    assert sorted(np.asarray(ale.grid, dtype=float).tolist()) == sorted(LEVELS.tolist())
    assert spy.seen <= set(LEVELS.astype(float))


def test_pipeline_encoder_levels_are_the_grid():
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    X, y = _data()
    pipe = make_pipeline(ColumnTransformer([("hour", OneHotEncoder(handle_unknown="ignore"),
                                             ["hour"])], remainder="passthrough"),
                         Ridge(alpha=1e-3)).fit(X, y)
    effect = ml.pdp(pipe, X, ["hour"])["hour"]
    np.testing.assert_array_equal(np.asarray(effect.grid, dtype=float), LEVELS)
    expected = [pipe.predict(X.assign(hour=level)).mean() for level in LEVELS]
    np.testing.assert_allclose(effect.values, expected, atol=1e-9)


def test_array_input_with_a_categorical_mask():
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = _data()
    A = X.to_numpy()
    model = HistGradientBoostingRegressor(max_iter=20, categorical_features=[True, False],
                                          random_state=0).fit(A, y)
    effect = ml.pdp(model, A, [0])["x0"]
    np.testing.assert_array_equal(np.asarray(effect.grid, dtype=float), LEVELS)
    expected = []
    for level in LEVELS:
        rows = A.copy()
        rows[:, 0] = level
        expected.append(model.predict(rows).mean())
    np.testing.assert_allclose(effect.values, expected, atol=1e-9)


def test_values_the_model_never_saw_are_named():
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = _data()
    model = HistGradientBoostingRegressor(max_iter=10, categorical_features=["hour"]).fit(X, y)
    data = X.copy()
    data.loc[0, "hour"] = 4  # not a level of the model
    with pytest.warns(ml.ModellensWarning, match="reads as unknown"):
        ml.pdp(model, data, ["hour"])


@pytest.mark.parametrize("dtype", ["str", "category"])
def test_text_levels_the_model_never_saw_are_named(dtype):
    # a one-hot encoder with handle_unknown="ignore" reads a level it never saw as no level
    # at all: the PD at "Rome" was the all-zeros encoding's prediction, shown as an effect
    # without a word (integer-coded categories warned already)
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(3)
    X = pd.DataFrame({"city": rng.choice(["Oslo", "Lima", "Pune"], 300), "x": rng.normal(size=300)})
    y = X["city"].map({"Oslo": 5.0, "Lima": 1.0, "Pune": 3.0}) + X["x"]
    model = make_pipeline(make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["city"]), remainder="passthrough"),
        LinearRegression()).fit(X, y)
    data = X.copy()
    data.loc[:9, "city"] = "Rome"
    data["city"] = data["city"].astype(dtype)
    if dtype == "category":  # a level of the dtype that no row holds is not named
        data["city"] = data["city"].cat.add_categories(["Bern"])
    calls = [lambda: ml.pdp(model, data, ["city"]), lambda: ml.ale(model, data, ["city"]),
             lambda: ml.shapley(model, data.iloc[:2], background=data.iloc[:40],
                                algorithm="exact"),
             lambda: ml.lime(model, data.iloc[:1], training_data=data, num_samples=200,
                             random_state=0)]
    for call in calls:
        with pytest.warns(ml.ModellensWarning, match=r"knows the levels \['Lima', 'Oslo', "
                          r"'Pune'\]; the data also hold \['Rome'\], which the model reads as "
                          r"unknown") as record:
            call()
        assert not any("Bern" in str(w.message) for w in record)
    # the background alone holding the unseen level is named too
    with pytest.warns(ml.ModellensWarning, match=r"\['Rome'\]"):
        ml.shapley(model, X.iloc[:2].astype({"city": data["city"].dtype}) if dtype == "str"
                   else X.iloc[:2], background=data.iloc[:40], algorithm="exact")
    # data inside the model's levels: no warning
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", ml.ModellensWarning)
        ml.pdp(model, X, ["city"])


def test_report_says_unknown_levels_once():
    # every method of the report warns about the unseen level: the page says it once, in
    # the data section's notes, not again in every section
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(4)
    X = pd.DataFrame({"city": rng.choice(["Oslo", "Lima"], 200), "x": rng.normal(size=200)})
    y = (X["city"] == "Oslo") * 2.0 + X["x"]
    model = make_pipeline(make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["city"]), remainder="passthrough"),
        LinearRegression()).fit(X, y)
    data = X.assign(city=X["city"].where(np.arange(200) >= 10, "Rome"))
    with pytest.warns(ml.ModellensWarning, match="Rome"):  # the console is told once too
        report = ml.report(model, data, y, sections=["data", "effects", "shapley"],
                           interactive=False, random_state=0)
    texts = [w for sec in report.sections.values() for w in sec.warnings]
    assert sum("levels the model never saw (such as 'Rome')" in t for t in texts) == 1
    assert not any("categorical to the model" in t for t in texts)
