r"""Automatic variable-width bins for DALE.

The local effects of DALE do not depend on the bins, so the bins can be chosen
after the gradients are known, by looking at them.  We pick the partition that
minimises an estimate of the integrated squared error of the piecewise-constant
derivative estimate (the bin means of the local effects), a bias-variance
trade-off solved exactly by dynamic programming over a set of candidate edges.
"""

from __future__ import annotations


import numpy as np

from .._validation import InvalidParameterError

from ..data import is_integer
from .binning import bin_index, quantile_edges

__all__ = ["auto_bins", "auto_bins_from_moments"]

#: Weight, in degrees of freedom, of the feature-wide heterogeneity estimate
#: that is pooled into each bin's own estimate (keeps bins made of one-point
#: atoms from claiming zero heterogeneity).
_PRIOR_DF = 2.0
#: A bin's spread of atom means counts as loss of resolution only beyond this
#: many standard deviations of what noise alone gives (chi-square with A - 1
#: degrees of freedom): an unthresholded estimate lets the search split
#: constant stretches wherever the noise happens to look like a trend.
_NOISE_MARGIN = 2.0


def auto_bins(x, local_effects, *, min_points=10, n_candidates=16):
    r"""Variable-width bin edges chosen from the local effects, and the bin of every value.

    Candidate edges are the feature's distinct values when there are at most
    ``n_candidates + 1`` of them (binary and discrete features), otherwise
    the union of ``n_candidates`` quantile edges (ties collapsed, as ALE's
    reference edges) and ``n_candidates`` equal-width edges over the observed
    range.  The intervals between consecutive candidates are *atoms*; a bin is
    a run of consecutive atoms, and a point belongs to the bin ``(z_{k-1},
    z_k]`` (the first bin closed), so tied values are never split.

    The partition minimises

    .. math::
        J = \sum_k w_k \left( \frac{\hat h_k}{n_k} + \hat b_k \right),
        \qquad n_k \ge \text{min\_points},

    an estimate of :math:`\int (\hat\mu(x) - \mu(x))^2 \, dx`, the integrated
    squared error of the bin-mean derivative :math:`\hat\mu` as an estimate of
    the mean derivative :math:`\mu(x) = E[\partial f / \partial x_s \mid x_s = x]`:

    - :math:`w_k \hat h_k / n_k` is its variance: :math:`\hat h_k`, the
      heterogeneity, is the pooled variance of the local effects *within* the
      atoms of bin ``k`` (atoms are narrow, so this is the spread at a fixed
      ``x``), shrunk towards the feature-wide pooled value with the weight of
      two degrees of freedom;
    - :math:`w_k \hat b_k` is its squared bias, the loss of resolution:
      :math:`\hat b_k` is the spread of the atom means of the local effects
      around the bin mean (the between-atom variance), less what sampling
      noise alone would produce, with a margin of two of its standard
      deviations: :math:`\hat b_k = \max(0, \sum_a n_a (\bar g_a - \bar
      g_k)^2 - (A_k - 1 + 2\sqrt{2 (A_k - 1)}) \hat h_k) / n_k` over the
      :math:`A_k` non-empty atoms (the between-atom sum of squares of a bin
      with a constant mean derivative is :math:`\hat h_k \chi^2_{A_k - 1}`).

    Merging bins whose mean derivatives agree lowers the variance term (more
    points per bin) at no cost in bias, so a linear stretch gets one wide bin;
    where the mean derivative changes, the bias term grows with the square of
    the width and forces narrow bins.  Both terms scale alike with the units
    of ``x`` and of ``f``, so the choice does not depend on them.  Among
    partitions of equal cost (up to rounding) the one with fewer bins wins.
    A single bin over the whole range is always allowed, even with fewer than
    ``min_points`` points.

    Parameters
    ----------
    x : ndarray of shape (n,)
        Observed, non-missing feature values.
    local_effects : ndarray of shape (n,)
        The derivative of the model at each point.
    min_points : int, default=10
        Least number of points in a bin.
    n_candidates : int, default=16
        Resolution of the candidate edges.

    Returns
    -------
    edges : ndarray
        Increasing bin edges from ``min(x)`` to ``max(x)`` (one edge when the
        feature is constant).
    bins : ndarray of shape (n,)
        The bin of every value (as :func:`bin_index` numbers them).
    """
    for name, value in (("min_points", min_points), ("n_candidates", n_candidates)):
        if not is_integer(value) or value < 1:
            raise InvalidParameterError(f"{name} must be a positive int, got {value!r}.")
    x = np.asarray(x, dtype=float)
    g = np.asarray(local_effects, dtype=float)
    if x.shape != g.shape or x.ndim != 1:
        raise InvalidParameterError("x and local_effects must be 1-D arrays of the same length.")
    xs = np.sort(x)
    distinct = xs[np.concatenate([[True], xs[1:] != xs[:-1]])]
    if distinct.size < 2:
        return distinct, np.zeros(x.shape, dtype=np.intp)
    if distinct.size <= n_candidates + 1:
        candidates = distinct
    else:
        candidates = np.unique(np.concatenate([
            quantile_edges(xs, int(n_candidates)),
            np.linspace(distinct[0], distinct[-1], int(n_candidates) + 1),
        ]))
    atom = bin_index(x, candidates)
    chosen = _best_partition(_bin_costs(atom, g, candidates, int(min_points)))
    # a bin is a run of atoms: atom a lies in bin k when chosen[k] <= a < chosen[k + 1]
    bin_of_atom = np.searchsorted(chosen, np.arange(candidates.size - 1), side="right") - 1
    return candidates[chosen], bin_of_atom[atom]


