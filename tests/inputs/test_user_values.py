"""The model receives exactly what the user gave: values, types and missing markers (issue #42).

A spy model records every frame modellens hands it; whatever the method (the
rows at the data, PD grids, ALE bin edges, Shapley coalitions, LIME samples,
permuted columns), a column reaches the model with the user's dtype, its
non-missing values are the user's objects (type included) and a missing value
is the user's own marker (NaN, None, ``pd.NA``, ``NaT``).  A pipeline whose
imputer reads NaN gives, through modellens, the numbers of its own call.
"""

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.impute import SimpleImputer
from sklearn.inspection import permutation_importance
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

import modellens as ml

N = 60
_rng = np.random.default_rng(0)
_TEXT = _rng.choice(["low", "mid", "high"], N)
_HOLES = np.zeros(N, bool)
_HOLES[::5] = True


def _text(marker, dtype=object):
    values = [marker if h else v for v, h in zip(_TEXT, _HOLES)]
    return pd.Series(values, dtype=dtype)


#: one column of each container, each with missing values written its own way
COLUMNS = {
    "object NaN": lambda: _text(np.nan),
    "object None": lambda: _text(None),
    "object pd.NA": lambda: _text(pd.NA),
    "object NaT": lambda: _text(pd.NaT),
    "object ints None": lambda: pd.Series([None if h else int(i % 3) for i, h in
                                           zip(range(N), _HOLES)], dtype=object),
    "string": lambda: _text(pd.NA, "string"),
    "str": lambda: _text(np.nan, "str"),
    "category": lambda: _text(np.nan).astype("category"),
    "Int64": lambda: pd.array([pd.NA if h else i % 4 for i, h in zip(range(N), _HOLES)],
                              dtype="Int64"),
    "boolean": lambda: pd.array([pd.NA if h else bool(i % 2) for i, h in zip(range(N), _HOLES)],
                                dtype="boolean"),
    "float": lambda: pd.Series(np.where(_HOLES, np.nan, _rng.normal(size=N))),
}


def _frame(kind):
    return pd.DataFrame({"c": COLUMNS[kind](), "x": np.linspace(-1, 1, N)})


class Spy:
    """A model on frames that records what it is given (a score from x alone)."""

    def __init__(self):
        self.seen = []

    def __call__(self, frame):
        self.seen.append(frame.copy())
        return np.asarray(frame["x"], dtype=float) * 2.0 + 1.0


def _same_missing(a, b) -> bool:
    if a is b:
        return True
    return isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)


def _check_seen(frame, user):
    if pd.api.types.is_integer_dtype(user["c"].dtype) and frame["c"].dtype == "Float64":
        # values between integers (LIME's samples) are given as such, not rounded
        present = frame["c"].dropna().to_numpy(dtype=float)
        assert not np.array_equal(present, np.round(present))
        return
    assert frame["c"].dtype == user["c"].dtype, (frame["c"].dtype, user["c"].dtype)
    if user["c"].dtype != object:
        return
    marker = user["c"][_HOLES].iloc[0]
    known = {(type(v), v) for v in user["c"][~_HOLES]}
    for v in frame["c"]:
        if pd.isna(v):
            assert _same_missing(v, marker), (v, marker)
        else:
            assert (type(v), v) in known, v


@pytest.mark.parametrize("kind", list(COLUMNS))
def test_rows_at_the_data_are_the_users(kind):
    X = _frame(kind)
    before = X.copy()
    spy = Spy()
    ml.predict(spy, X)
    # (the first: the one row that tells the outputs, asked when the model is wrapped)
    assert len(spy.seen[0]) == 1
    seen = pd.concat(spy.seen[1:], ignore_index=True)
    pd.testing.assert_frame_equal(seen, X, check_exact=True)
    for a, b in zip(seen["c"], X["c"]):
        if pd.isna(b):
            assert _same_missing(a, b), (a, b)
        else:
            assert type(a) is type(b) and a == b
    pd.testing.assert_frame_equal(X, before)  # the caller's data untouched


@pytest.mark.parametrize("kind", list(COLUMNS))
@pytest.mark.parametrize("method", ["pdp", "ale", "shapley", "lime", "importance"])
def test_every_method_hands_the_model_the_users_values(kind, method):
    X = _frame(kind)
    spy = Spy()
    call = {
        "pdp": lambda: ml.pdp(spy, X, ["x", "c"], grid=5),
        "ale": lambda: ml.ale(spy, X, ["x"], bins=4),
        "shapley": lambda: ml.shapley(spy, X.iloc[:3], background=X, algorithm="exact"),
        "lime": lambda: ml.lime(spy, X.iloc[:2], training_data=X, num_samples=50,
                                random_state=0),
        "importance": lambda: ml.importance(spy, X, X["x"].to_numpy() * 2.0, n_repeats=2,
                                            random_state=0, scoring="r2"),
    }[method]
    call()
    assert spy.seen
    for frame in spy.seen:
        _check_seen(frame, X)


