"""Accumulated local effects (ALE): first order, second order, categorical."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Sequence

import numpy as np

from .._validation import (InvalidParameterError, ModellensWarning, check_choice, check_int,
                           check_level, is_integer, user_stacklevel)
from ..data import Dataset
from ..engine import (DISTINCT_LIMIT, DataPredictions, GridRows, Plan, compact_index,
                      count_quantile_edges, few_values, open_request)
from ..engine._out_of_core import feature_sample
from ..typing import BinsSpec, DataLike, FeatureSpec, ModelLike, TargetSpec
from ._categorical import level_order, level_orders_out_of_core
from ._grid import DEFAULT_POINTS, check_spec_keys, grid_spec, pair_specs
from .binning import (EMPTY_BINS, CoMoments, Moments, accumulate, accumulate_levels,
                      band_half_width, bin_index, bin_stats, check_edges, empty_bin_slopes,
                      inside_edges, quantile_edges)
from .result import Band, Bins, Effect, Effects

__all__ = ["ale"]

#: Empty cells this many at a time are matched to their nearest non-empty cell.
_FILL_BLOCK = 512


def ale(model: ModelLike, X: DataLike, features: FeatureSpec = None, *,
        bins: BinsSpec = DEFAULT_POINTS, max_discrete: int = 10, confidence: float = 0.95,
        empty_bins: str = "zero", target: TargetSpec = None, response_method: str = "auto",
        feature_names: Sequence[str] | None = None, chunk_size: int | None = None,
        n_jobs: int | None = None, progress: bool | None = None) -> Effects:
    r"""How does the prediction change, on average, as a feature moves within its data?

    Accumulated local effects (ALE) cut a feature's range into bins, measure
    how much the prediction changes across each bin for the rows inside it,
    and add those changes up.  Because every change is measured on rows that
    really have values in that bin, ALE stays inside the data: it is the effect
    to trust when features are correlated, where partial dependence
    extrapolates and M-plots mix effects.  Categorical features are handled as
    ordered levels; a pair ``(a, b)`` gives the pure two-feature interaction
    (second order).  A confidence band shows the sampling error of the curve.

    Parameters
    ----------
    model, X, target, response_method, feature_names, chunk_size, n_jobs, progress
        As in :func:`modellens.pdp`; ``X`` holds the points whose local
        effects are averaged.  Dask data (out of core): the design step of
        data in memory (a feature of at most ``max_discrete`` values is
        discrete), other numeric features binned at quantile edges from
        Dask's approximate quantiles (within about 0.1% of the data of their
        exact place; exact, from the values' counts, for a feature of at most
        256 distinct values); categorical and text features are ordered as in memory from
        per-level statistics merged over the partitions; pairs too;
        ``feature_values`` a sample of 10,000.
    features : name, index, or list of them, optional
        Features to explain (all when None); a pair ``(a, b)`` in the list
        gives a second-order effect.
    bins : int, array-like or dict, default=20
        Number of quantile bins ``K``, or an array of bin edges (strictly
        increasing; points outside them are left out with a warning), or a
        dict mapping features (or pairs) to either; a pair may take a tuple of
        two specifications.  Categorical and discrete features ignore an int.
    max_discrete : int, default=10
        Numeric features with at most this many distinct values are treated
        as ordered levels (0 turns this off).
    confidence : float, default=0.95
        Level of the confidence band of first-order curves.
    empty_bins : {"zero", "interpolate"}, default="zero"
        Explicit edges can leave a bin without data, which has no local
        effect to average: ``"zero"`` takes its effect as 0 (the curve is flat
        across it, as the ALE reference does), ``"interpolate"`` gives it the
        slope interpolated from the nearest bins with data.  Either way a
        warning counts the empty bins.  (Quantile bins are never empty.)

    Returns
    -------
    Effects
        One :class:`Effect` with ``method="ale"`` per requested feature.
        First order: ``grid`` holds the bin edges (the levels, in their ALE
        order, for level features), ``values`` the centred curve there,
        ``counts`` the points per bin (per level), ``std`` the standard
        deviation of the local effects per bin (per step), ``bins`` the
        per-bin (per-step) counts, spreads and mean effects, and ``band`` the
        confidence band from the variance of the centred curve (bins taken as
        independent).  Second order: ``values`` has shape ``(G_a, G_b)``,
        ``counts`` the points per unit of data (bin or level pair), ``std``
        and ``bins`` the spread and count of the four-corner differences per
        cell, and ``empty_cells`` the cells without data.

    See Also
    --------
    dale : ALE from the model's gradient: every feature in one pass, bins chosen later.
    pdp : Partial dependence and ICE curves.
    mplot : The mean prediction near each value.

    Notes
    -----
    **First order, numeric feature** :math:`S`.  The bin edges
    :math:`z_0 < \dots < z_K` are the minimum and the type-1 quantiles at
    :math:`k / K` (ties collapsed, so repeated values give fewer bins); a
    point with :math:`x_S \in (z_{k-1}, z_k]` (the first bin closed) lies in
    bin :math:`k`.  With :math:`n_k` points in bin :math:`k`,

    .. math::
        \hat{\tilde f}(z_k) = \sum_{j=1}^{k} \frac{1}{n_j}
            \sum_{i:\, x^{(i)}_S \in (z_{j-1}, z_j]}
            \left[f(z_j, x^{(i)}_{-S}) - f(z_{j-1}, x^{(i)}_{-S})\right],

    and the curve is centred by the count-weighted mean of the bin midpoints,
    :math:`\hat f(z_k) = \hat{\tilde f}(z_k) - \sum_j n_j
    (\hat{\tilde f}(z_{j-1}) + \hat{\tilde f}(z_j)) / (2n)`.

    **Levels** (categorical features, and numeric ones with at most
    ``max_discrete`` distinct values).  Levels :math:`v_0, \dots, v_{L-1}` are
    taken in order: an ordered categorical's own order, the sorted values of a
    discrete numeric feature, otherwise the order of a 1-D classical MDS of the
    levels' distances in the other features (Kolmogorov-Smirnov for numeric
    ones, total variation for categorical ones).  The step :math:`v_t \to
    v_{t+1}` is the mean of :math:`f(v_{t+1}, x_{-S}) - f(v_t, x_{-S})` over
    the points at either level; steps are accumulated from 0 and centred by the
    level frequencies.

    **Second order, pair** :math:`(a, b)`.  Each point contributes to its cell
    the four-corner difference

    .. math::
        \Delta^{(i)} = f(z^a_{k}, z^b_{l}, x^{(i)}_{-ab}) - f(z^a_{k}, z^b_{l-1}, \cdot)
                     - f(z^a_{k-1}, z^b_{l}, \cdot) + f(z^a_{k-1}, z^b_{l-1}, \cdot);

    cell means are accumulated in both directions, then the first-order effects
    of the accumulated surface and a constant are removed so that what is left
    is the pure interaction (Apley & Zhu 2020, eqs. 13-16).  A cell without
    data takes the mean of its nearest non-empty cell (distance between cell
    centres, each axis scaled by its range; equally near cells are averaged)
    and is flagged in ``Effect.empty_cells``.  A level axis steps
    between adjacent levels instead of bin edges.

    Every model row of the request (all features, all bins) is planned first
    and evaluated in one chunked stream: :math:`2n` rows per numeric feature,
    about :math:`2n` per level feature plus the data rows once, :math:`4n`
    per numeric pair.  Rows with a missing value in an explained feature are
    left out of its bins, with a warning that counts them.  Each feature's
    predictions are reduced to its bin statistics as soon as they are all in,
    so memory holds the rows of about one feature at a time.

    References
    ----------
    .. [1] Apley, D. W. & Zhu, J. (2020). Visualizing the effects of predictor
       variables in black box supervised learning models. *JRSS B* 82(4),
       1059-1086.
    .. [2] Molnar, C. (2022). *Interpretable Machine Learning*, 2nd ed.,
       chapter "Accumulated Local Effects (ALE) Plot".

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> effects = ml.ale(lambda A: 2 * A[:, 0] + A[:, 1] ** 2, X, bins=5)
    >>> e = effects["x0"]
    >>> bool(np.allclose(np.diff(e.values), 2 * np.diff(e.grid)))  # slope 2 recovered
    True
    >>> e.bins.counts
    array([200, 200, 200, 200, 200])
    >>> e.band.level
    0.95

    Two correlated features, a model that uses only ``x1``: ALE gives ``x0``
    no effect (an M-plot would show it rising with ``x1``), and a pair gives
    the second-order effect on a grid of bin edges:

    >>> rng = np.random.default_rng(0)
    >>> x0 = rng.normal(size=1000)
    >>> X = np.column_stack([x0, x0 + 0.3 * rng.normal(size=1000)])
    >>> effects = ml.ale(lambda A: A[:, 1], X, ["x0", "x1", ("x0", "x1")], bins=5)
    >>> print(np.round(effects["x0"].values, 6))
    [0. 0. 0. 0. 0. 0.]
    >>> effects[("x0", "x1")].values.shape
    (6, 6)
    """
    _check_options(bins, max_discrete, confidence)
    check_choice(empty_bins, "empty_bins", EMPTY_BINS)
    request = open_request(model, X, features, target=target, response_method=response_method,
                           feature_names=feature_names, chunk_size=chunk_size, n_jobs=n_jobs,
                           progress=progress, several=True)
    dataset, feats = request.dataset, request.features
    check_spec_keys(bins, dataset, feats, "bins")
    axes: _OutOfCoreAxes | _AxisCache
    if request.out_of_core:
        axes = _OutOfCoreAxes(request, bins, max_discrete)
    else:
        axes = _AxisCache(dataset, max_discrete)
    designs = []
    for feat in feats:
        if isinstance(feat, tuple):
            spec_a, spec_b = pair_specs(dataset, bins, feat)
            designs.append((axes.get(feat[0], spec_a), axes.get(feat[1], spec_b)))
        else:
            designs.append(axes.get(feat, grid_spec(bins, dataset, feat)))
    out_of_core = request.out_of_core

    # first-order axes, each once: the features asked alone and the two axes of every pair
    # (their main effects give the pair's total effect; one asked alone is not evaluated twice)
    singles: list[_Axis] = []
    layout = []
    for design in designs:
        parts = design if isinstance(design, tuple) else (design,)
        for ax in parts:
            if not any(ax is u for u in singles):
                singles.append(ax)
        layout.append([next(k for k, u in enumerate(singles) if u is ax) for ax in parts])
    pairs = [d for d in designs if isinstance(d, tuple)]

    def plans_for(values, part, model):
        plans: list[Plan] = []
        output = model.output_name
        for a, b in pairs:
            if out_of_core:
                a, b = a.on(values), b.on(values)
            plans.append(_PairPlan(values, a, b, output=output, strict=not out_of_core))
        for design in singles:
            axis = design.on(values) if out_of_core else design
            plans.append(_FeaturePlan(values, axis, output=output, confidence=confidence,
                                      empty_bins=empty_bins, keep_summary=out_of_core))
        return plans

    def assemble(results):
        pair_effects, single_effects = iter(results[:len(pairs)]), results[len(pairs):]
        out = []
        for design, units in zip(designs, layout):
            if isinstance(design, tuple):
                effect = next(pair_effects)
                # the main effects on the pair's own axes (same edges or levels): the total
                # effect is their sum plus the interaction, on the pair's grid
                effect.extra["main_effects"] = tuple(
                    np.asarray(single_effects[k].values, dtype=float) for k in units)
                out.append(effect)
            else:
                out.append(single_effects[units[0]])
        return out

    return Effects.stack([assemble(results) for results in
                          request.run_outputs(plans_for, desc="ale")], request.output_labels)


# --------------------------------------------------------------------- input
def _check_options(bins, max_discrete, confidence):
    if isinstance(bins, str):
        raise InvalidParameterError(
            f"bins={bins!r} is not available for ale; pass an int (quantile bins) or an array "
            "of bin edges ('auto' belongs to dale).")
    if isinstance(bins, bool):
        raise InvalidParameterError("bins must be an int, an array of bin edges or a dict, "
                                    "not a bool.")
    check_int(max_discrete, "max_discrete", low=0, what="a non-negative int")
    check_level(confidence)


class _AxisCache:
    """Each feature's axis is built once per call (and warns about NaN once)."""

    def __init__(self, dataset, max_discrete):
        self.dataset = dataset
        self.max_discrete = int(max_discrete)
        self._axes = {}

    def get(self, j, spec):
        key = (j, int(spec)) if is_integer(spec) else None
        if key is not None and key in self._axes:
            return self._axes[key]
        axis = _make_axis(self.dataset, j, spec, self.max_discrete)
        if key is not None:
            self._axes[key] = axis
        return axis


