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

A ``model.trees`` array (untyped, in an object named ``model``) is read by
:func:`_tree_list` instead: one row of :data:`_TREE_COLUMNS` per tree (its id,
``tree_param``, each array's length and where the checked node arrays' values
lie), no row per value, so a tree costs a microsecond or two (a tree laid out byte for
byte as XGBoost writes it: its keys compared where they must lie,
:func:`_tree_as_written`; any other, key by key, :func:`_tree`).  Only plain trees,
as XGBoost writes them, are taken: every one of their keys once and no other, the
node arrays typed as XGBoost types them, no category listed, ``tree_param`` of
decimal strings, scalar leaves.  Anything else (vector leaves, categorical
splits, keys or element types it does not write) declines the whole document.
:func:`~._checks_xgboost_doc.scan_xgboost_ubjson` builds the document from the
rows, the trees array as one :class:`FlatTrees`, so the checks run on all trees at once,
in place.  :class:`TreesAsRead` reads the trees as the file is read.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._checks import MAX_TREE_DEPTH
from ._bytes import _borrowed, _i16, _i32, _i64, _prefetch
from ._checks_xgboost import FLAT_ARRAYS, FlatTrees, _tree_nodes

__all__ = ["TreesAsRead"]

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


def _word(name: bytes) -> int:
    """The big-endian int64 of ``name``'s first 8 bytes (zeros after a shorter one): a key
    compared 8 bytes at a time (:func:`_is_key`), as :func:`~._bytes._i64` reads
    them."""
    return int.from_bytes(name[:8].ljust(8, b"\0"), "big", signed=True)


#: Each name's length, and its bytes as words: the first 8, the next 8, the last 8.
_KEY_LEN = np.array([len(name) for name in _NAMES], np.int64)
_KEY_HEAD = np.array([_word(name.encode("ascii")) for name in _NAMES], np.int64)
_KEY_MID = np.array([_word(name.encode("ascii")[8:]) for name in _NAMES], np.int64)
_KEY_TAIL = np.array([_word(name.encode("ascii")[-8:]) for name in _NAMES], np.int64)
assert _KEY_LEN.max() <= 24  # three words cover every name

#: Longest untyped array taken (``Ubjson``'s bound), deepest value (its depth bound).
_MAX_UNTYPED = 2 ** 20
_MAX_DEPTH = 64
#: Bytes asked into the cache ahead of the tree being read (a few trees of 300 nodes).
_AHEAD = 1 << 15
#: Keys per object compared one by one (those without an id): more, and it is declined.
_MAX_OTHER_KEYS = 64

#: A trees array's row kind (its trees in the table :func:`_scan` returns with the rows).
_TREES = 8
#: The columns of a tree's row in that table: its id, its ``tree_param`` (-1 where
#: absent), each of :data:`_TREE_ARRAYS` + :data:`_CATEGORIES`' length, where the
#: values of each of :data:`FLAT_ARRAYS` begin, and its node checks' answer
#: (:func:`_nodes_checked`).
_T_ID, _T_PARAMS, _T_LENGTHS = 0, 1, 1 + len(_PARAMS)
_T_AT = _T_LENGTHS + len(_TREE_ARRAYS) + len(_CATEGORIES)
_T_CHECK = _T_AT + len(FLAT_ARRAYS)
_TREE_COLUMNS = _T_CHECK + 1
#: The element marker XGBoost writes each array of a tree with.
_MARKERS = {name: "d" if name in ("base_weights", "loss_changes", "split_conditions",
                                  "sum_hessian")
            else "U" if name in ("default_left", "split_type")
            else "L" if name in ("categories_segments", "categories_sizes") else "l"
            for name in _TREE_ARRAYS + _CATEGORIES}
#: Those of :data:`FLAT_ARRAYS` (the first keys), the only ones the scan requires.
_FLAT_MARKERS = np.array([ord(_MARKERS[name]) for name in FLAT_ARRAYS], np.int64)
assert _TREE_ARRAYS[:len(FLAT_ARRAYS)] == FLAT_ARRAYS
_N_FLAT, _N_ARRAYS, _N_PARAMS = len(FLAT_ARRAYS), len(_TREE_ARRAYS), len(_PARAMS)
_ID_ID, _ID_PARAM, _FIRST_PARAM = _ID["id"], _ID["tree_param"], _ID[_PARAMS[0]]
_ID_TREES, _ID_MODEL = _ID["trees"], _ID["model"]
#: XGBoost writes a tree's keys, and its tree_param's, in sorted order: the id of the key
#: it writes after each (-1: the last), and of each group's first, tried before the others.
_NEXT_KEY = np.full(len(_NAMES), -1, np.int64)
for _group in (_TREE_ARRAYS + _CATEGORIES + ("id", "tree_param"), _PARAMS):
    _order = [_ID[name] for name in sorted(_group)]
    _NEXT_KEY[_order[:-1]] = _order[1:]
