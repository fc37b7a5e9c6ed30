"""polars DataFrames and pyarrow Tables give the numbers of their pandas counterparts.

Each frame is built on its own from the same Python lists (never converted from
the pandas one), so a wrong conversion (levels in another order, an Enum read
as unordered, nulls read as text, a column read as text) changes the numbers
or the dtypes the model sees.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens import InvalidParameterError

pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")

N = 160
COLOURS = ["red", "green", "blue"]  # pl.Categorical: pandas' sorted levels
SIZES = ["low", "mid", "high"]  # pl.Enum: this order, ordered
WORDS = ["a", "b", "c"]


def _lists(n=N, seed=0, nulls=True):
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=n).round(3).tolist()
    x2 = rng.integers(0, 30, size=n).tolist()
    c = [COLOURS[i] for i in rng.integers(0, 3, size=n)]
    e = [SIZES[i] for i in rng.integers(0, 3, size=n)]
    s = [WORDS[i] for i in rng.integers(0, 3, size=n)]
    b = (rng.random(n) > 0.5).tolist()
    xn = rng.uniform(-1, 1, size=n).round(3).tolist()
    if nulls:
        for i in range(0, n, 9):
            s[i] = None
            xn[i + 1] = None
    return dict(x1=x1, x2=x2, c=c, e=e, s=s, b=b, xn=xn)


def as_pandas_frame(d):
    return pd.DataFrame({
        "x1": np.array(d["x1"], dtype=float), "x2": np.array(d["x2"], dtype=np.int64),
        "c": pd.Categorical(d["c"]),  # astype("category"): sorted levels, unordered
        "e": pd.Categorical(d["e"], categories=SIZES, ordered=True),
        # pandas' own string dtype; with nulls, objects with None: what scikit-learn
        # reads from a polars or Arrow text column (its to_numpy), so the model sees that
        "s": pd.Series(d["s"], dtype=object if None in d["s"] else None),
        "b": np.array(d["b"], dtype=bool),
        "xn": np.array([np.nan if v is None else v for v in d["xn"]], dtype=float)})


def as_polars_frame(d):
    return pl.DataFrame({
        "x1": pl.Series(d["x1"], dtype=pl.Float64), "x2": pl.Series(d["x2"], dtype=pl.Int64),
        "c": pl.Series(d["c"], dtype=pl.Categorical), "e": pl.Series(d["e"], dtype=pl.Enum(SIZES)),
        "s": pl.Series(d["s"], dtype=pl.String), "b": pl.Series(d["b"], dtype=pl.Boolean),
        "xn": pl.Series(d["xn"], dtype=pl.Float64)})  # None: a polars null


def _dictionary(values, levels, ordered=False):
    index = pa.array([levels.index(v) for v in values], type=pa.int8())
    return pa.DictionaryArray.from_arrays(index, pa.array(levels), ordered=ordered)


def as_arrow_table(d):
    return pa.table({
        "x1": pa.array(d["x1"], type=pa.float64()), "x2": pa.array(d["x2"], type=pa.int64()),
        "c": _dictionary(d["c"], sorted(COLOURS)), "e": _dictionary(d["e"], SIZES, ordered=True),
        "s": pa.array(d["s"], type=pa.string()), "b": pa.array(d["b"], type=pa.bool_()),
        "xn": pa.array(d["xn"], type=pa.float64())})


BUILDERS = {"polars": as_polars_frame, "pyarrow": as_arrow_table}


class Model:
    """A model of every column, written for pandas frames; records the dtypes it was given."""

    def __init__(self):
        self.dtypes = []

    def __call__(self, D):
        assert isinstance(D, pd.DataFrame)
        self.dtypes.append(tuple(map(str, D.dtypes)))
        x1, x2 = D["x1"].to_numpy(float), D["x2"].to_numpy(float)
        c = D["c"].astype(object).map({"red": 1.0, "green": -0.5, "blue": 0.25})
        e = D["e"].astype(object).map({"low": 0.0, "mid": 1.0, "high": 3.0})
        s = D["s"].astype(object).map({"a": 0.2, "b": -0.4, "c": 0.7}).fillna(-1.0)
        xn = np.nan_to_num(D["xn"].to_numpy(float), nan=0.5)
        return (2 * x1 + 0.1 * x1 * x2 + c.to_numpy(float) + e.to_numpy(float) * x1
                + s.to_numpy(float) + xn ** 2 + D["b"].to_numpy(float))


def _run(method, d, kind, **kwargs):
    """``method`` on the frame of ``kind`` built from ``d``: its result, warnings, model dtypes."""
    model = Model()
    frame = as_pandas_frame(d) if kind == "pandas" else BUILDERS[kind](d)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = method(model, frame, **kwargs)
    said = [str(w.message) for w in caught if issubclass(w.category, ml.ModellensWarning)]
    return out, said, sorted(set(model.dtypes))


def assert_same_effects(a, b):
    assert list(a) == list(b)
    for name in a:
        ea, eb = a[name], b[name]
        assert ea.feature == eb.feature and ea.method == eb.method
        ga = ea.grid if isinstance(ea.grid, tuple) else (ea.grid,)
        gb = eb.grid if isinstance(eb.grid, tuple) else (eb.grid,)
        for x, y in zip(ga, gb, strict=True):
            assert np.asarray(x).tolist() == np.asarray(y).tolist(), name
        np.testing.assert_allclose(ea.values, eb.values, rtol=1e-12, atol=1e-12, err_msg=name)
        for field in ("ice", "std", "counts"):
            x, y = getattr(ea, field), getattr(eb, field)
            assert (x is None) == (y is None), (name, field)
            if x is not None:
                np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12, err_msg=(name, field))


EFFECTS = {
    "pdp": lambda m, X: ml.pdp(m, X, features=["x1", "x2", "c", "e", "s", "b", "xn",
                                                ("x1", "c")], grid=5, ice=True),
    "mplot": lambda m, X: ml.mplot(m, X, features=["x1", "c", "e", "s", "xn"], grid=5),
    "ale": lambda m, X: ml.ale(m, X, features=["x1", "x2", "c", "e", "s", "xn", ("x1", "xn")],
                               bins=5),
    "dale": lambda m, X: ml.dale(m, X, features=["x1", "xn"], bins=4, min_points=2),
}


@pytest.mark.parametrize("kind", BUILDERS)
@pytest.mark.parametrize("name", EFFECTS)
def test_effects_equal_those_of_the_pandas_frame(name, kind):
    d = _lists()
    want, want_said, want_dtypes = _run(EFFECTS[name], d, "pandas")
    got, said, dtypes = _run(EFFECTS[name], d, kind)
    assert_same_effects(want, got)
    assert said == want_said  # missing values are left out with the same words
    assert dtypes == want_dtypes  # the model gets the pandas counterpart's columns
    assert np.ptp(want["x1"].values) > 1  # not a flat curve that any input would give


def test_categorical_and_enum_levels_are_their_pandas_counterparts():
    d = _lists()
    effects = {kind: ml.pdp(Model(), build(d), features=["c", "e"], grid=5)
               for kind, build in [("pandas", as_pandas_frame), *BUILDERS.items()]}
    for kind, eff in effects.items():
        assert list(eff["c"].grid) == sorted(COLOURS), kind
        assert list(eff["e"].grid) == SIZES, kind
    # the Enum's order is an ordered categorical's: ALE keeps it rather than ordering by data
    ale = ml.ale(Model(), as_polars_frame(d), features=["e", "c"])
    assert list(ale["e"].grid) == SIZES
    assert ml.ale(Model(), as_pandas_frame(d), features=["c"])["c"].grid.tolist() == \
        ale["c"].grid.tolist()


SHAPLEY = {
    "exact": dict(algorithm="exact"),
    "permutation": dict(algorithm="permutation", n_permutations=6, random_state=3),
    "kernel": dict(algorithm="kernel", n_samples=200, random_state=3),
}


def assert_same_attributions(a, b):
    assert list(a.feature_names) == list(b.feature_names)
    np.testing.assert_allclose(a.values, b.values, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.base_values, b.base_values, rtol=1e-12, atol=1e-12)
    assert np.asarray(a.data, dtype=object).tolist().__repr__() == \
        np.asarray(b.data, dtype=object).tolist().__repr__()


@pytest.mark.parametrize("kind", BUILDERS)
@pytest.mark.parametrize("algorithm", SHAPLEY)
def test_shapley_equals_that_of_the_pandas_frame_background_included(algorithm, kind):
    d = _lists()

    def explain(model, X):
        # a table as background: the explained rows and the background both convert
        background = X[40:70] if not isinstance(X, pa.Table) else X.slice(40, 30)
        rows = X[:4] if not isinstance(X, pa.Table) else X.slice(0, 4)
        return ml.shapley(model, rows, background=background, **SHAPLEY[algorithm])

    want, want_said, want_dtypes = _run(explain, d, "pandas")
    got, said, dtypes = _run(explain, d, kind)
    assert_same_attributions(want, got)
    assert said == want_said and dtypes == want_dtypes
    # efficiency: the values add up to the prediction minus the base value
    prediction = Model()(as_pandas_frame(d)[:4])
    np.testing.assert_allclose(want.values.sum(axis=1) + want.base_values, prediction,
                               atol=1e-9)


@pytest.mark.parametrize("kind", BUILDERS)
def test_treeshap_and_tree_pd_read_the_converted_frame(kind):
    from sklearn.ensemble import GradientBoostingRegressor
    d = _lists(nulls=False)
    numeric = ["x1", "x2", "xn"]
    X = as_pandas_frame(d)[numeric]
    y = Model()(as_pandas_frame(d))
    gbr = GradientBoostingRegressor(n_estimators=20, max_depth=3, random_state=0).fit(X, y)
    other = BUILDERS[kind](d).select(numeric)
    for kwargs in (dict(), dict(background=X[:25])):
        want = ml.shapley(gbr, X[:5], algorithm="tree", **kwargs)
        bg = kwargs.get("background")
        got = ml.shapley(gbr, other.slice(0, 5), algorithm="tree",
                         **({} if bg is None else {"background": other.slice(0, 25)}))
        assert_same_attributions(want, got)
    assert_same_effects(ml.pdp(gbr, X, method="tree", grid=5),
                        ml.pdp(gbr, other, method="tree", grid=5))
    a = ml.interactions(gbr, X, method="tree", sample=None, random_state=0)
    b = ml.interactions(gbr, other, method="tree", sample=None, random_state=0)
    pd.testing.assert_frame_equal(a.pairwise, b.pairwise, rtol=1e-12, atol=1e-14)
    # the model's own column names are still checked against the converted frame
    with pytest.raises(InvalidParameterError, match="not the model's columns"):
        ml.pdp(gbr, other.select(["x2", "x1", "xn"]), method="tree")


def test_treeshap_on_lightgbm_native_categories_from_a_polars_frame():
    lgb = pytest.importorskip("lightgbm")
    d = _lists(n=300, nulls=False)
    X = as_pandas_frame(d)[["x1", "x2", "c"]]
    y = Model()(as_pandas_frame(d))
    model = lgb.LGBMRegressor(n_estimators=15, num_leaves=8, min_child_samples=5,
                              verbose=-1).fit(X, y)
    want = ml.shapley(model, X[:6], algorithm="tree")
    got = ml.shapley(model, as_polars_frame(d).select(["x1", "x2", "c"])[:6], algorithm="tree")
    assert_same_attributions(want, got)


@pytest.mark.parametrize("library", ["sklearn", "xgboost"])
def test_a_model_fit_on_the_polars_frame_reads_the_rows_it_is_given(library):
    # the model is called on pandas rows; models fit on polars (categories included)
    # predict them as they predict the polars frame itself
    d = _lists(n=300, nulls=False)
    cols = ["x1", "x2", "c", "e"]
    P, X = as_polars_frame(d).select(cols), as_pandas_frame(d)[cols]
    y = Model()(as_pandas_frame(d))
    if library == "sklearn":
        from sklearn.ensemble import HistGradientBoostingRegressor
        model = HistGradientBoostingRegressor(max_iter=20, categorical_features="from_dtype",
                                              random_state=0).fit(P, y)
    else:
        xgb = pytest.importorskip("xgboost")
        model = xgb.XGBRegressor(n_estimators=15, max_depth=3, enable_categorical=True,
                                 tree_method="hist").fit(P, y)
    own = model.predict(P)
    attr = ml.shapley(model, P[:5], background=P[:40], algorithm="exact")
    np.testing.assert_allclose(attr.values.sum(axis=1) + attr.base_values, own[:5],
                               rtol=1e-5, atol=1e-5)
    assert_same_attributions(ml.shapley(model, X[:5], background=X[:40], algorithm="exact"),
                             attr)
    assert_same_effects(ml.pdp(model, X, grid=4), ml.pdp(model, P, grid=4))


@pytest.mark.parametrize("kind", BUILDERS)
def test_lime_equals_that_of_the_pandas_frame_training_data_included(kind):
    d = _lists(nulls=False)

    def explain(model, X):
        rows = X[:3] if not isinstance(X, pa.Table) else X.slice(0, 3)
        return ml.lime(model, rows, training_data=X, num_samples=400, random_state=5)

    want, want_said, want_dtypes = _run(explain, d, "pandas")
    got, said, dtypes = _run(explain, d, kind)
    assert_same_attributions(want, got)
    np.testing.assert_allclose(want.intercept, got.intercept, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(want.score, got.score, rtol=1e-12, atol=1e-12)
    assert said == want_said and dtypes == want_dtypes

    def sweep(model, X):
        row = X[:1] if not isinstance(X, pa.Table) else X.slice(0, 1)
        return ml.lime_width_sweep(model, row, training_data=X, widths=[0.5, 2.0],
                                   num_samples=300, random_state=1)

    a, b = _run(sweep, d, "pandas")[0], _run(sweep, d, kind)[0]
    for field in ("values", "score", "score_holdout"):
        np.testing.assert_allclose(getattr(a, field), getattr(b, field), rtol=1e-12,
                                   atol=1e-12, err_msg=field)


@pytest.mark.parametrize("kind", BUILDERS)
def test_nulls_are_refused_with_the_words_used_for_pandas(kind):
    d = _lists()
    rows = {"pandas": as_pandas_frame(d)[1:3]}
    rows[kind] = BUILDERS[kind](d).slice(1, 2)
    said = {}
    for k, X in rows.items():
        # LIME explains a missing value as one; a model that cannot take it says so
        with pytest.raises(ml.ModelError) as err:
            ml.lime(lambda D: D["xn"].to_numpy(float), X, training_data=as_pandas_frame(d),
                    num_samples=50, random_state=0)
        said[k] = str(err.value)
    assert "'xn']" in said["pandas"] and "NaN" in said["pandas"]
    assert said[kind] == said["pandas"]

    def nan_model(D):
        return D["xn"].to_numpy(float)

    for k, X in {"pandas": as_pandas_frame(d), kind: BUILDERS[kind](d)}.items():
        with pytest.raises(ml.ModelError) as err:
            ml.pdp(nan_model, X, features=["x1"], grid=3)
        said[k] = str(err.value)
    assert "X holds NaN" in said["pandas"] and said[kind] == said["pandas"]


@pytest.mark.parametrize("kind", BUILDERS)
def test_interactions_equal_those_of_the_pandas_frame(kind):
    d = _lists(n=60)

    def screen(model, X):
        return ml.interactions(model, X, features=["x1", "x2", "c", "e"], sample=40,
                               random_state=2)

    want, want_said, _ = _run(screen, d, "pandas")
    got, said, _ = _run(screen, d, kind)
    pd.testing.assert_series_equal(want.overall, got.overall, rtol=1e-12, atol=1e-14)
    pd.testing.assert_frame_equal(want.pairwise, got.pairwise, rtol=1e-12, atol=1e-14)
    # the model's terms: x1 * g(e) the strongest product, c and e enter additively
    assert want.pairwise[["feature_1", "feature_2"]].iloc[0].tolist() == ["x1", "e"]
    pairs = want.pairwise.set_index(["feature_1", "feature_2"])["h2_unnormalized"]
    assert abs(pairs.get(("c", "e"), pairs.get(("e", "c")))) < 1e-12
    assert said == want_said


def test_a_polars_series_is_one_column_and_a_target():
    d = _lists(nulls=False)
    a = ml.pdp(lambda D: 2 * D["x1"].to_numpy(), pd.Series(d["x1"], name="x1"), grid=4)
    b = ml.pdp(lambda D: 2 * D["x1"].to_numpy(), pl.Series("x1", d["x1"]), grid=4)
    assert_same_effects(a, b)
    from modellens.data import as_pandas_series
    y = as_pandas_series(pl.Series("y", [1, None, 3]))
    assert isinstance(y, pd.Series) and y.isna().tolist() == [False, True, False]
    assert as_pandas_series(pa.chunked_array([["u", None]])).isna().tolist() == [False, True]


@pytest.mark.filterwarnings("ignore:.*missing value:modellens.ModellensWarning")
def test_conversion_keeps_dtypes_as_pandas_reads_them():
    from modellens.data import as_pandas
    frame = as_pandas(pl.DataFrame({
        "i": [1, None, 3], "i8": pl.Series([1, 2, 3], dtype=pl.Int8), "f32":
        pl.Series([1.5, 2.5, None], dtype=pl.Float32), "bn": [True, None, False],
        "dec": pl.Series(["1.25", "2.50", None]).cast(pl.Decimal(10, 2)),
        "cat": pl.Series(["z", "x", "z"], dtype=pl.Categorical)}))
    assert frame["i"].dtype == np.float64 and np.isnan(frame["i"][1])
    assert frame["i8"].dtype == np.int8 and frame["f32"].dtype == np.float32
    assert frame["bn"].dtype == "boolean" and frame["bn"].isna().tolist() == [False, True, False]
    assert frame["dec"].dtype == np.float64 and frame["dec"][1] == 2.5
    assert frame["cat"].cat.categories.tolist() == ["x", "z"] and not frame["cat"].cat.ordered
    # a boolean column with nulls stays a numeric feature, not text
    ds = ml.pdp(lambda D: D["bn"].fillna(False).to_numpy(float),
                pl.DataFrame({"bn": [True, None, False, True]}), grid=2)
    assert ds["bn"].grid.tolist() == [False, True]


def test_unsupported_polars_and_arrow_inputs_are_refused_clearly():
    X = pl.DataFrame({"x": [1.0, 2.0, 3.0]})
    with pytest.raises(InvalidParameterError, match=r"LazyFrame.*X\.collect\(\)"):
        ml.ale(lambda D: D["x"].to_numpy(), X.lazy())
    with pytest.raises(InvalidParameterError, match=r"background is a polars LazyFrame"):
        ml.shapley(lambda D: D["x"].to_numpy(), X, background=X.lazy())
    nested = pl.DataFrame({"x": [1.0, 2.0], "v": [[1, 2], [3]]})
    with pytest.raises(InvalidParameterError, match="column 'v' of X holds nested values"):
        ml.pdp(lambda D: D["x"].to_numpy(), nested)
    dates = pa.table({"when": pa.array([1, 2, 3], type=pa.int32()).cast(pa.date32())})
    with pytest.raises(InvalidParameterError, match="holds dates"):
        ml.pdp(lambda D: np.ones(len(D)), dates)


def test_a_parquet_file_polars_wrote_reads_as_the_polars_frame(tmp_path):
    # the command line's reader: the file's columns mean what they meant in polars
    from modellens.data import as_pandas
    from modellens.files import read_table
    d = _lists()
    P = as_polars_frame(d).with_columns(bn=pl.Series([True, None] * (N // 2)))
    P.write_parquet(tmp_path / "x.parquet")
    frame = read_table(tmp_path / "x.parquet")
    pd.testing.assert_frame_equal(frame, as_pandas(P))
    assert frame["c"].cat.categories.tolist() == sorted(COLOURS)
    assert frame["e"].cat.ordered and frame["bn"].dtype == "boolean"


@pytest.mark.filterwarnings("ignore::modellens.ModellensWarning")
def test_the_callers_polars_frame_is_not_changed():
    d = _lists()
    X = as_polars_frame(d)
    before = X.clone()
    ml.ale(Model(), X, bins=4)
    ml.shapley(Model(), X[:2], background=X[10:20], algorithm="permutation",
               n_permutations=2, random_state=0)
    assert X.equals(before) and X.schema == before.schema


def test_polars_is_imported_only_by_the_user():
    import subprocess
    import sys
    code = ("import sys, numpy as np, pandas as pd, modellens as ml\n"
            "ml.pdp(lambda A: A[:, 0], np.ones((5, 2)), grid=2)\n"
            "ml.shapley(lambda D: D['a'].to_numpy(), pd.DataFrame({'a': [1.0, 2.0]}),"
            " background=pd.DataFrame({'a': [0.0, 1.0]}))\n"
            "assert 'polars' not in sys.modules, 'modellens imported polars'\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


#: The report's options: the sections that read the frame's columns and rows.
_SMALL_REPORT = dict(sample=120, n_explain=4, n_background=8, grid=5, shapley_budget=20_000,
                     sections=["data", "quality", "effects", "shapley"], progress=False)


@pytest.fixture(scope="module")
def pandas_report():
    """The data, the model and the report of the pandas frame (with its page's numbers):
    the reference of both kinds of frame, built once (each kind built its own)."""
    from sklearn.compose import make_column_transformer
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder
    d = _lists(n=220)
    X = as_pandas_frame(d)
    y = Model()(X) + np.random.default_rng(1).normal(scale=0.1, size=len(X))
    encode = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["c", "e", "s"]), remainder="passthrough")
    model = make_pipeline(encode, HistGradientBoostingRegressor(max_iter=30, random_state=0))
    model.fit(X.assign(s=X["s"].fillna("none")), y)
    want = ml.report(model, X, pd.Series(y), **_SMALL_REPORT)
    return d, y, model, want, _page_numbers(_page(want))


@pytest.mark.slow
@pytest.mark.parametrize("kind", BUILDERS)
def test_report_numbers_equal_those_of_the_pandas_frame(kind, pandas_report):
    d, y, model, want, want_page = pandas_report
    other = BUILDERS[kind](d)
    y_other = pl.Series("y", y) if kind == "polars" else pa.chunked_array([y])
    got = ml.report(model, other, y_other, **_SMALL_REPORT)
    _assert_same_numbers(want.sections["quality"].data, got.sections["quality"].data, rel=1e-12)
    assert want.sections["quality"].data["metrics"]["r2"] > 0.8
    for key in ("data", "effects", "shapley"):
        _assert_same_numbers(want.sections[key].data, got.sections[key].data,
                             rel=1e-12, abs=1e-12)
    assert want_page == _page_numbers(_page(got))


def _page(report):
    """The report's page, its pictures blank: only its text is compared (drawing them was
    most of this test's CPU; the figures themselves are built from the numbers compared)."""
    from cli_support import pages_without_pictures

    with pages_without_pictures():
        return report.to_html()


def _assert_same_numbers(want, got, **tolerance):
    """Equal labels, and numbers equal within ``tolerance`` (pytest.approx takes no text)."""
    want, got = _numbers(want), _numbers(got)
    assert want.keys() == got.keys()
    text = [k for k, v in want.items() if isinstance(v, str)]
    assert {k: want[k] for k in text} == {k: got[k] for k in text}
    for k in want.keys() - set(text):
        assert np.shape(want[k]) == np.shape(got[k]), k
        assert want[k] == pytest.approx(got[k], **tolerance), k


def _numbers(obj, path=""):
    """Every number and label of a section's data, flattened to ``{path: value}``."""
    out = {}
    if isinstance(obj, dict) or hasattr(obj, "items"):
        for k, v in obj.items():
            out.update(_numbers(v, f"{path}/{k}"))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            out.update(_numbers(v, f"{path}/{i}"))
    elif isinstance(obj, np.ndarray):
        if obj.dtype.kind in "biuf":
            out[path] = obj.astype(float).ravel().tolist()
        else:
            out[path] = str(obj.tolist())
    elif isinstance(obj, (bool, np.bool_)):
        out[path] = str(bool(obj))
    elif isinstance(obj, (int, float, np.integer, np.floating)):
        out[path] = float(obj)
    else:
        out[path] = str(obj)
    return out


def _page_numbers(text):
    """The visible text of the page, its timings and date left out (they differ between runs)."""
    import re

    from support import _parse
    shown = " ".join(t.strip() for t in _parse(text).text if t.strip())
    shown = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d", "<date>", shown)
    return re.sub(r"\d+(\.\d+)? ?(s|ms|seconds?)\b", "<time>", shown)
