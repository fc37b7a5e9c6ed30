"""The sections of the report: each a pure function of the inputs and earlier findings.

A section reads the frozen :class:`~modellens.report._inputs.Inputs` and the
findings (``Section.data``) of the sections it names in ``needs`` / ``uses``;
it calls the public methods (``ml.pdp``, ``ml.ale``, ``ml.shapley``,
``ml.lime``), draws with the renderers of :mod:`modellens.plot`, and keeps the
numbers it shows in ``Section.data``, so tests read them without parsing
pictures.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .._predict import predict
from .._validation import InvalidParameterError, ModellensWarning, NotATreeModelError
from ..attribution import lime, shapley
from ..effects.ale import ale
from ..effects.interactions import interactions
from ..effects.pdp import pdp
from ..effects.regions import regions
from ..effects.result import Effects
from ..models import ModelError
from ._dependence import WARN_SHARE, dependence
from ._inputs import TOP_LEVELS, take_rows
from ._render import figure_from
from ._warnings import quiet, recorded

__all__ = ["Section", "Table", "Cell", "FigureGroup", "SECTIONS", "SectionSpec", "screen_pairs",
           "take_rows"]


@dataclass(frozen=True)
class Cell:
    text: str
    cls: str = ""


@dataclass
class Table:
    caption: str
    columns: list
    rows: list  # of lists of Cell


@dataclass
class FigureGroup:
    title: str
    figures: list = field(default_factory=list)
    warnings: list = field(default_factory=list)


@dataclass
class Section:
    """One part of the page.

    Attributes
    ----------
    key : str
        Anchor on the page and key in ``Report.sections``.
    title : str
    data : dict
        The numbers and results the section shows (result objects included).
    notes, warnings : list of str
    tables : list of Table
    figure_groups : list of FigureGroup
    seconds : float
        Time the section took to compute and draw.
    """

    key: str
    title: str
    data: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    tables: list = field(default_factory=list)
    figure_groups: list = field(default_factory=list)
    seconds: float = float("nan")

    @property
    def figures(self) -> list:
        return [f for g in self.figure_groups for f in g.figures]


def _fmt(x, digits=4) -> str:
    if x is None:
        return ""
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if np.isnan(x):
        return "n/a"
    return f"{x:.{digits}g}"


def _num(x, digits=4) -> Cell:
    return Cell(_fmt(x, digits), "num")


# ------------------------------------------------------------------ helpers
def _capture(sec):
    """Record the methods' warnings on the section's page instead of the console.

    Each report records only the warnings of the thread building it (see
    :mod:`._warnings`), so reports built at once in threads keep theirs
    apart.  Warnings other than modellens' own are shown as they were raised.
    """
    import contextlib

    @contextlib.contextmanager
    def block():
        with recorded() as caught:
            try:
                yield
            finally:  # a method that fails part way keeps the warnings it gave first
                for w in caught:
                    text = str(w.message)
                    if _UNKNOWN_LEVELS.search(text):
                        continue  # the data section's input notes say it once
                    if text not in sec.warnings:
                        sec.warnings.append(text)
                _merge_missing(sec)
    return block()


#: The methods' warning about levels of the data the model never saw (the data section's
#: input notes, from ``check_frame``, say it for the whole report).
_UNKNOWN_LEVELS = re.compile(r"^column '.*' is categorical to the model, which knows the levels "
                             r".*, which the model reads as unknown levels")
_MISSING_ONE = re.compile(r"^(\d+) of (\d+) rows have a missing value in '(.+)'; they are left "
                          r"out of its (.+)\.$")
_MISSING_ALL = re.compile(r"^Rows with a missing value are left out of what needs the "
                          r"feature's value \((.+)\): (.+)\.$")
_MISSING_ITEM = re.compile(r"'(.+?)' \((\d+) of (\d+) rows\)")


def _merge_missing(sec):
    """One notice for the rows left out for missing values, not one box per feature and method."""
    found: dict = {}
    uses: list = []
    first = None
    kept = []
    for text in sec.warnings:
        one, merged = _MISSING_ONE.match(text), _MISSING_ALL.match(text)
        if not (one or merged):
            kept.append(text)
            continue
        first = len(kept) if first is None else first
        if one:
            items = [(one.group(3), one.group(1), one.group(2))]
            what = [one.group(4)]
        else:
            assert merged is not None  # one of the two matched
            items = _MISSING_ITEM.findall(merged.group(2))
            what = merged.group(1).split(", ")
        for name, k, n in items:
            found.setdefault(name, (int(k), int(n)))
        uses.extend(u for u in what if u not in uses)
    if first is None:
        return
    listed = ", ".join(f"'{name}' ({k:,} of {n:,} rows)" for name, (k, n) in found.items())
    kept.insert(first, f"Rows with a missing value are left out of what needs the feature's "
                       f"value ({', '.join(uses)}): {listed}.")
    sec.warnings[:] = kept


#: An effect whose PD and ALE both move less than this share of the predictions'
#: spread (their 1%-99% range) is marked negligible.
NEGLIGIBLE = 0.01
#: A numeric feature with at most this many distinct values is drawn as points.
FEW_VALUES = 10
#: Below this many rows the dependence between features is not judged.
MIN_ROWS = 100
#: LIME weights of a surrogate whose local R^2 is below this get a low-fidelity badge.
LOW_FIDELITY = 0.3


def _count(n: int, noun: str) -> str:
    """``"1 level"``, ``"2 levels"``, ``"1,024 levels"``."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _spread(prediction) -> float:
    lo, hi = np.quantile(prediction, [0.01, 0.99])
    return float(hi - lo)


