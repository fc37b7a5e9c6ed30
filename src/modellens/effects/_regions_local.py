"""Regional effects, step one: every row's local effects of a feature, as observations.

ALE's finite differences across each row's bin, DALE's derivatives at the
rows, or the centred ICE curves of partial dependence, gathered in memory or
partition by partition (Dask data), each with a builder of the feature's
effect on a subset of the rows from the kept answers.
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass
from typing import cast

import numpy as np

from .._validation import InvalidParameterError, ModellensWarning
from ..data import Dataset
from ..engine import run_outputs, summarise_outputs
from ._ale_plans import FeaturePlan
from ._dale_curves import DaleEffect, check_bins, dale_effects, summarise as dale_summarise
from ._derivatives import DerivativePlan, feature_scale
from ._design import ale_axes, ale_rows
from ._facts import MemoryFacts, TableFacts
from ._grid import grid_spec
from .binning import bin_index
from .dale import dale
from .pdp import pdp
from .result import Effect, Effects

__all__ = ["Local", "local_effects", "ale_locals_out_of_core", "dale_locals_out_of_core",
           "pdp_locals_out_of_core"]


@dataclass
class Local:
    """One feature's local effects, as observations: their row, bin and value.

    ``values`` has shape ``(m, k)`` (one column per output), ``strata``
    each data row's unit of the feature of interest (rows are permuted within
    it), ``regional`` builds the effect on some rows from kept answers.
    """

    rows: np.ndarray
    cell: np.ndarray
    values: np.ndarray
    n_cells: int
    strata: np.ndarray
    global_effect: Effect
    build: object

    def regional(self, rows) -> Effect:
        with warnings.catch_warnings():
            # a region may leave some global bins empty (flat there) or thin: expected
            warnings.simplefilter("ignore", ModellensWarning)
            return self.build(np.sort(np.asarray(rows)))  # type: ignore[operator]


def local_effects(effect, request, model, X, feats, names, *, bins, grid, options):
    dataset = request.dataset
    if effect == "ale":
        return _ale_locals(request, feats, bins)
    if effect == "dale":
        return _dale_locals(dataset, model, X, feats, names, bins, options)
    return _pdp_locals(dataset, model, X, feats, names, grid, options)


class _KeepingPlan(FeaturePlan):
    """ALE's plan of one feature, keeping each row's local effect for the regions."""

    kept: np.ndarray | None = None

    def take_local(self, local):
        self.kept = np.array(local, dtype=float)
        super().take_local(local)


def _ale_locals(request, feats, bins):
    dataset = request.dataset
    designs = ale_rows(ale_axes(MemoryFacts(dataset), dataset, feats, bins, 10), dataset)
    made: list[list[_KeepingPlan]] = []

    def plans_for(values, part, model):
        made.append([_KeepingPlan(values, axis, output=model.output_name, confidence=0.95)
                     for axis in designs])
        return made[-1]

    per_output = request.run_outputs(plans_for, desc="regions (ale)")
    labels = request.output_labels
    globals_ = [Effect.stack(list(parts), labels) for parts in zip(*per_output)]
    return _ale_observations(dataset, designs, made, globals_, labels)


def ale_locals_out_of_core(request, feats, bins):
    """Dask data: ALE's local effects of every row, computed partition by partition.

    The design (bin edges, discrete values, level orders) is the out-of-core
    ALE's, read from the whole table through ``engine/_design.py``'s column
    summaries and Dask's approximate quantiles.  Each partition runs the same
    keeping plans on its own rows, every output in one pass, and sends back
    its encoded rows and local effects; the client lays them out as the
    in-memory plans of the whole table would hold them, so the search, the
    tests and the regional curves are the in-memory code on the same numbers.
    Returns the gathered dataset and the features' local effects.
    """
    schema = request.dataset
    designs = ale_axes(TableFacts(request.table), schema, feats, bins, 10)
    model = request.model
    parts = request.table.map(model, _partition_locals, designs, request.table.local)
    labels = request.output_labels
    dataset = _gathered(schema, [p[0] for p in parts])
    values = dataset.values
    offsets = np.cumsum([0] + [p[0].shape[0] for p in parts])
    whole = []
    for f, design in enumerate(designs):
        axis = design.on(values)
        axis.n_parts, axis.sample = 0, None
        axis.feature_values = dataset.observed_labels(axis.j)
        whole.append(axis)
    made = [[_KeepingPlan(values, axis, output=model.view(c).output_name
                          if model.n_outputs > 1 else model.output_name, confidence=0.95)
             for axis in whole] for c in range(model.n_outputs)]
    for f in range(len(designs)):
        key = _observation_keys(made[0][f])
        got = [(_observation_keys_of(rows, sign, offsets[i]), kept)
               for i, (_, observed) in enumerate(parts)
               for rows, sign, kept in [observed[f]]]
        part_keys = np.concatenate([k for k, _ in got])
        # the whole table's observation order, found among the partitions' (each key once)
        sorter = np.argsort(part_keys, kind="stable")
        order = sorter[np.searchsorted(part_keys, key, sorter=sorter)]
        for c, plans in enumerate(made):
            local = np.concatenate([kept[c] for _, kept in got])
            plans[f].take_local(local[order])
    globals_ = [Effect.stack([plans[f].reduce() for plans in made], labels)
                for f in range(len(designs))]
    return dataset, _ale_observations(dataset, whole, made, globals_, labels)


def _encoded_rows(values, model, index):
    return values


def _gathered(schema, parts) -> Dataset:
    """The encoded rows of every partition, in order, as one in-memory dataset."""
    values = np.concatenate(parts) if parts else np.empty((0, len(schema.columns)))
    return Dataset(values, schema.columns, schema.is_frame, schema.column_labels)


def _observation_keys(plan) -> np.ndarray:
    """Each local effect of a plan named by its row and direction (a level axis steps both ways)."""
    rows = plan.axis.row_positions() if plan.sign is None else plan.rows
    return _observation_keys_of(rows, plan.sign, 0)


def _observation_keys_of(rows, sign, offset) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.int64) + int(offset)
    return 2 * rows + (0 if sign is None else (np.asarray(sign) > 0).astype(np.int64))


def _partition_locals(values, model, index, designs, options):
    """One partition's encoded rows, and each feature's ``(rows, sign, local effects by output)``.

    ``options``: the one Dask driver's engine options inside a partition.
    """

    made: list = []

    def plans_for(one):
        made.append([_KeepingPlan(values, design.on(values), output=one.output_name,
                                  confidence=0.95) for design in designs])
        return made[-1]

    run_outputs(model, plans_for, options, desc="regions (ale, partition)")
    observed = []
    for f in range(len(designs)):
        plan = made[0][f]
        rows = plan.axis.row_positions() if plan.sign is None else plan.rows
        kept = [np.zeros(0) if p[f].kept is None else p[f].kept for p in made]
        observed.append((rows, plan.sign, kept))
    return values, observed


def _ale_observations(dataset, designs, made, globals_, labels):
    """Each feature's :class:`Local` from the keeping plans of every output."""
    out = []
    for f, axis in enumerate(designs):
        plans = [output_plans[f] for output_plans in made]
        plan = plans[0]  # every output's plan has the same rows, cells and signs
        obs_rows = axis.row_positions() if plan.sign is None else plan.rows
        local = np.column_stack([np.zeros(0) if p.kept is None else p.kept for p in plans])
        strata = axis.unit_of_rows()

        def build(rows, plans=plans, axis=axis):
            inside = np.zeros(axis.n_data, dtype=bool)
            inside[rows] = True
            positions = axis.row_positions()
            keep_units = inside[positions]
            sub = copy.copy(axis)
            sub.rows = positions[keep_units]
            sub.unit = axis.unit[keep_units]
            effects = []
            for plan in plans:
                sub_plan = FeaturePlan(dataset.values, sub, output=plan.output,
                                        confidence=plan.confidence)
                if plan.kept is not None:
                    own = inside[plan.rows if plan.sign is not None else positions]
                    sub_plan.take_local(plan.kept[own])
                effects.append(sub_plan.reduce())
            return Effect.stack(effects, labels)

        out.append(Local(np.asarray(obs_rows, dtype=np.intp), np.asarray(plan.cell, np.intp),
                          local, axis.n_cells, strata, globals_[f], build))
    return out