_FIRST_TREE_KEY = _ID[min(_TREE_ARRAYS + _CATEGORIES + ("id", "tree_param"))]
_FIRST_PARAM_KEY = _ID[min(_PARAMS)]


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def _int(data, pos, marker):  # pragma: no cover - compiled
    """The big-endian integer of ``marker`` at ``pos`` (a float32's bits for ``d``): one
    load each (:func:`~._bytes._i32`)."""
    if marker == 105:  # i
        return np.int64(np.int8(data[pos]))
    if marker == 85:  # U
        return np.int64(data[pos])
    if marker == 73:  # I
        return _i16(data, pos)
    if marker == 108:  # l
        return _i32(data, pos)
    if marker == 100:  # d: the bits unsigned
        return _i32(data, pos) & 0xFFFFFFFF
    return _i64(data, pos) if marker == 76 else np.int64(0)  # L


@njit(cache=True, inline="always")
def _length(data, pos):  # pragma: no cover - compiled
    """An int64 length at ``pos`` (an ``L`` marker first): -1 where it is not one, or past the
    bytes after it."""
    if pos + 9 > len(data) or data[pos] != 76:
        return -1
    n = _int(data, pos + 1, 76)
    if n < 0 or n > len(data) - pos - 9:
        return -1
    return n


@njit(cache=True, inline="always")
def _is_key(data, at, n, k):  # pragma: no cover - compiled
    """Whether the ``n`` bytes at ``at`` are the name of id ``k``: a name of 8 bytes or more
    as its first, last and (past 16) middle 8 bytes, one load each (a byte loop cost 60 ns
    a key), a shorter one byte by byte.  The caller keeps ``at + n`` inside ``data``."""
    if _KEY_LEN[k] != n:
        return False
    if n >= 8:
        return _i64(data, at) == _KEY_HEAD[k] and _i64(data, at + n - 8) == _KEY_TAIL[k] \
            and (n <= 16 or _i64(data, at + 8) == _KEY_MID[k])
    for j in range(n):
        if data[at + j] != (_KEY_HEAD[k] >> (56 - 8 * j)) & 0xFF:
            return False
    return True


@njit(cache=True, inline="always")
def _key_id(data, at, n):  # pragma: no cover - compiled
    for k in range(len(_KEY_LEN)):
        if _is_key(data, at, n, k):
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
        row[0], row[3], row[4] = 2, pos + 9, n
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


@njit(cache=True, inline="always")
def _decimal(data, pos):  # pragma: no cover - compiled
    """The ``S`` string at ``pos`` (its marker) holding 1 to 18 decimal digits: its value
    and the position after it; value -1 where it is not one (declined)."""
    if pos >= len(data) or data[pos] != 83:  # S
        return -1, pos
    n = _length(data, pos + 1)
    if n <= 0 or n > 18:
        return -1, pos
    v = np.int64(0)
    for j in range(pos + 10, pos + 10 + n):
        if data[j] < 48 or data[j] > 57:
            return -1, pos
        v = 10 * v + (data[j] - 48)
    return v, pos + 10 + n


@njit(cache=True, inline="always")
def _tree_key(data, pos, first, stop, seen, hint):  # pragma: no cover
    """The key at ``pos`` as its id less ``first`` (one of ids ``first..stop-1``, not in
    the bits ``seen``) and the position after it; -1 where it is another (declined).
    The id ``hint`` (the key XGBoost writes next) is tried before the others."""
    n = _length(data, pos)
    if n < 0:
        return -1, pos
    key = (hint if hint >= 0 and _is_key(data, pos + 9, n, hint)
           else _key_id(data, pos + 9, n)) - first
    if key < 0 or key >= stop - first or seen & (np.int64(1) << key):
        return -1, pos
    return key, pos + 9 + n


