"""Checks of a LightGBM model's text, before anything walks its trees
(see :mod:`._checks`)."""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np
from numba import njit

from ._checks import (MAX_CATEGORY_CODE, _fail, _ints, check_index, check_split_values,
                      check_trees, int_param)

__all__ = ["check_lightgbm_text", "lightgbm_blocks", "numbers"]


def _lines(text: str) -> list[str]:
    """The lines of ``text`` as LightGBM ends them (\\n, \\r\\n or \\r); a plain split where no
    line ends in \\r (a regular expression costs ten times more)."""
    return text.split("\n") if "\r" not in text else re.split(r"\r\n?|\n", text)


class _Parsed(NamedTuple):
    """A model text read into ``key=value`` lines (see :func:`_parse`)."""

    header: dict
    trees: list
    tail: list | None  # the lines after its first 'end of trees' line (None: none)
    section: str | None  # the text of the trees' lines, where it is one plain run
    plain: bool = False  # laid out as LightGBM reads it line for line (see _parse)


def lightgbm_blocks(text: str):
    """The header's and each tree's ``key=value`` lines of a LightGBM model text."""
    parsed = _parse(text)
    return parsed.header, parsed.trees


#: Whitespace other than a space or a line end.
_ODD_SPACE = re.compile(r"[^\S \n]")


def _parse(text: str) -> _Parsed:
    """The header's and each tree's ``key=value`` lines, the lines after 'end of trees', and
    the text of the lines read as trees (``\\n`` ends, no stray 'Tree=' or 'end of
    trees' line): the tree lines' text is what another text's trees are compared with.

    ``plain``: LightGBM's loader reads these very lines and trees.  It reads
    lines as they are (no stripping: a blank line of spaces does not end its
    tree, a key with a space is another key), a tree as at most 22 lines up to
    an empty one, and stops at the first line after a tree that starts
    neither a tree nor nothing: so no line has spaces around it, no line
    outside a tree sits among the trees, no tree has over 22 lines.
    """
    if "\0" in text:
        _fail("the model text holds a NUL character")
    lines = _lines(text)
    header: dict[str, str] = {}
    trees: list[dict[str, str]] = []
    current = header
    in_tree = False
    plain = "\r" not in text
    first = end = None
    for i, raw in enumerate(lines):
        line = raw.strip()
        if line is not raw:
            plain = False
        if line == "end of trees":
            end = i
            break
        if line.startswith("Tree="):
            first = i if first is None else first
            current, in_tree = {}, True
            trees.append(current)
            continue
        if not line:
            in_tree = False
            continue
        if in_tree or current is header:
            if line.count("=") != 1:
                if in_tree:
                    _fail(f"tree {len(trees) - 1}: the line {line[:40]!r} is not key=value")
                # LightGBM reads a line of no "=" as a key (which could stand for one read
                # here) and refuses more than one "=": its own flags only
                plain = plain and line in ("tree", "average_output")
                continue
            k, v = line.split("=")
            key, value = k.strip(), v.strip()
            if key is not k or value is not v:
                plain = False
            if key in current:
                _fail(f"the key {key!r} appears twice in "
                      f"{'tree ' + str(len(trees) - 1) if in_tree else 'the header'}")
            current[key] = value
        else:  # between two trees: skipped here, where LightGBM stops reading trees
            plain = False
    try:
        start = lines.index("end of trees")
    except ValueError:
        tail = None
    else:
        tail = lines[start + 1:]
    section = None
    if first is not None and end is not None and "\r" not in text and \
            lines[first].startswith("Tree=") and lines[end] == "end of trees":
        at = sum(map(len, lines[:first])) + first  # the offsets of those lines
        section = text[at:at + sum(map(len, lines[first:end])) + end - first]
    # LightGBM splits the header's lists at spaces only (Python at any whitespace)
    plain = plain and section is not None and all(len(tree) <= 22 for tree in trees) \
        and not _ODD_SPACE.search(text, 0, at)
    return _Parsed(header, trees, tail, section, plain)


