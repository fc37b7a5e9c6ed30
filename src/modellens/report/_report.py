"""``ml.report``: one self-contained HTML page explaining a model on a data set."""

from __future__ import annotations

import contextlib
import datetime
import platform
import time
from dataclasses import replace
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from .._config import config, resolve_options
from .._version import __version__
from .._warm import Warming
from .._validation import InvalidParameterError, is_integer
from ..typing import ArrayLike, DataLike, ModelLike
from ..data import as_pandas, as_pandas_series
from ._options import ReportOptions, options_from
from ..files import write_atomic

__all__ = ["Report", "report"]


class Report:
    """An explained model, from :func:`~modellens.report`: sections with their numbers and pictures, and the page.

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
    interactive : bool
        Whether :meth:`to_html` puts the explorer (feature, class and row
        selectors redrawing the charts in the browser) above the still pictures.

    Examples
    --------
    >>> import numpy as np, pandas as pd, modellens as ml
    >>> from sklearn.linear_model import LinearRegression
    >>> X = pd.DataFrame(np.random.default_rng(0).normal(size=(100, 2)), columns=["a", "b"])
    >>> model = LinearRegression().fit(X, X["a"] - X["b"])
    >>> rep = ml.report(model, X, sections=["effects"], progress=False)
    >>> rep
    Report(sections=['effects'])
    >>> list(rep.sections["effects"].data)[:2]
    ['pdp', 'ale']
    >>> rep.sections["effects"].data["ale"]["a"].method
    'ale'
    """

    def __init__(self, sections, settings, *, title="modellens report", subtitle="",
                 total_seconds=None, interactive=True):
        self.sections = {s.key: s for s in sections}
        self.settings = dict(settings)
        self.seconds = {s.key: s.seconds for s in sections}
        #: the whole build (inputs, predictions, every section built, shown or not): the
        #: total the command line prints
        self.total_seconds = total_seconds
        self.title = title
        self.subtitle = subtitle
        #: the page has the explorer (charts redrawn in the browser) above the still pictures
        self.interactive = bool(interactive)

    def __repr__(self):
        return f"Report(sections={list(self.sections)})"

    def footer(self) -> list:
        """(name, value) rows of the page's "What was run" table."""
        rows = [(name, _text(value)) for name, value in self.settings.items()]
        rows += [(f"time: {key}", f"{sec:.1f} s") for key, sec in self.seconds.items()]
        total = sum(self.seconds.values()) if self.total_seconds is None else self.total_seconds
        rows.append(("time: total", f"{total:.1f} s"))
        return rows

    def to_html(self) -> str:
        """The page: one HTML document with every figure embedded, no network needed.

        With ``interactive`` (the default of :func:`~modellens.report`), an
        "Explore" section on top redraws the effects, Shapley values, LIME
        weights, interactions and regions for the feature, class and row
        chosen, with plotly.js embedded in the page; the still pictures
        follow and are what prints.

        Returns
        -------
        str

        Examples
        --------
        >>> import numpy as np, pandas as pd, modellens as ml
        >>> from sklearn.linear_model import LinearRegression
        >>> X = pd.DataFrame(np.random.default_rng(0).normal(size=(100, 2)), columns=["a", "b"])
        >>> model = LinearRegression().fit(X, X["a"] - X["b"])
        >>> rep = ml.report(model, X, sections=["effects"], progress=False)
        >>> page = rep.to_html()
        >>> page.startswith("<!DOCTYPE html>"), "<img" in page, "http://" in page.split("<body")[0]
        (True, True, False)
        """
        from ._render import render_figures, render_page

        import matplotlib

        # the pictures are encoded here, all at once (in parallel processes where it pays),
        # under the settings they were drawn with
        with matplotlib.rc_context(_RC):
            render_figures([f for s in self.sections.values() for f in s.figures])
        explorer = None
        if self.interactive:
            from ._interactive import explorer_context

            explorer = explorer_context(self.sections)
        return render_page(title=self.title, subtitle=self.subtitle,
                           sections=list(self.sections.values()), footer=self.footer(),
                           version=__version__, explorer=explorer)

    def save(self, path: str | PathLike[str]) -> Path:
        """Write the page to a file (UTF-8), to open in any browser; returns the path.

        The page goes to a temporary file in the same folder, moved onto
        ``path`` once complete: a write that fails (a full disk, a size limit)
        leaves a file already at ``path`` as it was.

        Parameters
        ----------
        path : str or path-like
            The file to write, e.g. ``"report.html"``; not a folder.

        Returns
        -------
        Path

        Examples
        --------
        >>> import numpy as np, pandas as pd, modellens as ml
        >>> from sklearn.linear_model import LinearRegression
        >>> X = pd.DataFrame(np.random.default_rng(0).normal(size=(100, 2)), columns=["a", "b"])
        >>> model = LinearRegression().fit(X, X["a"] - X["b"])
        >>> rep = ml.report(model, X, sections=["effects"], progress=False)
        >>> path = rep.save("report.html")
        >>> path.name, path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
        ('report.html', True)
        """
        path = Path(path)
        if path.is_dir():
            raise InvalidParameterError(f"{str(path)!r} is a folder; give a file name such as "
                                        "report.html.")
        page = self.to_html().encode("utf-8")

        def write(name):
            with open(name, "wb") as fh:
                fh.write(page)
        # through a temporary file: a write that fails part-way leaves the old file whole
        return write_atomic(path, write)

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


