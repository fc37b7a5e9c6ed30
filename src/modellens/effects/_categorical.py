"""The order of a categorical feature's levels for ALE.

ALE accumulates effects from one level to the next, so an unordered feature
needs an order first.  Levels whose rows look alike in the other features are
put next to each other (Apley & Zhu 2020, as the ALEPlot reference does it):

* for a numeric other feature, the distance between levels ``l`` and ``l'``
  is the Kolmogorov-Smirnov distance between the feature's empirical CDFs in
  the two levels, evaluated at 100 quantiles of the feature;
* for a categorical other feature, it is the total-variation distance
  (half the L1 distance) between the two levels' relative frequency tables;
* the distances are summed over the other features and the levels are sorted
  by their coordinate in a 1-D classical multidimensional scaling.
"""

from __future__ import annotations

import numpy as np

from .._validation import InvalidParameterError
from ..data import Dataset

__all__ = ["level_order", "check_level_count", "MAX_LEVELS", "level_distances", "classical_mds_1d", "level_orders_out_of_core"]

#: Points at which the empirical CDFs of a numeric feature are compared.
N_QUANTILES = 100
#: Most levels of an unordered feature whose order is computed: the distances and the
#: scaling hold about seven (L, L) float matrices (2,000 levels: 220 MB, seconds; 10,000:
#: 5.6 GB and the O(L^3) eigendecomposition, minutes).
MAX_LEVELS = 2000


def level_order(dataset: Dataset, j: int) -> np.ndarray:
    """Codes of the observed levels of column ``j`` in their ALE order.

    An ordered categorical keeps its own order.  Otherwise levels are sorted
    by the 1-D classical MDS coordinate of :func:`level_distances`; of the two
    mirror images MDS can give, the one that starts with the smaller code is
    taken, so the same data always give the same order.
    """
    x = dataset.values[:, j]
    codes = np.unique(x[~np.isnan(x)])
    if dataset.columns[j].ordered or codes.size <= 2:
        # two levels have one step whichever way round; keep the codes' order
        return codes
    check_level_count(dataset.columns[j].name, codes.size)
    coord = classical_mds_1d(level_distances(dataset, j, codes))
    order = np.argsort(coord, kind="stable")
    if order[0] > order[-1]:
        order = order[::-1]
    return codes[order]


def check_level_count(name, n_levels: int) -> None:
    """Refuse to order more than ``MAX_LEVELS`` levels, saying what it would cost and what to do."""
    if n_levels <= MAX_LEVELS:
        return
    gigabytes = 7 * 8 * float(n_levels) ** 2 / 1e9
    raise InvalidParameterError(
        f"ALE of the categorical feature {name!r}: its {n_levels:,} unordered levels need an "
        f"order first, from the distances between every pair of levels (about "
        f"{gigabytes:,.1f} GB of memory and time growing with the cube of the levels); "
        f"modellens orders at most {MAX_LEVELS:,} levels. Use ml.pdp with grid= its most "
        "frequent levels, group the rare levels into one (such as 'other'), or give the "
        "column an order of its own (pd.Categorical(..., ordered=True)), which ALE follows.")


def _order_of(codes, distances):
    """Codes sorted by the 1-D MDS coordinate, the mirror image that starts lower."""
    order = np.argsort(classical_mds_1d(distances), kind="stable")
    if order[0] > order[-1]:
        order = order[::-1]
    return codes[order]


def level_orders_out_of_core(table, columns) -> dict:
    """:func:`level_order` of each column of out-of-core data, from merged per-level counts.

    Each partition counts, per level of the explained column, the rows below
    each of ``N_QUANTILES`` quantiles of every numeric other column (Dask's
    approximate quantiles of its non-missing values stand for the exact ones)
    and the rows at each level of every categorical other column; the sums
    over partitions are the in-memory profiles (equal for categorical
    others, within the quantile tolerance for numeric ones).
    """
    schema = table.schema
    codes = {j: table.observed[j] for j in columns}
    todo = [j for j in columns if not (schema.columns[j].ordered or codes[j].size <= 2)]
    out = {j: codes[j] for j in columns if j not in todo}
    for j in todo:
        check_level_count(schema.columns[j].name, codes[j].size)
    if not todo:
        return out
    numeric = [k for k, c in enumerate(schema.columns) if not c.is_categorical]
    probs = np.linspace(0.0, 1.0, N_QUANTILES)
    points = {}
    if numeric:
        q, asked = table.quantiles(numeric, probs)
        at = np.searchsorted(asked, probs)
        points = {k: q[at, c] for c, k in enumerate(numeric)}
    sizes = {k: len(c.levels) for k, c in enumerate(schema.columns) if c.is_categorical}
    parts = table.map(None, _level_counts, todo, codes, points, sizes)
    for j in todo:
        total = np.zeros((codes[j].size, codes[j].size))
        for k in range(len(schema.columns)):
            if k == j:
                continue
            counts = sum(part[j][k][0] for part in parts)
            size = sum(part[j][k][1] for part in parts)
            with np.errstate(invalid="ignore", divide="ignore"):
                profile = counts / size[:, None]
            total += _pairwise(profile, 0.5 if k in sizes else None)
        out[j] = _order_of(codes[j], total)
    return out


