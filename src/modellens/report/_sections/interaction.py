"""The interaction section: Friedman's H screen of the most important features and the
second-order ALE of the strongest pairs."""

from __future__ import annotations

import numpy as np

from ..._validation import NotATreeModelError
from ...effects.ale import ale
from ...effects.interactions import interactions
from ...plot import subplots
from .._render import figure_from
from .capture import capture_warnings
from .page import Cell, FigureGroup, Section, Table, explained_output, num_cell, say_every, titled


#: Most features the interaction screen takes (the most important ones), and its rows.
SCREEN_FEATURES = 30
SCREEN_ROWS = 300
#: Without the tree method every feature and pair costs (sampled rows)^2 model rows: the
#: screen then takes the most important features, pairs among the strongest overall
#: interactors (as R's hstats does), and as many rows as a budget of model rows allows.
SCREEN_BRUTE_FEATURES = 10
SCREEN_PAIR_FEATURES = 6
SCREEN_BRUTE_ROWS = 400_000
SCREEN_MIN_ROWS = 50
#: Pairs of the screen (the best first) whose second-order ALE is computed: the interactive
#: page's pair selector shows them.
SCREEN_DRAWN_PAIRS = 6
#: A pair's H^2 below this share is no interaction worth drawing, however large its
#: unnormalised statistic (H^2 is a share, so tiny joint effects can reach 1: both count).
MEANINGFUL_H2 = 0.01


def screen_pairs(inputs, candidates) -> tuple:
    """Rank the pairs of ``candidates`` by Friedman's H: ``(ranked, interactions)``.

    ``ranked`` lists ``(pair, h2_unnormalized, h2)``, the pairs with a
    meaningful share of interaction (``h2 >= MEANINGFUL_H2``) first, each
    group by the unnormalised statistic (the interaction's size on the
    prediction's scale), so a pair with a large share of a negligible joint
    effect does not win.  For a model of several outputs the statistics of
    every output come from one pass (``interactions`` holds them all) and
    ``ranked`` is the explained output's; :func:`rank_pairs` ranks another.
    Without the tree method, the screen's pairs are those among the features
    with the strongest interactions over every output (``shared_pairs``),
    the same pairs for every output.
    """
    if len(candidates) < 2:
        return [], None
    n = len(inputs.sample_index)
    common = dict(random_state=inputs.random_state, progress=inputs.progress,
                  target=None if inputs.outputs else inputs.target)
    try:  # a tree ensemble: every pair costs no model rows
        inter = interactions(inputs.model, inputs.X_sample, candidates,
                             sample=min(SCREEN_ROWS, n), method="tree", **common)
    except NotATreeModelError:
        # not trees, or trees that cannot serve (e.g. a Pipeline whose trees see encoded
        # columns): brute force within its budget, not every pair of 30 features (40M rows)
        inter = None
    if inter is None:
        features = candidates[:SCREEN_BRUTE_FEATURES]
        k = min(SCREEN_PAIR_FEATURES, len(features))
        blocks = len(features) + k * (k - 1) // 2
        sample = min(n, SCREEN_ROWS,
                     max(SCREEN_MIN_ROWS, int(np.sqrt(SCREEN_BRUTE_ROWS / blocks))))
        # "auto": the features' blocks from the trees where they are the model's answers
        # (a boosted classifier's probabilities), so only f and the pairs are model rows; the
        # pairs among the k features strongest over every output, one set for all of them
        # (the pair rows do not grow with the classes)
        inter = interactions(inputs.model, inputs.X_sample, features, sample=sample,
                             pairs=k if k < len(features) else None, method="auto",
                             shared_pairs=True, **common)
    return rank_pairs(explained_output(inter, inputs)), inter


def rank_pairs(inter) -> list:
    """``(pair, h2_unnormalized, h2)`` of one output's statistics, in the screen's order."""
    table = inter.pairwise.dropna(subset=["h2", "h2_unnormalized"])
    ranked = sorted(((a, b), float(h2u), float(h2)) for a, b, h2u, h2 in zip(
        table["feature_1"], table["feature_2"], table["h2_unnormalized"].to_numpy(np.float64),
        table["h2"].to_numpy(np.float64)))
    ranked.sort(key=lambda t: (t[2] < MEANINGFUL_H2, -t[1]))
    return ranked


