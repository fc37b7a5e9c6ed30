"""Checks of tree node arrays, before anything walks them.

scikit-learn, XGBoost and LightGBM walk their trees in compiled code that
trusts the node arrays: a child index out of range reads (or writes) outside
the arrays, a node that is its own descendant loops forever, a feature index
past the row reads outside it.  A model that comes from a file is data, so
every array a walk reads is checked here first: children in range and every
node reached exactly once from its root (acyclic, no shared subtrees),
feature indices below the feature count, thresholds not NaN, category sets
inside their tables, sizes consistent and bounded.  A model that fails is
refused with an :class:`UnsafeModelError` naming the first problem.  This module
holds the checks of the flat node arrays every format shares; the checks of
each library's own objects and files are in ``_checks_sklearn``,
``_checks_xgboost`` and ``_checks_lightgbm``.

The checks are vectorised over all nodes; acyclicity is a level-by-level walk
from the roots after a count of each node's parents (at most one, none for a
root), so the walk ends after the trees' depth.
"""

from __future__ import annotations

from typing import NoReturn

import numpy as np

from numba import njit

from .._validation import InvalidParameterError

__all__ = ["UnsafeModelError", "check_trees", "check_index", "check_split_values",
           "check_ensemble", "check_category_table", "int_param", "MAX_CATEGORY_CODE",
           "MAX_CATEGORY_CELLS", "MAX_TREE_DEPTH"]

#: The largest category code a split may name: XGBoost compares float32 values, which
#: hold every integer up to 2**24 exactly, and none of the libraries fits more levels.
MAX_CATEGORY_CODE = 2 ** 24
#: Cells of the dense split-by-code table the tree kernels read (bytes).
MAX_CATEGORY_CELLS = 2 ** 28
#: The deepest tree read (levels below the root).  Fits reach far less: an unbounded
#: scikit-learn tree on 100,000 rows of a pure-noise target is 84 deep, XGBoost's
#: default is 6 and LightGBM's 31 leaves are at most 30 deep.  What reads trees costs
#: per level (LightGBM's JSON dump nests once per level; path-dependent TreeSHAP's tasks
#: hold ``(depth + 1) x G`` floats a row and value column, its layout and quadrature
#: tables ``O(nodes x G + leaves x min(depth, 64))``: the whole bound, term by term, is
#: ``kernels.treeshap_bytes``), so a crafted chain of splits is refused here, before any
#: dump, walk or kernel layout.
MAX_TREE_DEPTH = 1000


class UnsafeModelError(InvalidParameterError):
    """A model whose trees cannot be walked safely (an index out of range, a cycle, ...)."""


def _fail(what: str) -> NoReturn:
    raise UnsafeModelError(f"refusing the model: {what}.")


def _ints(values, what) -> np.ndarray:
    """``values`` as int64, refusing non-integers (a float index is a tampered array)."""
    arr = np.asarray(values)
    if arr.dtype == object or arr.dtype.kind not in "iub":
        try:
            out = arr.astype(np.float64)
        except (TypeError, ValueError):
            _fail(f"{what} holds values that are not integers")
        if out.size and not (np.all(np.isfinite(out)) and np.all(out == np.round(out))
                             and np.all(np.abs(out) < 2.0 ** 62)):
            _fail(f"{what} holds values that are not integers")
        return out.astype(np.int64).reshape(-1)
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        _fail(f"{what} holds an index too large to be one")
    return arr.astype(np.int64).reshape(-1)