class _Axis:
    """How an explained feature is cut.

    ``binned`` axes (numeric features) have bin edges as grid points and the
    data in the bins between them: a point in bin ``k`` steps across cell
    ``k`` from edge ``k`` to ``k + 1``.  Level axes (categorical and discrete
    features) have the data at the grid points: a point at level ``t`` steps
    across cell ``t`` (to ``t + 1``) and cell ``t - 1`` (from ``t - 1``).

    Attributes
    ----------
    grid : ndarray of shape (G,)
        Encoded values at the grid points (edges, values or level codes).
    labels : ndarray of shape (G,)
        The grid as the user reads it.
    rows : ndarray of shape (m,) or None
        The data rows that take part (sorted positions); None when all do.
    unit : ndarray of shape (m,)
        Their bin (binned axes) or level position, in the smallest integer
        type that holds it.
    """

    def __init__(self, dataset, j, binned, grid, labels, rows, unit, kind, feature_values=None):
        self.j = j
        self.name = dataset.columns[j].name
        self.n_data = dataset.n_rows
        self.binned = binned
        self.grid = grid
        self.labels = labels
        self.rows = None if rows is not None and rows.size == self.n_data else rows
        self.unit = compact_index(unit, grid.size)
        self.kind = kind
        self.discrete = (not binned) and kind == "numeric"
        self.feature_values = dataset.observed_labels(j) if feature_values is None \
            else feature_values
        self.missing = self.outside = 0

    def on(self, values: np.ndarray) -> "_Axis":
        """The same axis over other rows (a partition): their units, and rows left out.

        Rows without a value are counted in ``missing``, values outside a
        binned axis's ends in ``outside``; a level axis takes the rows at its
        levels.
        """
        out = copy.copy(self)
        x = values[:, self.j]
        known = ~np.isnan(x)
        if self.binned:
            keep = known & (x >= self.grid[0]) & (x <= self.grid[-1])
            unit = bin_index(x[keep], self.grid)
        else:
            order = np.argsort(self.grid, kind="stable")
            at = np.searchsorted(self.grid[order], x[known]).clip(max=self.grid.size - 1)
            keep = known.copy()
            keep[known] = self.grid[order][at] == x[known]
            unit = order[at[keep[known]]]
        out.n_data = values.shape[0]
        rows = np.flatnonzero(keep)
        out.rows = None if rows.size == out.n_data else rows
        out.unit = compact_index(unit, self.grid.size)
        out.missing = int((~known).sum())
        out.outside = int(known.sum() - keep.sum())
        out.sample = feature_sample(x[keep], self.n_parts) if self.n_parts else None
        return out

    n_parts = 0  # out of core: the partitions a sample of feature values is spread over
    sample = None  # out of core: some of a partition's values (see on())

    def labels_of(self, x):
        """Encoded values as the user reads them (level labels of a categorical axis)."""
        if self.kind != "categorical":
            return x
        lookup = dict(zip(self.grid.tolist(), range(self.grid.size)))
        return np.asarray(self.labels)[[lookup[v] for v in x.tolist()]]

    @property
    def n_cells(self) -> int:
        return self.grid.size - 1

    @property
    def n_units(self) -> int:
        return self.grid.size - 1 if self.binned else self.grid.size

    def row_positions(self) -> np.ndarray:
        """The data rows that take part, as positions."""
        return np.arange(self.n_data) if self.rows is None else self.rows

    def unit_of_rows(self) -> np.ndarray:
        """Unit of every data row, -1 where the row takes no part."""
        out = np.full(self.n_data, -1, dtype=np.intp)
        out[self.row_positions()] = self.unit
        return out

    def steps(self, u):
        """``(valid, cell, lo, hi)`` for every way a row at unit ``u`` crosses a cell."""
        g = self.grid
        u = np.asarray(u, dtype=np.intp)
        if self.binned:
            return [(None, u, g[u], g[u + 1])]
        last = g.size - 1
        up, down = np.minimum(u + 1, last), np.maximum(u - 1, 0)
        return [(u < last, u, g[u], g[up]), (u > 0, down, g[down], g[u])]

    def unit_weights(self) -> np.ndarray:
        """``(U, G)``: a function on the grid averaged over each unit of data."""
        g, u = self.grid.size, self.n_units
        if not self.binned:
            return np.eye(g)
        out = np.zeros((u, g))
        out[np.arange(u), np.arange(u)] = 0.5
        out[np.arange(u), np.arange(1, g)] = 0.5
        return out

    def cell_units(self) -> np.ndarray:
        """``(C, U)``: the units of data whose points step across each cell."""
        c, u = self.n_cells, self.n_units
        out = np.zeros((c, u))
        out[np.arange(c), np.arange(c)] = 1.0
        if not self.binned:
            out[np.arange(c), np.arange(1, c + 1)] = 1.0
        return out

    def cell_centres(self) -> np.ndarray:
        """Cell centres divided by the axis range (level axes: positions 0..L-1)."""
        pos = self.grid if self.binned else np.arange(self.grid.size, dtype=float)
        return (pos[:-1] + pos[1:]) / 2 / (pos[-1] - pos[0])


