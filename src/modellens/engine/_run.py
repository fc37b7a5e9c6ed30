"""Run plans: evaluate every planned row in chunks, then reduce each plan.

A :class:`Plan` is one method's request: the :class:`~.segments.Segment`
objects holding the model rows it needs (possibly none) and a
:meth:`~Plan.reduce` step that turns their folded answers into the result.
:func:`run` evaluates the segments of all plans in one chunked stream, so a
request for many features (or an ALE next to the rows at the data) costs one
pass, whose chunks are capped in bytes and sized on the model's speed.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._children import safe_path
from .._config import Options, resolve_options
from ..models import kernel_threads
from ._chunks import chunk_rows
from ._chunks import chunks as _chunks
from ._dask import evaluate_on_client
from ._plan import ModelLike, Plan, share_rows
from .._progress import progress_bar
from ._threads import capped_call
from ._tuner import ChunkSizer
from .segments import OutputFan

__all__ = ["Plan", "run", "run_outputs", "summarise", "summarise_outputs", "evaluate",
           "chunk_rows", "PROGRESS_MIN_ROWS"]

#: Runs with more model rows than this show a progress bar when ``progress=None``.
PROGRESS_MIN_ROWS = 2_000_000


def run(model: ModelLike | None, plans, options: Options | None = None, *,
        desc: str = "modellens"):
    """Evaluate the rows of every plan in one chunked pass; return each plan's result.

    The plans' shared rows (:class:`~._plan.SharedRows`) are merged by key and
    evaluated first, then every plan's own segments, in the order given;
    ``model`` may be None when no plan has rows.  The reductions run the
    compiled kernels (TreeSHAP, the trees' partial dependence) on the
    threads ``options.n_jobs`` asks for, as the chunks do.
    """
    options = resolve_options() if options is None else options
    with _overflow_refused(model):
        plans = _evaluate_plans(model, plans, options, desc)
        return _reduce(model, plans, options)


def _reduce(model, plans, options: Options) -> list:
    """The plans' results, on ``n_jobs``' kernel threads, refused if huge answers overflowed."""
    with kernel_threads(options.threads):
        results = [plan.reduce() for plan in plans]
    _check_overflow(model, results)
    return results


@contextmanager
def _overflow_refused(model):
    """Python's own float arithmetic on folded or reduced numbers overflowing: refused."""
    try:
        yield
    except OverflowError:
        _check_overflow(model, [_Overflowed()])
        raise


def run_outputs(model, plans_for, options: Options | None = None, *,
                desc: str = "modellens") -> list:
    """Each output's results: the plans of every output, whose rows the model evaluates once.

    Parameters
    ----------
    model : Model
        With ``n_outputs`` outputs (1: a plain :func:`run`).
    plans_for : callable ``model -> list of Plan``
        Builds the plans for one output's single-output model
        (``model.view(c)``); called once per output, and the plans must come
        out alike (the same rows in the same segments).

    Returns
    -------
    list
        ``[results of output 0, results of output 1, ...]``, each the list
        :func:`run` returns for that output's plans.
    """
    return _every_output(model, plans_for, options, desc, _reduce)


def summarise_outputs(model, plans_for, options: Options | None = None, *,
                      desc: str = "modellens") -> list:
    """As :func:`run_outputs`, but each output's plans' mergeable summaries.

    One partition's part of an out-of-core request of several outputs: the
    rows are evaluated once for every output, and each output's plans
    summarise the column of the answers that is theirs.
    """
    def summaries(model, plans, options):
        return [plan.summarise() for plan in plans]

    return _every_output(model, plans_for, options, desc, summaries)


def _every_output(model, plans_for, options, desc, finish):
    """Evaluate the plans of every output in one pass; ``finish(model, plans, options)`` each.

    The model knows its outputs (it learnt them when it was wrapped, see
    :meth:`modellens.models.Model._probe`), so the plans of every output are
    made, and the chunks sized for all of them, before the first model row.
    """
    options = resolve_options() if options is None else options
    k = getattr(model, "n_outputs", 1)
    if k == 1:
        with _overflow_refused(model):
            return [finish(model, _evaluate_plans(model, plans_for(model), options, desc),
                           options)]
    return _fanned(model, plans_for, k, options, desc, finish)


def _fanned(model, plans_for, k, options, desc, finish):
    """The plans of ``k`` outputs, their rows evaluated once (``OutputFan``), finished each."""
    per_output = [list(plans_for(model.view(c))) for c in range(k)]
    shared = [share_rows(plans) for plans in per_output]
    own = [[seg for plan in plans for seg in plan.segments] for plans in per_output]
    fans = [OutputFan(list(segs)) for segs in zip(*shared)] + \
        [OutputFan(list(segs)) for segs in zip(*own)]
    if any(len(s) != len(shared[0]) for s in shared) or any(len(s) != len(own[0]) for s in own):
        raise RuntimeError("the plans of the outputs differ (a bug: please report it)")
    with _overflow_refused(model):
        evaluate(model, fans, options, desc=desc)
        return [finish(model, plans, options) for plans in per_output]


class _Overflowed:
    values = np.array([np.inf])


#: Predictions of a larger magnitude make overflow the likely cause of a result that is
#: not finite (their squares pass float64's largest number).
HUGE = 1e150


def _check_overflow(model, results) -> None:
    """Refuse results whose values went to inf / NaN because huge predictions overflowed.

    The model seam passes only finite predictions, so a result's ``values`` that
    are not finite while the model answered beyond ``HUGE`` come from sums or
    squares that overflowed on the way, not from the data.
    """
    largest = float(getattr(model, "max_abs", 0.0) or 0.0)
    if largest <= HUGE:
        return
    for result in results:
        values = getattr(result, "values", None)
        if isinstance(values, np.ndarray) and values.dtype.kind == "f" \
                and not np.isfinite(values).all():
            from ..models import ModelError

            raise ModelError(
                f"the explanation overflowed: the model's predictions reach {largest:.3g}, "
                "near the largest float64 number, and the sums of them came out inf or NaN. "
                "Explain a rescaled output instead, e.g. lambda X: model.predict(X) / 1e300, "
                "or its logarithm.")


def summarise(model: ModelLike, plans, options: Options | None = None, *,
              desc: str = "modellens"):
    """As :func:`run`, but each plan's mergeable summary instead of its result."""
    return [plan.summarise() for plan in _evaluate_plans(model, plans, options, desc)]


def _evaluate_plans(model, plans, options, desc):
    plans = list(plans)
    evaluate(model, share_rows(plans) + [seg for plan in plans for seg in plan.segments],
             options, desc=desc)
    return plans


@safe_path()  # a model's pools started while it runs: see modellens._children
def evaluate(model: ModelLike | None, segments, options: Options | None = None, *, desc: str = "modellens"):
    """Evaluate every planned row of ``segments`` and fold the answers.

    Parameters
    ----------
    model : ModelLike
    segments : list of Segment
        After the call each segment's ``result`` holds its reduced answers.
    options : Options, optional
        Execution options (default: those of :func:`modellens.config`).
        ``chunk_size=None`` tunes the rows per call on the model's speed (see
        :class:`~._tuner.ChunkSizer`) within a 32 MiB cap of rows; the numbers
        do not depend on the sizes chosen.  ``n_jobs`` evaluates chunks at once
        in threads (models that release the GIL gain; memory grows by one
        chunk each).  ``progress`` shows a tqdm bar (None: for runs of more
        than ``PROGRESS_MIN_ROWS`` rows).
    """
    options = resolve_options() if options is None else options
    segments = list(segments)
    for seg in segments:
        seg._reset()
    total = sum(seg.n_rows for seg in segments)
    if total == 0:
        for seg in segments:
            seg._finish()
        return segments
    assert model is not None, "segments with rows need a model"  # only row-less runs pass None
    n_jobs = options.threads
    sizers = {}
    k = getattr(model, "n_outputs", 1)
    # a tree ensemble runs fastest on the largest chunks (see ChunkSizer)
    large = bool(getattr(model, "large_chunks", False))
    for seg in segments:
        key = seg.call_key()
        if key not in sizers:
            rows_of_key = sum(s.n_rows for s in segments if s.call_key() == key)
            # the byte cap counts a chunk's answers too: a gradient's, one per feature and
            # output (as many as the rows' own values for one output), and predictions of
            # several outputs
            width = seg.width * (1 + k) if key[0] == "gradient" else \
                seg.width if k == 1 else seg.width + k
            # threads share the cores, so their timings would mislead the tuner
            sizers[key] = ChunkSizer(width, options.chunk_size, rows_of_key,
                                     tune=n_jobs == 1 and options.client is None,
                                     max_rows=model.max_chunk_rows, large=large)
    show = options.progress if options.progress is not None else total > PROGRESS_MIN_ROWS
    bar = None
    if show:
        bar = progress_bar(total=total, unit="rows", desc=f"{desc}: {total:,} model rows")

    def answer(key, pieces):
        rows = chunk_rows(pieces)
        began = time.perf_counter()
        with capped_call(len(rows)):  # OpenMP's barriers on small chunks or busy cores
            out = pieces[0][0].answer(model, rows)
        sizers[key].record(len(rows), time.perf_counter() - began)
        return pieces, out

    def fold(pieces, out):
        offset = 0
        for seg, a, b in pieces:
            seg._fold(a, b, out[offset: offset + b - a])
            offset += b - a
        if bar is not None:
            bar.update(offset)

    try:
        chunks = _chunks(segments, sizers)
        if options.client is not None:
            evaluate_on_client(options.client, model, segments, sizers, chunks, bar,
                               store=options.store)
        elif n_jobs == 1:
            for key, pieces in chunks:
                fold(*answer(key, pieces))
        else:
            with ThreadPoolExecutor(max_workers=n_jobs) as pool:
                pending = []
                for key, pieces in chunks:
                    pending.append(pool.submit(answer, key, pieces))
                    if len(pending) >= n_jobs:
                        fold(*pending.pop(0).result())
                for fut in pending:
                    fold(*fut.result())
    finally:
        if bar is not None:
            bar.close()
    # a segment without rows never reached a fold
    for seg in segments:
        if seg.n_rows == 0:
            seg._finish()
    left = sum(max(seg._left, 0) for seg in segments)  # (a segment listed twice: < 0)
    if left:  # an executor that lost chunks must not pass for one that finished
        raise RuntimeError(f"{left} planned model rows were never evaluated; no result is "
                           "returned (a bug of the executor: please report it).")
    return segments
