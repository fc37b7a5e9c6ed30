"""``ml.report`` of a text classifier on texts: the inputs checked, the texts explained once.

A list (or pandas Series, or 1-D array) of strings makes :func:`~modellens.report`
explain a text classifier (a function of a list of strings, a ``transformers``
text-classification pipeline, or a scikit-learn text pipeline with
``predict_proba``) instead of a table.  Every explained text gets
:func:`~modellens.shapley` values of its words, for every class from the same
forward passes; the sections (``report/_sections/texts.py``) read those results
and never call the model for them again (the deletion curves score their own
texts).

The budget is bounded by default and stated on the page: each text is exact while
its ``2**d - 2`` coalitions fit its share of ``shapley_budget`` (and KernelSHAP's
default ``2 d + 2048``), with the SHAP interaction values of its words from the
same coalitions; a longer text gets KernelSHAP with that many coalitions.
"""

from __future__ import annotations

import datetime
import time
from dataclasses import dataclass, fields

import numpy as np

from .._config import resolve_options
from .._validation import InvalidParameterError
from .._version import __version__
from ..attribution import TextMasker, shapley
from ._options import ReportOptions

__all__ = ["is_text_data", "text_report", "TextInputs", "TEXT_OPTIONS", "MAX_EXACT_WORDS",
           "text_budget"]

#: The options a text report reads; any other set away from its default is refused.
TEXT_OPTIONS = ("rows", "n_explain", "shapley_budget", "target", "random_state", "sections",
                "progress", "title", "source", "unused_columns", "log", "interactive",
                "warm_up")
#: Most distinct words of a text explained exactly (2**15 - 2 coalitions), as ``ml.shapley``.
MAX_EXACT_WORDS = 15


def is_text_data(X) -> bool:
    """Texts to explain one by one: a non-empty list, tuple, 1-D array or pandas Series whose
    values are strings (missing ones are refused later, by :func:`check_texts`)."""
    if isinstance(X, (list, tuple)):
        return len(X) > 0 and any(isinstance(t, str) for t in X) \
            and all(isinstance(t, str) or t is None or _is_nan(t) for t in X)
    kind = type(X).__name__
    if kind == "Series" or (isinstance(X, np.ndarray) and X.ndim == 1):
        values = X.to_numpy() if kind == "Series" else X
        if values.dtype.kind == "U":
            return values.size > 0
        if values.dtype.kind != "O" and str(values.dtype) != "string":
            return False
        values = [v for v in values.tolist() if not (v is None or _is_nan(v))]
        return bool(values) and all(isinstance(v, str) for v in values)
    return False


def _is_nan(v) -> bool:
    """A missing value (None, NaN, pandas' NA) among texts."""
    import pandas as pd

    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):  # (a list-like value: not one missing text)
        return False


def check_texts(X) -> list:
    """The texts as a list of str; a missing one is an error naming its position."""
    values = X.tolist() if hasattr(X, "tolist") else list(X)
    missing = [i for i, t in enumerate(values) if not isinstance(t, str)]
    if missing:
        raise InvalidParameterError(
            f"{len(missing)} of the {len(values)} texts are missing (not a str), the first at "
            f"position {missing[0]}: drop them, or give an empty string for no text.")
    return values


def check_text_options(opts: ReportOptions, y) -> None:
    """Refuse what a text report does not do, before any model call."""
    if y is not None:
        raise InvalidParameterError(
            "a report of texts explains the model's predictions and does not score them: "
            "drop y (the quality section is for tables).")
    default = ReportOptions()
    unused = [f.name for f in fields(ReportOptions) if f.name not in TEXT_OPTIONS
              and _differs(getattr(opts, f.name), getattr(default, f.name))]
    if unused:
        raise InvalidParameterError(
            f"a report of texts does not use {', '.join(unused)} (options of a table's report); "
            f"drop them. Its options are {', '.join(TEXT_OPTIONS)}.")
    from ._sections.texts import TEXT_SECTIONS

    if opts.sections is not None:
        known = [key for key, _ in TEXT_SECTIONS]
        wrong = [s for s in opts.sections if s not in known]
        if wrong:
            raise InvalidParameterError(f"sections {wrong} are not sections of a report of "
                                        f"texts; its sections are {known}.")