# ---------------------------------------------------------------------- data
def data_section(inputs, found) -> Section:
    """Kinds, ranges and missing values of every feature, and how each depends on the others."""
    from ._inputs import grid_values

    ds = inputs.dataset
    sec = Section("data", "The data")
    n, d = ds.values.shape
    sec.notes.append(f"{n:,} rows, {d} features. Dependence is estimated on "
                     f"{inputs.sample_dataset.n_rows:,} rows.")
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
        hint = ""
        if col.is_categorical:
            kind = "categorical"
            codes, counts = np.unique(observed, return_counts=True)
            top = np.argsort(-counts, kind="stable")[:5]
            # a level as long as a paragraph would push the table off the page
            labels = [str(col.levels[int(codes[i])]) for i in top]
            labels = [t if len(t) <= 60 else t[:59] + "\u2026" for t in labels]
            described = f"{_count(codes.size, 'level')}: " + ", ".join(labels) + \
                (", ..." if codes.size > 5 else "")
            hint = _level_hint(col.levels)
        elif col.is_boolean:
            kind, described = "boolean", f"{int((observed == 1).sum()):,} True"
        else:
            kind = "numeric" if distinct > FEW_VALUES else \
                ("binary" if distinct == 2 else "empty" if distinct == 0 else "constant"
                 if distinct == 1 else f"numeric, {distinct} values")
            described = (f"{_fmt(observed.min())} to {_fmt(observed.max())}, median "
                         f"{_fmt(np.median(observed))}") if observed.size else "all missing"
        entry = dep[j]
        warn = _off_data_flag(entry, col, distinct)
        if warn:
            flagged.append(col.name)
        features.append({"feature": col.name, "kind": kind, "dtype": str(col.dtype),
                         "missing": missing, "distinct": distinct,
                         "range": described, "dependence": entry["score"],
                         "dependence_score": entry["score_name"], "off_data": entry["off_data"],
                         "warning": warn, "hint": hint, "note": entry["note"]})
        score = _fmt(max(entry["score"], 0.0), 2) if np.isfinite(entry["score"]) else "n/a"
        if entry["note"]:
            score = entry["note"] if score == "n/a" else f"{score} ({entry['note']})"
        rows.append([Cell(col.name), Cell(kind), _num(missing),
                     Cell(f"{missing / max(n, 1):.1%}", "num"),
                     _num(distinct),
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
        "Explained by the others: the cross-validated R^2 of a gradient-boosting model "
        "predicting a numeric feature from all the others, shown from 0 (no better than the "
        "mean); for categorical and boolean features the chance-adjusted balanced accuracy "
        f"(0 = no better than guessing, 1 = determined). Below {MIN_ROWS} rows it is not "
        "judged; the largest rank correlation with another feature is shown instead. PD points "
        "off the data: the share of the (row, grid value) pairs partial dependence evaluates "
        "whose grid value lies outside the 1%-99% range of what the row's other features leave "
        "for this one (for a categorical feature: a level the other features make 10 times "
        "rarer than in the data), less the share of grid values in the feature's own 1% tails.")
    sec.data["features"] = features
    sec.data["off_data"] = {f["feature"]: f["warning"] for f in features}
    return sec


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


# ------------------------------------------------------------------- quality
def quality_section(inputs, found) -> Section:
    """R^2 / MAE / RMSE for regression; accuracy, AUC, calibration (and confusion) for classes."""
    import matplotlib.pyplot as plt
    from sklearn import metrics

    sec = Section("quality", "Model quality")
    if inputs.unscored:
        warnings.warn(inputs.unscored, ModellensWarning, stacklevel=2)
        sec.notes.append(inputs.unscored)
        sec.data.update(task=None, metrics={})
        return sec
    y = inputs.y
    pred = np.asarray(inputs.prediction)
    keep = ~_isnan(y)
    y, pred = y[keep], pred[keep]
    if inputs.holdout:
        sec.notes.append(f"On {keep.sum():,} held-out rows with a known target (as stated with "
                         "holdout): an estimate of the quality on new data.")
    else:
        sec.notes.append(f"On {keep.sum():,} rows with a known target. If these rows were used "
                         "for training, these numbers are optimistic; for held-out rows say so "
                         "with holdout=True (--holdout).")
    classes = getattr(inputs.model, "classes_", None)
    output = inputs.output_name
    if inputs.probability and classes is not None:
        classes = np.asarray(classes)
        label = inputs.explained_class
        positive = np.asarray(y == label, dtype=int)
        vs = "" if len(classes) == 2 else " (this class against the rest)"
        values = {"accuracy": float(np.mean((pred >= 0.5) == positive)),
                  "brier": float(np.mean((pred - positive) ** 2))}
        values["auc"] = float(metrics.roc_auc_score(positive, pred)) \
            if 0 < positive.sum() < positive.size else float("nan")
        names = {"accuracy": f"accuracy of {output} >= 0.5{vs}", "auc": f"ROC AUC{vs}",
                 "brier": "Brier score"}
        if len(classes) > 2:
            _multiclass(sec, inputs, keep, y, classes, values, names)
        from sklearn.calibration import calibration_curve

        if 0 < positive.sum() < positive.size:
            frac, mean = calibration_curve(positive, pred, n_bins=10, strategy="quantile")
            sec.data["calibration"] = {"mean_predicted": mean, "fraction_positive": frac}
            fig, ax = plt.subplots(figsize=(4.2, 3.6))
            ax.plot([0, 1], [0, 1], ls=":", color="grey", label="perfectly calibrated")
            ax.plot(mean, frac, marker="o", label="model")
            ax.set_xlabel(f"mean {output} in a decile of predictions")
            ax.set_ylabel(f"share with y = {label}")
            ax.legend(frameon=False)
            ax.set_title("Calibration")
            sec.figure_groups.append(FigureGroup("", [figure_from(fig, "Calibration curve")]))
        sec.data["task"] = "classification"
    else:
        try:
            y = np.asarray(y, dtype=float)
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"y holds values that are not numbers (such as {y[0]!r}) but the model's output "
                f"{output!r} is a number: pass the numeric target, or for a classifier one with "
                "predict_proba.") from None
        resid = y - pred
        values = {"r2": float(metrics.r2_score(y, pred)), "mae": float(np.mean(np.abs(resid))),
                  "rmse": float(np.sqrt(np.mean(resid ** 2)))}
        names = {"r2": "R^2", "mae": "mean absolute error", "rmse": "root mean squared error"}
        fig, ax = plt.subplots(figsize=(4.2, 3.6))
        show = np.random.default_rng(inputs.random_state).permutation(y.size)[:2000]
        ax.scatter(y[show], pred[show], s=6, alpha=0.5)
        lo, hi = float(min(y.min(), pred.min())), float(max(y.max(), pred.max()))
        ax.plot([lo, hi], [lo, hi], ls=":", color="grey")
        ax.set_xlabel("target")
        ax.set_ylabel(output)
        ax.set_title("Predicted against observed")
        sec.figure_groups.append(FigureGroup("", [figure_from(fig, "Predicted against observed")]))
        group, sec.data["residuals"] = _residual_figures(inputs, found, keep, resid, pred, show)
        sec.figure_groups.append(group)
        sec.data["task"] = "regression"
    sec.data["metrics"] = values
    sec.tables.insert(0, Table("", ["metric", "value"],
                               [[Cell(names[k]), _num(v)] for k, v in values.items()]))
    return sec