def _reparse(text: str, checked) -> _Parsed | None:
    """``text`` read reusing ``checked``'s trees where its tree lines are, byte for byte, the
    lines those trees were read from (the header and tail are read; None otherwise).

    Read whole, ``text`` would give those very trees: its header holds no line
    read as a tree or as the trees' end, its tree lines are the same, and the
    line after them ends the trees.
    """
    section = getattr(checked, "section", None)
    if section is None or "\r" in text or "\0" in text:
        return None
    at = 0 if text.startswith("Tree=") else text.find("\nTree=") + 1
    if at == 0 and not text.startswith("Tree="):
        return None
    head = text[:at]
    if not text.startswith(section, at) or not text.startswith("end of trees", at + len(section)):
        return None
    after = text[at + len(section):]
    if after[len("end of trees"):len("end of trees") + 1] not in ("\n", ""):
        return None
    parsed = _parse(head)
    if parsed.trees or parsed.tail is not None or "end of trees" in head:
        return None
    return _Parsed(parsed.header, checked.trees, _lines(after)[1:], section)


def numbers(block, key, n, what, *, kind=float, required=True):
    value = block.get(key, "")
    if not value:
        if required and n > 0:
            _fail(f"{what}: {key!r} is missing")
        return None
    parts = value.split()
    if len(parts) != n:
        _fail(f"{what}: {key!r} holds {len(parts)} values for {n}")
    try:
        arr = np.array(parts, dtype=np.float64)
    except ValueError:
        _fail(f"{what}: {key!r} holds something other than numbers")
    if kind is int:
        return _ints(arr, f"{what}: {key!r}")
    return arr


_NUMBER = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|inf|nan)"
_FEATURE_INFO = re.compile(rf"none|\[{_NUMBER}:{_NUMBER}\]|-?\d+(?::-?\d+)*", re.IGNORECASE)


def check_lightgbm_text(text: str, *, checked=None):
    """Check a LightGBM model text (``model.txt``, or ``model_to_string()``) before LightGBM reads it.

    Returns what the tree checks read (the feature count and each tree's
    ``key=value`` lines).  ``checked``: what an earlier call returned; when
    this text's trees and feature count are those, their checks (a pure
    function of them) are not run again: the header and layout still are.
    """
    parsed = _reparse(text, checked) if checked is not None else None
    if parsed is None:
        parsed = _parse(text)
    header, trees = parsed.header, parsed.trees
    n_features = check_header(header, len(trees), text[:64].split("\n", 1)[0], parsed.tail,
                              text.encode("utf-8") if "tree_sizes" in header else b"")
    plain = False
    if checked is None or checked[0] != n_features or checked[1] != trees:
        head_ints = " ".join(header.get(key, "0") for key in _HEADER_INTS)
        plain = _check_lgb_trees(trees, n_features) and parsed.plain and \
            _PLAIN_INTS.fullmatch(head_ints) is not None
    return _Checked(n_features, trees, parsed.section, plain)


def plain_header(head: str) -> dict | None:
    """The ``key=value`` lines of a model text's header (its lines before the first tree)
    where LightGBM reads them as they are read here (see :func:`_parse`), else None."""
    if "\r" in head or "\0" in head or _ODD_SPACE.search(head):
        return None
    header: dict[str, str] = {}
    for line in head.split("\n"):
        if line != line.strip():
            return None
        if "=" in line:
            key, _, value = line.partition("=")
            if "=" in value or key != key.strip() or value != value.strip() or key in header:
                return None
            header[key] = value
        elif line and line not in ("tree", "average_output"):
            return None
    head_ints = " ".join(header.get(key, "0") for key in _HEADER_INTS)
    return header if _PLAIN_INTS.fullmatch(head_ints) is not None else None


