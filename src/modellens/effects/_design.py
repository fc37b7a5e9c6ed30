"""How each explained feature is cut: ALE's axes (bin edges, discrete values, level orders).

Regional effects read the same axes, so the design lives here rather than
inside :mod:`.ale`.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np

from .._validation import (InvalidParameterError, ModellensWarning, check_int, is_integer,
                           user_stacklevel)
from ..data import Dataset
from ..engine import DISTINCT_LIMIT, compact_index, count_quantile_edges, few_values
from ..engine._out_of_core import feature_sample
from ._categorical import level_order, level_orders_out_of_core
from ._grid import grid_spec, pair_specs
from .binning import bin_index, check_edges, inside_edges, quantile_edges

__all__ = ["Axis", "AxisCache", "OutOfCoreAxes", "warn_left_out"]


class AxisCache:
    """Each feature's axis is built once per call (and warns about NaN once)."""

    def __init__(self, dataset, max_discrete):
        self.dataset = dataset
        self.max_discrete = int(max_discrete)
        self._axes = {}

    def get(self, j, spec):
        key = (j, int(spec)) if is_integer(spec) else None
        if key is not None and key in self._axes:
            return self._axes[key]
        axis = make_axis(self.dataset, j, spec, self.max_discrete)
        if key is not None:
            self._axes[key] = axis
        return axis


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


def make_axis(dataset: Dataset, j: int, spec, max_discrete: int) -> Axis:
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
        return Axis(dataset, j, False, codes, dataset.labels(j, codes), rows,
                     position[x.astype(np.intp)], "categorical")
    if is_integer(spec):
        check_int(spec, "bins", low=1, what="a positive number of bins")
        # one sort serves the count of distinct values and the quantiles
        xs = np.sort(x)
        distinct = np.concatenate([[True], xs[1:] != xs[:-1]])
        if np.count_nonzero(distinct) <= max(max_discrete, 1):
            values = xs[distinct]
            return Axis(dataset, j, False, values, dataset.labels(j, values), rows,
                         np.searchsorted(values, x), "numeric")
        edges = quantile_edges(xs, int(spec), presorted=True)
        del xs, distinct
        return Axis(dataset, j, True, edges, edges, rows, bin_index(x, edges), "numeric")
    edges = check_edges(spec, col.name)
    inside = inside_edges(x, edges, col.name, "ALE bins")
    rows = np.flatnonzero(~np.isnan(dataset.values[:, j])) if rows is None else rows
    return Axis(dataset, j, True, edges, edges, rows[inside], bin_index(x[inside], edges),
                 "numeric")


def warn_left_out(axis, missing, outside):
    """Out of core: the rows a feature's bins left out, counted over every partition."""
    if missing:
        warnings.warn(f"{missing} rows have no value in {axis.name!r}; they are left out of its "
                      "ALE bins.", ModellensWarning, stacklevel=user_stacklevel())
    if outside:
        warnings.warn(f"{outside} values of {axis.name!r} lie outside the bin edges "
                      f"[{axis.grid[0]:g}, {axis.grid[-1]:g}]; they are left out of its ALE "
                      "bins.", ModellensWarning, stacklevel=user_stacklevel())


class OutOfCoreAxes:
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
        self._axes: dict[tuple[int, object], Axis] = {}
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
        axis = Axis(self.dataset, j, True, edges, edges, None,
                     np.zeros(self.dataset.n_rows, dtype=np.intp), "numeric", feature_values=())
        axis.n_parts = self.table.n_parts
        return axis

    def _discrete(self, j, values):
        axis = Axis(self.dataset, j, False, values, self.dataset.labels(j, values), None,
                     np.zeros(self.dataset.n_rows, dtype=np.intp), "numeric", feature_values=())
        axis.n_parts = self.table.n_parts
        return axis

    def _levels(self, j, codes):
        axis = Axis(self.dataset, j, False, codes, self.dataset.labels(j, codes), None,
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