#: Features whose residual plots the quality section draws (the most important ones).
RESIDUAL_FEATURES = 3


def _residual_figures(inputs, found, keep, resid, pred, show) -> tuple:
    """Residuals against the prediction and against the most important features.

    A pattern (a trend, a funnel, a curve against a feature) is what the
    model misses; the features are those the effects section ranks first
    (else the first columns).  ``show`` subsamples the drawn points.
    Returns the figures and what they show.
    """
    import matplotlib.pyplot as plt

    ds = inputs.dataset
    effects = found.get("effects") or {}
    names = [f for f in effects.get("order", []) if f in ds.feature_names] or \
        [ds.columns[j].name for j in inputs.features]
    names = names[:RESIDUAL_FEATURES]
    group = FigureGroup("Residuals (target minus prediction)")
    panels = [("prediction", pred, None)] + \
        [(name, ds.values[keep, ds.index_of(name)], ds.columns[ds.index_of(name)])
         for name in names]
    for name, x, col in panels:
        fig, ax = plt.subplots(figsize=(4.2, 3.3))
        xs = np.asarray(x, dtype=float)[show]
        if col is not None and col.is_categorical:
            jitter = np.random.default_rng(inputs.random_state).uniform(-0.2, 0.2, xs.size)
            ax.scatter(xs + jitter, resid[show], s=6, alpha=0.5)
            present = np.unique(xs[~np.isnan(xs)]).astype(int)[:20]
            ax.set_xticks(present, [str(col.levels[k]) for k in present], rotation=45,
                          ha="right")
        else:
            ax.scatter(xs, resid[show], s=6, alpha=0.5)
        ax.axhline(0, color="grey", ls=":")
        ax.set_xlabel(inputs.output_name if name == "prediction" else name)
        ax.set_ylabel("residual")
        ax.set_title(f"Residuals against {name}")
        group.figures.append(figure_from(fig, f"Residuals against {name}"))
    return group, {"prediction": pred, "residual": resid, "features": names}


def _multiclass(sec, inputs, keep, y, classes, values, names):
    """Overall accuracy and the confusion matrix of the most probable class of each row."""
    from sklearn.metrics import confusion_matrix

    # the labels: the class of the highest probability (ml.predict of every class, the
    # first on ties, as scikit-learn's predict), on the rows with a target
    if inputs.all_predictions is not None:
        probability, labels = inputs.all_predictions[keep], list(inputs.output_labels)
    else:  # one class was explained: every class in one more call
        every = predict(inputs.model, take_rows(inputs.X, np.flatnonzero(keep)),
                        progress=False)
        probability = every.to_numpy(dtype=np.float64)
        labels = list(every.attrs["explained_class"])
    predicted = np.asarray(labels, dtype=np.asarray(classes).dtype)[
        np.argmax(probability, axis=1)]
    values["overall_accuracy"] = float(np.mean(predicted == y))
    names["overall_accuracy"] = (f"overall accuracy ({len(classes)} classes, most probable "
                                 "class)")
    matrix = confusion_matrix(y, predicted, labels=classes)
    sec.data["confusion"] = matrix
    if len(classes) <= 20:
        sec.tables.append(Table(
            "Confusion matrix (rows: true class, columns: predicted class)",
            ["true \\ predicted"] + [str(c) for c in classes],
            [[Cell(str(c))] + [_num(v) for v in row] for c, row in zip(classes, matrix)]))


def _isnan(y):
    try:
        return np.isnan(np.asarray(y, dtype=float))
    except (TypeError, ValueError):
        import pandas as pd

        return np.asarray(pd.isna(y))


