"""Checks of an XGBoost model's JSON (or UBJSON) document, before anything walks
its trees (see :mod:`._checks`)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np
from numba import njit

from ._bytes import _i32
from ._checks import (MAX_CATEGORY_CODE, MAX_TREE_DEPTH, _fail, _ints, _seq, check_index,
                      check_split_values, check_trees, int_param)

__all__ = ["check_xgboost_model", "FlatTrees", "FLAT_ARRAYS"]

#: The node arrays of :class:`FlatTrees`, in the order of its ``at`` columns.
FLAT_ARRAYS = ("left_children", "right_children", "parents", "split_indices", "split_type",
               "split_conditions")
#: How XGBoost writes each (big-endian).
_DTYPES = (">i4", ">i4", ">i4", ">i4", ">u1", ">f4")


@dataclass(frozen=True)
class FlatTrees:
    """A booster's trees as one compiled scan of its UBJSON reads them (``model.trees``).

    Per tree: its ``id``, its ``tree_param`` (``num_nodes``, ``num_deleted``;
    ``num_feature``: -1 where absent), the length of each array (``lengths``,
    by key) and where in ``data`` (the file's bytes) the values of the node
    arrays the checks read begin (``at``, a column each in :data:`FLAT_ARRAYS`
    order: big-endian int32, but ``split_type`` uint8 and ``split_conditions``
    float32, as XGBoost writes them), and what the node checks found as the scan
    read it (``checked``: :func:`_tree_nodes`, -2 at a fault), and whether every tree
    is laid out as XGBoost writes it (``plain``: the id of its position, a node count
    in range, every array of that length, no category listed).  Only plain trees come
    so (scalar leaves, no categorical split listed); the rest are read as objects.
    """

    ids: np.ndarray
    nodes: np.ndarray
    deleted: np.ndarray
    features: np.ndarray
    lengths: dict
    data: np.ndarray
    at: np.ndarray
    checked: np.ndarray
    plain: bool

    def __len__(self) -> int:
        return len(self.ids)

    def arrays(self) -> dict:
        """The node arrays of :data:`FLAT_ARRAYS`, every tree's joined (int64, thresholds
        float64)."""
        out = {}
        for j, (name, dtype) in enumerate(zip(FLAT_ARRAYS, _DTYPES)):
            width = np.dtype(dtype).itemsize
            parts = [self.data[a:a + n * width].view(dtype)
                     for a, n in zip(self.at[:, j].tolist(), self.nodes.tolist())]
            out[name] = np.concatenate(parts or [np.zeros(0, dtype)]).astype(
                np.float64 if name == "split_conditions" else np.int64)
        return out


_DELETED = 2 ** 31 - 1  # XGBoost's split index of a pruned node


def check_xgboost_model(raw):
    """Check XGBoost's model document (its JSON or UBJSON file, or ``save_raw``), parsed.

    Returns the document's learner.
    """
    learner = raw.get("learner") if isinstance(raw, dict) else None
    if not isinstance(learner, dict):
        _fail("the XGBoost model has no learner")
    params = learner.get("learner_model_param")
    n_features = int_param(params, "num_feature", "the learner")
    if not 0 < n_features < 2 ** 31:
        _fail(f"the learner reads {n_features} features")
    n_class = int_param(params, "num_class", "the learner", 0)
    n_target = int_param(params, "num_target", "the learner", 1)
    if n_class < 0 or n_target < 1:
        # XGBoost reads both as unsigned counts: -1 is four billion outputs
        _fail(f"the learner says {n_class} classes and {n_target} targets")
    n_class = max(1, n_class)
    for key in ("feature_names", "feature_types"):
        listed = learner.get(key) or []
        if not isinstance(listed, list) or (listed and len(listed) != n_features):
            _fail(f"the learner's {key} list {len(listed)} entries for {n_features} features")
    gb = learner.get("gradient_booster")
    if not isinstance(gb, dict):
        _fail("the XGBoost model has no booster")
    kind = gb.get("name")
    if kind == "gblinear":
        weights = _seq(gb.get("model"), "weights", "the linear booster")
        if len(weights) != (n_features + 1) * n_class * n_target:
            _fail(f"the linear booster holds {len(weights)} weights for {n_features} "
                  f"features and {n_class * n_target} outputs")
        return learner
    if kind == "dart":
        weights = _seq(gb, "weight_drop", "the dart booster")
        gb = gb.get("gbtree")
    elif kind == "gbtree":
        weights = None
    else:
        _fail(f"unknown XGBoost booster {kind!r}")
    model = gb.get("model") if isinstance(gb, dict) else None
    if not isinstance(model, dict):
        _fail("the XGBoost booster has no model")
    trees = model.get("trees")
    if not isinstance(trees, FlatTrees):
        trees = _seq(model, "trees", "the booster")
    info = _ints(_seq(model, "tree_info", "the booster"), "tree_info")
    n_trees = int_param(model.get("gbtree_model_param"), "num_trees", "the booster")
    if n_trees != len(trees) or len(info) != len(trees):
        _fail(f"the booster says {n_trees} trees, holds {len(trees)} and {len(info)} tree "
              "groups")
    n_out = n_class * n_target
    # a flat tree's leaves are scalars (the scan takes no other)
    vector = None if isinstance(trees, FlatTrees) else \
        [_leaf_vector(tree, k) for k, tree in enumerate(trees)]
    if vector is not None and any(size > 1 for size in vector):
        # vector leaves (multi_strategy="multi_output_tree"): each tree feeds every output
        if any(size != n_out for size in vector):
            _fail(f"the booster's trees hold leaf vectors of sizes {sorted(set(vector))} for "
                  f"{n_out} outputs")
    elif n_out > max(1, len(trees)):
        # each row gets one output per class: a class count beyond the trees is tampered
        _fail(f"the booster has {len(trees)} trees for {n_out} outputs")
    if weights is not None and len(weights) != len(trees):
        _fail(f"the dart booster holds {len(weights)} weights for {len(trees)} trees")
    check_index(info, n_class * n_target, np.ones(len(info), bool), "a tree's output group")
    if "iteration_indptr" in model:
        ptr = _ints(model["iteration_indptr"], "iteration_indptr")
        if len(ptr) < 1 or ptr[0] != 0 or ptr[-1] != len(trees) or np.any(np.diff(ptr) < 0):
            _fail("iteration_indptr does not split the trees into iterations")
    if isinstance(trees, FlatTrees):
        _check_flat_trees(trees, n_features)
        _check_xgboost_cats(model.get("cats"), n_features)
        return learner
    for k, tree in enumerate(trees):
        # XGBoost puts each tree at the position its id names
        if not isinstance(tree, dict) or tree.get("id") != k:
            _fail(f"tree {k} says it is tree "
                  f"{tree.get('id') if isinstance(tree, dict) else None!r}")
    _check_xgboost_trees(trees, n_features, vector)
    _check_xgboost_cats(model.get("cats"), n_features)
    return learner


def _leaf_vector(tree, k) -> int:
    """The size of tree ``k``'s leaf values: 1 for a scalar leaf, ``K`` for a vector."""
    what = f"tree {k}"
    if not isinstance(tree, dict):
        _fail(f"{what} is not an object")
    size = int_param(tree.get("tree_param"), "size_leaf_vector", what, 1)
    if not 0 <= size < 2 ** 20:
        _fail(f"{what} has leaf vectors of size {size}")
    return max(size, 1)


