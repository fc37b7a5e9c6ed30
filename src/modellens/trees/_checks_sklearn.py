"""Checks of scikit-learn's tree objects (a model unpickled from a skops file),
before anything walks them (see :mod:`._checks`)."""

from __future__ import annotations

import numpy as np
from numba import njit

from ._checks import (MAX_TREE_DEPTH, UnsafeModelError, _fail, check_index, check_split_values,
                      check_trees)

__all__ = ["check_sklearn_objects"]


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
    _check_sklearn_shape(tree, int(depth[0]), label)


def _check_predictor(pred, n_features, is_cat, label):
    from sklearn.ensemble._hist_gradient_boosting.common import PREDICTOR_RECORD_DTYPE

    nodes = getattr(pred, "nodes", None)
    if not isinstance(nodes, np.ndarray) or nodes.dtype != PREDICTOR_RECORD_DTYPE or \
            nodes.ndim != 1 or len(nodes) < 1:
        _fail(f"{label} does not hold a node array of scikit-learn's record type")
    bitsets = _check_bitsets(pred, label)
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
        _check_hgb_preprocessor(model, pre, is_cat, label)
    _check_hgb_outputs(model, label)
    found = [(pred, f"{label}, tree {i}.{k}") for i, per_iter in enumerate(model._predictors)
             for k, pred in enumerate(per_iter)]
    if found:
        _check_predictors(found, n, is_cat)


def _check_hgb_preprocessor(model, pre, is_cat, label):
    """HistGradientBoosting's categorical preprocessor: it routes the caller's columns as
    the parser does (categorical first, then numeric, each in order) and encodes them as
    the parser does (known categories to their sorted positions, the rest to NaN).

    ``predict`` reads what is checked here, the parser reads ``is_categorical_`` and the
    encoder's categories: a file in which they disagree would predict other values than
    the trees read.
    """
    encoder = pre.named_transformers_.get("encoder")
    routes = {name: (trans, cols) for name, trans, cols in pre.transformers_}
    mask = np.asarray(getattr(model, "is_categorical_", None))
    k = int(mask.sum()) if mask.dtype == bool else -1
    columns = routes.get("encoder", (None, None))[1]
    if columns is None or not np.array_equal(np.asarray(columns), mask) or \
            len(getattr(encoder, "categories_", [])) != k or \
            (is_cat is not None and not np.array_equal(np.flatnonzero(is_cat),
                                                       np.arange(k))):
        _fail(f"{label}: its categorical columns differ between the model, its encoder "
              "and its binner")
    numeric = routes.get("numerical", (None, None))[1]
    indices = getattr(pre, "_transformer_to_input_indices", {})
    if numeric is None or not np.array_equal(np.asarray(numeric), ~mask) or \
            any(name not in ("encoder", "numerical") and _selects_any(cols)
                for name, (_, cols) in routes.items()) or \
            list(np.asarray(indices.get("encoder", []))) != np.flatnonzero(mask).tolist() or \
            list(np.asarray(indices.get("numerical", []))) != \
            np.flatnonzero(~mask).tolist() or \
            len(indices.get("remainder", [])) or pre.transformer_weights is not None:
        # a DataFrame's columns are routed by _transformer_to_input_indices, an array's by
        # the transformers' masks
        _fail(f"{label}: its preprocessor routes other columns than its categorical mask")
    names = getattr(model, "feature_names_in_", None)
    pre_names = getattr(pre, "feature_names_in_", None)
    if (names is None) != (pre_names is None) or (
            names is not None and list(np.asarray(names)) != list(np.asarray(pre_names))):
        _fail(f"{label}: its preprocessor reads other column names than the model")
    _check_hgb_encoder(encoder, label)
    _check_hgb_numeric(routes["numerical"][0], label)


