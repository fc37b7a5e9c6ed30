"""The design step is one function of a column's summary, in memory and out of core: the same
data give the same grid points, neighbourhoods and (few-valued) bin edges.  Only the quantiles
of a column of many distinct values may differ (Dask's are approximate)."""

import warnings

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.effects.binning import quantile_edges
from modellens.engine import ColumnSummary, count_quantile_edges, grid_points, summarise_values
from modellens.engine._design import merge_summaries

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

pytestmark = pytest.mark.dask


def _frame(n=2_000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "k": rng.integers(0, 4, size=n).astype(float),  # a 4-valued numeric feature
        "skew": rng.choice([0.0, 1.0, 5.0], size=n, p=[0.7, 0.2, 0.1]),
        "x": rng.normal(size=n),
        "flag": rng.random(n) < 0.3,
        "cat": pd.Categorical(rng.choice(list("pqr"), size=n)),
    })


def model(D):
    return (np.asarray(D["k"], float) ** 2 + np.asarray(D["skew"], float) * np.asarray(D["x"])
            + np.asarray(D["flag"], float) + (D["cat"] == "q").to_numpy())


@pytest.fixture
def synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


def test_a_discrete_feature_gets_the_same_grid_from_pandas_and_dask(synchronous):
    df = _frame()
    ddf = dd.from_pandas(df, npartitions=4)
    local = ml.pdp(model, df, ["k", "skew", "flag", "cat", "x"], grid=20, progress=False)
    remote = ml.pdp(model, ddf, ["k", "skew", "flag", "cat", "x"], grid=20, progress=False)
    assert list(local["k"].grid) == [0.0, 1.0, 2.0, 3.0]
    for name in ("k", "skew", "flag", "cat", "x"):  # x: exact ends, evenly spaced
        assert list(remote[name].grid) == list(local[name].grid), name
        np.testing.assert_allclose(remote[name].values, local[name].values, rtol=0,
                                   atol=1e-12)


def test_m_plot_neighbourhoods_of_a_discrete_feature_are_its_values_in_both(synchronous):
    df = _frame()
    ddf = dd.from_pandas(df, npartitions=3)
    local = ml.mplot(model, df, ["k", "flag", "cat"], grid=10, progress=False)
    remote = ml.mplot(model, ddf, ["k", "flag", "cat"], grid=10, progress=False)
    for name in ("k", "flag", "cat"):
        assert list(remote[name].grid) == list(local[name].grid), name
        np.testing.assert_allclose(remote[name].values, local[name].values, rtol=0,
                                   atol=1e-12)


def test_bins_of_a_few_valued_feature_are_the_exact_quantile_edges(synchronous):
    rng = np.random.default_rng(0)
    v = rng.choice([0.0, 1.0, 5.0], size=2_000, p=[0.7, 0.2, 0.1])
    df = pd.DataFrame({"v": v, "x": rng.normal(size=v.size)})
    ddf = dd.from_pandas(df, npartitions=4)

    def f(D):
        return np.asarray(D["v"], float) * np.asarray(D["x"], float)

    local = ml.dale(f, df, ["v"], bins=10, progress=False)
    remote = ml.dale(f, ddf, ["v"], bins=10, progress=False)
    # (Dask's approximate quantiles put an edge at 1.408 here, a value no row has)
    np.testing.assert_array_equal(local["v"].grid, quantile_edges(v, 10))
    np.testing.assert_array_equal(remote["v"].grid, local["v"].grid)


@pytest.mark.parametrize("n_bins", [1, 2, 3, 5, 7, 20])
def test_edges_from_counts_equal_the_type_1_quantiles_of_the_rows(n_bins):
    rng = np.random.default_rng(n_bins)
    x = rng.choice([-2.0, 0.5, 1.0, 4.0, 9.0], size=137, p=[0.05, 0.4, 0.3, 0.2, 0.05])
    parts = np.array_split(x, 5)
    merged = merge_summaries([summarise_values(p) for p in parts])
    np.testing.assert_array_equal(count_quantile_edges(merged, n_bins), quantile_edges(x, n_bins))
    assert count_quantile_edges(summarise_values(np.arange(300.0)), n_bins) is None


def test_a_summary_merged_from_partitions_equals_the_whole_columns():
    x = np.random.default_rng(0).integers(0, 30, size=500).astype(float)
    whole = summarise_values(x, limit=40)
    merged = merge_summaries([summarise_values(p, limit=40) for p in np.array_split(x, 7)])
    assert (whole.low, whole.high) == (merged.low, merged.high)
    np.testing.assert_array_equal(whole.values, merged.values)
    np.testing.assert_array_equal(whole.counts, merged.counts)
    # more distinct values than the limit: ends only, and an evenly spaced grid
    many = merge_summaries([summarise_values(p, limit=10) for p in np.array_split(x, 7)])
    assert many.values is None and isinstance(many, ColumnSummary)
    np.testing.assert_array_equal(grid_points(many, 5), np.linspace(x.min(), x.max(), 5))
    np.testing.assert_array_equal(grid_points(whole, 30), np.unique(x))


