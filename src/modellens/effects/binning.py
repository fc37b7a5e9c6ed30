"""Bins of a numeric feature and the accumulation shared by ALE and DALE."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["quantile_edges", "check_edges", "bin_index", "accumulate", "accumulate_levels"]

#: Up to this many inner edges, counting the edges below each value beats a binary search.
_COUNT_MAX_EDGES = 32


def quantile_edges(x: np.ndarray, n_bins: int) -> np.ndarray:
    r"""Bin edges as the ALE reference computes them.

    The edges are the minimum of ``x`` followed by its type-1 quantiles (the
    inverse empirical CDF) at ``k / K`` for ``k = 1..K``, with ties collapsed,
    so a feature with repeated values gets fewer than ``K`` bins.

    Parameters
    ----------
    x : ndarray
        Observed, non-missing values.
    n_bins : int
        Requested number of bins ``K``.
    """
    if not isinstance(n_bins, (numbers.Integral, np.integer)) or n_bins < 1:
        raise ValueError(f"bins must be a positive int, an array of edges or 'auto', got {n_bins!r}.")
    xs = np.sort(np.asarray(x, dtype=float))
    n = xs.size
    if n == 0:
        raise ValueError("cannot bin a feature with no non-missing values.")
    probs = np.arange(1, n_bins + 1) / n_bins
    # type 1: the smallest x with empirical CDF >= p, i.e. order statistic ceil(n p)
    order = np.ceil(n * probs - 1e-9).astype(np.intp).clip(1, n) - 1
    return np.unique(np.concatenate([[xs[0]], xs[order]]))


def check_edges(edges, name="feature") -> np.ndarray:
    """Validate explicit bin edges: a 1-D, finite, strictly increasing float array."""
    try:
        z = np.asarray(edges, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the bin edges for {name!r} must be numbers.") from exc
    if z.ndim != 1 or z.size < 2:
        raise ValueError(f"the bin edges for {name!r} must be a 1-D array of at least 2 edges, "
                         f"got shape {z.shape}.")
    if not np.isfinite(z).all():
        raise ValueError(f"the bin edges for {name!r} hold NaN or inf.")
    if not (np.diff(z) > 0).all():
        raise ValueError(f"the bin edges for {name!r} must be strictly increasing; "
                         "sort them and drop repeated values.")
    return z


def bin_index(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin of each value: ``k`` for ``x`` in ``(z_k, z_{k+1}]``, the first bin closed.

    Values outside ``[z_0, z_K]`` go to the nearest end bin.
    """
    # counting only the inner edges below x clips to the end bins for free
    inner = np.asarray(edges, dtype=float)[1:-1]
    x = np.asarray(x)
    if inner.size > _COUNT_MAX_EDGES or x.size < 1024:
        return np.searchsorted(inner, x, side="left")
    # a few vectorised comparisons are several times faster than a binary search
    # per value, whose branches a random order of values keeps mispredicting
    count = np.zeros(x.shape, dtype=np.uint8)
    above = np.empty(x.shape, dtype=bool)
    for z in inner:
        np.greater(x, z, out=above)
        count += above.view(np.uint8)
    index = count.astype(np.intp)
    index[np.isnan(x)] = inner.size  # where the binary search puts NaN: last
    return index


def accumulate(bin_effects: np.ndarray, counts: np.ndarray, bin_variance=None):
    r"""Accumulate per-bin effects into a centred curve at the bin edges.

    .. math::
        \tilde g(z_k) = \sum_{j \le k} \Delta_j, \qquad
        g(z_k) = \tilde g(z_k) - \frac{\sum_j n_j (\tilde g(z_{j-1}) + \tilde g(z_j)) / 2}
                                     {\sum_j n_j}

    where :math:`\Delta_j` is the effect of bin ``j`` (mean local difference,
    or mean derivative times width) and :math:`n_j` its count.

    Parameters
    ----------
    bin_effects : ndarray of shape (K,)
        :math:`\Delta_j`; empty bins should hold 0.
    counts : ndarray of shape (K,)
    bin_variance : ndarray of shape (K,), optional
        Variance of each bin's effect estimate (e.g. the local effects'
        variance over the count); the variance of the accumulated sum is
        returned alongside.

    Returns
    -------
    values : ndarray of shape (K + 1,)
        The centred curve at the edges.
    variance : ndarray of shape (K + 1,) or None
        Variance of the uncentred accumulated curve at each edge (0 at
        :math:`z_0`), the sum of the bin variances up to that edge.
    """
    bin_effects = np.asarray(bin_effects, dtype=float)
    counts = np.asarray(counts, dtype=float)
    curve = np.concatenate([[0.0], np.cumsum(bin_effects)])
    total = counts.sum()
    if total > 0:
        mid = (curve[:-1] + curve[1:]) / 2
        curve = curve - np.dot(counts, mid) / total
    return curve, _accumulated_variance(bin_variance)


def accumulate_levels(level_effects: np.ndarray, counts: np.ndarray, step_variance=None):
    r"""Accumulate effects between adjacent levels and centre by level frequency.

    For levels (or distinct values) :math:`v_0 < \dots < v_{L-1}` in their ALE
    order, with :math:`\Delta_t` the mean effect of the step from
    :math:`v_t` to :math:`v_{t+1}`,

    .. math::
        \tilde g(v_t) = \sum_{s < t} \Delta_s, \qquad
        g(v_t) = \tilde g(v_t) - \frac{\sum_s n_s \tilde g(v_s)}{\sum_s n_s}.

    Parameters
    ----------
    level_effects : ndarray of shape (L - 1,)
    counts : ndarray of shape (L,)
        Data points at each level.
    step_variance : ndarray of shape (L - 1,), optional
        Variance of each step's estimate.

    Returns
    -------
    values : ndarray of shape (L,)
    variance : ndarray of shape (L,) or None
        Variance of the uncentred accumulated sum at each level (0 at the
        first).
    """
    counts = np.asarray(counts, dtype=float)
    curve = np.concatenate([[0.0], np.cumsum(np.asarray(level_effects, dtype=float))])
    total = counts.sum()
    if total > 0:
        curve = curve - np.dot(counts, curve) / total
    return curve, _accumulated_variance(step_variance)


def _accumulated_variance(variance):
    """Variance of a running sum of independent estimates, 0 at the start."""
    if variance is None:
        return None
    return np.concatenate([[0.0], np.cumsum(np.asarray(variance, dtype=float))])