@njit(cache=True, inline="always")
def _tree_param(data, pos, row):  # pragma: no cover - compiled
    """A tree's ``tree_param`` object (``{`` read) into ``row``: each of :data:`_PARAMS`
    at most once, and no other key, each a string of decimal digits.  The position after
    its ``}``, or -1 (declined)."""
    seen, hint = np.int64(0), _FIRST_PARAM_KEY
    while pos < len(data) and data[pos] != 125:  # }
        j, pos = _tree_key(data, pos, _FIRST_PARAM, _FIRST_PARAM + _N_PARAMS,
                           seen, hint)
        if j < 0:
            return -1
        seen, hint = seen | (np.int64(1) << j), _NEXT_KEY[_FIRST_PARAM + j]
        row[_T_PARAMS + j], pos = _decimal(data, pos)
        if row[_T_PARAMS + j] < 0:
            return -1
    return pos + 1 if pos < len(data) else -1


@njit(cache=True, inline="always")
def _tree(data, pos, row):  # pragma: no cover - compiled
    """One tree's object (``{`` read, ``pos`` after it) into ``row`` (:data:`_TREE_COLUMNS`):
    every key of :data:`_TREE_ARRAYS`, :data:`_CATEGORIES`, ``id`` and ``tree_param`` once
    and no other; arrays typed, of numbers, counts bounded by the bytes left, the node
    arrays the checks read of XGBoost's element types, no category listed; an integer
    id.  The position after its ``}``, or -1 (declined)."""
    seen, hint = np.int64(0), _FIRST_TREE_KEY
    for j in range(len(row)):
        row[j] = -1
    while pos < len(data) and data[pos] != 125:  # }
        key, pos = _tree_key(data, pos, 0, _N_TREE_KEYS, seen, hint)
        if key < 0 or pos >= len(data):
            return -1
        seen, hint = seen | (np.int64(1) << key), _NEXT_KEY[key]
        marker = data[pos]
        if key == _ID_ID:
            size = _size(marker)
            if size == 0 or marker == 100 or pos + 1 + size > len(data):  # no float32 id
                return -1
            row[_T_ID], pos = _int(data, pos + 1, marker), pos + 1 + size
        elif key == _ID_PARAM:
            pos = _tree_param(data, pos + 1, row) if marker == 123 else -1
            if pos < 0:
                return -1
        else:  # [$<marker>#L<count>, then count values
            if marker != 91 or pos + 13 > len(data) or data[pos + 1] != 36 or \
                    data[pos + 3] != 35:
                return -1
            size, count = _size(data[pos + 2]), _length(data, pos + 4)
            # count * size: no overflow, count being at most the bytes left (_length)
            if size == 0 or count < 0 or count * size > len(data) - pos - 13 or \
                    (key < _N_FLAT and data[pos + 2] != _FLAT_MARKERS[key]) or \
                    (key >= _N_ARRAYS and count > 0):
                return -1  # another element type, or categories listed
            row[_T_LENGTHS + key] = count
            if key < _N_FLAT:
                row[_T_AT + key] = pos + 13
            pos += 13 + count * size
    if pos >= len(data) or seen != (np.int64(1) << _N_TREE_KEYS) - 1:
        return -1
    return pos + 1


#: Words a key's head is compared in (the longest, ``categories_segments``': 33 bytes).
_W_WIDTH = 5


def _written_tables():
    """Each key's head as XGBoost writes it (``L``, its length, its name, then an array's
    ``[$<marker>#L`` or ``tree_param``'s ``{``) as big-endian words to compare
    (:data:`_W_WIDTH`, the last ending where the head ends), the head's length, the
    bytes of a value of its array (0: none listed; -1: the id) and its column in a
    tree's row."""
    keys = sorted(_TREE_ARRAYS + _CATEGORIES + ("id", "tree_param"))
    marker = _MARKERS
    heads = [b"L" + len(k).to_bytes(8, "big") + k.encode("ascii") +
             (b"[$" + marker[k].encode() + b"#L" if k in marker else
              b"{" if k == "tree_param" else b"") for k in keys]
    at = np.zeros((len(keys), _W_WIDTH), np.int64)
    words = np.zeros((len(keys), _W_WIDTH), np.int64)
    for k, head in enumerate(heads):
        offsets = sorted(set(list(range(0, len(head) - 8, 8)) + [len(head) - 8]))
        at[k, :len(offsets)] = offsets
        at[k, len(offsets):] = offsets[-1]  # compared again: no count per key
        words[k] = [_word(head[o:]) for o in at[k]]
    size = np.array([-1 if k == "id" else 0 if k in _CATEGORIES or k == "tree_param" else
                     {"d": 4, "l": 4, "U": 1}[marker[k]] for k in keys], np.int64)
    column = np.array([_ID[k] for k in keys], np.int64)
    return (keys.index("id"), keys.index("tree_param"), at, words,
            np.array([len(h) for h in heads], np.int64), size, column)


