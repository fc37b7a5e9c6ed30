"""The "What changed" section (issue 44): from reference data to this data, which features'
change of distribution moved the model's mean prediction, and its loss when labels are given.

The section runs :func:`modellens.shift` (the mean prediction; with both data sets' labels
also the model's loss) and shows each feature's contribution with its interval and its
test (p-values Holm-adjusted over the features), the drift bar chart, and each of the
most-moved features' partial dependence on the reference rows beside that on the current
rows (the explorer's "What changed" part redraws it for the feature picked).

The reference data is checked when the report is asked for (:func:`check_reference`),
before any model call: the same columns as ``X``, each holding the same kind of values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import InvalidParameterError
from ...change import shift
from ...effects.pdp import pdp
from .._inputs import take_rows
from .._render import figure_from
from .capture import capture_warnings
from .page import Cell, FigureGroup, Section, Table, fmt, num_cell, titled

__all__ = ["changed_section", "check_reference", "Reference", "PD_ROWS", "LEVEL"]

#: Rows of each data set the before / after partial dependence averages over.
PD_ROWS = 500
#: The tests' level, and the intervals' (two-sided normal, 95%).
LEVEL, Z95 = 0.05, 1.959963984540054


@dataclass(frozen=True)
class Reference:
    """The reference data of a report, checked against ``X``: rows with ``X``'s columns
    (in its order) and, optionally, their labels."""

    X: Any
    y: Any = None

    @property
    def n_rows(self) -> int:
        return len(self.X)


def check_reference(X, y, X_reference, y_reference) -> Reference:
    """``X_reference`` (and ``y_reference``) checked against the report's ``X`` and ``y``.

    Raises :class:`~modellens.InvalidParameterError` naming what differs: other
    columns, a column of numbers in one and of text in the other, category levels the
    current data's categories lack, labels without ``y``, a label count that is not the
    row count.  Returns the reference with ``X``'s column order (a classifier's labels
    are checked against its classes by the report, as ``y``'s).
    """
    from ...data import as_pandas, as_pandas_series, check_levels

    ref = as_pandas(X_reference)
    if isinstance(X, pd.DataFrame):
        ref = _same_columns(X, ref)
        for c in X.columns:
            _same_kind(c, X[c], ref[c])
            dtype = X[c].dtype
            if isinstance(dtype, pd.CategoricalDtype):
                check_levels(c, ref[c], dtype, "X_reference")
                ref[c] = ref[c].astype(dtype)  # (a copy: see _same_columns)
    else:
        ref = _same_width(np.asarray(X), ref)
    if len(ref) < 2:
        raise InvalidParameterError(f"X_reference holds {len(ref)} rows; the change needs at "
                                    "least 2 rows of each data set.")
    y_ref = as_pandas_series(y_reference)
    if y_ref is not None:
        if y is None:
            raise InvalidParameterError(
                "y_reference is given but y is not: the loss's change needs the labels of both "
                "data sets; pass y as well, or leave y_reference out.")
        values = np.asarray(y_ref)
        if values.ndim != 1 or len(values) != len(ref):
            raise InvalidParameterError(f"y_reference must hold one target per row of "
                                        f"X_reference ({len(ref)}), got shape {values.shape}.")
        y_ref = values
    return Reference(X=ref, y=y_ref)


def _same_columns(X, ref):
    if not isinstance(ref, pd.DataFrame):
        raise InvalidParameterError(
            f"X is a table with named columns and X_reference is a {type(ref).__name__}; pass "
            "X_reference as a table with X's columns.")
    names, theirs = [str(c) for c in X.columns], [str(c) for c in ref.columns]
    missing = [c for c in names if c not in theirs]
    extra = [c for c in theirs if c not in names]
    if missing or extra or len(set(theirs)) != len(theirs):
        raise InvalidParameterError(
            f"X_reference must hold X's columns: it lacks {missing} and has {extra}, which X "
            "does not (or a column twice); compare data sets of the same columns.")
    # a new frame in X's order (never the caller's)
    return ref.set_axis(theirs, axis=1)[names].set_axis(X.columns, axis=1).copy()


def _kind(dtype) -> str:
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype):
        return "numbers"
    if isinstance(dtype, pd.CategoricalDtype):
        return _kind(dtype.categories.dtype) if dtype.categories.size else "text"
    return "text"


def _same_kind(name, current, reference) -> None:
    a, b = _kind(current.dtype), _kind(reference.dtype)
    if a != b:
        raise InvalidParameterError(
            f"column {name!r} holds {a} in X ({current.dtype}) but {b} in X_reference "
            f"({reference.dtype}); both data sets must hold the same kind of values in each "
            "column (read them with the same types).")


def _same_width(X, ref):
    ref = np.asarray(ref)
    if ref.ndim != 2 or ref.shape[1] != X.shape[1]:
        raise InvalidParameterError(f"X_reference must have X's {X.shape[1]} columns, got "
                                    f"shape {ref.shape}.")
    kind = {True: "numbers", False: "text"}
    a, b = X.dtype.kind in "biuf", ref.dtype.kind in "biuf"
    if a != b:
        raise InvalidParameterError(f"X holds {kind[a]} ({X.dtype}) and X_reference "
                                    f"{kind[b]} ({ref.dtype}); pass data of the same kind.")
    return ref


def changed_section(inputs, found) -> Section | None:
    """The change from ``inputs.reference`` to ``X`` of the mean prediction (and the loss),
    shared by feature; None without reference data."""
    ref = inputs.reference
    if ref is None:
        return None
    sec = Section("changed", titled("What changed", inputs))
    kw = dict(target=inputs.target, random_state=inputs.random_state, progress=inputs.progress)
    labelled = ref.y is not None and inputs.y is not None and inputs.unscored is None
    try:
        with capture_warnings(sec):
            moved = shift(inputs.model, ref.X, inputs.X, **kw)
            loss = shift(inputs.model, ref.X, inputs.X, ref.y, inputs.y, **kw) if labelled \
                else None
    except InvalidParameterError as exc:
        sec.warnings.append(f"The change was not decomposed: {exc}")
        return sec
    order = _order(moved)
    sec.notes.append(_story(moved, ref, inputs))
    group = FigureGroup("Drift")
    for s, what in ((moved, "mean prediction"), (loss, f"mean {getattr(loss, 'metric', '')}")):
        if s is None:
            continue
        sec.tables.append(_table(s, what))
        ax = s.plot()
        ax.set_title(f"Change of the {what}: contribution of each feature (95% intervals)")
        group.figures.append(figure_from(ax.figure, f"Drift of the {what}"))
        sec.notes.append(_tested(s, what))
    if loss is not None:
        sec.notes.append(
            f"The model's {loss.metric} moved from {fmt(loss.reference_value)} to "
            f"{fmt(loss.current_value)} ({fmt(loss.total_change)}); '(labels)' carries the "
            "part that no feature's distribution explains: a change of the labels given the "
            "features.")
    elif ref.y is not None or inputs.y is not None:
        sec.notes.append("The model's loss is not decomposed: that needs the labels of both "
                         "data sets (y and y_reference; --target present in both files).")
    try:
        with capture_warnings(sec):
            before_after = _before_after(inputs, ref, order)
    except InvalidParameterError as exc:  # e.g. a feature without a value in one data set
        before_after = {}
        sec.warnings.append(f"Partial dependence before and after was not drawn: {exc}")
    if before_after:
        name = next(iter(before_after))
        before, after = before_after[name]
        group.figures.append(figure_from(_picture(name, before, after, inputs),
                                         f"Partial dependence of {name}, before and after"))
    sec.figure_groups.append(group)
    sec.data.update(prediction=moved, metric=loss, order=order, before_after=before_after,
                    reference_rows=ref.n_rows, rows=len(inputs.prediction))
    return sec


def _order(s) -> list:
    """The features (not the labels' player), largest |contribution| first."""
    names = [str(n) for n in s.feature_names]
    c = np.abs(np.asarray(s.contribution, dtype=float))
    return [names[j] for j in np.argsort(-c, kind="stable") if names[j] != "(labels)"]


def _story(s, ref, inputs) -> str:
    return (f"From the reference data ({ref.n_rows:,} rows) to this data "
            f"({len(inputs.prediction):,} rows) the mean {s.output} moved from "
            f"{fmt(s.reference_value)} to {fmt(s.current_value)} (by {fmt(s.total_change)}). "
            "ml.shift shares the change among the features: a Shapley decomposition over "
            "which features take their current distribution (a feature moved takes its value "
            "from a current row, the others keep a reference row's, the joint distribution "
            f"kept within each block), estimated on {s.n_pairs:,} random pairs of a reference "
            "and a current row, each walking one random order of the features. Each "
            "contribution has its standard error and Student's t test of 'no contribution', "
            "the p-values adjusted over the features by Holm's method; '(unexplained)' is "
            "the full data's change minus the contributions (the pairs' sampling error).")


def _tested(s, what) -> str:
    names = [str(n) for n in s.feature_names]
    hits = [names[j] for j in np.argsort(np.asarray(s.p_value), kind="stable")
            if s.p_value[j] < LEVEL]
    if not hits:
        return (f"No feature's contribution to the change of the {what} is significant at "
                f"{LEVEL:.0%} (Holm).")
    return (f"Contributions to the change of the {what} significant at {LEVEL:.0%} (Holm): "
            f"{', '.join(hits)}.")


def _table(s, what) -> Table:
    frame = s.to_frame()
    c = np.asarray(frame["contribution"], dtype=float)
    order = [j for j in np.argsort(-np.abs(c[:-1]), kind="stable")] + [len(c) - 1]
    rows = []
    for j in order:
        r = frame.iloc[j]
        lo, hi = r.contribution - Z95 * r["std"], r.contribution + Z95 * r["std"]
        rows.append([Cell(str(r.feature)), num_cell(r.contribution), num_cell(r["std"]),
                     Cell(f"{fmt(lo)} to {fmt(hi)}", "num"), num_cell(r.p_value, 3),
                     num_cell(r.p_value_unadjusted, 3)])
    return Table(f"Change of the {what} ({fmt(s.total_change)}), by feature, largest first",
                 ["feature", "contribution", "std. error", "95% interval", "p-value (Holm)",
                  "p-value"], rows)


def _before_after(inputs, ref, order) -> dict:
    """Partial dependence on the reference rows and on the current rows (one grid, PD_ROWS
    rows of each) of the most-moved features that have effects: name -> (before, after)."""
    names = {inputs.dataset.columns[j].name: j for j in inputs.features}
    chosen = [f for f in order if f in names][:inputs.max_features]
    if not chosen:
        return {}
    rng = np.random.default_rng(inputs.random_state)
    cur = take_rows(inputs.X, np.sort(rng.choice(len(inputs.prediction),
                                                 min(PD_ROWS, len(inputs.prediction)),
                                                 replace=False)))
    old = take_rows(ref.X, np.sort(rng.choice(ref.n_rows, min(PD_ROWS, ref.n_rows),
                                              replace=False)))
    grids = {f: inputs.grids.get(names[f], inputs.grid) for f in chosen}
    after = pdp(inputs.model, cur, chosen, grid=grids, target=inputs.target,
                progress=inputs.progress)
    # the reference's curves at the current curves' points
    grids = {f: list(after[f].grid) for f in chosen}
    before = pdp(inputs.model, old, chosen, grid=grids, target=inputs.target,
                 progress=inputs.progress)
    return {f: (before[f], after[f]) for f in chosen}


def _picture(name, before, after, inputs):
    from ...plot.change import plot_before_after

    ax = plot_before_after(before.grid, before.values, after.values,
                           categorical=before.kind == "categorical", xlabel=name,
                           ylabel=f"PD of {inputs.output_name}")
    ax.set_title(f"Partial dependence of {name}: reference rows and current rows")
    return ax.figure