_CATEGORY_KEYS = ("categories_nodes", "categories_segments", "categories_sizes", "categories")
_ARRAYS = ("left_children", "right_children", "parents", "split_indices", "split_conditions",
           "default_left", "split_type", "loss_changes", "sum_hessian")


def _joined(trees, key, what) -> np.ndarray:
    """``key`` of every tree, concatenated (lengths already checked), as int64."""
    parts = [tree[key] for tree in trees]
    try:
        if all(isinstance(part, np.ndarray) and part.dtype.kind in "iuf" for part in parts):
            arr = np.concatenate(parts)  # UBJSON's typed arrays: no value by value
        else:
            # JSON's lists: read into float64 at once (a third of np.array's time on ints);
            # _ints then refuses what is not an integer, as it did np.array's floats
            arr = np.fromiter(chain.from_iterable(parts), np.float64, sum(map(len, parts)))
    except (TypeError, ValueError, OverflowError):
        _fail(f"the trees' {key} hold values that are not numbers")
    return arr if what is None else _ints(arr, what)


def _check_xgboost_trees(trees, n_features, vector):
    """Every tree's arrays at once (vectorised over all their nodes); ``vector[k] > 1``:
    tree ``k``'s leaves hold vectors (``leaf_weights``, a leaf's ``right_children`` entry
    its position there)."""
    if not trees:  # a booster of no rounds
        return
    sizes = np.array([_tree_size(tree, k, n_features, vector[k]) for k, tree in enumerate(trees)],
                     np.int64)
    left = _joined(trees, "left_children", "the trees' left_children")
    right = _joined(trees, "right_children", "the trees' right_children")
    split = _joined(trees, "split_indices", "the trees' split_indices")
    roots, tree, local, live = _layout(sizes, split)
    for v in np.flatnonzero(np.asarray(vector) > 1).tolist():
        at = slice(int(roots[v]), int(roots[v + 1]))
        right[at] = _vector_rows(trees[v], f"tree {v}", vector[v], left[at], right[at], live[at])
    declared = np.array([int_param(t.get("tree_param"), "num_deleted", f"tree {k}", 0)
                         for k, t in enumerate(trees)], np.int64)
    is_cat = _check_nodes(sizes, declared, n_features, left, right, split,
                          _joined(trees, "split_conditions", None).astype(np.float64),
                          _joined(trees, "parents", "the trees' parents"),
                          _joined(trees, "split_type", "the trees' split_type"))
    with_cat = set(tree[is_cat].tolist())
    for k, t in enumerate(trees):
        at = slice(int(roots[k]), int(roots[k + 1]))
        if k in with_cat or any(key in t and not (isinstance(t[key], (list, np.ndarray))
                                                  and len(t[key]) == 0)
                                   for key in _CATEGORY_KEYS):
            _check_xgboost_categories(t, f"tree {k}", int(sizes[k]), is_cat[at])


