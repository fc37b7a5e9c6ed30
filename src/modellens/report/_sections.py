"""The sections of the report: each one function from the report's context to a Section.

A section reads result objects (``Effects``, ``Attributions``) and the
dataset's schema; it draws with the renderers of :mod:`modellens.plot` and
keeps the numbers it shows in ``Section.data``, so tests read them without
parsing pictures.  A section whose method is not available in this version of
modellens (``available`` false) is left out of the page.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from .._validation import InvalidParameterError, ModellensWarning
from ..models import ModelError
from ._dependence import WARN_SHARE, dependence
from ._render import figure_from

__all__ = ["Section", "Table", "Cell", "FigureGroup", "SECTIONS", "SectionSpec"]


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


# ---------------------------------------------------------------------- data
def data_section(ctx) -> Section:
    """Kinds, ranges and missing values of every feature, and how each depends on the others."""
    ds = ctx.dataset
    sec = Section("data", "The data")
    n, d = ds.values.shape
    sec.notes.append(f"{n:,} rows, {d} features. Dependence is estimated on "
                     f"{ctx.sample_dataset.n_rows:,} rows.")
    dep = dependence(ctx.sample_dataset, ctx.grids, random_state=ctx.random_state,
                     progress=ctx.progress)
    rows, features = [], []
    for j, col in enumerate(ds.columns):
        x = ds.values[:, j]
        missing = int(np.isnan(x).sum())
        observed = x[~np.isnan(x)]
        distinct = ds.n_unique(j)
        if col.is_categorical:
            kind = "categorical"
            codes, counts = np.unique(observed, return_counts=True)
            top = np.argsort(-counts, kind="stable")[:5]
            labels = [str(col.levels[int(codes[i])]) for i in top]
            described = f"{codes.size} levels: " + ", ".join(labels) + \
                (", ..." if codes.size > 5 else "")
        elif col.is_boolean:
            kind, described = "boolean", f"{int((observed == 1).sum()):,} True"
        else:
            kind = "numeric"
            described = (f"{_fmt(observed.min())} to {_fmt(observed.max())}, median "
                         f"{_fmt(np.median(observed))}") if observed.size else "all missing"
        entry = dep[j]
        warning = ""
        if entry["off_data"] >= WARN_SHARE:
            warning = (f"PD extrapolates: {entry['off_data']:.0%} of its points lie where the "
                       "data has none (the other features predict this one); read ALE instead.")
        features.append({"feature": col.name, "kind": kind, "dtype": str(col.dtype),
                         "missing": missing, "distinct": distinct,
                         "range": described, "dependence": entry["score"],
                         "dependence_score": entry["score_name"], "off_data": entry["off_data"],
                         "warning": warning})
        score = _fmt(entry["score"], 2) + (f" ({entry['note']})" if entry["note"] else "")
        rows.append([Cell(col.name), Cell(kind), _num(missing),
                     Cell(f"{missing / max(n, 1):.1%}", "num"),
                     _num(distinct),
                     Cell(described), Cell(score, "num"),
                     Cell("" if np.isnan(entry["off_data"]) else f"{entry['off_data']:.0%}",
                          "num"),
                     Cell(warning, "warn")])
    sec.tables.append(Table(
        "Features", ["feature", "kind", "missing", "missing %", "distinct", "values",
                     "explained by the others", "PD points off the data", "warning"], rows))
    sec.notes.append(
        "Explained by the others: the cross-validated R^2 of a gradient-boosting model "
        "predicting a numeric feature from all the others (for categorical and boolean "
        "features the chance-adjusted balanced accuracy: 0 = no better than guessing, 1 = "
        "determined). PD points off the data: the share of the (row, grid value) pairs partial "
        "dependence evaluates whose grid value lies outside the 1%-99% range of what the row's "
        "other features leave for this one (a level 10 times rarer than in the data), less the "
        "share of grid values in the feature's own 1% tails; from "
        f"{WARN_SHARE:.0%} a feature gets a warning.")
    sec.data["features"] = features
    ctx.off_data = {f["feature"]: f["warning"] for f in features}
    return sec


# ------------------------------------------------------------------- quality
def quality_section(ctx) -> Section:
    """R^2 / MAE / RMSE for regression; accuracy, AUC and calibration for classifiers."""
    import matplotlib.pyplot as plt
    from sklearn import metrics

    sec = Section("quality", "Model quality")
    y = ctx.y
    pred = ctx.prediction
    keep = ~_isnan(y)
    y, pred = y[keep], pred[keep]
    sec.notes.append(f"On {keep.sum():,} rows with a known target, as given: on the training data "
                     "these numbers are optimistic.")
    classes = getattr(ctx.model, "classes_", None)
    output = ctx.wrapped.output_name
    if output.startswith("P(y = ") and classes is not None:
        label = np.asarray(classes)[ctx.wrapped.class_index]
        positive = np.asarray(y == label, dtype=int)
        vs = "" if len(classes) == 2 else " (this class against the rest)"
        values = {"accuracy": float(np.mean((pred >= 0.5) == positive)),
                  "brier": float(np.mean((pred - positive) ** 2))}
        values["auc"] = float(metrics.roc_auc_score(positive, pred)) \
            if 0 < positive.sum() < positive.size else float("nan")
        names = {"accuracy": f"accuracy of {output} >= 0.5{vs}", "auc": f"ROC AUC{vs}",
                 "brier": "Brier score"}
        from sklearn.calibration import calibration_curve

        if 0 < positive.sum() < positive.size:
            frac, mean = calibration_curve(positive, pred, n_bins=10, strategy="quantile")
            sec.data["calibration"] = {"mean_predicted": mean, "fraction_positive": frac}
            fig, ax = plt.subplots(figsize=(4.2, 3.8))
            ax.plot([0, 1], [0, 1], ls=":", color="grey", label="perfectly calibrated")
            ax.plot(mean, frac, marker="o", label="model")
            ax.set_xlabel(f"mean {output} in a decile of predictions")
            ax.set_ylabel(f"share with y = {label}")
            ax.legend(fontsize=8, frameon=False)
            ax.set_title("Calibration", fontsize=10)
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
        fig, ax = plt.subplots(figsize=(4.2, 3.8))
        show = np.random.default_rng(ctx.random_state).permutation(y.size)[:2000]
        ax.scatter(y[show], pred[show], s=6, alpha=0.5)
        lo, hi = float(min(y.min(), pred.min())), float(max(y.max(), pred.max()))
        ax.plot([lo, hi], [lo, hi], ls=":", color="grey")
        ax.set_xlabel("target")
        ax.set_ylabel(output)
        ax.set_title("Predicted against observed", fontsize=10)
        sec.figure_groups.append(FigureGroup("", [figure_from(fig, "Predicted against observed")]))
        sec.data["task"] = "regression"
    sec.data["metrics"] = values
    sec.tables.append(Table("", ["metric", "value"],
                            [[Cell(names[k]), _num(v)] for k, v in values.items()]))
    return sec


def _isnan(y):
    try:
        return np.isnan(np.asarray(y, dtype=float))
    except (TypeError, ValueError):
        import pandas as pd

        return np.asarray(pd.isna(y))


# ------------------------------------------------------------------- effects
def effects_section(ctx) -> Section:
    """PD with ICE beside ALE for every feature, the most important first."""
    import matplotlib.pyplot as plt

    from .. import ale, pdp

    sec = Section("effects", "Global effects")
    names = [ctx.dataset.columns[j].name for j in ctx.features]
    opts = dict(progress=ctx.progress, target=ctx.target)
    pd_effects = pdp(ctx.model, ctx.X_sample, names, grid=ctx.grid, ice=True, **opts)
    ale_effects, failed = {}, {}
    try:
        ale_effects = dict(ale(ctx.model, ctx.X_sample, names, bins=ctx.grid, **opts))
    except InvalidParameterError:
        for name in names:  # find the features ALE refuses and keep the others
            try:
                ale_effects.update(ale(ctx.model, ctx.X_sample, [name], bins=ctx.grid, **opts))
            except InvalidParameterError as exc:
                failed[name] = str(exc)
    importance = {name: _pd_importance(pd_effects[name]) for name in names}
    order = sorted(names, key=lambda f: -np.nan_to_num(importance[f], nan=-1))
    shown = order[:ctx.max_features]
    ctx.importance_order = order
    sec.notes.append(
        f"Partial dependence (PD) with ICE curves and accumulated local effects (ALE) with their "
        f"95% confidence band, on {ctx.sample_dataset.n_rows:,} rows, {ctx.grid} grid points / "
        "bins. Features in order of importance: the standard deviation of the PD curve (range / 4 "
        "for categorical features; Greenwell, Boehmke and McCarthy 2018). PD averages the model "
        "over points that may lie off the data when features depend on each other; ALE uses "
        "only points next to the data.")
    if len(order) > len(shown):
        sec.notes.append(f"The {len(shown)} most important of {len(order)} features are drawn; "
                         "pass features= (--features) for others.")
    for name in shown:
        fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.3))
        pd_effects[name].plot(ax=axes[0], random_state=ctx.random_state)
        if name in ale_effects:
            ale_effects[name].plot(ax=axes[1])
        else:
            axes[1].axis("off")
            axes[1].text(0.5, 0.5, "ALE not available", ha="center", va="center")
        fig.tight_layout()
        group = FigureGroup(f"{name} (importance {_fmt(importance[name], 3)})",
                            [figure_from(fig, f"PD, ICE and ALE of {name}")])
        if ctx.off_data.get(name):
            group.warnings.append(ctx.off_data[name])
        if name in failed:
            group.warnings.append(f"ALE: {failed[name]}")
        sec.figure_groups.append(group)
    sec.data.update(pdp=pd_effects, ale=ale_effects, importance=importance, order=order,
                    shown=shown, ale_failed=failed)
    return sec


def _pd_importance(effect) -> float:
    values = np.asarray(effect.values, dtype=float)
    if values.size == 0 or not np.isfinite(values).any():
        return float("nan")
    if effect.kind == "categorical":
        return float((np.nanmax(values) - np.nanmin(values)) / 4)
    return float(np.nanstd(values, ddof=1)) if values.size > 1 else 0.0


# --------------------------------------------------------------- interaction
def interaction_section(ctx) -> Section | None:
    """Second-order ALE of the pair (of the most important numeric features) varying most."""
    from .. import ale

    numeric = [ctx.dataset.columns[j].name for j in ctx.features
               if not ctx.dataset.columns[j].is_categorical
               and ctx.dataset.n_unique(j) > 2]
    order = getattr(ctx, "importance_order", None) or numeric
    top = [f for f in order if f in numeric][:ctx.interaction_candidates]
    pairs = [(a, b) for i, a in enumerate(top) for b in top[i + 1:]]
    sec = Section("interaction", "Strongest interaction")
    if not pairs:
        return None
    bins = min(ctx.grid, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModellensWarning)
        effects = ale(ctx.model, ctx.X_sample, pairs, bins=bins, progress=ctx.progress,
                      target=ctx.target)
    strength = {}
    for pair in pairs:
        e = effects[pair]
        strength[pair] = _second_order_strength(e)
    best = max(pairs, key=lambda p: np.nan_to_num(strength[p], nan=-1))
    sec.notes.append(
        f"Second-order ALE (the pair's joint effect beyond the two features' own effects) of "
        f"every pair among the {len(top)} most important numeric features, {bins} bins per "
        "axis; the pair shown has the largest interaction strength, the count-weighted "
        "standard deviation of its second-order ALE over the cells. Hatched cells have no data.")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.6, 4.4))
    effects[best].plot(ax=ax)
    sec.figure_groups.append(FigureGroup(f"{best[0]} x {best[1]}",
                                         [figure_from(fig, f"second-order ALE of {best}")]))
    sec.tables.append(Table("Interaction strength of the candidate pairs",
                            ["pair", "strength"],
                            [[Cell(f"{a} x {b}"), _num(strength[(a, b)], 3)]
                             for a, b in sorted(pairs, key=lambda p: -np.nan_to_num(
                                 strength[p], nan=-1))]))
    sec.data.update(pair=best, strength=strength, effect=effects[best])
    return sec


def _second_order_strength(effect) -> float:
    """Count-weighted standard deviation of a second-order ALE surface over its cells."""
    v = np.asarray(effect.values, dtype=float)
    cells = (v[1:, 1:] + v[:-1, 1:] + v[1:, :-1] + v[:-1, :-1]) / 4
    counts = effect.bins.counts if effect.bins is not None else None
    w = np.asarray(counts, dtype=float) if counts is not None and np.shape(counts) == \
        cells.shape else np.ones_like(cells)
    ok = np.isfinite(cells) & (w > 0)
    if not ok.any():
        return float("nan")
    mean = np.average(cells[ok], weights=w[ok])
    return float(np.sqrt(np.average((cells[ok] - mean) ** 2, weights=w[ok])))


# -------------------------------------------------------------- attributions
def _chosen_rows(ctx):
    """Rows of the explained set drawn as waterfalls: the user's, else the data's high / low /
    median prediction (``ctx.picks``, explained first)."""
    if ctx.rows:
        return [(ctx.explain_index.index(r), f"row {r}") for r in ctx.rows]
    return [(ctx.explain_index.index(r), f"row {r}, {why}") for r, why in ctx.picks]


def shapley_section(ctx) -> Section:
    """Shapley importance bar, beeswarm and waterfalls of chosen rows."""
    from .. import shapley

    sec = Section("shapley", "Shapley values")
    common = dict(background=ctx.X_background, random_state=ctx.random_state,
                  progress=ctx.progress, target=ctx.target)
    attr = None
    if _tree_shap_available(ctx.model):
        try:
            attr = shapley(ctx.model, ctx.X_explain, algorithm="tree", **common)
        except (InvalidParameterError, ModelError) as exc:
            # the reason's first sentence: the list of supported models would bury it
            reason = str(exc).split(". Supported")[0].rstrip(".")
            sec.notes.append(f"TreeSHAP does not apply to this model ({reason}); the values "
                             "below come from the model-agnostic algorithm named next.")
    if attr is None:
        attr = shapley(ctx.model, ctx.X_explain, **_shapley_options(ctx), **common)
    rows = _chosen_rows(ctx)
    sec.notes.append(
        f"{_method_name(attr.method)} Shapley values of {len(attr):,} rows against a background "
        f"of {ctx.background_index.size:,} rows (interventional: absent features take the "
        "background's values). Each row's values add up to its prediction minus the mean "
        "prediction over the background.")
    sec.figure_groups.append(FigureGroup("Importance and distribution", [
        figure_from(attr.plot.bar().figure, "mean |Shapley value| per feature"),
        figure_from(attr.plot.beeswarm(random_state=ctx.random_state).figure,
                    "Shapley values of every explained row")]))
    group = FigureGroup("Rows")
    for i, why in rows:
        group.figures.append(_waterfall(attr, i, ctx.explain_index[i], why))
    sec.figure_groups.append(group)
    sec.data.update(attributions=attr, rows=[ctx.explain_index[i] for i, _ in rows],
                    explained_rows=ctx.explain_index, background_rows=ctx.background_index,
                    importance=dict(zip(attr.feature_names, attr.mean_abs())))
    return sec


def _waterfall(attr, i, position, why):
    """Row ``i`` of ``attr`` as a waterfall titled with its position in the user's data."""
    import re

    ax = attr.plot.waterfall(i)
    ax.set_title(re.sub(r"^row \d+", f"row {position}", ax.get_title()), fontsize=9)
    return figure_from(ax.figure, f"{attr.method} waterfall: {why}", caption=why)


