"""Bins of a numeric feature and the accumulation shared by ALE and DALE."""

from __future__ import annotations

import numbers
import warnings
from statistics import NormalDist

import numpy as np

from .._validation import InvalidParameterError, ModellensWarning, user_stacklevel
from ..engine import grouped_moments

__all__ = ["quantile_edges", "quantile_ranks", "edges_of", "check_bins", "check_edges", "inside_edges", "bin_index", "bin_stats",
           "moment_stats", "Moments", "CoMoments", "accumulate", "accumulate_levels",
           "EMPTY_BINS", "empty_bin_slopes", "band_half_width"]

#: What an empty bin's effect is: 0, or its neighbours' slope interpolated.
EMPTY_BINS = ("zero", "interpolate")

#: Deviations larger than this are squared in units of the largest (their squares overflow).
_SQUARE_SAFE = 1e100
#: Up to this many inner edges, counting the edges below each value beats a binary search.
_COUNT_MAX_EDGES = 32


def quantile_edges(x: np.ndarray, n_bins: int, *, presorted: bool = False) -> np.ndarray:
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
    presorted : bool, default=False
        ``x`` is sorted already (saves a sort when the caller has one).
    """
    check_bins(n_bins)
    xs = np.asarray(x, dtype=float) if presorted else np.sort(np.asarray(x, dtype=float))
    n = xs.size
    if n == 0:
        raise InvalidParameterError("cannot bin a feature with no non-missing values.")
    return edges_of(xs[0], xs[quantile_ranks(n, n_bins)])


def check_bins(n_bins):
    """Refuse a number of quantile bins that is not a positive int."""
    if not isinstance(n_bins, (numbers.Integral, np.integer)) or n_bins < 1:
        raise InvalidParameterError(
            f"bins must be a positive int, an array of edges or 'auto', got {n_bins!r}.")


def quantile_ranks(n: int, n_bins: int) -> np.ndarray:
    """The 0-based ranks, among ``n`` sorted values, of :func:`quantile_edges`' quantiles."""
    probs = np.arange(1, n_bins + 1) / n_bins
    # type 1: the smallest x with empirical CDF >= p, i.e. order statistic ceil(n p)
    return np.ceil(n * probs - 1e-9).astype(np.intp).clip(1, n) - 1


def edges_of(low, quantiles: np.ndarray) -> np.ndarray:
    """:func:`quantile_edges` from the minimum and the values at :func:`quantile_ranks`."""
    return np.unique(np.concatenate([[low], quantiles]))


def check_edges(edges, name="feature") -> np.ndarray:
    """Validate explicit bin edges: a 1-D, finite, strictly increasing float array."""
    try:
        z = np.array(edges, dtype=np.float64)  # a copy: results must not alias the caller's array
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"the bin edges for {name!r} must be numbers.") from exc
    if z.ndim != 1 or z.size < 2:
        raise InvalidParameterError(
            f"the bin edges for {name!r} must be a 1-D array of at least 2 edges, "
            f"got shape {z.shape}.")
    if not np.isfinite(z).all():
        raise InvalidParameterError(f"the bin edges for {name!r} hold NaN or inf.")
    if not (np.diff(z) > 0).all():
        raise InvalidParameterError(
            f"the bin edges for {name!r} must be strictly increasing; "
            "sort them and drop repeated values.")
    return z


def inside_edges(x: np.ndarray, edges: np.ndarray, name, what: str):
    """Mask of the values within explicit ``edges``; warns with a count when some are not."""
    inside = (x >= edges[0]) & (x <= edges[-1])
    if not inside.all():
        warnings.warn(f"{int((~inside).sum())} of {x.size} values of {name!r} lie outside the bin "
                      f"edges [{edges[0]:g}, {edges[-1]:g}]; they are left out of its {what}.",
                      ModellensWarning, stacklevel=user_stacklevel())
    return inside


