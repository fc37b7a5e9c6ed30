"""Local attributions of every row of a Dask DataFrame, on a real LocalCluster (loopback).

The oracle is the in-memory call on the same rows and seed: each partition runs
the in-memory code on its rows, each row drawing from the stream of its
position, so the values must agree row for row whatever the partitioning.  A
partition evaluates fewer rows per model call than the whole table does, and
numpy's sums and products of a different number of rows may round differently,
so agreement is asked to ``1e-12`` of the values' range (a wrong coalition, row
or seed moves values by far more).
"""

import sys

import numpy as np
import pandas as pd
import pytest

import modellens as ml

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")
cloudpickle.register_pickle_by_value(sys.modules[__name__])

pytestmark = pytest.mark.dask


_EFFECT = {"a": 0.0, "b": 1.0, "c": -2.0}


def _frame(n=60, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(size=n), "y": rng.uniform(-1, 1, size=n),
                       "z": rng.normal(size=n),
                       "cat": pd.Categorical(rng.choice(list("abc"), size=n))})
    # an index that is not the positions: the result must keep it
    return df.set_index(pd.Index(np.arange(n) * 3 + 100, name="id"))


def model(D):
    x, y, z = (np.asarray(D[c], dtype=float) for c in ("x", "y", "z"))
    level = D["cat"].astype(object).map(_EFFECT).to_numpy(dtype=float)
    # a three-way term: antithetic orders give pairwise games exactly, whatever the seed
    return np.sin(x) * y + level * z + x * z + level * x * y


def _partitionings(df):
    """Two different cuts of the same rows: two even partitions, and uneven ones."""
    return [dd.from_pandas(df, npartitions=2),
            dd.from_pandas(df, chunksize=7)]


def _same(distributed_attr, memory, index):
    got = distributed_attr.frame.compute()
    pd.testing.assert_index_equal(got.index, index)
    names = memory.feature_names
    assert list(got.columns[:len(names)]) == names
    scale = max(np.ptp(memory.values), 1.0)
    np.testing.assert_allclose(got[names].to_numpy(), memory.values, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(got["base_value"], memory.base_values, rtol=0,
                               atol=1e-12 * scale)
    np.testing.assert_allclose(got["prediction"], memory.prediction, rtol=0,
                               atol=1e-12 * scale)
    return got


@pytest.mark.parametrize("algorithm, options", [
    ("exact", {}),
    ("permutation", {"n_permutations": 10}),
    ("kernel", {"n_samples": 10}),
])
def test_model_agnostic_shapley_equals_in_memory_for_two_partitionings(client, algorithm,
                                                                       options):
    df = _frame()
    background = _frame(15, seed=1)
    memory = ml.shapley(model, df, background=background, algorithm=algorithm, random_state=7,
                        progress=False, **options)
    assert memory.method == f"shapley-{algorithm}"
    results = []
    for ddf in _partitionings(df):
        with ml.config(client=client):
            attr = ml.shapley(model, ddf, background=background, algorithm=algorithm,
                              random_state=7, **options)
        assert isinstance(attr, ml.DistributedAttributions)
        assert attr.method == memory.method and attr.npartitions == ddf.npartitions
        results.append(_same(attr, memory, df.index))
    # the sampling algorithms really sample: another seed gives other values
    if algorithm != "exact":
        other = ml.shapley(model, df, background=background, algorithm=algorithm,
                           random_state=8, progress=False, **options)
        assert np.abs(other.values - memory.values).max() > 1e-3


def test_row_streams_follow_the_position_not_the_other_rows():
    # in memory too: a row's sampled values do not depend on the rows explained with it
    df = _frame()
    background = _frame(15, seed=1)
    whole = ml.shapley(model, df, background=background, algorithm="kernel", n_samples=10,
                       random_state=3, progress=False)
    first = ml.shapley(model, df.iloc[:5], background=background, algorithm="kernel",
                       n_samples=10, random_state=3, progress=False)
    np.testing.assert_allclose(first.values, whole.values[:5], rtol=0, atol=1e-12)
    later = ml.shapley(model, df.iloc[5:], background=background, algorithm="kernel",
                       n_samples=10, random_state=3, progress=False)
    # rows 5.. are rows 0.. of this call: other streams, so other values
    assert np.abs(later.values[:5] - whole.values[5:10]).max() > 1e-3


@pytest.mark.parametrize("interventional", [False, True])
def test_treeshap_equals_in_memory_for_two_partitionings(client, interventional):
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.normal(size=(80, 4)), columns=list("abcd"))
    y = X["a"] * X["b"] + np.sin(X["c"]) + rng.normal(scale=0.1, size=80)
    tree = xgboost.XGBRegressor(n_estimators=15, max_depth=3, n_jobs=1).fit(X, y)
    background = X.iloc[:20] if interventional else None
    memory = ml.shapley(tree, X, background=background, algorithm="tree")
    assert memory.value_function == ("interventional" if interventional
                                     else "tree_path_dependent")
    for ddf in _partitionings(X):
        with ml.config(client=client):
            attr = ml.shapley(tree, ddf, background=background)
        assert attr.method == "shapley-tree"
        assert attr.value_function == memory.value_function
        _same(attr, memory, X.index)