def _check_flat_trees(trees: FlatTrees, n_features):
    """:func:`_check_xgboost_trees` of plain trees read flat (no leaf vectors, no category
    listed): the same checks, the node checks run by the scan as it read each tree
    (:func:`_tree_nodes`: ``trees.checked``).  The first fault is named by
    :func:`_check_flat_layout`, then :func:`_check_nodes` on the trees' arrays."""
    if not trees.plain or np.any((trees.features != -1) & (trees.features != n_features)):
        _check_flat_layout(trees, n_features)  # where the scan found a fault: named there
    if not len(trees):
        return
    # every tree passed (-2: a fault) and split on features the model has
    if trees.checked.min() >= -1 and trees.checked.max() < n_features:
        return
    sizes = trees.nodes
    left, right, parents, split, types, conditions = trees.arrays().values()
    is_cat = _check_nodes(sizes, trees.deleted, n_features, left, right, split, conditions,
                          parents, types)
    if is_cat.any():
        _, tree, _, _ = _layout(sizes, split)
        _fail(f"tree {int(tree[np.flatnonzero(is_cat)[0]])}: its categorical nodes do not "
              "match its split types")
    _fail("a tree's node arrays do not hold together")  # pragma: no cover - found above


def _check_flat_layout(trees: FlatTrees, n_features):
    """The first fault of the trees' ids, node counts, features and array lengths (what
    ``trees.plain`` says of all but the features, which the scan read before the model's
    feature count)."""
    if np.any(trees.ids != np.arange(len(trees))):
        k = int(np.flatnonzero(trees.ids != np.arange(len(trees)))[0])
        _fail(f"tree {k} says it is tree {int(trees.ids[k])}")
    if not len(trees):
        return
    sizes = trees.nodes
    bad = np.flatnonzero((sizes <= 0) | (sizes >= 2 ** 31))
    if bad.size:
        _fail(f"tree {int(bad[0])} has {int(sizes[bad[0]])} nodes")
    bad = np.flatnonzero((trees.features != -1) & (trees.features != n_features))
    if bad.size:
        _fail(f"tree {int(bad[0])} reads {int(trees.features[bad[0]])} features, the model "
              f"{n_features}")
    for key, lengths in trees.lengths.items():
        bad = np.flatnonzero((lengths != sizes) if key not in _CATEGORY_KEYS else lengths != 0)
        if bad.size:
            _fail(f"tree {int(bad[0])} has {int(sizes[bad[0]])} nodes but {int(lengths[bad[0]])} "
                  f"{key}")


