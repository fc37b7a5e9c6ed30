"""Dask data answered partition by partition, lazily: one driver for the local attributions and
``ml.predict``.

A request whose answer has one row per row of ``X`` (Shapley values and
LIME weights of every row, every row's prediction) keeps it distributed: a
lazy Dask DataFrame with the partitions and index of ``X``, each partition
computed where it lies by the method's in-memory call on its own rows, in
blocks of :data:`BLOCK_ROWS` (the working memory follows the block).  The
first row is answered at the call, where it lies, so a bad option or a failing
model is an error then, not when the frame is computed; it also gives the
frame's columns.  One set of rules: the partitions run on one thread without
a bar (the request's ``chunk_size`` kept), a Dask array's blocks of rows are
its partitions (indexed by row position), and the rows' positions are
counted in one pass only when the call needs them (random streams).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._config import Options
from .._validation import InvalidParameterError
from ._dask import resolve_client
from ._out_of_core import (_first_rows, _import_dask, compute_on, partition_offsets,
                           row_partitions)

__all__ = ["BLOCK_ROWS", "LazyRows", "map_rows", "partitions_of", "part_index", "take_rows"]

#: Rows of a partition answered at once: the working memory of a partition follows it.
BLOCK_ROWS = 32_768


def partitions_of(X):
    """The partitions of ``X`` (delayed), its divisions, and the row offsets when known.

    A Dask array's blocks of rows are its partitions (whole rows each); their
    offsets come from its chunks (counted first when unknown), and the result
    is indexed by row position.
    """
    import dask.array as da

    if isinstance(X, da.Array) and X.ndim == 2 and any(np.isnan(c) for c in X.chunks[0]):
        X = X.compute_chunk_sizes()
    parts, X = row_partitions(X)
    if isinstance(X, da.Array):
        offsets = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
        divisions = tuple(int(o) for o in offsets[:-1]) + (max(int(offsets[-1]) - 1, 0),)
        return parts, divisions, offsets
    return parts, X.divisions, None


def part_index(part, offset):
    """A partition's index: a frame's own, an array block's row positions."""
    return part.index if hasattr(part, "index") else pd.RangeIndex(offset, offset + len(part))


def take_rows(part, rows):
    return part.iloc[rows] if hasattr(part, "iloc") else part[rows]


class LazyRows:
    """What :func:`map_rows` gives: the lazy frame, and what its passes need again.

    Attributes
    ----------
    frame : dask DataFrame
    parts : list of delayed partitions
    trial : object
        The in-memory answer of the first row.
    offsets : ndarray or None
        Row offset of every partition and the total, when counted.
    client : object or None
        The resolved client of the request's passes (None: Dask's default).
    """

    def __init__(self, frame, parts, trial, offsets, client):
        self.frame, self.parts, self.trial = frame, parts, trial
        self.offsets, self.client = offsets, client


def map_rows(X, call, *, options: Options, columns_of, names_of, needs_offsets) -> LazyRows:
    """Every partition of ``X`` answered by ``call``, as a lazy frame.

    Parameters
    ----------
    call : callable ``(rows, offset, options) -> answer``
        The in-memory answer of some rows (pandas, or a block of an array)
        that start at row ``offset`` of the table.  It travels to the workers
        once (one key of the graph).
    options : Options
        ``client`` computes the request's own passes there (the first row,
        the rows per partition); ``chunk_size`` is kept for the partitions.
    columns_of : callable ``answer -> ndarray (rows, columns)``
    names_of : callable ``trial answer -> list of column names``
    needs_offsets : callable ``trial answer -> bool``
        Whether the partitions need their rows' positions (counted in one
        pass when ``X`` does not know them).
    """
    dask, dd = _import_dask()
    parts, divisions, offsets = partitions_of(X)
    client = None if options.client is None else resolve_client(options.client)
    local = Options(chunk_size=options.chunk_size, n_jobs=1, progress=False, client=None)
    job = dask.delayed(call, pure=True)
    (trial, index) = compute_on(client, dask.delayed(_trial, pure=True)(parts[0], job, local))[0]
    if trial is None:
        raise InvalidParameterError("the first partition of X has no rows; repartition it "
                                    "(X.repartition(...)) so that every partition has data.")
    names = list(names_of(trial))
    meta = pd.DataFrame(np.empty((0, len(names))), index=index, columns=names)
    if offsets is None and needs_offsets(trial):
        offsets = partition_offsets(client, parts)
    tasks = [dask.delayed(_answer_partition, pure=True)(
        part, job, 0 if offsets is None else int(offsets[i]), local, names, columns_of)
        for i, part in enumerate(parts)]
    frame = dd.from_delayed(tasks, meta=meta, divisions=divisions, verify_meta=False)
    return LazyRows(frame, parts, trial, offsets, client)


def _answer_partition(part, call, offset, options, names, columns_of):
    """On a worker: one partition's rows answered in blocks, as in memory (rows ``offset`` on)."""
    out = np.empty((len(part), len(names)))
    for a in range(0, len(part), BLOCK_ROWS):
        b = min(a + BLOCK_ROWS, len(part))
        out[a:b] = columns_of(call(take_rows(part, slice(a, b)), offset + a, options))
    return pd.DataFrame(out, index=part_index(part, offset), columns=names, copy=False)


def _trial(part, call, options):
    """The first row answered (on a worker): the request checked, its layout learned."""
    head = _first_rows(part, 1)
    if len(head) == 0:
        return None, None
    return call(head, 0, options), part_index(head, 0)[:0]
