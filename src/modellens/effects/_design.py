"""The design step of each effect method: one function of per-column facts each.

PD's grid (:func:`pd_axes`), ALE's axes (:func:`ale_axes`: bin edges,
discrete values, level orders), DALE's bins (:func:`dale_bins`) and the
M-plot's neighbourhood rule (:func:`mplot_hoods`) read a column's facts
(:mod:`._facts`: ends, distinct values and counts up to a limit, quantile
edges, observed levels and their order), which data in memory and Dask data
both provide; the design never asks where the rows are.  In memory the rows
are then assigned to the design (``Axis.on``) as each partition assigns its
own out of core.
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass

import numpy as np

from .._validation import InvalidParameterError, ModellensWarning, check_int, is_integer, \
    user_stacklevel
from ..engine import DISTINCT_LIMIT, bin_column, compact_index, feature_sample, few_values, \
    grid_points
from ._grid import explicit_grid, grid_spec, pair_specs
from .binning import bin_index, check_edges, inside_edges

__all__ = ["Axis", "Hoods", "ale_axes", "ale_rows", "pd_axes", "dale_bins", "mplot_hoods",
           "warn_left_out", "AUTO_CANDIDATES"]

#: Candidate bins (quantile edges and equal-width edges, each) of DALE's ``bins="auto"``
#: out of core, where the data-driven choice reads merged moments between them.
AUTO_CANDIDATES = 16


class Axis:
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

    def on(self, values: np.ndarray) -> "Axis":
        """The same axis over other rows (a partition): their units, and rows left out.

        Rows without a value are counted in ``missing``, values outside a
        binned axis's ends in ``outside``; a level axis takes the rows at its
        levels.
        """
        out = copy.copy(self)
        x = values[:, self.j]
        if self.binned:
            # one compiled pass: each value's bin, whether it is inside the ends (not NaN)
            unit, keep, missing, outside = bin_column(x, self.grid,
                                                      compact_index([], self.grid.size).dtype)
            every = missing + outside == 0
        else:
            known = ~np.isnan(x)
            order = np.argsort(self.grid, kind="stable")
            at = np.searchsorted(self.grid[order], x[known]).clip(max=self.grid.size - 1)
            keep = known.copy()
            keep[known] = self.grid[order][at] == x[known]
            unit = order[at[keep[known]]]
            every = bool(keep.all())
            missing = x.size - int(np.count_nonzero(known))
            outside = x.size - missing - (x.size if every else int(np.count_nonzero(keep)))
        out.n_data = values.shape[0]
        # every row takes part (the common case): no list of positions to hold
        out.rows = None if every else np.flatnonzero(keep)
        out.unit = compact_index(unit, self.grid.size)
        out.missing, out.outside = missing, outside
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


def warn_left_out(axis, missing, outside):
    """Out of core: the rows a feature's bins left out, counted over every partition."""
    if missing:
        warnings.warn(f"{missing} rows have no value in {axis.name!r}; they are left out of its "
                      "ALE bins.", ModellensWarning, stacklevel=user_stacklevel())
    if outside:
        warnings.warn(f"{outside} values of {axis.name!r} lie outside the bin edges "
                      f"[{axis.grid[0]:g}, {axis.grid[-1]:g}]; they are left out of its ALE "
                      "bins.", ModellensWarning, stacklevel=user_stacklevel())


@dataclass
class Hoods:
    """The neighbourhoods of one feature's grid points.

    ``rule`` is ``"levels"`` (a point per level or distinct value),
    ``"quantiles"`` (bins of equal counts) or ``"windows"`` (a share of the
    data around explicit points, which may overlap).  In memory they are rank
    ranges ``[lo, hi)`` of the sorted values (``order``, over the rows
    ``keep``, ranked from the data when the plan reduces); the value ranges
    ``edges`` (bins) or ``points`` (levels) serve a subset of the rows out of
    core, where ``quantiles`` (a table ``(q, asked)`` of the feature's
    quantiles) places each bin's point at its median.
    """

    rule: str
    labels: np.ndarray | None = None
    lo: np.ndarray | None = None
    hi: np.ndarray | None = None
    keep: np.ndarray | None = None
    order: np.ndarray | None = None
    points: np.ndarray | None = None
    edges: np.ndarray | None = None
    quantiles: tuple | None = None
    feature_values: np.ndarray | None = None
    n_asked: int = 0  # in memory: the quantile bins asked (ranked from the data)
    window: float | None = None  # in memory: the share of the data around each point
    in_memory: bool = False  # ranked from the data in memory when the plan reduces

    @property
    def n_bins(self) -> int:
        if self.edges is not None:
            return self.edges.size - 1
        assert self.points is not None  # a rule has edges or points
        return self.points.size

    def bins_of(self, x: np.ndarray):
        """The neighbourhood of each (non-missing) value, for value ranges."""
        if self.rule == "windows":
            raise InvalidParameterError(
                "M-plot windows around explicit points are ranks of all the data; out of core "
                "pass grid=int (quantile bins).")
        if self.edges is not None:
            return bin_index(x, self.edges)
        assert self.points is not None  # a rule has edges or points
        return np.searchsorted(self.points, x)