def _check_hgb_encoder(encoder, label):
    """The ordinal encoder HistGradientBoosting fits: categories sorted (it looks numbers up
    by bisection), NaN kept last and encoded as missing, unknown values encoded as
    missing, no infrequent groups."""
    missing = {}
    for i, cats in enumerate(encoder.categories_):
        cats = np.asarray(cats)
        # (a text column's categories are objects, NaN last where the data held NaN)
        if len(cats) and cats.dtype.kind in "fO" and _is_nan(cats[-1]):
            missing[i] = len(cats) - 1
            cats = cats[:-1]
        if cats.dtype.kind in "biuf" and (np.any(np.isnan(cats.astype(np.float64))) or
                                         np.any(cats[1:] <= cats[:-1])):
            _fail(f"{label}: the categories of its categorical feature {i} are not sorted")
    if not (encoder.handle_unknown == "use_encoded_value" and
            _is_nan(encoder.unknown_value) and _is_nan(encoder.encoded_missing_value) and
            dict(encoder._missing_indices) == missing and
            not any(np.atleast_1d(getattr(encoder, "_infrequent_enabled", False))) and
            np.dtype(encoder.dtype) == np.float64):
        _fail(f"{label}: its category encoder does not encode as HistGradientBoosting fits "
              "it (unknown and missing values as missing, no infrequent categories)")


def _check_hgb_numeric(transformer, label):
    """HistGradientBoosting's numeric columns pass through ``check_array`` as float64."""
    from functools import partial

    from sklearn.utils.validation import check_array

    func = getattr(transformer, "func", None)
    keywords = getattr(func, "keywords", {})
    dtype = keywords.get("dtype") if isinstance(keywords, dict) else None
    dtypes = list(dtype) if isinstance(dtype, (list, tuple)) else [dtype]
    # np.dtype(None) is float64: a partial without dtype keeps the caller's dtype
    if not (isinstance(func, partial) and func.func is check_array and not func.args and
            set(keywords) <= {"dtype", "ensure_all_finite", "force_all_finite"} and
            len(dtypes) == 1 and dtypes[0] is not None and
            np.dtype(dtypes[0]) == np.float64 and
            not getattr(transformer, "kw_args", None)):
        _fail(f"{label}: its numeric columns are not read as float64 values unchanged")


def _selects_any(columns) -> bool:
    """A column selection (a mask or indices) that selects a column."""
    columns = np.atleast_1d(np.asarray(columns))
    return bool(columns.any()) if columns.dtype == bool else columns.size > 0


def _is_nan(value) -> bool:
    return isinstance(value, (float, np.floating)) and bool(np.isnan(value))


def _check_hgb_outputs(model, label):
    """The outputs ``predict`` makes: ``n_trees_per_iteration_`` columns of the baseline
    plus one tree per column of each iteration, from the raw rows (not the binned ones
    of fitting)."""
    base = model._baseline_prediction
    k = model.n_trees_per_iteration_
    if getattr(model, "_in_fit", False) or not isinstance(base, np.ndarray) or \
            base.dtype != np.float64 or base.shape != (1, k) or \
            any(len(per_iter) != k for per_iter in model._predictors):
        _fail(f"{label}: its baseline {np.shape(base)}, {k} outputs and trees per iteration "
              "do not agree")


def _check_gradient_boosting(model, label):
    trees = model.estimators_
    if not isinstance(trees, np.ndarray) or trees.ndim != 2:
        _fail(f"{label}: its estimators_ are not a 2-d array of trees")
    # predict_stages adds tree column k to column k of the initial raw predictions
    width = np.shape(model._raw_predict_init(np.zeros((1, int(model.n_features_in_)),
                                                      np.float32)))
    if len(width) != 2 or width[1] != trees.shape[1]:
        _fail(f"{label}: {trees.shape[1]} trees per stage for {width} initial predictions")


#: Values a model's state holds that hold no tree.
_ATOMS = (str, bytes, int, float)


def check_sklearn_objects(obj):
    """Check every scikit-learn tree reachable from ``obj`` (a model loaded from a file).

    A tree's feature indices must fall below the feature count of the tree's
    own estimator and of every ensemble above it (an ensemble hands its
    trees the rows it validated, unchecked).
    """
    from sklearn.tree._tree import Tree

    seen: set[int] = set()
    trees: list = []  # checked together at the end
    stack: list = [(obj, None, "the model")]
    while stack:
        item, bound, label = stack.pop()
        if id(item) in seen or item is None or isinstance(item, _ATOMS):
            continue
        seen.add(id(item))
        if isinstance(item, Tree):
            trees.append((item, bound, label))
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
        if "_n_features_outs" in state and "categories_" in state:
            _check_one_hot_widths(item, name)
        # only ensembles and trees pass their bound down: a pipeline's steps see
        # other columns than its first step
        passes = "estimators_" in state or "tree_" in state
        for key, value in state.items():
            # (numbers and strings, most of a state, left where they lie: each of a
            # gradient boosting's 300 trees holds some 30)
            if value is not None and not isinstance(value, _ATOMS):
                stack.append((value, own if passes else None, name if key != "tree_"
                              else f"{name}.tree_"))
    _check_sklearn_trees(trees)