def check_header(header, n_trees, first_line, tail, data: bytes | None) -> int:
    """The checks of a model text's header and of its lines after the trees (``tail``) for
    ``n_trees`` trees; ``data``: the text's bytes where the header has tree sizes (None:
    they are checked by the caller).  Returns the feature count."""
    if "tree" not in first_line:
        _fail("the file does not start like a LightGBM model ('tree')")

    def head_int(key, default=None):
        if key not in header and default is not None:
            return default
        return int_param(header, key, "the model's header")

    n_features = head_int("max_feature_idx") + 1
    if not 0 < n_features < 2 ** 31:
        _fail(f"the model reads {n_features} features")
    n_class = head_int("num_class", 1)
    per_iter = head_int("num_tree_per_iteration", 1)
    if n_class < 1 or per_iter != n_class:
        # LightGBM adds tree k of each iteration into output k of num_class outputs
        _fail(f"{per_iter} trees per iteration for {n_class} classes")
    if "feature_names" not in header:
        _fail("the model's header has no feature_names")
    for key in ("feature_names", "feature_infos"):
        if key in header and len(header[key].split()) != n_features:
            _fail(f"{key} lists {len(header[key].split())} entries for {n_features} features")
    # LightGBM splits each entry on ':' and reads both halves of a range unchecked
    bad = [info for info in header.get("feature_infos", "").split()
           if not _FEATURE_INFO.fullmatch(info)]
    if bad:
        _fail(f"feature_infos holds {bad[0][:40]!r}, neither 'none', a range '[low:high]' "
              "nor category codes 'a:b:...'")
    for token in header.get("objective", "").split()[1:]:
        name, _, value = token.partition(":")
        # the objective's own class count sizes what it writes for each row
        if name == "num_class" and value != str(n_class):
            _fail(f"the objective says {token!r} but the model has {n_class} classes")
    if not n_trees:
        _fail("the model holds no trees")
    if n_trees % per_iter:
        _fail(f"{n_trees} trees are not whole iterations of {per_iter}")
    if "tree_sizes" in header and data is not None:
        _check_tree_sizes(data, header["tree_sizes"], n_trees)
    _check_lgb_tail(tail)
    return n_features


class _Checked(NamedTuple):
    """What :func:`check_lightgbm_text` read: the feature count, each tree's lines, and the
    text of those lines (None where they are no plain run)."""

    n_features: int
    trees: list
    section: str | None
    #: LightGBM reads this text as it was read here, value for value: its layout is plain
    #: (see _parse) and every integer it reads, and every threshold, is written as both
    #: readers read it alike (see _plain_tokens)
    plain: bool = False
    #: and its tree_sizes line is written as LightGBM reads it (digits, one space between)
    #: and jumps to exactly these trees: LightGBM may read them in parallel threads with
    #: it (see _checks_lightgbm_scan.scan_lightgbm_text; False: read them without it)
    threads: bool = False


def _check_lgb_tail(tail):
    """The parameters after the trees (the lines after the first 'end of trees' line):
    LightGBM reads them up to 'end of parameters'."""
    if tail is None:
        _fail("the model text has no 'end of trees' line")
    if "parameters:" in tail:
        first = tail.index("parameters:") + 1
        if "end of parameters" not in tail[first:]:
            _fail("the model's parameters have no 'end of parameters' line")
        last = tail.index("end of parameters", first)
        # LightGBM writes '[name: value]' with lowercase ASCII names; a line of another name
        # (non-ASCII or punctuation) crashed LightGBM 4 while it reported the loaded
        # parameters (a segmentation fault in LGBM_BoosterGetLoadedParam)
        odd = [line for line in tail[first:last]
               if line and not re.fullmatch(r"\[[a-z0-9_]+: [^\[\]]*\]", line)]
        if odd:
            _fail(f"the model's parameters hold the line {odd[0][:40]!r}")


