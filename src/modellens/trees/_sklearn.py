"""Reading scikit-learn trees, forests and gradient boosting (HistGradientBoosting too)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validation import InvalidParameterError
from ._checks_sklearn import check_sklearn_objects
from ._ensemble import MISSING_CATEGORICAL, N_CATEGORY_CODES, Builder, classifier_link, unsupported

__all__ = ["sklearn_ensemble"]

# ---------------------------------------------------------------------- scikit-learn
def _sk_tree(builder, tree, scale=1.0, output=None, columns=None):
    """One fitted ``sklearn.tree._tree.Tree``; ``columns`` picks value columns (classes)."""
    t = tree
    value = t.value  # (nodes, n_outputs, max_classes)
    if columns is not None:
        v = value[:, 0, :columns] * scale
    elif value.shape[1] > 1:  # a regressor of several outputs: one value per output
        v = value[:, :, 0] * scale
    else:
        v = value[:, 0, 0] * scale
    missing_left = getattr(t, "missing_go_to_left", None)
    if missing_left is None:
        missing_left = np.zeros(t.node_count, np.uint8)
    builder.add(t.children_left, t.children_right, t.feature, t.threshold, missing_left,
                v, t.weighted_n_node_samples, output=output)


def sklearn_ensemble(model):
    from sklearn.utils.validation import check_is_fitted
    names = {c.__name__ for c in type(model).__mro__}
    try:
        check_is_fitted(model)
    except Exception as exc:
        raise InvalidParameterError(f"the {type(model).__name__} is not fitted.") from exc
    classes = getattr(model, "classes_", None)
    classes = None if classes is None else list(np.asarray(classes).tolist())
    d = int(model.n_features_in_)
    n_targets = int(getattr(model, "n_outputs_", 1))
    if n_targets != 1 and classes is None and not (
            "BaseDecisionTree" in names or "BaseForest" in names):
        raise unsupported(model, "several outputs per row")
    if n_targets != 1 and classes is not None:
        raise unsupported(model, "several outputs per row")
    if "BaseDecisionTree" in names or "BaseForest" in names:
        if "BaseDecisionTree" in names:
            trees, scale = [model], 1.0
        else:
            trees = model.estimators_
            scale = 1.0 / len(trees)
        if "RandomTreesEmbedding" in names:
            raise unsupported(model, "an embedding, not a predictor")
        k = len(classes) if classes is not None else None
        b = Builder(k or n_targets)
        for est in trees:
            _sk_tree(b, est.tree_, scale, columns=k)
        outs = [f"P(y = {c})" for c in classes] if classes else ["prediction"] \
            if n_targets == 1 else [f"prediction[{j}]" for j in range(n_targets)]
        return b.build(np.zeros(k or n_targets), d, link="identity", float32=True,
                       library="sklearn", classes=classes, output_names=outs)
    if "BaseGradientBoosting" in names:
        init = model.init_
        if not (isinstance(init, str) and init == "zero") and \
                type(init).__name__ not in ("DummyRegressor", "DummyClassifier"):
            raise unsupported(model, "a custom init estimator makes the baseline depend on X")
        base = model._raw_predict_init(np.zeros((1, d), dtype=np.float32))[0]
        n_out = model.estimators_.shape[1]
        b = Builder(n_out)
        for row in model.estimators_:
            for j, est in enumerate(row):
                _sk_tree(b, est.tree_, model.learning_rate, output=j)
        link, outs = classifier_link(classes, n_out)
        return b.build(base, d, link=link, float32=True, library="sklearn", classes=classes,
                       output_names=outs)
    if "BaseHistGradientBoosting" in names:
        return _hist_gradient_boosting(model, classes, d)
    raise unsupported(model)


def _hgb_categories(model, d):
    """HistGradientBoosting's column order and categories: ``(original column, categories)``.

    With categorical features its preprocessor puts the encoded categorical
    columns first, then the numeric ones; the trees' feature ``j`` is the
    caller's column ``perm[j]``.
    """
    pre = getattr(model, "_preprocessor", None)
    is_cat = getattr(model, "is_categorical_", None)
    if pre is None or is_cat is None:
        return np.arange(d), {}
    is_cat = np.asarray(is_cat, bool)
    perm = np.concatenate([np.flatnonzero(is_cat), np.flatnonzero(~is_cat)])
    encoder = pre.named_transformers_["encoder"]
    categories = {}
    for f, cats in zip(np.flatnonzero(is_cat), encoder.categories_):
        cats = np.asarray(cats)
        if len(cats) and pd.isna(cats[-1]):  # NaN is encoded as missing, not as a code
            cats = cats[:-1]
        categories[int(f)] = cats
    return perm, categories


def _bits(bitset) -> np.ndarray:
    """A row of 8 uint32 words as 256 flags (bit ``k`` is bit ``k % 32`` of word ``k // 32``)."""
    words = np.asarray(bitset, np.uint64)
    k = np.arange(N_CATEGORY_CODES)
    return ((words[k // 32] >> (k % 32).astype(np.uint64)) & np.uint64(1)).astype(np.uint8)


def _hist_gradient_boosting(model, classes, d):
    check_sklearn_objects(model)  # its node records, bitsets and categorical mask
    perm, categories = _hgb_categories(model, d)
    known = f_idx_map = None
    if categories:
        known, f_idx_map = model._bin_mapper.make_known_categories_bitsets()
    n_out = model._baseline_prediction.shape[1] if np.ndim(model._baseline_prediction) \
        == 2 else 1
    b = Builder(n_out)
    cat_rows = [np.zeros(N_CATEGORY_CODES, np.uint8)]
    for per_iter in model._predictors:
        for j, pred in enumerate(per_iter):
            nodes = pred.nodes
            leaf = nodes["is_leaf"].astype(bool)
            left = np.where(leaf, -1, nodes["left"].astype(np.int64))
            right = np.where(leaf, -1, nodes["right"].astype(np.int64))
            threshold = np.asarray(nodes["num_threshold"], np.float64).copy()
            missing = np.zeros(len(nodes), np.uint8)
            is_cat = nodes["is_categorical"].astype(bool) & ~leaf
            for i in np.flatnonzero(is_cat):
                assert known is not None and f_idx_map is not None  # read with categories
                goes_left = _bits(pred.raw_left_cat_bitsets[nodes["bitset_idx"][i]])
                seen = _bits(known[f_idx_map[nodes["feature_idx"][i]]])
                # codes set in the node's bitset go left, other known ones right, and
                # categories the binner never saw the missing side, as in sklearn
                row = np.where(goes_left == 1, 1,
                               np.where(seen == 1, 0, int(nodes["missing_go_to_left"][i])))
                threshold[i] = len(cat_rows)
                missing[i] = MISSING_CATEGORICAL
                cat_rows.append(row.astype(np.uint8))
            # a leaf's feature index is never read (scikit-learn's checks skip it): 0 there
            feature = np.where(leaf, 0, nodes["feature_idx"].astype(np.int64))
            b.add(left, right, perm[feature], threshold,
                  nodes["missing_go_to_left"], np.where(leaf, nodes["value"], 0.0),
                  nodes["count"].astype(np.float64), missing=missing, output=j)
    base = np.asarray(model._baseline_prediction, dtype=np.float64).reshape(-1)
    link, outs = classifier_link(classes, n_out)
    if classes is None and type(getattr(model._loss, "link", None)).__name__ == "LogLink":
        # loss="poisson" / "gamma": the trees add up to the log of the prediction
        link, outs = "log", ["raw prediction"]
    return b.build(base, d, link=link, float32=False, library="sklearn", classes=classes,
                   output_names=outs, cat_left=np.array(cat_rows),
                   categories=categories)