def _make_axis(dataset: Dataset, j: int, spec, max_discrete: int) -> _Axis:
    col = dataset.columns[j]
    x = dataset.column_values(j, warn_for="ALE bins")
    if x.size == 0:
        raise InvalidParameterError(f"feature {col.name!r} has no non-missing values; ALE "
                                    "needs data in it.")
    rows = None if x.size == dataset.n_rows else np.flatnonzero(~np.isnan(dataset.values[:, j]))
    if col.is_categorical:
        if not is_integer(spec):
            raise InvalidParameterError(
                f"feature {col.name!r} is categorical: its levels are the ALE grid, so bins "
                "must not give edges for it.")
        codes = level_order(dataset, j)
        assert col.levels is not None  # every categorical column has its levels
        position = np.full(len(col.levels), -1, dtype=np.intp)
        position[codes.astype(np.intp)] = np.arange(codes.size)
        return _Axis(dataset, j, False, codes, dataset.labels(j, codes), rows,
                     position[x.astype(np.intp)], "categorical")
    if is_integer(spec):
        check_int(spec, "bins", low=1, what="a positive number of bins")
        # one sort serves the count of distinct values and the quantiles
        xs = np.sort(x)
        distinct = np.concatenate([[True], xs[1:] != xs[:-1]])
        if np.count_nonzero(distinct) <= max(max_discrete, 1):
            values = xs[distinct]
            return _Axis(dataset, j, False, values, dataset.labels(j, values), rows,
                         np.searchsorted(values, x), "numeric")
        edges = quantile_edges(xs, int(spec), presorted=True)
        del xs, distinct
        return _Axis(dataset, j, True, edges, edges, rows, bin_index(x, edges), "numeric")
    edges = check_edges(spec, col.name)
    inside = inside_edges(x, edges, col.name, "ALE bins")
    rows = np.flatnonzero(~np.isnan(dataset.values[:, j])) if rows is None else rows
    return _Axis(dataset, j, True, edges, edges, rows[inside], bin_index(x[inside], edges),
                 "numeric")