def check_trees(left, right, sizes, *, live=None, label="tree") -> np.ndarray:
    """The depth of each tree; raises unless every live node is reached once from its root.

    A tree deeper than :data:`MAX_TREE_DEPTH` is refused (the walk stops there).

    ``left``/``right`` hold each node's children as positions within its own
    tree (tree ``k`` is the next ``sizes[k]`` nodes, its root the first); a
    leaf has ``-1`` in both.  ``live`` marks the nodes that must be reached
    (XGBoost keeps pruned nodes, unreachable, in its arrays); the others must
    not be.
    """
    sizes = _ints(sizes, "the tree sizes")
    left, right = _ints(left, "a child array"), _ints(right, "a child array")
    n = int(sizes.sum()) if sizes.size else 0
    if sizes.size == 0 or np.any(sizes < 1):
        _fail(f"a {label} has no nodes")
    if len(left) != n or len(right) != n:
        _fail(f"the child arrays hold {len(left)} and {len(right)} entries for {n} nodes")
    must = np.ones(n, np.uint8) if live is None else np.asarray(live, bool).astype(np.uint8)
    depth = np.zeros(len(sizes), np.int64)
    if len(must) == n and _walk(left, right, sizes, must, MAX_TREE_DEPTH, depth):
        return depth  # one compiled pass found nothing: the walk below names a fault
    roots = np.concatenate([[0], np.cumsum(sizes)])
    tree = np.repeat(np.arange(len(sizes)), sizes)
    local = np.arange(n) - roots[tree]
    leaf = left == -1

    def where(i, text):
        k = int(tree[i])
        return _fail(f"{label} {k}, node {int(local[i])}: {text}")

    one = np.flatnonzero(leaf != (right == -1))
    if one.size:
        where(one[0], f"children {int(left[one[0]])} and {int(right[one[0]])} (a leaf has "
                      "none, a split two)")
    inner = ~leaf
    size = sizes[tree]
    for side, child in (("left", left), ("right", right)):
        bad = np.flatnonzero(inner & ((child < 0) | (child >= size)))
        if bad.size:
            i = bad[0]
            where(i, f"{side} child {int(child[i])} is outside the tree's nodes "
                     f"0..{int(size[i]) - 1}")
    gl, gr = left + roots[tree], right + roots[tree]
    kids = np.concatenate([gl[inner], gr[inner]])
    parents = np.bincount(kids, minlength=n)
    looped = np.flatnonzero(parents[roots[:-1]] > 0)
    if looped.size:
        _fail(f"{label} {int(looped[0])}: its root is a child of one of its nodes (a cycle)")
    shared = np.flatnonzero(parents > 1)
    if shared.size:
        where(shared[0], "it is the child of two splits, or twice of one (a cycle or a "
                         "shared subtree)")
    depth = np.zeros(len(sizes), np.int64)
    reached = np.zeros(n, bool)
    frontier, level = roots[:-1], 0
    while frontier.size:  # each node has at most one parent: ends after the deepest leaf
        if level > MAX_TREE_DEPTH:
            _fail(f"{label} {int(tree[frontier[0]])} is more than {MAX_TREE_DEPTH} levels "
                  f"deep (modellens reads trees up to {MAX_TREE_DEPTH} levels; fitted trees "
                  "are far shallower)")
        reached[frontier] = True
        depth[tree[frontier]] = level
        split = frontier[inner[frontier]]
        frontier = np.concatenate([gl[split], gr[split]])
        level += 1
    must = np.ones(n, bool) if live is None else np.asarray(live, bool)
    lost = np.flatnonzero(must & ~reached)
    if lost.size:
        where(lost[0], "it cannot be reached from the root (a cycle, or a detached node)")
    dead = np.flatnonzero(~must & reached)
    if dead.size:
        where(dead[0], "a deleted node is reached from the root")
    return depth


def check_index(values, bound, mask, what, *, label="tree", tree=None, local=None):
    """Raise unless ``0 <= values < bound`` where ``mask``."""
    values = _ints(values, what)
    bad = np.flatnonzero(np.asarray(mask, bool) & ((values < 0) | (values >= bound)))
    if bad.size:
        i = bad[0]
        at = "" if tree is None else f"{label} {int(tree[i])}, node {int(local[i])}: "
        _fail(f"{at}{what} {int(values[i])} is outside 0..{int(bound) - 1}")


def check_split_values(threshold, mask, *, label="tree", tree=None, local=None):
    """Raise if a numeric split's threshold is NaN (infinities are thresholds the libraries write)."""
    t = np.asarray(threshold, np.float64).reshape(-1)
    bad = np.flatnonzero(np.asarray(mask, bool) & np.isnan(t))
    if bad.size:
        i = bad[0]
        at = "" if tree is None else f"{label} {int(tree[i])}, node {int(local[i])}: "
        _fail(f"{at}the split's threshold is NaN")