# ------------------------------------------------------------------- effects
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
    with _capture(sec):
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
                            for e in _each(pd_effects[name])) for name in names}
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
        f"1%-99% range, {_fmt(spread, 3)}) is marked negligible.")
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
        size = max(_effect_size(p, a) for p, a in zip(
            _each(pd_effects[name]), _each(ale_effects.get(name), len(_each(pd_effects[name])))))
        is_zero = all(_is_zero(p, a) for p, a in zip(
            _each(pd_effects[name]), _each(ale_effects.get(name), len(_each(pd_effects[name])))))
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
        figures, spans[name] = _effect_figures(
            name, pd_drawn, ale_effect, inputs, other=others.get(name),
            discrete=(not col.is_categorical and ds.n_unique(j) <= FEW_VALUES),
            levels=many.get(name, 0) or (by_effect and ds.n_unique(j)),
            random_state=inputs.random_state, order=ale_order)
        if by_effect:
            level_order[name] = ale_order or _by_effect(_one(pd_effects[name], inputs))
        badge = " [no effect]" if is_zero else " [negligible]" if small else ""
        group = FigureGroup(f"{name} (importance {_fmt(importance[name], 3)}){badge}", figures)
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


def _each(effect, k=None) -> list:
    """The single-output effects of ``effect`` (itself when it has one output; ``k``
    Nones for a missing one)."""
    if effect is None:
        return [None] * (k or 1)
    outputs = getattr(effect, "outputs", None)
    if not outputs or len(outputs) < 2:
        return [effect]
    return [effect.for_output(i) for i in range(len(outputs))]


def _one(effect, inputs):
    """The output the single-output parts of the page explain."""
    return effect.for_output(inputs.output_position) if inputs.outputs else effect


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


def _effect_figures(name, pd_effect, ale_effect, inputs, *, discrete, levels, random_state,
                    other=None, order=None):
    """The PD and the ALE panel of one feature, as two figures on one vertical span.

    Returns the figures and the span.  A numeric panel's span holds its ICE
    curves; a panel of levels (PD points without curves) gets at least the
    span of its rows' predictions at those levels (the 1%-99% range of the
    ICE values), so a negligible effect is not zoomed to look like a real one.
    """
    import matplotlib.pyplot as plt

    fig_pd, ax_pd = plt.subplots(figsize=(4.8, 3.3))
    fig_ale, ax_ale = plt.subplots(figsize=(4.8, 3.3))
    least = 0.0
    several = len(getattr(pd_effect, "outputs", None) or ()) > 1
    if several:
        pd_effect.plot(ax=ax_pd)
    elif levels:
        _draw_many_levels(ax_pd, pd_effect, levels, inputs, other, order=order)
        if pd_effect.ice is not None:
            lo, hi = np.nanquantile(np.asarray(pd_effect.ice, dtype=float), [0.01, 0.99])
            least = float(hi - lo)
    elif discrete:
        _draw_points(ax_pd, pd_effect, ice=True, random_state=random_state)
    else:
        pd_effect.plot(ax=ax_pd, random_state=random_state)
    if ale_effect is None:
        ax_ale.axis("off")
        ax_ale.text(0.5, 0.5, "ALE not available", ha="center", va="center")
    elif len(getattr(ale_effect, "outputs", None) or ()) > 1:
        ale_effect.plot(ax=ax_ale)
    elif discrete:
        _draw_points(ax_ale, ale_effect, ice=False, random_state=random_state)
    else:
        ale_effect.plot(ax=ax_ale)
    span = _share_span(ax_pd, ax_ale, least=least) if ale_effect is not None else \
        _share_span(ax_pd, least=least)
    return [figure_from(fig_pd, f"PD and ICE of {name}"),
            figure_from(fig_ale, f"ALE of {name}")], span


def _share_span(*axes, least: float = 0.0) -> float:
    """Give the axes one vertical span, at least ``least`` (each keeps its own centre)."""
    lims = [ax.get_ylim() for ax in axes]
    span = max([hi - lo for lo, hi in lims] + [least])
    for ax, (lo, hi) in zip(axes, lims):
        mid = (lo + hi) / 2
        ax.set_ylim(mid - span / 2, mid + span / 2)
    return float(span)


def _draw_points(ax, effect, *, ice, random_state):
    """A few-valued numeric feature: the effect at its values, as points joined by steps."""
    x = np.asarray(effect.grid, dtype=float)
    v = np.asarray(effect.values, dtype=float)
    if ice and effect.ice is not None:
        rows = np.asarray(effect.ice, dtype=float)
        pick = np.random.default_rng(random_state).permutation(rows.shape[0])[:100]
        for r in rows[pick]:
            ax.plot(x, r, color="grey", alpha=0.15, lw=0.6, drawstyle="steps-mid")
    ax.plot(x, v, drawstyle="steps-mid", color="C0", lw=1)
    ax.plot(x, v, "o", color="C0", label=effect.method.upper())
    if effect.std is not None and not ice and np.shape(effect.std) == v.shape:
        ax.errorbar(x, v, yerr=1.96 * np.asarray(effect.std, dtype=float), fmt="none",
                    ecolor="C0", alpha=0.5)
    ax.set_xticks(x, [_fmt(t, 4) for t in x])
    ax.set_xlabel(str(effect.feature))
    ax.set_ylabel({"pdp": "partial dependence", "ale": "ALE"}.get(effect.method,
                                                                  effect.method))
    ax.set_title(f"{'PD' if effect.method == 'pdp' else 'ALE'} of {effect.feature}")


