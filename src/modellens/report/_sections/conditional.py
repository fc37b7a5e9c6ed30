"""Conditional beside marginal Shapley values, where the data section finds features that
the others explain strongly (issue 43).

Marginal (interventional) Shapley values give the model rows the data never
holds when features depend on each other, as partial dependence does.  Where
the data section finds such features, this section explains the rows drawn as
waterfalls again with the conditional game (``dependence="tree"``: it takes
categorical features and missing values) and shows both side by side, with
each game's MSEv on the same coalitions (lower: worths closer to the
conditional expectation).
"""

from __future__ import annotations

import numpy as np

from ...attribution import shapley
from .._inputs import take_rows
from .capture import capture_warnings
from .page import Cell, Section, Table, chosen_rows, fmt, num_cell

__all__ = ["conditional_section", "STRONG_DEPENDENCE", "APPROACH"]

#: "Explained by the others" (the data section's cross-validated R^2 or balanced accuracy)
#: from which a feature counts as strongly dependent.
STRONG_DEPENDENCE = 0.7
#: The conditional approach of the section, its draws per coalition, and the most features
#: it enumerates exactly (beyond, 40 sampled coalitions as in shapr's paper).
APPROACH, DRAWS, MAX_EXACT = "tree", 100, 8


def strongly_explained(found) -> list:
    """Features the data section finds explained by the others (or flagged off the data)."""
    data = found.get("data") or {}
    return [f["feature"] for f in data.get("features", ())
            if f["warning"] or (np.isfinite(f["dependence"])
                                and f["dependence"] >= STRONG_DEPENDENCE)]


def conditional_section(inputs, found) -> Section | None:
    """The chosen rows' conditional and marginal Shapley values (None when no feature is
    strongly explained by the others, or the model has several outputs)."""
    flagged = strongly_explained(found)
    if not flagged or inputs.outputs or len(inputs.dataset.columns) < 2:
        return None
    sec = Section("conditional", "Shapley values that respect dependence")
    rows = chosen_rows(inputs)
    positions = [inputs.explain_index[i] for i, _ in rows]
    X = take_rows(inputs.X, positions)
    d = len(inputs.dataset.columns)
    kw = dict(background=inputs.X_background, random_state=inputs.random_state,
              progress=inputs.progress, target=inputs.target)
    kw.update({"algorithm": "exact"} if d <= MAX_EXACT else
              {"algorithm": "kernel", "n_samples": 40})
    with capture_warnings(sec):
        marginal = shapley(inputs.model, X, **kw)
        conditional = shapley(inputs.model, X, dependence=APPROACH, n_draws=DRAWS, **kw)
    m_msev, c_msev = marginal.diagnostics["msev"], conditional.diagnostics["msev"]
    ratio = c_msev / m_msev if m_msev > 0 else np.nan
    sec.notes.append(
        f"The others explain {', '.join(flagged)} strongly (see the data section), so the "
        f"marginal Shapley values above ask the model about rows the data never holds. Here "
        f"the rows drawn as waterfalls are explained again with conditional values "
        f"(dependence='{APPROACH}': absent features drawn from background rows like the "
        f"row's present ones, {DRAWS} draws per coalition). MSEv (mean squared gap between "
        f"f(x) and the estimated worths, lower is closer to the conditional expectation): "
        f"conditional {fmt(c_msev)}, marginal {fmt(m_msev)} (ratio {fmt(ratio, 3)}).")
    sec.notes.append(
        "Where the two differ, the marginal value credits a feature for what its dependent "
        "partners carry in the data (or the reverse); the conditional value shares the "
        "credit as the data's dependence does, so the difference measures how much of the "
        "marginal story rests on feature combinations the data does not contain.")
    columns = ["feature"] + [f"{why}: {game}" for _, why in rows
                             for game in ("marginal", "conditional")]
    table = []
    for j, name in enumerate(marginal.feature_names):
        cells = [Cell(name + (" *" if name in flagged else ""))]
        for k in range(len(rows)):
            cells += [num_cell(marginal.values[k, j]), num_cell(conditional.values[k, j])]
        table.append(cells)
    sec.tables.append(Table("Marginal and conditional Shapley values of the drawn rows "
                            "(* explained strongly by the others)", columns, table))
    sec.data.update(flagged=flagged, rows=positions, marginal=marginal,
                    conditional=conditional, approach=APPROACH, msev=c_msev,
                    msev_marginal=m_msev, msev_ratio=ratio)
    return sec
