"""One compiled pass over the UBJSON XGBoost writes: the structure checked, no value built.

:class:`modellens.files._ubjson.Ubjson` builds a Python object per value and a numpy array
per typed array (35-85 µs a tree, ten times XGBoost's own reading).  Here
:func:`_scan` walks the bytes once, typed arrays skipped in O(1), and records
one row per value (its kind, parent, key, where its bytes lie).  It takes only
what XGBoost writes and ``Ubjson`` reads as canonical (its binary reader reads
those bytes as that very document): containers untyped, or typed arrays of
numbers, counts and lengths in int64; ASCII keys and strings; every count
bounded by the bytes left, untyped arrays by ``Ubjson``'s bound, nesting by its
depth, keys once per object.  Anything else is declined (None), never refused:
the Python reader then reads the file as before and names what is wrong.

:func:`scan_xgboost_ubjson` builds the document from the rows but for its
trees: each ``model.trees`` array becomes one :class:`FlatTrees`
(where every tree's node arrays lie in the bytes), so the checks run on
all trees at once, in place.  Trees XGBoost writes
otherwise than plainly (vector leaves, categorical splits, keys it does not
write, numbers as strings it would not write) are declined too.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._checks_xgboost import FLAT_ARRAYS, FlatTrees

__all__ = ["scan_xgboost_ubjson"]

# the columns of a row
_KIND, _PARENT, _KEY, _OFF, _COUNT, _IVAL, _MARK, _KOFF, _KLEN, _END = range(10)
_WIDTH = 10
# kinds of value
_OBJ, _ARR, _STR, _NULL, _TRUE, _INT, _F32, _TYPED = range(8)

_TREE_ARRAYS = ("left_children", "right_children", "parents", "split_indices", "split_type",
                "split_conditions", "default_left", "loss_changes", "sum_hessian",
                "base_weights")
_CATEGORIES = ("categories", "categories_nodes", "categories_segments", "categories_sizes")
_PARAMS = ("num_nodes", "num_deleted", "num_feature", "size_leaf_vector")
#: The keys given an id (their position), the others -1 (and -2 for an array's element).
_NAMES = _TREE_ARRAYS + _CATEGORIES + ("id", "tree_param") + _PARAMS + ("trees", "model")
_ID = {name: i for i, name in enumerate(_NAMES)}
_N_TREE_KEYS = len(_TREE_ARRAYS) + len(_CATEGORIES) + 2
_NAME_BYTES = np.frombuffer("".join(_NAMES).encode("ascii"), np.uint8)
_NAME_STARTS = np.cumsum([0] + [len(n) for n in _NAMES]).astype(np.int64)

#: Longest untyped array taken (``Ubjson``'s bound), deepest value (its depth bound).
_MAX_UNTYPED = 2 ** 20
_MAX_DEPTH = 64
#: Keys per object compared one by one (those without an id): more, and it is declined.
_MAX_OTHER_KEYS = 64


@njit(cache=True)
def _size(marker):  # pragma: no cover - compiled
    """Bytes of a number marker's value (0: not a marker taken)."""
    if marker == 105 or marker == 85:  # i U
        return 1
    if marker == 73:  # I
        return 2
    if marker == 108 or marker == 100:  # l d
        return 4
    if marker == 76:  # L
        return 8
    return 0


@njit(cache=True)
def _int(data, pos, marker):  # pragma: no cover - compiled
    """The big-endian integer of ``marker`` at ``pos`` (a float32's bits for ``d``)."""
    size = _size(marker)
    v = np.int64(0)
    for j in range(size):
        v = (v << 8) | np.int64(data[pos + j])
    if marker != 85 and marker != 100 and size < 8 and v >= (np.int64(1) << (8 * size - 1)):
        v -= np.int64(1) << (8 * size)
    return v


