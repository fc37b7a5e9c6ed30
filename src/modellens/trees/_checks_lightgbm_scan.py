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
import numba
from numba import njit, prange

from ._checks_lightgbm import (_Checked, check_header, check_lgb_nodes, check_lightgbm_text,
                               plain_header, scaled)
from ._checks_lightgbm_pass import _line, _tree_head, _trees_at

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


def scan_lightgbm_text(data: bytes, text: str | None):
    """What ``check_lightgbm_text(text)`` returns for a plain text (``data``: its UTF-8
    bytes), checked by one compiled scan; None where the text is not plain or
    anything is off (the full reading then decides).

    ``text`` None: ``data`` alone, not known to be UTF-8: the header and the lines
    after the trees are decoded strictly here, and the trees' bytes proven UTF-8 where
    the one pass (:func:`~._checks_lightgbm_pass._trees_at`) passes them (they are
    then ASCII: tree heads, ``[a-z_]+`` keys, numbers), else decoded strictly before
    they are read otherwise; None where any is not UTF-8 (a verdict only on bytes that
    are the text's).
    """
    first = 0 if data.startswith(b"Tree=") else data.find(b"\nTree=") + 1
    # the last 'end of trees' line, found from the end (the trees are most of the text): an
    # earlier one among the trees is a line the scan below does not take as plain
    end = data.rfind(b"\nend of trees") + 1 if first > 0 or data.startswith(b"Tree=") \
        else 0
    if end <= first:
        return None
    if end <= 0 or data[end + 12:end + 13] not in (b"\n", b"") or data[end - 1:end] != b"\n":
        return None
    try:
        # strictly: a header that is no UTF-8 is refused as such (a given text's bytes are)
        head_text = data[:first].decode("utf-8")
        tail = text[len(text) - (len(data) - end):].split("\n")[1:] \
            if text is not None and len(text) == len(data) \
            else data[end:].decode("utf-8").split("\n")[1:]
    except UnicodeDecodeError:
        return None
    head = plain_header(head_text)
    if head is None:
        return None
    buf = np.frombuffer(data, np.uint8)
    offsets = _by_sizes(head.get("tree_sizes"), first, end)
    if offsets is False:
        return None
    found = None
    if offsets is not None:
        # every check of the trees in one pass over their bytes, in threads; what it does
        # not pass is read again below, which names the fault (or leaves it to the full
        # reading)
        chunks = max(1, min(4 * numba.get_num_threads(), len(offsets) - 1))
        top = _trees_at(buf, offsets, _NAMES, _LENGTHS, chunks)
        if top >= -1:
            # the text's first line is the header's (which ends its lines; where it is
            # empty, the text starts 'Tree=': no 'tree' line either way)
            n_features = check_header(head, len(offsets) - 1, head_text[:64].split("\n", 1)[0],
                                      tail, None)
            if top < n_features:
                return _Checked(n_features, [], None, True, True)
        if not _utf8_trees(data, first, end, text):
            return None
        found = _spans_at(buf, offsets)
        if found is None:
            return None
    elif not _utf8_trees(data, first, end, text):
        return None
    spans, counts = found or _in_turn(data, buf, head, first, end)
    if spans is None:
        return None
    n_features = check_header(head, len(spans), head_text[:64].split("\n", 1)[0], tail, None)
    checked = _nodes(buf, spans, counts, n_features)
    # the sizes were proven above (found), or fit the trees as Python's int reads them: there
    # LightGBM reads each with Atoi (digits, then it stops), Python's int reads more ('1_0',
    # '+1', other scripts' digits), and the line is kept for LightGBM's parallel reading
    # only where both read it alike
    return checked and checked._replace(threads=found is not None)


def _utf8_trees(data, first, end, text) -> bool:
    """Whether the trees' bytes ``data[first:end]`` are UTF-8 (they are where ``text``, the
    decoded text, is given)."""
    if text is not None:
        return True
    try:
        data[first:end].decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _by_sizes(sizes, first, end):
    """Where the trees start by ``sizes`` (the tree_sizes line) and where the last ends:
    None where that line is missing or not written as both readers read it
    (:data:`_PLAIN_SIZES`; the trees are then read in turn), False where those offsets
    do not run up from ``first`` to ``end``."""
    if sizes is None or _PLAIN_SIZES.fullmatch(sizes) is None:
        return None
    offsets = np.zeros(sizes.count(" ") + 2, np.int64)
    offsets[0] = first
    # at most 15 digits a size: an overflow of the sum turns it down, which is refused
    np.cumsum(np.array(sizes.split(" "), np.int64), out=offsets[1:])
    offsets[1:] += first
    if offsets[-1] != end or np.any(offsets[1:] <= offsets[:-1]):
        return False
    return offsets


