"""M-plots: conditional means of the prediction (marginal plots)."""

from __future__ import annotations


import numpy as np

from .._config import resolve_options
from .._validation import InvalidParameterError, is_integer
from ..data import resolve_features
from ..engine import DataPredictions, Plan, run
from ..models import prepare
from ._dask_input import dask_mplot, is_dask_input
from ._grid import DEFAULT_POINTS, feature_grid, grid_spec
from .binning import Moments
from .result import Band, Effect, Effects

__all__ = ["mplot", "level_neighbourhoods", "quantile_neighbourhoods", "window_neighbourhoods"]


def mplot(model, X, features=None, *, grid=DEFAULT_POINTS, window: float | None = None, target=None,
          response_method: str = "auto", feature_names=None, chunk_size: int | None = None,
          n_jobs: int | None = None, progress: bool | None = None) -> Effects:
    r"""M-plot: the mean prediction of the data points near each grid value.

    .. math:: \hat f_{M,S}(z) = \frac{1}{|N(z)|} \sum_{i \in N(z)} f(x^{(i)}),

    where the neighbourhood :math:`N(z)` holds the points whose feature value
    lies within a quantile window around :math:`z`.  Only the real data rows
    are evaluated (one model pass serves every feature), so no unrealistic
    points are created; the price is that the curve mixes in the effects of
    every feature correlated with :math:`x_S` (omitted-variable bias), which
    is what ALE removes.

    Parameters
    ----------
    model, X, target, response_method, feature_names, chunk_size, n_jobs, progress
        As in :func:`modellens.pdp`.  Dask data (out of core) take ``grid=int``:
        its neighbourhoods are bins between Dask's approximate quantiles, each
        grid point the approximate median of its bin.
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
    options = resolve_options(chunk_size, n_jobs, progress)
    if is_dask_input(X):
        return dask_mplot(model, X, features, grid=grid, target=target,
                          response_method=response_method, feature_names=feature_names,
                          options=options)
    dataset, mdl = prepare(model, X, target=target, response_method=response_method,
                           feature_names=feature_names)
    feats = resolve_features(dataset, features, allow_pairs=False)
    if window is not None and (is_integer(grid) or (isinstance(grid, dict) and all(
            is_integer(v) for v in grid.values()))):
        raise InvalidParameterError(
            "window= sets the neighbourhood of points of an explicit grid; with grid=int the "
            "neighbourhoods are the quantile bins themselves. Pass grid points, or leave "
            "window out.")
    plans = [_MPlotPlan(dataset, j, grid_spec(grid, dataset, j), window, output=mdl.output_name)
             for j in feats]
    # every feature reads the one pass at the data (shared rows)
    return Effects(run(mdl, plans, options, desc="mplot"))


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


class _MPlotPlan(Plan):
    """The M-plot of one feature: neighbourhood means of the predictions at the data."""

    def __init__(self, dataset, j, spec, window, *, output):
        self.dataset, self.j, self.output = dataset, j, output
        self.col = dataset.columns[j]
        self.at_data = DataPredictions(dataset.values)
        self.shared_rows = [self.at_data]
        x = dataset.column_values(j, warn_for="grid and neighbourhoods")
        self.keep = ~np.isnan(dataset.values[:, j])
        self.order = np.argsort(x, kind="stable")
        xs = x[self.order]
        if self.col.is_categorical or (is_integer(spec) and dataset.n_unique(j) <= spec):
            points, self.labels = feature_grid(dataset, j, spec, data=x)
            self.lo, self.hi = level_neighbourhoods(xs, points)
        elif is_integer(spec):
            if spec < 2:
                raise InvalidParameterError(f"grid must be at least 2 points, got {spec}.")
            self.lo, self.hi, self.labels = quantile_neighbourhoods(xs, spec)
        else:
            points, self.labels = feature_grid(dataset, j, spec, data=x)
            w = window if window is not None else 1.0 / len(points)
            if not 0 < w <= 1:
                raise InvalidParameterError(
                    f"window must be a share of the data in (0, 1], got {window}.")
            self.lo, self.hi = window_neighbourhoods(xs, points, w)

    def reduce(self) -> Effect:
        ps = self.at_data.at()[self.keep][self.order]
        csum = np.concatenate([[0.0], np.cumsum(ps)])
        counts = self.hi - self.lo
        with np.errstate(invalid="ignore", divide="ignore"):
            means = (csum[self.hi] - csum[self.lo]) / counts
        # squared deviations about each neighbourhood's own (pairwise-summed) mean, in a
        # second pass: sums of p and p**2, or a mean read off the running sums, cancel
        # catastrophically when the predictions share a large offset
        moments = Moments.of_ranges(ps, self.lo, self.hi)
        std = np.sqrt(np.divide(moments.squares, counts, out=np.full(counts.size, np.nan),
                                where=counts > 0))
        return _effect(self.dataset, self.j, self.labels, means, std, counts, self.output,
                       self.dataset.observed_labels(self.j))


def _effect(dataset, j, labels, means, std, counts, output, feature_values):
    col = dataset.columns[j]
    return Effect(feature=col.name, method="mplot", grid=labels, values=means, std=std,
                  counts=counts, kind=col.kind, feature_values=feature_values, output=output,
                  band=Band(means - std, means + std, None, "+/- 1 std of predictions"))