@njit(cache=True)
def _nan32(data, at):  # pragma: no cover - compiled
    """Whether the big-endian float32 at ``at`` is a NaN (exponent all ones, mantissa not 0)."""
    return (_i32(data, at) & 0x7FFFFFFF) > 0x7F800000


@njit(cache=True)
def _tree_nodes(data, at, n, declared, max_depth, room):  # pragma: no cover - compiled
    """One plain tree's :func:`_check_nodes`, read in place (``at``: its row of where each
    of :data:`FLAT_ARRAYS` begins in ``data``, each ``n`` long; ``room``: a (6, >= n + 1)
    int64 scratch): ``declared`` (``num_deleted``) the pruned nodes, children
    (:func:`~._checks._walk`'s rules, depth at most ``max_depth``), split features not
    negative, no NaN threshold, each live node's parent the node that splits into it, a
    pruned node's parent inside the tree, split types 0 or 1 and no split 1 (categorical:
    listed with its categories, which plain trees are not).  Returns -2 at the first
    fault, else its splits' largest feature (-1: none; the caller compares it with the
    model's feature count, read after the trees).

    A tree as XGBoost writes it (every child after its parent) passes in one pass
    (:func:`_forward_nodes`; a tree of at most ``2 * max_depth + 1`` nodes, which no
    depth can exceed, in :func:`_shallow_nodes`' two); any other tree, and any fault, is
    decided by :func:`_any_order_nodes`, so the answer is that pass's alone."""
    if n <= 2 * max_depth + 1:
        most = _shallow_nodes(data, at, n, declared, room[0].view(np.int32))
    else:
        most = _forward_nodes(data, at, n, declared, max_depth, room[0], room[1])
    return most if most >= -1 else _any_order_nodes(data, at, n, declared, max_depth, room)