def ale_axes(facts, dataset, features, bins, max_discrete) -> list:
    """ALE's design of each feature (an :class:`Axis`, or two for a pair), from ``facts``.

    A categorical feature's axis is its observed levels in ALE's order.  A
    numeric feature ``bins=int`` of at most ``max_discrete`` distinct values
    is discrete (a step per value); otherwise binned, between its quantile
    edges (exact in memory; Dask's approximate ones out of core, exact from
    the counts for a feature of few values), ties collapsed, the ends exact.
    Explicit edges are taken as given.  The axes hold no rows: in memory
    :func:`ale_rows` assigns them, out of core each partition does
    (``Axis.on``).  A column asked with the same bins twice (alone and in a
    pair) gets one axis object.
    """
    specs: dict = {}  # (column, bins key) -> the bins asked
    layout = []
    for feat in features:
        pairs = zip(feat, pair_specs(dataset, bins, feat)) if isinstance(feat, tuple) \
            else [(feat, grid_spec(bins, dataset, feat))]
        keys = []
        for j, spec in pairs:
            key: tuple  # (column, "levels" | a count of bins | the id of explicit edges)
            if dataset.columns[j].is_categorical:
                if not is_integer(spec):
                    raise InvalidParameterError(
                        f"feature {dataset.columns[j].name!r} is categorical: its levels are "
                        "the ALE grid, so bins must not give edges for it.")
                key = (j, "levels")
            else:
                key = (j, int(spec) if is_integer(spec) else id(spec))
            specs.setdefault(key, spec)
            keys.append(key)
        layout.append(keys)
    if facts.in_memory:  # out of core the partitions count them, and the finish says so
        dataset.warn_missing(list(dict.fromkeys(j for j, _ in specs)), "ALE bins")
    axes = _ale_axes(facts, dataset, specs, max_discrete)
    return [tuple(axes[k] for k in keys) if isinstance(feat, tuple) else axes[keys[0]]
            for feat, keys in zip(features, layout)]


def _ale_axes(facts, dataset, specs, max_discrete) -> dict:
    def axis(j, binned, grid, kind):
        labels = grid if binned else dataset.labels(j, grid)
        out = Axis(dataset, j, binned, grid, labels, None, np.zeros(0, dtype=np.intp), kind,
                   feature_values=() if not facts.in_memory else None)
        out.n_parts = facts.n_parts
        return out

    out: dict = {}  # (column, bins key) -> its axis
    levels = [j for j, key in specs if key == "levels"]
    for j, codes in facts.level_orders(levels).items():
        _need_values(dataset, j, codes.size)
        out[(j, "levels")] = axis(j, False, codes, "categorical")
    quantile: dict[int, list[int]] = {}
    for (j, key), spec in specs.items():
        if key == "levels":
            continue
        if is_integer(spec):
            check_int(spec, "bins", low=1, what="a positive number of bins")
            quantile.setdefault(int(spec), []).append(j)
        else:
            out[(j, key)] = axis(j, True, check_edges(spec, dataset.columns[j].name), "numeric")
    for n_bins, cols in quantile.items():
        # a feature of at most max_discrete values is discrete (a step per value)
        found = facts.columns(cols, max(DISTINCT_LIMIT, max_discrete), n_bins=n_bins)
        for j in cols:
            _need_values(dataset, j, 0 if np.isnan(found[j].summary.low) else 1)
            values = few_values(found[j].summary, max(max_discrete, 1))
            out[(j, n_bins)] = axis(j, False, values, "numeric") if values is not None \
                else axis(j, True, found[j].edges, "numeric")
    return out


def _need_values(dataset, j, n):
    if not n:
        raise InvalidParameterError(f"feature {dataset.columns[j].name!r} has no non-missing "
                                    "values; ALE needs data in it.")


def ale_rows(designs, dataset) -> list:
    """The axes of data in memory: every design's rows assigned (each axis object once).

    Values outside explicit edges are said once per axis (rows without a
    value: by :func:`ale_axes`).
    """
    done: dict = {}

    def on(design):
        if id(design) not in done:
            j = design.j
            axis = design.on(dataset.values)
            if axis.outside:
                inside_edges(dataset.column_values(j), design.grid, design.name, "ALE bins")
            done[id(design)] = axis
        return done[id(design)]

    return [tuple(on(a) for a in d) if isinstance(d, tuple) else on(d) for d in designs]