def _by_effect(effect) -> list:
    """The levels of a PD over levels, from the lowest partial dependence to the highest."""
    labels = [str(v) for v in np.asarray(effect.grid).tolist()]
    order = np.argsort(np.asarray(effect.values, dtype=float), kind="stable")
    return [labels[i] for i in order]


def _draw_many_levels(ax, effect, levels, inputs, other=None, order=None):
    """PD over the levels of an unordered categorical, in ``order`` (the ALE panel's) or in
    order of effect (the most frequent ``TOP_LEVELS`` of a many-level one, then its "other"
    group)."""
    labels = order or _by_effect(effect)
    at = {str(g): float(v) for g, v in zip(np.asarray(effect.grid).tolist(),
                                            np.asarray(effect.values, dtype=float))}
    v = np.array([at[label] for label in labels])
    ax.plot(np.arange(v.size), v, "o", color="C0")
    if other:
        # set apart: another marker and colour, its interval, its size in the label
        ax.axvline(v.size - 0.5, color="grey", lw=0.5, ls=":")
        ax.errorbar([v.size], [other["value"]], yerr=[1.96 * other["se"]], fmt="D",
                    color="C1", ecolor="C1", capsize=3)
        labels = labels + [f"other ({_count(other['levels'], 'level')})"]
    ax.set_xticks(np.arange(len(labels)), labels, rotation=60, ha="right")
    ax.set_xlabel(f"{effect.feature}: {v.size} most frequent of {levels:,} levels, by effect"
                  if levels > v.size else f"{effect.feature}: levels in the ALE panel's order"
                  if order else f"{effect.feature}: levels in order of effect")
    ax.set_ylabel("partial dependence")
    ax.set_title(f"PD of {effect.feature}")


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


# --------------------------------------------------------------- interaction
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


#: Most pairs whose second-order ALE a report of several outputs computes: each output's
#: best pairs in turn (the explained output's first), every output of each.
SCREEN_DRAWN_PAIRS_MAX = 12


def screen_pairs(inputs, candidates) -> tuple:
    """Rank the pairs of ``candidates`` by Friedman's H: ``(ranked, interactions)``.

    ``ranked`` lists ``(pair, h2_unnormalized, h2)``, the pairs with a
    meaningful share of interaction (``h2 >= MEANINGFUL_H2``) first, each
    group by the unnormalised statistic (the interaction's size on the
    prediction's scale), so a pair with a large share of a negligible joint
    effect does not win.  For a model of several outputs the statistics of
    every output come from one pass (``interactions`` holds them all) and
    ``ranked`` is the explained output's; :func:`rank_pairs` ranks another.
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
        inter = interactions(inputs.model, inputs.X_sample, features, sample=sample,
                             pairs=k if k < len(features) else None, method="brute",
                             **common)
    return rank_pairs(_one(inter, inputs)), inter


def rank_pairs(inter) -> list:
    """``(pair, h2_unnormalized, h2)`` of one output's statistics, in the screen's order."""
    table = inter.pairwise.dropna(subset=["h2", "h2_unnormalized"])
    ranked = sorted(((a, b), float(h2u), float(h2)) for a, b, h2u, h2 in zip(
        table["feature_1"], table["feature_2"], table["h2_unnormalized"].to_numpy(np.float64),
        table["h2"].to_numpy(np.float64)))
    ranked.sort(key=lambda t: (t[2] < MEANINGFUL_H2, -t[1]))
    return ranked


def _drawn_pairs(by_output, first) -> list:
    """The pairs given a heatmap: ``SCREEN_DRAWN_PAIRS`` of one output; of several, each
    output's best in turn (output ``first`` leading), at most ``SCREEN_DRAWN_PAIRS_MAX``."""
    if len(by_output) == 1:
        return [p for p, _, _ in by_output[0][:SCREEN_DRAWN_PAIRS]]
    turns = [first] + [k for k in range(len(by_output)) if k != first]
    drawn: list = []
    for place in range(SCREEN_DRAWN_PAIRS):
        for k in turns:
            if place < len(by_output[k]) and by_output[k][place][0] not in drawn \
                    and len(drawn) < SCREEN_DRAWN_PAIRS_MAX:
                drawn.append(by_output[k][place][0])
    return drawn