def _spans_at(buf, offsets):
    """The trees' spans and counts (see :func:`_tree_lines`) read tree by tree in parallel
    threads from ``offsets``; None where the trees are not there (as :func:`_sizes_fit`
    then finds)."""
    spans = np.full((len(offsets) - 1, len(_KEYS), 2), -1, np.int64)
    counts = np.zeros((len(offsets) - 1, len(_KEYS)), np.int64)
    if not _tree_spans_at(buf, offsets, _NAMES, _LENGTHS, spans, counts):
        return None
    return spans, counts


def _in_turn(data, buf, head, first, end):
    """The trees' spans and counts read one after another (:func:`_tree_lines`), as many as
    the tree_sizes line lists, and where they fit its sizes; else as many as "Tree="
    appears; None where any is not plain."""
    sizes = head.get("tree_sizes", "").split()
    bound = len(sizes) if sizes else data.count(b"Tree=", first, end)
    spans = np.full((bound, len(_KEYS), 2), -1, np.int64)
    counts = np.zeros((bound, len(_KEYS)), np.int64)
    starts = np.zeros(bound, np.int64)
    n = _tree_lines(buf, first, end, _NAMES, _LENGTHS, spans, counts, starts)
    if n <= 0 or sizes and not _sizes_fit(sizes, starts[:n], end):
        return None, None
    return spans[:n], counts[:n]


#: A tree_sizes value LightGBM's reader (``Atoi`` of each word between single spaces) and
#: Python's ``int`` read alike: sizes of up to 15 digits, one space between them.
_PLAIN_SIZES = re.compile(r"[0-9]{1,15}(?: [0-9]{1,15})*")


def check_lightgbm_file(data: bytes, text: str | None = None):
    """:func:`~._checks_lightgbm.check_lightgbm_text` of a model file's ``text`` (``data``: its
    bytes): a plain text checked by one compiled scan, any other read whole.

    ``text`` None: ``data`` checked by the scan alone, without decoding it where the
    scan's one pass passes it (:func:`scan_lightgbm_text`); None where the scan does
    not decide (then, its bytes being UTF-8, the scan of its text would not either:
    ``check_lightgbm_text`` of the decoded text decides).  What it returns, or
    raises, is what the call with the text would: it decides only bytes that are
    UTF-8, by the checks that call runs first.
    """
    if text is None:
        return scan_lightgbm_text(data, None)
    return scan_lightgbm_text(data, text) or check_lightgbm_text(text)


def _ints(buf, spans, counts, col, trees, ints=True, keep=True):
    """The values of column ``col`` of ``trees`` (their spans), or None where any is not
    plain (``ints``: integers ``-?[0-9]{1,9}``, else numbers of the plain grammar;
    ``keep=False``: only their grammar and count checked, nothing allocated for them:
    an empty array returned)."""
    starts, ends = spans[trees, col, 0], spans[trees, col, 1]
    firsts = np.zeros(len(trees) + 1, np.int64)
    np.cumsum(counts[trees, col], out=firsts[1:])
    out = np.empty(int(firsts[-1]) if keep else 0)
    if len(trees) and not _span_numbers(buf, starts, ends, firsts, out, ints, keep):
        return None
    return out.astype(np.int64) if ints else out


def _numbers_read(buf, spans, counts, has, split, n_leaves) -> bool:
    """Whether the numbers that no check reads the value of are written as LightGBM reads
    them: every tree's leaf values (as the full reading requires them), and each value of
    split gains, internal values, weights and counts, leaf weights and counts and
    shrinkage that LightGBM reads (where written, in the trees with splits; shrinkage in
    every tree), counted and of the plain grammar, the values not kept.  LightGBM's reader
    stops the process at a count off or a word it cannot read (``1%1``) in its parallel
    reading of the trees: a text with such a word is left to the full reading, and goes
    to LightGBM without tree_sizes (its reading in turn raises)."""
    every, m = np.arange(len(spans)), n_leaves - 1
    wanted = [("leaf_value", every, n_leaves)]
    for key, expect in (("split_gain", m), ("internal_value", m), ("internal_weight", m),
                        ("internal_count", m), ("leaf_weight", n_leaves),
                        ("leaf_count", n_leaves)):
        wanted.append((key, np.flatnonzero(split & has[:, _COL[key]]), expect))
    wanted.append(("shrinkage", np.flatnonzero(has[:, _COL["shrinkage"]]), np.ones_like(m)))
    for key, trees, expect in wanted:
        col = _COL[key]
        if not has[trees, col].all() or np.any(counts[trees, col] != expect[trees]) or \
                _ints(buf, spans, counts, col, trees, ints=False, keep=False) is None:
            return False
    return True


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
    if not _numbers_read(buf, spans, counts, has, split, n_leaves):
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
    if any(arr is None for arr in read):
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
    t, i = -1, start
    while i < stop:
        if buf[i] == 10:  # an empty line between trees
            i += 1
            continue
        body = _tree_head(buf, i, stop)  # only a tree starts here
        t += 1
        if body < 0 or t >= spans.shape[0]:
            return -1
        starts[t] = i
        i = _tree_body(buf, body, stop, names, lengths, spans[t], counts[t])
        if i < 0:
            return -1
    return t + 1