def report(model: ModelLike, X: DataLike, y: ArrayLike | None = None, *,
           options: ReportOptions | None = None, **kwargs: Any) -> Report:
    """Explain a model on its data in one HTML page: data, quality, effects, interactions, attributions.

    The sections, in page order:

    - **data**: kind, range and missing values of every feature, and how much
      of it the other features explain (cross-validated R^2 of an additive
      model of the most related others; chance-adjusted balanced accuracy for
      categorical features; not judged below 100 rows), with a badge beside
      every feature whose PD evaluates many points off the data (see
      :func:`modellens.report._dependence.dependence`), and hints for text
      levels that look like dates or numbers;
    - **quality** (when ``y`` is given): R^2, MAE and RMSE for regression;
      accuracy, ROC AUC, Brier score and a calibration curve for classifiers,
      with the overall accuracy and the confusion matrix for more than two
      classes;
    - **changed** (with ``X_reference``): what moved the mean prediction (and,
      with ``y`` and ``y_reference``, the loss) from the reference data to
      ``X``: each feature's contribution (:func:`modellens.shift`) with its
      interval and Holm-adjusted test, the drift bar chart, and PD on both
      data sets of the features that moved it most;
    - **effects**: PD with ICE curves beside ALE with its 95% band for each
      feature on one vertical span, ordered by importance (the standard
      deviation of the PD curve, range / 4 for categorical features:
      Greenwell et al. 2018); effects below 1% of the predictions' spread are
      marked negligible, a feature the model ignores on every row is named;
    - **interaction**: the pair ranked first by a screen of every pair of
      numeric features (the count-weighted standard deviation of its
      second-order ALE), as a heatmap, with the runners-up;
    - **shapley**: importance bar, beeswarm, and a waterfall per chosen row
      (for a tree ensemble the bar, beeswarm and dependence charts show
      ``n_explain_tree`` rows: TreeSHAP is cheap);
    - **lime**: LIME for the same rows with each surrogate's fidelity.

    Texts (``X`` a list, 1-D array or pandas Series of strings) and a text
    classifier (a function of a list of strings, a ``transformers``
    text-classification pipeline, or a scikit-learn text pipeline) make a
    report of texts instead: **data** (texts, words per text, the model's
    classes), **texts** (each explained text highlighted by the Shapley values
    of its words, every class selectable), **words** (mean absolute Shapley value of
    each word over the texts, with its count and standard error),
    **faithfulness** (deletion and insertion curves and their areas) and
    **pairs** (the strongest word pairs, from the texts explained exactly).
    It explains ``rows`` and ``n_explain`` sampled texts within
    ``shapley_budget`` masked texts (see ``report._text_report``); ``y`` and
    the options of tables are refused.

    Explanations run on samples (stated on the page): effects and dependence
    on ``sample`` rows, Shapley values on ``n_explain`` rows (plus ``rows``)
    against ``n_background`` background rows; data summaries and quality use
    every row.  Every section is a function of the inputs drawn once (the
    samples, the encoded data, the predictions) and of the findings of the
    sections it names, so the page does not depend on the order it is built
    in.

    The methods' warnings are recorded on the page of the report whose
    thread raised them: reports built at once in threads keep their warnings
    apart.

    Parameters
    ----------
    model : estimator or callable
        As for :func:`modellens.pdp`.
    X : ndarray or DataFrame of shape (n, d), or texts
        The data, in the form the model was fit on (texts: see above) (the report reads no
        files: ``modellens report`` reads them).  A column none of whose
        values is among the levels the model's encoders know (for example a
        zip code fit as text, given as integers) raises an error.
    y : array-like of shape (n,), optional
        The target, for the quality section.  For a classifier its labels
        must be among ``model.classes_`` (cast to their type when they can
        be, ``"1"`` for ``1``); other labels raise an error naming both sets.
    options : ReportOptions, optional
        What to compute and show (default: ``ReportOptions()``): samples,
        grid, sections, target, seed, title, cluster, warm-up, interactivity.
    **kwargs
        Any field of :class:`~modellens.ReportOptions` (``features``,
        ``rows``, ``sample``, ``n_explain``, ``n_background``,
        ``n_explain_tree``, ``shapley_budget``, ``grid``, ``max_features``,
        ``target``, ``random_state``, ``sections``, ``progress``, ``title``,
        ``source``, ``holdout``, ``unused_columns``, ``log``, ``client``,
        ``n_workers``, ``warm_up``, ``interactive``, ``X_reference``,
        ``y_reference``), replacing that field of
        ``options``; documented there.

    Returns
    -------
    Report
        ``.save(path)`` writes the page; ``.sections[key].data`` holds the
        numbers and result objects each section shows; Jupyter shows the page
        inline.

    See Also
    --------
    Report : The result: sections, page, saving.
    ReportOptions : Every option, checked when it is made.
    pdp, ale, shapley, lime : The methods the sections run, for a closer look.

    Notes
    -----
    The same page from the command line: ``modellens report model.skops
    data.csv --target y``; ``modellens demo`` writes the report of a
    gradient-boosting model on scikit-learn's diabetes data.

    Examples
    --------
    A linear model of two of three features, with noise of standard deviation
    0.1 (so R^2 is about ``1 - 0.01 / 5``); two sections keep the example
    fast (the default runs all of them):

    >>> import numpy as np, pandas as pd, modellens as ml
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    >>> y = 2 * X["a"] - X["b"] + 0.1 * rng.normal(size=200)
    >>> model = LinearRegression().fit(X, y)
    >>> rep = ml.report(model, X, y, sections=["quality", "effects"], progress=False)
    >>> rep
    Report(sections=['quality', 'effects'])
    >>> round(rep.sections["quality"].data["metrics"]["r2"], 3)
    0.998
    >>> rep.save("report.html").name
    'report.html'
    """
    opts = options_from(options, kwargs)
    from ._text_report import is_text_data, text_report

    if is_text_data(X):  # texts and a text classifier: their own sections
        sections, settings, subtitle, total = text_report(model, X, y, opts, rc=_RC,
                                                          versions=_versions())
        return Report(sections, settings, title=opts.title or "modellens report",
                      subtitle=subtitle, total_seconds=total,
                      interactive=bool(opts.interactive))
    if opts.client is not None or opts.n_workers is not None:
        with config(client=opts.client, n_workers=opts.n_workers):
            return report(model, X, y, options=replace(opts, client=None, n_workers=None))
    X, y = as_pandas(X), as_pandas_series(y)  # polars / pyarrow: once, for every section
    # the model's own record of its inputs: a column it would read as all-unknown levels
    # stops here, partly unknown levels are said on the page
    input_notes = _input_notes(X, model)
    n_rows = X.shape[0] if hasattr(X, "shape") else len(X)  # type: ignore[arg-type]
    y = _check_labels(_check_y(y, n_rows), model)
    reference = _reference(X, y, opts, model)
    started = time.perf_counter()
    inputs = _inputs(model, X, y, opts, input_notes, _check_rows(opts.rows, n_rows))
    if reference is not None:  # the "What changed" section's data
        inputs = replace(inputs, reference=reference)
    predict_seconds = time.perf_counter() - started
    say = opts.log if callable(opts.log) else (lambda line: None)
    say(f"inputs and predictions: {predict_seconds:.1f} s")
    page, built = _build(inputs, opts, say)
    settings = _settings(model, inputs, opts, built, predict_seconds)
    n = inputs.dataset.n_rows
    subtitle = opts.source or (f"{type(model).__name__} on {n:,} rows x "
                               f"{inputs.dataset.n_features} features")
    total = time.perf_counter() - started
    say(f"total: {total:.1f} s")
    return Report(page, settings, title=opts.title or "modellens report", subtitle=subtitle,
                  total_seconds=total, interactive=bool(opts.interactive))


