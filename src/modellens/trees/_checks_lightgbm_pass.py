"""Every check of a plain LightGBM model text's trees in one compiled pass over its bytes.

Where the text's tree_sizes line proves where each tree starts
(``_checks_lightgbm_scan._by_sizes``), :func:`_trees_at` reads each
tree from its own piece of the bytes, in numba's threads: its layout (the
lines ``_checks_lightgbm_scan._tree_body`` accepts), every integer it holds
(grammar, count and value), the count and byte classes of every float line
(:mod:`._checks_lightgbm_floats`: what LightGBM reads of them, and why a
byte-class check suffices there, is tabled in its docstring), and the node
checks of :func:`~._checks_lightgbm.check_lgb_nodes` (children inside the
tree, each node reached once from the root within
:data:`~._checks.MAX_TREE_DEPTH` levels, decision types, thresholds, category
bitsets), with no Python object made per tree or per number.  It only ever
accepts: a text it does not pass goes to the scan it stands in for, which
finds and names the fault (or leaves the text to the full reading).  It is
stricter than that scan in places (the grammar of values the scan only
counts) and laxer in one: a float word repeating a part of a number
(``1.2.3``), which LightGBM reads as its longest number prefix and we explain
as LightGBM read it; a categorical split's threshold, which indexes, is read
by the full grammar.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._checks import MAX_CATEGORY_CODE, MAX_TREE_DEPTH
from ._checks_lightgbm import scaled
from ._checks_lightgbm_floats import BLOCK, float_line

__all__: list[str] = []

# the columns of the scan's keys (``_checks_lightgbm_scan._KEYS``); those up to _KIND and
# _BOUNDS hold integers, _WORDS 32-bit words, the others numbers
_LEAVES, _CATS, _LINEAR, _LEFT, _RIGHT, _FEATURE, _KIND, _THRESHOLD, _LEAF_VALUE = range(9)
_SPLIT_KEYS = (9, 10, 11, 12)  # split_gain, internal_value, internal_weight, internal_count
_LEAF_KEYS = (13, 14)  # leaf_weight, leaf_count
_BOUNDS, _WORDS, _SHRINKAGE = 15, 16, 17
_N_KEYS = 18
#: rows of the integers kept: the columns up to _KIND, then _BOUNDS and _WORDS
_ROWS = _KIND + 3
#: what :func:`_read_tree` notes of a tree besides its rows: each key's count (-1: absent)
#: and where its value starts, the largest 32-bit word, whether a threshold reads as NaN
_MAX_WORD, _NAN = 2 * _N_KEYS, 2 * _N_KEYS + 1


@njit(cache=True, parallel=True)
def _trees_at(buf, offsets, names, lengths, chunks):  # pragma: no cover - compiled
    """Check the trees at ``offsets`` of ``buf`` (a plain text's bytes; see the module's
    docstring), tree ``t`` read from ``buf[offsets[t]:offsets[t + 1]]`` alone (one tree,
    then empty lines), ``chunks`` (at least 1, at most the trees) runs of consecutive
    trees (:func:`_runs`) in numba's threads, each with its own scratch rows sized by its
    longest piece (a value of ``n`` words spans at least ``2 n - 1`` bytes).  Returns the
    largest split feature the trees name (-1: none), or -2 where any tree is not passed."""
    n = len(offsets) - 1
    best = np.full(chunks, -2, np.int64)
    bounds = _runs(offsets, chunks)
    for c in prange(chunks):
        lo, hi = bounds[c], bounds[c + 1]
        longest = 0
        for t in range(lo, hi):
            longest = max(longest, offsets[t + 1] - offsets[t])
        cap = longest // 2 + 2
        rows = np.empty((_ROWS, cap), np.int64)
        work = np.empty(6 * cap + 4, np.int64)
        info = np.empty(2 * _N_KEYS + 2, np.int64)
        flags = np.empty(BLOCK, np.uint8)
        top = -1
        for t in range(lo, hi):
            f = _one_tree(buf, offsets[t], offsets[t + 1], names, lengths, rows, work, info,
                          flags)
            if f < -1:
                top = -2
                break
            top = max(top, f)
        best[c] = top
    return -2 if n < 1 or best.min() < -1 else best.max()


@njit(cache=True)
def _runs(offsets, chunks):  # pragma: no cover - compiled
    """Where ``chunks`` runs of the trees at ``offsets`` start, then the trees' count: runs of
    about as many bytes each (trees differ in size, the first of a boosting often far
    bigger, and equal counts of trees would leave threads idle), each run from the
    first tree that starts at or past its share of the bytes (a run may be empty)."""
    n = len(offsets) - 1
    bounds = np.empty(chunks + 1, np.int64)
    span = offsets[n] - offsets[0]
    for c in range(chunks):
        bounds[c] = np.searchsorted(offsets[:n], offsets[0] + c * span // chunks)
    bounds[chunks] = n
    return bounds


@njit(cache=True)
def _one_tree(buf, start, stop, names, lengths, rows, work, info, flags):  # pragma: no cover
    """One tree's piece read and checked: its largest split feature (-1: none), or -2."""
    i = _read_tree(buf, start, stop, names, lengths, rows, info, flags)
    if i < 0:
        return -2
    while i < stop and buf[i] == 10:
        i += 1
    if i != stop:
        return -2
    return _tree_checks(buf, rows, work, info)