def interaction_section(inputs, found) -> Section | None:
    """The pair the H screen ranks first, as a second-order ALE heatmap, and the runners-up."""
    ds = inputs.sample_dataset
    usable = [ds.columns[j].name for j in inputs.features if ds.n_unique(j) > 1]
    order = found["effects"]["order"]
    candidates = [f for f in order if f in usable][:SCREEN_FEATURES]
    sec = Section("interaction", _titled("Strongest interaction", inputs))
    _say_every(sec, inputs, "The interaction screen and the heatmaps")
    bins = min(inputs.grid, 10)
    several = bool(inputs.outputs)
    with _capture(sec):
        ranked, every = screen_pairs(inputs, candidates)
    if not ranked:
        return None
    inter = _one(every, inputs)
    by_output = [rank_pairs(every.for_output(k)) for k in range(len(inputs.outputs))] \
        if several else [ranked]
    best, best_size, best_h2 = ranked[0]
    screened = len(inter.overall)
    how = ("every pair" if len(inter.pairwise) == screened * (screened - 1) // 2 else
           f"every pair among the {SCREEN_PAIR_FEATURES} features with the strongest overall "
           f"interaction")
    sec.notes.append(
        f"How the pair was chosen: Friedman's H statistic (ml.interactions, "
        f"{'read from the trees' if inter.method == 'tree' else 'by brute force'}) on "
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
    with _capture(sec):
        # the page's pair selector draws the first few pairs (of every output): one request
        # for all of them
        every_pair = dict(ale(inputs.model, inputs.X_sample,
                              _drawn_pairs(by_output, inputs.output_position), bins=bins,
                              progress=inputs.progress,
                              target=None if several else inputs.target))
    pair_effects = {p: _one(e, inputs) for p, e in every_pair.items()}
    effect = pair_effects[best]
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.6, 4.4))
    effect.plot(ax=ax)
    sec.figure_groups.append(FigureGroup(f"{best[0]} x {best[1]}",
                                         [figure_from(fig, f"second-order ALE of {best}")]))
    sec.tables.append(Table("Strongest pairs (the first is drawn)",
                            ["pair", "H unnormalised", "H\u00b2"],
                            [[Cell(f"{a} x {b}"), _num(size, 3), _num(h2, 3)]
                             for (a, b), size, h2 in ranked[:6]]))
    sec.data.update(pair=best, strength={p: size for p, size, _ in ranked}, ranked=ranked,
                    effect=effect, candidates=candidates, interactions=inter,
                    pair_effects=pair_effects,
                    every_output={"interactions": every, "ranked": by_output,
                                  "pair_effects": every_pair} if several else None)
    return sec


# -------------------------------------------------------------- regional effects
#: The most heterogeneous features (by their ALE's within-bin spread) given regions.
REGION_FEATURES = 3


def regions_section(inputs, found) -> Section | None:
    """Where effects differ: the most heterogeneous features' significant splits and curves."""
    # several outputs: the disagreement summed over them, as ml.regions splits for every
    # output together
    spread: dict[str, float] = {}
    for name, stacked in found["effects"]["ale"].items():
        for effect in _each(stacked):
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
    sec = Section("regions", _titled("Where effects differ", inputs))
    several = bool(inputs.outputs)
    if several:
        sec.notes.append(
            f"The regions serve every output of the {len(inputs.outputs)} together: a split is "
            "chosen, and tested, on the disagreement summed over the outputs (ml.regions with "
            f"no target), in one pass. The pictures below draw {inputs.output_name} "
            f"({_why_this(inputs)}); the explorer's class selector draws each output's curves "
            "in the same regions.")
    try:
        with _capture(sec):
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
        "the disagreement and a permutation test gives p <= 0.05; 'stable' is the share of "
        "bootstrap resamples that choose it again, 'held-out' its gain on rows that did not "
        "choose it.")
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
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5.6, 3.8))
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
                   else f"{r['split_feature']} <= {_fmt(r['threshold'])}"),
              _num(r["gain"], 2), _num(r["p_value"], 2), _num(r["stability"], 2),
              _num(r["heldout_gain"], 2)] for r in splits.to_dict("records")]))
    sec.data.update(regions=result, features=chosen, spread=spread)
    return sec


# -------------------------------------------------------------- attributions
def _titled(title, inputs) -> str:
    """A section's heading, naming the output it explains when the model has several."""
    return f"{title} ({inputs.output_name})" if inputs.outputs else title


def _why_this(inputs) -> str:
    return ("the class of highest mean predicted probability" if inputs.probability
            else "the first output")


def _say_every(sec, inputs, what) -> None:
    """A model of several outputs, a section that computes every one: which one its pictures
    show, and where the others are."""
    if not inputs.outputs:
        return
    sec.notes.append(f"{what} are computed for every output of the {len(inputs.outputs)} in "
                     f"one pass; the pictures below show {inputs.output_name} "
                     f"({_why_this(inputs)}), the explorer's class selector each of them; pass "
                     "target= (--class on the command line) to draw another here.")


def _chosen_rows(inputs):
    """Rows of the explained set drawn as waterfalls: the user's, else the data's high / low /
    median prediction (``inputs.picks``, explained first)."""
    if inputs.rows:
        return [(inputs.explain_index.index(r), f"row {r}") for r in inputs.rows]
    return [(inputs.explain_index.index(r), f"row {r}, {why}") for r, why in inputs.picks]