def _warn_left_out(axis, missing, outside):
    """Out of core: the rows a feature's bins left out, counted over every partition."""
    if missing:
        warnings.warn(f"{missing} rows have no value in {axis.name!r}; they are left out of its "
                      "ALE bins.", ModellensWarning, stacklevel=user_stacklevel())
    if outside:
        warnings.warn(f"{outside} values of {axis.name!r} lie outside the bin edges "
                      f"[{axis.grid[0]:g}, {axis.grid[-1]:g}]; they are left out of its ALE "
                      "bins.", ModellensWarning, stacklevel=user_stacklevel())


class _OutOfCoreAxes:
    """Each feature's axis from whole-table facts (Dask data); rows are assigned per partition.

    Numeric features of at most ``max_discrete`` values are discrete, as in
    memory (the same column summary, ``engine.few_values``); others are binned:
    an int takes edges between Dask's approximate quantiles (exact, from the
    counts, for a feature of few values), ties collapsed, the ends exact;
    edges are taken as given.  A categorical feature's levels are
    ordered as in memory (its own order, or the 1-D MDS of the summed KS /
    total-variation distances) from per-level statistics merged over the
    partitions.
    """

    def __init__(self, request, bins, max_discrete):
        self.request, self.dataset, self.table = request, request.dataset, request.table
        singles = [f for feat in request.features
                   for f in (feat if isinstance(feat, tuple) else (feat,))]
        specs: dict = {}  # (column, bins key) -> the bins asked
        for feat in request.features:
            if isinstance(feat, tuple):
                for j, spec in zip(feat, pair_specs(self.dataset, bins, feat)):
                    specs.setdefault((j, _key(spec)), spec)
            else:
                spec = grid_spec(bins, self.dataset, feat)
                specs.setdefault((feat, _key(spec)), spec)
        self._axes: dict[tuple[int, object], _Axis] = {}
        quantile: dict[int, list[int]] = {}
        for (j, key), spec in specs.items():
            col = self.dataset.columns[j]
            if col.is_categorical:
                continue
            if is_integer(spec):
                check_int(spec, "bins", low=1, what="a positive number of bins")
                quantile.setdefault(int(spec), []).append(j)
            else:
                self._axes[(j, key)] = self._binned(j, check_edges(spec, col.name))
        # the design step of data in memory, on the same column summaries: a feature of at
        # most max_discrete values is discrete (a step per value), else binned
        summaries = self.table.column_summaries(
            sorted({j for cols in quantile.values() for j in cols}),
            max(DISTINCT_LIMIT, max_discrete)) if quantile else {}
        for n_bins, cols in quantile.items():
            binned = []
            for j in cols:
                values = few_values(summaries[j], max(max_discrete, 1))
                if values is None:
                    binned.append(j)
                else:
                    self._axes[(j, n_bins)] = self._discrete(j, values)
            edges, _ = self.table.quantile_edges(binned, n_bins) if binned else ([], None)
            for j, z in zip(binned, edges):
                # few distinct values: the exact edges of data in memory, from their counts
                exact = count_quantile_edges(summaries[j], n_bins)
                self._axes[(j, n_bins)] = self._binned(j, z if exact is None else exact)
        levels = sorted({j for j in singles if self.dataset.columns[j].is_categorical})
        if levels:
            orders = level_orders_out_of_core(self.table, levels)
            for j in levels:
                codes = orders[j]
                self._axes[(j, "levels")] = self._levels(j, codes)

    def _binned(self, j, edges):
        axis = _Axis(self.dataset, j, True, edges, edges, None,
                     np.zeros(self.dataset.n_rows, dtype=np.intp), "numeric", feature_values=())
        axis.n_parts = self.table.n_parts
        return axis

    def _discrete(self, j, values):
        axis = _Axis(self.dataset, j, False, values, self.dataset.labels(j, values), None,
                     np.zeros(self.dataset.n_rows, dtype=np.intp), "numeric", feature_values=())
        axis.n_parts = self.table.n_parts
        return axis

    def _levels(self, j, codes):
        axis = _Axis(self.dataset, j, False, codes, self.dataset.labels(j, codes), None,
                     np.zeros(self.dataset.n_rows, dtype=np.intp), "categorical",
                     feature_values=())
        axis.n_parts = self.table.n_parts
        return axis

    def get(self, j, spec):
        if self.dataset.columns[j].is_categorical:
            if not is_integer(spec):
                raise InvalidParameterError(
                    f"feature {self.dataset.columns[j].name!r} is categorical: its levels are "
                    "the ALE grid, so bins must not give edges for it.")
            return self._axes[(j, "levels")]
        return self._axes[(j, _key(spec))]


