"""Reading XGBoost boosters (scalar and vector leaves, DART, categorical splits)."""

from __future__ import annotations

import json

import numpy as np

from .._validation import InvalidParameterError
from ._checks_xgboost import check_xgboost_model
from ._ensemble import (MISSING_CATEGORICAL, Builder, TreeEnsemble, category_rows, model_outputs,
                        unsupported)

__all__ = ["xgboost_ensemble", "xgboost_document", "xgboost_booster"]

# ---------------------------------------------------------------------- XGBoost
def xgboost_booster(model):
    """The fitted ``xgboost.Booster`` of ``model``; an error if the trees cannot read it."""
    import xgboost as xgb
    booster = model if isinstance(model, xgb.Booster) else None
    if booster is None:
        try:
            booster = model.get_booster()
        except Exception as exc:
            raise InvalidParameterError(f"the {type(model).__name__} is not fitted.") from exc
    missing = getattr(model, "missing", np.nan)
    if missing is not None and not (isinstance(missing, float) and np.isnan(missing)):
        raise unsupported(model, f"missing={missing!r} makes a value other than NaN missing")
    return booster


def xgboost_document(model) -> bytes:
    """The model document the trees are read from (``save_raw("json")``)."""
    return bytes(xgboost_booster(model).save_raw("json"))


def xgboost_ensemble(model, document: bytes | None = None) -> TreeEnsemble:
    """The :class:`TreeEnsemble` of an XGBoost model, read from ``document``
    (:func:`xgboost_document`, read here when None)."""
    booster = xgboost_booster(model)
    raw = json.loads(booster.save_raw("json") if document is None else document)
    learner = check_xgboost_model(raw)
    gb = learner["gradient_booster"]
    kind = gb.get("name")
    if kind == "dart":
        weights = gb.get("weight_drop", None)
        gb = gb["gbtree"]
    elif kind == "gbtree":
        weights = None
    else:
        raise unsupported(model, f"booster {kind!r} has no trees")
    trees = gb["model"]["trees"]
    info = gb["model"]["tree_info"]
    params = learner["learner_model_param"]
    n_class = int(params.get("num_class", 0) or 0)
    n_target = int(params.get("num_target", 1) or 1)
    if n_class > 1 and n_target > 1:
        raise unsupported(model, "several targets of several classes")
    n_out = max(1, n_class, n_target)
    objective = learner["objective"]["name"]
    base_score = np.array(json.loads(params["base_score"].replace("E", "e")) if
                          params["base_score"].startswith("[") else
                          [float(params["base_score"])], dtype=np.float32).reshape(-1)
    if objective in ("binary:logistic", "reg:logistic", "binary:logitraw"):
        link = "logit"
        if objective != "binary:logitraw":  # base_score is a probability
            p = base_score.astype(np.float64)
            base_score = np.log(p / (1 - p))
    elif objective in ("count:poisson", "reg:gamma", "reg:tweedie", "survival:cox"):
        link = "log"
        base_score = np.log(base_score.astype(np.float64))
    elif objective.startswith("multi:"):
        link = "softmax"
    elif objective.startswith("reg:") or objective.startswith("rank:"):
        link = "identity"
    else:
        raise unsupported(model, f"objective {objective!r}")
    base = np.broadcast_to(np.asarray(base_score, np.float64), (n_out,)).copy()
    d = int(params.get("num_feature"))
    b = Builder(n_out)
    chosen_sets = []
    for k, (t, out) in enumerate(zip(trees, info)):
        size = max(1, int(t["tree_param"].get("size_leaf_vector", "1")))
        w = 1.0 if weights is None else float(weights[k])
        if size > 1:
            # multi_strategy="multi_output_tree": a leaf holds one value per output, its
            # row of leaf_weights named by its right_children entry
            t, vector = _vector_leaves(t, size)
        t, keep = _live_nodes(t)
        left = np.asarray(t["left_children"], np.int64)
        cond = np.asarray(t["split_conditions"], np.float32).astype(np.float64)
        leaf = left < 0
        # x < t  <=>  x <= (the float64 just below t), for every float x
        threshold = np.where(leaf, 0.0, np.nextafter(cond, -np.inf))
        value = np.where(leaf, cond * w, 0.0) if size == 1 else vector[keep] * w
        missing = np.zeros(len(left), np.uint8)
        # a categorical split sends its listed categories right, all others left
        cats, segs = t.get("categories", []), t.get("categories_segments", [])
        for j, node in enumerate(t.get("categories_nodes", [])):
            chosen_sets.append(cats[segs[j]:segs[j] + t["categories_sizes"][j]])
            threshold[node] = len(chosen_sets)
            missing[node] = MISSING_CATEGORICAL
        b.add(left, t["right_children"], t["split_indices"], threshold, t["default_left"],
              value, t["sum_hessian"], missing=missing,
              output=int(out) if n_out > 1 and size == 1 else None)
    classes, outs = model_outputs(model, link, n_out)
    categories = _xgb_categories(booster, raw) if chosen_sets else {}
    n_codes = max((len(c) for c in categories.values() if c is not None), default=0)
    # XGBoost reads a code outside the split's set (an unseen category) as not chosen: left
    rows, unseen = category_rows(chosen_sets, False, 1, n_codes)
    return b.build(base, d, link=link, float32=True, library="xgboost", classes=classes,
                   output_names=outs, cat_left=rows, categories=categories,
                   unseen_code=unseen)


