"""The one Dask driver (``engine/_dask.py``): the same rules for chunks, partitions and lazy rows.

Each test checks one rule on a kind of work that, before the driver was one,
followed another rule: the partitions of a table go through the bounded,
in-order window of the chunks; a failing partition of a lazy frame is named
with its rows as a failing partition of a table is.
"""

import sys

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens import ModelError

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")
cloudpickle.register_pickle_by_value(sys.modules[__name__])

pytestmark = pytest.mark.dask


def linear(D):
    return 2.0 * np.asarray(D["a"], dtype=float) - np.asarray(D["b"], dtype=float)


def test_partitions_of_a_table_run_in_the_bounded_window(client, held_futures):
    from modellens.engine import _dask

    held = held_futures
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(6_000, 2)), columns=["a", "b"])
    X = dd.from_pandas(frame, npartitions=30)
    with ml.config(client=client, progress=False):
        got = ml.pdp(linear, X, ["a"], grid=np.array([-1.0, 0.0, 1.0]))
    threads = sum(client.nthreads().values())
    # every partition's summary (and the column pass) went through the window, and no
    # more than its bound were ever held at the client
    assert len(held) >= 30
    assert max(held) <= 2 * _dask.IN_FLIGHT_PER_THREAD * threads < 30
    local = ml.pdp(linear, frame, ["a"], grid=np.array([-1.0, 0.0, 1.0]), progress=False)
    np.testing.assert_allclose(got["a"].values, local["a"].values, rtol=0, atol=1e-12)


def fails_on_big_a(D):
    a = np.asarray(D["a"], dtype=float)
    if (a > 1e6).any():
        raise ValueError("the model cannot take a above a million")
    return a


def test_a_failing_partition_of_a_lazy_frame_is_named(client):
    frame = pd.DataFrame({"a": np.arange(400, dtype=float), "b": np.ones(400)})
    frame.loc[250, "a"] = 2e6  # in the third of four partitions
    X = dd.from_pandas(frame, npartitions=4)
    with ml.config(client=client):
        lazy = ml.predict(fails_on_big_a, X)  # the first row is fine: no error yet
        with pytest.raises(ModelError, match="a above a million") as caught:
            client.compute(lazy).result()
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    assert "partition 2 of 4 of X" in notes, notes
    assert "X.partitions[2].compute()" in notes, notes


def test_out_of_core_effects_of_every_output_cost_the_model_rows_of_one(row_counter):
    # each partition evaluates its rows once for every output; each output's numbers are
    # those of its own single-output request, bit for bit
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(5)
    frame = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    y = np.where(frame["a"] > 0.5, 2, np.where(frame["b"] * frame["c"] > 0, 1, 0))
    clf = LogisticRegression().fit(frame, y)

    def two(D):  # a function: it tells its two outputs with its first answer
        row_counter.note(D)
        return np.column_stack([D["a"] * D["b"], D["c"] ** 2 - D["a"]])

    X = dd.from_pandas(frame, npartitions=3)
    calls = {
        "pdp": lambda m, **kw: ml.pdp(m, X, ["a", "c"], grid=np.array([-1.0, 0.0, 1.0]), **kw),
        "ale": lambda m, **kw: ml.ale(m, X, ["a", "c"], bins=6, **kw),
        "mplot": lambda m, **kw: ml.mplot(m, X, ["a"], grid=5, **kw),
    }
    with dask.config.set(scheduler="synchronous"):
        for name, call in calls.items():
            for model, k in ((row_counter.classifier(clf), 3), (two, 2)):
                row_counter.reset()
                every = call(model)
                rows_every = row_counter.rows
                for c in range(k):
                    row_counter.reset()
                    one = call(model, target=c)
                    rows_one = row_counter.rows
                    for feature in one:
                        np.testing.assert_array_equal(every[feature].for_output(c).values,
                                                      one[feature].values)
                # each row asked once, the outputs known from the classes or told by the
                # first answer of each partition (kept, not asked again)
                assert rows_every == rows_one > 0, name