def _key(spec):
    return int(spec) if is_integer(spec) else id(spec)


# --------------------------------------------------------------- first order
class _FeaturePlan(Plan):
    """The model rows of one first-order effect and their reduction.

    The predictions are reduced to bin statistics as soon as the feature's
    segment is complete (see :meth:`_collect`), so they are held for one
    feature at a time.
    """

    def __init__(self, values, axis: _Axis, *, output, confidence, empty_bins="zero",
                 keep_summary=False):
        self.axis, self.output, self.confidence = axis, output, confidence
        self.keep_summary = keep_summary  # a partition's plan: moments kept for the merge
        self.moments: Moments | None = None
        self.local: np.ndarray | None = None
        self.empty_bins = empty_bins
        self.covariance: np.ndarray | None = None  # of adjacent steps, for level axes
        u = axis.unit
        self.stats: tuple | None = None
        self.sign: np.ndarray | None
        if axis.binned:
            # the point moved to both edges of its bin: the rows at the lower edges come
            # first, then those at the upper edges
            self.cell, self.sign, self.rows = u, None, axis.rows
            n_rows = u.size
            segment = GridRows(values, (axis.j,), axis.grid, rows=axis.rows, index=u,
                               offsets=(0, 1))
        else:
            # the point moved to the next level up and down; f at its own level comes
            # from the shared data rows
            (fwd, cell_up, _, _), (bwd, cell_down, _, _) = axis.steps(u)
            positions = axis.row_positions()
            # points strictly inside the level order step both ways: where their two
            # local effects sit, for the covariance of adjacent steps
            both = fwd & bwd
            self.inner = (both[fwd], both[bwd], u[both])
            self.rows = np.concatenate([positions[fwd], positions[bwd]])
            self.cell = np.concatenate([cell_up[fwd], cell_down[bwd]])
            self.sign = np.concatenate([np.ones(fwd.sum()), -np.ones(bwd.sum())])
            n_rows = self.rows.size
            # f at the data, shared with the request's other level features (and any
            # plan that reads the predictions at the data): evaluated once, first
            self.at_data = DataPredictions(values, self.rows)
            self.shared_rows = [self.at_data]
            target = np.concatenate([u[fwd].astype(np.intp) + 1, u[bwd].astype(np.intp) - 1])
            segment = GridRows(values, (axis.j,), axis.grid, rows=self.rows, index=target)
        self.segments = []
        if n_rows:
            segment.on_finish = self._collect
            self.segments.append(segment)

    def _collect(self, segment):
        """Bin statistics of the local effects; the predictions are released."""
        pred = segment.result
        if self.sign is None:
            m = pred.size // 2
            local = pred[m:] - pred[:m]
        else:
            local = self.sign * (pred - self.at_data.at(self.rows))
        self.take_local(local)
        segment.result = None

    def take_local(self, local):
        """Reduce the local effects (one per entry of ``self.rows``, in order) to bin statistics.

        Split from :meth:`_collect` so that regional effects can reduce a
        subset of the local effects already evaluated, without a model call.
        """
        self.stats = bin_stats(self.cell, local, self.axis.n_cells)
        if self.sign is not None:
            self.covariance = self._adjacent_covariance(local, self.stats[2])
            if self.keep_summary:
                self.local = local
        if self.keep_summary:  # a partition's plan: the moments merge across partitions
            self.moments = Moments.of(self.cell, local, self.axis.n_cells)

    def _adjacent_covariance(self, local, step_counts):
        r"""Covariance of the means of steps ``t - 1`` and ``t``, for each inner level ``t``.

        A point at level ``t`` gives step ``t - 1`` its difference down and step
        ``t`` its difference up, so the two step means share it:
        :math:`\operatorname{Cov}(\bar\Delta_{t-1}, \bar\Delta_t) = n_t c_t / (N_{t-1} N_t)`
        with :math:`c_t` the sample covariance (ddof 1) of the two differences
        over the :math:`n_t` points of level ``t`` and :math:`N` the steps' counts.
        """
        in_fwd, in_bwd, level = self.inner
        assert self.sign is not None  # level axes only, where steps go both ways
        n_levels = self.axis.n_units
        n_fwd = int(np.count_nonzero(self.sign > 0))
        up, down = local[:n_fwd][in_fwd], local[n_fwd:][in_bwd]
        level = level.astype(np.intp)
        n = np.bincount(level, minlength=n_levels).astype(float)
        sum_up = np.bincount(level, weights=up, minlength=n_levels)
        sum_down = np.bincount(level, weights=down, minlength=n_levels)
        mean_up = np.divide(sum_up, n, out=np.zeros(n_levels), where=n > 0)
        mean_down = np.divide(sum_down, n, out=np.zeros(n_levels), where=n > 0)
        cross = np.bincount(level, weights=(up - mean_up[level]) * (down - mean_down[level]),
                            minlength=n_levels)
        c = np.divide(cross, n - 1, out=np.zeros(n_levels), where=n > 1)
        inner = np.arange(1, n_levels - 1)
        steps = np.asarray(step_counts, dtype=float)
        denom = steps[inner - 1] * steps[inner]
        return np.divide(n[inner] * c[inner], denom, out=np.zeros(inner.size), where=denom > 0)

    def reduce(self) -> Effect:
        axis = self.axis
        if self.stats is None:
            self.stats = bin_stats(np.zeros(0, dtype=np.intp), np.zeros(0), axis.n_cells)
        # a binned axis's units are its cells
        counts = self.stats[2] if axis.binned else np.bincount(axis.unit,
                                                               minlength=axis.n_units)
        return self._effect(self.stats, counts, self.covariance)

    # ------------------------------------------------------------ out of core
    def summarise(self):
        axis = self.axis
        moments = Moments(axis.n_cells) if self.moments is None else self.moments
        levels = np.bincount(axis.unit, minlength=axis.n_units)
        inner = None
        if not axis.binned:
            inner = CoMoments(axis.n_units)
            if self.stats is not None:
                in_fwd, in_bwd, level = self.inner
                # a partition's plan on a level axis: both steps, local effects kept
                assert self.sign is not None and self.local is not None
                n_fwd = int(np.count_nonzero(self.sign > 0))
                inner = CoMoments.of(level.astype(np.intp), self.local[:n_fwd][in_fwd],
                                     self.local[n_fwd:][in_bwd], axis.n_units)
        return dict(moments=moments, levels=levels, inner=inner, missing=axis.missing,
                    outside=axis.outside, sample=axis.sample)

    def merge(self, summaries):
        axis = self.axis
        out = dict(moments=Moments.merged([p["moments"] for p in summaries], axis.n_cells),
                   levels=sum(p["levels"] for p in summaries),
                   missing=sum(p["missing"] for p in summaries),
                   outside=sum(p["outside"] for p in summaries),
                   inner=None if axis.binned else CoMoments.merged(
                       [p["inner"] for p in summaries], axis.n_units))
        samples = [p["sample"] for p in summaries if p["sample"] is not None]
        out["sample"] = np.sort(np.concatenate(samples)) if samples else None
        return out

    def finish(self, summary):
        axis = self.axis
        _warn_left_out(axis, summary["missing"], summary["outside"])
        if summary["sample"] is not None:
            axis.feature_values = axis.labels_of(summary["sample"])
        stats = summary["moments"].stats()
        covariance = None
        if not axis.binned:
            covariance = summary["inner"].adjacent_covariance(stats[2])
        counts = stats[2] if axis.binned else summary["levels"]
        return self._effect(stats, counts, covariance)

    def _effect(self, stats, counts, covariance) -> Effect:
        axis = self.axis
        mean, std, cell_counts, var_mean = stats
        if axis.binned:
            width = np.diff(axis.grid)
            if not (cell_counts > 0).all():
                mean = empty_bin_slopes(mean / width, cell_counts, axis.grid, axis.name,
                                        self.empty_bins, "ale") * width
            values, variance = accumulate(mean, counts, var_mean)
        else:
            values, variance = accumulate_levels(mean, counts, var_mean, covariance)
        half = band_half_width(variance, self.confidence, axis.name)
        extra = {}
        if axis.discrete:
            extra["discrete"] = True
        if axis.kind == "categorical":
            extra["level_codes"] = axis.grid.astype(np.intp)
        band = Band(values - half, values + half, self.confidence,
                    f"{self.confidence:.0%} confidence band")
        return Effect(feature=axis.name, method="ale", grid=axis.labels, values=values, std=std,
                      counts=counts, kind=axis.kind, feature_values=axis.feature_values,
                      output=self.output, band=band,
                      bins=Bins(counts=cell_counts, std=std, effects=mean), extra=extra)


