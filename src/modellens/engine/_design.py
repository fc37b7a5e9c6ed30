"""The design step of every method, written once for data in memory and Dask data.

A method's grid points, bins and neighbourhoods are functions of a column's
:class:`ColumnSummary`: its exact range and, when it has few distinct
values, those values and their counts.  In memory the summary is read from
the column (:func:`summarise_values`); out of core each partition summarises
its own rows and the summaries merge (:func:`merge_summaries`), to the same
summary.  So the same data give the same grid either way; only the quantiles
of a column with many distinct values differ, Dask's being approximate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import InvalidParameterError

__all__ = ["ColumnSummary", "DISTINCT_LIMIT", "summarise_values", "merge_summaries",
           "grid_points", "few_values", "count_quantile_edges", "feature_sample",
           "FEATURE_SAMPLE"]

#: Distinct values a summary keeps (with their counts); a column with more has none kept.
DISTINCT_LIMIT = 256


@dataclass(frozen=True)
class ColumnSummary:
    """What the design step reads of one column's non-missing values.

    Attributes
    ----------
    low, high : float
        The exact minimum and maximum (NaN when the column has no value).
    values : ndarray or None
        The sorted distinct values, when there are at most ``limit`` of them.
    counts : ndarray or None
        How often each of ``values`` occurs.
    limit : int
        The most distinct values kept.
    """

    low: float
    high: float
    values: np.ndarray | None
    counts: np.ndarray | None
    limit: int


def summarise_values(x: np.ndarray, limit: int = DISTINCT_LIMIT, *,
                     presorted: bool = False) -> ColumnSummary:
    """The summary of a column's non-missing values ``x`` (a float array, ``presorted``
    when sorted already: no second sort)."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return ColumnSummary(np.nan, np.nan, np.empty(0), np.empty(0, np.int64), limit)
    if presorted:
        change = x[1:] != x[:-1]
        if np.count_nonzero(change) >= limit:  # more than limit distinct values
            return ColumnSummary(float(x[0]), float(x[-1]), None, None, limit)
        starts = np.flatnonzero(np.concatenate([[True], change]))
        values = x[starts]
        counts = np.diff(np.append(starts, x.size)).astype(np.int64)
        return ColumnSummary(float(values[0]), float(values[-1]), values, counts, limit)
    values, counts = np.unique(x, return_counts=True)
    if values.size > limit:
        return ColumnSummary(float(values[0]), float(values[-1]), None, None, limit)
    return ColumnSummary(float(values[0]), float(values[-1]), values, counts, limit)


def merge_summaries(parts) -> ColumnSummary:
    """One summary of the rows of several (partitions' summaries, in any order)."""
    parts = list(parts)
    limit = min(p.limit for p in parts)
    filled = [p for p in parts if not np.isnan(p.low)]
    if not filled:
        return ColumnSummary(np.nan, np.nan, np.empty(0), np.empty(0, np.int64), limit)
    low, high = min(p.low for p in filled), max(p.high for p in filled)
    if any(p.values is None for p in filled):
        return ColumnSummary(low, high, None, None, limit)
    values, inverse = np.unique(np.concatenate([p.values for p in filled]),
                                return_inverse=True)
    if values.size > limit:
        return ColumnSummary(low, high, None, None, limit)
    counts = np.zeros(values.size, dtype=np.int64)
    np.add.at(counts, inverse, np.concatenate([p.counts for p in filled]))
    return ColumnSummary(low, high, values, counts, limit)


def few_values(summary: ColumnSummary, n: int) -> np.ndarray | None:
    """The column's distinct values when it has at most ``n`` of them, else None."""
    if summary.values is not None and summary.values.size <= n:
        return summary.values
    return None


def grid_points(summary: ColumnSummary, n_points: int, *, name: str = "feature") -> np.ndarray:
    """A numeric grid of ``n_points``: the distinct values when there are no more, else
    evenly spaced points from the minimum to the maximum."""
    if np.isnan(summary.low):
        raise InvalidParameterError(
            f"feature {name!r} has no non-missing values to build a grid from.")
    if n_points < 2:
        raise InvalidParameterError(f"grid must be at least 2 points, got {n_points}.")
    if summary.values is None and n_points > summary.limit:
        raise ValueError("the summary was taken with fewer distinct values than the grid "
                         "has points")  # a caller's bug: summarise with limit >= n_points
    values = few_values(summary, n_points)
    if values is not None:
        return values
    return np.linspace(summary.low, summary.high, int(n_points))


def count_quantile_edges(summary: ColumnSummary, n_bins: int) -> np.ndarray | None:
    """The type-1 quantile edges of :func:`~modellens.effects.binning.quantile_edges`,
    exact from the counts of a column of few distinct values; None for one of many."""
    if summary.values is None or summary.counts is None:
        return None
    cumulative = np.cumsum(summary.counts)
    n = int(cumulative[-1])
    probs = np.arange(1, n_bins + 1) / n_bins
    # order statistic ceil(n p) (1-based): the first value whose cumulative count reaches it
    order = np.ceil(n * probs - 1e-9).astype(np.int64).clip(1, n)
    at = np.searchsorted(cumulative, order, side="left")
    return np.unique(np.concatenate([[summary.values[0]], summary.values[at]]))


#: Values of each feature kept (spread over the partitions) as ``Effect.feature_values``.
FEATURE_SAMPLE = 10_000


def feature_sample(x, n_parts):
    """At most ``FEATURE_SAMPLE / n_parts`` of ``x``'s values, evenly spread."""
    take = max(1, -(-FEATURE_SAMPLE // n_parts))
    if x.size <= take:
        return x.copy()
    return x[np.linspace(0, x.size - 1, take).astype(np.intp)]
