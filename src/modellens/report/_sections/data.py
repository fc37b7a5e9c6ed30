"""The data section: kinds, ranges and missing values of every feature, and how each depends
on the others."""

from __future__ import annotations

import numpy as np

from .._dependence import MAX_ROWS, WARN_SHARE, dependence
from .._warnings import quiet
from .page import FEW_VALUES, Cell, Section, Table, fmt, num_cell, plural


#: Below this many rows the dependence between features is not judged.
MIN_ROWS = 100


def data_section(inputs, found) -> Section:
    """Kinds, ranges and missing values of every feature, and how each depends on the others."""
    from .._inputs import grid_values

    ds = inputs.dataset
    sec = Section("data", "The data")
    n, d = ds.values.shape
    sec.notes.append(f"{n:,} rows, {d} features. Dependence is estimated on "
                     f"{min(inputs.sample_dataset.n_rows, MAX_ROWS):,} rows.")
    if inputs.unused_columns:
        sec.warnings.append(
            f"Columns of the file the model does not take ({len(inputs.unused_columns)}): "
            + ", ".join(inputs.unused_columns)
            + ". Check that none of them leaks the target.")
    sec.warnings.extend(inputs.input_notes)
    if inputs.skipped:
        sec.warnings.append(
            "Columns with fewer than two values in the sample (no effect is drawn for them): "
            + ", ".join(f"{name} ({why})" for name, why in inputs.skipped) + ".")
    grids = {j: grid_values(inputs, j) for j in inputs.features}
    dep = dependence(inputs.sample_dataset, grids, random_state=inputs.random_state,
                     progress=inputs.progress, min_rows=MIN_ROWS)
    rows, features, flagged = [], [], []
    for j, col in enumerate(ds.columns):
        x = ds.values[:, j]
        missing = int(np.isnan(x).sum())
        observed = x[~np.isnan(x)]
        distinct = ds.n_unique(j)
        kind, described, hint = _describe(col, observed, distinct)
        entry = dep[j]
        warn = _off_data_flag(entry, col, distinct)
        if warn:
            flagged.append(col.name)
        features.append({"feature": col.name, "kind": kind, "dtype": str(col.dtype),
                         "missing": missing, "distinct": distinct,
                         "range": described, "dependence": entry["score"],
                         "dependence_score": entry["score_name"], "off_data": entry["off_data"],
                         "warning": warn, "hint": hint, "note": entry["note"]})
        score = fmt(max(entry["score"], 0.0), 2) if np.isfinite(entry["score"]) else "n/a"
        if entry["note"]:
            score = entry["note"] if score == "n/a" else f"{score} ({entry['note']})"
        rows.append([Cell(col.name), Cell(kind), num_cell(missing),
                     Cell(f"{missing / max(n, 1):.1%}", "num"),
                     num_cell(distinct),
                     Cell(described + (f" ({hint})" if hint else "")), Cell(score, "num"),
                     Cell("" if np.isnan(entry["off_data"]) else f"{entry['off_data']:.0%}",
                          "num"),
                     Cell("PD off the data" if warn else "", "badge" if warn else "")])
    sec.tables.append(Table(
        "Features", ["feature", "kind", "missing", "missing %", "distinct", "values",
                     "explained by the others", "PD points off the data", ""], rows))
    if flagged:
        sec.warnings.append(
            f"PD off the data ({len(flagged)} features: {', '.join(flagged)}): the other "
            f"features predict these ones, so at least {WARN_SHARE:.0%} of the points partial "
            "dependence evaluates lie where the data has none; read their ALE instead.")
    sec.notes.append(
        "Explained by the others: the cross-validated R^2 of an additive model (a step "
        "function of each of the most related other features) predicting a numeric feature, "
        "shown from 0 (no better than the mean); for categorical and boolean features the "
        "chance-adjusted balanced accuracy "
        f"(0 = no better than guessing, 1 = determined). Below {MIN_ROWS} rows it is not "
        "judged; the largest rank correlation with another feature is shown instead. PD points "
        "off the data: the share of the (row, grid value) pairs partial dependence evaluates "
        "whose grid value lies outside the 1%-99% range of what the row's other features leave "
        "for this one (for a categorical feature: a level the other features make 10 times "
        "rarer than in the data), less the share of grid values in the feature's own 1% tails.")
    sec.data["features"] = features
    sec.data["off_data"] = {f["feature"]: f["warning"] for f in features}
    return sec


def _describe(col, observed, distinct) -> tuple:
    """``(kind, values, hint)`` of a column from its observed (encoded) values."""
    hint = ""
    if col.is_categorical:
        kind = "categorical"
        codes, counts = np.unique(observed, return_counts=True)
        top = np.argsort(-counts, kind="stable")[:5]
        # a level as long as a paragraph would push the table off the page
        labels = [str(col.levels[int(codes[i])]) for i in top]
        labels = [t if len(t) <= 60 else t[:59] + "\u2026" for t in labels]
        described = f"{plural(codes.size, 'level')}: " + ", ".join(labels) + \
            (", ..." if codes.size > 5 else "")
        hint = _level_hint(col.levels)
    elif col.is_boolean:
        kind, described = "boolean", f"{int((observed == 1).sum()):,} True"
    else:
        kind = "numeric" if distinct > FEW_VALUES else \
            ("binary" if distinct == 2 else "empty" if distinct == 0 else "constant"
             if distinct == 1 else f"numeric, {distinct} values")
        described = (f"{fmt(observed.min())} to {fmt(observed.max())}, median "
                     f"{fmt(np.median(observed))}") if observed.size else "all missing"
    return kind, described, hint


def _off_data_flag(entry, col, distinct) -> str:
    """The short warning of a feature whose PD leaves the data, or ''.

    Only a feature the others predict (score at least 0.1) is flagged: a high
    share of rare (row, level) pairs of a many-level feature the others do not
    predict is the rarity of its levels, not dependence.
    """
    share, score = entry["off_data"], entry["score"]
    if not (np.isfinite(share) and share >= WARN_SHARE and np.isfinite(score) and score >= 0.1):
        return ""
    if col.is_categorical:
        return (f"PD extrapolates: the other features make {share:.0%} of the (row, level) "
                "pairs PD evaluates 10 times rarer than in the data; read ALE instead.")
    return (f"PD extrapolates: {share:.0%} of its points lie where the data has none (the "
            "other features predict this one); read ALE instead.")


def _level_hint(levels) -> str:
    """'date-like' / 'number-like' when most text levels parse as dates / numbers."""
    import pandas as pd

    text = [v for v in np.asarray(levels).tolist() if isinstance(v, str)]
    if len(text) < 3:
        return ""
    # dates and numbers are short: a long level is neither, and the date parser's time
    # grows with the square of a text's length (a 2 MB level took minutes)
    probe = pd.Series([v if len(v) <= 64 else "" for v in text[:: max(1, len(text) // 200)]])
    if pd.to_numeric(probe, errors="coerce").notna().mean() >= 0.9:
        return ("number-like text: as a category every value is its own level; if the model "
                "should see an order, convert it to numbers")
    with quiet():  # pandas' format-inference chatter
        parsed = pd.to_datetime(probe, errors="coerce", format="mixed")
    if parsed.notna().mean() >= 0.9:
        return ("date-like text: as a category every date is its own level; features such "
                "as year, month, weekday or days since a start may serve the model better")
    return ""
