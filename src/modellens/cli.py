"""The ``modellens`` command line: ``modellens report`` and ``modellens demo``.

Every failure a user can cause (a missing column, an unreadable file, a model
that does not fit the data, an option out of range) ends as one line on
stderr and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import warnings
from contextlib import contextmanager, nullcontext
from functools import partial
from pathlib import Path

_EPILOG_REPORT = """\
examples:
  modellens report --data test.csv --target price --model model.skops
  modellens report --data test.parquet --target churned --model model.skops \\
      --features age income --rows 0 17 --sample 5000 --out churn.html

Safe model files (they cannot run code when loaded): skops files
(https://skops.readthedocs.io: skops.io.dump(model, "model.skops")) of
scikit-learn models, including tree ensembles, XGBoost and LightGBM models;
XGBoost's own .json / .ubj files (model.save_model("model.json")) and LightGBM's
text files (booster.save_model("model.txt")).  Pickle and joblib files can run
code: they load only with --trust-model-file, for files you made yourself.
Columns the model saw as text (its encoders' levels) are read from a CSV as text.

Texts: with a text classifier (a scikit-learn pipeline such as TfidfVectorizer +
LogisticRegression), --text-column COLUMN names the column of texts (found by
itself when the model's first step is a text vectorizer and the file has one
column of strings):
  modellens report --data reviews.csv --text-column review --model model.pkl \
      --trust-model-file --explain 20
The report highlights each explained text by the Shapley values of its words
(every class), ranks the words over the texts, and draws deletion / insertion
curves.  Budget: --explain texts (default 50), each exact while its 2^d - 2
coalitions fit (d its distinct words, at most 11 by default), else KernelSHAP
with 2 d + 2048 masked texts; 300,000 masked texts in all at most.
"""

_EPILOG_DEMO = """\
The bundled data: scikit-learn's diabetes data (442 patients, 10 features, one of
them categorical), shipped with scikit-learn; nothing is downloaded.
"""


class CLIError(Exception):
    """A mistake of the user, reported as one line."""


def _count(low: int, what: str):
    """An argparse type: an integer of at least ``low``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a whole number, got {text!r}")
        if value < low:
            raise argparse.ArgumentTypeError(f"{what} must be at least {low}, got {value}")
        return value
    return parse


def _path_checked(check):
    """``check(text)``, with an operating system's refusal of the name as argparse's error.

    A name the file system cannot hold (a component over its length limit)
    makes even ``Path.is_dir`` raise: said in one line before any work.
    """
    def checked(text: str) -> Path:
        try:
            return check(text)
        except OSError as exc:
            raise argparse.ArgumentTypeError(
                f"{text[:200]!r}{'...' if len(text) > 200 else ''} cannot be used: "
                f"{exc.strerror or exc}") from None
    checked.__name__ = check.__name__
    return checked


@_path_checked
def _out_folder(text: str) -> Path:
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is an existing file; --out names a folder")
    return path


@_path_checked
def _out_file(text: str) -> Path:
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder; --out names the HTML file to "
                                         "write, such as report.html")
    if not path.parent.exists() and str(path.parent) not in ("", "."):
        raise argparse.ArgumentTypeError(f"the folder of {text!r} does not exist")
    # a link is written through: the folder it points into must exist too (else the
    # report would be computed, then refused)
    where = Path(os.path.realpath(path)).parent
    if not where.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a link into {str(where)!r}, which "
                                         "does not exist")
    return path


@_path_checked
def _existing_file(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text!r}")
    return path


# --------------------------------------------------------------------- loading
def read_data(path: Path, model=None):
    """A DataFrame from a CSV or Parquet file, its columns read as ``model`` expects them
    (:func:`modellens.files.read_table`; checked and cast once the model's columns are
    picked)."""
    from .files import FileError, read_table

    try:
        return read_table(path, model)
    except FileError as exc:
        raise CLIError(str(exc)) from None


def load_model(path: Path, *, trust: bool = False):
    """A fitted model from a model file: :func:`modellens.load_model`, its refusal one line."""
    import modellens as ml
    from .files import FileError

    try:
        return ml.load_model(path, trust=trust)
    except FileError as exc:
        raise CLIError(str(exc)) from None


