"""``ml.regions`` of Dask data: the local effects computed partition by partition.

The oracle is the in-memory call on the same rows: with the same bin edges
(given, or the exact ones of a feature of few values) the splits, their
evidence and every regional curve must agree (the local effects are the same
model answers, laid out in the same order); with quantile bins of a
continuous feature only Dask's approximate quantiles may move the edges, so
the known truth of a synthetic model is checked instead.
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


def _data(n=800, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(-1, 1, n),
                         "x3": rng.uniform(-1, 1, n),
                         "k": rng.integers(0, 4, n).astype(float),
                         "c": pd.Categorical(rng.choice(list("pqr"), n))})


def model(D):
    x1, x2, x3, k = (np.asarray(D[c], dtype=float) for c in ("x1", "x2", "x3", "k"))
    return 3 * x1 * (x3 > 0) + x2 + k * (np.asarray(D["c"].astype(object)) == "p")


def _same_regions(got, memory, names):
    pd.testing.assert_frame_equal(got.splits, memory.splits, rtol=1e-12, atol=1e-12)
    for name in names:
        a, b = got.effects(name), memory.effects(name)
        assert list(a) == list(b) and len(a) >= 1
        for region in a:
            np.testing.assert_allclose(a[region].values, b[region].values, rtol=0, atol=1e-12)
        np.testing.assert_allclose(got.global_effect(name).values,
                                   memory.global_effect(name).values, rtol=0, atol=1e-12)


def test_regions_of_dask_data_equal_in_memory_on_a_cluster(client):
    X = _data()
    edges = np.linspace(-1, 1, 11)
    # x1 on given edges, k of four values (its exact discrete design), c categorical
    options = dict(bins={"x1": edges}, random_state=0, n_resamples=30)
    memory = ml.regions(model, X, ["x1", "k", "c"], **options)
    assert set(memory.splits["feature"]) == {"x1", "k", "c"}
    for ddf in (dd.from_pandas(X, npartitions=3), dd.from_pandas(X, chunksize=170)):
        with ml.config(client=client):
            got = ml.regions(model, ddf, ["x1", "k", "c"], **options)
        _same_regions(got, memory, ["x1", "k", "c"])


def test_pd_regions_of_dask_data_equal_in_memory():
    # PD's grid of Dask data is the in-memory one (the same column summaries): equal results
    X = _data(500, seed=6)
    options = dict(effect="pdp", grid=8, random_state=1, n_resamples=20)
    memory = ml.regions(model, X, ["x1", "c"], **options)
    assert memory.splits["split_feature"].iloc[0] == "x3"
    with dask.config.set(scheduler="synchronous"):
        got = ml.regions(model, dd.from_pandas(X, npartitions=3), ["x1", "c"], **options)
    _same_regions(got, memory, ["x1", "c"])


def test_dale_regions_of_dask_data_equal_in_memory():
    # the rows are gathered before the derivatives: the steps' scales and the bins are
    # those of the same rows in memory, so the results are equal (two outputs too)
    X = _data(600, seed=7)[["x1", "x2", "x3"]]

    def smooth(D):
        x1, x2, x3 = (np.asarray(D[c], dtype=float) for c in ("x1", "x2", "x3"))
        return np.column_stack([3 * x1 ** 2 * (x3 > 0) + x2, np.sin(x1 * x2)])

    options = dict(effect="dale", random_state=0, n_resamples=20)
    memory = ml.regions(smooth, X, ["x1", "x2"], **options)
    assert memory.splits["split_feature"].iloc[0] == "x3"
    with dask.config.set(scheduler="synchronous"):
        got = ml.regions(smooth, dd.from_pandas(X, npartitions=3), ["x1", "x2"], **options)
    _same_regions(got, memory, ["x1", "x2"])


def test_dale_regions_of_dask_data_say_when_differences_are_unreliable():
    # a piecewise constant model: the partitions' checks, summed, warn once as in memory
    X = _data(400, seed=8)[["x1", "x2", "x3"]]

    def steps(D):
        return np.floor(5 * np.asarray(D["x1"], dtype=float)) + np.asarray(D["x2"])

    with pytest.warns(ml.ModellensWarning, match="unreliable for 'x1'"):
        ml.regions(steps, X, "x1", effect="dale", n_resamples=5, random_state=0)
    with dask.config.set(scheduler="synchronous"):
        with pytest.warns(ml.ModellensWarning, match="unreliable for 'x1'"):
            ml.regions(steps, dd.from_pandas(X, npartitions=2), "x1", effect="dale",
                       n_resamples=5, random_state=0)


def test_regions_of_dask_data_every_output_of_a_classifier():
    from sklearn.linear_model import LogisticRegression

    X = _data(600, seed=1)[["x1", "x2", "x3", "k"]]
    y = np.where(X["x1"] * (X["x3"] > 0) > 0.2, 2, np.where(X["x2"] > 0, 1, 0))
    clf = LogisticRegression().fit(X.assign(i=X["x1"] * X["x3"]), y)

    def f(D):
        return clf.predict_proba(D.assign(i=D["x1"] * D["x3"]))

    options = dict(bins={"x1": np.linspace(-1, 1, 9)}, random_state=2, n_resamples=20)
    memory = ml.regions(f, X, ["x1", "k"], **options)
    with dask.config.set(scheduler="synchronous"):
        got = ml.regions(f, dd.from_pandas(X, npartitions=4), ["x1", "k"], **options)
    assert got.global_effect("x1").values.shape[-1] == 3
    _same_regions(got, memory, ["x1", "k"])


def test_known_split_found_on_dask_data_with_approximate_quantile_bins():
    # y = 3 x1 1[x3 > 0] + x2: the regions of x1 split on x3 at 0, slopes 3 and 0
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(2000, 3)), columns=["x1", "x2", "x3"])

    def f(D):
        return 3 * D["x1"] * (D["x3"] > 0) + D["x2"]

    with dask.config.set(scheduler="synchronous"):
        r = ml.regions(f, dd.from_pandas(X, npartitions=5), "x1", random_state=0)
    split = r.splits.iloc[0]
    assert split.split_feature == "x3" and abs(split.threshold) < 0.05
    assert split.p_value < 0.01
    slopes = []
    for effect in r.effects("x1").values():
        grid, values = np.asarray(effect.grid), np.asarray(effect.values)
        slopes.append(np.polyfit(grid, values, 1)[0])
    np.testing.assert_allclose(sorted(slopes), [0.0, 3.0], atol=1e-9)


def test_no_model_row_beyond_the_global_effect_on_dask_data(row_counter):
    X = _data(400, seed=4)

    def counted(D):
        row_counter.note(D)
        return model(D)

    ddf = dd.from_pandas(X, npartitions=2)
    rows = []
    with dask.config.set(scheduler="synchronous"):
        for call in (lambda: ml.ale(counted, ddf, ["x1", "c"], bins={"x1": 8}),
                     lambda: ml.regions(counted, ddf, ["x1", "c"], bins={"x1": 8},
                                        n_resamples=10, random_state=0)):
            row_counter.reset()
            call()
            rows.append(row_counter.rows)
    assert rows[0] == rows[1] > 0


def test_regions_of_dask_data_clear_errors():
    X = _data(300)
    ddf = dd.from_pandas(X, npartitions=2)
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(ml.InvalidParameterError, match="needs numeric features"):
            ml.regions(model, ddf, "c", effect="dale")
        with pytest.raises(ml.InvalidParameterError, match="two regions need"):
            ml.regions(model, dd.from_pandas(X.iloc[:30], npartitions=2), "x1")
