"""Checks of an XGBoost model's JSON (or UBJSON) document, before anything walks
its trees (see :mod:`._checks`)."""

from __future__ import annotations

from itertools import chain

import numpy as np

from ._checks import (MAX_CATEGORY_CODE, _fail, _ints, _seq, check_index,
                      check_split_values, check_trees, int_param)

__all__ = ["check_xgboost_model"]


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
    trees = _seq(model, "trees", "the booster")
    info = _ints(_seq(model, "tree_info", "the booster"), "tree_info")
    n_trees = int_param(model.get("gbtree_model_param"), "num_trees", "the booster")
    if n_trees != len(trees) or len(info) != len(trees):
        _fail(f"the booster says {n_trees} trees, holds {len(trees)} and {len(info)} tree "
              "groups")
    n_out = n_class * n_target
    vector = [_leaf_vector(tree, k) for k, tree in enumerate(trees)]
    if any(size > 1 for size in vector):
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
    roots = np.concatenate([[0], np.cumsum(sizes)])
    tree = np.repeat(np.arange(len(trees)), sizes)
    local = np.arange(len(tree)) - roots[tree]
    left = _joined(trees, "left_children", "the trees' left_children")
    right = _joined(trees, "right_children", "the trees' right_children")
    split = _joined(trees, "split_indices", "the trees' split_indices")
    live = (split != _DELETED) | (local == 0)
    for v in np.flatnonzero(np.asarray(vector) > 1).tolist():
        at = slice(int(roots[v]), int(roots[v + 1]))
        right[at] = _vector_rows(trees[v], f"tree {v}", vector[v], left[at], right[at], live[at])
    deleted = np.add.reduceat((~live).astype(np.int64), roots[:-1])
    for k, t in enumerate(trees):
        if int_param(t.get("tree_param"), "num_deleted", f"tree {k}", 0) != int(deleted[k]):
            _fail(f"tree {k} says {(t.get('tree_param') or {}).get('num_deleted')!r} deleted "
                  f"nodes and holds {int(deleted[k])}")
    check_trees(left, right, sizes, live=live, label="tree")
    inner = left >= 0
    check_index(split, n_features, inner, "split feature", tree=tree, local=local)
    check_split_values(_joined(trees, "split_conditions", None).astype(np.float64), inner,
                       tree=tree, local=local)
    parents = _joined(trees, "parents", "the trees' parents")
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
    types = _joined(trees, "split_type", "the trees' split_type")
    check_index(types, 2, np.ones(len(tree), bool), "split type", tree=tree, local=local)
    is_cat = inner & (types == 1)
    with_cat = set(tree[is_cat].tolist())
    for k, t in enumerate(trees):
        at = slice(int(roots[k]), int(roots[k + 1]))
        if k in with_cat or any(key in t and not (isinstance(t[key], (list, np.ndarray))
                                                  and len(t[key]) == 0)
                                   for key in _CATEGORY_KEYS):
            _check_xgboost_categories(t, f"tree {k}", int(sizes[k]), is_cat[at])


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
                # be stored alike
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