def _tree_shap_available(model) -> bool:
    """True for a tree ensemble when this version of ``ml.shapley`` has ``algorithm="tree"``."""
    from ..attribution.shapley import ALGORITHMS
    from ..models import tree_ensemble_name

    return "tree" in ALGORITHMS and tree_ensemble_name(model) is not None


def _shapley_options(ctx) -> dict:
    """Exact Shapley values when they fit the budget of model rows, else antithetic sampling.

    Exact enumeration costs ``rows * 2**d * background`` model rows and
    permutation sampling about ``rows * n_permutations * d * background``; the
    number of orders is chosen to fill ``ctx.shapley_budget`` (at least 10, so
    that every value has a standard error).
    """
    from ..attribution.shapley import MAX_EXACT_FEATURES

    d = ctx.dataset.n_features
    per_row = len(ctx.explain_index) * ctx.background_index.size
    if d <= MAX_EXACT_FEATURES and per_row * 2 ** d <= ctx.shapley_budget:
        return {"algorithm": "exact"}
    n_perm = int(np.clip(ctx.shapley_budget // max(per_row * d, 1), 10, 100))
    return {"algorithm": "permutation", "n_permutations": n_perm + n_perm % 2}


def _method_name(method: str) -> str:
    return {"shapley-exact": "Exact", "shapley-permutation": "Permutation-sampled",
            "shapley-kernel": "KernelSHAP", "shapley-tree": "TreeSHAP"}.get(method, method)


def lime_section(ctx) -> Section:
    """LIME for the rows of the Shapley waterfalls, with each surrogate's fidelity."""
    import modellens

    sec = Section("lime", "LIME")
    rows = _chosen_rows(ctx)
    positions = [ctx.explain_index[i] for i, _ in rows]
    try:
        with warnings.catch_warnings(record=True) as caught:
            # the report silences method warnings on the console: LIME's go on the page
            warnings.simplefilter("always", ModellensWarning)
            attr = modellens.lime(ctx.model, take_rows(ctx.X, positions),
                                  training_data=ctx.X_sample, random_state=ctx.random_state,
                                  target=ctx.target)
        for w in caught:
            if issubclass(w.category, ModellensWarning) and str(w.message) not in sec.warnings:
                sec.warnings.append(str(w.message))
    except InvalidParameterError as exc:
        # e.g. missing values, which LIME's sampler cannot draw from: say why, show nothing
        sec.warnings.append(f"LIME was not run: {exc}")
        return sec
    group = FigureGroup("Rows")
    for k, (_, why) in enumerate(rows):
        ax = attr.plot.weights(k)
        ax.set_title(f"row {positions[k]}: {ax.get_title()}", fontsize=9)
        group.figures.append(figure_from(ax.figure, f"LIME weights: {why}", caption=why))
    sec.figure_groups.append(group)
    sec.notes.append(
        f"LIME (Ribeiro et al. 2016): for each row, {attr.extra.get('num_samples', 5000):,} "
        f"perturbed samples drawn from the statistics of the {len(ctx.sample_index):,} sampled "
        "rows, weighted by proximity, and a sparse linear surrogate fit to the model's "
        "answers. A weight is the surrogate's slope for its condition; read it only as far as "
        "the local R^2 shows the surrogate follows the model.")
    score = attr.score if attr.score is not None else np.full(len(rows), np.nan)
    held_out = attr.extra.get("score_holdout", np.full(len(rows), np.nan))
    sec.tables.append(Table("Fidelity of the local surrogates",
                            ["row", "local R^2", "held-out R^2"],
                            [[Cell(why), _num(s, 3), _num(h, 3)]
                             for (_, why), s, h in zip(rows, score, held_out)]))
    sec.data.update(attributions=attr, rows=positions, score=score,
                    training_rows=ctx.sample_index)
    return sec


def take_rows(X, positions):
    """Rows of ``X`` (DataFrame or array) at ``positions``, as the same kind of object."""
    positions = np.asarray(positions, dtype=np.intp)
    if hasattr(X, "iloc"):
        return X.iloc[positions]
    return np.asarray(X)[positions]


@dataclass(frozen=True)
class SectionSpec:
    key: str
    build: object
    available: object  # ctx -> bool


def _has(name):
    def check(ctx):
        import modellens

        return hasattr(modellens, name)
    return check


#: The sections in page order.  A section for a method this version of
#: modellens lacks is left out; a new method adds one entry here.
SECTIONS = [
    SectionSpec("data", data_section, lambda ctx: True),
    SectionSpec("quality", quality_section, lambda ctx: ctx.y is not None),
    SectionSpec("effects", effects_section, lambda ctx: bool(ctx.features)),
    SectionSpec("interaction", interaction_section, lambda ctx: len(ctx.features) > 1),
    SectionSpec("shapley", shapley_section, _has("shapley")),
    SectionSpec("lime", lime_section, _has("lime")),
]