@njit(cache=True)
def _length(data, pos):  # pragma: no cover - compiled
    """An int64 length at ``pos`` (an ``L`` marker first): -1 where it is not one, or past the
    bytes after it."""
    if pos + 9 > len(data) or data[pos] != 76:
        return -1
    n = _int(data, pos + 1, 76)
    if n < 0 or n > len(data) - pos - 9:
        return -1
    return n


@njit(cache=True)
def _key_id(data, at, n, names, starts):  # pragma: no cover - compiled
    for k in range(len(starts) - 1):
        if starts[k + 1] - starts[k] != n:
            continue
        same = True
        for j in range(n):
            if data[at + j] != names[starts[k] + j]:
                same = False
                break
        if same:
            return k
    return -1


@njit(cache=True)
def _ascii(data, at, n):  # pragma: no cover - compiled
    for j in range(at, at + n):
        if data[j] >= 128:
            return False
    return True


@njit(cache=True)
def _same_key(data, rows, a, b):  # pragma: no cover - compiled
    n = rows[a, 8]
    if rows[b, 8] != n:
        return False
    for j in range(n):
        if data[rows[a, 7] + j] != data[rows[b, 7] + j]:
            return False
    return True


@njit(cache=True)
def _scalar(data, pos, marker, row):  # pragma: no cover - compiled
    """Read the value of ``marker`` (not a container) at ``pos`` into ``row``: the position
    after it, or -1 (declined)."""
    if marker == 83:  # S
        n = _length(data, pos)
        if n < 0 or not _ascii(data, pos + 9, n):
            return -1
        row[0], row[3], row[4], row[5] = 2, pos + 9, n, -1
        if 0 < n <= 18:  # a number written as text, as XGBoost writes its parameters
            v = np.int64(0)
            for j in range(pos + 9, pos + 9 + n):
                if data[j] < 48 or data[j] > 57:
                    v = np.int64(-1)
                    break
                v = 10 * v + (data[j] - 48)
            row[5] = v
        return pos + 9 + n
    if marker == 90 or marker == 84:  # Z T
        row[0] = 3 if marker == 90 else 4
        return pos
    if _size(marker) > 0 and pos + _size(marker) <= len(data):
        row[0], row[3], row[4] = 6 if marker == 100 else 5, pos, 0
        row[5] = _int(data, pos, marker)
        return pos + _size(marker)
    return -1  # D, F, C, H, N and the rest: the Python reader decides


@njit(cache=True)
def _open(data, pos, marker, row):  # pragma: no cover - compiled
    """Read a container's head (``marker`` read, ``pos`` after it) into ``row``: the
    position after the head (a typed array: after its values) and the count of values to
    read (-1: until the bracket; 0 for a typed array, read whole); position -1: declined."""
    row[0] = 0 if marker == 123 else 1
    if pos >= len(data) or (data[pos] != 36 and data[pos] != 35):  # neither $ nor #
        return pos, -1
    if marker == 123:
        return -1, 0  # XGBoost writes no typed or counted object
    if data[pos] == 35:  # #: a counted array
        count = _length(data, pos + 1)
        return (pos + 10, count) if 0 <= count <= _MAX_UNTYPED else (-1, 0)
    if pos + 2 >= len(data) or _size(data[pos + 1]) == 0 or data[pos + 2] != 35:
        return -1, 0  # a typed array of what costs no bytes, or of float64
    size = _size(data[pos + 1])
    count = _length(data, pos + 3)
    if count < 0 or count > (len(data) - pos - 12) // size:
        return -1, 0
    row[0], row[3], row[4], row[6] = 7, pos + 12, count, data[pos + 1]
    return pos + 12 + count * size, 0


@njit(cache=True)
def _new_key(data, rows, r, others, n_others):  # pragma: no cover - compiled
    """Whether row ``r``'s key (one without an id) differs from its object's others so far
    (``others[:n_others]``)."""
    for j in range(n_others):
        if _same_key(data, rows, others[j], r):
            return False
    return True