def _check_tree_sizes(data, sizes, n_trees):
    """LightGBM jumps to tree ``i`` at the first tree's offset plus the sizes before it,
    unchecked: every jump must land on the start of that tree's block (``data``: the
    text's bytes)."""
    starts = [0] if data.startswith(b"Tree=") else []
    at = data.find(b"\nTree=")
    while at >= 0 and len(starts) < n_trees:  # bytes.find: a regex here costs more than the load
        starts.append(at + 1)
        at = data.find(b"\nTree=", at + 1)
    try:
        sizes_ = [int(v) for v in sizes.split()]
    except ValueError:
        _fail("tree_sizes holds something other than sizes")
    if len(sizes_) != n_trees or len(starts) != n_trees or any(v <= 0 for v in sizes_):
        _fail(f"tree_sizes lists {len(sizes_)} sizes for {n_trees} trees")
    ends = np.cumsum([starts[0]] + sizes_)
    last = data.find(b"\nend of trees", starts[-1])
    if not np.array_equal(ends[:-1], starts) or last < 0 or ends[-1] != last + 1:
        _fail("tree_sizes does not match where the trees start and end in the text")


def _count(value: str) -> int:
    """How many numbers ``str.split()`` finds in ``value`` (a stripped ``key=value`` value).

    LightGBM writes one space between numbers: where ``value`` holds no other
    whitespace (every whitespace character but the space is unprintable) and no
    two spaces in a row, the spaces count them without splitting.
    """
    if not value:
        return 0
    if value.isprintable() and "  " not in value and value[0] != " " != value[-1]:
        return value.count(" ") + 1
    return len(value.split())


def _check_counts(parts, where, counts, key):
    """Raise unless tree ``where[i]``'s value ``parts[i]`` holds ``counts[where[i]]`` numbers
    (as ``str.split`` counts them): all parts counted by one compiled scan where they
    are ASCII, by :func:`_count` otherwise."""
    try:
        data = "\0".join(parts).encode("ascii")  # the text holds no NUL: a part's end
    except UnicodeEncodeError:
        found = np.array([_count(value) for value in parts], np.int64)
    else:
        found = np.zeros(len(parts), np.int64)
        _count_parts(np.frombuffer(data, np.uint8), found)
    expect = counts[np.asarray(where, np.int64)]
    bad = np.flatnonzero(found != expect)
    if bad.size:
        i = bad[0]
        _fail(f"tree {where[i]}: {key!r} holds {int(found[i])} values for {int(expect[i])}")


@njit(cache=True)
def _count_parts(buf, out):  # pragma: no cover - compiled
    """The whitespace-separated words of each NUL-separated part of ``buf`` (ASCII bytes),
    added to ``out``; whitespace is what ``str.split`` splits ASCII text at."""
    part, inside = 0, False
    for i in range(len(buf)):
        c = buf[i]
        if c == 0:
            part += 1
            inside = False
        elif c == 32 or 9 <= c <= 13 or 28 <= c <= 31:
            inside = False
        else:
            if not inside:
                out[part] += 1
            inside = True


def _values(trees, key, counts, *, kind=float, required=True, plain=None):
    """The values of ``key`` of every tree, concatenated (tree ``k`` holds ``counts[k]``).

    Each tree's count is checked on its own, the numbers of all trees read at
    once by a compiled scan (:func:`_scan_numbers`: Python's own reading of a
    number costs more than LightGBM's load of the whole model).  A tree of no values (a
    single leaf's splits) is not read; a missing optional key reads as zeros.
    """
    parts: list[str] = []
    where: list[int] = []
    for k, (block, n) in enumerate(zip(trees, counts.tolist())):
        if n == 0:
            continue
        value = block.get(key, "")
        if not value:
            if required:
                _fail(f"tree {k}: {key!r} is missing")
            value = " ".join("0" * n)
        parts.append(value)
        where.append(k)
    _check_counts(parts, where, counts, key)
    total = int(np.sum(counts[counts > 0]))
    arr = np.empty(total)
    try:
        data = " ".join(parts).encode("ascii")
    except UnicodeEncodeError:
        data = b"?"
    if _scan_numbers(np.frombuffer(data, np.uint8), arr) != total:
        _fail(f"the trees' {key!r} hold something other than numbers")
    if plain is not None:
        plain.append(_plain_tokens(np.frombuffer(data, np.uint8), kind is int))
    return _ints(arr, f"the trees' {key!r}") if kind is int else arr