_W_ID, _W_PARAM, _W_AT, _W_WORDS, _W_HEAD, _W_SIZE, _W_COLUMN = _written_tables()
#: The bytes of a tree written so, but its id's value, ``tree_param``'s and its nodes'.
_W_FIXED = int(_W_HEAD.sum()) + 8 * (len(_W_HEAD) - 2) + 1
_W_PER_NODE = int(_W_SIZE[_W_SIZE > 0].sum())


@njit(cache=True, inline="always")
def _tree_as_written(data, pos, row):  # pragma: no cover - compiled
    """:func:`_tree` of a tree laid out byte for byte as XGBoost writes it (its keys in its
    order, each array typed as it types it, none of :data:`_CATEGORIES` listed), or -1
    (:func:`_tree` then reads it).  Where every key lies follows from the node count (the
    first array's) and the id's width: each head is compared where it must be, none
    waiting on the one before it (:func:`_tree`'s reading, a key after a node array of
    unknown length, waits on memory at each key: 0.40 ms for a 9.2 MB file's 900 trees,
    this one 0.20 ms).  What it takes :func:`_tree` takes, into the same row (tested
    against it)."""
    end = len(data)
    if pos + _W_HEAD[0] + 8 > end:
        return -1
    n = _i64(data, pos + _W_HEAD[0])
    if n <= 0 or n > end or pos + _W_FIXED + n * _W_PER_NODE + 8 > end:
        return -1
    for j in range(len(row)):
        row[j] = -1
    same, at = True, pos
    for k in range(_W_PARAM):
        for w in range(_W_WIDTH):
            same &= _i64(data, at + _W_AT[k, w]) == _W_WORDS[k, w]
        at += _W_HEAD[k]
        if k == _W_ID:
            marker = data[at]
            same &= (_size(marker) > 0) & (marker != 100)  # no float32 id
            row[_T_ID] = _int(data, at + 1, marker)
            at += 1 + _size(marker)
        else:
            count = n if _W_SIZE[k] > 0 else 0
            same &= _i64(data, at) == count
            row[_T_LENGTHS + _W_COLUMN[k]] = count
            if _W_COLUMN[k] < _N_FLAT:
                row[_T_AT + _W_COLUMN[k]] = at + 8
            at += 8 + count * _W_SIZE[k]
    for w in range(_W_WIDTH):
        same &= _i64(data, at + _W_AT[_W_PARAM, w]) == _W_WORDS[_W_PARAM, w]
    if not same:
        return -1
    at = _tree_param(data, at + _W_HEAD[_W_PARAM], row)
    return at + 1 if 0 <= at < end and data[at] == 125 else -1  # }


@njit(cache=True)
def _nodes_checked(data, row, room):  # pragma: no cover - compiled
    """The node checks of the tree just read into ``row`` (:func:`_tree`), while its bytes
    are in the cache: :func:`~._checks_xgboost._tree_nodes` (-2 at a fault), or -2 where
    its node count is out of range or a node array of another length (the checks of the
    document name that first); and ``room``, grown to the tree where it was smaller."""
    n = row[_T_PARAMS]
    if n <= 0 or n >= 2 ** 31:
        return np.int64(-2), room
    for j in range(_N_FLAT):
        if row[_T_LENGTHS + j] != n:
            return np.int64(-2), room
    if n + 1 > room.shape[1]:
        room = np.empty((6, 2 * (n + 1)), np.int64)
    return _tree_nodes(data, row[_T_AT:_T_CHECK], n, max(row[_T_PARAMS + 1], 0),
                       MAX_TREE_DEPTH, room), room


@njit(cache=True)
def _tree_list(data, pos):  # pragma: no cover - compiled
    """The array of trees at ``pos`` (its ``[``; untyped, or counted as XGBoost writes
    it), a row of :func:`_tree` each, its nodes checked as it is read
    (:func:`_nodes_checked`): the position after it (-1: declined) and the rows."""
    first, count, table, room = _tree_list_head(data, pos)
    if first < 0:
        return -1, table[:0]
    return _tree_list_rest(data, first, count, 0, table, room)