def bin_index(x: np.ndarray, edges: np.ndarray, *, compact: bool = False) -> np.ndarray:
    """Bin of each value: ``k`` for ``x`` in ``(z_k, z_{k+1}]``, the first bin closed.

    Values outside ``[z_0, z_K]`` go to the nearest end bin.  ``compact``: the
    bins may come back in a smaller unsigned integer type (uint8 for few edges).
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
    index = count if compact else count.astype(np.intp)
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
        Variance of the centred curve at each edge, the bins' estimates taken
        as independent: the centred value at :math:`z_k` is
        :math:`\sum_j (1[j \le k] - \omega_j) \Delta_j` with
        :math:`\omega_j = (n_j / 2 + \sum_{i > j} n_i) / \sum_i n_i`, the
        weight of bin ``j`` in the centring constant.
    """
    bin_effects = np.asarray(bin_effects, dtype=float)
    counts = np.asarray(counts, dtype=float)
    curve = np.concatenate([[0.0], np.cumsum(bin_effects)])
    total = counts.sum()
    if total > 0:
        mid = (curve[:-1] + curve[1:]) / 2
        curve = curve - np.dot(counts, mid) / total
    after = total - np.cumsum(counts)
    omega = (counts / 2 + after) / total if total > 0 else np.zeros_like(counts)
    return curve, _centred_variance(bin_variance, omega)