def _features_of(model, frame, target):
    """The columns the model takes, in its order, and the file's other columns."""
    from .files import model_feature_names

    names = model_feature_names(model)
    if names is None:
        return frame, []
    frame = _lightgbm_names(model, frame, names)
    missing = [n for n in names if n not in frame.columns]
    if missing:
        hint = f" ({target!r} is the target)" if target in missing else ""
        near = [(n, _near_name(n, frame.columns)) for n in missing]
        renames = ", ".join(f"{c!r} -> {n!r}" for n, c in near if c is not None)
        if renames:
            hint += (f"; the data has columns that differ from them only in spaces or case: "
                     f"rename {renames}")
        raise CLIError(f"the model was fit on columns the data lacks: {missing}{hint}.")
    return frame[names], [c for c in frame.columns if c not in names]


def _lightgbm_names(model, frame, names):
    """``frame`` with its columns under the names a LightGBM model stored for them.

    The rule is :func:`~modellens.models.lightgbm_names` ("mean radius" is
    fit as "mean_radius"), the one the tree methods read X's columns with.
    """
    from .files import lightgbm_names

    renamed = lightgbm_names(model, frame.columns, names)
    return frame if renamed == list(frame.columns) else frame.set_axis(renamed, axis=1)


# --------------------------------------------------------------------- commands
def _report(args) -> int:
    import modellens as ml

    from .files import same_file

    # before anything is read or written: the report must not replace its own inputs
    read = [p for p in (args.data, args.model, args.reference) if p is not None]
    clash = same_file(args.out, read)
    if clash is not None:
        which = ("--data" if clash is args.data else "--model" if clash is args.model
                 else "--reference")
        raise CLIError(f"--out {str(args.out)!r} is the {which} file {str(clash)!r}; writing "
                       "the report would destroy it: choose another file name.")
    model = load_model(args.model, trust=args.trust_model_file)
    # the kernels compile in the background while the data are read (the design step's for
    # any model, the tree methods' for a tree model; asked for: the command line is the
    # report's own program)
    warming = ml.warm_up(["effects", "interactions", "shapley"], model=model, background=True)
    try:
        return _report_of(args, model, warming)
    except BaseException:  # a refused input leaves no child compiling after the command
        if warming is not None:
            warming.stop()
        raise


def _report_of(args, model, warming) -> int:
    """``modellens report`` once the model is loaded and its kernels are warming."""
    import modellens as ml

    frame, rows, sampled = _read_sampled(args, model)
    if frame.shape[0] < 2 or frame.shape[1] < 1:
        raise CLIError(f"{str(args.data)!r} holds {frame.shape[0]} rows and {frame.shape[1]} "
                       "columns; a report needs at least 2 rows.")
    frame.columns = [str(c) for c in frame.columns]
    from types import SimpleNamespace

    from .cli_texts import report_texts, text_column

    io = SimpleNamespace(CLIError=CLIError, did_you_mean=_did_you_mean, say=_say,
                         progress=_progress, log=_log)
    column = text_column(args, model, frame, io)
    if column is not None:  # a text classifier on a column of texts
        return report_texts(args, model, frame, column, io)
    y = None
    if args.target is not None:
        if args.target not in frame.columns:
            raise CLIError(f"no column {args.target!r} in {str(args.data)!r}; its columns are "
                           f"{list(frame.columns)}.{_did_you_mean(args.target, frame.columns)}")
        y = frame[args.target]
        frame = frame.drop(columns=[args.target])
    X, unused = _features_of(model, frame, args.target)
    from .files import FileError, conform

    try:
        X = conform(X, model)
    except FileError as exc:
        raise CLIError(f"{args.data.name}: {exc}") from None
    for f in args.features or []:
        if f not in X.columns:
            raise CLIError(f"--features: no column {f!r} among the model's features "
                           f"{list(X.columns)}.{_did_you_mean(f, X.columns)}")
    X_ref, y_ref = _reference(args, model, X)
    target = _target_class(args, model)
    _say(f"modellens report: {type(model).__name__} on {len(X):,} rows x {X.shape[1]} features "
          f"of {args.data.name}{sampled}", flush=True)
    if unused:
        _say(f"modellens report: columns the model does not take: {', '.join(unused)}",
              flush=True)
    with _cluster(args) as client:
        options = ml.ReportOptions(
            features=args.features, rows=rows, sample=args.sample,
            n_explain=args.explain, grid=args.grid, target=target, random_state=args.seed,
            progress=_progress(), holdout=args.holdout, unused_columns=unused,
            log=_log("modellens report"), title=f"modellens report: {args.model.name}",
            source=f"{type(model).__name__} from {args.model.name}, on {len(X):,} rows x "
                   f"{X.shape[1]} features of {args.data.name}{sampled}",
            client=client, n_workers=args.workers, warm_up=warming or False,
            interactive=not args.static, X_reference=X_ref, y_reference=y_ref)
        rep = ml.report(model, X, y, options=options)
    path = rep.save(args.out)
    _say(f"modellens report: wrote {path.resolve()}")
    return 0