@njit(cache=True)
def _tree_list_at(data, pos, read):  # pragma: no cover - compiled
    """:func:`_tree_list` at ``pos``, on from the trees ``read`` (:func:`_scan`'s) has read
    where they begin there."""
    at, table, room = read
    if pos != at[0]:
        return _tree_list(data, pos)
    return _tree_list_rest(data, at[1], at[2], at[3], table, room)


@njit(cache=True)
def _tree_list_head(data, pos):  # pragma: no cover - compiled
    """The head of the array of trees at ``pos``: where its first tree begins and its count
    (-1: until the bracket), position -1 where it is not an array of trees as XGBoost
    writes it (declined); and the table and room its trees are read into
    (:func:`_trees_from`)."""
    first, count = -1, -1
    if pos + 1 < len(data) and data[pos] == 91 and data[pos + 1] != 36:  # [, not [$
        if data[pos + 1] != 35:  # not #: untyped, until its bracket
            first = pos + 1
        else:  # counted (no closing bracket)
            counted = _length(data, pos + 2)
            if 0 <= counted <= _MAX_UNTYPED:
                first, count = pos + 11, counted
    return (first, count, np.empty((max(count, 64), _TREE_COLUMNS), np.int64),
            np.empty((6, 1024), np.int64))


@njit(cache=True)
def _tree_list_rest(data, pos, count, m, table, room):  # pragma: no cover - compiled
    """:func:`_tree_list` from its ``m``-th tree at ``pos`` (those before it read into
    ``table``, ``room`` as they left it)."""
    # a tree that does not read stops it short of its end: declined below
    pos, m, table, room = _trees_from(data, pos, count, m, table, room)
    if count < 0 and pos < len(data) and data[pos] == 93:  # ]
        return pos + 1, table[:m]
    return (pos, table[:m]) if m == count else (-1, table[:0])


@njit(cache=True)
def _trees_from(data, pos, count, m, table, room):  # pragma: no cover - compiled
    """The trees of an array of trees from its ``m``-th at ``pos``, each read into its row
    of ``table`` (grown as needed) and its nodes checked as it is read
    (:func:`_nodes_checked`), up to the array's end, the end of ``data`` or a tree that
    does not read (declined; or, where ``data`` holds only the file's first bytes, a
    tree not yet whole: :class:`TreesAsRead` reads it again with more): the position
    after the last tree read, its count, ``table`` and ``room``."""
    data = _borrowed(data)
    fetched = pos
    while m != count and pos < len(data) and data[pos] == 123 and m < _MAX_UNTYPED:  # {
        if m == len(table):
            grown = np.empty((2 * m, _TREE_COLUMNS), np.int64)
            grown[:m] = table
            table = grown
        # the bytes ahead asked for while this tree is read and checked (its keys lie a
        # node array apart: read in turn, each waits on memory)
        ahead = min(pos + _AHEAD, len(data))
        for at in range(max(fetched, pos), ahead, 64):
            _prefetch(data, at)
        fetched = max(fetched, ahead)
        after = _tree_as_written(data, pos + 1, table[m])
        if after < 0:
            after = _tree(data, pos + 1, table[m])
        if after < 0:
            break
        table[m, _T_CHECK], room = _nodes_checked(data, table[m], room)
        m, pos = m + 1, after
    return pos, m, table, room