# -------------------------------------------------------------- second order
class _PairPlan(Plan):
    """The four-corner model rows of one second-order effect and their reduction.

    A subset of the rows (a partition) is summarised as moments of the
    four-corner differences per cell and the points per unit of data.
    """

    def __init__(self, values, axis_a: _Axis, axis_b: _Axis, *, output, strict=True):
        self.axes, self.output = (axis_a, axis_b), output
        unit_a, unit_b = axis_a.unit_of_rows(), axis_b.unit_of_rows()
        rows = np.flatnonzero((unit_a >= 0) & (unit_b >= 0))
        if rows.size == 0 and strict:
            _no_rows(axis_a, axis_b)
        ua, ub = unit_a[rows], unit_b[rows]
        self.units = np.bincount(ua * axis_b.n_units + ub,
                                 minlength=axis_a.n_units * axis_b.n_units
                                 ).reshape(axis_a.n_units, axis_b.n_units)
        parts = []
        for valid_a, cell_a, lo_a, hi_a in axis_a.steps(ua):
            for valid_b, cell_b, lo_b, hi_b in axis_b.steps(ub):
                keep = _both(valid_a, valid_b, rows.size)
                parts.append((rows[keep], cell_a[keep], cell_b[keep],
                              lo_a[keep], hi_a[keep], lo_b[keep], hi_b[keep]))
        self.rows, cell_a, cell_b, lo_a, hi_a, lo_b, hi_b = (np.concatenate(p) for p in zip(*parts))
        self.cell = cell_a * axis_b.n_cells + cell_b
        corners = np.empty((4, self.rows.size, 2))
        for k, (va, vb) in enumerate(((lo_a, lo_b), (lo_a, hi_b), (hi_a, lo_b), (hi_a, hi_b))):
            corners[k, :, 0], corners[k, :, 1] = va, vb
        self.segments = []
        if axis_a.n_cells and axis_b.n_cells and self.rows.size:
            single = self.rows.size == values.shape[0] and axis_a.binned and axis_b.binned
            self.segments.append(GridRows(values, (axis_a.j, axis_b.j), corners,
                                          rows=None if single else self.rows))

    def _local(self):
        y = self.segments[0].result.reshape(4, -1)
        return y[3] - y[2] - y[1] + y[0]

    def reduce(self) -> Effect:
        a, b = self.axes
        if self.segments:
            stats = bin_stats(self.cell, self._local(), a.n_cells * b.n_cells)
        else:
            stats = None
        return self._effect(stats, self.units)

    def summarise(self):
        a, b = self.axes
        n_cells = a.n_cells * b.n_cells
        moments = Moments.of(self.cell, self._local(), n_cells) if self.segments \
            else Moments(n_cells)
        return moments, self.units, [(ax.missing, ax.outside, ax.sample) for ax in self.axes]

    def merge(self, summaries):
        a, b = self.axes
        left = []
        for k in range(2):
            parts = [axes[k] for _, _, axes in summaries]
            samples = [p[2] for p in parts if p[2] is not None]
            left.append((sum(p[0] for p in parts), sum(p[1] for p in parts),
                         np.sort(np.concatenate(samples)) if samples else None))
        return (Moments.merged([m for m, _, _ in summaries], a.n_cells * b.n_cells),
                sum(u for _, u, _ in summaries), left)

    def finish(self, summary):
        moments, units, left = summary
        for axis, (missing, outside, sample) in zip(self.axes, left):
            _warn_left_out(axis, missing, outside)
            if sample is not None:
                axis.feature_values = axis.labels_of(sample)
        if not units.sum():
            _no_rows(*self.axes)
        return self._effect(moments.stats() if moments.count.sum() else None, units)

    def _effect(self, stats, units) -> Effect:
        a, b = self.axes
        shape = (a.n_cells, b.n_cells)
        if stats is not None:
            mean, std, count, _ = stats
            mean, std, count = mean.reshape(shape), std.reshape(shape), count.reshape(shape)
            empty = count == 0
            delta = _fill_empty(mean, empty, a.cell_centres(), b.cell_centres())
            values = _second_order_surface(delta, units, a, b)
        else:
            values = np.zeros((a.grid.size, b.grid.size))
            std, count = np.zeros(shape), np.zeros(shape, dtype=np.intp)
            empty = np.zeros(shape, dtype=bool)
        return Effect(feature=(a.name, b.name), method="ale", grid=(a.labels, b.labels),
                      values=values, std=std, counts=units, kind=(a.kind, b.kind),
                      feature_values=(a.feature_values, b.feature_values), output=self.output,
                      bins=Bins(counts=count, std=std), empty_cells=empty)