@njit(cache=True)
def _shallow_nodes(data, at, n, declared, claimer):  # pragma: no cover - compiled
    """:func:`_tree_nodes` of a tree whose every child comes after its parent and whose
    pruned nodes are leaves (as XGBoost prunes), of at most ``2 * max_depth + 1`` nodes:
    no depth to follow (a live node ``d`` deep has ``d`` ancestors, each with another
    child: ``2 * d + 1`` nodes).  ``claimer``: int32 scratch of ``2 * n`` or more.
    Returns its splits' largest feature where the tree passes, else -3
    (:func:`_any_order_nodes` decides and names it, as for :func:`_forward_nodes`).

    The first pass writes each split into its children's slots (the last one wins; a
    leaf's -1 lands past the nodes, a child out of range, masked, anywhere in the
    scratch: the second pass refuses it by its range); the second reads each node with
    its slot, every check without a branch (a vectorised loop of 16 nodes a step; 254k
    nodes: 0.49 ms, where the one pass took 1.13 ms and a vectorised pass gathering each
    child's parent and split 0.82 ms).  A child claimed twice leaves fewer slots written
    than two a split (``balance``), so each node has one parent at most, its slot's; a live node's
    slot must name its ``parents`` entry, a pruned node's none, and a split is live: the
    root reaches exactly the live nodes, each child being after its parent.  Its
    counts and values are read in int32 (half the width of int64's steps)."""
    a0, a1, a2, a3, a4, a5 = at[0], at[1], at[2], at[3], at[4], at[5]
    claimer[:n] = -1
    past = np.uint64(n)  # the least 2**k - 1 >= n: -1 masked is past the nodes, any
    for shift in (1, 2, 4, 8, 16, 32):  # index masked under 2 * n
        past |= past >> np.uint64(shift)
    for i in range(n):
        claimer[np.uint64(_i32(data, a0 + 4 * i)) & past] = i
        claimer[np.uint64(_i32(data, a1 + 4 * i)) & past] = i
    n32 = np.int32(n)
    bad, dead, balance, most = False, np.int32(0), np.int32(0), np.int32(-1)
    for i in range(n32):
        a, b = np.int32(_i32(data, a0 + 4 * i)), np.int32(_i32(data, a1 + 4 * i))
        p, f = np.int32(_i32(data, a2 + 4 * i)), np.int32(_i32(data, a3 + 4 * i))
        kind, by = data[np.uint64(a4 + i)], claimer[i]
        leaf, live = a == -1, (i == 0) | (f != _DELETED)
        bad |= (kind > 1) | (leaf != (b == -1)) | (leaf & live & (kind == 1)) | \
            (live & (i > 0) & ((by != p) | (p < 0))) | \
            (~live & (~leaf | (by != -1) | (p < 0) | (p >= n32))) | \
            (~leaf & ((a <= i) | (b <= i) | (a >= n32) | (b >= n32) | (f < 0) | (kind == 1) |
                      _nan32(data, a5 + 4 * i)))
        most = max(most, np.int32(-1) if leaf else f)
        # (int32 sums: numba's int64 would halve the step)
        dead = np.int32(dead + ~live)
        balance = np.int32(balance + 2 * ~leaf - (by != -1))
    return most if not bad and dead == declared and balance == 0 else -3


@njit(cache=True)
def _forward_nodes(data, at, n, declared, max_depth, expect, depth):  # pragma: no cover
    """:func:`_tree_nodes` of a tree whose every child comes after its parent, in one pass
    over its nodes: a node's parent and depth are known when it is read (set by its
    parent, read before it), so each node is checked as it is read, every check of
    :func:`_any_order_nodes` (``expect``, ``depth``: int64 scratch of ``n + 1``).  Returns its
    splits' largest feature where the tree passes, else -3 (a fault, or a child before its
    parent: :func:`_any_order_nodes` decides and names it); the ``-3`` of a tree that
    passes elsewhere costs one more pass, never another answer.  (Fusing the two passes
    and dropping the arrays only the walk reads: a third of the node checks' time.)"""
    expect[:n + 1], depth[:n + 1] = -1, -1  # n too: a child index n reads no earlier tree
    depth[0], dead, most = 0, 0, -1
    a0, a1, a2, a3, a4, a5 = at[0], at[1], at[2], at[3], at[4], at[5]
    for i in range(n):
        a, b, p, f, kind = _i32(data, a0 + 4 * i), _i32(data, a1 + 4 * i), \
            _i32(data, a2 + 4 * i), _i32(data, a3 + 4 * i), data[np.uint64(a4 + i)]
        live, d = i == 0 or f != _DELETED, depth[i]
        if kind > 1 or (a == -1) != (b == -1) or (a == -1 and kind == 1 and live):
            return -3
        if live:  # reached (by a parent before it: depth set), not too deep, its parent
            if i > 0 and (d < 0 or d > max_depth or p != expect[i]):
                return -3
        else:  # pruned: not reached, its parent inside the tree
            dead += 1
            if d >= 0 or p < 0 or p >= n:
                return -3
        if a != -1:
            # children after their parent, inside the tree, two, each of one parent
            if a <= i or b <= i or a >= n or b >= n or a == b or f < 0 or kind == 1 or \
                    _nan32(data, a5 + 4 * i) or expect[a] != -1 or expect[b] != -1:
                return -3
            most = max(most, f)
            expect[a], expect[b] = i, i
            depth[a] = depth[b] = d + 1 if d >= 0 else -1
    return most if dead == declared else -3


