"""A column's summary and order statistics in linear time: compiled, no sort.

The design step of data in memory reads of each column its exact ends, its
distinct values and their counts when there are few (a
:class:`~._design.ColumnSummary`), and, for quantile bins, a few of its order
statistics.  A full sort gives all of that in ``O(n log n)``; on a cheap model
it was a quarter of an ALE call.  Here one pass copies the non-missing values
and finds the ends; a hash table counts the distinct values and stops at the
first one past the limit (a column of many values stops within a few hundred);
the order statistics of a column of many values come from equal-width buckets
of its range, of which only those holding an asked rank are ordered
(:func:`_select`), those of a column of few values from the counts.  Every
value is the one a sort would put at that rank: the selection only moves
values, never computes them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._design import ColumnSummary

__all__ = ["summarise_column"]

#: Buckets of the selection's first pass (fewer for short columns).
_BUCKETS = 1024
#: Buckets this short, and columns, are sorted outright by the selection.
_SHORT = 256
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing's multiplier


@njit(cache=True, nogil=True)
def _known(column, out):
    """Copy the non-NaN values of ``column`` into ``out``; their count, minimum and maximum."""
    n = 0
    low, high = np.inf, -np.inf
    for v in column:
        if v == v:
            out[n] = v
            n += 1
            if v < low:
                low = v
            if v > high:
                high = v
    return n, low, high


@njit(cache=True, nogil=True)
def _distinct(x, limit, keys, counts, used, bits_of_size):
    """Count the distinct values of ``x`` into a hash table; ``limit + 1`` (and stop) as soon
    as there are more than ``limit``.  ``keys.size == 2 ** bits_of_size``, above ``limit``."""
    mask = np.uint64(keys.size - 1)
    # Fibonacci hashing: the top bits of the product (the low bits of a round number's
    # mantissa are zeros, and so are the product's)
    shift = np.uint64(64 - bits_of_size)
    bits = x.view(np.uint64)
    found = 0
    for i in range(x.size):
        v = x[i]
        # -0.0 == 0.0: one key (a sort would make them one run of equal values too)
        h = np.uint64(0) if v == 0.0 else bits[i] * _GOLDEN
        slot = np.intp(h >> shift)
        while used[slot] and keys[slot] != v:
            slot = np.intp((np.uint64(slot) + np.uint64(1)) & mask)
        if used[slot]:
            counts[slot] += 1
            continue
        if found == limit:
            return limit + 1
        used[slot] = True
        keys[slot] = v
        counts[slot] = 1
        found += 1
    return found


@njit(cache=True, nogil=True)
def _select(x, low, high, ranks, out):
    """``out[i]``: the value a sort of ``x`` puts at ``ranks[i]`` (sorted, distinct).

    ``low`` and ``high`` are the ends of ``x``.  The values are counted into
    equal-width buckets of the range, and only the buckets holding an asked
    rank are gathered and ordered: a large one by the same means within its
    own range (:func:`_select_once`), a small one by a sort.  A bucket is a
    monotone function of the value in floating point too (a subtraction, a
    product, a floor), so every value of a bucket is at most every value of
    the next: the ranks found there are exact whatever the rounding.  No
    branch depends on the order of the values, as a quickselect's do (it ran
    slower than a sort).  (Two functions, not one recursive: numba's cache
    does not keep recursive kernels.)
    """
    gathered, offset, first, local = _buckets(x, low, high, ranks)
    for s in range(offset.size - 1):
        part = gathered[offset[s]:offset[s + 1]]
        at, upto = first[s], first[s + 1]
        if part.size > _SHORT:
            _select_once(part, part.min(), part.max(), local[at:upto], out[at:upto])
        else:
            _sort_pick(part, local[at:upto], out[at:upto])


@njit(cache=True, nogil=True)
def _select_once(x, low, high, ranks, out):
    """:func:`_select` with every gathered bucket sorted."""
    gathered, offset, first, local = _buckets(x, low, high, ranks)
    for s in range(offset.size - 1):
        at, upto = first[s], first[s + 1]
        _sort_pick(gathered[offset[s]:offset[s + 1]], local[at:upto], out[at:upto])


@njit(cache=True, nogil=True)
def _sort_pick(x, ranks, out):
    """``out[i] = sorted(x)[ranks[i]]``, sorting ``x`` in place."""
    x.sort()
    for i in range(ranks.size):
        out[i] = x[ranks[i]]


@njit(cache=True, nogil=True)
def _buckets(x, low, high, ranks):
    """The values of the buckets of ``x``'s range that hold ``ranks``, gathered bucket by
    bucket: ``(gathered, offset, first, local)``, bucket ``s`` in
    ``gathered[offset[s]:offset[s + 1]]`` holding ``ranks[first[s]:first[s + 1]]``,
    whose ranks within it are ``local``.  Few values, or a range whose width over- or
    underflows: one bucket of them all."""
    n = x.size
    n_buckets = min(_BUCKETS, n // 4 + 1)
    scale = n_buckets / (high - low) if high > low else 0.0
    if n <= _SHORT or not 0.0 < scale < np.inf:
        return x.copy(), np.array([0, n]), np.array([0, ranks.size]), ranks.copy()
    bucket = np.empty(n, dtype=np.int32)
    start = np.zeros(n_buckets + 1, dtype=np.int64)
    for i in range(n):
        b = min(int((x[i] - low) * scale), n_buckets - 1)
        bucket[i] = b
        start[b + 1] += 1
    for b in range(n_buckets):
        start[b + 1] += start[b]
    # the buckets of the asked ranks, in order, and where each one's values go
    slot = np.full(n_buckets, -1, dtype=np.int64)
    first = np.empty(ranks.size + 1, dtype=np.int64)
    offset = np.zeros(ranks.size + 1, dtype=np.int64)
    local = np.empty(ranks.size, dtype=np.int64)
    m, b = 0, 0
    for i in range(ranks.size):
        while start[b + 1] <= ranks[i]:
            b += 1
        local[i] = ranks[i] - start[b]
        if slot[b] < 0:
            slot[b], first[m] = m, i
            offset[m + 1] = offset[m] + start[b + 1] - start[b]
            m += 1
    first[m] = ranks.size
    gathered = np.empty(offset[m])
    fill = offset[:m].copy()
    for i in range(n):
        s = slot[bucket[i]]
        if s >= 0:
            gathered[fill[s]] = x[i]
            fill[s] += 1
    return gathered, offset[:m + 1], first[:m + 1], local


def summarise_column(column: np.ndarray, limit: int, ranks=None):
    """A column's :class:`~._design.ColumnSummary` and, with ``ranks``, its order statistics.

    Parameters
    ----------
    column : ndarray of float64, shape (n,)
        The values, NaN where missing (any stride: it is not written).
    limit : int
        The most distinct values the summary keeps (more: none kept).
    ranks : callable ``n -> int array``, optional
        The 0-based ranks wanted among the ``n`` sorted non-missing values.

    Returns
    -------
    summary : ColumnSummary
        The same as :func:`~._design.summarise_values` of the non-missing
        values (``-0.0`` and ``0.0`` are one value, as they are there).
    stats : ndarray or None
        The values at ``ranks(n)``, as a sort would place them (None without
        ``ranks`` or values).
    """
    column = np.asarray(column, dtype=np.float64)
    buf = np.empty(column.size)
    n, low, high = _known(column, buf)
    if n == 0:
        return ColumnSummary(np.nan, np.nan, np.empty(0), np.empty(0, np.int64), limit), None
    x = buf[:n]
    bits_of_size = max(4, int(2 * min(limit + 1, n)).bit_length())
    size = 1 << bits_of_size
    keys, counts = np.empty(size), np.zeros(size, dtype=np.int64)
    used = np.zeros(size, dtype=np.bool_)
    found = _distinct(x, limit, keys, counts, used, bits_of_size)
    wanted = None if ranks is None else np.asarray(ranks(n), dtype=np.int64)
    if found > limit:
        summary = ColumnSummary(float(low), float(high), None, None, limit)
        if wanted is None:
            return summary, None
        if wanted.size and (wanted[1:] > wanted[:-1]).all():  # sorted and distinct already
            at = np.empty(wanted.size)
            _select(x, low, high, wanted, at)
            return summary, at
        order, back = np.unique(wanted, return_inverse=True)
        at = np.empty(order.size)
        _select(x, low, high, order, at)
        return summary, at[back]
    values, counts = keys[used], counts[used]
    order = np.argsort(values, kind="stable")
    values, counts = values[order], counts[order]
    summary = ColumnSummary(float(values[0]), float(values[-1]), values, counts, limit)
    if wanted is None:
        return summary, None
    # the value of rank r: the first whose cumulative count passes r
    return summary, values[np.searchsorted(np.cumsum(counts), wanted, side="right")]