def _vector_leaves(tree: dict, size: int) -> tuple[dict, np.ndarray]:
    """A vector-leaf tree as the scalar trees are read, and its ``(nodes, size)`` values.

    XGBoost's multi-output tree keeps the leaves' vectors apart
    (``leaf_weights``, already scaled by the learning rate) and stores a
    leaf's row there in its ``right_children`` entry; the copy has -1 there,
    as a scalar tree's leaf.
    """
    left = np.asarray(tree["left_children"], np.int64)
    right = np.asarray(tree["right_children"], np.int64)
    rows = np.asarray(tree["leaf_weights"], np.float32).astype(np.float64).reshape(-1, size)
    leaf = left < 0
    value = np.zeros((len(left), size))
    # XGBoost's pruning leaves unreachable nodes behind (split index 2**31 - 1; the root is
    # always read): they name no row
    live = np.asarray(tree["split_indices"], np.int64) != 2 ** 31 - 1
    live[0] = True
    live = np.flatnonzero(leaf & live)
    value[live] = rows[right[live]]
    out = dict(tree)
    out["right_children"] = np.where(leaf, -1, right)
    return out, value


def _live_nodes(tree: dict) -> tuple[dict, np.ndarray | slice]:
    """``tree`` without the nodes XGBoost's pruning left behind (unreachable, split index
    2**31 - 1), children renumbered, and which nodes it kept."""
    split = np.asarray(tree["split_indices"], np.int64)
    keep = split != 2 ** 31 - 1
    keep[0] = True
    if keep.all():
        return tree, slice(None)
    new = np.cumsum(keep) - 1
    out = dict(tree)
    for key in ("left_children", "right_children"):
        child = np.asarray(tree[key], np.int64)[keep]
        out[key] = np.where(child >= 0, new[np.maximum(child, 0)], -1)
    for key in ("split_indices", "split_conditions", "default_left", "sum_hessian"):
        out[key] = np.asarray(tree[key])[keep]
    out["categories_nodes"] = new[np.asarray(tree.get("categories_nodes", []), np.int64)]
    return out, keep


def _xgb_categories(booster, raw):
    """The categories of each categorical feature (``feature_types`` "c"), in code order.

    XGBoost 3.1 and later store them with the model; an older model reads the
    column's own codes (None).
    """
    types = raw["learner"].get("feature_types") or booster.feature_types or []
    cat_features = [f for f, kind in enumerate(types) if kind == "c"]
    names = {}
    try:
        stored = booster.get_categories(export_to_arrow=True).to_arrow()
        for f, (_, arr) in enumerate(stored or []):
            if arr is not None:
                names[f] = np.asarray(arr.to_pylist(), dtype=object)
    except Exception:  # older XGBoost: no stored categories
        pass
    return {f: names.get(f) for f in cat_features}