def _level_counts(values, model, index, columns, codes, points, sizes):
    """One partition's per-level counts: below numeric quantiles, at categorical levels."""
    out: dict[int, dict] = {}
    for j in columns:
        n_levels = codes[j].size
        lookup = np.full(int(codes[j].max()) + 1, -1, dtype=np.intp)
        lookup[codes[j].astype(np.intp)] = np.arange(n_levels)
        xj = values[:, j]
        has = ~np.isnan(xj)
        out[j] = {}
        for k in range(values.shape[1]):
            if k == j:
                continue
            xk = values[:, k]
            keep = has & ~np.isnan(xk)
            pos = lookup[xj[keep].astype(np.intp)]
            size = np.bincount(pos, minlength=n_levels).astype(float)
            if k in sizes:
                n_other = sizes[k]
                counts = np.bincount(pos * n_other + xk[keep].astype(np.intp),
                                     minlength=n_levels * n_other).reshape(n_levels, n_other)
            else:
                counts = np.zeros((n_levels, points[k].size))
                order = np.lexsort((xk[keep], pos))
                xs, ps = xk[keep][order], pos[order]
                starts = np.searchsorted(ps, np.arange(n_levels + 1))
                for level in range(n_levels):
                    block = xs[starts[level]:starts[level + 1]]
                    counts[level] = np.searchsorted(block, points[k], side="right")
            out[j][k] = (counts.astype(float), size)
    return out


def level_distances(dataset: Dataset, j: int, codes: np.ndarray) -> np.ndarray:
    """Summed distances between the levels ``codes`` of column ``j``.

    Returns an ``(L, L)`` symmetric matrix: the sum over every other column of
    the KS distance (numeric) or total-variation distance (categorical)
    between the column's distribution in the two levels.  Rows missing either
    value are left out of that column's comparison.
    """
    values = dataset.values
    n_levels = codes.size
    lookup = np.full(int(codes.max()) + 1, -1, dtype=np.intp)
    lookup[codes.astype(np.intp)] = np.arange(n_levels)
    xj = values[:, j]
    has_level = ~np.isnan(xj)
    total = np.zeros((n_levels, n_levels))
    for k, col in enumerate(dataset.columns):
        if k == j:
            continue
        xk = values[:, k]
        keep = has_level & ~np.isnan(xk)
        if not keep.any():
            continue
        pos = lookup[xj[keep].astype(np.intp)]
        if col.is_categorical:
            profile = _frequency_profiles(pos, xk[keep].astype(np.intp), n_levels)
            scale = 0.5
        else:
            profile = _cdf_profiles(pos, xk[keep], n_levels)
            scale = None
        total += _pairwise(profile, scale)
    return total


def _frequency_profiles(pos, other_codes, n_levels):
    """Relative frequency of each other-level within each level, ``(L, C)``."""
    n_other = int(other_codes.max()) + 1
    table = np.bincount(pos * n_other + other_codes, minlength=n_levels * n_other)
    table = table.reshape(n_levels, n_other).astype(float)
    size = table.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return table / size


def _cdf_profiles(pos, x, n_levels):
    """Empirical CDF of ``x`` within each level at the quantiles of ``x``, ``(L, Q)``."""
    # R's default quantile (type 7) is numpy's default "linear" method
    points = np.quantile(x, np.linspace(0.0, 1.0, N_QUANTILES))
    # x <= points[q] exactly when q >= (points below x): counts per level and bucket,
    # summed over the buckets, are the counts at or below every point, in one pass
    # (not a sort and a search per level: 1,000 levels x 100 columns)
    q = points.size
    below = np.searchsorted(points, x, side="left")
    table = np.bincount(pos * (q + 1) + below, minlength=n_levels * (q + 1))
    counts = np.cumsum(table.reshape(n_levels, q + 1), axis=1)[:, :q]
    size = counts[:, -1:] + table.reshape(n_levels, q + 1)[:, q:]
    out = np.full((n_levels, q), np.nan)
    full = size[:, 0] > 0
    out[full] = counts[full] / size[full]
    return out


def _pairwise(profile, scale):
    """Max-abs (``scale=None``, KS) or scaled L1 distance between rows of ``profile``."""
    n_levels = profile.shape[0]
    if scale is None:
        # the max of |a - b| is exact in any order: scipy's loop in C, not an (L, Q)
        # temporary per level (a 1,000-level column took a second per other column)
        from scipy.spatial.distance import cdist

        blank = np.isnan(profile).any(axis=1)
        dist = cdist(np.where(blank[:, None], 0.0, profile),
                     np.where(blank[:, None], 0.0, profile), "chebyshev")
        dist[blank] = 0.0  # a level without rows for this column: distance 0, as below
        dist[:, blank] = 0.0
        return dist
    dist = np.zeros((n_levels, n_levels))
    for level in range(n_levels):
        gap = np.abs(profile - profile[level])
        dist[level] = scale * gap.sum(axis=1)
    # a level without rows for this column gives no information: distance 0
    return np.nan_to_num(dist, nan=0.0)


def classical_mds_1d(distances: np.ndarray) -> np.ndarray:
    r"""First coordinate of classical (Torgerson) MDS.

    With :math:`J = I - \mathbf{1}\mathbf{1}^\top / L`, the double-centred
    matrix :math:`B = -\tfrac12 J D^{(2)} J` is decomposed and the coordinate
    is the leading eigenvector times the square root of its eigenvalue (as R's
    ``cmdscale(D, k = 1)``).
    """
    d = np.asarray(distances, dtype=float)
    n = d.shape[0]
    centre = np.eye(n) - 1.0 / n
    b = -0.5 * centre @ (d * d) @ centre
    eigval, eigvec = np.linalg.eigh((b + b.T) / 2)
    return eigvec[:, -1] * np.sqrt(max(eigval[-1], 0.0))