def accumulate_levels(level_effects: np.ndarray, counts: np.ndarray, step_variance=None,
                      step_covariance=None):
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
    step_covariance : ndarray of shape (L - 2,), optional
        Covariance of each pair of adjacent steps' estimates (the points of
        level ``t`` enter both the step down to ``t - 1`` and the step up to
        ``t + 1``); steps further apart are independent.

    Returns
    -------
    values : ndarray of shape (L,)
    variance : ndarray of shape (L,) or None
        Variance of the centred curve at each level; step
        ``s`` enters the centring constant with weight
        :math:`\omega_s = \sum_{t > s} n_t / \sum_t n_t`.
    """
    counts = np.asarray(counts, dtype=float)
    curve = np.concatenate([[0.0], np.cumsum(np.asarray(level_effects, dtype=float))])
    total = counts.sum()
    if total > 0:
        curve = curve - np.dot(counts, curve) / total
    omega = (total - np.cumsum(counts)[:-1]) / total if total > 0 else np.zeros(counts.size - 1)
    return curve, _centred_variance(step_variance, omega, step_covariance)


def _centred_variance(variance, omega, covariance=None):
    r"""Variance of :math:`\sum_j (1[j < k] - \omega_j) \Delta_j` at every point ``k``.

    ``variance`` holds the variances of the steps :math:`\Delta_j`,
    ``covariance`` (optional) the covariances of adjacent steps (others are
    independent), and ``omega`` their weights in the centring constant.
    """
    if variance is None:
        return None
    variance = np.asarray(variance, dtype=float)
    n_steps = variance.size
    below = np.arange(n_steps)[None, :] < np.arange(n_steps + 1)[:, None]
    weights = below - np.asarray(omega)[None, :]
    out = (weights ** 2) @ variance
    if covariance is not None and n_steps > 1:
        out = out + 2 * np.sum(weights[:, :-1] * weights[:, 1:] * covariance, axis=1)
    return out


def bin_stats(bin_of_point, local_effects, n_bins):
    """Per bin: mean, std (ddof 0), count, and the variance of the mean.

    The variance of a bin mean is the local effects' sample variance over the
    count; a bin with a single point (or none) has no variance of its own and
    borrows the pooled within-bin variance of the others, so that a sparse bin
    does not look certain.
    """
    local_effects = np.asarray(local_effects, dtype=float)
    count, mean, squares, peak = grouped_moments(bin_of_point, local_effects, n_bins)
    if np.isfinite(peak) and peak > _SQUARE_SAFE:
        return _scaled_bin_stats(np.asarray(bin_of_point, dtype=np.intp), local_effects, count,
                                 mean, n_bins)
    # lent to sparse bins only when no bin has two points
    fallback = 0.0
    if local_effects.size and not (count > 1).any():
        fallback = float(np.var(local_effects - mean[np.asarray(bin_of_point, dtype=np.intp)]))
    return moment_stats(count, mean, squares, fallback=fallback)


def _scaled_bin_stats(bin_of_point, local_effects, count, mean, n_bins):
    """:func:`bin_stats` of deviations whose squares overflow float64 (beyond ~1e154):
    squared in units of the largest, which keeps the standard deviations finite."""
    dev = local_effects - mean[bin_of_point]
    unit = float(np.maximum(dev.max(), -dev.min()))
    dev = dev / unit
    fallback = float(np.var(dev)) if not (count > 1).any() else 0.0
    squares = np.bincount(bin_of_point, weights=np.square(dev, out=dev), minlength=n_bins)
    return moment_stats(count, mean, squares, unit=unit, fallback=fallback)


def moment_stats(count, mean, squares, *, unit=1.0, fallback=0.0):
    """:func:`bin_stats` from each bin's count, mean and sum of squared deviations.

    ``squares`` are in units of ``unit`` (see :func:`bin_stats`); ``fallback``
    is the variance lent to sparse bins when no bin has two points.  Sums
    computed piece by piece (per partition of out-of-core data) and merged
    give the same statistics.
    """
    n_bins = count.size
    filled = count > 0
    std = np.full(n_bins, np.nan)
    std[filled] = np.sqrt(squares[filled] / count[filled]) * unit
    several = count > 1
    var_mean = np.zeros(n_bins)
    var_mean[several] = squares[several] / (count[several] * (count[several] - 1.0))
    if not several.all():
        dof = count[several] - 1.0
        pooled = squares[several].sum() / dof.sum() if dof.sum() > 0 else fallback
        var_mean[~several] = pooled / np.maximum(count[~several], 1)
    if unit != 1.0:
        with np.errstate(over="ignore"):
            var_mean = var_mean * unit * unit  # inf where the variance itself overflows
    return mean, std, count, var_mean


class Moments:
    """Count, mean and sum of squared deviations per bin: summaries that merge exactly.

    The mean and the squared deviations are kept about each bin's own mean,
    so a large common offset of the values does not cancel (the sums of
    ``x`` and ``x**2`` would); two summaries of disjoint rows merge with the
    pairwise update of Chan, Golub & LeVeque (1979).
    """

    def __init__(self, n_bins):
        self.count = np.zeros(n_bins, dtype=np.int64)
        self.mean = np.zeros(n_bins)
        self.squares = np.zeros(n_bins)

    @classmethod
    def of(cls, bins, values, n_bins) -> "Moments":
        """The moments of ``values`` grouped by their bin ``bins`` (two passes)."""
        out = cls(n_bins)
        out.count = np.bincount(bins, minlength=n_bins)
        total = np.bincount(bins, weights=values, minlength=n_bins)
        np.divide(total, out.count, out=out.mean, where=out.count > 0)
        dev = values - out.mean[bins]
        out.squares = np.bincount(bins, weights=dev * dev, minlength=n_bins)
        return out

    @classmethod
    def of_ranges(cls, values, lo, hi, means=None) -> "Moments":
        """The moments of the slices ``values[lo[k]:hi[k]]`` (which may overlap).

        ``means`` (optional) are the slices' means as the caller computed
        them; the squared deviations are taken about them, in a second pass
        over each slice.
        """
        lo, hi = np.asarray(lo, dtype=np.intp), np.asarray(hi, dtype=np.intp)
        out = cls(lo.size)
        out.count = hi - lo
        for k, (a, b) in enumerate(zip(lo, hi)):
            if b > a:
                piece = values[a:b]
                m = piece.mean() if means is None else means[k]
                out.mean[k] = m
                out.squares[k] = np.dot(piece - m, piece - m)
        return out

    @classmethod
    def merged(cls, parts, n_bins) -> "Moments":
        """The moments of all ``parts`` (disjoint rows), merged in their order."""
        out = cls(n_bins)
        for part in parts:
            out.add(part)
        return out

    def coarsened(self, groups, n_groups) -> "Moments":
        """The moments of groups of bins (bin ``k`` goes to group ``groups[k]``)."""
        out = Moments(n_groups)
        out.count = np.bincount(groups, weights=self.count, minlength=n_groups).astype(np.int64)
        total = np.bincount(groups, weights=self.count * self.mean, minlength=n_groups)
        np.divide(total, out.count, out=out.mean, where=out.count > 0)
        shift = self.mean - out.mean[groups]
        out.squares = np.bincount(groups, weights=self.squares + self.count * shift * shift,
                                  minlength=n_groups)
        return out

    def add(self, other: "Moments"):
        """Merge the moments of other rows into these (pairwise update)."""
        n = self.count + other.count
        delta = other.mean - self.mean
        share = np.divide(other.count, n, out=np.zeros(n.size), where=n > 0)
        self.mean = self.mean + delta * share
        self.squares = self.squares + other.squares + delta * delta * self.count * share
        self.count = n

    def stats(self):
        """``(mean, std, count, var_mean)`` as :func:`bin_stats` gives them."""
        return moment_stats(self.count, self.mean, self.squares)


class CoMoments:
    """Per group: count, means of two paired values and the sum of their cross deviations.

    Merges pairwise like :class:`Moments` (Chan, Golub & LeVeque's update for
    the co-moment), so the covariance of the two values within each group can
    be gathered over partitions.
    """

    def __init__(self, n_groups):
        self.count = np.zeros(n_groups, dtype=np.int64)
        self.mean_a = np.zeros(n_groups)
        self.mean_b = np.zeros(n_groups)
        self.cross = np.zeros(n_groups)

    @classmethod
    def of(cls, groups, a, b, n_groups) -> "CoMoments":
        out = cls(n_groups)
        out.count = np.bincount(groups, minlength=n_groups)
        n = out.count.astype(float)
        np.divide(np.bincount(groups, weights=a, minlength=n_groups), n, out=out.mean_a,
                  where=n > 0)
        np.divide(np.bincount(groups, weights=b, minlength=n_groups), n, out=out.mean_b,
                  where=n > 0)
        out.cross = np.bincount(groups, weights=(a - out.mean_a[groups]) * (b - out.mean_b[groups]),
                                minlength=n_groups)
        return out

    @classmethod
    def merged(cls, parts, n_groups) -> "CoMoments":
        out = cls(n_groups)
        for part in parts:
            n = out.count + part.count
            share = np.divide(part.count, n, out=np.zeros(n.size), where=n > 0)
            da, db = part.mean_a - out.mean_a, part.mean_b - out.mean_b
            out.cross = out.cross + part.cross + da * db * out.count * share
            out.mean_a = out.mean_a + da * share
            out.mean_b = out.mean_b + db * share
            out.count = n
        return out

    def adjacent_covariance(self, step_counts):
        r"""Covariance of the means of steps ``t - 1`` and ``t`` for each inner level ``t``.

        With the two values the differences down and up of the points at level
        ``t``: :math:`n_t c_t / (N_{t-1} N_t)`, :math:`c_t` their sample
        covariance (ddof 1) and :math:`N` the steps' counts (as ALE's in-memory
        reduction computes it).
        """
        n_levels = self.count.size
        n = self.count.astype(float)
        c = np.divide(self.cross, n - 1, out=np.zeros(n_levels), where=n > 1)
        inner = np.arange(1, n_levels - 1)
        steps = np.asarray(step_counts, dtype=float)
        denom = steps[inner - 1] * steps[inner]
        return np.divide(n[inner] * c[inner], denom, out=np.zeros(inner.size), where=denom > 0)


def band_half_width(variance, confidence: float, name):
    """Half-width of the normal confidence band, NaN (with a warning) where it overflows."""
    half = NormalDist().inv_cdf(0.5 + confidence / 2) * np.sqrt(variance)
    if not np.isfinite(half).all():
        warnings.warn(f"the confidence band of {name!r} cannot be computed in float64: the "
                      "model's outputs are too large (their squares overflow); it is left "
                      "as NaN. Rescale the model's output (divide it by a large constant).",
                      ModellensWarning, stacklevel=user_stacklevel())
        half = np.where(np.isfinite(half), half, np.nan)
    return half


def empty_bin_slopes(slopes, counts, edges, name, how: str, method: str):
    """Handle bins without data: warn, and with ``how="interpolate"`` fill their slopes.

    ``slopes`` holds each bin's effect per unit of the feature (0 for empty
    bins).  An empty bin has no local effect to average, so its slope is either
    taken as 0 (the ALE reference's choice: the curve is flat across it) or
    interpolated linearly, at bin centres, from the nearest bins with data on
    either side (constant beyond the outermost ones).
    """
    empty = np.asarray(counts) == 0
    if not empty.any():
        return slopes
    what = ("their effect is taken as 0" if how == "zero" else
            "their slope is interpolated from the neighbouring bins")
    warnings.warn(f"{int(empty.sum())} of the {empty.size} bins of {name!r} hold no data; {what}. "
                  f"Choose fewer bins, edges at data values"
                  f"{' or bins=' + repr('auto') if method == 'dale' else ''}, or "
                  f"empty_bins={'interpolate' if how == 'zero' else 'zero'!r}.",
                  ModellensWarning, stacklevel=user_stacklevel())
    if how == "zero" or empty.all():
        return slopes
    centres = (edges[:-1] + edges[1:]) / 2
    out = np.array(slopes, dtype=float)
    out[empty] = np.interp(centres[empty], centres[~empty], out[~empty])
    return out