#: The most rows the report reads from a data file: a bigger file is read in chunks and a
#: uniform random sample of this many rows kept (every section samples far fewer).
MAX_ROWS = 200_000


def _read_sampled(args, model):
    """The --data file as a frame, --rows as positions in it, and what the page says of the
    sample: a file of more than --max-rows rows is read in chunks and a uniform random
    sample of --max-rows of them kept (its memory is the sample's, not the file's)."""
    from .files import FileError, sample_table

    cap = args.max_rows
    if cap == 1:
        raise CLIError("--max-rows must be 0 (every row) or at least 2: a report needs two "
                       "rows.")
    try:
        if not cap:
            frame = read_data(args.data, model)
            total = len(frame)
        else:
            frame, total = sample_table(args.data, model, max_rows=cap, keep=args.rows or (),
                                        random_state=args.seed)
    except FileError as exc:
        raise CLIError(str(exc)) from None
    for r in args.rows or []:
        if r >= total:
            raise CLIError(f"--rows: row {r} does not exist; the data has {total} rows "
                           f"(0 to {total - 1}).")
    if len(frame) == total:
        return frame.reset_index(drop=True), args.rows, ""
    rows = [int(frame.index.get_loc(r)) for r in args.rows] if args.rows else None
    note = (f" (a uniform random sample of {len(frame):,} of its {total:,} rows, read in "
            f"chunks: --max-rows {cap}; rows are numbered in the sample)")
    return frame.reset_index(drop=True), rows, note


def _reference(args, model, X):
    """The --reference file as the model's columns (X's), and its --target column if it has
    one: ``(None, None)`` without the option."""
    if args.reference is None:
        return None, None
    from .files import FileError, conform

    name = args.reference.name
    y = None
    try:
        frame = read_data(args.reference, model)
        frame.columns = [str(c) for c in frame.columns]
        if args.target is not None and args.target in frame.columns:
            y, frame = frame[args.target], frame.drop(columns=[args.target])
        X_ref, _ = _features_of(model, frame, args.target)
        X_ref = conform(X_ref, model)
    except (CLIError, FileError) as exc:
        raise CLIError(f"--reference {name}: {exc}") from None
    if sorted(X_ref.columns) != sorted(X.columns):  # a model that records no column names
        raise CLIError(f"--reference {name} has the columns {list(X_ref.columns)}, --data "
                       f"{list(X.columns)}: compare data files of the same columns.")
    return X_ref[list(X.columns)], y


def _near_name(name: str, columns) -> str | None:
    """The first of ``columns`` that differs from ``name`` only in spaces or case, or None.

    Headers such as ``"house  price"`` or ``"Price "`` look like the name typed in a
    terminal (and a one-line message of a name typed in the other case is hard to read):
    the errors say which column is meant.
    """
    def key(text):
        return " ".join(str(text).split()).casefold()

    return next((c for c in columns if key(c) == key(name)), None)


def _did_you_mean(name: str, columns) -> str:
    near = _near_name(name, columns)
    return "" if near is None else \
        f" Did you mean {near!r}? It differs only in spaces or case."


