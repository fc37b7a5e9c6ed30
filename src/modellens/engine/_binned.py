"""Compiled passes of binned methods: a column into its bins, values into their moments.

ALE and DALE put each data row into a bin of its feature (:func:`bin_column`)
and reduce each bin's local effects to a count, a mean and a sum of squared
deviations (:func:`grouped_moments`).  In numpy each is a dozen passes over
the rows (a comparison per bin edge, three ``bincount`` calls, a gather of the
means); on a cheap model they were a fifth of an ALE call.  Here each is one
or two passes that add in the same order as ``np.bincount``, so the sums are
the same to the last bit.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["bin_column", "grouped_moments"]

#: Up to this many inner edges a value's bin is a count of the edges below it (no branch
#: on the value), beyond it a binary search.
_COUNT_MAX_EDGES = 32
#: Values binned per block (the counts of a block stay in the fastest cache).
_BLOCK = 1024


@njit(cache=True, nogil=True)
def _bins(x, edges, unit, kept):
    """Bin of each value of ``x`` within ``edges``: ``k`` for ``(z_k, z_{k+1}]``, the first
    bin closed.  The bins of the values inside go to ``unit`` (in order), whether each
    value is inside to ``kept``; returns the number of missing values and inside ones."""
    inner = edges[1:-1]
    first, last = edges[0], edges[-1]
    count = inner.size <= _COUNT_MAX_EDGES
    block = np.empty(_BLOCK)
    below = np.empty(_BLOCK, dtype=np.int64)
    missing, m = 0, 0
    for start in range(0, x.size, _BLOCK):
        size = min(_BLOCK, x.size - start)
        for i in range(size):  # a contiguous block: the counts below run in vector lanes
            block[i] = x[start + i]
            below[i] = 0
        if count:
            for z in inner:
                for i in range(size):
                    below[i] += block[i] > z
        for i in range(size):
            v = block[i]
            inside = v >= first and v <= last  # (False for NaN)
            kept[start + i] = inside
            if not inside:
                missing += v != v
                continue
            # side="left": the edges below v
            unit[m] = below[i] if count else np.searchsorted(inner, v)
            m += 1
    return missing, m


def bin_column(x: np.ndarray, edges: np.ndarray, dtype) -> tuple:
    """The bins of the values of ``x`` inside ``edges`` (their ends included).

    Returns
    -------
    unit : ndarray of ``dtype``
        The bin of each value inside, in order (``k`` for ``(z_k, z_{k+1}]``,
        the first bin closed: :func:`~modellens.effects.binning.bin_index`).
    kept : ndarray of bool
        Whether each value is inside.
    missing, outside : int
        Values that are NaN, and values outside the edges.
    """
    x = np.asarray(x, dtype=np.float64)
    unit = np.empty(x.size, dtype=dtype)
    kept = np.empty(x.size, dtype=np.bool_)
    missing, m = _bins(x, np.asarray(edges, dtype=np.float64), unit, kept)
    return unit[:m], kept, int(missing), int(x.size - m - missing)


@njit(cache=True, nogil=True)
def _moments(groups, values, count, total, mean, squares):
    for i in range(groups.size):
        count[groups[i]] += 1
        total[groups[i]] += values[i]
    for g in range(count.size):
        if count[g] > 0:
            mean[g] = total[g] / count[g]
    peak = 0.0
    for i in range(groups.size):
        d = values[i] - mean[groups[i]]
        squares[groups[i]] += d * d
        peak = max(peak, abs(d))
    return peak


def grouped_moments(groups: np.ndarray, values: np.ndarray, n_groups: int) -> tuple:
    """Count, mean and sum of squared deviations about the mean of ``values`` per group.

    The same numbers as ``np.bincount`` of the ones, of the values, and of
    the squares of ``values - mean[groups]`` (0 as the mean of an empty
    group), with the largest ``|values - mean[groups]|`` (0 for no values).
    """
    groups = np.asarray(groups, dtype=np.intp)
    values = np.asarray(values, dtype=np.float64)
    if groups.size and (int(groups.min()) < 0 or int(groups.max()) >= n_groups):
        raise ValueError(f"groups must lie in [0, {n_groups})")
    count = np.zeros(n_groups, dtype=np.int64)
    total, mean, squares = np.zeros(n_groups), np.zeros(n_groups), np.zeros(n_groups)
    peak = _moments(groups, values, count, total, mean, squares)
    return count, mean, squares, float(peak)
