"""The regions section: where effects differ, for the most heterogeneous features."""

from __future__ import annotations

import numpy as np

from ..._validation import InvalidParameterError
from ...effects.regions import regions
from ...plot import subplots
from .._render import figure_from
from .capture import capture_warnings
from .page import Cell, FigureGroup, Section, Table, each_output, fmt, num_cell, titled, why_this


#: The most heterogeneous features (by their ALE's within-bin spread) given regions.
REGION_FEATURES = 3


def regions_section(inputs, found) -> Section | None:
    """Where effects differ: the most heterogeneous features' significant splits and curves."""
    # several outputs: the disagreement summed over them, as ml.regions splits for every
    # output together
    spread: dict[str, float] = {}
    for name, stacked in found["effects"]["ale"].items():
        for effect in each_output(stacked):
            bins = effect.bins
            if bins is None or not np.sum(bins.counts):
                continue
            std = np.nan_to_num(np.asarray(bins.std, dtype=float))
            spread[name] = spread.get(name, 0.0) + float(np.sum(bins.counts * std ** 2)
                                                         / np.sum(bins.counts))
    # a spread of rounding size (an additive feature's) is no disagreement
    top = max(spread.values(), default=0.0)
    chosen = sorted((n for n in spread if spread[n] > 1e-9 * top), key=lambda n: -spread[n])
    chosen = chosen[:REGION_FEATURES]
    if not chosen:
        return None
    sec = Section("regions", titled("Where effects differ", inputs))
    several = bool(inputs.outputs)
    if several:
        sec.notes.append(
            f"The regions serve every output of the {len(inputs.outputs)} together: a split is "
            "chosen, and tested, on the disagreement summed over the outputs (ml.regions with "
            f"no target), in one pass. The pictures below draw {inputs.output_name} "
            f"({why_this(inputs)}); the explorer's class selector draws each output's curves "
            "in the same regions.")
    try:
        with capture_warnings(sec):
            result = regions(inputs.model, inputs.X_sample, chosen, bins=inputs.grid,
                             random_state=inputs.random_state,
                             target=None if several else inputs.target,
                             progress=inputs.progress)
    except InvalidParameterError as exc:
        # e.g. too few rows for two regions: the rest of the page stands, this section says why
        sec.notes.append(f"No regions were searched: {exc}")
        return sec
    sec.notes.append(
        f"For the {len(chosen)} features whose ALE local effects disagree most, the rows are "
        "split on the other features into regions where the feature's effect agrees "
        "(ml.regions, on the sampled rows). A split is kept when it removes at least 10% of "
        "the disagreement, a permutation test gives p <= 0.05 and it removes at least 5% on "
        "held-out rows (chosen on half of the rows, measured on the other half); 'stable' is "
        "the share of bootstrap resamples that choose it again. A split whose evidence "
        "disagrees (low stability) is flagged in brackets.")
    for name in chosen:
        tree = result[name]
        if tree.is_leaf:
            sec.notes.append(f"{name}: no region found ({tree.reason}); its global effect "
                             "holds for the rows as a whole.")
            continue
        for node in tree.nodes():
            if node.split is not None:
                where = "" if node.depth == 0 else f" (within {node.region})"
                sec.notes.append(f"{name}{where}: {node.split.sentence()}.")
        fig, ax = subplots(figsize=(5.6, 3.8), plain=True)
        result.plot(name, ax=ax, output=inputs.output_position if several else None)
        sec.figure_groups.append(FigureGroup(name, [figure_from(fig, f"regional ALE of {name}")]))
    splits = result.splits
    if len(splits):
        sec.tables.append(Table(
            "Significant splits", ["feature", "region", "split", "gain", "p", "stable",
                                   "held-out"],
            [[Cell(str(r["feature"])), Cell(str(r["region"])),
              Cell(f"{r['split_feature']} in {{{', '.join(map(str, r['levels']))}}}"
                   if r["levels"] is not None
                   else f"{r['split_feature']} <= {fmt(r['threshold'])}"),
              num_cell(r["gain"], 2), num_cell(r["p_value"], 2), num_cell(r["stability"], 2),
              num_cell(r["heldout_gain"], 2)] for r in splits.to_dict("records")]))
    sec.data.update(regions=result, features=chosen, spread=spread)
    return sec
