"""The checks of a plain LightGBM model text by one compiled scan of its bytes.

Reading a model text into Python lines and dictionaries costs more than
LightGBM's whole load.  A text written as LightGBM writes it (see
``_checks_lightgbm._parse``: plain) is scanned here instead, its bytes once:
the tree lines located, their values counted, the integers LightGBM indexes
with and the thresholds read, and the same node checks run on them
(:func:`~._checks_lightgbm.check_lgb_nodes`).  Anything this scan does not
accept as plain (a line of another layout, a value of another grammar, a count
off, a key missing) is left to the full reading, which finds and names the
fault, or reads a text that is not plain and has LightGBM's reading checked
again; the faults of a plain text's header and node arrays are found and named
by the very checks the full reading runs.
"""

from __future__ import annotations

import re

import numpy as np
from numba import njit

from ._checks_lightgbm import (_Checked, check_header, check_lgb_nodes, check_lightgbm_text,
                               plain_header, scaled)

__all__ = ["scan_lightgbm_text", "check_lightgbm_file"]

#: The tree keys the checks read, in their column of the scan's tables.
_KEYS = ("num_leaves", "num_cat", "is_linear", "left_child", "right_child", "split_feature",
         "decision_type", "threshold", "leaf_value", "split_gain", "internal_value",
         "internal_weight", "internal_count", "leaf_weight", "leaf_count", "cat_boundaries",
         "cat_threshold", "shrinkage")
_COL = {key: j for j, key in enumerate(_KEYS)}
_NAMES = np.zeros((len(_KEYS), max(map(len, _KEYS))), np.uint8)
for _j, _key in enumerate(_KEYS):
    _NAMES[_j, :len(_key)] = np.frombuffer(_key.encode(), np.uint8)
_LENGTHS = np.array([len(key) for key in _KEYS], np.int64)


def scan_lightgbm_text(data: bytes, text: str):
    """What ``check_lightgbm_text(text)`` returns for a plain text (``data``: its UTF-8
    bytes), checked by one compiled scan; None where the text is not plain or
    anything is off (the full reading then decides)."""
    first = 0 if data.startswith(b"Tree=") else data.find(b"\nTree=") + 1
    # the last 'end of trees' line, found from the end (the trees are most of the text): an
    # earlier one among the trees is a line the scan below does not take as plain
    end = data.rfind(b"\nend of trees") + 1 if first > 0 or data.startswith(b"Tree=") \
        else 0
    if end <= first:
        return None
    if end <= 0 or data[end + 12:end + 13] not in (b"\n", b"") or data[end - 1:end] != b"\n":
        return None
    head = plain_header(data[:first].decode("utf-8", "replace"))
    if head is None:
        return None
    # as many trees as tree_sizes says (LightGBM's own files), else as "Tree=" appears
    sizes = head.get("tree_sizes", "").split()
    bound = len(sizes) if sizes else data.count(b"Tree=", first, end)
    spans = np.full((bound, len(_KEYS), 2), -1, np.int64)
    counts = np.zeros((bound, len(_KEYS)), np.int64)
    starts = np.zeros(bound, np.int64)
    buf = np.frombuffer(data, np.uint8)
    n = _tree_lines(buf, first, end, _NAMES, _LENGTHS, spans, counts, starts)
    if n <= 0 or sizes and not _sizes_fit(sizes, starts[:n], end):
        return None
    spans, counts = spans[:n], counts[:n]
    tail = text[len(text) - (len(data) - end):].split("\n")[1:] \
        if len(text) == len(data) else data[end:].decode("utf-8").split("\n")[1:]
    n_features = check_header(head, n, text[:64].split("\n", 1)[0], tail, None)
    checked = _nodes(buf, spans, counts, n_features)
    if checked is None or not sizes:
        return checked
    # the sizes fit the trees (above); LightGBM reads each with Atoi (digits, then it
    # stops), Python's int reads more ('1_0', '+1', other scripts' digits): the line is
    # kept for LightGBM's parallel reading only where both read it alike
    return checked._replace(threads=_PLAIN_SIZES.fullmatch(head["tree_sizes"]) is not None)


#: A tree_sizes value LightGBM's reader (``Atoi`` of each word between single spaces) and
#: Python's ``int`` read alike: sizes of up to 15 digits, one space between them.
_PLAIN_SIZES = re.compile(r"[0-9]{1,15}(?: [0-9]{1,15})*")


