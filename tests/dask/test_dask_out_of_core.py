"""Out of core through the same plans: Dask data give the in-memory results on the same rows.

Tolerances: bin edges and M-plot neighbourhoods of ``bins=int`` / ``grid=int`` come
from Dask's approximate quantiles, whose share of the data below them is within
``1 / QUANTILE_STEPS`` (0.1%) of the asked probability; with the same edges (or
levels, or grid points) the results equal the in-memory ones to float rounding
(the partitions' moments merged pairwise instead of one pass: ``1e-12`` of the
curve's range here).
"""

import sys

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.engine import DataPredictions, Plan, open_request
from modellens.engine._out_of_core import QUANTILE_STEPS

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")
cloudpickle.register_pickle_by_value(sys.modules[__name__])

pytestmark = pytest.mark.dask


@pytest.fixture
def synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


def _frame(n=12_000, seed=0):
    rng = np.random.default_rng(seed)
    cat = rng.choice(list("abcde"), size=n)
    a = rng.normal(size=n) + (cat == "c") * 2.0 - (cat == "a")  # levels differ in a
    return pd.DataFrame({
        "a": a,
        "b": rng.uniform(-1, 1, size=n),
        "cat": pd.Categorical(cat),
        "txt": rng.choice(["u", "v", "w"], size=n).astype(object),
    })


_EFFECT = {"a": 0.0, "b": 1.0, "c": -2.0, "d": 0.5, "e": 3.0}


def model(D):
    a, b = np.asarray(D["a"], dtype=float), np.asarray(D["b"], dtype=float)
    level = D["cat"].astype(object).map(_EFFECT).to_numpy(dtype=float)
    return np.sin(a) * b + level * a + (D["txt"] == "u").to_numpy() * b ** 2


def _close(got, ref, scale=None):
    scale = np.ptp(ref) if scale is None else scale
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * max(scale, 1.0))


def test_second_order_ale_equals_in_memory_on_the_same_edges(synchronous):
    df = _frame()
    ddf = dd.from_pandas(df, npartitions=6)
    remote = ml.ale(model, ddf, [("a", "b")], bins=6, progress=False)[("a", "b")]
    za, zb = (np.asarray(g) for g in remote.grid)
    # the edges are the approximate quantiles: within 1 / QUANTILE_STEPS of k / K
    for z, name in ((za, "a"), (zb, "b")):
        x = np.sort(df[name].to_numpy())
        share = np.searchsorted(x, z[1:-1], side="right") / x.size
        assert np.abs(share - np.arange(1, 6) / 6).max() <= 1 / QUANTILE_STEPS
    same = ml.ale(model, df, [("a", "b")], bins={("a", "b"): (za, zb)},
                  progress=False)[("a", "b")]
    np.testing.assert_array_equal(remote.counts, same.counts)
    np.testing.assert_array_equal(remote.bins.counts, same.bins.counts)
    _close(remote.values, same.values)
    np.testing.assert_allclose(remote.std, same.std, rtol=1e-9, atol=1e-12)
    # feature values: a sample of each feature spread over the partitions
    for sample, name in zip(remote.feature_values, ("a", "b")):
        assert 1000 < sample.size <= 10_000 + 6 and np.isin(sample, df[name]).all()


def test_categorical_and_text_columns_equal_in_memory(client):
    df = _frame(seed=1)
    ddf = dd.from_pandas(df, npartitions=5)
    with ml.config(client=client, progress=False):
        pd_remote = ml.pdp(model, ddf, ["cat", "txt", ("b", "cat")], grid=5)
        m_remote = ml.mplot(model, ddf, ["cat", "txt"])
        ale_remote = ml.ale(model, ddf, ["cat", "txt"])
    pd_local = ml.pdp(model, df, ["cat", "txt", ("b", "cat")], grid=5, progress=False)
    m_local = ml.mplot(model, df, ["cat", "txt"], progress=False)
    ale_local = ml.ale(model, df, ["cat", "txt"], progress=False)
    for name in ("cat", "txt"):
        # the same levels: the same grid rows, so PD equals to rounding
        assert list(pd_remote[name].grid) == list(pd_local[name].grid)
        _close(pd_remote[name].values, pd_local[name].values)
        # M-plots: one neighbourhood per level, moments merged over partitions
        assert list(m_remote[name].grid) == list(m_local[name].grid)
        np.testing.assert_array_equal(m_remote[name].counts, m_local[name].counts)
        _close(m_remote[name].values, m_local[name].values)
        np.testing.assert_allclose(m_remote[name].std, m_local[name].std, rtol=1e-9, atol=1e-12)
        # ALE: the KS + MDS level order from merged per-level counts is the in-memory one
        assert list(ale_remote[name].grid) == list(ale_local[name].grid)
        np.testing.assert_array_equal(ale_remote[name].counts, ale_local[name].counts)
        _close(ale_remote[name].values, ale_local[name].values)
        _close(ale_remote[name].band.upper, ale_local[name].band.upper)
    assert list(ale_local["cat"].grid) != sorted(ale_local["cat"].grid)  # an order was learnt
    pair_r, pair_l = pd_remote[("b", "cat")], pd_local[("b", "cat")]
    assert list(pair_r.grid[1]) == list(pair_l.grid[1])
    _close(pair_r.values, pair_l.values)