def _no_rows(axis_a, axis_b):
    raise InvalidParameterError(
        f"no row has values in both {axis_a.name!r} and {axis_b.name!r}; a "
        "second-order ALE needs rows with both.")


def _both(valid_a, valid_b, size):
    keep = np.ones(size, dtype=bool)
    for v in (valid_a, valid_b):
        if v is not None:
            keep &= v
    return keep


def _fill_empty(delta, empty, centre_a, centre_b):
    """Give each empty cell the mean of its nearest non-empty cells (ties averaged)."""
    if not empty.any():
        return delta
    out = delta.copy()
    ia, ib = np.nonzero(empty)
    ja, jb = np.nonzero(~empty)
    donors = delta[ja, jb]
    for start in range(0, ia.size, _FILL_BLOCK):
        sa, sb = ia[start:start + _FILL_BLOCK], ib[start:start + _FILL_BLOCK]
        dist = (centre_a[sa, None] - centre_a[ja]) ** 2 + (centre_b[sb, None] - centre_b[jb]) ** 2
        # equally near donors are averaged so that swapping the pair transposes the result
        nearest = dist <= dist.min(axis=1, keepdims=True) * (1 + 1e-12)
        out[sa, sb] = (nearest @ donors) / nearest.sum(axis=1)
    return out