@njit(cache=True, parallel=True)
def _tree_spans_at(buf, offsets, names, lengths, spans, counts):  # pragma: no cover - compiled
    """:func:`_tree_lines` of the trees that start at ``offsets[:-1]`` (the trees end at
    ``offsets[-1]``), tree ``t`` read from ``buf[offsets[t]:offsets[t + 1]]`` alone, the
    trees in numba's parallel threads.  Whether each of those pieces is one tree and
    empty lines: then ``buf[offsets[0]:offsets[-1]]`` reads as these trees, starting
    there, in :func:`_tree_lines` too (which reads a tree up to its empty line, then
    empty lines up to the next tree's start)."""
    n = len(offsets) - 1
    ok = np.zeros(n, np.uint8)
    for t in prange(n):
        stop = offsets[t + 1]
        i = _tree_head(buf, offsets[t], stop)
        if i >= 0:
            i = _tree_body(buf, i, stop, names, lengths, spans[t], counts[t])
        if i >= 0:
            while i < stop and buf[i] == 10:
                i += 1
            ok[t] = i == stop
    return n > 0 and ok.all()


@njit(cache=True)
def _tree_body(buf, i, stop, names, lengths, spans, counts):  # pragma: no cover - compiled
    """One tree's lines from ``buf[i]`` up to its empty line (before ``stop``), into its rows
    ``spans`` and ``counts`` (see :func:`_tree_lines`).  Returns where the line after the
    empty one starts, or -1.  A line end comes before ``stop``'s end of the buffer (the
    caller made sure): the values are read up to theirs unbounded."""
    lines = 0
    while i < stop:
        k, i = _line(buf, i, stop, lines, names, lengths)
        lines += 1
        if k == -2:  # the empty line that ends a tree
            return i
        if i < 0:
            return -1
        value, spaces = i, 0
        c = buf[i]
        while c != 10:
            if c == 32:
                spaces += 1
                if buf[i - 1] == 32 or buf[i - 1] == 61 or buf[i + 1] == 10:
                    return -1  # a space first, last, or two in a row
            elif c < 33 or c > 126 or c == 61:
                return -1
            i += 1
            c = buf[i]
        if i >= stop or k < 0 or spans[k, 0] >= 0:  # past the piece; a key LightGBM
            return -1  # does not write, or twice
        spans[k, 0], spans[k, 1], counts[k] = value, i, 0 if i == value else spaces + 1
        i += 1
    return -1


@njit(cache=True, parallel=True)
def _span_numbers(buf, starts, ends, firsts, out, ints, keep):  # pragma: no cover - compiled
    """The numbers of ``buf[starts[s]:ends[s]]`` into ``out[firsts[s]:firsts[s + 1]]``
    (``keep``; else only read), the spans in numba's parallel threads: whether each
    span holds exactly its count, each ``-?[0-9]{1,9}`` (``ints``) or
    ``-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?``, one space between them.  Values as
    ``_checks_lightgbm._scan_numbers`` reads them (integers exactly)."""
    ok = np.zeros(len(starts), np.uint8)
    for s in prange(len(starts)):
        ok[s] = _numbers(buf, starts[s], ends[s], out, firsts[s], firsts[s + 1], ints, keep)
    return ok.all()


@njit(cache=True)
def _numbers(buf, i, end, out, n, last, ints, keep):  # pragma: no cover - compiled
    """Whether ``buf[i:end]`` holds the numbers ``out[n:last]`` (see :func:`_span_numbers`)."""
    while i < end:
        if n >= last:
            return False
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
            return False
        if not ints and i < end and buf[i] == 46:
            i += 1
            frac = i
            while i < end and 48 <= buf[i] <= 57:
                if mant < 10 ** 17:
                    mant = mant * 10 + (buf[i] - 48)
                    scale -= 1
                i += 1
            if i == frac:
                return False
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
                return False
            scale += esign * e
        if i < end and buf[i] != 32:
            return False
        if keep:
            out[n] = scaled(mant, scale, sign)
        n += 1
        i += 1  # the space (or the end)
    return n == last


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
