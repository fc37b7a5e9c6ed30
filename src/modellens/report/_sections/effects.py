"""The effects section: PD with ICE beside ALE for every feature, the most important first,
and the "other" group of a many-level categorical."""

from __future__ import annotations

import numpy as np

from ..._validation import InvalidParameterError
from ...effects.ale import ale
from ...effects.pdp import pdp
from .._inputs import TOP_LEVELS
from .capture import capture_warnings
from .effect_figures import feature_panels, levels_by_effect
from .page import FEW_VALUES, FigureGroup, Section, each_output, explained_output, fmt


#: An effect whose PD and ALE both move less than this share of the predictions'
#: spread (their 1%-99% range) is marked negligible.
NEGLIGIBLE = 0.01


def _spread(prediction) -> float:
    lo, hi = np.quantile(prediction, [0.01, 0.99])
    return float(hi - lo)


def effects_section(inputs, found) -> Section:
    """PD with ICE beside ALE for every feature, the most important first, on one scale."""

    sec = Section("effects", "Global effects")
    ds = inputs.sample_dataset
    names = [ds.columns[j].name for j in inputs.features]
    grids = {ds.columns[j].name: inputs.grids[j] for j in inputs.features}
    many = {ds.columns[j].name: ds.n_unique(j) for j in inputs.features
            if ds.columns[j].is_categorical and ds.n_unique(j) > TOP_LEVELS}
    several = bool(inputs.outputs)
    # a model of several outputs and no target: every output at once (one line each)
    opts = dict(progress=inputs.progress, target=None if several else inputs.target)
    with capture_warnings(sec):
        pd_effects = pdp(inputs.model, inputs.X_sample, names, grid=grids, ice=True, **opts)
        ale_names = [f for f in names if f not in many]
        ale_effects, failed = {}, {}
        try:
            ale_effects = dict(ale(inputs.model, inputs.X_sample, ale_names, bins=inputs.grid,
                                   **opts)) if ale_names else {}
        except InvalidParameterError:
            for name in ale_names:  # find the features ALE refuses and keep the others
                try:
                    ale_effects.update(ale(inputs.model, inputs.X_sample, [name],
                                           bins=inputs.grid, **opts))
                except InvalidParameterError as exc:
                    failed[name] = str(exc)
        # the "other" point of a many-level feature: for the one explained output
        others = {name: _other_group(inputs, ds.index_of(name),
                                     dict(opts, target=inputs.target)) for name in many}
    for name, levels in many.items():
        failed[name] = (f"not drawn for a categorical feature with {levels:,} levels (its level "
                        "order needs the distances between every pair of levels)")
    # several outputs: a feature's importance is its largest over the outputs
    importance = {name: max(_pd_importance(e, others.get(name),
                                           ds.values[:, ds.index_of(name)], ds.columns[
                                               ds.index_of(name)])
                            for e in each_output(pd_effects[name])) for name in names}
    order = sorted(names, key=lambda f: -np.nan_to_num(importance[f], nan=-1))
    shown = order[:inputs.max_features]
    spread = max(_spread(inputs.prediction if not several else inputs.all_predictions[:, k])
                 for k in range(max(1, len(inputs.outputs))))
    if several:
        sec.notes.append(
            f"Every output of the model is drawn, one line per output in each panel: "
            f"{', '.join(inputs.outputs)}"
            + (" (the model records no class labels: output k is the booster's output column "
               "k, class k of a multiclass booster)" if inputs.explained_class is None else "")
            + ". The PD panels draw no ICE curves then (the section's data keep them). A "
            "feature's importance is the largest over the outputs; an effect is negligible "
            "when it is on every output.")
    sec.notes.append(
        f"Partial dependence (PD) with ICE curves and accumulated local effects (ALE) with their "
        f"95% confidence band, on {ds.n_rows:,} rows, {inputs.grid} grid points / bins. The two "
        "panels of a feature share one vertical span, so their heights compare. Features in "
        "order of importance: the standard deviation of the PD curve over the rows (each grid "
        "point or level weighted by the rows nearest to it, so a level few rows have counts "
        "little; after Greenwell, Boehmke and McCarthy 2018). PD averages the model over points "
        "that may lie off the data when features depend on each other; ALE uses only points "
        f"next to the data. An effect below {NEGLIGIBLE:.0%} of the predictions' spread (their "
        f"1%-99% range, {fmt(spread, 3)}) is marked negligible.")
    if many:
        sec.notes.append(
            f"Categorical features with more than {TOP_LEVELS} levels ("
            + ", ".join(f"{k}: {v:,}" for k, v in many.items())
            + f") get PD at their {TOP_LEVELS} most frequent levels, drawn in order of effect, "
            "and one \"other\" point (a diamond with its 95% interval): the mean PD over the "
            "remaining levels, each weighted by its frequency in the sample; above "
            f"{OTHER_LEVELS} remaining levels it is estimated from PD at {OTHER_LEVELS} levels "
            "drawn with probability proportional to their frequency.")
    if len(order) > len(shown):
        sec.notes.append(f"The {len(shown)} most important of {len(order)} features are drawn; "
                         "pass features= (--features) for others.")
    off_data = (found.get("data") or {}).get("off_data", {})
    negligible, zero, level_order, spans = [], [], {}, {}
    for name in shown:
        j = ds.index_of(name)
        pds = each_output(pd_effects[name])
        ales = each_output(ale_effects.get(name), len(pds))
        size = max(_effect_size(p, a) for p, a in zip(pds, ales))
        is_zero = all(_is_zero(p, a) for p, a in zip(pds, ales))
        small = bool(size < NEGLIGIBLE * spread) if spread > 0 else False
        if is_zero:
            zero.append(name)
        elif small:
            negligible.append(name)
        col = ds.columns[j]
        # unordered levels have no order of their own: PD draws them by effect
        by_effect = col.is_categorical and not col.ordered
        ale_effect = ale_effects.get(name)
        # the PD panel of an unordered category takes the levels in the ALE panel's order
        # beside it (ALE accumulates along that order), else by effect
        ale_order = [str(v) for v in np.asarray(ale_effect.grid).tolist()] \
            if by_effect and ale_effect is not None and name not in many else None
        pd_drawn = pd_effects[name]
        if several and name in many:  # its levels by effect: for the one explained output
            pd_drawn = pd_drawn.for_output(inputs.output_position)
        figures, spans[name] = feature_panels(
            name, pd_drawn, ale_effect, inputs, other=others.get(name),
            discrete=(not col.is_categorical and ds.n_unique(j) <= FEW_VALUES),
            levels=many.get(name, 0) or (by_effect and ds.n_unique(j)),
            random_state=inputs.random_state, order=ale_order)
        if by_effect:
            level_order[name] = ale_order or levels_by_effect(
                explained_output(pd_effects[name], inputs))
        badge = " [no effect]" if is_zero else " [negligible]" if small else ""
        group = FigureGroup(f"{name} (importance {fmt(importance[name], 3)}){badge}", figures)
        if is_zero:
            group.warnings.append(
                f"The model's output does not change with {name} on any row. If the model "
                "was fit on it, the values may not be what it saw (a column read as numbers "
                "where the model saw text, or levels it never saw), or the model ignores it.")
        if off_data.get(name):
            group.warnings.append(off_data[name])
        if name in failed:
            group.warnings.append(f"ALE: {failed[name]}")
        sec.figure_groups.append(group)
    if zero:
        sec.warnings.append(f"No effect at all on any row: {', '.join(zero)} (see below).")
    sec.data.update(pdp=pd_effects, ale=ale_effects, importance=importance, order=order,
                    shown=shown, ale_failed=failed, negligible=negligible, zero=zero,
                    spread=spread, level_order=level_order, other=others, spans=spans,
                    sample_rows=inputs.sample_index)
    return sec