def shapley_section(inputs, found) -> Section:
    """Shapley importance bar, beeswarm and waterfalls of chosen rows."""
    sec = Section("shapley", _titled("Shapley values", inputs))
    _say_every(sec, inputs, "Shapley values")
    several = bool(inputs.outputs)
    # a model of several outputs: every output from the same model rows (or tree walk); the
    # section draws the explained one, the numbers of target=it
    common = dict(background=inputs.X_background, random_state=inputs.random_state,
                  progress=inputs.progress, target=None if several else inputs.target)
    scatter = None
    options = shapley_options(inputs)
    with _capture(sec):
        if options["algorithm"] != "exact":
            scatter = _tree_shapley(sec, inputs, common)
        if scatter is not None:
            # the explained rows lead the scatter rows: their values, row for row
            explained = scatter[np.arange(len(inputs.explain_index))]
        else:
            explained = shapley(inputs.model, inputs.X_explain, **options, **common)
    every = explained if several else None
    attr = explained.for_output(inputs.output_position) if several else explained
    # the bar, beeswarm and dependence charts: every row TreeSHAP explained
    cloud = attr if scatter is None else (
        scatter.for_output(inputs.output_position) if several else scatter)
    rows = _chosen_rows(inputs)
    n_rows, n_named = len(attr), len(rows)
    sec.notes.append(
        f"{_method_name(attr.method)} Shapley values of {n_rows:,} rows ({n_named} drawn as "
        f"waterfalls below and {n_rows - n_named:,} sampled) against a background of "
        f"{inputs.background_index.size:,} rows (interventional: absent features take the "
        "background's values). Each row's values add up to its prediction minus the mean "
        f"prediction over the background, on the scale of {attr.output}."
        + ("" if len(cloud) == n_rows else
           f" TreeSHAP costs little per row, so the importance bar, the beeswarm and the "
           f"dependence charts show {len(cloud):,} rows: these and {len(cloud) - n_rows:,} more "
           "of the sampled rows."))
    importance = dict(zip(cloud.feature_names, cloud.mean_abs()))
    effects = found.get("effects")
    if effects:
        pd_top = [f for f in effects["order"] if f in importance][:3]
        shap_top = sorted(importance, key=lambda f: -importance[f])[:3]
        if pd_top != shap_top:
            sec.notes.append(
                f"The rankings differ (PD: {', '.join(pd_top)}; Shapley: "
                f"{', '.join(shap_top)}): PD importance is the spread of the average curve, "
                "mean |Shapley value| the size of each row's share, which also counts "
                "interactions and effects that cancel out on average.")
    sec.figure_groups.append(FigureGroup("Importance and distribution", [
        figure_from(cloud.plot.bar().figure, "mean |Shapley value| per feature"),
        figure_from(cloud.plot.beeswarm(random_state=inputs.random_state).figure,
                    "Shapley values of every explained row")]))
    # a column of at most one value has no curve to draw
    ds = inputs.dataset
    top = [f for f in sorted(importance, key=lambda f: -importance[f])
           if ds.n_unique(ds.index_of(f)) >= 2][:DEPENDENCE_FEATURES]
    sec.figure_groups.append(FigureGroup("Dependence of the most important features", [
        figure_from(cloud.plot.dependence(name, random_state=inputs.random_state).figure,
                    f"Shapley values of {name} against its value") for name in top]))
    positions = [inputs.explain_index[i] for i, _ in rows]
    # ceteris paribus: each drawn row's own ICE curves, the other features held at its values
    profiles = _shared_profiles(inputs, effects, positions, top)
    if profiles is None:
        with _capture(sec):
            profiles = pdp(inputs.model, take_rows(inputs.X, positions), top, ice=True,
                           grid={name: inputs.grids.get(inputs.dataset.index_of(name),
                                                        inputs.grid) for name in top},
                           progress=inputs.progress, target=inputs.target)
    group = FigureGroup("Rows: waterfall, and the row's own curves (ceteris paribus)")
    for k, (i, why) in enumerate(rows):
        group.figures.append(_waterfall(attr, i, inputs.explain_index[i], why))
        group.figures.append(_ceteris_paribus(profiles, k, positions[k], why))
    sec.figure_groups.append(group)
    sec.data.update(attributions=attr, rows=positions,
                    explained_rows=list(inputs.explain_index),
                    background_rows=inputs.background_index, importance=importance,
                    dependence_features=top, ceteris_paribus=profiles, every_output=every,
                    scatter=scatter,
                    scatter_rows=list(inputs.scatter_index) if scatter is not None else None)
    return sec


def _tree_shapley(sec, inputs, common):
    """TreeSHAP of the scatter rows (the explained ones first), of every output of a model of
    several; None, with the reason on the page, when it does not apply or explains another
    scale than the page's.

    The explained rows are asked first: a model whose trees answer on another scale (a
    boosted classifier's log-odds) costs their TreeSHAP only, not the scatter rows'.
    """
    try:
        scatter = shapley(inputs.model, inputs.X_explain, algorithm="tree", **common)
    except NotATreeModelError as exc:
        if exc.reason is not None:  # trees it cannot read: say why
            sec.notes.append(f"TreeSHAP does not apply to this model ({exc.reason}); the "
                             "values below come from the model-agnostic algorithm named next.")
        return None
    except ModelError as exc:
        sec.notes.append(f"TreeSHAP does not apply to this model ({exc}); the values below "
                         "come from the model-agnostic algorithm named next.")
        return None
    given = [str(o) for o in scatter.outputs] if scatter.outputs else [str(scatter.output)]
    if given != (list(inputs.outputs) or [inputs.output_name]):
        # the trees add up to another scale (a boosted classifier's log-odds): one page,
        # one scale
        sec.notes.append(f"TreeSHAP would explain the trees' {scatter.output}; the values "
                         f"below explain {inputs.output_name}, like every section of this "
                         "page.")
        return None
    if len(inputs.scatter_index) > len(inputs.explain_index):
        # each row's values are its own: the explained rows' again, and the others
        scatter = shapley(inputs.model, take_rows(inputs.X, inputs.scatter_index),
                          algorithm="tree", **common)
    return scatter


#: Features with a Shapley dependence plot and a ceteris-paribus curve per drawn row.
DEPENDENCE_FEATURES = 3


def _shared_profiles(inputs, effects, positions, top):
    """The drawn rows' ICE curves of the ``top`` features, read from the effects section.

    Its partial dependence already evaluated the model at every sampled row
    and grid point; when the sample holds the drawn rows and the features
    have their grids there, those rows of its ICE curves are the ceteris
    paribus profiles, and no model row is evaluated twice.  None otherwise
    (the section then runs PD on the drawn rows).
    """
    if not effects:
        return None
    at = {int(p): k for k, p in enumerate(inputs.sample_index)}
    if any(int(p) not in at for p in positions):
        return None
    take = [at[int(p)] for p in positions]
    shared = {}
    for name in top:
        effect = effects["pdp"].get(name)
        if effect is None or effect.ice is None or \
                inputs.dataset.index_of(name) not in inputs.grids:
            return None
        one = _one(effect, inputs)
        ice = np.asarray(one.ice)[take]
        values = one.feature_values
        if values is not None and len(values) == len(at):
            values = np.asarray(values)[take]
        shared[name] = replace(one, values=ice.mean(axis=0), ice=ice, feature_values=values,
                               ice_rows=None)
    return Effects(list(shared.values()))


