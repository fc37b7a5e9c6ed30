"""The one-sort column facts (issue 41's ALE overhead): the same facts as the plain reading.

The references are numpy's own ``unique`` and a sort of the non-missing values; the
limit of distinct values is met exactly, passed by one, and NaN (sorted last and cut
off) must not count as a value.
"""

import numpy as np
import pytest

from modellens.data import Dataset
from modellens.effects._facts import MemoryFacts
from modellens.effects.binning import bin_index, quantile_edges
from modellens.engine import summarise_values


@pytest.mark.parametrize("distinct", [1, 5, 6, 7])
def test_a_presorted_summary_is_the_unique_values_up_to_the_limit(distinct):
    x = np.sort(np.random.default_rng(distinct).integers(0, distinct, 200).astype(float))
    values, counts = np.unique(x, return_counts=True)
    got = summarise_values(x, 6, presorted=True)
    assert (got.low, got.high) == (x[0], x[-1])
    if values.size > 6:
        assert got.values is None and got.counts is None
    else:
        np.testing.assert_array_equal(got.values, values)
        np.testing.assert_array_equal(got.counts, counts)


def test_memory_facts_leave_missing_values_out():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    X[::7, 0] = np.nan
    X[:, 1] = rng.integers(0, 4, 300)
    X[::5, 1] = np.nan
    facts = MemoryFacts(Dataset.from_data(X)).columns([0, 1], 10, n_bins=8)
    for j in (0, 1):
        x = X[~np.isnan(X[:, j]), j]
        assert (facts[j].summary.low, facts[j].summary.high) == (x.min(), x.max())
        np.testing.assert_array_equal(facts[j].edges, quantile_edges(x, 8))
    assert facts[0].summary.values is None  # 258 distinct values, over the limit
    np.testing.assert_array_equal(facts[1].summary.values, np.unique(X[~np.isnan(X[:, 1]), 1]))
    assert facts[1].summary.counts.sum() == np.count_nonzero(~np.isnan(X[:, 1]))


def test_compact_bins_are_the_binary_search_bins():
    x = np.random.default_rng(1).normal(size=5000)
    x[::11] = np.nan
    edges = quantile_edges(x[~np.isnan(x)], 20)
    compact = bin_index(x, edges, compact=True)
    assert compact.dtype == np.uint8
    np.testing.assert_array_equal(compact, np.searchsorted(edges[1:-1], x, side="left"))
    np.testing.assert_array_equal(compact, bin_index(x, edges))


# ------------------------------------------------ compiled summary and selection (issue 41)
from modellens.effects.binning import bin_stats, quantile_ranks  # noqa: E402
from modellens.engine import bin_column, grouped_moments, summarise_column  # noqa: E402


def _column(kind, n, rng):
    if kind == "normal":
        return rng.normal(size=n)
    if kind == "cauchy":  # a few huge values: the core of the data in one bucket, twice
        return rng.standard_cauchy(n)
    if kind == "ties":
        return np.round(rng.normal(size=n) * 4)
    if kind == "heavy ties":  # most values one number, the rest spread
        return np.where(rng.random(n) < 0.7, 1.5, rng.normal(size=n))
    if kind == "constant":
        return np.full(n, -2.25)
    if kind == "huge range":  # the range's width overflows float64
        return rng.uniform(-1, 1, n) * 1.7e308 * rng.choice([1.0, 1e-300], n)
    if kind == "tiny range":  # subnormal widths
        return 5e-324 * rng.integers(0, 2000, n)
    return np.sort(rng.normal(size=n))[::-1].copy()  # "descending"


KINDS = ["normal", "cauchy", "ties", "heavy ties", "constant", "huge range", "tiny range",
         "descending"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [1, 2, 255, 257, 3_000, 100_000])