@njit(cache=True)
def _scan(data, head, read):  # pragma: no cover - compiled
    """The rows of ``data``'s values in document order, or an empty table (declined), the
    rows of its trees array's trees (:func:`_tree_list`), and where that array begins
    (-1: none).  ``head``: stop there, at the array's ``[`` (the rows then only those
    before it).  ``read``: the trees already read from where such an array begins
    (:attr:`TreesAsRead.state`: ``[at, pos, count, m]`` and the table and room
    :func:`_trees_from` left; ``at`` -1: none), read on from there."""
    # handed to a function a key: no reference counted each time
    data = _borrowed(data)
    none, nowhere = np.zeros((0, 10), np.int64), np.int64(-1)
    trees = no_trees = np.zeros((0, _TREE_COLUMNS), np.int64)
    n_lists = 0
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
                    return none, no_trees, nowhere
            if is_obj:
                klen = _length(data, pos)
                if klen < 0 or not _ascii(data, pos + 9, klen):
                    return none, no_trees, nowhere
                koff, pos = pos + 9, pos + 9 + klen
                key = _key_id(data, koff, klen)
                if key >= 0 and seen[at] & (np.int64(1) << key):
                    return none, no_trees, nowhere
                seen[at] |= (np.int64(1) << key) if key >= 0 else 0
        if depth > _MAX_DEPTH or pos >= end:
            return none, no_trees, nowhere
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
                return none, no_trees, nowhere
            others[depth - 1, n_others[depth - 1]] = r
            n_others[depth - 1] += 1
        marker = data[pos]
        if key == _ID_TREES and rows[stack[depth - 1], 2] == _ID_MODEL:  # model.trees
            if head:
                return rows[:n_rows], no_trees, pos
            after, trees = _tree_list_at(data, pos, read)
            values_left -= after - pos
            if after < 0 or values_left < 0 or n_lists > 0 or depth + 3 > _MAX_DEPTH:
                # not as XGBoost writes it: an array of objects, once
                return none, no_trees, nowhere
            rows[r, 0], rows[r, 4], n_lists, pos = _TREES, len(trees), 1, after
            continue
        if marker == 123 or marker == 91:  # { [
            pos, count = _open(data, pos + 1, marker, rows[r])
            values_left -= count if count > 0 else rows[r, 4]
            if pos < 0 or values_left < 0:
                return none, no_trees, nowhere
            if rows[r, 0] != 7:
                stack[depth], left[depth], seen[depth], n_others[depth] = r, count, 0, 0
                depth += 1
                continue
        else:
            pos = _scalar(data, pos + 1, marker, rows[r])
            if pos < 0:
                return none, no_trees, nowhere
        if depth == 0:
            break
    return (rows[:n_rows], trees, nowhere) if pos == end else (none, no_trees, nowhere)


class TreesAsRead:
    """The trees of XGBoost's UBJSON read and checked as the file is read, a part at a
    time (``as_read(data, filled)`` after each: ``data`` the buffer being filled, its first
    ``filled`` bytes read), while each part is still in the cache: read after the whole
    file, the trees' scan of a 9.2 MB file waited on memory (its read, scan and checks
    cost 3.3-3.4 ms in the load, median of 201 interleaved rounds; 2.8 ms so).

    :func:`~._checks_xgboost_doc.scan_xgboost_ubjson` then reads on from the last tree
    read.  What is read here is exactly what that scan would read of the same bytes: the
    same compiled steps (:func:`_scan` up to the trees' array, then
    :func:`_trees_from`), on the bytes read so far, where a bound that the rest of the
    file would lift (a value past the bytes read) only declines, and a tree that does
    not read is read again when more has come (the final scan declines it).  So the
    document, and every answer, is the one scan's; only its time moves."""

    def __init__(self):
        self.state = _NONE_READ
        self._looked = -_LOOK_AFTER  # bytes read when it last looked for the trees

    def __call__(self, data, filled: int) -> None:
        at, table, room = self.state
        if at[0] < 0 and filled - self._looked < _LOOK_AFTER:
            return
        buf = np.frombuffer(data, np.uint8, filled)
        if at[0] < 0:
            if self._looked >= _HEAD_BYTES:
                return  # not found near the start: the whole file's scan looks
            self._looked = filled
            _, _, where = _scan(buf, True, self.state)
            if where < 0:
                return
            first, count, table, room = _tree_list_head(buf, where)
            if first < 0:
                return
            at = np.array([where, first, count, 0], np.int64)
        at[1], at[3], table, room = _trees_from(buf, at[1], at[2], at[3], table, room)
        self.state = at, table, room


#: Where no trees were read as the file was read (:func:`_scan`'s ``read``).
_NONE_READ = (np.array([-1, 0, 0, 0], np.int64), np.empty((0, _TREE_COLUMNS), np.int64),
              np.empty((6, 0), np.int64))
#: :class:`TreesAsRead` looks for the trees' array in the first bytes read, again after
#: every ``_LOOK_AFTER`` more, up to ``_HEAD_BYTES`` (XGBoost writes a few kilobytes before
#: it); where it is not found there, the scan of the whole file finds it.
_LOOK_AFTER, _HEAD_BYTES = 1 << 12, 1 << 20