def test_ale_of_a_few_valued_feature_is_discrete_in_both(synchronous):
    df = _frame()
    ddf = dd.from_pandas(df, npartitions=4)
    local = ml.ale(model, df, ["k", "flag", "x", ("k", "x")], bins=8, progress=False)
    remote = ml.ale(model, ddf, ["k", "flag", "x", ("k", "x")], bins=8, progress=False)
    for name in ("k", "flag"):  # a step per value, as in memory
        assert local[name].extra.get("discrete") and remote[name].extra.get("discrete"), name
        assert list(remote[name].grid) == list(local[name].grid), name
        np.testing.assert_allclose(remote[name].values, local[name].values, rtol=0,
                                   atol=1e-12)
    assert list(remote[("k", "x")].grid[0]) == list(local[("k", "x")].grid[0]) == [0, 1, 2, 3]


# ---------------------------------------------- one design step per method (#46)
def _few_valued(n=1_500, seed=3):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "k": rng.integers(0, 4, size=n).astype(float),  # 4 values: discrete / levels
        "skew": rng.choice([0.0, 1.0, 5.0], size=n, p=[0.7, 0.2, 0.1]),
        "m": rng.integers(0, 30, size=n).astype(float),  # 30 values: binned, exact edges
        "flag": rng.random(n) < 0.3,
        "cat": pd.Categorical(rng.choice(list("pqr"), size=n)),
    })


def _few_model(D):
    k, s, m = (np.asarray(D[c], float) for c in ("k", "skew", "m"))
    return (k ** 2 + s * np.sin(m / 5) + np.asarray(D["flag"], float) * k
            + (D["cat"] == "q").to_numpy() * m / 10)


_ALL = ["k", "skew", "m", "flag", "cat"]
_NUMERIC = ["k", "skew", "m"]
_DESIGNS = {
    # method: (call, features): each effect's grid is its design (PD's points, the M-plot's
    # neighbourhoods, ALE's / DALE's edges, values or levels)
    "pdp": (lambda X: ml.pdp(_few_model, X, _ALL, grid=12, progress=False), _ALL),
    "mplot": (lambda X: ml.mplot(_few_model, X, _ALL, grid=40, progress=False), _ALL),
    "ale": (lambda X: ml.ale(_few_model, X, _ALL, bins=8, progress=False), _ALL),
    "dale": (lambda X: ml.dale(_few_model, X, _NUMERIC, bins=8, progress=False), _NUMERIC),
    "regions ale": (lambda X: ml.regions(_few_model, X, ["m", "cat"], bins=8, n_resamples=0,
                                         max_depth=1, random_state=0, progress=False),
                    ["m", "cat"]),
    "regions pdp": (lambda X: ml.regions(_few_model, X, ["m", "cat"], effect="pdp", grid=12,
                                         n_resamples=0, max_depth=1, random_state=0,
                                         progress=False), ["m", "cat"]),
    "regions dale": (lambda X: ml.regions(_few_model, X, ["m"], effect="dale", bins=8,
                                          n_resamples=0, max_depth=1, random_state=0,
                                          progress=False), ["m"]),
}


def _grids(result, names):
    if isinstance(result, ml.Regions):
        return {n: result.global_effect(n).grid for n in names}
    return {n: result[n].grid for n in names}


@pytest.mark.parametrize("method", list(_DESIGNS))
def test_every_effect_method_has_the_same_design_for_pandas_and_dask(method, synchronous):
    """#46: each method has one design step, fed by per-column facts that the data in memory
    and the Dask summaries both give: on few-valued columns the grids, bin edges and levels
    are equal, element for element."""
    call, names = _DESIGNS[method]
    df = _few_valued()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ml.ModellensWarning)  # (regions' thin bins)
        local = _grids(call(df), names)
        remote = _grids(call(dd.from_pandas(df, npartitions=4)), names)
    for name in names:
        assert list(np.asarray(remote[name])) == list(np.asarray(local[name])), (method, name)
    if method in ("ale", "dale"):  # 30 values, 8 bins: the type-1 quantile edges of the rows
        np.testing.assert_array_equal(local["m"], quantile_edges(df["m"].to_numpy(), 8))
    if method == "pdp":
        assert list(local["cat"]) == ["p", "q", "r"] and list(local["k"]) == [0, 1, 2, 3]