def test_selected_order_statistics_are_the_sorted_values(kind, n):
    rng = np.random.default_rng(n)
    x = _column(kind, n, rng)
    x[rng.random(n) < 0.1] = np.nan
    xs = np.sort(x[~np.isnan(x)])
    m = xs.size
    ranks = np.arange(m) if m <= 3_000 else \
        np.unique(np.concatenate([[0, 1, m // 2, m - 2, m - 1], rng.integers(0, m, 40)]))
    shuffled = rng.permutation(ranks)  # asked in any order, some twice
    summary, at = summarise_column(x, 256, lambda k: np.concatenate([shuffled, shuffled[:3]]))
    if not m:
        assert at is None and np.isnan(summary.low)
        return
    np.testing.assert_array_equal(at, xs[np.concatenate([shuffled, shuffled[:3]])])
    assert (summary.low, summary.high) == (xs[0], xs[-1])


@pytest.mark.parametrize("distinct", [1, 9, 10, 11])
def test_the_compiled_summary_is_the_sorted_one(distinct):
    rng = np.random.default_rng(distinct)
    x = rng.choice(rng.normal(size=distinct) * 1e3, 5_000)
    x[::13] = np.nan
    x[::17] = 0.0
    x[::19] = -0.0  # equal to 0.0: one value
    for column in (x, np.column_stack([x, x])[:, 1]):  # contiguous, strided
        got = summarise_column(column, 10)[0]
        want = summarise_values(np.sort(x[~np.isnan(x)]), 10, presorted=True)
        assert (got.low, got.high) == (want.low, want.high)
        assert (got.values is None) == (want.values is None)
        if want.values is not None:
            np.testing.assert_array_equal(got.values, want.values)
            np.testing.assert_array_equal(got.counts, want.counts)
            assert got.counts.dtype == want.counts.dtype


@pytest.mark.parametrize("n", [7, 1_000, 50_001])
@pytest.mark.parametrize("kind", ["normal", "ties", "heavy ties"])
def test_memory_facts_edges_are_numpys_inverted_cdf_quantiles(kind, n):
    rng = np.random.default_rng(n)
    X = np.column_stack([_column(kind, n, rng), rng.integers(0, 300, n)]).astype(float)
    X[rng.random(n) < 0.05, 0] = np.nan
    for bins in (4, 16, 32):  # k / bins * n exact in floating point: numpy's type 1 is exact
        facts = MemoryFacts(Dataset.from_data(X)).columns([0, 1], 256, n_bins=bins)
        for j in (0, 1):
            x = X[~np.isnan(X[:, j]), j]
            p = np.arange(1, bins + 1) / bins
            want = np.unique(np.concatenate([[x.min()], np.quantile(x, p, method="inverted_cdf")]))
            np.testing.assert_array_equal(facts[j].edges, want)
    for bins in (7, 20):  # numpy rounds n * p (55.000000000000007 for 100 * 0.55): ranks
        facts = MemoryFacts(Dataset.from_data(X)).columns([0], 256, n_bins=bins)
        x = np.sort(X[~np.isnan(X[:, 0]), 0])
        k = np.arange(1, bins + 1)
        exact = np.maximum(-(-x.size * k // bins), 1) - 1  # ceil(n k / K), 0-based, integers
        np.testing.assert_array_equal(quantile_ranks(x.size, bins), exact)
        np.testing.assert_array_equal(facts[0].edges, np.unique(np.r_[x[0], x[exact]]))


@pytest.mark.parametrize("n_edges", [3, 21, 40])  # the count below, and a binary search
def test_compiled_bins_are_the_binary_search_bins(n_edges):
    rng = np.random.default_rng(n_edges)
    x = rng.normal(size=3_001)
    x[::7] = np.nan
    edges = np.sort(rng.choice(x[~np.isnan(x)], n_edges, replace=False))
    x[::11] = edges[rng.integers(0, n_edges, x[::11].size)]  # values on the edges
    column = np.column_stack([x, x])[:, 0]  # strided
    unit, kept, missing, outside = bin_column(column, edges, np.uint16)
    inside = (x >= edges[0]) & (x <= edges[-1])
    np.testing.assert_array_equal(kept, inside)
    np.testing.assert_array_equal(unit, np.searchsorted(edges[1:-1], x[inside], side="left"))
    assert unit.dtype == np.uint16
    assert (missing, outside) == (np.isnan(x).sum(), (~np.isnan(x) & ~inside).sum())


@pytest.mark.parametrize("dtype", [np.uint8, np.intp])
def test_grouped_moments_are_numpys_sums_to_the_bit(dtype):
    rng = np.random.default_rng(3)
    groups = rng.integers(0, 9, 20_000).astype(dtype)
    groups[groups == 4] = 5  # an empty group
    values = rng.standard_cauchy(groups.size) * 1e3
    count, mean, squares, peak = grouped_moments(groups, values, 9)
    g = groups.astype(np.intp)
    want_count = np.bincount(g, minlength=9)
    want_mean = np.zeros(9)
    np.divide(np.bincount(g, weights=values, minlength=9), want_count, out=want_mean,
              where=want_count > 0)
    dev = values - want_mean[g]
    np.testing.assert_array_equal(count, want_count)
    np.testing.assert_array_equal(mean, want_mean)
    np.testing.assert_array_equal(squares, np.bincount(g, weights=dev * dev, minlength=9))
    assert peak == np.abs(dev).max()
    with pytest.raises(ValueError):
        grouped_moments(groups, values, 5)


def test_bin_stats_of_huge_effects_stay_finite():
    # deviations beyond 1e154 overflow when squared: they are squared in units of the largest
    local = np.array([1e200, -1e200, 3e200, 0.0, 2e200, 1.0])
    mean, std, count, var_mean = bin_stats(np.array([0, 0, 0, 1, 1, 1]), local, 2)
    np.testing.assert_array_equal(count, [3, 3])
    np.testing.assert_allclose(mean, [local[:3].mean(), local[3:].mean()])
    scaled = local / 1e200  # (numpy's own std squares them, and overflows)
    np.testing.assert_allclose(std, [scaled[:3].std() * 1e200, scaled[3:].std() * 1e200],
                               rtol=1e-12)