@njit(cache=True)
def _any_order_nodes(data, at, n, declared, max_depth, room):  # pragma: no cover - compiled
    """:func:`_tree_nodes` of any tree (children before their parents too), the first fault
    found: two passes over its nodes.  Where every child comes after its parent, a node's
    depth and whether the root reaches it are known when it is read: no walk from the
    root (:func:`_reached`, for any other tree)."""
    left, right, expect, depth, live, reach = room[0], room[1], room[2], room[3], room[4], \
        room[5]
    expect[:n], reach[:n] = -1, 0
    reach[0], depth[0], dead, ordered, most = 1, 0, 0, True, -1
    a0, a1, a3, a4, a5 = at[0], at[1], at[3], at[4], at[5]
    for i in range(n):
        a, b, f, kind = _i32(data, a0 + 4 * i), _i32(data, a1 + 4 * i), \
            _i32(data, a3 + 4 * i), data[np.uint64(a4 + i)]
        left[i], right[i], live[i] = a, b, i == 0 or f != _DELETED
        dead += not live[i]
        if kind > 1 or (a == -1) != (b == -1) or (a == -1 and kind == 1 and live[i]):
            return -2
        if a != -1:
            if a < 0 or a >= n or b < 0 or b >= n or a == b or f < 0 or kind == 1 or \
                    _nan32(data, a5 + 4 * i) or expect[a] != -1 or expect[b] != -1:
                return -2
            most = max(most, f)
            expect[a], expect[b] = i, i
            ordered &= a > i and b > i
            reach[a], reach[b] = reach[i], reach[i]
            depth[a], depth[b] = depth[i] + 1, depth[i] + 1
    if dead != declared or expect[0] != -1:
        return -2
    for i in range(n):
        p = _i32(data, at[2] + 4 * i)
        if (live[i] and i > 0 and p != expect[i]) or (not live[i] and (p < 0 or p >= n)):
            return -2
        # every parent came before its children: reach and depth are final
        if ordered and (reach[i] != live[i] or (reach[i] and depth[i] > max_depth)):
            return -2
    if not ordered and not _reached(left, right, live, n, max_depth, depth, reach):
        return -2
    return most


@njit(cache=True)
def _reached(left, right, live, n, max_depth, nodes, seen):  # pragma: no cover - compiled
    """Whether a walk from the root (depth first; each node has one parent, so the stack
    holds ``n``) reaches exactly the live nodes, none deeper than ``max_depth``
    (``nodes`` and ``seen``: room for the walk)."""
    levels = np.empty(n, np.int64)
    seen[:n] = 0
    top, nodes[0], levels[0] = 0, 0, 0
    while top >= 0:
        i, d = nodes[top], levels[top]
        top -= 1
        if d > max_depth:
            return False
        seen[i] = 1
        if left[i] != -1:
            nodes[top + 1], levels[top + 1] = left[i], d + 1
            nodes[top + 2], levels[top + 2] = right[i], d + 1
            top += 2
    for i in range(n):
        if seen[i] != live[i]:
            return False
    return True


def _layout(sizes, split):
    """Each tree's first node, each node's tree and position in it, and the live nodes."""
    roots = np.concatenate([[0], np.cumsum(sizes)])
    tree = np.repeat(np.arange(len(sizes)), sizes)
    local = np.arange(len(tree)) - roots[tree]
    return roots, tree, local, (split != _DELETED) | (local == 0)