def _check_one_hot_widths(encoder, label):
    """A OneHotEncoder's stored output widths, recomputed from its categories as
    scikit-learn computes them when fitting.

    skops rebuilds objects by id: a mutated number shared by id (a shape) can reach
    ``_n_features_outs``, and ``transform`` then writes sparse column indices past the
    matrix it sized, which scipy densifies unchecked (a heap corruption; the long fuzz
    run's one crash).
    """
    try:
        agree = list(encoder._n_features_outs) == list(encoder._compute_n_features_outs())
    except Exception:  # noqa: BLE001 - any failure: the encoder is not consistent
        agree = False
    if not agree:
        _fail(f"{label}: a OneHotEncoder's stored output widths do not match its categories "
              "(the file was changed after it was saved?)")

def _check_bitsets(pred, label):
    """A predictor's category bitsets: an (n, 8) C-contiguous array of uint32."""
    from sklearn.ensemble._hist_gradient_boosting.common import X_BITSET_INNER_DTYPE

    bitsets = getattr(pred, "raw_left_cat_bitsets", None)
    if not isinstance(bitsets, np.ndarray) or bitsets.dtype != X_BITSET_INNER_DTYPE or \
            bitsets.ndim != 2 or bitsets.shape[1] != 8 or not bitsets.flags.c_contiguous:
        _fail(f"{label}: its category bitsets are not an (n, 8) array of uint32")
    return bitsets


def _check_sklearn_trees(found):
    """The ``(tree, feature bound, label)`` found, their node arrays checked.

    Each tree is first checked in one compiled pass over its own node records
    (:func:`_in_order`, no copy: scikit-learn writes each node after its
    parent); where one does not pass, all are checked at once by the general
    checks (:func:`_check_all_trees`), which name a fault or pass a tree in
    another order.
    """
    if not found:
        return
    depths = []
    for tree, bound, label in found:
        count = int(tree.node_count)
        left, right = tree.children_left, tree.children_right
        if count < 1 or len(left) != count or len(right) != count:
            _fail(f"{label}: {count} nodes")
        feature, threshold = tree.feature, tree.threshold
        limit = int(tree.n_features) if bound is None else min(int(bound), int(tree.n_features))
        # the compiled pass reads the four arrays unchecked: one length
        deep = _in_order(left, right, feature, threshold, limit, MAX_TREE_DEPTH) if \
            len(feature) == count and len(threshold) == count else -1
        if deep < 0:
            depths = _check_all_trees(found)
            break
        depths.append(deep)
    for (tree, _, label), deep in zip(found, depths):
        _check_sklearn_shape(tree, deep, label)


@njit(cache=True)
def _in_order(left, right, feature, threshold, limit, max_depth):  # pragma: no cover - compiled
    """A scikit-learn tree's depth where one pass in node order finds every check of
    :func:`_check_all_trees` met; -1 where it does not (a fault, or another order).

    scikit-learn appends each node after its parent, so here every node must be
    a leaf (both children -1) or a split whose two children come after it, no
    node a child twice and as many children as nodes but the root: every node
    is then reached exactly once from the root (its one parent comes before it,
    so no cycle), and a node's depth is its parent's plus one.  A split's
    feature must be in ``0..limit - 1``, its threshold not NaN, no node deeper
    than ``max_depth``.
    """
    n = len(left)
    depth = np.full(n, -1, np.int64)
    depth[0] = 0
    children, deepest = 0, 0
    for i in range(n):
        a, b = left[i], right[i]
        if a == -1 and b == -1:
            continue
        if depth[i] < 0 or a <= i or b <= i or a >= n or b >= n or a == b or \
                depth[a] >= 0 or depth[b] >= 0:
            return -1
        f = feature[i]
        d = depth[i] + 1
        if f < 0 or f >= limit or np.isnan(threshold[i]) or d > max_depth:
            return -1
        depth[a], depth[b] = d, d
        children += 2
        deepest = max(deepest, d)
    return deepest if children == n - 1 else -1