@contextmanager
def _cluster(args):
    """The Dask client of ``--scheduler`` (closed after), or None."""
    if args.scheduler is None:
        yield None
        return
    from ._config import import_distributed

    distributed = import_distributed()
    _say(f"modellens report: connecting to the Dask scheduler at {args.scheduler}", flush=True)
    try:
        # (waits distributed.comm.timeouts.connect, 30 s by default)
        client = distributed.Client(args.scheduler, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise CLIError(f"--scheduler: could not connect to {args.scheduler!r} ({exc}); start "
                       "one with 'dask scheduler' and workers with 'dask worker ADDRESS', or "
                       "use --workers N for a cluster on this machine.") from None
    with client:
        yield client


def _target_class(args, model):
    classes = getattr(model, "classes_", None)
    if args.target_class is None:
        # several classes: the report draws every one (and names the one its Shapley and
        # LIME sections explain)
        return None
    if classes is not None:
        for c in classes:  # labels come as text from the command line
            if str(c) == args.target_class:
                return c
        raise CLIError(f"--class {args.target_class!r} is not one of the model's classes "
                       f"{[str(c) for c in classes]}.")
    # a model without class labels (a raw booster): --class is the index of its output column
    try:
        return int(args.target_class)
    except ValueError:
        raise CLIError(f"--class {args.target_class!r}: this model records no class labels; "
                       "give the index of the output column to explain (0, 1, ...).") from None


def _progress():
    return True if getattr(sys.stderr, "isatty", lambda: False)() else None


def _log(prefix, *, total: bool = True):
    """One line per finished section on stdout (flushed: readable in a log file too).

    ``total=False`` leaves out the report's own total, for a command that
    prints one total of its own (the demo's, which includes fitting the model).
    """
    def say(line):
        if total or not line.startswith("total:"):
            _say(f"{prefix}: {line}", flush=True)
    return say


def _demo(args) -> int:
    import time

    import modellens as ml

    from .datasets import load_demo

    started = time.perf_counter()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    _say("modellens demo: gradient boosting on scikit-learn's diabetes data (442 patients, "
          "10 features)", flush=True)
    # the demo's model is a tree ensemble: its kernels compile in the background from the
    # start (a few seconds in a fresh environment; loaded from numba's cache later)
    warming = ml.warm_up(["effects", "interactions", "shapley"], background=True)
    with warming.leave_a_core() if warming is not None else nullcontext():
        model, X, y = load_demo()
    for r in args.rows or []:
        if r >= len(X):
            raise CLIError(f"--rows: row {r} does not exist; the data has {len(X)} rows "
                           f"(0 to {len(X) - 1}).")
    options = ml.ReportOptions(
        grid=args.grid, n_explain=args.explain, rows=args.rows, progress=_progress(),
        log=_log("modellens demo", total=False),
        title="modellens demo: diabetes progression",
        source="HistGradientBoostingRegressor fit on scikit-learn's diabetes data (442 "
               "patients, 10 features; target: disease progression after one year)",
        warm_up=warming or False, interactive=not args.static)
    rep = ml.report(model, X, y, options=options)
    path = rep.save(out / "report.html")
    _say(f"  wrote {path}")
    if args.png:
        for written in _export_pngs(model, X, out, grid=args.grid, rows=args.explain):
            _say(f"  wrote {written}")
    # one total: the report's sections are part of it (the rest loads the data, fits the
    # model and writes the files)
    _say(f"modellens demo: done in {time.perf_counter() - started:.1f} s (the report's "
         f"sections {rep.total_seconds:.1f} s of it); open {path}")
    return 0


def _export_pngs(model, X, out: Path, *, grid: int, rows: int) -> list:
    """The loose PNG and CSV files of the demo (``--png``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from . import ale, mplot, pdp, shapley

    pd_effects = pdp(model, X, ice=True, grid=grid)
    cice = pdp(model, X, features=["bmi", "s5"], ice=True, center=True, grid=grid)
    pair = pdp(model, X, features=[("bmi", "s5")], grid=min(grid, 15))
    m_effects = mplot(model, X, grid=grid)
    ale_effects = ale(model, X, bins=grid)
    ale_pair = ale(model, X, features=[("bmi", "s5")], bins=min(grid, 10))
    attributions = shapley(model, X.iloc[:rows], background=X.sample(30, random_state=0))

    from .files import write_atomic

    written = []
    for name, effects in (("pdp_ice", pd_effects), ("centered_ice", cice),
                          ("pdp_2d_bmi_s5", pair), ("mplot", m_effects), ("ale", ale_effects),
                          ("ale_2d_bmi_s5", ale_pair)):
        fig = effects.plot().flat[0].figure
        path = write_atomic(out / f"{name}.png", partial(_save_png, fig, dpi=110))
        plt.close(fig)
        written.append(path)
    for name, draw in (("shap_beeswarm", attributions.plot.beeswarm),
                       ("shap_waterfall_row0", lambda: attributions.plot.waterfall(0))):
        ax = draw()
        path = write_atomic(out / f"{name}.png",
                            partial(_save_png, ax.figure, dpi=110, bbox_inches="tight"))
        plt.close(ax.figure)
        written.append(path)
    table = pd.concat([e.to_frame() for e in (pd_effects, pair, m_effects, ale_effects, ale_pair)],
                      ignore_index=True)
    csv = write_atomic(out / "effects.csv", lambda tmp: table.to_csv(tmp, index=False))
    shap_csv = write_atomic(out / "shapley_values.csv",
                            lambda tmp: attributions.to_frame().to_csv(tmp, index=False))
    return written + [csv, shap_csv]


def _save_png(fig, name: str, **kwargs) -> None:
    fig.savefig(name, format="png", **kwargs)


# ------------------------------------------------------------------------ parser
class _Parser(argparse.ArgumentParser):
    """argparse with errors on one line, pointing at ``--help`` instead of the usage."""

    def error(self, message):
        self.exit(2, _clean(f"{self.prog}: error: {message} (see '{self.prog} --help')") + "\n")


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = _Parser(
        prog="modellens",
        description="Explain trained machine-learning models: one HTML report with the data, "
                    "the model's quality, feature effects (PD, ICE, ALE), the strongest "
                    "interaction and Shapley values.",
        epilog="Start with 'modellens demo', then 'modellens report --help'.")
    parser.add_argument("--version", action="version", version=f"modellens {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    rep = sub.add_parser(
        "report", help="explain your model on your data in one HTML file",
        description="Explain a fitted model on a data file and write one self-contained HTML "
                    "report (opens offline, prints, shares as one file).",
        epilog=_EPILOG_REPORT, formatter_class=argparse.RawDescriptionHelpFormatter)
    rep.add_argument("--data", required=True, type=_existing_file, metavar="FILE",
                     help="the data: a .csv or .parquet file, one row per example")
    rep.add_argument("--model", required=True, type=_existing_file, metavar="FILE",
                     help="the fitted model: a .skops file, an XGBoost .json / .ubj or "
                          "LightGBM .txt model file (or .pkl / .joblib with "
                          "--trust-model-file)")
    rep.add_argument("--text-column", metavar="COLUMN",
                     help="the column of texts, for a text classifier: a report of texts "
                          "(found by itself for a scikit-learn text pipeline and a file with "
                          "one column of strings)")
    rep.add_argument("--target", metavar="COLUMN",
                     help="the column holding the true outcome: left out of the features and "
                          "used for the model-quality section")
    rep.add_argument("--out", type=_out_file, default=Path("report.html"), metavar="FILE",
                     help="the HTML file to write (default: %(default)s)")
    rep.add_argument("--features", nargs="+", metavar="COLUMN",
                     help="features whose effects are drawn (default: all, most important "
                          "first)")
    rep.add_argument("--rows", nargs="+", type=_count(0, "--rows"), metavar="N",
                     help="row numbers (from 0) explained one by one (default: the rows with "
                          "the highest, lowest and median prediction)")
    rep.add_argument("--sample", type=_count(2, "--sample"), default=2000, metavar="N",
                     help="rows the effects are computed on (default: %(default)s)")
    _add_max_rows(rep)
    rep.add_argument("--explain", type=_count(1, "--explain"), default=50, metavar="N",
                     help="rows explained with Shapley values (default: %(default)s)")
    rep.add_argument("--grid", type=_count(2, "--grid"), default=20, metavar="N",
                     help="grid points / bins per feature (default: %(default)s)")
    rep.add_argument("--class", dest="target_class", metavar="LABEL",
                     help="classifiers: the one class whose probability is explained "
                          "(default: the positive class of a binary model; every class of a "
                          "multiclass model in the effects, the most probable one in the "
                          "Shapley and LIME sections); a model file without class labels (a "
                          "multiclass booster's .txt / .json): the output's index")
    rep.add_argument("--seed", type=_count(0, "--seed"), default=0,
                     help="random seed of every sample (default: %(default)s)")
    rep.add_argument("--static", action="store_true",
                     help="still pictures only: no Explore section with its feature, class "
                          "and row selectors (a smaller file, no script but the page's own)")
    rep.add_argument("--holdout", action="store_true",
                     help="the data was not used to fit the model: the quality section reads "
                          "as an estimate on new data")
    rep.add_argument("--reference", type=_existing_file, metavar="FILE",
                     help="earlier data with the same columns (and --target, if it has it): "
                          "adds a 'What changed' section, which features' change of "
                          "distribution moved the mean prediction (and the loss)")
    rep.add_argument("--trust-model-file", action="store_true",
                     help="load pickle / joblib files, and skops files with types skops does "
                          "not trust by default; loading such a file can run any code in it, "
                          "so use it only for files you trust")
    cluster = rep.add_mutually_exclusive_group()
    cluster.add_argument("--scheduler", metavar="ADDRESS",
                         help="evaluate the model rows on the Dask cluster of this scheduler "
                              "(e.g. tcp://10.0.0.5:8786; needs the dask extra)")
    cluster.add_argument("--workers", type=_count(1, "--workers"), metavar="N",
                         help="evaluate the model rows on a Dask cluster of N processes on "
                              "this machine, started for the report (needs the dask extra)")
    rep.set_defaults(func=_report)

    _add_demo(sub)
    from types import SimpleNamespace

    from .cli_compare import add_compare

    add_compare(sub, SimpleNamespace(existing_file=_existing_file, count=_count,
                                     read_data=read_data, load_model=load_model,
                                     features_of=_features_of, say=_say, CLIError=CLIError))
    return parser


def _add_max_rows(rep) -> None:
    rep.add_argument("--max-rows", type=_count(0, "--max-rows"), default=MAX_ROWS,
                     metavar="N",
                     help="a data file of more rows is read in chunks and a uniform random "
                          "sample of N rows kept; every section and the page's row numbers "
                          "are on that sample, as the page says (default: %(default)s; 0: "
                          "every row)")


def _add_demo(sub) -> None:
    """The ``demo`` command and its options."""
    demo = sub.add_parser(
        "demo", help="explain a bundled model and write its report",
        description="Fit a gradient-boosting model on data bundled with scikit-learn and write "
                    "its report to FOLDER/report.html.", epilog=_EPILOG_DEMO)
    demo.add_argument("--out", type=_out_folder, default=Path("modellens-demo"), metavar="FOLDER",
                      help="output folder (default: %(default)s)")
    demo.add_argument("--grid", type=_count(2, "--grid"), default=20, metavar="N",
                      help="grid points / bins per feature (default: %(default)s)")
    demo.add_argument("--explain", type=_count(1, "--explain"), default=50, metavar="N",
                      help="rows explained with Shapley values (default: %(default)s)")
    demo.add_argument("--rows", nargs="+", type=_count(0, "--rows"), metavar="N",
                      help="row numbers (from 0) explained one by one, as in 'modellens "
                           "report' (default: the rows with the highest, lowest and median "
                           "prediction)")
    demo.add_argument("--static", action="store_true",
                      help="still pictures only, as 'modellens report --static'")
    demo.add_argument("--png", action="store_true",
                      help="also write the plots as PNG files and the numbers as CSV files")
    demo.set_defaults(func=_demo)


#: Characters a terminal acts on instead of showing: C0 / C1 controls (escape sequences
#: that move the cursor, retitle the window, rewrite what was printed) and the
#: bidirectional overrides that reorder a line.  Tabs and newlines stay.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: The line breaks of ``str.splitlines``, with the spaces around them.
_LINE_BREAKS = re.compile(r"\s*[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]\s*")


def _clean(text) -> str:
    """``text`` with every terminal control character shown as its escape (``\\x1b``)."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"),
                        str(text))


