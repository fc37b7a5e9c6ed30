"""ALE's plans: the model rows of first- and second-order effects and their reduction."""

from __future__ import annotations

import numpy as np

from .._validation import InvalidParameterError
from ..engine import DataPredictions, GridRows, Plan
from ._design import Axis, warn_left_out
from .binning import (CoMoments, Moments, accumulate, accumulate_levels, band_half_width,
                      bin_stats, empty_bin_slopes)
from .result import Band, Bins, Effect

__all__ = ["FeaturePlan", "PairPlan"]

#: Empty cells this many at a time are matched to their nearest non-empty cell.
_FILL_BLOCK = 512


# --------------------------------------------------------------- first order
class FeaturePlan(Plan):
    """The model rows of one first-order effect and their reduction.

    The predictions are reduced to bin statistics as soon as the feature's
    segment is complete (see :meth:`_collect`), so they are held for one
    feature at a time.
    """

    def __init__(self, values, axis: Axis, *, output, confidence, empty_bins="zero",
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
        warn_left_out(axis, summary["missing"], summary["outside"])
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
class PairPlan(Plan):
    """The four-corner model rows of one second-order effect and their reduction.

    A subset of the rows (a partition) is summarised as moments of the
    four-corner differences per cell and the points per unit of data.
    """

    def __init__(self, values, axis_a: Axis, axis_b: Axis, *, output, strict=True):
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
            warn_left_out(axis, missing, outside)
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


def _second_order_surface(delta, units, a: Axis, b: Axis):
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
