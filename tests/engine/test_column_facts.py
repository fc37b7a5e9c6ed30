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