def _check_dale_features(dataset, feats):
    for j in feats:
        col = dataset.columns[j]
        if col.is_categorical or col.is_boolean:
            raise InvalidParameterError(
                f"effect='dale' needs numeric features of interest; {col.name!r} is "
                "categorical or boolean. Use effect='ale' for it.")


def _dale_locals(dataset, model, X, feats, names, bins, options):
    _check_dale_features(dataset, feats)
    return _dale_observations(dataset, feats, names, dale(model, X, names, bins=bins,
                                                          **options))


def dale_locals_out_of_core(request, feats, names, bins):
    """Dask data: DALE's derivatives of every row, computed partition by partition.

    The rows are gathered first (the split search needs them), so the steps'
    scales and the bins are those of the same rows in memory; each partition
    then takes the derivatives of its rows (every output in one pass), and
    the client reduces them as in-memory DALE does.  Returns the gathered
    dataset and the features' local effects.
    """
    schema, table, model = request.dataset, request.table, request.model
    _check_dale_features(schema, feats)
    dataset = _gathered(schema, table.map(None, _encoded_rows))
    scale = feature_scale(dataset.values[:, feats])
    parts = table.map(model, _partition_derivatives, feats, names, scale, table.local)
    views = [model] if model.n_outputs == 1 else [model.view(c) for c in range(model.n_outputs)]
    specs = [check_bins(grid_spec(bins, dataset, j), name) for j, name in zip(feats, names)]
    dataset.warn_missing(feats, "DALE bins")  # once, as dale() says it (not once per output)
    per_output = []
    for c, view in enumerate(views):
        found = [p[c] for p in parts if p]  # (partitions of no rows: none)
        backend = found[0][1]
        derivatives = np.concatenate([d for d, _, _ in found], axis=1)
        checks = [k for _, _, k in found if k is not None]
        if checks:  # said once for the whole table, as in memory
            _warn_unreliable(np.sum(checks, axis=0), names)
        per_output.append(dale_effects(dataset, feats, specs, derivatives, backend,
                                        output=view.output_name, min_points=10,
                                        confidence=0.95, empty_bins="zero"))
    effects = Effects.stack(per_output, request.output_labels)
    return dataset, _dale_observations(dataset, feats, names, effects)