def test_lime_equals_in_memory_for_two_partitionings(client):
    df = _frame(40)
    train = _frame(200, seed=3)
    memory = ml.lime(model, df, training_data=train, num_samples=300, random_state=5,
                     progress=False)
    for ddf in _partitionings(df):
        with ml.config(client=client):
            attr = ml.lime(model, ddf, training_data=train, num_samples=300, random_state=5)
        got = _same(attr, memory, df.index)
        np.testing.assert_allclose(got["score"], memory.score, rtol=0, atol=1e-12)


def test_to_parquet_round_trips_and_summaries_equal_in_memory(client, tmp_path):
    df = _frame(90)
    background = _frame(10, seed=1)
    memory = ml.shapley(model, df, background=background, algorithm="permutation",
                        n_permutations=10, random_state=1, progress=False)
    with ml.config(client=client):
        attr = ml.shapley(model, dd.from_pandas(df, chunksize=13), background=background,
                          algorithm="permutation", n_permutations=10, random_state=1)
        attr.to_parquet(tmp_path / "phi")
        back = dd.read_parquet(tmp_path / "phi").compute()
        summary = attr.summary(sample=25, random_state=4)
    pd.testing.assert_frame_equal(back, attr.frame.compute(), check_exact=True)
    pd.testing.assert_index_equal(back.index, df.index)
    # mean |phi| over every row, and a sample of stated rows, as the in-memory result has them
    np.testing.assert_allclose(summary.importance.to_numpy(), memory.mean_abs(), rtol=1e-12)
    assert list(summary.importance.index) == memory.feature_names
    assert summary.n_rows == len(df) and len(summary.rows) == 25
    assert np.all(np.diff(summary.rows) > 0)
    same = memory[summary.rows]
    np.testing.assert_allclose(summary.sample.values, same.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(summary.sample.prediction, same.prediction, rtol=0, atol=1e-12)
    assert (summary.sample.data == same.data).all()
    # the plots draw from these numbers
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = summary.plot_bar()
    widths = sorted(p.get_width() for p in ax.patches)
    np.testing.assert_allclose(widths, np.sort(memory.mean_abs()), rtol=1e-12)
    summary.plot_beeswarm()
    summary.plot_dependence("x")
    plt.close("all")


def test_clear_errors_for_what_dask_data_cannot_take():
    df = _frame(30)
    ddf = dd.from_pandas(df, npartitions=2)
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(ml.InvalidParameterError, match="background rows in memory"):
            ml.shapley(model, ddf, algorithm="kernel")
        with pytest.raises(ml.InvalidParameterError, match="background rows in memory"):
            ml.shapley(model, ddf, background=10)
        with pytest.raises(ml.InvalidParameterError, match="masker="):
            ml.shapley(model, ddf, masker="text")
        with pytest.raises(ml.InvalidParameterError, match="interactions=True"):
            ml.shapley(model, ddf, background=df, interactions=True)
        with pytest.raises(ml.InvalidParameterError, match="stability="):
            ml.lime(model, ddf, training_data=df, stability=3)
        with pytest.raises(ml.InvalidParameterError, match=r"Dask.*\.compute\(\)"):
            ml.shapley(model, ddf, background=ddf)
        renamed = dd.from_pandas(df.rename(columns={"z": "prediction"}), npartitions=2)
        with pytest.raises(ml.InvalidParameterError, match="'prediction'"):
            ml.shapley(model, renamed, background=df)
        # a bad option is an error at the call, not when the frame is computed
        with pytest.raises(ml.InvalidParameterError, match="n_samples"):
            ml.shapley(model, ddf, background=df, algorithm="exact", n_samples=10)


def test_dask_array_rows_are_indexed_by_position(monkeypatch):
    # and a partition explained in blocks of rows (here 3) gives the same numbers
    from modellens.engine import _partitions

    monkeypatch.setattr(_partitions, "BLOCK_ROWS", 3)
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(4)
    A = rng.normal(size=(33, 3))

    def f(M):
        return M[:, 0] * M[:, 1] * M[:, 2] + M[:, 2] ** 2

    memory = ml.shapley(f, A, background=A[:6], algorithm="permutation", n_permutations=10,
                        random_state=2, progress=False)
    with dask.config.set(scheduler="synchronous"):
        attr = ml.shapley(f, da.from_array(A, chunks=(8, 2)), background=A[:6],
                          algorithm="permutation", n_permutations=10, random_state=2)
        got = _same(attr, memory, pd.RangeIndex(33))
        summary = attr.summary(sample=9, random_state=0)
    assert list(got.columns[:3]) == ["x0", "x1", "x2"]
    np.testing.assert_allclose(summary.sample.values, memory[summary.rows].values, rtol=0,
                               atol=1e-12)
    np.testing.assert_array_equal(summary.sample.data, A[summary.rows])
