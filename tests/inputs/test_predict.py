"""``ml.predict``: the explained output of every row, checked against the model's own
methods (the oracle), with the input's index and the output's name."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

import modellens as ml


def _frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(0, 2, n),
                         "colour": rng.choice(["red", "green", "blue"], n)},
                        index=pd.Index(rng.permutation(n) + 1000, name="id"))


def test_regressor_pipeline_on_a_frame_keeps_index_and_equals_predict():
    X = _frame()
    y = 2 * X.a - X.b + (X.colour == "red") * 3
    model = make_pipeline(make_column_transformer(
        (OneHotEncoder(), ["colour"]), remainder="passthrough"), LinearRegression()).fit(X, y)
    before = X.copy()
    p = ml.predict(model, X)
    assert isinstance(p, pd.Series) and p.name == "prediction"
    pd.testing.assert_index_equal(p.index, X.index)
    np.testing.assert_allclose(p.to_numpy(), model.predict(X), rtol=0, atol=1e-12)
    pd.testing.assert_frame_equal(X, before)  # the caller's data are untouched


@pytest.mark.parametrize("target, column", [(None, 1), ("yes", 1), ("no", 0), (0, 0)])
def test_binary_classifier_gives_the_probability_of_the_target_class(target, column):
    X = _frame()[["a", "b"]]
    y = np.where(X.a + X.b > 1, "yes", "no")
    clf = LogisticRegression().fit(X, y)
    p = ml.predict(clf, X, target=target)
    np.testing.assert_allclose(p, clf.predict_proba(X)[:, column], rtol=0, atol=1e-12)
    assert p.name == f"P(y = {clf.classes_[column]})"


def test_multiclass_gives_every_class_and_decision_function_is_selectable():
    X = _frame()[["a", "b"]]
    y = np.digitize(X.a, [-0.5, 0.5])
    clf = LogisticRegression().fit(X, y)
    every = ml.predict(clf, X)  # every class: a column each
    assert list(every.columns) == ["P(y = 0)", "P(y = 1)", "P(y = 2)"]
    np.testing.assert_allclose(every.to_numpy(), clf.predict_proba(X), atol=1e-12)
    decisions = ml.predict(clf, X, response_method="decision_function")
    np.testing.assert_allclose(decisions.to_numpy(), clf.decision_function(X), atol=1e-12)
    np.testing.assert_allclose(ml.predict(clf, X, target=2), clf.predict_proba(X)[:, 2],
                               atol=1e-12)
    d = ml.predict(clf, X, target=1, response_method="decision_function")
    np.testing.assert_allclose(d, clf.decision_function(X)[:, 1], atol=1e-12)


def test_array_callable_and_chunks_do_not_change_the_numbers():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(5000, 3))
    w = np.array([1.0, -2.0, 0.5])
    p = ml.predict(lambda Z: Z @ w, A, chunk_size=777)
    pd.testing.assert_index_equal(p.index, pd.RangeIndex(5000))
    np.testing.assert_allclose(p.to_numpy(), A @ w, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(p.to_numpy(), ml.predict(lambda Z: Z @ w, A).to_numpy())


def test_model_that_fails_or_returns_the_wrong_length_gets_our_error():
    A = np.ones((10, 2))
    with pytest.raises(ml.ModelError, match="shape"):
        ml.predict(lambda Z: Z[:3, 0], A)
    with pytest.raises(ml.ModelError, match="NaN"):
        ml.predict(lambda Z: np.full(Z.shape[0], np.nan), A)
    with pytest.raises(ml.ModelError, match="ZeroDivisionError"):
        ml.predict(lambda Z: 1 / 0, A)


def test_hgb_with_missing_values_and_polars_input():
    pl = pytest.importorskip("polars")
    X = _frame()[["a", "b"]].reset_index(drop=True)
    X.loc[::7, "a"] = np.nan
    clf = HistGradientBoostingClassifier(max_iter=20).fit(X, X.b > 1)
    expected = clf.predict_proba(X)[:, 1]
    np.testing.assert_allclose(ml.predict(clf, X), expected, atol=1e-12)
    np.testing.assert_allclose(ml.predict(clf, pl.from_pandas(X)), expected, atol=1e-12)


def test_dask_input_gives_a_lazy_series_equal_to_the_in_memory_one():
    dd = pytest.importorskip("dask.dataframe")
    da = pytest.importorskip("dask.array")
    X = _frame()[["a", "b"]]
    clf = LogisticRegression().fit(X, X.a > 0)
    expected = ml.predict(clf, X)
    lazy = ml.predict(clf, dd.from_pandas(X, npartitions=4))
    assert lazy.npartitions == 4 and lazy.name == expected.name
    pd.testing.assert_series_equal(lazy.compute(), expected.sort_index())  # Dask sorts the index
    blocks = ml.predict(clf, da.from_array(X.to_numpy(), chunks=(70, 1)),
                        feature_names=["a", "b"])
    np.testing.assert_allclose(blocks.compute().to_numpy(), expected.to_numpy(), atol=1e-12)
    # a model that cannot predict the data fails at the call, not at compute
    with pytest.raises(ml.ModelError):
        ml.predict(clf, dd.from_pandas(X[["a"]], npartitions=2))


def test_attrs_say_which_class_and_whether_a_probability():
    X = _frame()[["a", "b"]]
    y = np.where(X.a > 0, "yes", "no")
    clf = LogisticRegression().fit(X, y)
    assert ml.predict(clf, X).attrs == {"explained_class": "yes", "probability": True}
    d = ml.predict(clf, X, target="no", response_method="decision_function")
    # a binary decision function is positive for classes_[1]: the other class's is its negative
    np.testing.assert_allclose(d, -clf.decision_function(X), atol=1e-12)
    assert d.attrs == {"explained_class": "no", "probability": False}
    reg = LinearRegression().fit(X, X.a)
    assert ml.predict(reg, X).attrs == {"explained_class": None, "probability": False}


def test_a_row_series_is_one_row_and_any_other_series_one_column():
    X = _frame()[["a", "b"]]
    reg = LinearRegression().fit(X, 3 * X.a - X.b)
    row = ml.predict(reg, X.iloc[7])  # df.iloc[i], as shapley takes it
    assert row.index.tolist() == [X.index[7]]
    np.testing.assert_allclose(row, reg.predict(X.iloc[[7]]), atol=1e-12)
    one = LinearRegression().fit(X[["a"]], 2 * X.a)
    np.testing.assert_allclose(ml.predict(one, X["a"]), 2 * X["a"], atol=1e-12)


def test_dask_array_with_unknown_block_lengths_is_refused_with_the_fix():
    dd = pytest.importorskip("dask.dataframe")
    X = _frame()[["a", "b"]]
    reg = LinearRegression().fit(X, X.a)
    blocks = dd.from_pandas(X, npartitions=3).to_dask_array()  # lengths unknown
    with pytest.raises(ml.InvalidParameterError, match="compute_chunk_sizes"):
        ml.predict(reg, blocks)
    known = ml.predict(reg, blocks.compute_chunk_sizes(), feature_names=["a", "b"]).compute()
    assert known.index.tolist() == list(range(len(X)))  # positions across the blocks