def _drawn_pairs(by_output, first) -> list:
    """The pairs given a heatmap: the ``SCREEN_DRAWN_PAIRS`` best of output ``first`` (the
    explained one), some of them given up for each other output's strongest pair.

    The explorer opens each class on its strongest pair, so every output's strongest has
    a heatmap; the rest of the places go to the explained output's ranking.  As many pairs
    as for a model of one output (more only when more outputs than places have strongest
    pairs of their own): the second-order ALE evaluates every output on the same rows, so
    its model rows do not grow with the classes.
    """
    strongest = list(dict.fromkeys(ranked[0][0] for ranked in by_output if ranked))
    mine = [p for p, _, _ in by_output[first]]
    room = max(0, SCREEN_DRAWN_PAIRS - len(strongest))
    keep = set(strongest) | set([p for p in mine if p not in strongest][:room])
    # in the explained output's order (then a strongest pair it could not rank, if any)
    return [p for p in mine if p in keep] + [p for p in strongest if p not in mine]


def interaction_section(inputs, found) -> Section | None:
    """The pair the H screen ranks first, as a second-order ALE heatmap, and the runners-up."""
    ds = inputs.sample_dataset
    usable = [ds.columns[j].name for j in inputs.features if ds.n_unique(j) > 1]
    order = found["effects"]["order"]
    candidates = [f for f in order if f in usable][:SCREEN_FEATURES]
    sec = Section("interaction", titled("Strongest interaction", inputs))
    say_every(sec, inputs, "The interaction screen and the heatmaps")
    bins = min(inputs.grid, 10)
    several = bool(inputs.outputs)
    with capture_warnings(sec):
        ranked, every = screen_pairs(inputs, candidates)
    if not ranked:
        return None
    inter = explained_output(every, inputs)
    by_output = [rank_pairs(every.for_output(k)) for k in range(len(inputs.outputs))] \
        if several else [ranked]
    best, best_size, best_h2 = ranked[0]
    screened = len(inter.overall)
    how = ("every pair" if len(inter.pairwise) == screened * (screened - 1) // 2 else
           f"every pair among the {SCREEN_PAIR_FEATURES} features with the strongest overall "
           f"interaction" + (" over every class" if several else ""))
    way = "read from the trees" if inter.method == "tree" else "by brute force" + (
        ", each feature's partial dependence read exactly from the trees"
        if inter.blocks_from_trees else "")
    sec.notes.append(
        f"How the pair was chosen: Friedman's H statistic (ml.interactions, {way}) on "
        f"{inter.sample_size:,} sampled rows, {how} of the {screened} features"
        + (f" (the {screened} most important)" if len(usable) > screened else "")
        + f", {len(ranked)} pairs. The pair drawn has the largest interaction on the "
        f"prediction's scale (H unnormalised, the root mean square of the joint effect beyond "
        f"the two features' own effects) among the pairs whose share of interaction H\u00b2 "
        f"is at least {MEANINGFUL_H2:g}."
        + ("" if best_h2 >= MEANINGFUL_H2 else
           " No pair reaches that share: the model is close to additive, and the pair "
           "below is only the least additive one.")
        + f" Its second-order ALE is drawn on the {ds.n_rows:,} sampled rows; cells marked "
        f"with a dot have no data.")
    with capture_warnings(sec):
        # the page's pair selector draws the first few pairs (of every output): one request
        # for all of them
        every_pair = dict(ale(inputs.model, inputs.X_sample,
                              _drawn_pairs(by_output, inputs.output_position), bins=bins,
                              progress=inputs.progress,
                              target=None if several else inputs.target))
    pair_effects = {p: explained_output(e, inputs) for p, e in every_pair.items()}
    effect = pair_effects[best]
    fig, ax = subplots(figsize=(5.6, 4.4), plain=True)
    effect.plot(ax=ax)
    sec.figure_groups.append(FigureGroup(f"{best[0]} x {best[1]}",
                                         [figure_from(fig, f"second-order ALE of {best}")]))
    sec.tables.append(Table("Strongest pairs (the first is drawn)",
                            ["pair", "H unnormalised", "H\u00b2"],
                            [[Cell(f"{a} x {b}"), num_cell(size, 3), num_cell(h2, 3)]
                             for (a, b), size, h2 in ranked[:6]]))
    sec.data.update(pair=best, strength={p: size for p, size, _ in ranked}, ranked=ranked,
                    effect=effect, candidates=candidates, interactions=inter,
                    pair_effects=pair_effects,
                    every_output={"interactions": every, "ranked": by_output,
                                  "pair_effects": every_pair} if several else None)
    return sec
