"""The LIME section: each drawn row's local surrogate and its fidelity."""

from __future__ import annotations

import numpy as np

from ..._validation import InvalidParameterError
from ...attribution import lime
from .._inputs import take_rows
from .._render import figure_from
from .capture import capture_warnings
from .page import Cell, FigureGroup, Section, Table, chosen_rows, num_cell, say_every, titled


#: LIME weights of a surrogate whose local R^2 is below this get a low-fidelity badge.
LOW_FIDELITY = 0.3


def lime_section(inputs, found) -> Section:
    """LIME for the rows of the Shapley waterfalls, with each surrogate's fidelity."""
    sec = Section("lime", titled("LIME", inputs))
    say_every(sec, inputs, "LIME weights")
    rows = chosen_rows(inputs)
    positions = [inputs.explain_index[i] for i, _ in rows]
    several = bool(inputs.outputs)
    try:
        with capture_warnings(sec):
            # several outputs: every output's surrogate from the same samples, each the
            # numbers of its target= call; the section draws the explained one
            every = lime(inputs.model, take_rows(inputs.X, positions),
                         training_data=inputs.X_sample, random_state=inputs.random_state,
                         target=None if several else inputs.target)
    except InvalidParameterError as exc:
        # e.g. a training column with no value at all: say why, show nothing
        sec.warnings.append(f"LIME was not run: {exc}")
        return sec
    attr = every.for_output(inputs.output_position) if several else every
    score = attr.score if attr.score is not None else np.full(len(rows), np.nan)
    held_out = attr.surrogate.score_holdout if attr.surrogate.score_holdout is not None \
        else np.full(len(rows), np.nan)
    group = FigureGroup("Rows")
    low = []
    for k, (_, why) in enumerate(rows):
        ax = attr.plot.weights(k)
        ax.set_title(f"row {positions[k]}: {ax.get_title()}")
        caption = why
        if np.isfinite(score[k]) and score[k] < LOW_FIDELITY:
            caption = f"{why} [low fidelity: local R^2 {score[k]:.2f}]"
            low.append(positions[k])
        group.figures.append(figure_from(ax.figure, f"LIME weights: {why}", caption=caption))
    sec.figure_groups.append(group)
    sec.notes.append(
        f"LIME (Ribeiro et al. 2016): for each row, {attr.surrogate.num_samples or 5000:,} "
        f"perturbed samples drawn from the statistics of the {len(inputs.sample_index):,} "
        "sampled rows, weighted by proximity, and a sparse linear surrogate fit to the model's "
        "answers. A weight is the surrogate's slope for its condition; read it only as far as "
        "the local R^2 shows the surrogate follows the model.")
    if low:
        sec.warnings.append(
            f"Low fidelity (local R^2 below {LOW_FIDELITY}) for rows "
            f"{', '.join(str(r) for r in low)}: their surrogate does not follow the model "
            "there, so their weights say little about it.")
    sec.tables.append(Table("Fidelity of the local surrogates",
                            ["row", "local R^2", "held-out R^2", ""],
                            [[Cell(why), num_cell(s, 3), num_cell(h, 3),
                              Cell("low fidelity", "badge") if np.isfinite(s)
                              and s < LOW_FIDELITY else Cell("")]
                             for (_, why), s, h in zip(rows, score, held_out)]))
    sec.data.update(attributions=attr, rows=positions, score=score,
                    training_rows=inputs.sample_index, low_fidelity=low,
                    every_output=every if several else None)
    return sec