def _ceteris_paribus(profiles, k, position, why):
    """Row ``k``'s ICE curves of the top features: the prediction as one feature moves."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(profiles), figsize=(2.6 * len(profiles), 2.8),
                             squeeze=False, sharey=True)
    for ax, effect in zip(axes[0], profiles.values()):
        curve = np.asarray(effect.ice, dtype=float)[k]
        grid = np.asarray(effect.grid)
        if effect.kind == "categorical":
            ax.plot(np.arange(grid.size), curve, "o")
            ax.set_xticks(np.arange(grid.size), [str(g) for g in grid], rotation=45,
                          ha="right", fontsize=7)
        else:
            ax.plot(grid.astype(float), curve)
        ax.set_xlabel(str(effect.feature))
    axes[0][0].set_ylabel(str(next(iter(profiles.values())).output))
    fig.suptitle(f"row {position}: its prediction as one feature moves", fontsize=9)
    return figure_from(fig, f"Ceteris paribus of row {position}: {why}")


def _reason(exc) -> str:
    """The reason an API error gives, without its advice on arguments (a page has none)."""
    text = str(exc)
    if "cannot explain this request: " in text:
        text = text.split("cannot explain this request: ", 1)[1]
    # the first sentence: the list of supported models and the fixes would bury it
    return text.split(". ")[0].rstrip(".")


def _waterfall(attr, i, position, why):
    """Row ``i`` of ``attr`` as a waterfall titled with its position in the user's data."""
    import re

    ax = attr.plot.waterfall(i)
    ax.set_title(re.sub(r"^row \d+", f"row {position}", ax.get_title()))
    return figure_from(ax.figure, f"{attr.method} waterfall: {why}", caption=why)


def shapley_options(inputs) -> dict:
    """Exact Shapley values when they fit the budget of model rows, else antithetic sampling.

    Exact enumeration costs ``rows * 2**d * background`` model rows and
    permutation sampling about ``rows * n_permutations * d * background``; the
    number of orders is chosen to fill ``inputs.shapley_budget`` (at least 10,
    so that every value has a standard error).  Exact values within the budget
    are also taken for tree models: they equal interventional TreeSHAP and
    need no compiled kernels.
    """
    from ..attribution.shapley import MAX_EXACT_FEATURES

    d = inputs.dataset.n_features
    per_row = len(inputs.explain_index) * inputs.background_index.size
    if d <= MAX_EXACT_FEATURES and per_row * 2 ** d <= inputs.shapley_budget:
        return {"algorithm": "exact"}
    n_perm = int(np.clip(inputs.shapley_budget // max(per_row * d, 1), 10, 100))
    return {"algorithm": "permutation", "n_permutations": n_perm + n_perm % 2}


def _method_name(method: str) -> str:
    return {"shapley-exact": "Exact", "shapley-permutation": "Permutation-sampled",
            "shapley-kernel": "KernelSHAP", "shapley-tree": "TreeSHAP"}.get(method, method)


def lime_section(inputs, found) -> Section:
    """LIME for the rows of the Shapley waterfalls, with each surrogate's fidelity."""
    sec = Section("lime", _titled("LIME", inputs))
    _say_every(sec, inputs, "LIME weights")
    rows = _chosen_rows(inputs)
    positions = [inputs.explain_index[i] for i, _ in rows]
    several = bool(inputs.outputs)
    try:
        with _capture(sec):
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
                            [[Cell(why), _num(s, 3), _num(h, 3),
                              Cell("low fidelity", "badge") if np.isfinite(s)
                              and s < LOW_FIDELITY else Cell("")]
                             for (_, why), s, h in zip(rows, score, held_out)]))
    sec.data.update(attributions=attr, rows=positions, score=score,
                    training_rows=inputs.sample_index, low_fidelity=low,
                    every_output=every if several else None)
    return sec


@dataclass(frozen=True)
class SectionSpec:
    """One section: ``build(inputs, found) -> Section | None``.

    ``needs``: keys of sections whose findings (their ``Section.data``) it
    reads; they are built first, even when not on the page.  ``uses``:
    findings it reads when those sections are built anyway.  ``when``:
    whether the section applies to these inputs.
    """

    key: str
    build: Callable[..., Any]
    needs: tuple = ()
    uses: tuple = ()
    when: Callable[..., Any] | None = None

    def applies(self, inputs) -> bool:
        return True if self.when is None else bool(self.when(inputs))


#: The sections in page order; a new method adds one entry here.
SECTIONS = [
    SectionSpec("data", data_section),
    SectionSpec("quality", quality_section, uses=("effects",),
                when=lambda inputs: inputs.y is not None),
    SectionSpec("effects", effects_section, uses=("data",),
                when=lambda inputs: bool(inputs.features)),
    SectionSpec("interaction", interaction_section, needs=("effects",),
                when=lambda inputs: len(inputs.features) > 1),
    SectionSpec("regions", regions_section, needs=("effects",),
                when=lambda inputs: len(inputs.features) > 1),
    SectionSpec("shapley", shapley_section, uses=("effects",)),
    SectionSpec("lime", lime_section),
]