@njit(cache=True)
def _read_tree(buf, i, stop, names, lengths, rows, info, flags):  # pragma: no cover
    """The lines of the tree at ``buf[i]``: ``Tree=<digits>``, at most 22 ``key=value`` lines
    of the keys ``names`` each once, an empty line.  Each value is read by its key's
    grammar (see :func:`_value`).  Returns where the line after the empty one starts,
    or -1."""
    i = _tree_head(buf, i, stop)
    if i < 0:
        return -1
    info[:] = -1
    info[_MAX_WORD], info[_NAN] = 0, 0
    lines = 0
    while i < stop:
        k, i = _line(buf, i, stop, lines, names, lengths)
        lines += 1
        if k == -2:  # the empty line
            return i
        if k < 0 or info[k] >= 0:  # no key=value line; a key LightGBM does not write, or twice
            return -1
        info[_N_KEYS + k] = i
        i, info[k] = _value(buf, i, k, rows, info, flags)
        if i < 0 or i >= stop:  # a word of another grammar; a line past the piece
            return -1
        i += 1
    return -1


@njit(cache=True)
def _tree_head(buf, i, stop):  # pragma: no cover - compiled
    """Where the line after ``Tree=<digits>`` at ``buf[i]`` starts, or -1 (no such line)."""
    if stop - i < 6 or buf[i] != 84 or buf[i + 1] != 114 or buf[i + 2] != 101 \
            or buf[i + 3] != 101 or buf[i + 4] != 61:
        return -1
    i += 5
    digits = i
    while i < stop and 48 <= buf[i] <= 57:
        i += 1
    if i == digits or i >= stop or buf[i] != 10:
        return -1
    return i + 1


@njit(cache=True)
def _line(buf, i, stop, lines, names, lengths):  # pragma: no cover - compiled
    """The line at ``buf[i]`` (``i < stop``) after ``lines`` lines of a tree: (-2, where the
    next line starts) where it is empty (it ends the tree), else :func:`_key_at`'s key and
    value start ((-1, -1) for a 23rd line: a tree has at most 22)."""
    if buf[i] == 10:
        return -2, i + 1
    if lines >= 22:
        return -1, -1
    return _key_at(buf, i, stop, names, lengths)


@njit(cache=True)
def _key_at(buf, i, stop, names, lengths):  # pragma: no cover - compiled
    """The key of the line at ``buf[i]`` (``[a-z_]+`` then ``=``): which of ``names`` it is
    (-1: none) and where its value starts (-1: the line is no such line)."""
    key = i
    while i < stop and (97 <= buf[i] <= 122 or buf[i] == 95):
        i += 1
    if i == key or i >= stop or buf[i] != 61:
        return -1, -1
    return _key_index(buf, key, i, names, lengths), i + 1


