"""One engine for every method: plan rows, evaluate them in chunks, reduce.

A method describes all the model rows a request needs as a list of
:class:`Segment` objects (every feature, every grid value, every coalition), and
:func:`evaluate` streams them through the model in large chunks whose size is
capped in bytes.  Each segment folds the predictions of its own rows as they
arrive, either keeping them or averaging groups of consecutive rows, so a
partial dependence over a million rows never holds more than a few chunks.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .data import Dataset
from .model import Model

__all__ = ["Segment", "GridRows", "DataRows", "MaskedRows", "evaluate", "prepare",
           "DEFAULT_CHUNK_BYTES", "DEFAULT_CHUNK_ROWS"]

#: Memory cap of one chunk of encoded model rows (float64 matrix).
DEFAULT_CHUNK_BYTES = 64 * 2**20
#: Rows of the first chunks when the chunk size is tuned (``chunk_size=None``).
DEFAULT_CHUNK_ROWS = 16_384
#: Tuned chunks end at multiples of this many rows of a segment, so that every
#: averaged group is summed in the same pieces whatever sizes the tuner picks.
ALIGN_ROWS = 1024
#: Runs with more model rows than this show a progress bar when ``progress=None``.
PROGRESS_MIN_ROWS = 2_000_000


class Segment:
    """A block of planned model rows and the reduction of their predictions.

    Subclasses set ``n_rows`` and ``group`` and implement :meth:`rows`.  The
    predictions of ``group`` consecutive rows are averaged into one entry of
    :attr:`result` (``group=1`` keeps every prediction), so ``result`` has
    ``n_rows // group`` entries once :func:`evaluate` returns.
    """

    n_rows: int = 0
    group: int = 1

    def rows(self, start: int, stop: int) -> np.ndarray:  # pragma: no cover - abstract
        """Encoded rows ``start:stop`` of this segment, shape ``(stop - start, d)``."""
        raise NotImplementedError

    def _reset(self):
        self.result = np.zeros(self.n_rows // self.group)

    def fill(self, start: int, stop: int, out: np.ndarray):
        """Write rows ``start:stop`` into ``out`` (subclasses may skip the copy)."""
        out[...] = self.rows(start, stop)

    def _fold(self, start: int, stop: int, preds: np.ndarray):
        g = self.group
        if g == 1:
            self.result[start:stop] = preds
            return
        # Sum fixed pieces (a group cut at the multiples of ALIGN_ROWS) and add them
        # in row order: chunks end on those cuts, so the floating-point sums, and the
        # numbers, do not depend on the chunk sizes.
        cuts = np.union1d(np.arange(-(-start // g) * g, stop, g),
                          np.arange(-(-start // ALIGN_ROWS) * ALIGN_ROWS, stop, ALIGN_ROWS))
        cuts = np.union1d([start], cuts) - start
        sums = np.add.reduceat(preds, cuts)
        np.add.at(self.result, (cuts + start) // g, sums)

    def _finish(self):
        if self.group > 1:
            self.result /= self.group


class DataRows(Segment):
    """The data rows themselves, unchanged (M-plots, finite-difference centres)."""

    def __init__(self, data: np.ndarray):
        self.data = data
        self.n_rows = data.shape[0]
        self.group = 1

    def rows(self, start, stop):
        return self.data[start:stop]


class GridRows(Segment):
    """Base rows with some columns replaced, for every one of ``k`` settings.

    Row ``r`` of the segment is base row ``r % m`` with ``columns`` set to
    setting ``r // m``, so the rows of one setting are contiguous.

    Parameters
    ----------
    base : ndarray of shape (m, d)
        Encoded rows (shared between segments; never written).
    columns : sequence of int
        The ``c`` replaced columns.
    values : ndarray of shape (k, c) or (k, m, c)
        The settings: one value vector per setting (a grid point, applied to
        every base row) or one per setting and base row (for example the bin
        edges that bracket each point in ALE).
    average : bool
        Average the predictions over the ``m`` base rows of each setting
        (``result`` has ``k`` entries, e.g. a partial dependence curve);
        otherwise keep all ``k * m`` predictions.
    """

    def __init__(self, base: np.ndarray, columns, values, *, average: bool = False):
        self.base = base
        self.columns = np.atleast_1d(np.asarray(columns, dtype=np.intp))
        values = np.asarray(values, dtype=np.float64)
        if values.ndim == 1:
            values = values[:, None]
        if values.ndim == 2:
            values = values[:, None, :]
        if values.shape[2] != self.columns.size or values.shape[1] not in (1, base.shape[0]):
            raise ValueError(f"values of shape {values.shape} do not fit {base.shape[0]} base rows "
                             f"and {self.columns.size} columns")
        self.values = values
        self.m = base.shape[0]
        self.k = values.shape[0]
        self.n_rows = self.m * self.k
        self.group = self.m if average else 1

    def rows(self, start, stop):
        out = np.empty((stop - start, self.base.shape[1]), dtype=self.base.dtype)
        self.fill(start, stop, out)
        return out

    def fill(self, start, stop, out):
        m = self.m
        per_row = self.values.shape[1] != 1
        if m < 256:  # many tiny blocks: one gather beats a Python loop over settings
            setting, i = np.divmod(np.arange(start, stop), m)
            np.take(self.base, i, axis=0, out=out)
            out[:, self.columns] = self.values[setting, i if per_row else 0]
            return
        single = self.columns[0] if self.columns.size == 1 else None
        r, pos = start, 0
        while r < stop:
            setting, i = divmod(r, m)
            take = min(m - i, stop - r)
            block = out[pos:pos + take]
            block[...] = self.base[i:i + take]  # a contiguous copy, no gather
            values = self.values[setting, i:i + take] if per_row else self.values[setting, 0]
            if single is not None:
                block[:, single] = values[..., 0]
            else:
                block[:, self.columns] = values
            pos += take
            r += take


class _ChunkSizer:
    """Rows per model call: the user's ``chunk_size``, or sizes tuned on the model's speed.

    Tuning starts at ``DEFAULT_CHUNK_ROWS`` and multiplies the size by 4 while
    the time per row falls by more than 10% (the first call only warms the
    model up), up to the ``DEFAULT_CHUNK_BYTES`` memory cap.  Small dense
    models run fastest on cache-sized chunks and tree ensembles on large ones;
    every chunk does useful work while the size is found.
    """

    def __init__(self, n_features: int, chunk_size, total: int, tune: bool):
        self.cap = max(ALIGN_ROWS, DEFAULT_CHUNK_BYTES // (8 * max(1, n_features)))
        if chunk_size is not None:
            chunk_size = int(chunk_size)
            if chunk_size < 1:
                raise ValueError(f"chunk_size must be a positive number of rows, got {chunk_size}.")
            self.size, self.tuning, self.align = chunk_size, False, 1
            return
        self.size = min(DEFAULT_CHUNK_ROWS, self.cap)
        self.align = ALIGN_ROWS
        self.tuning = tune and total >= 8 * self.size
        self._best = None
        self._best_size = self.size
        self._seen = 0

    def record(self, rows: int, seconds: float):
        if not self.tuning or rows < self.size:
            return
        self._seen += 1
        rate = seconds / rows
        if self._best is None:
            if self._seen < 2:
                return
        elif rate > 0.9 * self._best:
            self.size, self.tuning = self._best_size, False
            return
        self._best, self._best_size = rate, self.size
        grown = min(self.size * 4, self.cap)
        self.tuning = grown > self.size
        self.size = grown


def _chunks(segments, sizer):
    """Yield lists of ``(segment, start, stop)`` pieces of about ``sizer.size`` rows each.

    A chunk that stops inside a segment stops at a multiple of ``sizer.align``
    of that segment's rows.
    """
    pieces, filled, target = [], 0, sizer.size
    for seg in segments:
        start = 0
        while start < seg.n_rows:
            stop = min(seg.n_rows, start + target - filled)
            if stop < seg.n_rows:
                stop -= stop % sizer.align
            if stop <= start:  # no aligned cut fits in what is left of this chunk
                yield pieces
                pieces, filled, target = [], 0, sizer.size
                continue
            pieces.append((seg, start, stop))
            filled += stop - start
            start = stop
            if filled >= target:
                yield pieces
                pieces, filled, target = [], 0, sizer.size
    if pieces:
        yield pieces


def evaluate(model: Model, segments, *, chunk_size=None, n_jobs=1, progress=None,
             desc: str = "modellens"):
    """Evaluate every planned row of ``segments`` and fold the predictions.

    Parameters
    ----------
    model : Model
    segments : list of Segment
        After the call each segment's ``result`` holds its reduced predictions.
    chunk_size : int, optional
        Rows per model call.  By default the size is tuned while the run goes
        (see :class:`_ChunkSizer`), within ``DEFAULT_CHUNK_BYTES`` of encoded
        rows; the numbers do not depend on the sizes chosen.
    n_jobs : int
        Chunks evaluated at once in threads (models that release the GIL, such
        as most compiled estimators, gain; memory grows by one chunk each).
    progress : bool, optional
        Show a tqdm progress bar; ``None`` shows one for runs of more than
        ``PROGRESS_MIN_ROWS`` rows.
    """
    segments = list(segments)
    for seg in segments:
        seg._reset()
    total = sum(seg.n_rows for seg in segments)
    if total == 0:
        return segments
    if n_jobs is None:
        n_jobs = 1
    n_jobs = int(n_jobs)
    if n_jobs < 0:
        n_jobs = max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    n_jobs = max(1, n_jobs)
    # threads share the cores, so their timings would mislead the tuner
    sizer = _ChunkSizer(model.dataset.n_features, chunk_size, total, tune=n_jobs == 1)
    show = progress if progress is not None else total > PROGRESS_MIN_ROWS
    bar = None
    if show:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, unit="rows", desc=desc, leave=False)

    def run(pieces):
        if len(pieces) == 1:
            seg, a, b = pieces[0]
            rows = seg.rows(a, b)
        else:
            # one buffer per chunk: segments write their rows straight into it
            rows = np.empty((sum(b - a for _, a, b in pieces), model.dataset.n_features))
            offset = 0
            for seg, a, b in pieces:
                seg.fill(a, b, rows[offset: offset + b - a])
                offset += b - a
        began = time.perf_counter()
        preds = model.predict(rows)
        sizer.record(len(rows), time.perf_counter() - began)
        return pieces, preds

    def fold(pieces, preds):
        offset = 0
        for seg, a, b in pieces:
            seg._fold(a, b, preds[offset: offset + b - a])
            offset += b - a
        if bar is not None:
            bar.update(offset)

    try:
        chunks = _chunks(segments, sizer)
        if n_jobs == 1:
            for pieces in chunks:
                fold(*run(pieces))
        else:
            with ThreadPoolExecutor(max_workers=n_jobs) as pool:
                pending = []
                for pieces in chunks:
                    pending.append(pool.submit(run, pieces))
                    if len(pending) >= n_jobs:
                        fold(*pending.pop(0).result())
                for fut in pending:
                    fold(*fut.result())
    finally:
        if bar is not None:
            bar.close()
    for seg in segments:
        seg._finish()
    return segments


def prepare(model, X, *, target=None, response_method="auto", feature_names=None,
            input_format="auto"):
    """Validate ``X`` and wrap ``model``: the boundary of every public method."""
    dataset = Dataset.from_data(X, feature_names=feature_names)
    return dataset, Model(model, dataset, target=target, response_method=response_method,
                          input_format=input_format)


class MaskedRows(Segment):
    """Rows that mix a foreground row with every background row under a mask.

    A *pair* is one (foreground row, coalition mask).  Its rows are
    ``where(mask, foreground[i], background[b])`` for every background row
    ``b``; they are contiguous and averaged (``group = m``), so ``result`` holds
    one value per pair: the interventional value
    :math:`v_i(S) = \\frac{1}{m} \\sum_b f(x^{(i)}_S, z^{(b)}_{\\bar S})` of
    Shapley values.

    Parameters
    ----------
    foreground : ndarray of shape (n, d)
        Explained rows (encoded; never written).
    background : ndarray of shape (m, d)
        Background rows that fill the features outside the coalition.
    masks : bool ndarray of shape (k, d) or (K, d)
        Coalitions (True = the feature takes the foreground value).
    rows : int ndarray of shape (K,), optional
        Foreground row of each mask.  When None, every mask is applied to
        every foreground row: pair ``q`` is row ``q // k`` with mask ``q % k``.
    """

    def __init__(self, foreground: np.ndarray, background: np.ndarray, masks, *, rows=None):
        masks = np.asarray(masks, dtype=bool)
        d = foreground.shape[1]
        if masks.ndim != 2 or masks.shape[1] != d or background.ndim != 2 \
                or background.shape[1] != d:
            raise ValueError(f"masks {masks.shape} and background {background.shape} must have "
                             f"{d} columns like the foreground rows")
        self.foreground = foreground
        self.background = background
        self.masks = masks
        self.m = background.shape[0]
        if rows is None:
            self.pair_rows = None
            self.k = masks.shape[0]
            n_pairs = foreground.shape[0] * self.k
        else:
            self.pair_rows = np.asarray(rows, dtype=np.intp)
            if self.pair_rows.shape != (masks.shape[0],):
                raise ValueError(f"rows has shape {self.pair_rows.shape}; expected "
                                 f"({masks.shape[0]},), one foreground row per mask")
            self.k = None
            n_pairs = masks.shape[0]
        self.n_pairs = n_pairs
        self.n_rows = n_pairs * self.m
        self.group = self.m

    def rows(self, start, stop):
        m = self.m
        first, last = start // m, (stop - 1) // m + 1
        pairs = np.arange(first, last)
        if self.pair_rows is None:
            fg, mask = np.divmod(pairs, self.k)
            mask = self.masks[mask]
        else:
            fg, mask = self.pair_rows[pairs], self.masks[pairs]
        # broadcasting builds whole (pair, background) blocks without gathering the background
        block = np.where(mask[:, None, :], self.foreground[fg][:, None, :],
                         self.background[None, :, :])
        block = block.reshape(-1, self.foreground.shape[1])
        lo = start - first * m
        return block[lo: lo + stop - start]
