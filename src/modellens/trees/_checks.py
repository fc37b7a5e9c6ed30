"""Checks of tree node arrays, before anything walks them.

scikit-learn, XGBoost and LightGBM walk their trees in compiled code that
trusts the node arrays: a child index out of range reads (or writes) outside
the arrays, a node that is its own descendant loops forever, a feature index
past the row reads outside it.  A model that comes from a file is data, so
every array a walk reads is checked here first: children in range and every
node reached exactly once from its root (acyclic, no shared subtrees),
feature indices below the feature count, thresholds not NaN, category sets
inside their tables, sizes consistent and bounded.  A model that fails is
refused with an :class:`UnsafeModelError` naming the first problem.

The checks are vectorised over all nodes; acyclicity is a level-by-level walk
from the roots after a count of each node's parents (at most one, none for a
root), so the walk ends after the trees' depth.
"""

from __future__ import annotations

import re
from typing import NoReturn

import numpy as np

from .._validation import InvalidParameterError

__all__ = ["UnsafeModelError", "check_trees", "check_sklearn_objects",
           "check_xgboost_model", "check_lightgbm_text", "MAX_CATEGORY_CODE",
           "MAX_CATEGORY_CELLS", "MAX_TREE_DEPTH"]

#: The largest category code a split may name: XGBoost compares float32 values, which
#: hold every integer up to 2**24 exactly, and none of the libraries fits more levels.
MAX_CATEGORY_CODE = 2 ** 24
#: Cells of the dense split-by-code table the tree kernels read (bytes).
MAX_CATEGORY_CELLS = 2 ** 28
#: The deepest tree read (levels below the root).  Fits reach far less: an unbounded
#: scikit-learn tree on 100,000 rows of a pure-noise target is 84 deep, XGBoost's
#: default is 6 and LightGBM's 31 leaves are at most 30 deep.  What reads trees costs
#: per level (LightGBM's JSON dump nests once per level; TreeSHAP's path tables hold
#: ``sum(depth of each leaf) <= leaves * MAX_TREE_DEPTH`` entries of 24 bytes), so a
#: crafted chain of splits is refused here, before any dump, walk or kernel layout.
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


# ---------------------------------------------------------------------- scikit-learn
def _check_sklearn_tree(tree, n_features, label):
    count = int(tree.node_count)
    left, right = tree.children_left, tree.children_right
    if count < 1 or len(left) != count:
        _fail(f"{label}: {count} nodes")
    depth = check_trees(left, right, [count], label=label)
    inner = left >= 0
    bound = min(int(n_features), int(tree.n_features)) if n_features is not None \
        else int(tree.n_features)
    check_index(tree.feature, bound, inner, f"{label}: split feature")
    check_split_values(tree.threshold, inner)
    if int(tree.max_depth) < int(depth[0]):
        # decision_path sizes its output by max_depth
        _fail(f"{label} is {int(depth[0])} deep but says max_depth={int(tree.max_depth)}")
    n_classes = np.asarray(tree.n_classes)
    if n_classes.shape != (int(tree.n_outputs),) or np.any(n_classes < 1) or \
            np.any(n_classes > int(tree.max_n_classes)):
        _fail(f"{label}: class counts {n_classes.tolist()} do not fit its value array")
    value = tree.value
    if value.shape != (count, int(tree.n_outputs), int(tree.max_n_classes)):
        _fail(f"{label}: a value array of shape {value.shape} for {count} nodes")


def _check_predictor(pred, n_features, is_cat, label):
    from sklearn.ensemble._hist_gradient_boosting.common import (
        PREDICTOR_RECORD_DTYPE, X_BITSET_INNER_DTYPE)

    nodes = getattr(pred, "nodes", None)
    if not isinstance(nodes, np.ndarray) or nodes.dtype != PREDICTOR_RECORD_DTYPE or \
            nodes.ndim != 1 or len(nodes) < 1:
        _fail(f"{label} does not hold a node array of scikit-learn's record type")
    bitsets = getattr(pred, "raw_left_cat_bitsets", None)
    if not isinstance(bitsets, np.ndarray) or bitsets.dtype != X_BITSET_INNER_DTYPE or \
            bitsets.ndim != 2 or bitsets.shape[1] != 8 or not bitsets.flags.c_contiguous:
        _fail(f"{label}: its category bitsets are not an (n, 8) array of uint32")
    leaf = nodes["is_leaf"] != 0
    left = np.where(leaf, -1, nodes["left"].astype(np.int64))
    right = np.where(leaf, -1, nodes["right"].astype(np.int64))
    check_trees(left, right, [len(nodes)], label=label)
    inner = ~leaf
    check_index(nodes["feature_idx"], n_features, inner, f"{label}: split feature")
    cat = inner & (nodes["is_categorical"] != 0)
    check_split_values(nodes["num_threshold"], inner & ~cat)
    if cat.any():
        check_index(nodes["bitset_idx"], len(bitsets), cat, f"{label}: category bitset")
        if is_cat is None or not np.all(is_cat[nodes["feature_idx"][cat]]):
            _fail(f"{label}: a categorical split on a feature the model does not treat as "
                  "categorical")


