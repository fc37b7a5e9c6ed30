"""The rows of a Dask table on the one Dask driver: partitions, their maps, lazy rows.

The second half of the driver (:mod:`._dask` ships requests and evaluates the
engine's chunks on a cluster): the summarising plans of each partition of a
table run through :func:`map_partitions` (which ``OutOfCore`` calls), and the
answers of one row per row (local attributions, ``ml.predict``) are mapped lazily
by :func:`map_rows`; both reach a cluster through :mod:`._dask`'s ordered window.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._config import Options
from .._validation import InvalidParameterError
from ..data import Dataset
from ..models import ModelError
from ._dask import _Ordered, lost_on_cluster, open_shipped, resolve_client

__all__ = ["is_dask_input", "import_dask", "partition_options", "partition_note",
           "row_partitions", "first_rows", "compute_on", "partition_offsets", "map_partitions",
           "PartitionFailed", "BLOCK_ROWS", "LazyRows", "map_rows", "partitions_of", "part_index",
           "take_rows"]


# ------------------------------------------------------------------ partitions
def is_dask_input(X) -> bool:
    """A Dask DataFrame, Series or array (recognised without importing Dask)."""
    return hasattr(X, "__dask_graph__") and (hasattr(X, "npartitions") or hasattr(X, "chunks"))


def import_dask():
    """``dask`` and ``dask.dataframe``, or an ImportError that names the extra to install."""
    try:
        import dask
        import dask.dataframe as dd
    except ImportError as exc:
        raise ImportError("Dask input needs dask[dataframe], which is not installed; install "
                          "the extra: pip install \"modellens[dask]\"") from exc
    return dask, dd


def partition_options(options: Options) -> Options:
    """The engine's options inside a partition: one thread, no bar, ``chunk_size`` kept.

    The partitions are the parallelism (one task each); a fixed ``chunk_size``
    bounds a worker's memory, else the engine tunes its chunks under its cap.
    """
    return Options(chunk_size=options.chunk_size, n_jobs=1, progress=False)


def row_partitions(X):
    """The partitions of ``X`` (delayed, whole rows each), and ``X`` as they cut it.

    A Dask Series becomes a one-column frame; a 2-D Dask array is rechunked so
    that each block holds whole rows, and its blocks of rows are its partitions.
    """
    import dask.array as da

    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise InvalidParameterError(f"a Dask array X must be 2-D, got {X.ndim}-D.")
        X = X.rechunk({1: -1})  # whole rows in every block
        return list(X.to_delayed().ravel()), X
    if X.ndim == 1:
        X = X.to_frame()
    return list(X.to_delayed()), X


def compute_on(client, *collections) -> tuple:
    """Dask collections computed on ``client``'s cluster (``None``: Dask's default scheduler).

    A worker lost for good on the way is our ``ModelError`` (``lost_on_cluster``).
    """
    if client is None:
        dask, _ = import_dask()
        return tuple(dask.compute(*collections))
    with lost_on_cluster("a pass over X"):
        return tuple(client.gather(client.compute(list(collections))))


def partition_offsets(client, parts) -> np.ndarray:
    """Row offset of every partition, and the total, ``(len(parts) + 1,)`` (one pass)."""
    dask, _ = import_dask()
    lengths = compute_on(client, *[dask.delayed(len)(p) for p in parts])
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.intp)


def first_rows(parts, n: int):
    """The first ``n`` rows of the first partition (of :func:`row_partitions`), computed.

    Only that partition is read; an empty one is refused, since what the
    request learns from these rows (the schema, the model's answer) would be
    missing.
    """
    dask, _ = import_dask()
    head = dask.delayed(_first_rows)(parts[0], n).compute()
    if len(head) == 0:
        raise _empty_first()
    return head


def _empty_first():
    return InvalidParameterError("the first partition of X has no rows; repartition it "
                                 "(X.repartition(...)) so that every partition has data.")


def _first_rows(part, n):
    return part.iloc[:n] if hasattr(part, "iloc") else part[:n]


class PartitionFailed(Exception):
    """A partition's call failed: ``(error, index)``; the driver names its rows."""


def partition_note(error, index: int, n_parts: int, offsets) -> BaseException:
    """``error`` with a note naming partition ``index`` and its rows (``offsets``: a callable)."""
    try:
        at = offsets()
        rows = f"rows {at[index]:,} to {at[index + 1] - 1:,} of X (by position)"
    except Exception:  # noqa: BLE001 - the partition's number is still said
        rows = "its rows could not be counted"
    error.add_note(f"while evaluating partition {index} of {n_parts} of X ({rows}); "
                   f"X.partitions[{index}].compute() gives its rows to try the model on.")
    return error


def map_partitions(parts, fn, *args, schema, model, client, store, offsets) -> list:
    """``fn(values, model, index, *args)`` on every encoded partition, in partition order.

    Parameters
    ----------
    parts : list of delayed partitions (:func:`row_partitions`)
    schema : Dataset
        Each partition is encoded with it (the whole table's levels).
    model : Model or None
        Shipped once to the cluster (None: ``fn`` needs no model).
    client, store
        The resolved client (None: Dask's default scheduler) and the
        ``ml.config`` block's store.
    offsets : callable
        The partitions' row offsets, read only to name a failing partition.

    A partition whose call fails raises its error with a note naming the
    partition and its rows; a worker lost for good raises ``ModelError``.
    """
    dask, _ = import_dask()
    try:
        if client is None:
            return list(dask.compute(*[
                dask.delayed(_encoded_call, pure=False)(part, schema, fn, model, None, i, *args)
                for i, part in enumerate(parts)]))
        out: list = []

        def submit(skeleton, shared, item):
            i, part = item
            return client.compute(dask.delayed(_encoded_call, pure=False)(
                part, schema, fn, skeleton, shared if skeleton is not None else None, i, *args))

        job = _Ordered(client, store, model, getattr(model, "model", None), submit)
        job.run(enumerate(parts), lambda item, answer: out.append(answer), "the partitions of X")
        return out
    except PartitionFailed as failed:
        error, index = failed.args
        raise partition_note(error, index, len(parts), offsets) from None


def _encoded_call(part, schema, fn, model, shared, index, *args):
    if shared is not None:
        model = open_shipped(model, shared)
    try:
        if len(part):
            encoded = Dataset.from_data(part, feature_names=schema.feature_names, like=schema)
            _same_kinds(encoded, schema)
            _same_dtypes(part, schema)
            values = encoded.values
        else:
            values = np.empty((0, len(schema.columns)))
        return fn(values, model, index, *args)
    except Exception as exc:
        raise PartitionFailed(exc, index) from exc


# ------------------------------------------------------- lazy answers per row
#: Rows of a partition answered at once: the working memory of a partition follows it.
BLOCK_ROWS = 32_768


def _same_dtypes(part, schema) -> None:
    """A frame partition's columns numeric where the table's are, and only there.

    Read with the table's schema, a numeric partition column under a text column of
    the first rows would be matched to the text's levels (and a text one under a
    numeric column read as levels, which :func:`_same_kinds` finds): the model would
    get other values than the partition holds.
    """
    from pandas.api.types import is_numeric_dtype

    dtypes = getattr(part, "dtypes", None)
    if dtypes is None:
        return  # an array block: one dtype, checked by its encoding
    for column in schema.columns:
        if column.dtype is None or column.name not in dtypes.index:
            continue
        mine, theirs = dtypes[column.name], column.dtype
        if is_numeric_dtype(mine) != is_numeric_dtype(theirs) and part[column.name].notna().any():
            raise _not_the_schema(column.name, mine, theirs)


def _same_kinds(encoded, schema) -> None:
    """A partition read as the table's schema reads it: the same kind of every column.

    Dask trusts each partition to have the table's dtypes (``from_delayed(...,
    verify_meta=False)``, ``map_partitions``); a partition whose numeric column
    holds text was read as level codes, a silently different answer.  A column
    with no value in the partition passes.
    """
    for j, (mine, theirs) in enumerate(zip(encoded.columns, schema.columns)):
        # (a column with no value in this partition has no kind of its own)
        if mine.kind != theirs.kind and not np.isnan(encoded.values[:, j]).all():
            raise _not_the_schema(theirs.name, mine.kind, theirs.kind)


def _not_the_schema(name, mine, theirs) -> InvalidParameterError:
    """The refusal of a partition whose column ``name`` is ``mine`` where the table's
    first rows make it ``theirs``."""
    return InvalidParameterError(
        f"a partition of X does not have the table's schema: its column {name!r} is "
        f"{mine} where the table's first rows make it {theirs}; give every partition the "
        f"same dtypes (e.g. X.astype(...) or dd.from_delayed(..., meta=...) with "
        f"verify_meta=True).")


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

    The partitions run ``call`` under :func:`partition_options`, in blocks of
    :data:`BLOCK_ROWS` rows; the first row is answered at the call, where it
    lies, so a bad option or a failing model is an error then, not when the
    frame is computed (it also gives the frame's columns).  A partition that
    fails when the frame is computed raises its error with a note naming the
    partition (and its rows when their positions were counted).

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
    dask, dd = import_dask()
    parts, divisions, offsets = partitions_of(X)
    client = None if options.client is None else resolve_client(options.client)
    local = partition_options(options)
    job = dask.delayed(call, pure=True)
    (trial, index) = compute_on(client, dask.delayed(_trial, pure=True)(parts[0], job, local))[0]
    if trial is None:
        raise _empty_first()
    names = list(names_of(trial))
    meta = pd.DataFrame(np.empty((0, len(names))), index=index, columns=names)
    if offsets is None and needs_offsets(trial):
        offsets = partition_offsets(client, parts)
    tasks = [dask.delayed(_answer_partition, pure=True)(
        part, job, 0 if offsets is None else int(offsets[i]), local, names, columns_of,
        (i, len(parts), offsets))
        for i, part in enumerate(parts)]
    frame = dd.from_delayed(tasks, meta=meta, divisions=divisions, verify_meta=False)
    return LazyRows(frame, parts, trial, offsets, client)


def _answer_partition(part, call, offset, options, names, columns_of, where):
    """On a worker: one partition's rows answered in blocks, as in memory (rows ``offset`` on)."""
    out = np.empty((len(part), len(names)))
    try:
        for a in range(0, len(part), BLOCK_ROWS):
            b = min(a + BLOCK_ROWS, len(part))
            out[a:b] = columns_of(call(take_rows(part, slice(a, b)), offset + a, options))
    except Exception as exc:
        index, n_parts, offsets = where
        if offsets is None:
            exc.add_note(f"while evaluating partition {index} of {n_parts} of X; "
                         f"X.partitions[{index}].compute() gives its rows to try the model on.")
        else:
            partition_note(exc, index, n_parts, lambda: offsets)
        raise
    return pd.DataFrame(out, index=part_index(part, offset), columns=names, copy=False)


def _trial(part, call, options):
    """The first row answered (on a worker): the request checked, its layout learned."""
    head = _first_rows(part, 1)
    if len(head) == 0:
        return None, None
    return call(head, 0, options), part_index(head, 0)[:0]