def gradient_of(D):
    a, b = np.asarray(D["a"], dtype=float), np.asarray(D["b"], dtype=float)
    return np.column_stack([np.where(a > 0.5, 3.0, 0.2) + 0.0 * b, np.cos(b)])


def smooth(D):
    a, b = np.asarray(D["a"], dtype=float), np.asarray(D["b"], dtype=float)
    return np.where(a > 0.5, 3.0 * a - 1.2, 0.2 * a) + np.sin(b)


def test_dale_auto_bins_equal_in_memory_within_the_quantile_tolerance(synchronous):
    df = _frame(20_000, seed=2)[["a", "b"]]
    ddf = dd.from_pandas(df, npartitions=4)
    remote = ml.dale(smooth, ddf, bins="auto", gradient=gradient_of, progress=False)
    local = ml.dale(smooth, df, bins="auto", gradient=gradient_of, progress=False)
    for name in ("a", "b"):
        r, m = remote[name], local[name]
        # the candidate edges are approximate quantiles (and the exact range), so the chosen
        # partition can move with them; the curve is the in-memory auto curve within that
        # curve's own confidence band, and about as finely cut
        half = (m.band.upper - m.band.lower) / 2
        assert (np.abs(np.interp(m.grid, r.grid, r.values) - m.values) <= half).all()
        assert abs(r.grid.size - m.grid.size) <= 0.2 * m.grid.size
        # on its own edges the curve is the in-memory one to rounding: the bins' moments
        # merged over partitions are the bins' statistics
        same = ml.dale(smooth, df, features=name, bins={name: r.grid}, gradient=gradient_of,
                       progress=False)[name]
        np.testing.assert_array_equal(r.counts, same.counts)
        _close(r.values, same.values)
        np.testing.assert_allclose(r.std, same.std, rtol=1e-9, atol=1e-12)
    # the break at a = 0.5 is found by both
    assert np.abs(remote["a"].grid - 0.5).min() < 0.1


def test_ice_on_a_sample_of_rows_equals_in_memory(synchronous):
    df = _frame(8000, seed=3)
    ddf = dd.from_pandas(df, npartitions=7)
    kw = dict(ice=True, sample=300, random_state=4, grid=6, center=True, progress=False)
    remote = ml.pdp(model, ddf, ["a", "cat"], **kw)
    local = ml.pdp(model, df, ["a", "cat"], **kw)
    for name in ("a", "cat"):
        np.testing.assert_array_equal(remote[name].ice_rows, local[name].ice_rows)
        # the same rows at the same grid points: the same curves, bit for bit
        np.testing.assert_array_equal(remote[name].ice, local[name].ice)
        np.testing.assert_array_equal(remote[name].values, local[name].values)


class MeanPrediction(Plan):
    """A method written only as a plan: the mean prediction of the rows with x > 0."""

    def __init__(self, values, j):
        self.x = values[:, j]
        self.at_data = DataPredictions(values)
        self.shared_rows = [self.at_data]

    def reduce(self):
        return self.finish(self.summarise())

    def summarise(self):
        if not self.x.size:
            return 0.0, 0
        p = self.at_data.at()[self.x > 0]
        return p.sum(), p.size

    def merge(self, summaries):
        return sum(s for s, _ in summaries), sum(n for _, n in summaries)

    def finish(self, summary):
        total, n = summary
        return total / n


def mean_prediction(model, X, feature, **options):
    request = open_request(model, X, [feature], **options)
    (j,) = request.features
    return request.run(lambda values, part, mdl: [MeanPrediction(values, j)])[0]


def test_a_method_written_as_a_plan_gets_out_of_core_and_cluster_forms(client):
    df = _frame(5000, seed=5)
    truth = model(df)[df["b"].to_numpy() > 0].mean()
    local = mean_prediction(model, df, "b", progress=False)
    out_of_core = mean_prediction(model, dd.from_pandas(df, npartitions=4), "b", progress=False)
    with ml.config(client=client, progress=False):
        cluster = mean_prediction(model, df, "b")
        both = mean_prediction(model, dd.from_pandas(df, npartitions=3), "b")
    for got in (local, out_of_core, cluster, both):
        np.testing.assert_allclose(got, truth, rtol=1e-12)
    assert local == cluster  # the cluster folds the chunks in order: bit for bit