def _check_hist_gradient_boosting(model, bound, label):
    n = int(model.n_features_in_) if bound is None else min(bound, int(model.n_features_in_))
    mapper = getattr(model, "_bin_mapper", None)
    is_cat = getattr(mapper, "is_categorical_", None)
    if mapper is not None and is_cat is not None:
        is_cat = np.asarray(is_cat)
        if is_cat.dtype.kind not in "biu" or is_cat.shape != (int(model.n_features_in_),):
            _fail(f"{label}: its categorical mask does not match its "
                  f"{int(model.n_features_in_)} features")
        for f in np.flatnonzero(is_cat):
            known = np.asarray(mapper.bin_thresholds_[f], np.float64)
            if known.size and not (np.all(known >= 0) and np.all(known < 256)):
                _fail(f"{label}: feature {int(f)} has category codes outside 0..255")
    pre = getattr(model, "_preprocessor", None)
    if pre is not None:
        encoder = pre.named_transformers_.get("encoder")
        # the parser reads the categorical columns from is_categorical_, scikit-learn from
        # the encoder's columns and the binner's mask: they must be one set
        columns = {name: cols for name, _, cols in pre.transformers_}.get("encoder")
        mask = np.asarray(getattr(model, "is_categorical_", None))
        k = int(mask.sum()) if mask.dtype == bool else -1
        if columns is None or not np.array_equal(np.asarray(columns), mask) or \
                len(getattr(encoder, "categories_", [])) != k or \
                (is_cat is not None and not np.array_equal(np.flatnonzero(is_cat),
                                                           np.arange(k))):
            _fail(f"{label}: its categorical columns differ between the model, its encoder "
                  "and its binner")
        for cats in getattr(encoder, "categories_", []):
            if len(cats) > 256:  # the predictor's bitsets hold 256 codes
                _fail(f"{label}: a categorical feature has {len(cats)} categories (at most "
                      "256 fit the model's bitsets)")
    predictors = model._predictors
    for i, per_iter in enumerate(predictors):
        for k, pred in enumerate(per_iter):
            _check_predictor(pred, n, is_cat, f"{label}, tree {i}.{k}")


def _check_gradient_boosting(model, label):
    trees = model.estimators_
    if not isinstance(trees, np.ndarray) or trees.ndim != 2:
        _fail(f"{label}: its estimators_ are not a 2-d array of trees")
    # predict_stages adds tree column k to column k of the initial raw predictions
    width = np.shape(model._raw_predict_init(np.zeros((1, int(model.n_features_in_)),
                                                      np.float32)))
    if len(width) != 2 or width[1] != trees.shape[1]:
        _fail(f"{label}: {trees.shape[1]} trees per stage for {width} initial predictions")


def check_sklearn_objects(obj):
    """Check every scikit-learn tree reachable from ``obj`` (a model loaded from a file).

    A tree's feature indices must fall below the feature count of the tree's
    own estimator and of every ensemble above it (an ensemble hands its
    trees the rows it validated, unchecked).
    """
    from sklearn.tree._tree import Tree

    seen: set[int] = set()
    stack: list = [(obj, None, "the model")]
    while stack:
        item, bound, label = stack.pop()
        if id(item) in seen or item is None or isinstance(item, (str, bytes, int, float)):
            continue
        seen.add(id(item))
        if isinstance(item, Tree):
            _check_sklearn_tree(item, bound, label)
            continue
        if isinstance(item, dict):
            stack.extend((v, bound, label) for v in item.values())
            continue
        if isinstance(item, (list, tuple)):
            stack.extend((v, bound, f"{label}[{i}]") for i, v in enumerate(item))
            continue
        if isinstance(item, np.ndarray):
            if item.dtype == object:
                stack.extend((v, bound, label) for v in item.reshape(-1))
            continue
        state = getattr(item, "__dict__", None)
        if not isinstance(state, dict):
            continue
        name = f"{label} ({type(item).__name__})" if label == "the model" else \
            f"{label}.{type(item).__name__}"
        n_in = state.get("n_features_in_")
        own = bound if not isinstance(n_in, (int, np.integer)) else \
            (int(n_in) if bound is None else min(bound, int(n_in)))
        if "_predictors" in state and "_baseline_prediction" in state:
            _check_hist_gradient_boosting(item, own, name)
            seen.update(id(p) for per in item._predictors for p in per)
        if "estimators_" in state and hasattr(item, "_raw_predict_init") and \
                "init_" in state:
            _check_gradient_boosting(item, name)
        # only ensembles and trees pass their bound down: a pipeline's steps see
        # other columns than its first step
        passes = "estimators_" in state or "tree_" in state
        for key, value in state.items():
            stack.append((value, own if passes else None, name if key != "tree_"
                          else f"{name}.tree_"))