#: Remaining levels of a many-level categorical up to which the "other" group's PD is
#: their exact frequency-weighted mean; above, it is estimated from this many drawn levels.
OTHER_LEVELS = 40


def _other_group(inputs, j, opts) -> dict:
    """PD of the levels beyond the labelled ones, as one group: their weighted mean.

    With remaining levels :math:`R` of sample frequencies :math:`n_l`, the
    group's value is :math:`\\sum_{l \\in R} n_l PD(l) / \\sum_{l \\in R} n_l`.
    Up to ``OTHER_LEVELS`` levels PD runs at each of them; beyond, at
    ``OTHER_LEVELS`` levels drawn with replacement with probability
    :math:`n_l / \\sum n` (seeded), whose plain mean estimates the same
    quantity without bias, with the standard error of that mean.
    """
    ds = inputs.sample_dataset
    col = ds.columns[j]
    x = ds.values[:, j]
    codes, counts = np.unique(x[~np.isnan(x)], return_counts=True)
    shown = {str(v) for v in np.asarray(inputs.grids[j]).tolist()}
    rest = np.array([str(col.levels[int(c)]) not in shown for c in codes])
    codes, counts = codes[rest].astype(np.intp), counts[rest]
    if codes.size == 0:
        return {}
    if codes.size <= OTHER_LEVELS:
        picked, weights, drawn = codes, counts.astype(float), False
    else:
        rng = np.random.default_rng([inputs.random_state, j])
        draws = rng.choice(codes, size=OTHER_LEVELS, p=counts / counts.sum())
        picked, weights = np.unique(draws, return_counts=True)
        weights, drawn = weights.astype(float), True
    levels = col.levels[picked]
    effect = pdp(inputs.model, inputs.X_sample, [col.name], grid={col.name: list(levels)},
                 **opts)[col.name]
    at = {str(g): float(v) for g, v in zip(np.asarray(effect.grid).tolist(),
                                            np.asarray(effect.values, dtype=float))}
    values = np.array([at[str(v)] for v in np.asarray(levels).tolist()])
    value = float(np.sum(weights * values) / weights.sum())
    if drawn:
        reps = np.repeat(values, weights.astype(int))
        se = float(np.std(reps, ddof=1) / np.sqrt(reps.size))
    else:
        se = 0.0
    return {"value": value, "se": se, "levels": int(codes.size), "rows": int(counts.sum()),
            "estimated": drawn, "evaluated": int(picked.size)}


