"""``ml.report``: one self-contained HTML page explaining a model on a data set."""

from __future__ import annotations

import datetime
import platform
import time
import warnings
from pathlib import Path

import numpy as np

from .._config import resolve_options
from .._validation import (InvalidParameterError, ModellensWarning, check_int,
                           check_random_state, is_integer)
from ..data import resolve_features

__all__ = ["Report", "report"]


class Report:
    """An explained model: sections with their numbers and pictures, and the page they make.

    Attributes
    ----------
    sections : dict
        Section key (``"data"``, ``"quality"``, ``"effects"``, ``"interaction"``,
        ``"shapley"``, ...) -> :class:`~modellens.report.Section`, in page order;
        ``section.data`` holds the numbers and result objects it shows.
    settings : dict
        What was run: options, sample sizes, seed.
    seconds : dict
        Time each section took.
    """

    def __init__(self, sections, settings, *, title="modellens report", subtitle=""):
        self.sections = {s.key: s for s in sections}
        self.settings = dict(settings)
        self.seconds = {s.key: s.seconds for s in sections}
        self.title = title
        self.subtitle = subtitle

    def __repr__(self):
        return f"Report(sections={list(self.sections)})"

    def footer(self) -> list:
        """(name, value) rows of the page's "What was run" table."""
        rows = [(name, _text(value)) for name, value in self.settings.items()]
        rows += [(f"time: {key}", f"{sec:.1f} s") for key, sec in self.seconds.items()]
        rows.append(("time: total", f"{sum(self.seconds.values()):.1f} s"))
        return rows

    def to_html(self) -> str:
        """The page: one HTML document with every figure embedded, no network needed."""
        from .. import __version__
        from ._render import render_page

        return render_page(title=self.title, subtitle=self.subtitle,
                           sections=list(self.sections.values()), footer=self.footer(),
                           version=__version__)

    def save(self, path) -> Path:
        """Write the page to ``path`` (UTF-8); returns the path."""
        path = Path(path)
        if path.is_dir():
            raise InvalidParameterError(f"{str(path)!r} is a folder; give a file name such as "
                                        "report.html.")
        path.write_text(self.to_html(), encoding="utf-8")
        return path

    def _repr_html_(self):
        # an iframe keeps the page's styles and script out of the notebook's own page
        import html

        return (f'<iframe srcdoc="{html.escape(self.to_html(), quote=True)}" '
                'style="width:100%;height:720px;border:1px solid #ccc" '
                'sandbox="allow-scripts" title="modellens report"></iframe>')


def _text(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) if value else "(none)"
    return str(value)


class _Context:
    """What the sections share: data, model, samples, and what earlier sections found."""

    off_data: dict
    importance_order: list | None = None