def _check_all_trees(found):
    """The ``(tree, feature bound, label)`` found, their node arrays checked all at once by
    the general checks; their depths.

    A fault is found on the whole batch, then named by checking the trees one
    by one (the first that fails raises with its own label).
    """
    arrays = []
    for tree, bound, label in found:
        count = int(tree.node_count)
        limit = int(tree.n_features) if bound is None else min(int(bound), int(tree.n_features))
        arrays.append((tree.children_left, tree.children_right, tree.feature, tree.threshold,
                       count, limit))
    left, right, feature, threshold = (np.concatenate([a[i] for a in arrays]) for i in range(4))
    sizes = np.array([a[4] for a in arrays], np.int64)
    limits = np.repeat(np.array([a[5] for a in arrays], np.int64), sizes)
    try:
        depth = check_trees(left, right, sizes, label="tree")
        inner = left >= 0
        if np.any(inner & ((feature < 0) | (feature >= limits))):
            _fail("a split feature is outside its estimator's features")  # named below
        check_split_values(threshold, inner)
    except UnsafeModelError:
        for tree, bound, label in found:  # the first that fails names itself
            _check_sklearn_tree(tree, bound, label)
        raise
    return depth.tolist()


def _check_sklearn_shape(tree, depth, label):
    """A tree's declared depth, classes and value array against its nodes."""
    count = int(tree.node_count)
    if int(tree.max_depth) < depth:
        # decision_path sizes its output by max_depth
        _fail(f"{label} is {depth} deep but says max_depth={int(tree.max_depth)}")
    n_classes = np.asarray(tree.n_classes)
    outputs, width = int(tree.n_outputs), int(tree.max_n_classes)
    # (one tree's few counts: compared as Python ints, cheaper than numpy's reductions)
    if n_classes.shape != (outputs,) or not all(1 <= c <= width for c in n_classes.tolist()):
        _fail(f"{label}: class counts {n_classes.tolist()} do not fit its value array")
    value = tree.value
    if value.shape != (count, outputs, width):
        _fail(f"{label}: a value array of shape {value.shape} for {count} nodes")


def _check_predictors(found, n_features, is_cat):
    """HistGradientBoosting's ``(predictor, label)`` found, their node records checked all at
    once (a fault named by checking them one by one, as :func:`_check_sklearn_trees`)."""
    from sklearn.ensemble._hist_gradient_boosting.common import PREDICTOR_RECORD_DTYPE

    for pred, label in found:
        nodes = getattr(pred, "nodes", None)
        if not isinstance(nodes, np.ndarray) or nodes.dtype != PREDICTOR_RECORD_DTYPE or \
                nodes.ndim != 1 or len(nodes) < 1:
            _fail(f"{label} does not hold a node array of scikit-learn's record type")
    nodes = np.concatenate([pred.nodes for pred, _ in found])
    sizes = np.array([len(pred.nodes) for pred, _ in found], np.int64)
    leaf = nodes["is_leaf"] != 0
    try:
        check_trees(np.where(leaf, -1, nodes["left"].astype(np.int64)),
                    np.where(leaf, -1, nodes["right"].astype(np.int64)), sizes, label="tree")
        inner = ~leaf
        check_index(nodes["feature_idx"], n_features, inner, "split feature")
        cat = inner & (nodes["is_categorical"] != 0)
        check_split_values(nodes["num_threshold"], inner & ~cat)
    except UnsafeModelError:
        for pred, label in found:
            _check_predictor(pred, n_features, is_cat, label)
        raise
    with_cat = set(np.repeat(np.arange(len(found)), sizes)[cat].tolist())
    for i, (pred, label) in enumerate(found):
        # the category bitsets, and the whole check where a split is categorical
        if i in with_cat:
            _check_predictor(pred, n_features, is_cat, label)
        else:
            _check_bitsets(pred, label)
