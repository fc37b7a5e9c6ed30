"""Segments: blocks of planned model rows and the reduction of their predictions.

A method describes every row a request needs as segments; the engine streams
the rows of all segments through the model in chunks and hands each segment
the answers for its own rows, which it folds as they arrive (kept, or averaged
over groups of consecutive rows).  A segment knows the width of its rows and
how they are answered (predictions, or gradients), so inputs other than the
explained table can flow through the same engine.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._tuner import ALIGN_ROWS

__all__ = ["Segment", "DataRows", "GridRows", "GradientRows", "ShiftedRows", "OutputFan",
           "compact_index"]


class GroupSums(NamedTuple):
    """Sums of pieces of a segment's averaged groups (see :meth:`Segment.condense`)."""

    entries: np.ndarray
    sums: np.ndarray


class Segment:
    """A block of planned model rows and the reduction of their predictions.

    Subclasses set ``n_rows``, ``width`` and ``group`` and implement
    :meth:`fill`.  The predictions of ``group`` consecutive rows are averaged
    into one entry of :attr:`result` (``group=1`` keeps every prediction), so
    ``result`` has ``n_rows // group`` entries once the engine is done with
    the segment; then :attr:`on_finish` (if set) is called with the segment,
    which lets a plan reduce and release a large result early.
    """

    n_rows: int = 0
    group: int = 1
    width: int = 0
    on_finish: Any = None
    #: whether :meth:`rows` returns memory the library reads again after the model's call
    #: (the data itself, a drawn sample): the engine then hands the model a copy
    lends_rows: bool = False
    #: the folded answers: None until the first fold allocates them, then whatever the
    #: segment's ``_allocate`` builds (an array for most, a record of sums for some), so
    #: readers after the run see the type of the segment they made
    result: Any = None

    def call_key(self):
        """Segments with equal keys can share one model call (same answer, same width)."""
        return ("predict", self.width)

    def answer(self, model, rows: np.ndarray) -> np.ndarray:
        """The model's answer for a chunk of rows (predictions: shape ``(m,)``)."""
        return model.predict(rows)

    def rows(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop`` of this segment, shape ``(stop - start, width)``."""
        out = np.empty((stop - start, self.width))
        self.fill(start, stop, out)
        return out

    def fill(self, start: int, stop: int, out: np.ndarray):  # pragma: no cover - abstract
        """Write rows ``start:stop`` into ``out``."""
        raise NotImplementedError

    def _reset(self):
        # allocated at the first fold: a request's segments then hold memory for
        # their answers only from when those start to arrive
        self.result = None
        self._left = self.n_rows

    def _allocate(self):
        self.result = np.zeros(self.n_rows // self.group)

    def _fold(self, start: int, stop: int, answers: np.ndarray):
        if self.result is None:
            self._allocate()
        self._store(start, stop, answers)
        self._left -= stop - start
        if self._left == 0:
            self._finish()

    def condense(self, start: int, stop: int, answers: np.ndarray):
        """What the fold of rows ``start:stop`` needs of their answers.

        A remote executor calls this where the answers are and ships its value
        to the fold instead of the answers: the sums of averaged groups (a few
        numbers per chunk) for a segment that averages, the answers themselves
        for one that keeps them (``group`` 1, or a ``_store`` of its own).
        """
        if isinstance(answers, GroupSums) or self.group == 1 \
                or type(self)._store is not Segment._store:
            return answers  # (group sums already: an output's share of an OutputFan)
        return GroupSums(*self._group_sums(start, stop, answers))

    def _group_sums(self, start, stop, preds):
        # Sum fixed pieces (a group cut at the multiples of ALIGN_ROWS) and add them
        # in row order: chunks end on those cuts, so the floating-point sums, and the
        # numbers, do not depend on the chunk sizes.  ``preds`` of shape (k, m) (one
        # contiguous row per output) are summed along each row: the same pairwise sums
        # as each output's own (m,) answers.
        g = self.group
        cuts = np.union1d(np.arange(-(-start // g) * g, stop, g),
                          np.arange(-(-start // ALIGN_ROWS) * ALIGN_ROWS, stop, ALIGN_ROWS))
        cuts = np.union1d([start], cuts) - start
        return (cuts + start) // g, np.add.reduceat(preds, cuts, axis=-1)

    def _store(self, start: int, stop: int, preds: np.ndarray):
        if isinstance(preds, GroupSums):
            np.add.at(self.result, preds.entries, preds.sums)
        elif self.group == 1:
            self.result[start:stop] = preds
        else:
            np.add.at(self.result, *self._group_sums(start, stop, preds))

    def _finish(self):
        if self.result is None:
            self._allocate()
        if self.group > 1:
            self.result /= self.group
        if self.on_finish is not None:
            self.on_finish(self)


class DataRows(Segment):
    """Given rows, unchanged (M-plots, values at the data, the background).

    ``rows`` may select some rows of ``data`` (gathered chunk by chunk, never
    all at once).
    """

    lends_rows = True  # slices of the data, which plans read again (M-plot neighbourhoods)

    def __init__(self, data: np.ndarray, rows=None):
        self.data = data
        self.index = None if rows is None else np.asarray(rows)
        self.n_rows = data.shape[0] if self.index is None else self.index.size
        self.width = data.shape[1]
        self.group = 1

    def rows(self, start, stop):
        if self.index is None:
            return self.data[start:stop]
        return self.data[self.index[start:stop]]

    def fill(self, start, stop, out):
        out[...] = self.rows(start, stop)


class GradientRows(DataRows):
    """Rows whose answer is the gradient of the explained output, kept per feature.

    ``result`` has shape ``(len(columns), n_rows)``: feature-major, so each
    feature's derivatives are one contiguous array for the reduction.

    Parameters
    ----------
    data : ndarray of shape (m, d)
        The rows at which the gradient is taken.
    columns : sequence of int
        The features whose partial derivatives are kept.
    backend : {"torch", "jax", "callable"}
    function : callable, optional
        The user's ``gradient(X) -> (m, d)`` for ``backend="callable"``.
    """

    def __init__(self, data: np.ndarray, columns, *, backend: str, function=None):
        super().__init__(data)
        self.columns = np.asarray(columns, dtype=np.intp)
        self.backend, self.function = backend, function
        self._all = np.array_equal(self.columns, np.arange(self.width))

    def call_key(self):
        return ("gradient", self.backend, id(self.function), self.width)

    def answer(self, model, rows):
        return model.gradient(rows, backend=self.backend, function=self.function)

    def _allocate(self):
        self.result = np.empty((self.columns.size, self.n_rows))

    def _store(self, start, stop, grads):
        self.result[:, start:stop] = (grads if self._all else grads[:, self.columns]).T


def compact_index(index, size):
    """``index`` in the smallest unsigned type that holds ``size`` values."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if size <= np.iinfo(dtype).max + 1:
            return np.asarray(index, dtype=dtype)
    return np.asarray(index, dtype=np.intp)


class GridRows(Segment):
    """Base rows with some columns replaced, for every one of ``k`` settings.

    Row ``r`` of the segment is base row ``r % m`` with ``columns`` set to
    setting ``r // m``, so the rows of one setting are contiguous.

    Parameters
    ----------
    base : ndarray of shape (M, d)
        Encoded rows (shared between segments; never written).
    columns : sequence of int
        The ``c`` replaced columns.
    values : ndarray of shape (k, c), (k, m, c) or (T, c)
        The settings: one value vector per setting (a grid point, applied to
        every base row), one per setting and base row, or, with ``index``, a
        table of value vectors.
    average : bool
        Average the predictions over the ``m`` base rows of each setting
        (``result`` has ``k`` entries, e.g. a partial dependence curve);
        otherwise keep all ``k * m`` predictions.
    rows : int ndarray of shape (m,), optional
        The base rows to use (default: all ``M``), read chunk by chunk.
    index : int ndarray of shape (m,), optional
        Row ``i`` of setting ``s`` takes ``values[index[i] + offsets[s]]``:
        per-row settings (such as the two edges of each point's ALE bin)
        without materialising ``k * m`` value vectors.
    offsets : sequence of int, optional
        One per setting, with ``index`` (default ``(0,)``).
    """

    def __init__(self, base: np.ndarray, columns, values, *, average: bool = False, rows=None,
                 index=None, offsets=None):
        self.base = base
        self.base_rows = None if rows is None else np.asarray(rows)
        self.columns = np.atleast_1d(np.asarray(columns, dtype=np.intp))
        self.m = base.shape[0] if self.base_rows is None else self.base_rows.size
        values = np.asarray(values, dtype=np.float64)
        if values.ndim == 1:
            values = values[:, None]
        if index is not None:
            self.offsets = np.asarray((0,) if offsets is None else offsets, dtype=np.intp)
            index = np.asarray(index)
            if (self.offsets < 0).any() or (index.size and (
                    int(index.min()) < 0
                    or int(index.max()) + int(self.offsets.max()) >= values.shape[0])):
                raise ValueError(f"index and offsets must be non-negative and stay inside a "
                                 f"table of {values.shape[0]} value vectors")
            self.index = compact_index(index, values.shape[0])
            if values.ndim != 2 or values.shape[1] != self.columns.size \
                    or self.index.shape != (self.m,):
                raise ValueError(f"a table of shape {values.shape} with index "
                                 f"{self.index.shape} does not fit {self.m} base rows and "
                                 f"{self.columns.size} columns")
            self.k = self.offsets.size
            # one 1-D view of the table per setting, shifted by its offset
            self._tables = [np.ascontiguousarray(values[o:, 0]) for o in self.offsets] \
                if self.columns.size == 1 else None
        else:
            self.index = None
            if values.ndim == 2:
                values = values[:, None, :]
            if values.shape[2] != self.columns.size or values.shape[1] not in (1, self.m):
                raise ValueError(f"values of shape {values.shape} do not fit {self.m} base rows "
                                 f"and {self.columns.size} columns")
            self.k = values.shape[0]
        self.values = values
        self.width = base.shape[1]
        self.n_rows = self.m * self.k
        self.group = self.m if average else 1

    def _settings(self, setting, i):
        """Value vectors ``(len(i), c)`` of rows ``i`` under ``setting`` (scalar or per row)."""
        if self.index is not None:
            return self.values[self.index[i].astype(np.intp) + self.offsets[setting]]
        return self.values[setting, i if self.values.shape[1] != 1 else 0]

    def fill(self, start, stop, out):
        m = self.m
        # the whole settings inside the chunk in one broadcast copy each for the base rows
        # and the set columns (a Python step per setting costs as much as a cheap model)
        first, last = -(-start // m), stop // m
        if last - first > 1:
            head = first * m - start
            if head:
                self.fill(start, first * m, out[:head])
            self._fill_settings(first, last, out[head: head + (last - first) * m])
            if last * m < stop:
                self.fill(last * m, stop, out[head + (last - first) * m:])
            return
        if m < 256:  # many tiny blocks: one gather beats a Python loop over settings
            setting, i = np.divmod(np.arange(start, stop), m)
            np.take(self.base, i if self.base_rows is None else self.base_rows[i], axis=0,
                    out=out)
            out[:, self.columns] = self._settings(setting, i)
            return
        single = self.columns[0] if self.columns.size == 1 else None
        for setting, i, block in _setting_blocks(start, stop, m, out):
            take = len(block)
            if self.base_rows is None:
                block[...] = self.base[i:i + take]  # a contiguous copy, no gather
            else:
                np.take(self.base, self.base_rows[i:i + take], axis=0, out=block)
            if self.index is not None and single is not None:
                # a one-column table read straight into the column: no temporaries
                table = self._tables[setting]  # type: ignore[index]  # a list when `single` is set
                np.take(table, self.index[i:i + take], out=block[:, single], mode="clip")
                continue
            if self.index is not None:
                values = self._settings(setting, slice(i, i + take))
            elif self.values.shape[1] != 1:
                values = self.values[setting, i:i + take]
            else:
                values = self.values[setting, 0]
            if single is not None:
                block[:, single] = values[..., 0]
            else:
                block[:, self.columns] = values

    def _fill_settings(self, first, last, out):
        """Write the rows of the whole settings ``first:last`` into ``out``."""
        m = self.m
        grid = out.reshape(last - first, m, self.width)
        if self.base_rows is None:
            grid[...] = self.base
        else:
            np.take(self.base, self.base_rows, axis=0, out=grid[0])
            grid[1:] = grid[0]
        if self.index is not None:
            values = self.values[self.index.astype(np.intp)[None, :]
                                 + self.offsets[first:last, None]]
        else:
            values = self.values[first:last]  # (settings, 1 or m, c)
        if self.columns.size == 1:
            grid[:, :, self.columns[0]] = values[..., 0]
        else:
            grid[:, :, self.columns] = values


def _setting_blocks(start, stop, m, out):
    """Split rows ``start:stop`` (``m`` per setting) at setting boundaries.

    Yields ``(setting, i, block)``: the rows ``i:i + len(block)`` of the base
    under ``setting``, and the part of ``out`` they go to.
    """
    r, pos = start, 0
    while r < stop:
        setting, i = divmod(r, m)
        take = min(m - i, stop - r)
        yield setting, i, out[pos:pos + take]
        pos += take
        r += take


class ShiftedRows(Segment):
    """Base rows with one column moved by a fixed step, for every one of ``k`` steps.

    Row ``r`` is base row ``r % m`` with column ``column`` set to its own value
    plus ``shifts[r // m]`` (finite differences around the data points).
    """

    def __init__(self, base: np.ndarray, column: int, shifts):
        self.base, self.column = base, int(column)
        self.shifts = np.asarray(shifts, dtype=np.float64)
        self.m = base.shape[0]
        self.width = base.shape[1]
        self.n_rows = self.m * self.shifts.size
        self.group = 1

    def fill(self, start, stop, out):
        j = self.column
        for setting, i, block in _setting_blocks(start, stop, self.m, out):
            rows = self.base[i:i + len(block)]
            block[...] = rows
            block[:, j] = rows[:, j] + self.shifts[setting]


class _Fanned(tuple):
    """One condensed part per output (what :meth:`OutputFan.condense` ships)."""


class OutputFan(Segment):
    """The same rows planned once per output: evaluated once, each column folded apart.

    A model with ``k`` outputs answers ``(m, k)`` (gradients ``(m, d, k)``).
    The plans of every output are built alike, so their segments line up;
    this segment hands the model the rows of the first and folds output ``c``
    of each answer into segment ``c``, which then reduces exactly as it does
    for a single-output model (the same numbers, column by column), while the
    model evaluates the rows once.
    """

    def __init__(self, segments):
        first = segments[0]
        for seg in segments[1:]:
            if (type(seg), seg.n_rows, seg.width, seg.group, seg.call_key()) != \
                    (type(first), first.n_rows, first.width, first.group, first.call_key()):
                raise ValueError("the plans of the outputs differ; they must be built alike")
        self.segments = list(segments)
        self.n_rows, self.width, self.group = first.n_rows, first.width, first.group

    def call_key(self):
        return self.segments[0].call_key()

    def answer(self, model, rows):
        return self.segments[0].answer(model, rows)

    def rows(self, start, stop):
        return self.segments[0].rows(start, stop)

    def fill(self, start, stop, out):
        self.segments[0].fill(start, stop, out)

    def _reset(self):
        for seg in self.segments:
            seg._reset()
        self.result = None
        self._left = self.n_rows

    def _averages(self) -> bool:
        """Whether every output's segment sums averaged groups (the plain fold)."""
        return self.group > 1 and all(type(seg)._store is Segment._store
                                      for seg in self.segments)

    def _parts(self, start, stop, answers):
        """Each output's share of ``answers``: its group sums, or its column."""
        if self._averages():
            # the cuts once for every output, each output's sums along its own row
            entries, sums = self._group_sums(start, stop, np.ascontiguousarray(answers.T))
            return _Fanned(GroupSums(entries, row) for row in sums)
        return _Fanned(np.ascontiguousarray(answers[..., c]) for c in range(len(self.segments)))

    def condense(self, start, stop, answers):
        return _Fanned(seg.condense(start, stop, part) for seg, part in
                       zip(self.segments, self._parts(start, stop, answers)))

    def _fold(self, start, stop, answers):
        parts = answers if isinstance(answers, _Fanned) else self._parts(start, stop, answers)
        for seg, part in zip(self.segments, parts):
            seg._fold(start, stop, part)
        self._left -= stop - start

    def _finish(self):
        for seg in self.segments:
            seg._finish()
