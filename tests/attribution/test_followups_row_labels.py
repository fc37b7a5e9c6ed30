"""Attributions of DataFrame rows keep their labels in X's index: to_frame joins back on X."""

import json

import numpy as np
import pandas as pd
import pytest

import modellens as ml

BETA = np.array([1.0, -2.0, 0.5])


def _frame(index=None):
    X = pd.DataFrame(np.random.default_rng(0).normal(size=(40, 3)), columns=["a", "b", "c"])
    return X if index is None else X.set_axis(index)


def _linear(D):
    return np.asarray(D, dtype=float) @ BETA


def _joined_back(attr, X):
    """Each to_frame row's value against the closed form of the X row its label names."""
    frame = attr.to_frame()
    mean = X.mean().to_numpy()
    rows = X.loc[frame["row"].to_numpy()]
    j = frame["feature"].map({"a": 0, "b": 1, "c": 2}).to_numpy()
    expected = (rows.to_numpy()[np.arange(len(frame)), j] - mean[j]) * BETA[j]
    np.testing.assert_allclose(frame["value"].to_numpy(), expected, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(frame["feature_value"].to_numpy(dtype=float),
                                  rows.to_numpy()[np.arange(len(frame)), j])


@pytest.mark.parametrize("index", [None, [f"id{i}" for i in range(40)],
                                   pd.date_range("2026-01-01", periods=40, freq="D")])
def test_shapley_rows_are_labelled_by_x_index(index):
    X = _frame(index)
    picked = X.iloc[[5, 9, 2]]
    attr = ml.shapley(_linear, picked, background=X)
    np.testing.assert_array_equal(attr.row_labels, np.asarray(picked.index))
    assert list(attr.to_frame()["row"].unique()) == list(picked.index)
    _joined_back(attr, X)
    # selection keeps the labels of the rows selected, and they survive JSON
    assert list(attr[1:].row_labels) == list(picked.index[1:])
    back = ml.Attributions.from_dict(json.loads(json.dumps(attr.to_dict())))
    np.testing.assert_array_equal(back.row_labels, attr.row_labels)
    assert back.to_frame()["row"].tolist() == attr.to_frame()["row"].tolist()


def test_default_index_and_arrays_keep_positions():
    X = _frame()
    for given, background in ((X.iloc[:4], X), (X.to_numpy()[:4], X.to_numpy())):
        attr = ml.shapley(_linear, given, background=background)
        assert attr.row_labels is None
        assert "row_labels" not in attr.to_dict()["fields"]  # files as before
        assert attr.to_frame()["row"].unique().tolist() == [0, 1, 2, 3]
    # a slice of a default index is not the positions of the result
    assert list(ml.shapley(_linear, X.iloc[10:13], background=X).row_labels) == [10, 11, 12]


def test_one_row_given_as_a_series_is_labelled_by_its_name():
    X = _frame()
    attr = ml.shapley(_linear, X.iloc[7], background=X)
    assert attr.to_frame()["row"].unique().tolist() == [7]
    _joined_back(attr, X)


def test_every_output_and_lime_keep_the_labels():
    X = _frame([f"id{i}" for i in range(40)])
    picked = X.iloc[[3, 30]]

    def two(D):
        return np.column_stack([_linear(D), -_linear(D)])

    both = ml.shapley(two, picked, background=X)
    frame = both.to_frame()
    assert set(frame["output"]) == {"f(x)[0]", "f(x)[1]"}
    assert frame.groupby("output")["row"].apply(lambda r: list(r.unique())).tolist() == \
        [["id3", "id30"], ["id3", "id30"]]
    _joined_back(both.for_output(0), X)
    lime = ml.lime(_linear, picked, training_data=X, num_samples=200, random_state=0)
    assert list(lime.row_labels) == ["id3", "id30"]
    assert lime.to_frame()["row"].unique().tolist() == ["id3", "id30"]
    # the labels do not change the numbers
    plain = ml.lime(_linear, picked.reset_index(drop=True), training_data=X,
                    num_samples=200, random_state=0)
    np.testing.assert_array_equal(lime.values, plain.values)