def check_ensemble(left, right, sizes, feature, threshold, missing, n_features, n_sets):
    """The flat arrays of a :class:`~modellens.trees.TreeEnsemble` before assembly.

    Children are positions within their tree; a categorical node
    (``missing == 3``) holds its row of the category table (``1..n_sets - 1``)
    in ``threshold``.
    """
    check_trees(left, right, sizes)
    sizes = _ints(sizes, "the tree sizes")
    roots = np.concatenate([[0], np.cumsum(sizes)])
    tree = np.repeat(np.arange(len(sizes)), sizes)
    local = np.arange(len(tree)) - roots[tree]
    inner = _ints(left, "a child array") >= 0
    if len(feature) != len(tree) or len(threshold) != len(tree) or len(missing) != len(tree):
        _fail("the node arrays have different lengths")
    if int(n_features) < 1:
        _fail(f"the model reads {int(n_features)} features")
    check_index(feature, n_features, inner, "split feature", tree=tree, local=local)
    missing = _ints(missing, "a missing-value rule")
    check_index(missing, 4, inner, "missing-value rule", tree=tree, local=local)
    cat = inner & (missing == 3)
    check_split_values(threshold, inner & ~cat, tree=tree, local=local)
    if cat.any():
        t = np.where(cat, np.asarray(threshold, np.float64), 1.0)
        bad = np.flatnonzero(~np.isfinite(t) | (t != np.round(t)) | (t < 1) | (t >= n_sets))
        if bad.size:
            i = bad[0]
            _fail(f"tree {int(tree[i])}, node {int(local[i])}: a categorical split names no "
                  f"row of its category table (1..{int(n_sets) - 1})")


def check_category_table(n_rows: int, width: int):
    """Refuse a dense split-by-code table too large to build."""
    if n_rows * width > MAX_CATEGORY_CELLS:
        _fail(f"its categorical splits need a {n_rows} x {width} table of codes "
              f"(over {MAX_CATEGORY_CELLS:,} cells): a category code is implausibly large")


def _seq(obj, key, what):
    value = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(value, (list, np.ndarray)):
        _fail(f"{what}: {key!r} is missing or not an array")
    return value


def int_param(obj, key, what, default=None):
    value = obj.get(key, default) if isinstance(obj, dict) else default
    try:
        out = int(str(value))
    except (TypeError, ValueError):
        _fail(f"{what}: {key!r} is {value!r}, not an integer")
    return out


@njit(cache=True)
def _walk(left, right, sizes, live, max_depth, depth):  # pragma: no cover - compiled
    """Whether :func:`check_trees` finds nothing wrong, in one pass: every node a leaf (both
    children -1) or a split (both inside its tree), no node a child twice nor a root a
    child, the nodes reached from each root (depth first, a stack, no recursion) exactly
    the ``live`` ones, none deeper than ``max_depth``; ``depth[k]``: tree ``k``'s depth.
    False at the first fault (the vectorised checks then name it)."""
    n = len(left)
    parents = np.zeros(n, np.int64)
    root = 0
    for k in range(len(sizes)):
        size = sizes[k]
        for i in range(root, root + size):
            a, b = left[i], right[i]
            if (a == -1) != (b == -1):
                return False
            if a != -1:
                if a < 0 or a >= size or b < 0 or b >= size:
                    return False
                parents[root + a] += 1
                parents[root + b] += 1
        if parents[root] != 0:
            return False
        root += size
    for i in range(n):
        if parents[i] > 1:
            return False
    seen = np.zeros(n, np.uint8)
    nodes = np.empty(n + 1, np.int64)
    levels = np.empty(n + 1, np.int64)
    root = 0
    for k in range(len(sizes)):
        top, deepest = 0, 0
        nodes[0], levels[0] = root, 0
        while top >= 0:
            i, d = nodes[top], levels[top]
            top -= 1
            if d > max_depth:
                return False
            seen[i] = 1
            deepest = max(deepest, d)
            if left[i] != -1:  # each node has one parent: pushed once, the stack holds n
                nodes[top + 1], levels[top + 1] = root + left[i], d + 1
                nodes[top + 2], levels[top + 2] = root + right[i], d + 1
                top += 2
        depth[k] = deepest
        root += sizes[k]
    for i in range(n):
        if seen[i] != live[i]:
            return False
    return True