@njit(cache=True)
def _scan(data, names, starts):  # pragma: no cover - compiled
    """The rows of ``data``'s values in document order, or an empty table (declined)."""
    none = np.zeros((0, 10), np.int64)
    rows = np.zeros((4096, 10), np.int64)
    n_rows, pos, end, depth, values_left = 0, 0, len(data), 0, len(data)
    stack = np.zeros(_MAX_DEPTH + 2, np.int64)  # the open containers' rows
    left = np.zeros(_MAX_DEPTH + 2, np.int64)  # items still to read (-1: until the bracket)
    seen = np.zeros(_MAX_DEPTH + 2, np.int64)  # keys with an id seen in each object (bits)
    others = np.zeros((_MAX_DEPTH + 2, _MAX_OTHER_KEYS), np.int64)  # rows of the other keys
    n_others = np.zeros(_MAX_DEPTH + 2, np.int64)
    while True:
        key, koff, klen = -2, 0, 0
        if depth > 0:
            top, at = stack[depth - 1], depth - 1
            is_obj = rows[top, 0] == 0
            if left[at] == 0 or (left[at] < 0 and pos < end
                                 and data[pos] == (125 if is_obj else 93)):
                pos += left[at] < 0  # the closing bracket (a counted array has none)
                rows[top, 9], depth = n_rows, depth - 1
                if depth == 0:
                    break
                continue
            if left[at] > 0:
                left[at] -= 1
            elif not is_obj:
                rows[top, 4] += 1
                if rows[top, 4] > _MAX_UNTYPED:
                    return none
            if is_obj:
                klen = _length(data, pos)
                if klen < 0 or not _ascii(data, pos + 9, klen):
                    return none
                koff, pos = pos + 9, pos + 9 + klen
                key = _key_id(data, koff, klen, names, starts)
                if key >= 0 and seen[at] & (np.int64(1) << key):
                    return none
                seen[at] |= (np.int64(1) << key) if key >= 0 else 0
        if depth > _MAX_DEPTH or pos >= end:
            return none
        if n_rows == len(rows):
            grown = np.zeros((2 * len(rows), 10), np.int64)
            grown[:n_rows] = rows
            rows = grown
        r, n_rows = n_rows, n_rows + 1
        rows[r, 1] = stack[depth - 1] if depth > 0 else -1
        rows[r, 2], rows[r, 7], rows[r, 8], rows[r, 9] = key, koff, klen, r + 1
        if key == -1:  # a key without an id: compared with its object's other such keys
            if n_others[depth - 1] == _MAX_OTHER_KEYS or \
                    not _new_key(data, rows, r, others[depth - 1], n_others[depth - 1]):
                return none
            others[depth - 1, n_others[depth - 1]] = r
            n_others[depth - 1] += 1
        marker = data[pos]
        if marker == 123 or marker == 91:  # { [
            pos, count = _open(data, pos + 1, marker, rows[r])
            values_left -= count if count > 0 else rows[r, 4]
            if pos < 0 or values_left < 0:
                return none
            if rows[r, 0] != 7:
                stack[depth], left[depth], seen[depth], n_others[depth] = r, count, 0, 0
                depth += 1
                continue
        else:
            pos = _scalar(data, pos + 1, marker, rows[r])
            if pos < 0:
                return none
        if depth == 0:
            break
    return rows[:n_rows] if pos == end else none


def scan_xgboost_ubjson(data):
    """XGBoost's UBJSON model document read by one compiled scan, each ``model.trees``
    array as a :class:`~modellens.trees.FlatTrees`; None where the scan declines it (the
    Python reader then reads it)."""
    buf = np.frombuffer(data, np.uint8)
    rows = _scan(buf, _NAME_BYTES, _NAME_STARTS)
    if not len(rows):
        return None
    kind, parent, key, end = rows[:, _KIND], rows[:, _PARENT], rows[:, _KEY], rows[:, _END]
    # the trees arrays: an untyped array named trees in an object named model
    holders = np.flatnonzero((kind == _ARR) & (key == _ID["trees"])
                             & (key[np.maximum(parent, 0)] == _ID["model"]) & (parent >= 0))
    flat = {}
    keep = np.ones(len(rows), bool)
    for at in holders.tolist():
        trees = _flat_trees(rows, at, buf)
        if trees is None:
            return None
        flat[at] = trees
        keep[at + 1:end[at]] = False
    return _document(rows[keep].tolist(), np.flatnonzero(keep).tolist(), flat, data)


