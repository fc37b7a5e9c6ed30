"""Bins of a numeric feature and the accumulation shared by ALE and DALE."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["quantile_edges", "bin_index", "accumulate"]


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


def bin_index(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin of each value: ``k`` for ``x`` in ``(z_k, z_{k+1}]``, the first bin closed.

    Values outside ``[z_0, z_K]`` go to the nearest end bin.
    """
    k = np.searchsorted(edges, x, side="left") - 1
    return np.clip(k, 0, len(edges) - 2)


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
    variance = None
    if bin_variance is not None:
        variance = np.concatenate([[0.0], np.cumsum(np.asarray(bin_variance, dtype=float))])
    return curve, variance