def _say(text, *, file=None, flush=False) -> None:
    """Print one message of the command line; names and levels from files are data, not
    terminal commands."""
    print(_clean(text), file=sys.stdout if file is None else file, flush=flush)


def _one_line(exc) -> str:
    # only the line breaks (and the indentation after them) go: a run of spaces may be part
    # of a name the message quotes, and the user copies that name from it
    text = _LINE_BREAKS.sub(" ", str(exc)).strip()
    return text or type(exc).__name__


def _show_warning(message, category, filename, lineno, file=None, line=None):
    _say(f"modellens: warning: {_one_line(message)}", file=sys.stderr if file is None else file)


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    from . import InvalidParameterError, ModelError

    from ._config import safe_path

    previous = warnings.showwarning
    warnings.showwarning = _show_warning
    try:
        with safe_path():  # every process the command starts, a model's pools included
            return args.func(args)
    except KeyboardInterrupt:
        _say("modellens: interrupted", file=sys.stderr)
        return 130
    except (CLIError, InvalidParameterError, ModelError) as exc:
        _say(f"modellens {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except Exception as exc:  # anything else is still one line, with what raised it
        _say(f"modellens {args.command}: error: {type(exc).__name__}: {_one_line(exc)}",
              file=sys.stderr)
        return 1
    finally:
        warnings.showwarning = previous


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