def _differs(a, b) -> bool:
    if a is None or b is None:
        return a is not b
    try:
        return bool(np.any(a != b)) if not isinstance(a, (list, tuple)) else list(a) != list(b)
    except (TypeError, ValueError):
        return True


def text_budget(budget: int, n_texts: int, d: int) -> int:
    """Coalitions one text of ``d`` distinct words may cost: its share of ``budget``, at most
    KernelSHAP's default ``2 d + 2048``, at least ``2 d + 2``."""
    return int(max(2 * d + 2, min(2 * d + 2048, budget // max(n_texts, 1))))


def exact_fits(d: int, budget: int) -> bool:
    """Whether a text of ``d`` distinct words is explained exactly within ``budget``."""
    return d <= MAX_EXACT_WORDS and 2 ** d - 2 <= budget


@dataclass(frozen=True)
class TextInputs:
    """What the sections of a text report read (computed once).

    Attributes
    ----------
    model : object
        The classifier as given (every text method reads it: a function of texts, a
        transformers pipeline, a scikit-learn text pipeline).
    texts : list of str
        Every text given.
    words : list of int
        Words (tokens) of each text; ``players`` its distinct words.
    explained : tuple of int
        Positions of the explained texts (``rows`` first, then a seeded sample).
    attributions : dict
        Position -> the text's ``Attributions`` (every class unless ``target``).
    calls : dict
        Position -> the ``ml.shapley`` keywords its values came from.
    skipped : tuple of int
        Explained positions left out: texts without a word.
    output_position : int
        The class the pooled tables explain (``target``, else the class of
        highest mean score over the explained texts).
    """

    model: object
    texts: list
    words: list
    players: list
    explained: tuple
    attributions: dict
    calls: dict
    skipped: tuple
    outputs: tuple
    output_position: int
    target: object
    random_state: int
    budget: int
    interactive: bool
    progress: object
    warnings: tuple
    unused_columns: tuple


def _choose(n: int, rows, n_explain: int, seed: int) -> tuple:
    """``rows`` (checked), then ``n_explain`` other positions drawn with ``seed``, sorted."""
    from .._validation import is_integer

    chosen: list = []
    for r in ([] if rows is None else ([rows] if is_integer(rows) else list(rows))):
        if not is_integer(r) or not 0 <= int(r) < n:
            raise InvalidParameterError(f"rows must be text positions from 0 to {n - 1}, got "
                                        f"{r!r}.")
        if int(r) not in chosen:
            chosen.append(int(r))
    others = np.setdiff1d(np.arange(n), chosen)
    rng = np.random.default_rng(seed)
    drawn = np.sort(rng.choice(others, size=min(n_explain, others.size), replace=False))
    return tuple(chosen + [int(i) for i in drawn])


def explain_texts(model, texts, explained, *, budget, target, seed, progress, players):
    """Each explained text's Shapley values (and the call that gave them), the texts without
    a word, and the warnings of the methods (texts' positions said)."""
    from ._warnings import recorded

    attributions, calls, skipped, said = {}, {}, [], []
    counted = [i for i in explained if players[i] > 0]
    for i in explained:
        d = players[i]
        if d == 0:
            skipped.append(i)
            continue
        share = text_budget(budget, len(counted), d)
        if exact_fits(d, share):
            # every coalition: exact values, and the words' interactions from the same passes
            call = dict(algorithm="exact", interactions=d > 1)
        else:
            call = dict(n_samples=share, random_state=seed)
        # the methods' warnings go on the page, each naming its text (this thread's only)
        with recorded() as caught:
            attributions[i] = shapley(model, texts[i], target=target, progress=progress,
                                      **call)
        said += list(dict.fromkeys(f"text {i}: {w.message}" for w in caught))
        calls[i] = call
    return attributions, calls, tuple(skipped), tuple(said)


def _count_words(masker, text) -> tuple:
    """``(words, distinct words)`` of a text as ``ml.shapley`` cuts it (0, 0 without any)."""
    try:
        rep = masker.represent(text)
    except InvalidParameterError:  # no word at all: the text is left out, and said
        return 0, 0
    return len(rep.spans), rep.n_features


def text_inputs(model, X, opts) -> TextInputs:
    """Check the texts, explain the chosen ones once."""
    texts = check_texts(X)
    masker = TextMasker()
    counts = [_count_words(masker, t) for t in texts]
    words = [w for w, _ in counts]
    players = [p for _, p in counts]
    explained = _choose(len(texts), opts.rows, opts.n_explain, int(opts.random_state))
    progress = resolve_options(progress=opts.progress).progress
    attributions, calls, skipped, said = explain_texts(
        model, texts, explained, budget=opts.shapley_budget, target=opts.target,
        seed=int(opts.random_state), progress=progress, players=players)
    if not attributions:
        raise InvalidParameterError(
            f"none of the {len(explained)} texts chosen has a word to explain (each is empty "
            "or punctuation only): give texts with words.")
    first = next(iter(attributions.values()))
    outputs = tuple(str(o) for o in first.outputs) if first.outputs is not None \
        else (str(first.output),)
    position = 0
    if first.outputs is not None:
        mean = np.mean([np.asarray(a.prediction, dtype=float)[0] for a in attributions.values()],
                       axis=0)
        position = int(np.argmax(mean))
    return TextInputs(model=model, texts=texts, words=words, players=players,
                      explained=explained, attributions=attributions, calls=calls,
                      skipped=skipped, outputs=outputs, output_position=position,
                      target=opts.target, random_state=int(opts.random_state),
                      budget=int(opts.shapley_budget),
                      interactive=bool(opts.interactive), progress=progress, warnings=said,
                      unused_columns=tuple(str(c) for c in opts.unused_columns or []))


def text_report(model, X, y, opts: ReportOptions, *, rc: dict, versions: str) -> tuple:
    """The parts of the :class:`~modellens.report.Report` of a text classifier on texts:
    ``(sections, settings, subtitle, total seconds)`` (``rc``: matplotlib's settings of the
    report's pictures; ``versions``: the line of the "What was run" table)."""
    from ._sections.texts import TEXT_SECTIONS

    check_text_options(opts, y)
    say = opts.log if callable(opts.log) else (lambda line: None)
    started = time.perf_counter()
    inputs = text_inputs(model, X, opts)
    say(f"texts explained: {time.perf_counter() - started:.1f} s")
    from ._render import drawing

    sections = []
    for key, build in TEXT_SECTIONS:
        if opts.sections is not None and key not in opts.sections:
            continue
        t0 = time.perf_counter()
        with drawing(rc):
            sec = build(inputs)
        sec.seconds = time.perf_counter() - t0
        say(f"{key}: {sec.seconds:.1f} s")
        sections.append(sec)
    total = time.perf_counter() - started
    subtitle = opts.source or (f"{type(model).__name__} on {len(inputs.texts):,} texts, "
                               f"{len(inputs.attributions):,} explained")
    return sections, _settings(model, inputs, versions), subtitle, total


def _settings(model, inputs: TextInputs, versions: str) -> dict:
    """The page's "What was run" table."""
    exact = sum(1 for c in inputs.calls.values() if c.get("algorithm") == "exact")
    return {
        "modellens": __version__,
        "python / numpy / scikit-learn": versions,
        "date (UTC)": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "model": type(model).__name__,
        "texts": f"{len(inputs.texts):,}",
        "texts explained": f"{len(inputs.attributions):,}"
                           + (f" ({len(inputs.skipped)} without a word left out)"
                              if inputs.skipped else ""),
        "Shapley values": (
            f"{exact:,} texts exact (every coalition of their words; interactions from the "
            f"same forward passes), {len(inputs.calls) - exact:,} by KernelSHAP"),
        "budget": (f"shapley_budget = {inputs.budget:,} masked texts in all: each text at "
                   "most its share of it and 2 d + 2048 coalitions (d its distinct words), at "
                   "least 2 d + 2; exact while 2^d - 2 coalitions fit that (at most "
                   f"{MAX_EXACT_WORDS} words)"),
        "random_state (seed)": inputs.random_state,
        "players": "distinct words (r'\\w+'; every occurrence masked together; a transformers "
                   "tokenizer's mask token replaces an absent word, else it is deleted)",
    }