def _input_notes(X, model) -> list:
    from ..files import check_frame

    return check_frame(X, model)


def _reference(X, y, opts, model):
    """The reference data of the "What changed" section, checked against X (or None)."""
    if opts.X_reference is None:
        return None
    from ._sections.changed import check_reference

    ref = check_reference(X, y, opts.X_reference, opts.y_reference)
    # a classifier's labels: as y's (cast to the classes' type, every one known)
    return ref if ref.y is None else replace(ref, y=_check_labels(ref.y, model))


def _inputs(model, X, y, opts, input_notes, rows):
    """The frozen inputs every section reads (samples, encoded data, predictions)."""
    from ._inputs import build_inputs

    return build_inputs(
        model, X, y, features=opts.features, rows=rows, sample=opts.sample,
        n_explain=opts.n_explain, n_background=opts.n_background,
        n_explain_tree=opts.n_explain_tree, grid=opts.grid, max_features=opts.max_features,
        target=opts.target, random_state=int(opts.random_state),
        progress=resolve_options(progress=opts.progress).progress,
        shapley_budget=opts.shapley_budget, holdout=opts.holdout, input_notes=input_notes,
        unused_columns=[str(c) for c in opts.unused_columns or []])


def _build(inputs, opts, say) -> tuple:
    """Build the planned sections (those shown and those they read): ``(page, built)``."""
    from ._render import drawing
    from ._sections import SECTIONS

    progress = resolve_options(progress=opts.progress).progress
    by_key = {s.key: s for s in SECTIONS}
    shown = [s.key for s in SECTIONS if (opts.sections is None or s.key in opts.sections)
             and s.applies(inputs)]
    plan = _build_order(shown, by_key)
    warming, own, waiting = _warming(opts.warm_up, inputs, plan)
    if warming is not None:
        # the kernels compile meanwhile: the sections that need no kernels first (the page
        # order is fixed)
        plan = _last(plan, waiting, by_key)
    found: dict[str, Any] = {}
    built: dict[str, Any] = {}
    steps: Any = plan  # the plan, or a progress bar over it
    if progress:
        from .._progress import progress_bar

        steps = progress_bar(plan, desc="modellens report", unit="section")
    for key in steps:
        spec = by_key[key]
        if progress:
            steps.set_postfix_str(key)
        t0 = time.perf_counter()
        if warming is not None and key in waiting:
            warming.wait(_KERNELS[key])  # a method it does not compile: no wait
        view = MappingProxyType({k: found[k] for k in spec.needs + spec.uses if k in found})
        with drawing(_RC), (contextlib.nullcontext() if warming is None
                            else warming.leave_a_core()):
            section = spec.build(inputs, view)
        seconds = time.perf_counter() - t0
        say(f"{key}: {seconds:.1f} s")
        if section is None:
            continue
        section.seconds = seconds
        found[key] = MappingProxyType(section.data)
        built[key] = section
    if own and warming is not None:  # (after an error it ends once its kernels are cached)
        warming.stop()
    return [built[k] for k in shown if k in built], built