@njit(cache=True)
def _key_index(buf, start, stop, names, lengths):  # pragma: no cover - compiled
    """Which of ``names`` ``buf[start:stop]`` is (-1: none)."""
    for j in range(len(lengths)):
        if lengths[j] == stop - start:
            same = True
            for q in range(stop - start):
                if buf[start + q] != names[j, q]:
                    same = False
                    break
            if same:
                return j
    return -1


@njit(cache=True)
def _value(buf, i, k, rows, info, flags):  # pragma: no cover - compiled
    """The value of key ``k`` from ``buf[i]`` to its line's end: words of one grammar, one
    space between them (the floats' by byte classes: :func:`._checks_lightgbm_floats.float_line`,
    a threshold's by the full grammar where a word has an exponent of 3+ digits).
    Returns where the line ends (-1: a word of another grammar, or more words than the
    scratch rows hold) and the words' count."""
    if k <= _KIND or k == _BOUNDS:
        return _int_words(buf, i, rows, k if k <= _KIND else _KIND + 1, False)
    if k == _WORDS:
        end, n = _int_words(buf, i, rows, _KIND + 2, True)
        for j in range(n if end >= 0 else 0):
            info[_MAX_WORD] = max(info[_MAX_WORD], rows[_KIND + 2, j])
        return end, n
    end, n, big = float_line(buf, i, flags)
    if end == -2 or (big and k == _THRESHOLD):
        # near the buffer's end (the blocks would read past it); a threshold the old
        # path may read as NaN ('0e999'): the full grammar, as that path reads it
        return _numbers(buf, i, info, k == _THRESHOLD)
    return end, n


@njit(cache=True)
def _int_words(buf, i, rows, row, words):  # pragma: no cover - compiled
    """Words ``-?[0-9]{1,9}`` (as LightGBM's ``Atoi`` and Python read alike), or ``[0-9]{1,10}``
    (``words``: category bitsets' 32-bit words), into ``rows[row]``.  One test per byte,
    its digits read from a view (no index below 0 to wrap: a short loop LLVM keeps tight;
    words of a few digits make a parser's branches per word cost more than its bytes)."""
    seg, out = buf[i:], rows[row]
    if seg[0] == 10:
        return i, 0
    n, value, sign, digits = 0, 0, 1, 0
    most = 10 if words else 9
    for q in range(len(seg)):
        c = seg[q]
        if 48 <= c <= 57:
            value = value * 10 + (c - 48)
            digits += 1
        elif c == 32 or c == 10:
            if digits == 0 or digits > most or n >= len(out):
                return -1, n
            out[n] = sign * value
            n += 1
            if c == 10:
                return i + q, n
            value, sign, digits = 0, 1, 0
        elif c == 45 and digits == 0 and sign == 1 and not words:
            sign = -1
        else:
            return -1, n
    return -1, n


@njit(cache=True)
def _numbers(buf, i, info, threshold):  # pragma: no cover - compiled
    """Words ``-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?`` (no 'nan', 'inf', '+', '.5', '5.':
    LightGBM's float readers and Python's differ on those).  ``threshold``: a word that
    ``_checks_lightgbm._scan_numbers`` reads as NaN (zero times an overflowing power of
    ten: '0e999') sets ``info[_NAN]``."""
    n = 0
    if buf[i] == 10:
        return i, 0
    while True:
        word = i
        if buf[i] == 45:
            i += 1
        start = i
        while 48 <= buf[i] <= 57:
            i += 1
        if i == start:
            return -1, n
        frac = 0
        if buf[i] == 46:  # .
            i += 1
            start = i
            while 48 <= buf[i] <= 57:
                i += 1
            frac = i - start
            if frac == 0:
                return -1, n
        if buf[i] == 101 or buf[i] == 69:  # e E
            mantissa = i
            i += 1
            esign = 1
            if buf[i] == 43 or buf[i] == 45:
                esign = -1 if buf[i] == 45 else 1
                i += 1
            start = i
            i, e = _digits(buf, i, 100000)  # as the scan reads an exponent
            if i == start:
                return -1, n
            # the scan's scale of a zero: the exponent less the fraction's digits
            if threshold and _zero(buf, word, mantissa) and \
                    np.isnan(scaled(0, esign * e - frac, 1.0)):
                info[_NAN] = 1
        n += 1
        if buf[i] != 32:  # the line's end, or a word of another grammar
            return _line_end(buf, i), n
        i += 1