def check_lightgbm_file(data: bytes, text: str):
    """:func:`~._checks_lightgbm.check_lightgbm_text` of a model file's ``text`` (``data``: its
    bytes): a plain text checked by one compiled scan, any other read whole."""
    return scan_lightgbm_text(data, text) or check_lightgbm_text(text)


def _ints(buf, spans, counts, col, trees, ints=True, keep=True):
    """The values of column ``col`` of ``trees`` (their spans), or None where any is not
    plain (``ints``: integers ``-?[0-9]{1,9}``, else numbers of the plain grammar;
    ``keep=False``: only their grammar and count checked, the values left unset)."""
    starts, ends = spans[trees, col, 0], spans[trees, col, 1]
    out = np.empty(int(counts[trees, col].sum()))
    if len(out) and _span_numbers(buf, starts, ends, out, ints, keep) != len(out):
        return None
    return out.astype(np.int64) if ints else out


def _nodes(buf, spans, counts, n_features):
    has = spans[:, :, 0] >= 0
    # LightGBM needs num_leaves and num_cat in every tree (one value each)
    if not (has[:, 0].all() and has[:, 1].all()) or np.any(counts[has[:, 2], 2] != 1) \
            or np.any(counts[:, :2] != 1):
        return None
    every = np.arange(len(spans))
    n_leaves, n_cat = _ints(buf, spans, counts, 0, every), _ints(buf, spans, counts, 1, every)
    linear = _ints(buf, spans, counts, 2, np.flatnonzero(has[:, 2]))
    if n_leaves is None or n_cat is None or linear is None or np.any(linear != 0) \
            or np.any((n_leaves <= 0) | (n_leaves >= 2 ** 31)):
        return None
    m = n_leaves - 1
    split = m > 0
    # the node arrays of the trees with splits: there, each present with its count
    for key, expect, required in (("left_child", m, True), ("right_child", m, True),
                                  ("split_feature", m, True), ("threshold", m, True),
                                  ("leaf_value", n_leaves, True), ("decision_type", m, False)):
        col = _COL[key]
        if (required and not has[split, col].all()) or \
                np.any((counts[:, col] != expect) & split & has[:, col]):
            return None
    for key, expect in (("split_gain", m), ("internal_value", m), ("internal_weight", m),
                        ("internal_count", m), ("leaf_weight", n_leaves),
                        ("leaf_count", n_leaves)):
        col = _COL[key]  # counted where written (an empty value is not read)
        if np.any(split & (counts[:, col] > 0) & (counts[:, col] != expect)):
            return None
    trees = np.flatnonzero(split)
    read = [_ints(buf, spans, counts, _COL[key], trees)
            for key in ("left_child", "right_child", "split_feature")]
    read.append(_ints(buf, spans, counts, _COL["threshold"], trees, ints=False))
    with_kind = np.flatnonzero(split & has[:, _COL["decision_type"]])
    if len(with_kind) == len(trees):
        read.append(_ints(buf, spans, counts, _COL["decision_type"], trees))
    else:
        return None  # a tree without decision types: the full reading
    # leaf values: numbers, as the full reading requires (their values are not used)
    if any(arr is None for arr in read) or \
            _ints(buf, spans, counts, _COL["leaf_value"], trees, ints=False, keep=False) is None:
        return None

    def block(k):
        return {key: bytes(buf[spans[k, _COL[key], 0]:spans[k, _COL[key], 1]]).decode()
                for key in ("cat_boundaries", "cat_threshold") if spans[k, _COL[key], 0] >= 0}

    plain = check_lgb_nodes(n_features, n_leaves, tuple(read), n_cat, block)
    return _Checked(n_features, [], None, plain) if plain else None


