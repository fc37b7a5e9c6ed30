"""XGBoost's UBJSON model document built from the rows of its compiled scan
(:mod:`._checks_xgboost_scan`): the trees as one :class:`~._checks_xgboost.FlatTrees`, the
rest as the Python values :class:`modellens.files._ubjson.Ubjson` reads."""

from __future__ import annotations

import numpy as np
from numba import njit

from ._checks_xgboost import FlatTrees
from ._checks_xgboost_scan import (_ARR, _CATEGORIES, _COUNT, _END, _F32, _INT, _IVAL, _KIND,
                                   _KLEN, _KOFF, _MARK, _N_ARRAYS, _NONE_READ, _NULL, _OBJ,
                                   _OFF, _PARAMS, _PARENT, _STR, _T_AT, _T_CHECK, _T_ID,
                                   _T_LENGTHS, _T_PARAMS, _TREE_ARRAYS, _TREES, _TYPED, _scan)

__all__ = ["scan_xgboost_ubjson"]


def scan_xgboost_ubjson(data, as_read=None):
    """XGBoost's UBJSON model document read by one compiled scan, its ``model.trees``
    array as a :class:`~modellens.trees.FlatTrees` and each untyped array of integers
    (``tree_info``, ``iteration_indptr``) as an int64 array (the Python reader's: a
    list); None where the scan declines it (the Python reader then reads it).
    ``as_read``: the :class:`TreesAsRead` that saw ``data`` read (the trees it read are
    not read again)."""
    buf = np.frombuffer(data, np.uint8)
    read = _NONE_READ if as_read is None else as_read.state
    rows, table, _ = _scan(buf, False, read)
    if not len(rows):
        return None
    params = {name: table[:, _T_PARAMS + j] for j, name in enumerate(_PARAMS)}
    if np.any(params["num_nodes"] < 0) or np.any(params["size_leaf_vector"] > 1):
        return None  # no node count, or vector leaves
    lengths = {name: table[:, _T_LENGTHS + j]
               for j, name in enumerate(_TREE_ARRAYS + _CATEGORIES)}
    flat = FlatTrees(ids=table[:, _T_ID], nodes=params["num_nodes"],
                     deleted=np.maximum(params["num_deleted"], 0),
                     features=params["num_feature"], lengths=lengths, data=buf,
                     at=np.ascontiguousarray(table[:, _T_AT:_T_CHECK]),
                     checked=table[:, _T_CHECK], plain=_plain(table))
    # an untyped array of integers only (tree_info: one a tree) is made at once, as the
    # int64 array the checks read (a list of a Python int each, which they read back
    # into one, cost a tenth of the scan's Python)
    whole, keep = _int_arrays(rows)
    lists = {r: rows[r + 1:rows[r, _END], _IVAL].copy() for r in whole.tolist()}
    return _document(rows[keep].tolist(), np.flatnonzero(keep).tolist(), flat, lists, data)


@njit(cache=True)
def _plain(table):  # pragma: no cover - compiled
    """Whether each tree of ``table`` (:func:`_tree_list`) is laid out as XGBoost writes it:
    the id of its position, 1 to 2**31 - 1 nodes, each array of :data:`_TREE_ARRAYS` that
    long and none of :data:`_CATEGORIES` listed (fourteen numpy passes over the table's
    columns cost a tenth of a millisecond; ``_check_flat_trees`` names any fault)."""
    for m in range(len(table)):
        n = table[m, _T_PARAMS]
        if table[m, _T_ID] != m or n <= 0 or n >= 2 ** 31:
            return False
        for j in range(_N_ARRAYS + len(_CATEGORIES)):
            if table[m, _T_LENGTHS + j] != (n if j < _N_ARRAYS else 0):
                return False
    return True


@njit(cache=True)
def _int_arrays(rows):  # pragma: no cover - compiled
    """The rows of the untyped arrays holding integers only, at least one (their values:
    the rows after each, up to its end, a scalar's row its own), and which rows are
    kept, theirs left out (numpy's bincounts and isin over the rows: a tenth of the
    scan's Python)."""
    n = len(rows)
    held, ints, keep = np.zeros(n, np.int64), np.zeros(n, np.int64), np.ones(n, np.bool_)
    for r in range(n):
        p = rows[r, _PARENT]
        if p >= 0 and rows[p, _KIND] == _ARR:
            held[p] += 1
            ints[p] += rows[r, _KIND] == _INT
    whole = np.flatnonzero((rows[:, _KIND] == _ARR) & (held == ints) & (ints > 0))
    for a in whole:
        keep[a + 1:rows[a, _END]] = False
    return whole, keep


def _document(rows, index, flat, lists, data):
    """The document from its rows (``index``: their numbers), its trees array ``flat``,
    the arrays of integers ``lists`` (by row, int64; their rows left out)."""
    made: dict = {}
    root = None
    for r, row in zip(index, rows):
        kind = row[_KIND]
        if kind == _OBJ:
            value: object = {}
        elif kind == _ARR:
            value = lists.get(r, [])
        elif kind == _TREES:
            value = flat
        elif kind == _STR:
            value = data[row[_OFF]:row[_OFF] + row[_COUNT]].decode("ascii")
        elif kind == _INT:
            value = row[_IVAL]
        elif kind == _F32:
            value = float(np.frombuffer(data, ">f4", 1, row[_OFF])[0])
        elif kind == _TYPED:
            dtype = np.dtype(_DTYPES[row[_MARK]])
            value = np.frombuffer(data, dtype, row[_COUNT], row[_OFF]) \
                .astype(dtype.newbyteorder("="))
        else:
            value = None if kind == _NULL else True
        if kind in (_OBJ, _ARR):
            made[r] = value
        into = made.get(row[_PARENT]) if row[_PARENT] >= 0 else None
        if row[_PARENT] < 0:
            root = value
        elif isinstance(into, dict):
            into[data[row[_KOFF]:row[_KOFF] + row[_KLEN]].decode("ascii")] = value
        elif isinstance(into, list):
            into.append(value)
    return root


#: numpy's reading of each number marker.
_DTYPES = {ord("i"): ">i1", ord("U"): ">u1", ord("I"): ">i2", ord("l"): ">i4",
           ord("L"): ">i8", ord("d"): ">f4"}