@njit(cache=True)
def _line_end(buf, i):  # pragma: no cover - compiled
    """``i`` where a word ends at its line's end, else -1."""
    return i if buf[i] == 10 else -1


@njit(cache=True)
def _digits(buf, i, cap):  # pragma: no cover - compiled
    """Where the digits from ``buf[i]`` end, and their value (exact while below ``cap``
    before the last digit; no more digits added once it is not)."""
    value = 0
    while 48 <= buf[i] <= 57:
        if value < cap:
            value = value * 10 + (buf[i] - 48)
        i += 1
    return i, value


@njit(cache=True)
def _zero(buf, start, stop):  # pragma: no cover - compiled
    """Whether the digits of ``buf[start:stop]`` (a sign, digits, a dot) are all 0."""
    for i in range(start, stop):
        if 49 <= buf[i] <= 57:
            return False
    return True


@njit(cache=True)
def _tree_checks(buf, rows, work, info):  # pragma: no cover - compiled
    """The checks of one tree read by :func:`_read_tree`: those of the scan's ``_nodes`` and
    ``_numbers_read`` (each key LightGBM needs present, each count that of the tree's
    splits or leaves) and of ``check_lgb_nodes``.  Returns the tree's largest split
    feature (-1: no splits) or -2."""
    if info[_LEAVES] != 1 or info[_CATS] != 1 or info[_SHRINKAGE] > 1 or info[_NAN] \
            or (info[_LINEAR] >= 0 and (info[_LINEAR] != 1 or rows[_LINEAR, 0] != 0)):
        return -2
    n_leaves, n_cat = rows[_LEAVES, 0], rows[_CATS, 0]
    m = n_leaves - 1
    if n_leaves <= 0 or n_cat < 0 or info[_LEAF_VALUE] != n_leaves or info[_SHRINKAGE] == 0:
        return -2
    top, cats = -1, 0
    if m > 0:
        for k in (_LEFT, _RIGHT, _FEATURE, _THRESHOLD, _KIND):
            if info[k] != m:
                return -2
        for k in _SPLIT_KEYS:
            if info[k] >= 0 and info[k] != m:
                return -2
        for k in _LEAF_KEYS:
            if info[k] >= 0 and info[k] != n_leaves:
                return -2
        top = _nodes(rows, m, work)
        for j in range(m):
            cats += rows[_KIND, j] & 1
    if (cats or n_cat) and not _bitsets(buf, rows, info, m, n_cat, cats):
        return -2
    return top