def _document(rows, index, flat, data):
    """The document from its rows (a tree array's from ``flat``, its rows left out)."""
    made: dict = {}
    root = None
    for r, row in zip(index, rows):
        kind = row[_KIND]
        if kind == _OBJ:
            value: object = {}
        elif kind == _ARR:
            value = flat.get(r, [])
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
#: The element type XGBoost writes each node array the checks read in.
_FLAT_MARKS = {name: ord("U" if name == "split_type" else "d" if name == "split_conditions"
                         else "l") for name in FLAT_ARRAYS}


def _flat_trees(rows, at, buf):
    """The trees in the array at row ``at``, as a FlatTrees; None where one is not plain."""
    kind, parent, key = rows[:, _KIND], rows[:, _PARENT], rows[:, _KEY]
    lo, hi = at + 1, int(rows[at, _END])
    trees = np.flatnonzero(parent[lo:hi] == at) + lo
    m = len(trees)
    if np.any(kind[trees] != _OBJ):
        return None
    tree_of = np.full(len(rows), -1, np.int64)
    tree_of[trees] = np.arange(m)
    child = np.flatnonzero(tree_of[parent[lo:hi]] >= 0) + lo
    if np.any((key[child] < 0) | (key[child] >= _N_TREE_KEYS)):
        return None  # a key XGBoost does not write in a tree (leaf_weights: vector leaves)

    def one_each(name):
        found = child[key[child] == _ID[name]]
        return found if len(found) == m and np.array_equal(tree_of[parent[found]],
                                                           np.arange(m)) else None

    at, lengths = np.empty((m, len(FLAT_ARRAYS)), np.int64), {}
    for name in _TREE_ARRAYS + _CATEGORIES:
        found = one_each(name)
        if found is None or np.any(kind[found] != _TYPED):
            return None
        lengths[name] = rows[found, _COUNT]
        if name in _CATEGORIES and np.any(lengths[name]):
            return None  # categorical splits: the Python reader's document is checked
        if name in FLAT_ARRAYS:
            if np.any(rows[found, _MARK] != _FLAT_MARKS[name]):
                return None  # not as XGBoost writes it
            at[:, FLAT_ARRAYS.index(name)] = rows[found, _OFF]
    ids, param = one_each("id"), one_each("tree_param")
    if ids is None or param is None or np.any(kind[ids] != _INT) or \
            np.any(kind[param] != _OBJ):
        return None
    param_of = np.full(len(rows), -1, np.int64)
    param_of[param] = np.arange(m)
    entry = np.flatnonzero(param_of[parent[lo:hi]] >= 0) + lo
    values = {}
    for name in _PARAMS:
        found = entry[key[entry] == _ID[name]]
        if np.any(kind[found] != _STR) or np.any(rows[found, _IVAL] < 0):
            return None
        values[name] = np.full(m, -1, np.int64)
        values[name][param_of[parent[found]]] = rows[found, _IVAL]
    if len(entry) != sum(np.isin(key[entry], [_ID[p] for p in _PARAMS])) or \
            np.any(values["num_nodes"] < 0) or np.any(values["size_leaf_vector"] > 1):
        return None  # another parameter, no node count, or vector leaves
    return FlatTrees(ids=rows[ids, _IVAL], nodes=values["num_nodes"],
                     deleted=np.maximum(values["num_deleted"], 0),
                     features=values["num_feature"], lengths=lengths, data=buf, at=at)