def _settings(model, inputs, opts, built, predict_seconds) -> dict:
    """The page's "What was run" table."""
    explained = len(inputs.explain_index)
    settings = {
        "modellens": __version__,
        "python / numpy / scikit-learn": _versions(),
        "date (UTC)": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "model": type(model).__name__,
        "explained output": inputs.output_name if not inputs.outputs else (
            f"every output ({', '.join(inputs.outputs)}), in the effects' pictures and the "
            f"explorer's class selector; {inputs.output_name} in the other sections' "
            "pictures"),
        "rows in the data": f"{inputs.dataset.n_rows:,}",
        "features": inputs.dataset.n_features,
        "sample for effects and dependence": f"{inputs.sample_index.size:,} rows",
        "rows explained by attributions": f"{explained:,}",
        "background rows": f"{inputs.background_index.size:,}",
        "PD grid points / ALE bins": opts.grid,
        "random_state (seed)": int(opts.random_state),
        "waterfall rows": list(inputs.rows) or "highest, lowest and median prediction",
        "rows held out from training": "yes (as stated)" if opts.holdout else "not stated",
        "time: predictions": f"{predict_seconds:.1f} s",
    }
    if inputs.reference is not None:
        settings["reference rows (What changed)"] = f"{inputs.reference.n_rows:,}"
    client = resolve_options().client
    if client is not None:
        settings["computed on"] = _cluster_line(client)
    if "shapley" in built and built["shapley"].data.get("scatter") is not None:
        settings["rows in the Shapley bar, beeswarm and dependence (TreeSHAP)"] = \
            f"{len(built['shapley'].data['scatter']):,}"
    if "shapley" in built:
        attr = built["shapley"].data["attributions"]
        orders = None if attr.sampling is None else attr.sampling.n_permutations
        settings["Shapley algorithm"] = attr.method + (
            f" ({orders} orders per row)" if orders is not None else "")
    if "lime" in built and "attributions" in built["lime"].data:
        fit = built["lime"].data["attributions"].surrogate
        settings["LIME"] = (f"{fit.num_samples:,} samples per row, "
                            f"{fit.discretize or 'no'} bins, kernel width "
                            f"{fit.kernel_width:.3g}, feature selection "
                            f"{fit.feature_selection}")
    return settings