@njit(cache=True)
def _tree_lines(buf, start, stop, names, lengths, spans, counts, starts):  # pragma: no cover
    """Locate the trees' ``key=value`` lines in ``buf[start:stop]`` laid out plainly: a tree
    is ``Tree=<digits>``, then at most 22 lines of a key of ``[a-z_]`` and a value of
    printable ASCII without ``=``, one space between words and none around them, then an
    empty line; only empty lines between trees.  ``spans[t, k]`` gets the value's bounds
    of key ``k`` (``names``: the keys LightGBM writes) in tree ``t``, ``counts[t, k]``
    its words, ``starts[t]`` where the tree starts.  Returns
    the number of trees, or -1 where the layout is not that (or a key is another or twice)."""
    t, i, in_tree, lines = -1, start, False, 0
    while i < stop:
        c = buf[i]
        if c == 10:  # an empty line ends a tree
            in_tree = False
            i += 1
            continue
        if not in_tree:  # only a tree starts here
            if stop - i < 6 or buf[i] != 84 or buf[i + 1] != 114 or buf[i + 2] != 101 \
                    or buf[i + 3] != 101 or buf[i + 4] != 61:
                return -1
            i += 5
            digits = i
            while i < stop and 48 <= buf[i] <= 57:
                i += 1
            if i == digits or i >= stop or buf[i] != 10:
                return -1
            t += 1
            if t >= spans.shape[0]:
                return -1
            starts[t] = digits - 5
            i += 1
            in_tree, lines = True, 0
            continue
        lines += 1
        if lines > 22:
            return -1
        key = i
        while i < stop and (97 <= buf[i] <= 122 or buf[i] == 95):
            i += 1
        if i == key or i >= stop or buf[i] != 61:
            return -1
        k = -1
        for j in range(len(lengths)):
            if lengths[j] == i - key:
                same = True
                for q in range(i - key):
                    if buf[key + q] != names[j, q]:
                        same = False
                        break
                if same:
                    k = j
                    break
        i += 1
        value, spaces = i, 0
        c = buf[i]
        while c != 10:  # the section ends in a line end: no bound needed
            if c == 32:
                spaces += 1
                if buf[i - 1] == 32 or buf[i - 1] == 61 or buf[i + 1] == 10:
                    return -1  # a space first, last, or two in a row
            elif c < 33 or c > 126 or c == 61:
                return -1
            i += 1
            c = buf[i]
        words = 0 if i == value else spaces + 1
        if k < 0 or spans[t, k, 0] >= 0:  # a key LightGBM does not write, or twice
            return -1
        spans[t, k, 0], spans[t, k, 1], counts[t, k] = value, i, words
        i += 1
    return -1 if in_tree else t + 1


@njit(cache=True)
def _span_numbers(buf, starts, ends, out, ints, keep):  # pragma: no cover - compiled
    """The numbers of ``buf[starts[s]:ends[s]]``, span after span, into ``out`` (``keep``;
    else only read): how many,
    or -1 at the first that is not ``-?[0-9]{1,9}`` (``ints``) or
    ``-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?``, or past ``out``.  Values as
    ``_checks_lightgbm._scan_numbers`` reads them (integers exactly)."""
    n = 0
    for s in range(len(starts)):
        i, end = starts[s], ends[s]
        while i < end:
            if n >= len(out):
                return -1
            sign = 1.0
            if buf[i] == 45:
                sign = -1.0
                i += 1
            mant, scale, digits = 0, 0, 0
            while i < end and 48 <= buf[i] <= 57:
                digits += 1
                if mant < 10 ** 17:
                    mant = mant * 10 + (buf[i] - 48)
                else:
                    scale += 1
                i += 1
            if digits == 0 or (ints and digits > 9):
                return -1
            if not ints and i < end and buf[i] == 46:
                i += 1
                frac = i
                while i < end and 48 <= buf[i] <= 57:
                    if mant < 10 ** 17:
                        mant = mant * 10 + (buf[i] - 48)
                        scale -= 1
                    i += 1
                if i == frac:
                    return -1
            if not ints and i < end and (buf[i] == 101 or buf[i] == 69):
                i += 1
                esign = 1
                if i < end and (buf[i] == 43 or buf[i] == 45):
                    esign = -1 if buf[i] == 45 else 1
                    i += 1
                e, exp = 0, i
                while i < end and 48 <= buf[i] <= 57:
                    if e < 100000:
                        e = e * 10 + (buf[i] - 48)
                    i += 1
                if i == exp:
                    return -1
                scale += esign * e
            if i < end and buf[i] != 32:
                return -1
            if keep:
                out[n] = scaled(mant, scale, sign)
            n += 1
            i += 1  # the space (or the end)
    return n


def _sizes_fit(sizes, starts, end) -> bool:
    """Whether LightGBM's jumps by ``tree_sizes`` land on each tree's start and the last
    ends where the trees do (see ``_checks_lightgbm._check_tree_sizes``)."""
    try:
        sizes_ = np.array([int(v) for v in sizes], np.int64)
    except (ValueError, OverflowError):
        return False
    if len(sizes_) != len(starts) or np.any(sizes_ <= 0):
        return False
    ends = np.cumsum(np.concatenate([starts[:1], sizes_]))
    return bool(np.array_equal(ends[:-1], starts) and ends[-1] == end)