def report(model, X, y=None, *, features=None, rows=None, sample=2000, n_explain=50,
           n_background=50, shapley_budget=300_000, grid=20, max_features=12, target=None,
           random_state=0, sections=None, progress=None, title=None, source=None) -> Report:
    """Explain ``model`` on ``X`` in one report: data, quality, effects, interaction, attributions.

    The sections, in page order:

    - **data**: kind, range and missing values of every feature, and how much
      of it the other features explain (cross-validated R^2 of a
      gradient-boosting model; chance-adjusted balanced accuracy for
      categorical features), with a warning beside every feature whose PD
      evaluates many points off the data (see
      :func:`modellens.report._dependence.dependence`);
    - **quality** (when ``y`` is given): R^2, MAE and RMSE for regression;
      accuracy, ROC AUC, Brier score and a calibration curve for classifiers;
    - **effects**: PD with ICE curves beside ALE with its 95% band for each
      feature, ordered by importance (the standard deviation of the PD curve,
      range / 4 for categorical features: Greenwell et al. 2018);
    - **interaction**: the pair, among the four most important numeric
      features, whose second-order ALE varies most (count-weighted standard
      deviation over the cells), as a heatmap;
    - **shapley**: importance bar, beeswarm, and a waterfall per chosen row;
    - **lime**: LIME for the same rows with each surrogate's fidelity, when
      this version of modellens has ``ml.lime``.

    Explanations run on samples (stated on the page): effects and dependence
    on ``sample`` rows, Shapley values on ``n_explain`` rows (plus ``rows``)
    against ``n_background`` background rows; data summaries and quality use
    every row.

    Parameters
    ----------
    model : estimator or callable
        As for :func:`modellens.pdp`.
    X : ndarray or DataFrame of shape (n, d)
    y : array-like of shape (n,), optional
        The target, for the quality section.
    features : list, optional
        Features of the effects sections (default: all).
    rows : list of int, optional
        Row positions in ``X`` drawn as waterfalls (default: the rows of
        ``X`` with the highest, lowest and median prediction), explained
        besides the ``n_explain`` sampled rows.
    sample, n_explain, n_background : int
        Sample sizes (see above); each is capped at ``n``.
    shapley_budget : int
        Model rows Shapley values may cost: exact values when
        ``rows * 2**d * background`` fits, else antithetic permutation
        sampling with as many orders as fit (at least 10).
    grid : int
        PD grid points and ALE bins per feature.
    max_features : int
        Effects drawn (the most important ones).
    target : label or int, optional
        The class explained for classifiers (see :func:`modellens.pdp`).
    random_state : int
        Seed of every sample; the same seed gives the same report.
    sections : list of str, optional
        Keys of the sections to build (default: all available).
    progress : bool, optional
        Progress bars for the sections and long model runs (default: the
        context's ``ml.config(progress=...)``).
    title, source : str, optional
        The page's title, and a sentence saying where data and model came
        from (printed under the title).

    Returns
    -------
    Report
    """
    import matplotlib

    from .. import __version__
    from ..engine import DataRows, evaluate
    from ..models import prepare
    from ._sections import SECTIONS, take_rows

    sample = check_int(sample, "sample", low=1, what="a number of rows")
    n_explain = check_int(n_explain, "n_explain", low=1, what="a number of rows")
    n_background = check_int(n_background, "n_background", low=1, what="a number of rows")
    grid = check_int(grid, "grid", low=2, what="a number of grid points")
    shapley_budget = check_int(shapley_budget, "shapley_budget", low=1,
                               what="a number of model rows")
    max_features = check_int(max_features, "max_features", low=1, what="a number of features")
    if not is_integer(random_state):
        raise InvalidParameterError(f"random_state must be an integer seed, got {random_state!r}.")
    known = [s.key for s in SECTIONS]
    if sections is not None:
        unknown = [s for s in sections if s not in known]
        if unknown:
            raise InvalidParameterError(f"unknown sections {unknown}; valid ones are {known}.")
    options = resolve_options(progress=progress)

    from ._files import check_frame

    ctx = _Context()
    # the model's own record of its inputs: a column it would read as all-unknown levels
    # stops here, partly unknown levels are said on the page
    ctx.input_notes = check_frame(X, model)
    ctx.model, ctx.X, ctx.target = model, X, target
    ctx.dataset, ctx.wrapped = prepare(model, X, target=target)
    n = ctx.dataset.n_rows
    if n < 2:
        raise InvalidParameterError(f"a report needs at least 2 rows of data, got {n}.")
    ctx.y = _check_labels(_check_y(y, n), model)
    ctx.features = [j for j in resolve_features(ctx.dataset, features, allow_pairs=False)] \
        if features is not None else list(range(ctx.dataset.n_features))
    ctx.rows = _check_rows(rows, n)
    ctx.grid, ctx.max_features, ctx.random_state = grid, max_features, int(random_state)
    ctx.progress = options.progress
    ctx.interaction_candidates = 4
    ctx.shapley_budget = shapley_budget
    ctx.off_data = {}

    rng = check_random_state(random_state)
    ctx.sample_index = np.sort(rng.choice(n, size=min(sample, n), replace=False))
    ctx.X_sample = take_rows(X, ctx.sample_index)
    ctx.sample_dataset = ctx.dataset if ctx.sample_index.size == n else \
        type(ctx.dataset)(ctx.dataset.values[ctx.sample_index], ctx.dataset.columns,
                          ctx.dataset.is_frame, ctx.dataset.column_labels)
    started = time.perf_counter()
    (seg,) = evaluate(ctx.wrapped, [DataRows(ctx.dataset.values)], options, desc="predictions")
    ctx.prediction = np.asarray(seg.result, dtype=float)
    predict_seconds = time.perf_counter() - started

    # the default waterfalls are the data's highest, lowest and median predictions (as the page
    # says), explained first like rows the user names
    ctx.picks = [] if ctx.rows else _extreme_rows(ctx.prediction)
    leading = list(ctx.rows) or [i for i, _ in ctx.picks]
    others = np.setdiff1d(ctx.sample_index, leading)
    drawn = np.sort(rng.choice(others, size=min(n_explain, others.size), replace=False))
    ctx.explain_index = leading + [int(i) for i in drawn]
    ctx.X_explain = take_rows(X, ctx.explain_index)
    ctx.background_index = np.sort(rng.choice(n, size=min(n_background, n), replace=False))
    ctx.X_background = take_rows(X, ctx.background_index)
    from ..effects._grid import feature_grid

    ctx.grids = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModellensWarning)  # PD says it again
        for j in ctx.features:
            try:
                ctx.grids[j] = feature_grid(ctx.sample_dataset, j, grid)[0]
            except InvalidParameterError:
                pass

    specs = [s for s in SECTIONS if (sections is None or s.key in sections)
             and s.available(ctx)]
    built = []
    steps = specs
    if ctx.progress:
        from tqdm.auto import tqdm

        steps = tqdm(specs, desc="modellens report", unit="section", leave=False)
    for spec in steps:
        if ctx.progress:
            steps.set_postfix_str(spec.key)
        t0 = time.perf_counter()
        with warnings.catch_warnings(), matplotlib.rc_context({"text.parse_math": False}):
            # the sections state their caveats on the page; repeated method warnings
            # on the samples would only bury the progress bars.  Names from the data are
            # text: "$" in a column name must not start matplotlib's mathtext
            warnings.simplefilter("ignore", ModellensWarning)
            section = spec.build(ctx)
        if section is None:
            continue
        section.seconds = time.perf_counter() - t0
        built.append(section)

    explained = len(ctx.explain_index)
    settings = {
        "modellens": __version__,
        "python / numpy / scikit-learn": _versions(),
        "date (UTC)": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "model": type(model).__name__,
        "explained output": ctx.wrapped.output_name,
        "rows in the data": f"{n:,}",
        "features": ctx.dataset.n_features,
        "sample for effects and dependence": f"{ctx.sample_index.size:,} rows",
        "rows explained by attributions": f"{explained:,}",
        "background rows": f"{ctx.background_index.size:,}",
        "PD grid points / ALE bins": grid,
        "random_state (seed)": int(random_state),
        "waterfall rows": list(ctx.rows) or "highest, lowest and median prediction",
        "time: predictions": f"{predict_seconds:.1f} s",
    }
    by_key = {s.key: s for s in built}
    if "shapley" in by_key:
        attr = by_key["shapley"].data["attributions"]
        settings["Shapley algorithm"] = attr.method + (
            f" ({attr.extra['n_permutations']} orders per row)"
            if "n_permutations" in attr.extra else "")
    if "lime" in by_key and "attributions" in by_key["lime"].data:
        lime_extra = by_key["lime"].data["attributions"].extra
        settings["LIME"] = (f"{lime_extra['num_samples']:,} samples per row, "
                            f"{lime_extra['discretize'] or 'no'} bins, kernel width "
                            f"{lime_extra['kernel_width']:.3g}, feature selection "
                            f"{lime_extra['feature_selection']}")
    subtitle = source or (f"{type(model).__name__} on {n:,} rows x "
                          f"{ctx.dataset.n_features} features")
    return Report(built, settings, title=title or "modellens report", subtitle=subtitle)


