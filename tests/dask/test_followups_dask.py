"""Dask follow-ups: output names as in memory, one missing-value warning, row labels."""

import warnings

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens._validation import ModellensWarning

dd = pytest.importorskip("dask.dataframe")


def _named(A):
    A = np.asarray(A, dtype=float)
    return pd.DataFrame({"low": A[:, 0] - A[:, 1], "high": A[:, 1] * A[:, 2]})


def _data():
    X = pd.DataFrame(np.random.default_rng(5).normal(size=(240, 3)), columns=["a", "b", "c"])
    return X, dd.from_pandas(X, npartitions=3)


@pytest.mark.parametrize("method", ["pdp", "ale", "dale", "mplot"])
def test_out_of_core_effects_name_every_output_by_the_columns(client, method):
    X, D = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModellensWarning)  # approximate quantiles out of core
        with ml.config(client=client):
            every = getattr(ml, method)(_named, D, ["a", "b"])
            one = getattr(ml, method)(_named, D, ["a"], target=1)
        here = getattr(ml, method)(_named, X, ["a", "b"])
    assert every.outputs == here.outputs == ["low", "high"]
    assert every["a"].for_output("high").output == "high"
    assert one["a"].output == "high"
    # the names are the labels only: the numbers are those of the output's position
    np.testing.assert_allclose(one["a"].values, every["a"].for_output(1).values, rtol=0,
                               atol=1e-12)


@pytest.mark.parametrize("method", ["ale", "dale"])
def test_out_of_core_regions_name_every_output_by_the_columns(client, method):
    X, D = _data()
    with ml.config(client=client):
        got = ml.regions(_named, D, ["a"], method=method, max_depth=1)
    assert got.outputs == ["low", "high"]


def test_out_of_core_dale_regions_say_missing_values_once(client):
    X, _ = _data()
    X.iloc[::12, 0] = np.nan
    D = dd.from_pandas(X, npartitions=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ml.config(client=client):
            ml.regions(lambda A: _named(np.nan_to_num(np.asarray(A, dtype=float))), D, ["a"],
                       method="dale", max_depth=1)
    said = [str(w.message) for w in caught if "missing value" in str(w.message)]
    assert said == ["20 of 240 rows have a missing value in 'a'; they are left out of its "
                    "DALE bins."]


def test_the_summary_sample_keeps_the_rows_labels_as_in_memory(client):
    X = pd.DataFrame(np.random.default_rng(6).normal(size=(60, 3)), columns=["a", "b", "c"],
                     index=[f"id{i:03d}" for i in range(60)])
    beta = np.array([1.0, -2.0, 0.5])

    def linear(D):
        return np.asarray(D, dtype=float) @ beta

    with ml.config(client=client):
        attr = ml.shapley(linear, dd.from_pandas(X, npartitions=3), background=X.iloc[:20])
        summary = attr.summary(sample=7, random_state=0)
    memory = ml.shapley(linear, X, background=X.iloc[:20])
    same = memory[summary.rows]
    assert list(summary.sample.row_labels) == list(same.row_labels) == \
        list(X.index[summary.rows])
    # the labels name the rows whose values these are (phi_j = beta_j (x_j - mean_j))
    frame = summary.sample.to_frame()
    rows = X.loc[frame["row"].to_numpy()].to_numpy()
    j = frame["feature"].map({"a": 0, "b": 1, "c": 2}).to_numpy()
    mean = X.iloc[:20].mean().to_numpy()
    np.testing.assert_allclose(frame["value"].to_numpy(),
                               (rows[np.arange(len(frame)), j] - mean[j]) * beta[j],
                               rtol=0, atol=1e-10)