def _cluster_line(client) -> str:
    """The page's line saying which cluster evaluated the model rows."""
    from .._config import import_distributed

    try:
        if isinstance(client, str):  # "current": the client Dask considers current
            client = import_distributed().default_client()
        threads = client.nthreads()
        where = (f"{len(threads)} worker{'s' * (len(threads) != 1)}, "
                 f"{sum(threads.values())} threads, scheduler {client.scheduler.address}")
    except Exception:  # noqa: BLE001 - the line still says it ran on a cluster
        where = "scheduler address unknown"
    return (f"a Dask cluster ({where}): the predictions and the model rows of the effects, "
            "interaction, Shapley and LIME sections were evaluated there; TreeSHAP and the "
            "data checks ran here")


#: One font size for every picture of the page; names from the data are text ("$" in a
#: column name must not start matplotlib's mathtext).
_RC: dict = {"text.parse_math": False, "font.size": 9, "axes.titlesize": 9,
             "axes.labelsize": 9, "xtick.labelsize": 9, "ytick.labelsize": 9,
             "legend.fontsize": 9, "figure.titlesize": 9}


#: The kernels a section runs (ml.warm_up's names): the design step's ("effects": the
#: order statistics of the PD grids and ALE bins, any model) in the effects section and
#: in the interaction section's pair ALE; the tree methods' where the model has trees.
_KERNELS = {"effects": ("effects",), "interaction": ("effects", "interactions"),
            "shapley": ("shapley",)}


def _warming(asked, inputs, plan):
    """The background warm-up the sections wait for, whether the report started it, and the
    sections that wait for it.

    ``asked`` is the user's ``warm_up``: a running :class:`~modellens.Warming`
    (started earlier, e.g. by the command line before it loaded the model),
    True (start one here for the kernels of the planned sections), or False.
    """
    from .._warm import warm_up
    from ._sections import shapley_options

    if asked is False:
        return None, False, []
    # exact Shapley values within the budget need no kernels: never wait for them
    needed = [k for k in _KERNELS if k in plan and not (
        k == "shapley" and shapley_options(inputs)["algorithm"] == "exact")]
    if not needed:
        return None, False, []
    if isinstance(asked, Warming):
        return asked, False, needed
    methods = list(dict.fromkeys(m for k in needed for m in _KERNELS[k]))
    return warm_up(methods, model=inputs.model, background=True), True, needed


def _last(plan, keys, by_key):
    """``plan`` with ``keys`` moved to its end (in their order) when no other section reads
    them: the sections that need no kernels run while the kernels compile."""
    read = {d for k in plan for d in by_key[k].needs + by_key[k].uses}
    movable = [k for k in plan if k in keys and k not in read]
    return [k for k in plan if k not in movable] + movable


def _build_order(shown, by_key) -> list:
    """Keys in an order where every section comes after those it names (needed ones added)."""
    order, seen = [], set()

    def visit(key, wanted):
        if key in seen:
            return
        seen.add(key)
        spec = by_key[key]
        for dep in spec.needs:
            visit(dep, True)
        for dep in spec.uses:
            if dep in shown:
                visit(dep, True)
        order.append(key)

    for key in shown:
        visit(key, True)
    return order


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