def _check_nodes(sizes, declared, n_features, left, right, split, conditions, parents, types):
    """The node checks of every tree at once (``declared``: each tree's ``num_deleted``);
    returns which nodes are categorical splits."""
    roots, tree, local, live = _layout(sizes, split)
    deleted = np.add.reduceat((~live).astype(np.int64), roots[:-1])
    bad = np.flatnonzero(declared != deleted)
    if bad.size:
        k = int(bad[0])
        _fail(f"tree {k} says {int(declared[k])} deleted nodes and holds {int(deleted[k])}")
    check_trees(left, right, sizes, live=live, label="tree")
    inner = left >= 0
    check_index(split, n_features, inner, "split feature", tree=tree, local=local)
    check_split_values(conditions, inner, tree=tree, local=local)
    # the loader looks each node's parent up: it must be the node whose child it is
    expect = np.full(len(tree), -1, np.int64)
    idx = np.flatnonzero(inner)
    expect[left[idx] + roots[tree[idx]]] = local[idx]
    expect[right[idx] + roots[tree[idx]]] = local[idx]
    bad = np.flatnonzero(live & (local > 0) & (parents != expect))
    if bad.size:
        i = bad[0]
        _fail(f"tree {int(tree[i])}, node {int(local[i])}: parent {int(parents[i])} is not the "
              "node that splits into it")
    dead = np.flatnonzero(~live & ((parents < 0) | (parents >= sizes[tree])))
    if dead.size:
        i = dead[0]
        _fail(f"tree {int(tree[i])}, node {int(local[i])}: parent {int(parents[i])} is outside "
              f"0..{int(sizes[tree[i]]) - 1}")
    check_index(types, 2, np.ones(len(tree), bool), "split type", tree=tree, local=local)
    # XGBoost writes a leaf's split type 0; a leaf marked categorical (with no categories)
    # loads and predicts, then fails XGBoost's own writing of its trees
    bad = np.flatnonzero(live & ~inner & (types == 1))
    if bad.size:
        i = bad[0]
        _fail(f"tree {int(tree[i])}, node {int(local[i])}: a leaf marked as a categorical split")
    return inner & (types == 1)


def _tree_size(tree, k, n_features, size) -> int:
    """Tree ``k``'s node count, its arrays all of that length."""
    what = f"tree {k}"
    if not isinstance(tree, dict):
        _fail(f"{what} is not an object")
    param = tree.get("tree_param")
    n = int_param(param, "num_nodes", what)
    if not 0 < n < 2 ** 31:
        _fail(f"{what} has {n} nodes")
    if int_param(param, "num_feature", what, n_features) != n_features:
        _fail(f"{what} reads {(param or {}).get('num_feature')!r} features, the model {n_features}")
    lengths = {key: len(_seq(tree, key, what)) for key in _ARRAYS}
    lengths["base_weights"] = len(_seq(tree, "base_weights", what)) // size
    wrong = {key: m for key, m in lengths.items() if m != n}
    if wrong:
        _fail(f"{what} has {n} nodes but arrays of other lengths {wrong}")
    return n


def _vector_rows(tree, what, size, left, right, live):
    """A vector-leaf tree's ``right_children`` with its leaves' rows of ``leaf_weights``
    checked (one per live leaf) and replaced by -1."""
    leaf = live & (left == -1)
    weights = _seq(tree, "leaf_weights", what)
    n_leaves = int(leaf.sum())
    if len(weights) != n_leaves * size:
        _fail(f"{what} has {n_leaves} leaves of {size} values but {len(weights)} leaf "
              "weights")
    rows = right[leaf]
    if np.any(np.sort(rows) != np.arange(n_leaves)):
        _fail(f"{what}: its leaves name the rows {rows.tolist()[:8]} of leaf_weights, not "
              f"each of 0..{n_leaves - 1} once")
    return np.where(left == -1, -1, right)


def _check_xgboost_categories(tree, what, n, is_cat):
    """A tree's categorical splits: each listed once, its segment inside the categories."""
    nodes = _ints(tree.get("categories_nodes", []), f"{what}: categories_nodes")
    segs = _ints(tree.get("categories_segments", []), f"{what}: categories_segments")
    sizes = _ints(tree.get("categories_sizes", []), f"{what}: categories_sizes")
    cats = _ints(tree.get("categories", []), f"{what}: categories")
    if not len(nodes) == len(segs) == len(sizes):
        _fail(f"{what}: {len(nodes)} categorical nodes with {len(segs)} segments and "
              f"{len(sizes)} sizes")
    if len(nodes):
        if np.any(np.diff(nodes) <= 0):
            _fail(f"{what}: its categorical nodes are not in increasing order")
        check_index(nodes, n, np.ones(len(nodes), bool), f"{what}: categorical node")
    listed = np.zeros(n, bool)
    listed[nodes] = True
    if np.any(listed != is_cat):
        _fail(f"{what}: its categorical nodes do not match its split types")
    if np.any(sizes < 1) or np.any(segs < 0) or np.any(segs + sizes > len(cats)):
        _fail(f"{what}: a category segment falls outside its {len(cats)} categories")
    check_index(cats, MAX_CATEGORY_CODE, np.ones(len(cats), bool), f"{what}: category code")


