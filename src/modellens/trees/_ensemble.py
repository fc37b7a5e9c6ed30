"""One array form for fitted tree ensembles, read from scikit-learn, XGBoost and LightGBM.

Every supported model becomes a :class:`TreeEnsemble`: the nodes of all its
trees in flat arrays, the model's baseline and how its raw output is linked
to what ``predict`` / ``predict_proba`` return.  Each library's own split
semantics are kept, so that a row lands in the leaf the library sends it to,
down to the last bit:

* scikit-learn casts ``X`` to float32 and sends ``x <= t`` left (``t``
  float64); a NaN goes where ``missing_go_to_left`` says.
* XGBoost casts ``X`` to float32 and sends ``x < t`` left (``t`` float32); a
  NaN goes where ``default_left`` says.
* LightGBM compares float64 ``x <= t`` (``t`` float64); a NaN goes to the
  default side when the split's ``missing_type`` is NaN, is read as 0.0 when
  it is None, and zero and NaN both go to the default side when it is Zero;
  values within 1e-35 (a float) of zero are read as 0.0 first.

The strict ``x < t`` of XGBoost is stored as ``x <= t'`` with ``t'`` the
float64 just below ``t``: the same for every float ``x``, so one comparison
serves all libraries.

XGBoost (``enable_categorical=True``) and LightGBM split on categories too,
by the codes of the training frame's pandas categories.  An XGBoost split
sends its listed codes right and every other code left, a category it
never saw included (a code past the known ones); NaN takes the default
side.  A LightGBM split sends the codes of its bitset left and every other
right; an unseen category is NaN, which goes right whatever the split's
missing type (LightGBM's predict and its own contributions send NaN and
negative codes right, also where a split's missing type is None and its
bitset holds code 0).  Their categories come
from the model (XGBoost 3.1's stored categories, LightGBM's
``pandas_categorical``), else the column's own codes are read.

scikit-learn's HistGradientBoosting may split on categories: its
preprocessor moves the categorical columns first and ordinal-encodes them
(``categories_`` of its OrdinalEncoder, unknown and missing values to NaN);
a node then sends a code left when its bit is set in the node's
``raw_left_cat_bitsets`` row, right when the code is another category known
to the binner, and to the missing side otherwise.  Such a node is stored
with ``missing == MISSING_CATEGORICAL``, its row of ``cat_left`` in
``threshold``, and the trees' features renumbered to the caller's column
order; :meth:`TreeEnsemble.encode` maps the rows' values to the codes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._validation import InvalidParameterError, NotATreeModelError, is_integer
from ..models import class_position, lightgbm_names, requested_outputs, tree_ensemble_name
from ._checks import (check_category_table, check_ensemble, check_lightgbm_text,
                      check_sklearn_objects, check_xgboost_model)

__all__ = ["TreeEnsemble", "tree_ensemble", "output_column", "tree_outputs", "unfit_data",
           "SUPPORTED_TREE_MODELS", "MISSING_DEFAULT", "MISSING_AS_ZERO", "MISSING_ZERO_OR_NAN",
           "MISSING_CATEGORICAL"]

#: What :func:`tree_ensemble` reads, for error messages.
SUPPORTED_TREE_MODELS = (
    "scikit-learn DecisionTreeRegressor/Classifier, RandomForestRegressor/Classifier, "
    "ExtraTreesRegressor/Classifier, GradientBoostingRegressor/Classifier (default init), "
    "HistGradientBoostingRegressor/Classifier (numeric and categorical splits); XGBoost "
    "XGBRegressor, XGBClassifier, XGBRFRegressor/Classifier and Booster (gbtree/dart, "
    "numeric and categorical splits, several targets, vector leaves); "
    "LightGBM LGBMRegressor, LGBMClassifier and Booster (numeric and categorical splits, "
    "no linear trees)")

#: Missing-value rules of a split (``TreeEnsemble.missing``).
MISSING_DEFAULT = 0      # NaN goes to the default side
MISSING_AS_ZERO = 1      # NaN is read as 0.0 (LightGBM missing_type None)
MISSING_ZERO_OR_NAN = 2  # 0.0 and NaN go to the default side (LightGBM Zero)
MISSING_CATEGORICAL = 3  # a category split: cat_left[threshold] says which codes go left
#: Codes a categorical split can tell apart (HistGradientBoosting's bitsets: 8 x 32 bits).
N_CATEGORY_CODES = 256

#: LightGBM's kZeroThreshold (the float 1e-35).
LIGHTGBM_ZERO = float(np.float32(1e-35))


@dataclass
class TreeEnsemble:
    """Tree nodes in flat arrays; the raw output is ``base + sum of the reached leaves``.

    Node ``i`` of the whole ensemble is a leaf when ``left[i] < 0``; else a
    row goes to ``left[i]`` when its (cast) value of ``feature[i]`` is
    ``<= threshold[i]``, to ``right[i]`` otherwise, and a missing value to
    ``left[i]`` when ``default_left[i]``.  Tree ``k`` holds nodes
    ``roots[k]:roots[k + 1]`` and its root is ``roots[k]``.

    Attributes
    ----------
    value : ndarray of shape (n_nodes, n_outputs)
        Leaf values (already scaled by learning rate or averaging weight).
    cover : ndarray of shape (n_nodes,)
        Training weight reaching each node (samples, or hessian sums).
    base : ndarray of shape (n_outputs,)
        The raw output before any tree (boosting's initial prediction).
    link : str
        How the raw output maps to the model's answer: ``"identity"``,
        ``"logit"`` (binary log-odds), ``"softmax"`` (multiclass margins) or
        ``"log"``.
    float32 : bool
        The library casts ``X`` to float32 before comparing.
    cat_left : ndarray of shape (n_sets, 256), uint8
        Row ``threshold[i]`` of a categorical node ``i`` (``missing[i] ==
        MISSING_CATEGORICAL``): 1 where a code goes left.
    categories : dict
        Feature index -> the categories the model encodes as codes 0, 1, ...
        (its own encoder's order; None: the column's own codes, or the
        values themselves for a numeric column); empty when no split is
        categorical.
    unseen_code : int
        The code a category the model never saw becomes (a code past every
        known one, whose column of ``cat_left`` holds the library's rule for
        it); -1 makes it NaN, the missing side.
    """

    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    default_left: np.ndarray
    missing: np.ndarray
    value: np.ndarray
    cover: np.ndarray
    roots: np.ndarray
    base: np.ndarray
    n_features: int
    link: str = "identity"
    float32: bool = False
    library: str = ""
    classes: list | None = None
    output_names: list = field(default_factory=list)
    cat_left: np.ndarray = field(
        default_factory=lambda: np.zeros((1, N_CATEGORY_CODES), np.uint8))
    categories: dict = field(default_factory=dict)
    unseen_code: int = -1

    @property
    def n_trees(self) -> int:
        return len(self.roots) - 1

    @property
    def n_outputs(self) -> int:
        return self.value.shape[1]

    def cast(self, X) -> np.ndarray:
        """``X`` as float64 values rounded as the library rounds them before comparing."""
        X = np.asarray(X, dtype=np.float64)
        if self.float32:
            return X.astype(np.float32).astype(np.float64)
        if self.library == "lightgbm":
            # LightGBM reads rows sparsely: values within its zero threshold become 0.0
            X = np.where(np.abs(X) <= LIGHTGBM_ZERO, 0.0, X)
        return X

    def encode(self, values, columns=None) -> np.ndarray:
        """Rows with each categorical feature's values replaced by the model's codes.

        ``values`` are a :class:`~modellens.data.Dataset`'s float codes and
        ``columns`` its schema: a categorical column's codes index its
        ``levels``, a numeric column holds the values themselves.  A value the
        model never saw, like a missing one, becomes NaN (the missing side).
        """
        X = np.array(values, dtype=np.float64)
        unseen = np.nan if self.unseen_code < 0 else float(self.unseen_code)
        for f, cats in self.categories.items():
            col = None if columns is None else columns[f]
            if cats is None:  # the model reads the column's own codes
                if col is not None and col.is_categorical and col.levels.dtype.kind in "biuf" \
                        and not isinstance(col.dtype, pd.CategoricalDtype):
                    # numbers made categorical at the model's levels: it reads the numbers
                    x = X[:, f]
                    X[:, f] = np.where(np.isnan(x), np.nan, col.levels.astype(np.float64)[
                        np.where(np.isnan(x), 0, x).astype(np.intp)])
                continue
            where = {c: k for k, c in enumerate(np.asarray(cats).tolist())}
            if col is not None and col.is_categorical:
                table = np.array([where.get(v, unseen) for v in col.levels.tolist()] + [np.nan])
                x = X[:, f]
                idx = np.where(np.isnan(x), len(table) - 1, x).astype(np.int64)
                X[:, f] = table[idx]
            else:
                X[:, f] = [np.nan if v != v else where.get(v, unseen) for v in X[:, f].tolist()]
        return X

    def select(self, output: int, *, negate: bool = False) -> "TreeEnsemble":
        """The ensemble of one output column (trees that never touch it are dropped).

        ``negate`` flips the sign of its values and base (the log-odds of
        ``classes_[0]`` from a binary model's one column).
        """
        return self.select_outputs([(output, negate)])

    def select_outputs(self, outputs) -> "TreeEnsemble":
        """The ensemble of the output columns ``outputs``, ``(column, negate)`` pairs in order.

        Its value column ``j`` is column ``outputs[j][0]`` (negated where
        asked: the log-odds of ``classes_[0]`` from a binary model's one
        column); trees that feed none of them are dropped (the first is kept,
        so that an ensemble has a tree).
        """
        cols = [int(c) for c, _ in outputs]
        signs = np.array([-1.0 if negate else 1.0 for _, negate in outputs])
        feeds = np.logical_or.reduceat(self.value[:, cols] != 0, self.roots[:-1], axis=0)
        keep = np.flatnonzero(feeds.any(axis=1) | (np.arange(self.n_trees) == 0))
        parts = [np.arange(self.roots[k], self.roots[k + 1]) for k in keep]
        idx = np.concatenate(parts)
        shift = np.zeros(len(self.left), dtype=np.int64)
        sizes = np.array([len(p) for p in parts])
        new_roots = np.concatenate([[0], np.cumsum(sizes)])
        for k, p, r in zip(keep, parts, new_roots[:-1]):
            shift[p] = r - self.roots[k]
        left, right = self.left[idx].copy(), self.right[idx].copy()
        inner = left >= 0
        left[inner] = left[inner] + shift[idx][inner]
        right[inner] = right[inner] + shift[idx][inner]
        return TreeEnsemble(
            left=left, right=right, feature=self.feature[idx], threshold=self.threshold[idx],
            default_left=self.default_left[idx], missing=self.missing[idx],
            value=signs * self.value[idx][:, cols], cover=self.cover[idx],
            roots=new_roots.astype(np.int64), base=signs * self.base[cols],
            n_features=self.n_features,
            link=self.link, float32=self.float32, library=self.library, classes=self.classes,
            output_names=[self.output_names[c] for c in cols] if self.output_names else [],
            cat_left=self.cat_left, categories=self.categories, unseen_code=self.unseen_code)

    def traversal(self) -> tuple[np.ndarray, np.ndarray]:
        """How one pass over the trees computes every output: ``(value, tree_out)``.

        The tree kernels credit column ``c`` of ``value`` (``(nodes, K)``) of
        tree ``t`` to output ``tree_out[t] + c``.  A booster's trees each feed
        one output (one tree per class and round): ``K = 1``, each tree's own
        output, so a row goes down every tree once whatever the outputs.  A
        forest's leaves hold a value for every class: ``K = k``, and the
        traversal carries the ``k`` values.
        """
        feeds = np.logical_or.reduceat(self.value != 0, self.roots[:-1], axis=0)
        if self.n_outputs == 1 or (feeds.sum(axis=1) <= 1).all():
            tree_out = np.argmax(feeds, axis=1).astype(np.int64)  # 0 for a tree of zeros
            node_out = np.repeat(tree_out, np.diff(self.roots))
            value = self.value[np.arange(len(self.left)), node_out][:, None]
            return np.ascontiguousarray(value), tree_out
        return np.ascontiguousarray(self.value), np.zeros(self.n_trees, np.int64)

    def predict_raw(self, X) -> np.ndarray:
        """The raw output ``(n, n_outputs)`` of every row: a check of the parsing."""
        from ._kernels import predict_leaves, sized

        Xc = self.cast(X)
        leaves = sized(predict_leaves, len(Xc))(Xc, self.left, self.right, self.feature,
                                                self.threshold, self.default_left, self.missing,
                                                self.cat_left, self.roots)
        out = np.tile(self.base, (len(Xc), 1))
        for k in range(self.n_trees):
            out += self.value[leaves[:, k]]
        return out


# ---------------------------------------------------------------------- assembling
class _Builder:
    """Collects trees node by node (children as positions within their tree)."""

    def __init__(self, n_outputs):
        self.n_outputs = n_outputs
        self.parts = []

    def add(self, left, right, feature, threshold, default_left, value, cover, *,
            missing=None, output=None):
        """One tree; ``value`` is (nodes,) for tree-per-output models with ``output`` set."""
        left = np.asarray(left, dtype=np.int64)
        n = len(left)
        value = np.asarray(value, dtype=np.float64)
        if value.ndim == 1:
            full = np.zeros((n, self.n_outputs))
            full[:, 0 if output is None else output] = value
            value = full
        missing = np.zeros(n, np.uint8) if missing is None else np.asarray(missing, np.uint8)
        self.parts.append((left, np.asarray(right, dtype=np.int64),
                           np.asarray(feature, dtype=np.int64),
                           np.asarray(threshold, dtype=np.float64),
                           np.asarray(default_left, dtype=np.uint8), missing, value,
                           np.asarray(cover, dtype=np.float64)))

    def build(self, base, n_features, **kw) -> TreeEnsemble:
        if not self.parts:
            raise InvalidParameterError("the model has no trees to explain.")
        sizes = np.array([len(p[0]) for p in self.parts])
        roots = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        cols = [np.concatenate(c) for c in zip(*[p[:6] + (p[7],) for p in self.parts])]
        left, right, feature, threshold, default_left, missing, cover = cols
        # the kernels walk these arrays unchecked: a tampered model stops here
        check_ensemble(left, right, sizes, feature, threshold, missing, n_features,
                       len(kw.get("cat_left", [None])))
        if len(cover) != len(left) or sum(len(p[6]) for p in self.parts) != len(left):
            raise InvalidParameterError("refusing the model: its node arrays have different "
                                        "lengths.")
        offset = np.repeat(roots[:-1], sizes)
        inner = left >= 0
        left = np.where(inner, left + offset, -1)
        right = np.where(inner, right + offset, -1)
        feature = np.where(inner, feature, 0)
        threshold = np.where(inner, threshold, 0.0)
        value = np.concatenate([p[6] for p in self.parts])
        return TreeEnsemble(left=left, right=right, feature=feature, threshold=threshold,
                            default_left=default_left, missing=missing, value=value,
                            cover=cover, roots=roots,
                            base=np.asarray(base, dtype=np.float64).reshape(-1),
                            n_features=int(n_features), **kw)


def _unsupported(model, why=""):
    reason = f" ({why})" if why else ""
    return NotATreeModelError(
        f"cannot read {type(model).__name__} as a tree ensemble{reason}. Supported: "
        f"{SUPPORTED_TREE_MODELS}. For other models use algorithm='exact', 'permutation' "
        "or 'kernel'.", reason=why or None)


def tree_ensemble(model) -> TreeEnsemble:
    """The :class:`TreeEnsemble` of a fitted tree model; InvalidParameterError if unsupported.

    A scikit-learn Pipeline is refused: its preprocessing changes the features
    the trees split on.
    """
    if isinstance(getattr(model, "steps", None), list):
        raise NotATreeModelError(
            "a Pipeline is not a tree model: its preprocessing changes the features that the "
            "trees split on, so tree values would be about transformed columns. Explain the "
            "pipeline with algorithm='exact', 'permutation' or 'kernel', or explain its last "
            "step on the transformed data (pipe[:-1].transform(X)).",
            reason=("a Pipeline: its preprocessing changes the features that the trees split "
                    "on") if tree_ensemble_name(model) is not None else None)
    root = type(model).__module__.split(".")[0]
    if root == "sklearn":
        return _sklearn(model)
    if root == "xgboost":
        return _xgboost(model)
    if root == "lightgbm":
        return _lightgbm(model)
    raise _unsupported(model)


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


def _sklearn(model):
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
        raise _unsupported(model, "several outputs per row")
    if n_targets != 1 and classes is not None:
        raise _unsupported(model, "several outputs per row")
    if "BaseDecisionTree" in names or "BaseForest" in names:
        if "BaseDecisionTree" in names:
            trees, scale = [model], 1.0
        else:
            trees = model.estimators_
            scale = 1.0 / len(trees)
        if "RandomTreesEmbedding" in names:
            raise _unsupported(model, "an embedding, not a predictor")
        k = len(classes) if classes is not None else None
        b = _Builder(k or n_targets)
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
            raise _unsupported(model, "a custom init estimator makes the baseline depend on X")
        base = model._raw_predict_init(np.zeros((1, d), dtype=np.float32))[0]
        n_out = model.estimators_.shape[1]
        b = _Builder(n_out)
        for row in model.estimators_:
            for j, est in enumerate(row):
                _sk_tree(b, est.tree_, model.learning_rate, output=j)
        link, outs = _classifier_link(classes, n_out)
        return b.build(base, d, link=link, float32=True, library="sklearn", classes=classes,
                       output_names=outs)
    if "BaseHistGradientBoosting" in names:
        return _hist_gradient_boosting(model, classes, d)
    raise _unsupported(model)


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
    b = _Builder(n_out)
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
            b.add(left, right, perm[nodes["feature_idx"]], threshold,
                  nodes["missing_go_to_left"], np.where(leaf, nodes["value"], 0.0),
                  nodes["count"].astype(np.float64), missing=missing, output=j)
    base = np.asarray(model._baseline_prediction, dtype=np.float64).reshape(-1)
    link, outs = _classifier_link(classes, n_out)
    return b.build(base, d, link=link, float32=False, library="sklearn", classes=classes,
                   output_names=outs, cat_left=np.array(cat_rows),
                   categories=categories)


def _category_rows(chosen_sets, goes_left_if_chosen, unseen_left, n_codes):
    """``cat_left`` of partition splits: row 0 unused, one row per split after it.

    A split sends its chosen codes one way and every other code (and the
    unseen code, the last column) the other, or where ``unseen_left`` says.
    Returns ``(rows, unseen_code)``.
    """
    width = max(N_CATEGORY_CODES, n_codes + 2,
                max((max(c, default=0) for c in chosen_sets), default=0) + 2)
    check_category_table(len(chosen_sets) + 1, width)
    rows = np.zeros((len(chosen_sets) + 1, width), np.uint8)
    for i, chosen in enumerate(chosen_sets, start=1):
        rows[i, :] = 0 if goes_left_if_chosen else 1
        rows[i, np.asarray(chosen, np.int64)] = 1 if goes_left_if_chosen else 0
        rows[i, -1] = unseen_left
    return rows, width - 1


def _classifier_link(classes, n_out):
    if classes is None:
        return "identity", ["prediction"]
    if n_out == 1:
        return "logit", [f"log-odds(y = {classes[-1]})"]
    return "softmax", [f"margin(y = {c})" for c in classes]


# ---------------------------------------------------------------------- XGBoost
def _xgboost(model):
    import xgboost as xgb
    booster = model if isinstance(model, xgb.Booster) else None
    if booster is None:
        try:
            booster = model.get_booster()
        except Exception as exc:
            raise InvalidParameterError(f"the {type(model).__name__} is not fitted.") from exc
    missing = getattr(model, "missing", np.nan)
    if missing is not None and not (isinstance(missing, float) and np.isnan(missing)):
        raise _unsupported(model, f"missing={missing!r} makes a value other than NaN missing")
    raw = json.loads(booster.save_raw("json"))
    learner = check_xgboost_model(raw)
    gb = learner["gradient_booster"]
    kind = gb.get("name")
    if kind == "dart":
        weights = gb.get("weight_drop", None)
        gb = gb["gbtree"]
    elif kind == "gbtree":
        weights = None
    else:
        raise _unsupported(model, f"booster {kind!r} has no trees")
    trees = gb["model"]["trees"]
    info = gb["model"]["tree_info"]
    params = learner["learner_model_param"]
    n_class = int(params.get("num_class", 0) or 0)
    n_target = int(params.get("num_target", 1) or 1)
    if n_class > 1 and n_target > 1:
        raise _unsupported(model, "several targets of several classes")
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
        raise _unsupported(model, f"objective {objective!r}")
    base = np.broadcast_to(np.asarray(base_score, np.float64), (n_out,)).copy()
    d = int(params.get("num_feature"))
    b = _Builder(n_out)
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
    classes, outs = _outputs(model, link, n_out)
    categories = _xgb_categories(booster, raw) if chosen_sets else {}
    n_codes = max((len(c) for c in categories.values() if c is not None), default=0)
    # XGBoost reads a code outside the split's set (an unseen category) as not chosen: left
    rows, unseen = _category_rows(chosen_sets, False, 1, n_codes)
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


def _outputs(model, link, n_out):
    """The classes of a booster's sklearn wrapper (None for a Booster) and output names."""
    classes = getattr(model, "classes_", None)
    classes = None if classes is None else list(np.asarray(classes).tolist())
    if link == "softmax":
        outs = [f"margin(y = {c})" for c in (classes or range(n_out))]
    elif n_out > 1:  # several targets
        name = {"logit": "log-odds", "log": "raw prediction"}.get(link, "prediction")
        outs = [f"{name}[{j}]" for j in range(n_out)]
    elif link == "logit":
        outs = [f"log-odds(y = {classes[-1] if classes else 1})"]
    else:
        outs = ["raw prediction" if link == "log" else "prediction"]
    return classes, outs


# ---------------------------------------------------------------------- LightGBM
_LGB_MISSING = {"NaN": MISSING_DEFAULT, "None": MISSING_AS_ZERO, "Zero": MISSING_ZERO_OR_NAN}


def _lightgbm(model):
    import lightgbm as lgb
    booster = model if isinstance(model, lgb.Booster) else getattr(model, "booster_", None)
    if booster is None:
        try:
            booster = model.booster_
        except Exception as exc:
            raise InvalidParameterError(f"the {type(model).__name__} is not fitted.") from exc
    text = booster.model_to_string()
    if "\nis_linear=1" in text:  # a model the tree methods do not read, not an unsafe one
        raise _unsupported(model, "linear trees: a leaf's value depends on the row")
    # dump_model walks the trees recursively: a cycle would overflow its stack
    check_lightgbm_text(text)
    dump = booster.dump_model()
    avg = bool(dump.get("average_output"))  # random forest mode: predict averages the trees
    n_out = int(dump.get("num_tree_per_iteration", 1))
    objective = str(dump.get("objective", "")).split(" ")[0]
    if objective in ("binary", "cross_entropy", "xentropy"):
        link = "logit"
    elif objective.startswith("multiclass"):
        link = "softmax"
    elif objective in ("poisson", "gamma", "tweedie"):
        link = "log"
    else:
        link = "identity"
    d = int(dump["max_feature_idx"]) + 1
    infos = dump["tree_info"]
    scale = 1.0 / (len(infos) // n_out) if avg and infos else 1.0
    b = _Builder(n_out)
    chosen_sets: list[tuple[list[int], int]] = []
    for k, info in enumerate(infos):
        cols: dict[str, list] = {c: [] for c in ("l", "r", "f", "t", "dl", "m", "v", "c")}
        _lgb_walk(info["tree_structure"], cols, model, chosen_sets)
        b.add(cols["l"], cols["r"], cols["f"], cols["t"], cols["dl"],
              np.asarray(cols["v"]) * scale, cols["c"], missing=cols["m"],
              output=k % n_out if n_out > 1 else None)
    classes, outs = _outputs(model, link, n_out)
    categories = _lgb_categories(booster, dump) if chosen_sets else {}
    # the listed categories go left, any other code right; an unseen category is NaN
    rows, _ = _category_rows([c for c, _ in chosen_sets], True, 0, 0)
    return b.build(np.zeros(n_out), d, link=link, float32=False, library="lightgbm",
                   classes=classes, output_names=outs, cat_left=rows, categories=categories)


def _lgb_categories(booster, dump):
    """The pandas categories of each categorical feature, None where the model read codes.

    LightGBM keeps the categories of a DataFrame's categorical columns
    (``pandas_categorical``, in column order); a category it did not see
    there becomes NaN when it predicts.
    """
    infos = dump.get("feature_infos", {})
    names = dump.get("feature_names", [])
    # a categorical feature's info lists its values; a numeric one's only its range
    cat_features = [f for f, name in enumerate(names)
                    if isinstance(infos.get(name), dict) and infos[name].get("values")]
    pandas_cats = getattr(booster, "pandas_categorical", None) or []
    out: dict[int, np.ndarray | None] = {f: None for f in cat_features}
    if len(pandas_cats) == len(cat_features):
        for f, cats in zip(cat_features, pandas_cats):
            out[f] = np.asarray(list(cats), dtype=object)
    return out


def _lgb_walk(node, cols, model, chosen_sets):
    """Append ``node``'s subtree in preorder; categorical splits' codes to ``chosen_sets``."""
    stack: list[tuple[dict, int | None, bool]] = [(node, None, False)]
    while stack:
        nd, parent, is_left = stack.pop()
        i = len(cols["l"])
        if parent is not None:
            cols["l" if is_left else "r"][parent] = i
        if "leaf_value" in nd or "split_feature" not in nd:
            if nd.get("leaf_coeff"):
                raise _unsupported(model, "linear trees: a leaf's value depends on the row")
            for c, v in (("l", -1), ("r", -1), ("f", 0), ("t", 0.0), ("dl", 0),
                         ("m", 0), ("v", nd.get("leaf_value", 0.0)),
                         ("c", nd.get("leaf_count", 0))):
                cols[c].append(v)
            continue
        kind = nd.get("decision_type", "<=")
        if kind == "==":
            # the listed codes go left; NaN (a missing or unseen category) goes right for
            # every missing type, as LightGBM predicts (reading it as code 0 where the
            # missing type is None sent it left whenever code 0 was listed)
            codes = [int(c) for c in str(nd["threshold"]).split("||")]
            chosen_sets.append((codes, i))
            split: tuple[float, int, int] = (len(chosen_sets), 0, MISSING_CATEGORICAL)
        elif kind == "<=":
            split = (float(nd["threshold"]), int(bool(nd["default_left"])),
                     _LGB_MISSING[nd.get("missing_type", "None")])
        else:
            raise _unsupported(model, f"decision type {kind!r}")
        for c, v in (("l", -2), ("r", -2), ("f", nd["split_feature"]), ("t", split[0]),
                     ("dl", split[1]), ("m", split[2]), ("v", 0.0),
                     ("c", nd["internal_count"])):
            cols[c].append(v)
        stack.append((nd["right_child"], i, False))
        stack.append((nd["left_child"], i, True))


# ---------------------------------------------------------------------- outputs
def output_column(ens: TreeEnsemble, model, target) -> tuple[int, bool, str]:
    """The raw-output column explained for ``target``: ``(column, negate, name)``.

    Binary classifiers with one margin column explain ``classes_[1]``; a
    ``target`` naming ``classes_[0]`` negates it.  Multiclass models need
    ``target`` (a label, or a position among ``classes_``).
    """
    classes = ens.classes
    if classes is None:
        if ens.n_outputs == 1:
            if target is not None and not (is_integer(target) and int(target) in (0, -1)):
                raise InvalidParameterError(
                    f"target={target!r}: the model has one output; leave target= out.")
            return 0, False, ens.output_names[0]
        if target is None:
            raise InvalidParameterError(
                f"the model has {ens.n_outputs} outputs; choose one with target= (its index).")
        if not is_integer(target) or not -ens.n_outputs <= int(target) < ens.n_outputs:
            raise InvalidParameterError(f"target={target!r} is not an output index "
                                        f"(0..{ens.n_outputs - 1}).")
        k = int(target) % ens.n_outputs
        return k, False, ens.output_names[k]
    k = class_position(classes, target)
    if ens.n_outputs == 1:  # one log-odds column, for classes_[1]
        name = f"log-odds(y = {classes[k]})"
        return 0, k == 0, name
    return k, False, ens.output_names[k]


def tree_outputs(ens: TreeEnsemble, model, target) -> tuple[list, list | None]:
    """The outputs a tree method explains for ``target=``: ``(outputs, labels)``.

    ``outputs`` lists ``(column, negate, name)`` of each explained output (see
    :func:`output_column`); ``labels`` (a class label or column per output)
    is None when the result has one output.  The rules are the black-box
    methods' (:func:`modellens.models.requested_outputs` and the model seam):
    ``target=None`` explains every class of a multiclass model and every
    column of a multi-output regressor, the positive class of a binary one,
    the one output of a regressor; ``"all"`` every class (both of a binary
    classifier) or column, an error for a model of one output; a list those
    outputs in its order (a list of one: that output alone, as ``target=``
    it; an empty list, or an output named twice, an error).
    """
    classes = ens.classes
    every = list(classes) if classes is not None else list(range(ens.n_outputs))
    wanted = requested_outputs(target, True)
    if wanted is not None and classes is None and ens.n_outputs == 1:
        raise InvalidParameterError(
            f"target={target!r} selects output columns, but the model returns one output per "
            "row; leave target= out.")
    if wanted is None:
        several = target is None and len(every) > 1 and not (classes is not None
                                                             and len(classes) == 2)
        targets = every if several else [target]
    elif wanted == "all":
        targets, several = every, True
    else:
        targets, several = list(wanted), len(wanted) > 1
    outputs = [output_column(ens, model, t) for t in targets]
    if not several:
        return outputs, None
    seen = [(c, negate) for c, negate, _ in outputs]
    if len(set(seen)) != len(seen):
        raise InvalidParameterError(
            f"target= names an output twice: {targets}; name each output once.")
    labels = [classes[class_position(classes, t)] for t in targets] if classes is not None \
        else [c for c, _, _ in outputs]
    return outputs, labels


def unfit_data(ens, model, dataset, X, *, categorical=False):
    """Why the encoded rows are not what the trees split on (None when they are).

    ``categorical``: the caller maps the rows with :meth:`TreeEnsemble.encode`,
    so the model's categorical features may be categorical columns.
    """
    if dataset.n_features != ens.n_features:
        return (f"X has {dataset.n_features} features but the model's trees use "
                f"{ens.n_features}")
    if ens.categories and not categorical:
        return ("the trees split on categories, which TreeSHAP (shapley) maps but the tree "
                "partial dependence does not; use method='brute'")
    foreign = [col.name for j, col in enumerate(dataset.columns)
               if col.is_categorical and j not in ens.categories]
    if foreign:
        return (f"the columns {foreign} are categorical or text but the trees split on them "
                "as numbers; encoded codes are not the values the model saw")
    fitted = getattr(model, "feature_names_in_", None)
    if fitted is not None and isinstance(X, pd.DataFrame):
        # LightGBM's names have "_" for the data's spaces: the same columns
        if lightgbm_names(model, X.columns, fitted) != [str(c) for c in fitted]:
            return (f"X's columns {list(X.columns)} are not the model's columns "
                    f"{list(fitted)} in the same order")
    return None


def readable_ensemble(model, dataset, X, *, strict: bool, raw_output, refusal: str):
    """The model's trees when a tree algorithm can serve this request, else None.

    ``raw_output(ens)`` returns None when the requested response is the trees'
    raw output, else the reason it is not.  Where the trees cannot serve and
    ``strict`` (the user asked for the tree algorithm), an error
    ``refusal.format(why=...)`` says why; otherwise None lets the caller fall
    back to a model-agnostic algorithm.
    """
    try:
        ens = tree_ensemble(model)
    except InvalidParameterError:
        if strict:
            raise
        return None
    why = unfit_data(ens, model, dataset, X, categorical=True)
    if why is None:
        why = raw_output(ens)
    if why is not None:
        if strict:
            raise NotATreeModelError(refusal.format(why=why), reason=why)
        return None
    return ens
