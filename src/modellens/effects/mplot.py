"""M-plots: conditional means of the prediction (marginal plots)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import cast

import numpy as np

from .._validation import InvalidParameterError, ModellensWarning, is_integer, user_stacklevel
from ..engine import DataPredictions, Plan, open_request
from ..typing import DataLike, FeatureSpec, GridSpec, ModelLike, TargetSpec
from ._design import Hoods, mplot_hoods
from ._facts import facts_of
from ._grid import DEFAULT_POINTS, check_spec_keys
from .binning import Moments
from .result import Band, Effect, Effects

__all__ = ["mplot", "level_neighbourhoods", "quantile_neighbourhoods", "window_neighbourhoods"]


def mplot(model: ModelLike, X: DataLike, features: FeatureSpec = None, *,
          grid: GridSpec = DEFAULT_POINTS, window: float | None = None,
          target: TargetSpec = None, response_method: str = "auto",
          feature_names: Sequence[str] | None = None, chunk_size: int | None = None,
          n_jobs: int | None = None, progress: bool | None = None) -> Effects:
    r"""What does the model predict, on average, for the data points near each value of a feature?

    An M-plot (marginal plot) groups the real rows of ``X`` by the feature's
    value and averages their predictions.  It creates no artificial rows, so it
    never extrapolates, but it answers a different question from PD and ALE:
    the curve of one feature also carries the effects of every feature
    correlated with it (a feature the model never uses can look active).  Use
    it to see what the model predicts for realistic rows; use
    :func:`modellens.ale` for a feature's own effect.

    Parameters
    ----------
    model, X, target, response_method, feature_names, chunk_size, n_jobs, progress
        As in :func:`modellens.pdp`.  Dask data (out of core) take ``grid=int``
        for numeric features: its neighbourhoods are bins between Dask's
        approximate quantiles, each grid point the approximate median of its
        bin; categorical and text features take one neighbourhood per level.
    features : name, index, or list of them, optional
        Single features only (all when None).
    grid : int, array-like or dict, default=20
        An int ``G`` splits the data into ``G`` quantile bins (fewer when tied
        values would straddle a cut): each grid point is a bin's median and its
        neighbourhood the bin.  An array gives the
        points; the neighbourhood of ``z`` is then the ``window`` share of the
        data whose empirical CDF is nearest to that of ``z``.  Features with at
        most ``G`` distinct values (and categorical ones) get one point per
        value, whose neighbourhood is the points with that value.
    window : float, optional
        Share of the data in each neighbourhood for explicit grids (default
        ``1 / len(grid)``).

    Returns
    -------
    Effects
        ``method="mplot"``; ``counts`` are neighbourhood sizes, ``std`` the
        standard deviation of the predictions in each neighbourhood, and
        ``band`` the curve +/- that standard deviation.

    See Also
    --------
    ale : The feature's own effect, with correlated features held apart.
    pdp : The average prediction with the feature set to each value.

    Notes
    -----
    .. math:: \hat f_{M,S}(z) = \frac{1}{|N(z)|} \sum_{i \in N(z)} f(x^{(i)}),

    where the neighbourhood :math:`N(z)` holds the points whose feature value
    lies within a quantile window around :math:`z`.  Only the real data rows
    are evaluated (one model pass serves every feature), so no unrealistic
    points are created; the price is that the curve mixes in the effects of
    every feature correlated with :math:`x_S` (omitted-variable bias), which
    is what ALE removes.

    References
    ----------
    .. [1] Apley, D. W. & Zhu, J. (2020). Visualizing the effects of predictor
       variables in black box supervised learning models. *JRSS B* 82(4),
       1059-1086 (M-plots and their omitted-variable bias, section 2).

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> rng = np.random.default_rng(0)
    >>> x0 = rng.normal(size=1000)
    >>> X = np.column_stack([x0, x0 + 0.1 * rng.normal(size=1000)])  # x1 follows x0
    >>> m = ml.mplot(lambda A: A[:, 1], X, grid=10)  # the model uses x1 only
    >>> bool(np.corrcoef(m["x0"].grid, m["x0"].values)[0, 1] > 0.99)  # yet x0 looks active
    True
    """
    request = open_request(model, X, features, target=target, response_method=response_method,
                           feature_names=feature_names, chunk_size=chunk_size, n_jobs=n_jobs,
                           progress=progress, allow_pairs=False, several=True)
    dataset = request.dataset
    if window is not None and (is_integer(grid) or (isinstance(grid, dict) and all(
            is_integer(v) for v in grid.values()))):
        raise InvalidParameterError(
            "window= sets the neighbourhood of points of an explicit grid; with grid=int the "
            "neighbourhoods are the quantile bins themselves. Pass grid points, or leave "
            "window out.")
    if window is not None and not 0 < window <= 1:
        raise InvalidParameterError(f"window must be a share of the data in (0, 1], got {window}.")
    if not request.out_of_core:
        # each output's plan ranks the rows again: the missing values are said once, here
        dataset.warn_missing(request.features, "grid and neighbourhoods")
    # in memory each feature's rows are ranked when its plan reduces, so that the sorted
    # order of one feature at a time is held
    check_spec_keys(grid, dataset, request.features, "grid")
    hoods = mplot_hoods(facts_of(request), dataset, request.features, grid, window)
    feats = request.features

    def plans_for(values, part, model):
        # every feature reads the one pass at the data (shared rows)
        return [_MPlotPlan(dataset, j, h, values, output=model.output_name)
                for j, h in zip(feats, hoods)]

    effects = Effects.stack(request.run_outputs(plans_for, desc="mplot"),
                            request.output_labels)
    _say_empty_neighbourhoods(effects)
    return effects


def _say_empty_neighbourhoods(effects) -> None:
    """Warn, once per call, of grid points no row is near: their mean is undefined (NaN)."""
    for name, effect in effects.items():
        empty = np.flatnonzero(np.asarray(effect.counts) == 0)
        if not len(empty):
            continue
        points = [effect.grid[k] for k in empty[:5]]
        more = f" and {len(empty) - 5} more" if len(empty) > 5 else ""
        warnings.warn(
            f"M-plot of {name!r}: no rows have or are near the grid value"
            f"{'s' if len(empty) > 1 else ''} {points}{more}, so the conditional mean there "
            "is undefined (NaN, count 0); leave such points out of grid= or pass grid=int "
            "(bins of the data).", ModellensWarning, stacklevel=user_stacklevel())


# ------------------------------------------------------------ neighbourhoods
# Each rule gives, over the feature's sorted values ``xs``, the rank range
# ``[lo, hi)`` of every grid point's neighbourhood.
def level_neighbourhoods(xs: np.ndarray, points: np.ndarray):
    """One neighbourhood per level or distinct value: the points equal to it."""
    return np.searchsorted(xs, points, side="left"), np.searchsorted(xs, points, side="right")


def quantile_neighbourhoods(xs: np.ndarray, n_bins: int):
    """``n_bins`` bins of (about) equal counts, whose cuts never split tied values.

    Returns ``lo, hi`` and each bin's grid point, the median of its values
    (the lower one for an even count).
    """
    n = xs.size
    bounds = np.linspace(0, n, int(n_bins) + 1).round().astype(np.intp)
    # a cut never splits tied values: it moves to the end of the tie run
    inner = np.searchsorted(xs, xs[np.maximum(bounds[1:-1], 1) - 1], side="right")
    bounds = np.unique(np.concatenate([[0], inner, [n]]))
    lo, hi = bounds[:-1], bounds[1:]
    return lo, hi, xs[(lo + hi - 1) // 2]


def window_neighbourhoods(xs: np.ndarray, points: np.ndarray, window: float):
    """The ``window`` share of the data whose ranks are nearest to each point's mid-rank.

    A window near an end is shifted inwards so that it stays full.
    """
    n = xs.size
    mid = (np.searchsorted(xs, points, "left") + np.searchsorted(xs, points, "right")) / 2
    half = max(1, int(round(window * n))) / 2
    centre = np.clip(mid, half, n - half)
    lo = np.floor(centre - half).astype(np.intp)
    hi = np.ceil(centre + half).astype(np.intp).clip(max=n)
    return lo, hi


def _ranked(dataset, j, hoods: Hoods) -> Hoods:
    """In memory: the neighbourhoods as rank ranges ``[lo, hi)`` of the sorted values.

    The quantile bins are exact here (bins of about equal counts whose cuts
    never split tied values, each point the median of its bin); windows
    take a share of the data around each explicit point.
    """
    x = dataset.column_values(j)  # the missing values: warned by mplot()
    keep = ~np.isnan(dataset.values[:, j])
    order = np.argsort(x, kind="stable")
    xs = x[order]
    common = dict(keep=keep, order=order, feature_values=dataset.observed_labels(j))
    if hoods.rule == "levels":
        lo, hi = level_neighbourhoods(xs, cast(np.ndarray, hoods.points))
        return Hoods("levels", hoods.labels, lo, hi, points=hoods.points, **common)
    if hoods.rule == "quantiles":
        lo, hi, points = quantile_neighbourhoods(xs, hoods.n_asked)
        # the same bins as value ranges (a cut never splits tied values)
        edges = np.concatenate([[xs[0]], xs[hi - 1]])
        return Hoods("quantiles", points, lo, hi, edges=edges, **common)
    points = cast(np.ndarray, hoods.points)  # explicit points or levels: always given
    w = hoods.window if hoods.window is not None else 1.0 / len(points)
    lo, hi = window_neighbourhoods(xs, points, w)
    return Hoods("windows", hoods.labels, lo, hi, points=hoods.points, **common)


class _MPlotPlan(Plan):
    """The M-plot of one feature: neighbourhood means of the predictions at the data.

    Every feature's plan reads the same pass at the data (shared rows).  In
    memory the neighbourhoods are rank ranges; a subset of the rows (a
    partition) is summarised as moments per neighbourhood of values, which
    merge pairwise.
    """

    def __init__(self, dataset, j, hoods, values, *, output):
        self.dataset, self.j, self.output = dataset, j, output
        # the design; in memory ranked from the data when the plan reduces
        self._hoods = self._design = hoods
        self.values = values
        self.at_data = DataPredictions(values)
        self.shared_rows = [self.at_data] if values.shape[0] else []

    @property
    def hoods(self) -> Hoods:
        if self._hoods.in_memory and self._hoods.order is None:  # not ranked yet
            self._hoods = _ranked(self.dataset, self.j, self._hoods)
        return self._hoods

    def reduce(self) -> Effect:
        h = self.hoods
        assert h.lo is not None and h.hi is not None  # in memory: rank ranges
        ps = self.at_data.at()[h.keep][h.order]
        csum = np.concatenate([[0.0], np.cumsum(ps)])
        counts = h.hi - h.lo
        with np.errstate(invalid="ignore", divide="ignore"):
            means = (csum[h.hi] - csum[h.lo]) / counts
        # squared deviations about each neighbourhood's own (pairwise-summed) mean, in a
        # second pass: sums of p and p**2, or a mean read off the running sums, cancel
        # catastrophically when the predictions share a large offset
        moments = Moments.of_ranges(ps, h.lo, h.hi)
        std = np.sqrt(np.divide(moments.squares, counts, out=np.full(counts.size, np.nan),
                                where=counts > 0))
        effect = _effect(self.dataset, self.j, h.labels, means, std, counts, self.output,
                         h.feature_values)
        self._hoods = self._design  # the sorted order is released with the feature
        return effect

    def summarise(self):
        x = self.values[:, self.j]
        keep = ~np.isnan(x)
        if not self.values.shape[0]:
            return Moments(self.hoods.n_bins), 0
        pred = self.at_data.at()[keep]
        return Moments.of(self.hoods.bins_of(x[keep]), pred, self.hoods.n_bins), \
            int((~keep).sum())

    def merge(self, summaries):
        return (Moments.merged([m for m, _ in summaries], self.hoods.n_bins),
                sum(n for _, n in summaries))

    def finish(self, summary):
        moments, missing = summary
        h = self.hoods
        name = self.dataset.columns[self.j].name
        if missing:
            warnings.warn(f"{missing} rows have no value in {name!r}; they are left out of "
                          "its grid and neighbourhoods.", ModellensWarning,
                          stacklevel=user_stacklevel())
        filled = moments.count > 0  # a bin between two approximate edges can be empty
        if h.edges is None:
            labels = np.asarray(h.labels)[filled]
        elif self.dataset.columns[self.j].is_boolean:  # its bins hold False and True: exact
            labels = self.dataset.labels(self.j, np.array([0.0, 1.0])[filled])
        else:
            # each bin's point is the median of the rows it holds: the quantile at the
            # middle of its share of the data (ties at an edge move rows between bins, so
            # the probabilities the bins were cut at can name another bin's median)
            cum = np.concatenate([[0], np.cumsum(moments.count)])
            middle = (cum[:-1] + cum[1:]) / 2 / max(cum[-1], 1)
            assert h.quantiles is not None  # quantile bins keep the table they came from
            asked, q = h.quantiles
            labels = self.dataset.labels(self.j, np.interp(middle, asked, q)[filled])
        means, std, counts, _ = (a[filled] for a in moments.stats())
        return _effect(self.dataset, self.j, labels, means, std, counts, self.output,
                       h.feature_values)


def _effect(dataset, j, labels, means, std, counts, output, feature_values):
    col = dataset.columns[j]
    return Effect(feature=col.name, method="mplot", grid=labels, values=means, std=std,
                  counts=counts, kind=col.kind, feature_values=feature_values, output=output,
                  band=Band(means - std, means + std, None, "+/- 1 std of predictions"))