# ---------------------------------------------------------------------- XGBoost
_DELETED = 2 ** 31 - 1  # XGBoost's split index of a pruned node


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
        _check_xgboost_tree(tree, k, n_features, vector[k])
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


def _check_xgboost_tree(tree, k, n_features, size=1):
    """Tree ``k``'s arrays; ``size > 1``: its leaves hold vectors (``leaf_weights``, a
    leaf's ``right_children`` entry its position there)."""
    what = f"tree {k}"
    if not isinstance(tree, dict):
        _fail(f"{what} is not an object")
    param = tree.get("tree_param")
    n = int_param(param, "num_nodes", what)
    if not 0 < n < 2 ** 31:
        _fail(f"{what} has {n} nodes")
    if int_param(param, "num_feature", what, n_features) != n_features:
        _fail(f"{what} reads {(param or {}).get('num_feature')!r} features, the model {n_features}")
    lengths = {key: len(_seq(tree, key, what)) for key in (
        "left_children", "right_children", "parents", "split_indices", "split_conditions",
        "default_left", "split_type", "loss_changes", "sum_hessian")}
    lengths["base_weights"] = len(_seq(tree, "base_weights", what)) // size
    wrong = {key: m for key, m in lengths.items() if m != n}
    if wrong:
        _fail(f"{what} has {n} nodes but arrays of other lengths {wrong}")
    left = _ints(tree["left_children"], f"{what}: left_children")
    right = _ints(tree["right_children"], f"{what}: right_children")
    split = _ints(tree["split_indices"], f"{what}: split_indices")
    live = split != _DELETED
    live[0] = True
    if size > 1:
        # a vector leaf's right_children entry is its row of leaf_weights, one per live leaf
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
        right = np.where(left == -1, -1, right)
    if int_param(param, "num_deleted", what, 0) != int((~live).sum()):
        _fail(f"{what} says {(param or {}).get('num_deleted')!r} deleted nodes and holds "
              f"{int((~live).sum())}")
    check_trees(left, right, [n], live=live, label="tree")
    inner = left >= 0
    check_index(split, n_features, inner, f"{what}: split feature")
    check_split_values(np.asarray(tree["split_conditions"], np.float64), inner)
    parents = _ints(tree["parents"], f"{what}: parents")
    # the loader looks each node's parent up: it must be the node whose child it is
    expect = np.full(n, -1, np.int64)
    idx = np.flatnonzero(inner)
    expect[left[idx]] = idx
    expect[right[idx]] = idx
    bad = np.flatnonzero(live & (np.arange(n) > 0) & (parents != expect))
    if bad.size:
        i = bad[0]
        _fail(f"{what}, node {int(i)}: parent {int(parents[i])} is not the node that "
              "splits into it")
    dead = np.flatnonzero(~live & ((parents < 0) | (parents >= n)))
    if dead.size:
        _fail(f"{what}, node {int(dead[0])}: parent {int(parents[dead[0]])} is outside "
              f"0..{n - 1}")
    types = _ints(tree["split_type"], f"{what}: split_type")
    check_index(types, 2, np.ones(n, bool), f"{what}: split type")
    nodes = _ints(tree.get("categories_nodes", []), f"{what}: categories_nodes")
    segs = _ints(tree.get("categories_segments", []), f"{what}: categories_segments")
    sizes = _ints(tree.get("categories_sizes", []), f"{what}: categories_sizes")
    cats = _ints(tree.get("categories", []), f"{what}: categories")
    if not len(nodes) == len(segs) == len(sizes):
        _fail(f"{what}: {len(nodes)} categorical nodes with {len(segs)} segments and "
              f"{len(sizes)} sizes")
    is_cat = inner & (types == 1)
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
        elif len(values) != hi - lo:
            _fail(f"feature {f}: {len(values)} categories for a segment of {hi - lo}")


# ---------------------------------------------------------------------- LightGBM
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