def _second_order_surface(delta, units, a: _Axis, b: _Axis):
    r"""Accumulate cell effects in 2-D and remove both first-order effects and a constant.

    ``delta`` holds the cell means ``(C_a, C_b)`` and ``units`` the points per
    unit of data ``(U_a, U_b)``.  Each axis's first-order effect of the
    accumulated surface :math:`\tilde h` is the accumulated, count-weighted
    mean over the other axis of the steps of :math:`\tilde h` across its cells
    (Apley & Zhu 2020, eq. 15); the constant is the count-weighted mean of the
    result over the data units (eq. 16).
    """
    surface = np.zeros((delta.shape[0] + 1, delta.shape[1] + 1))
    surface[1:, 1:] = np.cumsum(np.cumsum(delta, axis=0), axis=1)
    avg_a, avg_b = a.unit_weights(), b.unit_weights()
    units = units.astype(float)
    # steps along a, read at b's data units, weighted by the points making each step
    weights = a.cell_units() @ units
    steps = np.diff(surface, axis=0) @ avg_b.T
    main_a = _accumulated_mean(steps, weights, axis=1)
    weights = units @ b.cell_units().T
    steps = avg_a @ np.diff(surface, axis=1)
    main_b = _accumulated_mean(steps, weights, axis=0)
    surface = surface - main_a[:, None] - main_b[None, :]
    constant = np.sum(units * (avg_a @ surface @ avg_b.T)) / units.sum()
    return surface - constant


def _accumulated_mean(steps, weights, axis):
    total = weights.sum(axis=axis)
    mean = np.zeros(total.shape)
    np.divide((steps * weights).sum(axis=axis), total, out=mean, where=total > 0)
    return np.concatenate([[0.0], np.cumsum(mean)])
