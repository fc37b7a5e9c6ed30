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


@pytest.mark.parametrize("algorithm, options", [
    ("exact", {"n_draws": 5}),                     # leaves of 7-14 rows sampled 5 times
    ("kernel", {"n_samples": 10}),                 # whole leaves, sampled coalitions
    ("permutation", {"n_permutations": 4, "causal_order": [["x"], ["y", "z", "cat"]],
                     "asymmetric": True}),
])
@pytest.mark.filterwarnings("ignore:n_samples=10 leaves")  # (no errors: values compared)
def test_conditional_shapley_equals_in_memory_for_two_partitionings(client, algorithm,
                                                                    options):
    """A conditional game on Dask rows: every partition fits the same law from the
    background and the seed (not from its position), so its rows' values are the
    in-memory call's."""
    df = _frame(30)
    background = _frame(40, seed=1)
    kw = dict(background=background, dependence="tree", algorithm=algorithm, random_state=7,
              **options)
    memory = ml.shapley(model, df, progress=False, **kw)
    for ddf in _partitionings(df):
        with ml.config(client=client):
            attr = ml.shapley(model, ddf, **kw)
        _same(attr, memory, df.index)
    other = ml.shapley(model, df, progress=False, **{**kw, "random_state": 8})
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
    from modellens.engine import _dask_tables as _dask

    monkeypatch.setattr(_dask, "BLOCK_ROWS", 3)
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


def _three_classes(n=90, seed=5):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    y = np.where(X["a"] + X["b"] > 0.5, "hi", np.where(X["c"] > 0, "mid", "lo"))
    clf = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
    return X.set_index(pd.Index(np.arange(n) * 2 + 7)), clf


def _same_outputs(attr, memory, index):
    """Every output's columns of a several-output frame equal the in-memory result's."""
    assert attr.outputs == memory.outputs and attr.n_outputs == 3
    got = attr.frame.compute()
    pd.testing.assert_index_equal(got.index, index)
    scale = max(np.ptp(memory.values), 1.0)
    for c, output in enumerate(memory.outputs):
        cols = [f"{f} | {output}" for f in memory.feature_names]
        np.testing.assert_allclose(got[cols].to_numpy(), memory.values[..., c], rtol=0,
                                   atol=1e-12 * scale)
        np.testing.assert_allclose(got[f"base_value | {output}"], memory.base_values[:, c],
                                   rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(got[f"prediction | {output}"], memory.prediction[:, c],
                                   rtol=0, atol=1e-12 * scale)
        # one output selected gives the single-output layout and numbers
        _same(attr.for_output(output), memory.for_output(c), index)
    return got


@pytest.mark.parametrize("algorithm, options", [
    ("exact", {}),
    ("kernel", {"n_samples": 12}),
])
def test_every_class_of_a_classifier_in_one_dask_request(client, algorithm, options):
    df, clf = _three_classes()
    background = df.iloc[:12]
    memory = ml.shapley(clf, df, background=background, algorithm=algorithm, random_state=3,
                        progress=False, **options)
    assert memory.values.shape == (len(df), 3, 3)
    with ml.config(client=client):
        attr = ml.shapley(clf, dd.from_pandas(df, chunksize=25), background=background,
                          algorithm=algorithm, random_state=3, **options)
    _same_outputs(attr, memory, df.index)
    # and each output equals its own single-output call (target=)
    single = ml.shapley(clf, df, background=background, algorithm=algorithm, random_state=3,
                        progress=False, target="mid", **options)
    np.testing.assert_allclose(attr.for_output("mid").frame[memory.feature_names].compute(),
                               single.values, rtol=0, atol=1e-12)


def test_lime_and_treeshap_every_class_in_one_dask_request(client):
    from sklearn.ensemble import HistGradientBoostingClassifier

    df, _ = _three_classes(120)
    y = np.where(df["a"] > 0.3, 2, np.where(df["b"] > 0, 1, 0))
    hgb = HistGradientBoostingClassifier(max_iter=8, max_depth=3).fit(df, y)
    train = df.iloc[:60]
    memory = ml.lime(hgb, df, training_data=train, num_samples=200, random_state=2,
                     progress=False)
    tree = ml.shapley(hgb, df, algorithm="tree")
    with ml.config(client=client):
        ddf = dd.from_pandas(df, npartitions=3)
        attr = ml.lime(hgb, ddf, training_data=train, num_samples=200, random_state=2)
        tattr = ml.shapley(hgb, ddf, algorithm="tree")
    got = _same_outputs(attr, memory, df.index)
    for c, output in enumerate(memory.outputs):
        np.testing.assert_allclose(got[f"score | {output}"], memory.score[:, c], rtol=0,
                                   atol=1e-12)
    _same_outputs(tattr, tree, df.index)


def test_every_output_costs_the_model_rows_of_one_on_dask_data(row_counter):
    # the partitions' in-memory calls evaluate each row once for every output
    df, clf = _three_classes(40)
    ddf = dd.from_pandas(df, npartitions=2)
    rows = {}
    with dask.config.set(scheduler="synchronous"):
        for target in (None, 1):
            row_counter.reset()
            counted = row_counter.classifier(clf)
            ml.shapley(counted, ddf, background=df.iloc[:8], target=target).frame.compute()
            ml.lime(counted, ddf, training_data=df, num_samples=50, random_state=0,
                    target=target).frame.compute()
            p = ml.predict(counted, ddf, target=target).compute()
            rows[target] = row_counter.rows
    assert rows[None] == rows[1] > 0
    assert list(p.index) == list(df.index)


def test_summary_of_every_output_equals_in_memory():
    df, clf = _three_classes(50)
    memory = ml.shapley(clf, df, background=df.iloc[:10], progress=False)
    with dask.config.set(scheduler="synchronous"):
        attr = ml.shapley(clf, dd.from_pandas(df, npartitions=3), background=df.iloc[:10])
        summary = attr.summary(sample=12, random_state=1)
    np.testing.assert_allclose(summary.importance.to_numpy(), memory.mean_abs(), rtol=1e-12)
    assert list(summary.importance.columns) == memory.outputs
    same = memory[summary.rows]
    np.testing.assert_allclose(summary.sample.values, same.values, rtol=0, atol=1e-12)
    assert summary.sample.outputs == memory.outputs
    # the plots: every output stacked in the bar, one output for the rows' plots
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = summary.plot_bar()
    assert len(ax.patches) == 3 * 3
    np.testing.assert_allclose(sorted(p.get_width() for p in ax.patches),
                               np.sort(memory.mean_abs().ravel()), rtol=1e-12)
    ax = summary.plot_dependence("a", color=None, output="mid")
    np.testing.assert_allclose(ax.collections[0].get_offsets()[:, 1],
                               memory.values[summary.rows, 0, memory.output_position("mid")],
                               rtol=0, atol=1e-12)
    summary.plot_beeswarm(output=2)
    plt.close("all")
    single = ml.shapley(clf, dd.from_pandas(df, npartitions=3), background=df.iloc[:10],
                        target="hi")
    assert single.for_output(0) is single and single.for_output("hi") is single
    with pytest.raises(KeyError, match="one output"):
        single.for_output("mid")