def _pipeline():
    text = make_pipeline(SimpleImputer(strategy="constant", fill_value="none"),
                         OneHotEncoder(handle_unknown="ignore"))
    return make_pipeline(make_column_transformer((text, ["c"]), remainder="passthrough"),
                         LogisticRegression())


@pytest.mark.parametrize("kind", ["object NaN", "object None", "str"])
def test_a_pipeline_with_an_imputer_gives_its_own_numbers(kind):
    X = _frame(kind)
    y = (X["x"] + _rng.normal(size=N) > 0).astype(int).to_numpy()
    # the imputer reads the missing marker the column holds; the model is fit on it
    X["c"] = X["c"].astype(object) if kind.startswith("object") else X["c"]
    model = _pipeline().fit(X, y)
    own = model.predict_proba(X)[:, 1]
    assert np.array_equal(np.asarray(ml.predict(model, X)), own)
    # the rows with a missing level are the ones an unknown level would change
    shown = ml.shapley(model, X.iloc[:10], background=X.iloc[10:40], algorithm="exact")
    assert np.allclose(shown.values.sum(axis=1) + shown.base_values, own[:10], atol=1e-12)


def test_importance_equals_scikit_learns_on_text_with_nan():
    X = _frame("object NaN")
    y = (X["x"] + (X["c"] == "low") + _rng.normal(size=N) * 0.3 > 0.5).astype(int).to_numpy()
    model = _pipeline().fit(X, y)
    ours = ml.importance(model, X, y, scoring="accuracy", n_repeats=5, random_state=0)
    theirs = permutation_importance(model, X, y, scoring="accuracy", n_repeats=5,
                                    random_state=0)
    assert np.allclose(ours.importances, theirs.importances, atol=0)


def test_polars_and_arrow_nulls_reach_a_pipeline_as_its_own_call_reads_them():
    pl = pytest.importorskip("polars")
    pytest.importorskip("pyarrow")
    X = pl.DataFrame({"c": [None if h else v for v, h in zip(_TEXT, _HOLES)],
                      "x": np.linspace(-1, 1, N)})
    y = (np.linspace(-1, 1, N) + _rng.normal(size=N) > 0).astype(int)
    model = _pipeline().fit(X, y)
    own = model.predict_proba(X)[:, 1]
    assert np.array_equal(np.asarray(ml.predict(model, X)), own)
    assert np.array_equal(np.asarray(ml.predict(model, X.to_arrow())), own)


def test_background_and_other_table_keep_the_users_marker():
    X, background = _frame("object None"), _frame("object None").iloc[::-1]
    spy = Spy()
    ml.shapley(spy, X.iloc[:2], background=background, algorithm="exact")
    for frame in spy.seen:
        _check_seen(frame, X)


def test_dask_rows_keep_the_users_marker():
    dd = pytest.importorskip("dask.dataframe")
    X = dd.from_pandas(_frame("object None"), npartitions=3)
    user = X.compute()  # what the partitions hold (Dask may have converted the text)
    spy = Spy()
    ml.pdp(spy, X, ["x"], grid=4)
    seen = [f for f in spy.seen if len(f)]
    assert seen
    for frame in seen:
        _check_seen(frame, user.reset_index(drop=True))


def test_a_column_that_writes_missing_values_two_ways_is_said():
    """One marker per column goes back to the model: a column mixing None and NaN would
    reach an imputer of NaN with its None rows changed, so the mix is named, not hidden."""
    values = _text(np.nan)
    values[1] = None  # a hole written another way (row 0 is NaN, row 1 a level before)
    X = pd.DataFrame({"x": _rng.normal(size=N), "c": values})
    with pytest.warns(ml.ModellensWarning, match=r"'c' writes its missing values in 2 ways "
                                                 r"\(NaN, None\).*first \(NaN\)"):
        ml.predict(lambda D: D["x"].to_numpy(), X)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", ml.ModellensWarning)
        ml.predict(lambda D: D["x"].to_numpy(), X.assign(c=_text(None)))  # one way: no word