def _check_lgb_trees(trees, n_features):
    """Every tree of a LightGBM model text at once (vectorised over all their nodes).

    Returns whether LightGBM reads every integer of the trees, and every
    threshold, as they were read here (see :func:`_plain_tokens`).
    """
    n_leaves = np.array([int_param(b, "num_leaves", f"tree {k}") for k, b in enumerate(trees)],
                        np.int64)
    bad = np.flatnonzero((n_leaves <= 0) | (n_leaves >= 2 ** 31))
    if bad.size:
        _fail(f"tree {int(bad[0])} has {int(n_leaves[bad[0]])} leaves")
    for k, block in enumerate(trees):
        if int_param(block, "is_linear", f"tree {k}", 0):
            _fail(f"tree {k}: linear trees are not supported (a leaf's value depends on the "
                  "row)")
    m = n_leaves - 1
    _values(trees, "leaf_value", n_leaves)
    # what LightGBM reads and indexes with: written alike for both readers (plain)?
    plain: list = [_PLAIN_INTS.fullmatch(" ".join(
        block.get(key, default) for block in trees for key, default in _TREE_INTS.items()))
        is not None]
    lc, rc = (_values(trees, key, m, kind=int, plain=plain)
              for key in ("left_child", "right_child"))
    feature = _values(trees, "split_feature", m, kind=int, plain=plain)
    threshold = _values(trees, "threshold", m, plain=plain)
    kind = _values(trees, "decision_type", m, kind=int, required=False, plain=plain)
    # LightGBM reads these by count only; converting them would double the check's cost
    for key, counts in (("split_gain", m), ("internal_value", m), ("internal_weight", m),
                        ("internal_count", m), ("leaf_weight", n_leaves),
                        ("leaf_count", n_leaves)):
        where = [k for k, (block, splits) in enumerate(zip(trees, m.tolist()))
                 if splits and block.get(key)]
        _check_counts([trees[k][key] for k in where], where, counts, key)
    n_cat = np.array([int_param(block, "num_cat", f"tree {k}", 0)
                      for k, block in enumerate(trees)], np.int64)
    return check_lgb_nodes(n_features, n_leaves, (lc, rc, feature, threshold, kind), n_cat,
                           trees.__getitem__) and all(plain)


def check_lgb_nodes(n_features, n_leaves, arrays, n_cat, block) -> bool:
    """The node arrays of every tree (``arrays``: left and right children, split features,
    thresholds and decision types, concatenated), each tree's leaf and category-set
    counts; ``block(k)``: tree ``k``'s ``key=value`` lines (its category bitsets are read
    from there).  Returns whether the bitsets are written as LightGBM reads them alike.
    """
    lc, rc, feature, threshold, kind = arrays
    m = n_leaves - 1
    # each split's tree and its number there; splits 0..m-1 are nodes, leaf j is m + j
    tree = np.repeat(np.arange(len(n_leaves)), m)
    local = np.arange(len(tree)) - np.repeat(np.cumsum(m) - m, m)
    m_of, leaves_of = m[tree], n_leaves[tree]
    for side, child in (("left", lc), ("right", rc)):
        bad = np.flatnonzero(np.where(child >= 0, child >= m_of, ~child >= leaves_of))
        if bad.size:
            i, c = bad[0], int(child[bad[0]])
            _fail(f"tree {int(tree[i])}, node {int(local[i])}: {side} child {c} is outside its "
                  + (f"{int(m_of[i])} splits" if c >= 0 else
                     f"{int(leaves_of[i])} leaves (leaf {~c})"))
    # the nodes tree by tree (its splits, then its leaves), children within their tree
    sizes = m + n_leaves
    is_split = np.zeros(int(sizes.sum()), bool)
    is_split[np.repeat(np.cumsum(sizes) - sizes, m) + local] = True
    left = np.full(len(is_split), -1, np.int64)
    right = np.full(len(is_split), -1, np.int64)
    left[is_split] = np.where(lc >= 0, lc, m_of + ~lc)
    right[is_split] = np.where(rc >= 0, rc, m_of + ~rc)
    check_trees(left, right, sizes, label="tree")
    split = np.ones(len(tree), bool)
    check_index(feature, n_features, split, "split feature", tree=tree, local=local)
    check_index(kind, 16, split, "decision type", tree=tree, local=local)
    odd = np.flatnonzero(((kind >> 2) & 3) == 3)
    if odd.size:
        _fail(f"tree {int(tree[odd[0]])}: a decision type names no missing-value rule")
    cat = (kind & 1) == 1
    check_split_values(threshold, ~cat, tree=tree, local=local)
    offsets = np.concatenate([[0], np.cumsum(m)])
    bad = np.flatnonzero(n_cat < 0)
    if bad.size:
        _fail(f"tree {int(bad[0])} has {int(n_cat[bad[0]])} categorical splits")
    plain = True
    for k in sorted(set(tree[cat].tolist()) | set(np.flatnonzero(n_cat).tolist())):
        at = slice(int(offsets[k]), int(offsets[k + 1]))
        lines = block(k)
        _check_lgb_bitsets(lines, f"tree {k}", int(n_cat[k]), threshold[at], cat[at])
        plain = plain and _PLAIN_INTS.fullmatch(lines.get("cat_boundaries", "")) is not None \
            and _PLAIN_WORDS.fullmatch(lines.get("cat_threshold", "")) is not None
    return plain


