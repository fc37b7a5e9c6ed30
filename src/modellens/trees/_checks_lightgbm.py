"""Checks of a LightGBM model's text, before anything walks its trees
(see :mod:`._checks`)."""

from __future__ import annotations

import re

import numpy as np

from ._checks import (MAX_CATEGORY_CODE, _fail, _ints, check_index, check_split_values,
                      check_trees, int_param)

__all__ = ["check_lightgbm_text", "lightgbm_blocks", "numbers"]


def lightgbm_blocks(text: str):
    """The header's and each tree's ``key=value`` lines of a LightGBM model text."""
    if "\0" in text:
        _fail("the model text holds a NUL character")
    lines = re.split(r"\r\n?|\n", text)
    header: dict[str, str] = {}
    trees: list[dict[str, str]] = []
    current = header
    in_tree = False
    for raw in lines:
        line = raw.strip()
        if line == "end of trees":
            break
        if line.startswith("Tree="):
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
                continue
            key, value = (s.strip() for s in line.split("="))
            if key in current:
                _fail(f"the key {key!r} appears twice in "
                      f"{'tree ' + str(len(trees) - 1) if in_tree else 'the header'}")
            current[key] = value
    return header, trees


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


def check_lightgbm_text(text: str):
    """Check a LightGBM model text (``model.txt``, or ``model_to_string()``) before LightGBM reads it."""
    header, trees = lightgbm_blocks(text)
    if "tree" not in text[:64].split("\n", 1)[0]:
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
    if not trees:
        _fail("the model holds no trees")
    if len(trees) % per_iter:
        _fail(f"{len(trees)} trees are not whole iterations of {per_iter}")
    if "tree_sizes" in header:
        _check_tree_sizes(text, header["tree_sizes"], len(trees))
    _check_lgb_tail(text)
    for k, block in enumerate(trees):
        _check_lgb_tree(block, k, n_features)


def _check_lgb_tail(text):
    """The parameters after the trees: LightGBM reads them up to 'end of parameters'."""
    lines = re.split(r"\r\n?|\n", text)
    try:
        start = lines.index("end of trees")
    except ValueError:
        _fail("the model text has no 'end of trees' line")
    tail = lines[start + 1:]
    if "parameters:" in tail:
        first = tail.index("parameters:") + 1
        if "end of parameters" not in tail[first:]:
            _fail("the model's parameters have no 'end of parameters' line")
        last = tail.index("end of parameters", first)
        odd = [line for line in tail[first:last] if line and not re.fullmatch(r"\[[^\[\]]*\]", line)]
        if odd:
            _fail(f"the model's parameters hold the line {odd[0][:40]!r}")


def _check_tree_sizes(text, sizes, n_trees):
    """LightGBM jumps to tree ``i`` at the first tree's offset plus the sizes before it,
    unchecked: every jump must land on the start of that tree's block."""
    data = text.encode("utf-8")
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


def _check_lgb_tree(block, k, n_features):
    what = f"tree {k}"
    n_leaves = int_param(block, "num_leaves", what)
    if not 0 < n_leaves < 2 ** 31:
        _fail(f"{what} has {n_leaves} leaves")
    if int_param(block, "is_linear", what, 0):
        _fail(f"{what}: linear trees are not supported (a leaf's value depends on the row)")
    numbers(block, "leaf_value", n_leaves, what)
    m = n_leaves - 1
    if m == 0:
        return
    lc = numbers(block, "left_child", m, what, kind=int)
    rc = numbers(block, "right_child", m, what, kind=int)
    feature = numbers(block, "split_feature", m, what, kind=int)
    threshold = numbers(block, "threshold", m, what)
    kind = numbers(block, "decision_type", m, what, kind=int, required=False)
    kind = np.zeros(m, np.int64) if kind is None else kind
    # LightGBM reads these by count only; converting them would double the check's cost
    for key, n in (("split_gain", m), ("internal_value", m), ("internal_weight", m),
                   ("internal_count", m), ("leaf_weight", n_leaves), ("leaf_count", n_leaves)):
        if block.get(key) and len(block[key].split()) != n:
            _fail(f"{what}: {key!r} holds {len(block[key].split())} values for {n}")
    # nodes 0..m-1 are the splits, m + j is leaf j (written ~j)
    for side, child in (("left", lc), ("right", rc)):
        bad = np.flatnonzero(((child >= 0) & (child >= m)) | ((child < 0) & (~child >= n_leaves)))
        if bad.size:
            i = bad[0]
            c = int(child[i])
            _fail(f"{what}, node {int(i)}: {side} child {c} is outside its "
                  + (f"{m} splits" if c >= 0 else f"{n_leaves} leaves (leaf {~c})"))
    as_node = (lambda c: np.where(c >= 0, c, m + ~c))
    left = np.concatenate([as_node(lc), np.full(n_leaves, -1)])
    right = np.concatenate([as_node(rc), np.full(n_leaves, -1)])
    check_trees(left, right, [m + n_leaves], label="tree")
    check_index(feature, n_features, np.ones(m, bool), f"{what}: split feature")
    check_index(kind, 16, np.ones(m, bool), f"{what}: decision type")
    if np.any(((kind >> 2) & 3) == 3):
        _fail(f"{what}: a decision type names no missing-value rule")
    cat = (kind & 1) == 1
    check_split_values(threshold, ~cat)
    n_cat = int_param(block, "num_cat", what, 0)
    if n_cat < 0:
        _fail(f"{what} has {n_cat} categorical splits")
    if cat.any() or n_cat:
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