class _Derivatives(DerivativePlan):
    """A partition's derivatives, kept with their checks (the client warns once)."""

    def summarise(self):
        if self._gradient is not None:
            return self._gradient.result, self.backend, None
        return self.derivatives, self.backend, self.check_counts()


def _partition_derivatives(values, model, index, feats, names, scale, options):
    """One partition's ``[(derivatives, backend, checks) per output]`` (none without rows)."""
    if not len(values):
        return []
    per_output = summarise_outputs(
        model, lambda one: [_Derivatives(one, values, feats, names=names, scale=scale)],
        options, desc="regions (dale, partition)")
    return [found for (found,) in per_output]


def _warn_unreliable(counts, names):
    # the check's rule, on the counts summed over the partitions (it reads no plan when
    # given the names)
    DerivativePlan.warn_unreliable(cast(DerivativePlan, None), counts, names)


def _dale_observations(dataset, feats, names, effects):
    """Each feature's :class:`Local` from DALE's effects, which keep their derivatives."""
    out = []
    for j, name in zip(feats, names):
        effect = effects[name]
        assert isinstance(effect, DaleEffect)  # dale's effects keep their local effects
        g = _as_columns(effect.local_effects)  # (rows, outputs)
        known = np.flatnonzero(~np.isnan(dataset.values[:, j]))
        if g.shape[0] != known.size:
            raise InvalidParameterError(
                f"the derivative of the model for {name!r} is NaN or inf at some rows; "
                "effect='dale' needs it at every row with a value. Drop those rows, or use "
                "effect='ale'.")
        x = dataset.values[known, j]
        edges = np.asarray(effect.grid, dtype=float)
        cell = bin_index(x, edges) if edges.size > 1 else np.zeros(x.size, np.intp)
        strata = np.full(dataset.n_rows, -1, dtype=np.intp)
        strata[known] = cell
        ones = [effect.for_output(c) for c in range(effect.n_outputs)]

        def build(rows, effect=effect, ones=ones, known=known, g=g, x=x, edges=edges):
            own = np.isin(known, rows)
            return Effect.stack([dale_summarise(
                one.feature, x[own], g[own, c], edges,
                min_points=one.extra.get("min_points", 10),
                confidence=one.band.level if one.band else 0.95, output=one.output,
                backend=one.extra.get("gradient"), empty_bins="zero")
                for c, one in enumerate(ones)], effect.output_labels)

        out.append(Local(known, np.asarray(cell, np.intp), g,
                          max(edges.size - 1, 1), strata, effect, build))
    return out