def _effect_size(pd_effect, ale_effect) -> float:
    sizes = [np.ptp(np.asarray(pd_effect.values, dtype=float))]
    if ale_effect is not None:
        sizes.append(np.ptp(np.asarray(ale_effect.values, dtype=float)))
    return float(np.nanmax(sizes))


def _is_zero(pd_effect, ale_effect) -> bool:
    """True when no ICE curve moves at all, nor the ALE (the model ignores the feature)."""
    ice = pd_effect.ice if pd_effect.ice is not None else np.atleast_2d(pd_effect.values)
    ice = np.asarray(ice, dtype=float)
    flat = bool(np.all(np.nanmax(ice, axis=1) - np.nanmin(ice, axis=1) == 0)) \
        if ice.size and ice.shape[1] > 1 else False
    if ale_effect is not None:
        flat = flat and bool(np.all(np.asarray(ale_effect.values, dtype=float) == 0))
    return flat


def _pd_importance(effect, other=None, x=None, col=None) -> float:
    """The standard deviation of the PD curve over the rows: ``sqrt(sum w (PD - mean)^2 / sum w)``.

    A grid point or level weighs as many rows as lie nearest to it (the
    rows ``x`` of the feature, codes for a categorical ``col``), so the
    measure agrees with where the data are: a level few rows have, or a
    grid point in an empty tail, counts little.
    """
    values = np.asarray(effect.values, dtype=float)
    weights = _row_weights(effect, x, col)
    if other:
        values = np.append(values, other["value"])
        weights = np.append(weights, other["rows"])
    keep = np.isfinite(values) & (weights > 0)
    if values.size < 2 or not keep.any():
        return float("nan") if not np.isfinite(values).any() else 0.0
    v, w = values[keep], weights[keep]
    mean = np.sum(w * v) / w.sum()
    return float(np.sqrt(np.sum(w * (v - mean) ** 2) / w.sum()))


def _row_weights(effect, x, col) -> np.ndarray:
    """Rows nearest to each grid point (at each level of a categorical): the PD's weights."""
    grid = np.asarray(effect.grid)
    if x is None:
        return np.ones(grid.size)
    x = x[~np.isnan(x)]
    if col is not None and col.is_categorical:
        counts = dict(zip(*np.unique(x.astype(np.intp), return_counts=True)))
        where = {str(v): k for k, v in enumerate(np.asarray(col.levels).tolist())}
        return np.array([float(counts.get(where.get(str(g), -1), 0))
                         for g in grid.tolist()])
    g = grid.astype(float)
    if g.size == 1:
        return np.array([float(x.size)])
    mids = (g[1:] + g[:-1]) / 2
    return np.bincount(np.searchsorted(mids, x), minlength=g.size).astype(float)