def _check_xgboost_cats(cats, n_features):
    """The stored categories (XGBoost 3.1+): segments and sorted positions inside their arrays."""
    if cats is None:
        return
    if not isinstance(cats, dict):
        _fail("the booster's categories are not an object")
    seg = _ints(cats.get("feature_segments", []), "feature_segments")
    order = _ints(cats.get("sorted_idx", []), "sorted_idx")
    enc = cats.get("enc", [])
    if not isinstance(enc, list):
        _fail("the booster's category encodings are not an array")
    if not len(seg):
        if len(order) or len(enc):
            _fail("the booster's categories have no segments")
        return
    if len(seg) != n_features + 1 or seg[0] != 0 or np.any(np.diff(seg) < 0) or \
            seg[-1] != len(order) or len(enc) != n_features:
        _fail("the booster's category segments do not match its features")
    for f in range(n_features):
        lo, hi = int(seg[f]), int(seg[f + 1])
        if hi > lo and not np.array_equal(np.sort(order[lo:hi]), np.arange(hi - lo)):
            _fail(f"feature {f}: its sorted category positions are not a permutation")
        entry = enc[f]
        if not isinstance(entry, dict):
            _fail(f"feature {f}: its category encoding is not an object")
        values = entry.get("values", [])
        offsets = entry.get("offsets")
        if not isinstance(values, (list, np.ndarray)):
            _fail(f"feature {f}: its categories are not an array")
        if offsets is not None:  # text categories: offsets into a byte array
            off = _ints(offsets, f"feature {f}: offsets")
            if hi > lo or len(off):
                if len(off) != hi - lo + 1 or off[0] != 0 or np.any(np.diff(off) < 0) or \
                        off[-1] != len(values):
                    _fail(f"feature {f}: its text categories' offsets do not fit them")
                # text levels are not checked for repeats: XGBoost 3.2 itself writes a
                # non-ASCII level's bytes cut at its length in characters, so two levels can
                # be stored alike; their order is checked (XGBoost searches them by it)
                _check_text_order(values, off, order[lo:hi], f)
        elif len(values) != hi - lo:
            _fail(f"feature {f}: {len(values)} categories for a segment of {hi - lo}")
        else:
            _check_distinct_in_order(list(np.asarray(values).tolist()), order[lo:hi], f)


def _check_distinct_in_order(levels, order, f):
    """XGBoost finds a number's code by binary search through ``sorted_idx``: a level
    recorded twice, or an order that does not sort them, gives XGBoost's predictions
    another code than the trees' reading here (a silent wrong answer): refused."""
    ranked = [levels[i] for i in order]
    if any(not a < b for a, b in zip(ranked[:-1], ranked[1:])):
        _fail(f"feature {f}: its categories repeat a level or their sorted positions do not "
              "sort them")


def _check_text_order(values, offsets, order, f):
    """XGBoost finds a text level's code by binary search through ``sorted_idx``, its
    levels' bytes compared as signed chars, and writes ``sorted_idx`` as their stable sort:
    any other order gives XGBoost's predictions codes other than the trees' reading here
    (a silent wrong answer): refused."""
    raw = np.asarray(values, np.int64) & 0xFF ^ 0x80  # a signed char's order, as bytes
    data = raw.astype(np.uint8).tobytes() if len(raw) else b""
    keys = [data[a:b] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]
    if sorted(range(len(keys)), key=keys.__getitem__) != order.tolist():
        _fail(f"feature {f}: its sorted category positions do not sort its text categories")