def pdp_locals_out_of_core(request, model, X, feats, names, grid, options):
    """Dask data: every row's ICE curve, partition by partition.

    Out-of-core PD with a sample of all the rows: the in-memory grid, from the
    same column summaries.  Returns the gathered dataset and the features'
    local effects.
    """
    parts = request.table.map(None, _encoded_rows)
    dataset = _gathered(request.dataset, [p for p in parts])
    return dataset, _pdp_locals(dataset, model, X, feats, names, grid, options)


def _pdp_locals(dataset, model, X, feats, names, grid, options):
    effects = pdp(model, X, names, grid=grid, ice=True, **options)
    out = []
    n = dataset.n_rows
    for name in names:
        effect = effects[name]
        ice = np.asarray(effect.ice, dtype=float)
        if ice.ndim == 2:
            ice = ice[:, :, None]
        n_grid = ice.shape[1]
        # (rows, points, outputs): each row's curve minus its own mean, per output
        centred = ice - ice.mean(axis=1, keepdims=True)
        # a flat curve is exactly flat once centred (its mean may round off its value): a
        # feature the model ignores then has no local effect at all, not rounding noise to split
        centred = np.where(np.ptp(ice, axis=1, keepdims=True) == 0, 0.0, centred)
        rows = np.repeat(np.arange(n), n_grid)
        cell = np.tile(np.arange(n_grid), n)
        ones = [effect.for_output(c) for c in range(effect.n_outputs)]

        def build(rows, effect=effect, ones=ones):
            parts = []
            for one in ones:
                curves = np.asarray(one.ice, dtype=float)[rows]
                values = curves.mean(axis=0) if rows.size else np.full(curves.shape[1], np.nan)
                fv = one.feature_values
                if fv is not None and len(fv) == n:
                    fv = np.asarray(fv)[rows]
                parts.append(Effect(feature=one.feature, method="pdp", grid=one.grid,
                                    values=values, ice=curves, kind=one.kind, feature_values=fv,
                                    output=one.output, ice_rows=rows))
            return Effect.stack(parts, effect.output_labels)

        out.append(Local(rows, cell, centred.reshape(n * n_grid, -1), n_grid,
                          np.zeros(n, dtype=np.intp), effect, build))
    return out


def _as_columns(values):
    """Local effects as ``(m, k)``: one column per output (a trailing output axis kept)."""
    values = np.asarray(values, dtype=float)
    return values[:, None] if values.ndim == 1 else values.reshape(values.shape[0], -1)
