"""The engine's plan protocol: per-instance segments, shared rows, the ModelLike seam."""

import numpy as np
import pytest

import modellens as ml
from modellens.data import Dataset
from modellens.engine import (DataPredictions, DataRows, GridRows, ModelLike, Plan, SharedRows,
                              run)
from modellens.models import Model


class _Counting:
    """A ModelLike that records every row it is asked to predict."""

    max_chunk_rows = None

    def __init__(self, fn):
        self.fn, self.seen, self.accounted = fn, [], 0

    def predict(self, rows):
        self.seen.append(rows.copy())
        return self.fn(rows)

    def gradient(self, rows, *, backend, function=None):  # pragma: no cover - not asked
        raise AssertionError("no gradient rows were planned")

    def account(self, calls, rows):
        self.accounted += rows


def test_plan_is_abstract_and_its_segments_belong_to_each_instance():
    with pytest.raises(TypeError):
        Plan()

    class Empty(Plan):
        def reduce(self):
            return len(self.segments)

    a, b = Empty(), Empty()
    a.segments.append(object())
    assert b.segments == [] and b.shared_rows == []
    assert "segments" not in vars(Plan) and "segments" not in vars(Empty)


def test_a_plan_written_the_old_way_still_runs():
    """A subclass that sets self.segments in __init__ (no super().__init__) and reduces."""
    X = np.arange(12.0).reshape(6, 2)

    class OldStyle(Plan):
        def __init__(self, data):
            self.segments = [DataRows(data)]

        def reduce(self):
            return self.segments[0].result

    (out,) = run(_Counting(lambda A: A[:, 0] * 2), [OldStyle(X)])
    np.testing.assert_array_equal(out, X[:, 0] * 2)


class _Reader(Plan):
    """Reads the predictions at some data rows, and moves column 0 to a value."""

    def __init__(self, data, rows, value):
        self.at_data = DataPredictions(data, rows)
        self.shared_rows = [self.at_data]
        self.rows = rows
        seg = GridRows(data, (0,), [[value]], rows=rows)
        seg.on_finish = self._collect  # reads the shared rows: they must be in already
        self.segments = [seg]

    def _collect(self, seg):
        self.diff = seg.result - self.at_data.at(self.rows)

    def reduce(self):
        return self.diff


def test_shared_rows_are_evaluated_once_and_first_for_every_plan_that_reads_them():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    model = _Counting(lambda A: A[:, 0] + 10 * A[:, 1])
    plans = [_Reader(X, np.array([3, 1, 7]), 5.0), _Reader(X, np.array([7, 20]), -1.0)]
    first, second = run(model, plans)
    # one pass at the union of the rows, in the data's order, before the plans' own rows
    np.testing.assert_array_equal(model.seen[0][:4], X[[1, 3, 7, 20]])
    assert sum(len(s) for s in model.seen) == 4 + 3 + 2
    np.testing.assert_allclose(first, 5.0 - X[[3, 1, 7], 0])
    np.testing.assert_allclose(second, -1.0 - X[[7, 20], 0])
    # a request for every row serves the others too
    everything = _Reader(X, None, 0.0)
    everything.rows = np.arange(50)
    model.seen.clear()
    run(model, [_Reader(X, np.array([4]), 1.0), everything])
    assert len(model.seen[0]) >= 50 and sum(len(s) for s in model.seen) == 50 + 1 + 50


def test_shared_rows_on_other_data_are_not_merged():
    X, Y = np.zeros((4, 2)), np.ones((4, 2))
    assert DataPredictions(X).key() != DataPredictions(Y).key()
    assert DataPredictions(X).key() == DataPredictions(X, [1]).key()
    assert issubclass(DataPredictions, SharedRows)


def test_the_adapter_is_a_model_like_and_the_engine_needs_nothing_else():
    X = np.random.default_rng(1).normal(size=(30, 2))
    mdl = Model(lambda A: A[:, 0], Dataset.from_data(X))
    assert isinstance(mdl, ModelLike)
    mdl.account(2, 10)
    assert (mdl.n_calls, mdl.n_rows) == (2, 10)
    # the effects run on any ModelLike through the engine: pdp on a counting stand-in
    seen = _Counting(lambda A: A[:, 0])
    (out,) = run(seen, [_Reader(X, np.arange(30), 2.0)])
    np.testing.assert_allclose(out, 2.0 - X[:, 0])


def test_ale_level_features_share_one_pass_at_the_data():
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.integers(0, 4, 400), rng.integers(0, 3, 400), rng.normal(size=400)])
    calls = []

    def f(A):
        calls.append(len(A))
        return A[:, 0] * A[:, 2] + A[:, 1]

    with ml.config(chunk_size=10**6):
        ml.ale(f, X, ["x0", "x1"])
    # the one row that tells f's outputs (asked when it is wrapped), then one pass at the
    # data (400 rows) and each level feature's steps up and down
    steps = [np.count_nonzero(X[:, j] < X[:, j].max()) + np.count_nonzero(X[:, j] > X[:, j].min())
             for j in (0, 1)]
    assert calls[0] == 1 and sum(calls[1:]) == 400 + sum(steps)


def test_warnings_from_inside_plans_name_the_callers_line():
    import warnings

    X = np.random.default_rng(3).normal(size=(300, 2))
    X[::7, 0] = np.nan
    f = lambda A: np.nan_to_num(A[:, 0]) + A[:, 1]  # noqa: E731
    calls = [lambda: ml.ale(f, X, bins=np.linspace(-1, 1, 5)),  # missing values, outside edges
             lambda: ml.mplot(f, X),
             lambda: ml.dale(f, X, gradient=lambda A: np.ones_like(A), bins=np.linspace(-1, 1, 5))]
    for call in calls:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        assert caught and {w.filename for w in caught} == {__file__}


def test_front_door_resolves_everything_a_method_repeats():
    from modellens.engine import open_request

    frame = __import__("pandas").DataFrame({"a": [1.0, 2.0, 3.0], "b": ["u", "v", "u"]})
    request = open_request(lambda D: D["a"].to_numpy(), frame, ["b", ("a", "b")], chunk_size=7)
    assert request.features == [1, (0, 1)] and request.options.chunk_size == 7
    assert not request.out_of_core and request.dataset.columns[1].is_categorical
    with pytest.raises(ml.InvalidParameterError, match="chunk_size"):
        open_request(lambda D: D["a"], frame, chunk_size=0)
    dd = pytest.importorskip("dask.dataframe")
    lazy = dd.from_pandas(frame, npartitions=2)
    request = open_request(lambda D: D["a"].to_numpy(), lazy)
    assert request.out_of_core and request.dataset.columns[1].levels.tolist() == ["u", "v"]
    with pytest.raises(ml.InvalidParameterError, match="Dask"):  # a method without plans
        open_request(lambda D: D["a"], lazy, dask="in_memory")