@njit(cache=True)
def _nodes(rows, m, work):  # pragma: no cover - compiled
    """A tree's ``m`` splits (then its ``m + 1`` leaves, leaf ``j`` node ``m + j``): split
    features not negative, decision types of 4 bits naming a missing-value rule, each
    child inside the tree, each node the child of at most one split and the root of
    none, every node reached from the root within MAX_TREE_DEPTH levels.  Returns the
    largest split feature, or -2."""
    size = 2 * m + 1
    parents = work[:size]
    parents[:] = 0
    top = -1
    for i in range(m):
        f, kind = rows[_FEATURE, i], rows[_KIND, i]
        if f < 0 or kind < 0 or kind >= 16 or (kind >> 2) & 3 == 3:
            return -2
        top = max(top, f)
        for side in (_LEFT, _RIGHT):
            c = rows[side, i]
            node = c if c >= 0 else m + ~c
            if c >= m or node >= size or parents[node] > 0:
                return -2
            parents[node] = 1
    if parents[0]:
        return -2
    stack, levels = work[size:2 * size + 1], work[2 * size + 1:3 * size + 2]
    at, seen = 0, 0
    stack[0], levels[0] = 0, 0
    while at >= 0:  # each node has one parent: pushed once, the stack holds every node
        node, depth = stack[at], levels[at]
        at -= 1
        if depth > MAX_TREE_DEPTH:
            return -2
        seen += 1
        if node < m:
            stack[at + 1], levels[at + 1] = m + ~rows[_RIGHT, node] \
                if rows[_RIGHT, node] < 0 else rows[_RIGHT, node], depth + 1
            stack[at + 2], levels[at + 2] = m + ~rows[_LEFT, node] \
                if rows[_LEFT, node] < 0 else rows[_LEFT, node], depth + 1
            at += 2
    return top if seen == size else -2


@njit(cache=True)
def _bitsets(buf, rows, info, m, n_cat, cats):  # pragma: no cover - compiled
    """A tree's category bitsets (``check_lgb_nodes``' ``_check_lgb_bitsets``, and the plain
    grammar it asks of them): ``n_cat + 1`` boundaries increasing from 0, as many 32-bit
    words as the last says (at least one), at most MAX_CATEGORY_CODE codes; each of the
    ``cats`` categorical splits' thresholds a whole number below ``n_cat``."""
    bounds = rows[_KIND + 1]
    if info[_BOUNDS] != n_cat + 1 or bounds[0] != 0:
        return False
    for j in range(1, n_cat + 1):
        if bounds[j] < bounds[j - 1]:
            return False
    last = bounds[n_cat]
    if last < 1 or info[_WORDS] != last or info[_MAX_WORD] >= 2 ** 32 \
            or last * 32 > MAX_CATEGORY_CODE:
        return False
    if cats == 0:
        return True
    # a categorical split's threshold indexes the bitsets: its words read by the full grammar
    # (the byte classes pass '1.2.3', which LightGBM reads as 1.2), as the old path reads them
    at = info[_N_KEYS + _THRESHOLD]
    end, n = _numbers(buf, at, info, True)
    return end >= 0 and n == m and not info[_NAN] and _category_sets(buf, at, rows, m, n_cat)


@njit(cache=True)
def _category_sets(buf, i, rows, m, n_cat):  # pragma: no cover - compiled
    """Whether each categorical split's threshold (the ``m`` words from ``buf[i]``, read
    as they passed :func:`_numbers`) is a whole number in ``0..n_cat - 1``, its value
    as ``_checks_lightgbm_scan._numbers`` reads it."""
    for j in range(m):
        sign = 1.0
        if buf[i] == 45:
            sign = -1.0
            i += 1
        mant, scale = 0, 0
        while 48 <= buf[i] <= 57:
            if mant < 10 ** 17:
                mant = mant * 10 + (buf[i] - 48)
            else:
                scale += 1
            i += 1
        if buf[i] == 46:
            i += 1
            while 48 <= buf[i] <= 57:
                if mant < 10 ** 17:
                    mant = mant * 10 + (buf[i] - 48)
                    scale -= 1
                i += 1
        if buf[i] == 101 or buf[i] == 69:
            i += 1
            esign = 1
            if buf[i] == 43 or buf[i] == 45:
                esign = -1 if buf[i] == 45 else 1
                i += 1
            e = 0
            while 48 <= buf[i] <= 57:
                if e < 100000:
                    e = e * 10 + (buf[i] - 48)
                i += 1
            scale += esign * e
        t = scaled(mant, scale, sign)
        if rows[_KIND, j] & 1 and not (t == np.floor(t) and 0 <= t < n_cat):
            return False
        i += 1  # the space
    return True