def auto_bins_from_moments(candidates, atoms, *, min_points=10):
    """:func:`auto_bins` from the moments of the local effects between candidate edges.

    Out of core, each partition gathers the moments (:class:`~.binning.Moments`)
    of its local effects per atom; merged, they give the same costs as the
    local effects themselves (to rounding).  Returns the chosen edges and the
    moments of their bins.
    """
    n_atoms = candidates.size - 1
    count = atoms.count.astype(float)
    n = count.sum()
    grand = np.dot(count, atoms.mean) / n if n else 0.0
    shift = atoms.mean - grand  # atom means about the overall mean, as auto_bins centres
    total = count * shift
    squares = atoms.squares + count * shift * shift
    cost = _costs(count, total, squares, np.asarray(atoms.squares, dtype=float), candidates,
                  int(min_points), squares.sum() / n if n else 0.0)
    chosen = _best_partition(cost)
    bin_of_atom = np.searchsorted(chosen, np.arange(n_atoms), side="right") - 1
    return candidates[chosen], atoms.coarsened(bin_of_atom, chosen.size - 1)


def _bin_costs(atom, g, candidates, min_points):
    """``cost[i, j]``: cost of the bin made of atoms ``i .. j-1`` (inf when not allowed)."""
    n_atoms = candidates.size - 1
    g = g - g.mean()  # sums of squares below subtract means; centring keeps them accurate
    count = np.bincount(atom, minlength=n_atoms).astype(float)
    total = np.bincount(atom, weights=g, minlength=n_atoms)
    squares = np.bincount(atom, weights=g * g, minlength=n_atoms)
    occupied = count > 0
    within = np.zeros(n_atoms)
    within[occupied] = np.maximum(
        squares[occupied] - total[occupied] ** 2 / count[occupied], 0.0)
    return _costs(count, total, squares, within, candidates, min_points, None, g)


def _costs(count, total, squares, within, candidates, min_points, spread, g=None):
    """The bin costs from the atoms' counts, sums and sums of squares of centred effects
    and their within-atom sums of squared deviations (``spread``, or ``var(g)``: the
    heterogeneity when no atom has two points)."""
    n_atoms = candidates.size - 1
    occupied = count > 0

    def span(per_atom):
        """Sum over atoms i..j-1 for every pair (i, j)."""
        prefix = np.concatenate([[0.0], np.cumsum(per_atom)])
        return prefix[None, :] - prefix[:, None]

    n, s1, s2, w_ss, n_occ = (span(a) for a in (count, total, squares, within,
                                                  occupied.astype(float)))
    df_all = count.sum() - occupied.sum()
    h_all = within.sum() / df_all if df_all > 0 else float(np.var(g) if g is not None
                                                               else spread)
    width = candidates[None, :] - candidates[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        between = np.maximum(s2 - s1 ** 2 / n - w_ss, 0.0)
        heterogeneity = (w_ss + _PRIOR_DF * h_all) / (np.maximum(n - n_occ, 0.0) + _PRIOR_DF)
        noise = (n_occ - 1) + _NOISE_MARGIN * np.sqrt(2 * np.maximum(n_occ - 1, 0.0))
        bias = np.maximum(between - noise * heterogeneity, 0.0) / n
        cost = width * (heterogeneity / n + bias)
    allowed = (width > 0) & (n >= min_points)
    allowed[0, n_atoms] = True
    return np.where(allowed, cost, np.inf)


def _best_partition(cost):
    """Edge indices of the cheapest partition of all atoms.

    Every bin pays a tiny surcharge (a billionth of the one-bin cost), so that
    of partitions equal up to rounding the one with fewer bins wins.
    """
    n_edges = cost.shape[0]
    cost = cost + 1e-9 * cost[0, -1]
    best = np.empty(n_edges)
    best[0] = 0.0
    previous = np.zeros(n_edges, dtype=np.intp)
    for j in range(1, n_edges):
        totals = best[:j] + cost[:j, j]
        i = int(np.argmin(totals))  # the first minimum: the widest last bin
        best[j], previous[j] = totals[i], i
    path = [n_edges - 1]
    while path[-1] != 0:
        path.append(previous[path[-1]])
    return np.asarray(path[::-1])