def _check_lgb_bitsets(block, what, n_cat, threshold, cat):
    """A tree's category bitsets, and its categorical splits' indices into them."""
    bounds = numbers(block, "cat_boundaries", n_cat + 1, what, kind=int)
    words = numbers(block, "cat_threshold", int(bounds[-1]), what, kind=int)
    if bounds[0] != 0 or np.any(np.diff(bounds) < 0):
        _fail(f"{what}: its category boundaries are not increasing from 0")
    if np.any(words < 0) or np.any(words >= 2 ** 32):
        _fail(f"{what}: a category bitset word is not a 32-bit word")
    if int(bounds[-1]) * 32 > MAX_CATEGORY_CODE:
        _fail(f"{what}: its category bitsets are implausibly large")
    t = np.where(cat, threshold, 0.0)
    if np.any(cat & ((t != np.round(t)) | (t < 0) | (t >= n_cat))):
        _fail(f"{what}: a categorical split names no category set of its {n_cat}")


@njit(cache=True)
def scaled(mant, scale, sign):  # pragma: no cover - compiled
    """``sign * mant * 10**scale`` (the exponent clipped where every double over- or
    underflows): within a few units of the last place of Python's reading."""
    value = float(mant)
    if scale > 0:
        value = value * 10.0 ** min(scale, 400)
    elif scale < 0:
        value = value / 10.0 ** min(-scale, 400)
    return sign * value