def pd_axes(facts, dataset, features, grid) -> list:
    """PD's grid of each feature (one per axis of a pair): encoded values and their labels.

    An int ``G`` gives every observed level of a categorical feature; for a
    numeric one its distinct values when there are no more than ``G``, else
    ``G`` evenly spaced points from the exact minimum to the maximum
    (``engine.grid_points``).  Explicit points are taken as they are.
    """
    wanted = []
    for feat in features:
        cols = feat if isinstance(feat, tuple) else (feat,)
        specs = pair_specs(dataset, grid, feat) if isinstance(feat, tuple) else \
            (grid_spec(grid, dataset, feat),)
        wanted.append(list(zip(cols, specs)))
    numeric = sorted({j for axes in wanted for j, s in axes
                      if is_integer(s) and not dataset.columns[j].is_categorical})
    most = max([int(s) for axes in wanted for _, s in axes if is_integer(s)], default=0)
    found = facts.columns(numeric, max(DISTINCT_LIMIT, most))
    out = []
    for axes in wanted:
        built = []
        for j, spec in axes:
            col = dataset.columns[j]
            if not is_integer(spec):
                built.append(explicit_grid(dataset, j, spec))
                continue
            if spec < 2:
                raise InvalidParameterError(f"grid must be at least 2 points, got {spec}.")
            if col.is_categorical:
                values = facts.observed_levels(j)
                if not values.size:
                    raise InvalidParameterError(f"feature {col.name!r} has no non-missing "
                                                "values to build a grid from.")
            else:
                values = grid_points(found[j].summary, int(spec), name=col.name)
            built.append((values, dataset.labels(j, values)))
        out.append(built)
    return out


def dale_bins(facts, feats, specs) -> list:
    """DALE's bins of each feature: edges, or ``"auto"`` where the data choose them.

    ``bins=int`` gives the quantile edges (exact in memory; Dask's
    approximate ones out of core, exact from the counts for a feature of few
    values); edges are taken as given.  ``"auto"`` chooses among candidate
    edges from the local effects: in memory at the data themselves (kept as
    ``"auto"``), out of core between the candidates (quantile edges and
    equal-width edges, ``AUTO_CANDIDATES`` each) from merged moments.
    """
    out = list(specs)
    by_count: dict[int, list[int]] = {}
    for c, spec in enumerate(specs):
        if isinstance(spec, str):
            if not facts.in_memory:
                by_count.setdefault(AUTO_CANDIDATES, []).append(c)
        elif is_integer(spec):
            by_count.setdefault(int(spec), []).append(c)
    for n_bins, group in by_count.items():
        found = facts.columns([feats[c] for c in group], DISTINCT_LIMIT, n_bins=n_bins)
        for c in group:
            z = found[feats[c]].edges
            if z is None:  # no values: the in-memory reduction says so, naming the feature
                continue
            if isinstance(specs[c], str):
                z = np.unique(np.concatenate([z, np.linspace(z[0], z[-1], n_bins + 1)]))
            out[c] = z
    return out


def mplot_hoods(facts, dataset, features, grid, window) -> list:
    """The M-plot's neighbourhood rule of each feature, from ``facts``.

    A categorical feature takes a neighbourhood per observed level (or per
    level given); a numeric one ``grid=int`` of no more distinct values than
    points a neighbourhood per value, else quantile bins: exact in memory
    (ranked from the data when the plan reduces), between Dask's approximate
    quantiles out of core.  Explicit points of a numeric feature take a
    ``window`` share of the data around each (in memory only: windows are
    ranks of all the data).
    """
    specs = [grid_spec(grid, dataset, j) for j in features]
    for spec in specs:
        if is_integer(spec) and spec < 2:
            raise InvalidParameterError(f"grid must be at least 2 points, got {spec}.")
    numeric = {j: int(s) for j, s in zip(features, specs)
               if is_integer(s) and not dataset.columns[j].is_categorical}
    found = facts.columns(list(numeric), max([DISTINCT_LIMIT, *numeric.values()]))
    out: list = []
    binned: dict[int, list[int]] = {}
    for c, (j, spec) in enumerate(zip(features, specs)):
        col = dataset.columns[j]
        if col.is_categorical:
            points = facts.observed_levels(j) if is_integer(spec) else \
                explicit_grid(dataset, j, spec)[0]
            out.append(Hoods("levels", dataset.labels(j, points), points=points))
        elif not is_integer(spec):
            if not facts.in_memory:
                raise InvalidParameterError(
                    "M-plots of Dask data take grid=int (at least 2) for numeric features: "
                    "the neighbourhoods are quantile bins.")
            points, labels = explicit_grid(dataset, j, spec)
            out.append(Hoods("windows", labels, points=points, window=window))
        elif (points := few_values(found[j].summary, int(spec))) is not None:
            out.append(Hoods("levels", dataset.labels(j, points), points=points))
        elif facts.in_memory:
            out.append(Hoods("quantiles", n_asked=int(spec)))
        else:
            out.append(None)
            binned.setdefault(int(spec), []).append(c)
    for n_bins, group in binned.items():
        edges, table = facts.quantile_bins([features[c] for c in group], n_bins)
        for k, c in enumerate(group):
            out[c] = Hoods("quantiles", edges=edges[k], quantiles=(table[1], table[0][:, k]))
    for h in out:
        h.in_memory = facts.in_memory
    return out
