"""Run plans: evaluate every planned row in chunks, then reduce each plan.

A :class:`Plan` is one method's request: the :class:`~.segments.Segment`
objects holding the model rows it needs (possibly none) and a
:meth:`~Plan.reduce` step that turns their folded answers into the result.
:func:`run` evaluates the segments of all plans in one chunked stream, so a
request for many features (or an ALE next to the rows at the data) costs one
pass, whose chunks are capped in bytes and sized on the model's speed.
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._config import Options, resolve_options
from ._tuner import ChunkSizer

__all__ = ["Plan", "run", "evaluate", "PROGRESS_MIN_ROWS"]

#: Runs with more model rows than this show a progress bar when ``progress=None``.
PROGRESS_MIN_ROWS = 2_000_000
#: Seconds between progress-bar updates when the bar does not go to a terminal
#: (a log file would otherwise get an update per chunk).
_LOG_INTERVAL = 30.0


class Plan:
    """The model rows of one request and how their answers become its result.

    Attributes
    ----------
    segments : list of Segment
        Rows to evaluate; empty for a plan that needs no model rows.
    """

    segments: list = []

    def reduce(self):  # pragma: no cover - abstract
        """The result, once every segment has been evaluated and folded."""
        raise NotImplementedError


def run(model, plans, options: Options | None = None, *, desc: str = "modellens"):
    """Evaluate the segments of every plan in one chunked pass; return each plan's result."""
    plans = list(plans)
    evaluate(model, [seg for plan in plans for seg in plan.segments], options, desc=desc)
    return [plan.reduce() for plan in plans]


def _chunks(segments, sizers):
    """Yield ``(key, pieces)``: lists of ``(segment, start, stop)`` of about a chunk each.

    Pieces of one chunk share a call key (the same kind of answer, rows of one
    width).  A chunk that stops inside a segment stops at a multiple of the
    sizer's ``align`` rows of that segment.
    """
    pieces, filled, key = [], 0, None
    for seg in segments:
        seg_key = seg.call_key()
        if pieces and seg_key != key:
            yield key, pieces
            pieces, filled = [], 0
        key = seg_key
        sizer = sizers[key]
        start = 0
        while start < seg.n_rows:
            target = sizer.size
            stop = min(seg.n_rows, start + target - filled)
            if stop < seg.n_rows:
                stop -= stop % sizer.align
            if stop <= start:  # no aligned cut fits in what is left of this chunk
                yield key, pieces
                pieces, filled = [], 0
                continue
            pieces.append((seg, start, stop))
            filled += stop - start
            start = stop
            if filled >= target:
                yield key, pieces
                pieces, filled = [], 0
    if pieces:
        yield key, pieces


def chunk_rows(pieces) -> np.ndarray:
    """The rows of one chunk: its pieces ``(segment, start, stop)`` one after the other."""
    if len(pieces) == 1:
        seg, a, b = pieces[0]
        return seg.rows(a, b)
    # one buffer per chunk: segments write their rows straight into it
    rows = np.empty((sum(b - a for _, a, b in pieces), pieces[0][0].width))
    offset = 0
    for seg, a, b in pieces:
        seg.fill(a, b, rows[offset: offset + b - a])
        offset += b - a
    return rows


def _n_threads(n_jobs: int) -> int:
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    return max(1, n_jobs)


def evaluate(model, segments, options: Options | None = None, *, desc: str = "modellens"):
    """Evaluate every planned row of ``segments`` and fold the answers.

    Parameters
    ----------
    model : Model
    segments : list of Segment
        After the call each segment's ``result`` holds its reduced answers.
    options : Options, optional
        Execution options (default: those of :func:`modellens.config`).
        ``chunk_size=None`` tunes the rows per call on the model's speed (see
        :class:`~._tuner.ChunkSizer`) within a 64 MiB cap of rows; the numbers
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
    n_jobs = _n_threads(options.n_jobs)
    sizers = {}
    for seg in segments:
        key = seg.call_key()
        if key not in sizers:
            rows_of_key = sum(s.n_rows for s in segments if s.call_key() == key)
            # threads share the cores, so their timings would mislead the tuner
            sizers[key] = ChunkSizer(seg.width, options.chunk_size, rows_of_key,
                                     tune=n_jobs == 1 and options.client is None,
                                     max_rows=getattr(model, "max_chunk_rows", None))
    show = options.progress if options.progress is not None else total > PROGRESS_MIN_ROWS
    bar = None
    if show:
        from tqdm.auto import tqdm

        interval = 0.1 if getattr(sys.stderr, "isatty", lambda: False)() else _LOG_INTERVAL
        bar = tqdm(total=total, unit="rows", desc=f"{desc}: {total:,} model rows", leave=False,
                   mininterval=interval, maxinterval=max(10.0, interval))

    def answer(key, pieces):
        rows = chunk_rows(pieces)
        began = time.perf_counter()
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
            from ._dask import evaluate_on_client

            evaluate_on_client(options.client, model, segments, sizers, chunks, bar)
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
