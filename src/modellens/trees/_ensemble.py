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

from bisect import bisect_left
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._validation import InvalidParameterError, NotATreeModelError
from ._checks import check_category_table, check_ensemble

__all__ = ["TreeEnsemble", "Builder", "unsupported", "category_rows", "classifier_link",
           "model_outputs", "SUPPORTED_TREE_MODELS", "MISSING_DEFAULT", "MISSING_AS_ZERO", "MISSING_ZERO_OR_NAN",
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
    sums_as_source : bool
        Whether each value column's raw output (:meth:`predict_raw`) sums its trees'
        leaves in the order the ensemble it was selected from (:meth:`select_outputs`)
        sums that column: then the two give the same numbers to the bit.  False where
        the selection changes how a pass carries the outputs (a forest's one class: one
        output per tree, summed per output, against every class in each leaf, summed
        tree by tree; a binary booster's column asked twice: the other way round).
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
    sums_as_source: bool = True

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
            code = level_codes(cats, unseen, self.library)
            if col is not None and col.is_categorical:
                table = np.array([code(v) for v in col.levels.tolist()] + [np.nan])
                x = X[:, f]
                idx = np.where(np.isnan(x), len(table) - 1, x).astype(np.int64)
                X[:, f] = table[idx]
            else:
                X[:, f] = [np.nan if v != v else code(v) for v in X[:, f].tolist()]
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
        if cols == list(range(self.value.shape[1])) and not (signs < 0).any():
            # every column as it is (``target="all"``): no copy of thousands of trees (a
            # tree feeding none adds zeros)
            return self
        every = self._feeds()  # (one pass over the leaves: the selection's are its columns)
        feeds = every[:, cols]
        # (a negated column sums the same leaves, negated: the same numbers but the sign)
        same_order = self.sums_as_source and _one_output_per_tree(every) == \
            _one_output_per_tree(feeds)
        keep = np.flatnonzero(feeds.any(axis=1) | (np.arange(self.n_trees) == 0))
        sizes = np.diff(self.roots)[keep]
        new_roots = np.concatenate([[0], np.cumsum(sizes)])
        # node j of the selection is node j + off[j] of this ensemble (one pass, no loop
        # over the trees: a many-class booster has thousands)
        off = np.repeat(self.roots[keep] - new_roots[:-1], sizes)
        idx = np.arange(int(new_roots[-1])) + off
        left, right = self.left[idx].copy(), self.right[idx].copy()
        inner = left >= 0
        left[inner] -= off[inner]
        right[inner] -= off[inner]
        return TreeEnsemble(
            left=left, right=right, feature=self.feature[idx], threshold=self.threshold[idx],
            default_left=self.default_left[idx], missing=self.missing[idx],
            value=signs * self.value[idx][:, cols], cover=self.cover[idx],
            roots=new_roots.astype(np.int64), base=signs * self.base[cols],
            n_features=self.n_features,
            link=self.link, float32=self.float32, library=self.library, classes=self.classes,
            output_names=[self.output_names[c] for c in cols] if self.output_names else [],
            cat_left=self.cat_left, categories=self.categories, unseen_code=self.unseen_code,
            sums_as_source=same_order)

    def _feeds(self) -> np.ndarray:
        """``(n_trees, K)``: whether each tree has a nonzero leaf value of each output."""
        return np.logical_or.reduceat(self.value != 0, self.roots[:-1], axis=0)

    def traversal(self) -> tuple[np.ndarray, np.ndarray]:
        """How one pass over the trees computes every output: ``(value, tree_out)``.

        The tree kernels credit column ``c`` of ``value`` (``(nodes, K)``) of
        tree ``t`` to output ``tree_out[t] + c``.  A booster's trees each feed
        one output (one tree per class and round): ``K = 1``, each tree's own
        output, so a row goes down every tree once whatever the outputs.  A
        forest's leaves hold a value for every class: ``K = k``, and the
        traversal carries the ``k`` values.
        """
        feeds = self._feeds()
        if _one_output_per_tree(feeds):
            tree_out = np.argmax(feeds, axis=1).astype(np.int64)  # 0 for a tree of zeros
            node_out = np.repeat(tree_out, np.diff(self.roots))
            value = self.value[np.arange(len(self.left)), node_out][:, None]
            return np.ascontiguousarray(value), tree_out
        return np.ascontiguousarray(self.value), np.zeros(self.n_trees, np.int64)

    @property
    def nodes(self):
        """The split arrays as the kernels read them: one typed bundle (``kernels.Nodes``)
        in place of seven arrays (a tuple of references, so never stale)."""
        from ._kernels import Nodes

        return Nodes(self.left, self.right, self.feature, self.threshold, self.default_left,
                     self.missing, self.cat_left)

    def predict_raw(self, X) -> np.ndarray:
        """The raw output ``(n, n_outputs)`` of every row: a check of the parsing."""
        from ._kernels import predict_leaves, sized

        Xc = self.cast(X)
        leaves = sized(predict_leaves, len(Xc), work=len(Xc) * len(self.left))(
            Xc, self.nodes, self.roots)
        out = np.tile(self.base, (len(Xc), 1))
        value, tree_out = self.traversal()
        if value.shape[1] == 1:  # one output per tree (boosters): each output's trees summed
            reached = value[leaves, 0]
            for k in range(self.n_outputs):
                out[:, k] += reached[:, tree_out == k].sum(axis=1)
            return out
        for k in range(self.n_trees):
            out += self.value[leaves[:, k]]
        return out


def _one_output_per_tree(feeds: np.ndarray) -> bool:
    """Whether a pass carries one output per tree (``feeds``: :meth:`TreeEnsemble._feeds`):
    one column, or no tree with leaf values of two (a booster's tree per class)."""
    return feeds.shape[1] == 1 or bool((feeds.sum(axis=1) <= 1).all())


# ---------------------------------------------------------------------- assembling
class Builder:
    """Collects trees (children as positions within their tree), one or many at a time."""

    def __init__(self, n_outputs):
        self.n_outputs = n_outputs
        self.parts = []

    def add(self, left, right, feature, threshold, default_left, value, cover, *,
            missing=None, output=None):
        """One tree; ``value`` is (nodes,) for tree-per-output models with ``output`` set."""
        value = np.asarray(value, dtype=np.float64)
        if value.ndim == 1:
            full = np.zeros((len(value), self.n_outputs))
            full[:, 0 if output is None else output] = value
            value = full
        self.add_trees([len(left)], left, right, feature, threshold, default_left, value, cover,
                       missing=missing)

    def add_trees(self, sizes, left, right, feature, threshold, default_left, value, cover, *,
                  missing=None):
        """Consecutive trees of ``sizes`` nodes; ``value`` is ``(nodes, n_outputs)``."""
        left = np.asarray(left, dtype=np.int64)
        n = len(left)
        missing = np.zeros(n, np.uint8) if missing is None else np.asarray(missing, np.uint8)
        self.parts.append((np.asarray(sizes, dtype=np.int64), left,
                           np.asarray(right, dtype=np.int64),
                           np.asarray(feature, dtype=np.int64),
                           np.asarray(threshold, dtype=np.float64),
                           np.asarray(default_left, dtype=np.uint8), missing,
                           np.asarray(value, dtype=np.float64),
                           np.asarray(cover, dtype=np.float64)))

    def build(self, base, n_features, **kw) -> TreeEnsemble:
        if not self.parts:
            raise InvalidParameterError("the model has no trees to explain.")
        sizes = np.concatenate([p[0] for p in self.parts])
        roots = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        cols = [np.concatenate(c) for c in zip(*[p[1:7] + (p[8],) for p in self.parts])]
        left, right, feature, threshold, default_left, missing, cover = cols
        # the kernels walk these arrays unchecked: a tampered model stops here
        check_ensemble(left, right, sizes, feature, threshold, missing, n_features,
                       len(kw.get("cat_left", [None])))
        value = np.concatenate([p[7] for p in self.parts])
        if len(cover) != len(left) or len(value) != len(left):
            raise InvalidParameterError("refusing the model: its node arrays have different "
                                        "lengths.")
        offset = np.repeat(roots[:-1], sizes)
        inner = left >= 0
        left = np.where(inner, left + offset, -1)
        right = np.where(inner, right + offset, -1)
        feature = np.where(inner, feature, 0)
        threshold = np.where(inner, threshold, 0.0)
        return TreeEnsemble(left=left, right=right, feature=feature, threshold=threshold,
                            default_left=default_left, missing=missing, value=value,
                            cover=cover, roots=roots,
                            base=np.asarray(base, dtype=np.float64).reshape(-1),
                            n_features=int(n_features), **kw)


def unsupported(model, why=""):
    reason = f" ({why})" if why else ""
    return NotATreeModelError(
        f"cannot read {type(model).__name__} as a tree ensemble{reason}. Supported: "
        f"{SUPPORTED_TREE_MODELS}. For other models use algorithm='exact', 'permutation' "
        "or 'kernel'.", reason=why or None)


def level_codes(cats, unseen, library: str = ""):
    """The model's code of a level: ``cats`` the levels of codes 0, 1, ...; a level not
    among them becomes ``unseen``, but as XGBoost reads it for an XGBoost model.

    XGBoost (3.1+, its categories stored with the model) re-codes a frame's
    levels by a binary search (``lower_bound``) through its sorted levels, and
    never tests the level found for equality: a level it never saw reads as the
    next larger level it knows (numbers by value, text by its UTF-8 bytes read as
    signed chars); past the largest, its predict refuses the frame.
    """
    levels = np.asarray(cats).tolist()
    where: dict = {}
    for k, level in enumerate(levels):
        where.setdefault(level, k)
    if library != "xgboost" or not levels:
        return lambda v: where.get(v, unseen)
    keys = [_xgboost_key(level) for level in levels]
    try:
        order = sorted(range(len(levels)), key=keys.__getitem__)
    except TypeError:  # levels of mixed types: XGBoost stores one type a feature
        return lambda v: where.get(v, unseen)
    ranked = [keys[k] for k in order]

    def code(v):
        k = where.get(v)
        if k is not None:
            return k
        try:
            at = bisect_left(ranked, _xgboost_key(v))
        except TypeError:  # a level of another type: XGBoost refuses the frame
            return unseen
        return order[at] if at < len(ranked) else unseen

    return code


def _xgboost_key(level):
    """``level`` ordered as XGBoost orders it: text by its UTF-8 bytes as signed chars."""
    if isinstance(level, str):
        return level.encode("utf-8", "surrogatepass").translate(_SIGNED)
    if isinstance(level, bytes):
        return level.translate(_SIGNED)
    return level


#: Byte b as the unsigned byte of its signed char's order (0x80..0xFF first).
_SIGNED = bytes((b ^ 0x80) for b in range(256))


def category_rows(chosen_sets, goes_left_if_chosen, unseen_left, n_codes):
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


def classifier_link(classes, n_out):
    if classes is None:
        return "identity", ["prediction"]
    if n_out == 1:
        return "logit", [f"log-odds(y = {classes[-1]})"]
    return "softmax", [f"margin(y = {c})" for c in classes]


def model_outputs(model, link, n_out):
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