@njit(cache=True)
def _scan_numbers(buf, out):  # pragma: no cover - compiled
    """The whitespace-separated numbers of ``buf`` (ASCII bytes) into ``out``.

    Returns how many it read, or ``-(i + 1)`` when the token at byte ``i`` is
    not a number as Python's ``float`` reads one (``[+-]`` digits, an optional
    fraction and exponent, or ``inf``, ``infinity``, ``nan``), or when there are
    more than ``out`` holds.  Integers of up to 18 digits are exact; other
    values are within a few units of the last place (the checks read only
    integers, NaN and signs).
    """
    n, i, size = 0, 0, len(buf)
    while True:
        while i < size and (buf[i] == 32 or 9 <= buf[i] <= 13 or 28 <= buf[i] <= 31):
            i += 1
        if i >= size:
            return n
        start = i
        if n >= len(out):
            return -(start + 1)
        sign = 1.0
        if buf[i] == 43 or buf[i] == 45:  # + -
            sign = -1.0 if buf[i] == 45 else 1.0
            i += 1
        end = i
        while end < size and not (buf[end] == 32 or 9 <= buf[end] <= 13 or 28 <= buf[end] <= 31):
            end += 1
        word = end - i
        if (word == 3 or word == 8) and (buf[i] | 32) == 105:  # inf, infinity
            ok = True
            name = (105, 110, 102, 105, 110, 105, 116, 121)  # "infinity"
            for j in range(word):
                if (buf[i + j] | 32) != name[j]:
                    ok = False
            if not ok:
                return -(start + 1)
            out[n] = sign * np.inf
        elif word == 3 and (buf[i] | 32) == 110 and (buf[i + 1] | 32) == 97 \
                and (buf[i + 2] | 32) == 110:  # nan
            out[n] = np.nan
        else:
            mant, scale, digits, dot = 0, 0, 0, False
            while i < end and (48 <= buf[i] <= 57 or (buf[i] == 46 and not dot)):
                if buf[i] == 46:
                    dot = True
                else:
                    digits += 1
                    if mant < 10 ** 17:
                        mant = mant * 10 + (buf[i] - 48)
                        if dot:
                            scale -= 1
                    elif not dot:
                        scale += 1
                i += 1
            if digits == 0:
                return -(start + 1)
            if i < end and (buf[i] == 101 or buf[i] == 69):  # e E
                i += 1
                esign = 1
                if i < end and (buf[i] == 43 or buf[i] == 45):
                    esign = -1 if buf[i] == 45 else 1
                    i += 1
                if i >= end:
                    return -(start + 1)
                e = 0
                while i < end and 48 <= buf[i] <= 57:
                    if e < 100000:
                        e = e * 10 + (buf[i] - 48)
                    i += 1
                scale += esign * e
            if i != end:
                return -(start + 1)
            out[n] = scaled(mant, scale, sign)
        n += 1
        i = end


#: Integers both readers read alike: LightGBM's (``Atoi``: a sign, digits, then it stops,
#: in 32 bits) and this module's (Python's grammar); one space between them.
_PLAIN_INTS = re.compile(r"-?[0-9]{1,9}(?: -?[0-9]{1,9})*")
#: The 32-bit words of category bitsets (read unsigned).
_PLAIN_WORDS = re.compile(r"[0-9]{1,10}(?: [0-9]{1,10})*")
#: The integers of the header and of each tree that both read (the trees' node arrays:
#: :func:`_plain_tokens`).
_HEADER_INTS = ("max_feature_idx", "num_class", "num_tree_per_iteration")
_TREE_INTS = {"num_leaves": "", "num_cat": "", "is_linear": "0"}  # LightGBM needs the first two


@njit(cache=True)
def _plain_tokens(buf, ints):  # pragma: no cover - compiled
    """Whether ``buf`` (ASCII bytes) holds numbers as LightGBM's readers and :func:`_scan_numbers`
    read them alike: one space between them and none around them, each ``-?[0-9]{1,9}``
    (``ints``: LightGBM's ``Atoi`` stops at a dot, an exponent or a 33rd bit, where
    Python reads on) or ``-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?`` (no 'nan', 'inf',
    '+', '.5' or '5.': LightGBM's float readers differ on those)."""
    i, size = 0, len(buf)
    if size == 0:
        return True
    while True:
        if i < size and buf[i] == 45:  # -
            i += 1
        start = i
        while i < size and 48 <= buf[i] <= 57:
            i += 1
        if i == start or (ints and i - start > 9):
            return False
        if not ints and i < size and buf[i] == 46:  # .
            i += 1
            start = i
            while i < size and 48 <= buf[i] <= 57:
                i += 1
            if i == start:
                return False
        if not ints and i < size and (buf[i] == 101 or buf[i] == 69):  # e E
            i += 1
            if i < size and (buf[i] == 43 or buf[i] == 45):
                i += 1
            start = i
            while i < size and 48 <= buf[i] <= 57:
                i += 1
            if i == start:
                return False
        if i == size:
            return True
        if buf[i] != 32 or i + 1 == size:
            return False
        i += 1