def _versions() -> str:
    import sklearn

    return f"{platform.python_version()} / {np.__version__} / {sklearn.__version__}"


def _check_y(y, n):
    if y is None:
        return None
    values = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
    if values.ndim != 1 or values.shape[0] != n:
        raise InvalidParameterError(f"y must have one value per row of X ({n}), got shape "
                                    f"{values.shape}.")
    return values


def _check_labels(y, model):
    """``y`` as the classifier's labels: cast to the dtype of ``classes_``, every label known.

    A target of ``"malignant"`` / ``"benign"`` against a model fit on 0 / 1 would
    score every row wrong without an error; it is refused, naming both sets.
    """
    classes = getattr(model, "classes_", None)
    if y is None or classes is None or not hasattr(model, "predict_proba"):
        return y
    import pandas as pd

    classes = np.asarray(classes)
    present = pd.isna(y)
    labels = pd.unique(pd.Series(y[~present]))
    if classes.dtype.kind in "biuf" and labels.dtype.kind not in "biuf":
        numbers = pd.to_numeric(pd.Series(labels), errors="coerce")
        if numbers.notna().all():
            y = np.where(present, np.nan, pd.to_numeric(pd.Series(y), errors="coerce"))
            labels = numbers.to_numpy()
    elif classes.dtype.kind in "OUS" and labels.dtype.kind in "biuf":
        text = [str(int(v)) if float(v).is_integer() else str(v) for v in labels]
        if set(text) & {str(c) for c in classes}:
            y = np.array([v if m else (str(int(v)) if float(v).is_integer() else str(v))
                          for v, m in zip(y, present)], dtype=object)
            labels = np.asarray(text, dtype=object)
    known = set(classes.tolist())
    stray = [v for v in labels.tolist() if v not in known]
    if stray:
        shown = sorted({str(v) for v in labels.tolist()})
        raise InvalidParameterError(
            f"the target's labels {shown[:10]}{' ...' if len(shown) > 10 else ''} are not the "
            f"model's classes {[str(c) for c in classes.tolist()]} ({len(stray)} label(s) "
            f"unknown, such as {stray[0]!r}): pass the target the model was fit on, coded "
            "the same way.")
    return y


def _extreme_rows(prediction) -> list:
    """``(position, why)`` of the rows with the highest, lowest and median prediction."""
    order = np.argsort(prediction, kind="stable")
    picks = [(int(order[-1]), "highest prediction"), (int(order[0]), "lowest prediction"),
             (int(order[(order.size - 1) // 2]), "median prediction")]
    out = []
    for i, why in picks:
        if i not in [j for j, _ in out]:
            out.append((i, why))
    return out


def _check_rows(rows, n):
    if rows is None:
        return []
    if is_integer(rows):
        rows = [rows]
    out = []
    for r in rows:
        if not is_integer(r) or not 0 <= int(r) < n:
            raise InvalidParameterError(f"rows must be row positions from 0 to {n - 1}, got "
                                        f"{r!r}.")
        if int(r) not in out:
            out.append(int(r))
    return out
