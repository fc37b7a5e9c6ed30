"""The difference of two models, f_B - f_A, as one model: its trees, or its paired rows.

Two ways to explain ``f_B - f_A`` in one pass:

* **Trees** (:func:`difference_ensemble`): the difference of two tree
  ensembles is a tree ensemble, B's trees followed by A's with their leaf
  values negated and the base values subtracted.  TreeSHAP walks it once;
  every tree keeps its own covers, so the path-dependent game is the
  difference of the two models' own path-dependent games (each model's
  absent features follow *its* training data's split proportions), and with
  a background the interventional game of ``f_B - f_A`` on that background.
  Each library's comparison of a value with a threshold is kept: a
  float32 library's threshold ``t`` becomes the largest float64 ``t'``
  with ``float32(x) <= t  <=>  x <= t'`` when it is mixed with a library
  that compares float64 values.
* **Any models** (:class:`ModelDifference`): one callable whose answer on a
  chunk of rows is ``f_B(rows) - f_A(rows)``, both models asked for the same
  rows in the same engine call.  Every Shapley algorithm then draws its
  coalitions, background rows and conditional draws once, for the
  difference: the paired estimator, whose noise is that of one
  explanation of ``f_B - f_A`` rather than the sum of two.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np
import pandas as pd

from .._validation import InvalidParameterError
from ..trees import MISSING_CATEGORICAL, TreeEnsemble

__all__ = ["difference_ensemble", "float64_thresholds", "ModelDifference"]

#: LightGBM's zero band: values within it are read as 0.0 (see TreeEnsemble.cast)
_LIGHTGBM_ZERO = float(np.float32(1e-35))


def float64_thresholds(t) -> np.ndarray:
    """The float64 thresholds ``t'`` with ``float32(x) <= t  <=>  x <= t'`` for every float ``x``.

    ``float32`` rounds to nearest, ties to even, and is monotone: the values
    ``x`` whose float32 is at most ``t`` are those at most the midpoint
    between ``t32`` (the largest float32 <= t) and the float32 above it, the
    midpoint included when it rounds down to ``t32`` (``t32``'s last
    mantissa bit even).
    """
    t = np.asarray(t, dtype=np.float64)
    t32 = t.astype(np.float32)
    above = t32.astype(np.float64) > t
    t32 = np.where(above, np.nextafter(t32, np.float32(-np.inf)), t32)
    up = np.nextafter(t32, np.float32(np.inf))
    with np.errstate(over="ignore", invalid="ignore"):
        mid = (t32.astype(np.float64) + up.astype(np.float64)) / 2.0  # exact in float64
    even = (t32.view(np.uint32) & 1) == 0
    out = np.where(even, mid, np.nextafter(mid, -np.inf))
    # beyond float32's range a value rounds to inf: t32 == max keeps every finite x below the
    # rounding boundary max + half an ulp; infinite thresholds stay as they are
    top = np.isinf(up) & np.isfinite(t32)
    half_ulp = (t32.astype(np.float64) - np.nextafter(t32, np.float32(-np.inf))) / 2.0
    out = np.where(top, t32.astype(np.float64) + half_ulp, out)
    return np.where(np.isinf(t32) | np.isnan(t), t, out)


def _as_float64_reader(ens: TreeEnsemble, lightgbm: bool) -> np.ndarray:
    """``ens``'s thresholds for rows that are not rounded to float32 first."""
    thr = ens.threshold.copy()
    numeric = (ens.left >= 0) & (ens.missing != MISSING_CATEGORICAL)
    if ens.float32:
        thr[numeric] = float64_thresholds(thr[numeric])
    if lightgbm and ens.library != "lightgbm":
        # the combined rows read values within LightGBM's zero band as 0.0: the same
        # answers for these trees only when no threshold falls inside the band
        near = numeric & (np.abs(thr) <= _LIGHTGBM_ZERO)
        if near.any():
            raise InvalidParameterError(
                f"the {ens.library} model splits at {thr[near][0]!r}, within LightGBM's "
                "zero band (|x| <= 1e-35, which LightGBM reads as 0), so the two models' "
                "trees cannot read the same rows; compare them with algorithm='exact', "
                "'permutation' or 'kernel'.")
    return thr


def _check_pair(a: TreeEnsemble, b: TreeEnsemble) -> None:
    if a.n_features != b.n_features:
        raise InvalidParameterError(
            f"model_a's trees use {a.n_features} features and model_b's {b.n_features}: "
            "the two models must read the same columns to be compared.")
    if a.n_outputs != b.n_outputs or (a.classes is None) != (b.classes is None) \
            or (a.classes is not None and list(a.classes) != list(b.classes or [])):
        raise InvalidParameterError(
            f"the two models' outputs differ (model_a: {a.output_names}, classes "
            f"{a.classes}; model_b: {b.output_names}, classes {b.classes}); compare models "
            "of the same outputs (the same classes).")
    if a.link != b.link:
        raise InvalidParameterError(
            f"the trees of model_a add up to a {a.link!r} output and model_b's to a "
            f"{b.link!r} one: their raw outputs are on different scales. Compare the "
            "predictions with algorithm='exact', 'permutation' or 'kernel'.")
    cats = bool(a.categories) or bool(b.categories)
    if cats and (a.library != b.library or a.unseen_code != b.unseen_code
                 or a.cat_left.shape[1] != b.cat_left.shape[1]
                 or {k: None if v is None else list(np.asarray(v).tolist())
                     for k, v in a.categories.items()}
                 != {k: None if v is None else list(np.asarray(v).tolist())
                     for k, v in b.categories.items()}):
        raise InvalidParameterError(
            "the models split on categories encoded differently (another library or other "
            "levels); the trees of their difference cannot read one encoding. Compare them "
            "with algorithm='exact', 'permutation' or 'kernel'.")


def difference_ensemble(a: TreeEnsemble, b: TreeEnsemble) -> TreeEnsemble:
    """The trees of ``f_B - f_A``: B's trees, then A's with negated leaves; ``base_B - base_A``.

    The raw output of the result is ``raw_B(x) - raw_A(x)`` for every row,
    whatever mix of libraries (see the module's notes on thresholds).  Covers
    are each tree's own.
    """
    _check_pair(a, b)
    lightgbm = "lightgbm" in (a.library, b.library)
    same_reader = a.float32 == b.float32 and (a.library == "lightgbm") == (b.library == "lightgbm")
    if same_reader:
        thr_b, thr_a = b.threshold, a.threshold
        float32, library = b.float32, b.library
    else:  # one float64 reader for both
        thr_b, thr_a = _as_float64_reader(b, lightgbm), _as_float64_reader(a, lightgbm)
        float32, library = False, "lightgbm" if lightgbm else "mixed"
    a, b, thr_a, thr_b = _without_shared(a, b, thr_a, thr_b)
    nb = len(b.left)
    shift_a = np.where(a.left >= 0, nb, 0)
    thr_a = np.array(thr_a, dtype=np.float64)
    cat_a = a.missing == MISSING_CATEGORICAL
    thr_a[cat_a] += len(b.cat_left)  # A's category rows follow B's
    return TreeEnsemble(
        left=np.concatenate([b.left, a.left + shift_a]),
        right=np.concatenate([b.right, np.where(a.right >= 0, a.right + nb, a.right)]),
        feature=np.concatenate([b.feature, a.feature]),
        threshold=np.concatenate([thr_b, thr_a]),
        default_left=np.concatenate([b.default_left, a.default_left]),
        missing=np.concatenate([b.missing, a.missing]),
        value=np.concatenate([b.value, -a.value]),
        cover=np.concatenate([b.cover, a.cover]),
        roots=np.concatenate([b.roots[:-1], a.roots + nb]).astype(np.int64),
        base=b.base - a.base, n_features=b.n_features, link=b.link, float32=float32,
        library=library, classes=b.classes, output_names=list(b.output_names),
        cat_left=np.concatenate([b.cat_left, a.cat_left]), categories=b.categories or a.categories,
        unseen_code=b.unseen_code)


def _tree_keys(ens: TreeEnsemble, thr: np.ndarray) -> list:
    """A digest of each tree: its nodes (children relative to its root), thresholds as read,
    values, covers and category rows; equal digests, equal trees."""
    keys = []
    for k in range(ens.n_trees):
        lo, hi = int(ens.roots[k]), int(ens.roots[k + 1])
        left = ens.left[lo:hi]
        cat = ens.missing[lo:hi] == MISSING_CATEGORICAL
        h = hashlib.blake2b(digest_size=20)
        for part in (np.where(left >= 0, left - lo, -1),
                     np.where(left >= 0, ens.right[lo:hi] - lo, -1), ens.feature[lo:hi],
                     np.where(cat, 0.0, thr[lo:hi]), ens.default_left[lo:hi],
                     ens.missing[lo:hi], ens.value[lo:hi], ens.cover[lo:hi],
                     ens.cat_left[thr[lo:hi][cat].astype(np.int64)]):
            h.update(np.ascontiguousarray(part).tobytes())
        keys.append(h.digest())
    return keys


def _without_shared(a: TreeEnsemble, b: TreeEnsemble, thr_a, thr_b):
    """``(a, b, thr_a, thr_b)`` without the trees of B equal to one of A, and those of A.

    Two equal trees cancel in ``f_B - f_A`` and in every TreeSHAP game (the
    values are sums over trees, each tree's from its own nodes and covers),
    so a retrained booster that kept its first rounds costs only its new
    ones.  One pair stays when every tree cancels (an ensemble has a tree).
    """
    keys_a, keys_b = _tree_keys(a, thr_a), _tree_keys(b, thr_b)
    free: dict = {}
    for k, key in enumerate(keys_a):
        free.setdefault(key, []).append(k)
    pairs = []
    for k, key in enumerate(keys_b):
        if free.get(key):
            pairs.append((free[key].pop(), k))
    if len(pairs) == b.n_trees:
        pairs = pairs[1:]
    if not pairs:
        return a, b, thr_a, thr_b
    drop_a, drop_b = {p[0] for p in pairs}, {p[1] for p in pairs}
    a, thr_a = _subset(a, thr_a, [k for k in range(a.n_trees) if k not in drop_a])
    b, thr_b = _subset(b, thr_b, [k for k in range(b.n_trees) if k not in drop_b])
    return a, b, thr_a, thr_b


def _subset(ens: TreeEnsemble, thr, keep):
    """The ensemble of the trees ``keep`` (a new one: parsed ensembles are shared)."""
    parts = [np.arange(ens.roots[k], ens.roots[k + 1]) for k in keep]
    idx = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    sizes = np.array([len(p) for p in parts], dtype=np.int64)
    roots = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    shift = np.repeat(roots[:-1] - ens.roots[np.asarray(keep, dtype=np.int64)], sizes)
    inner = ens.left[idx] >= 0
    sub = replace(ens, left=np.where(inner, ens.left[idx] + shift, -1),
                  right=np.where(inner, ens.right[idx] + shift, -1),
                  feature=ens.feature[idx], threshold=ens.threshold[idx],
                  default_left=ens.default_left[idx], missing=ens.missing[idx],
                  value=ens.value[idx], cover=ens.cover[idx], roots=roots)
    return sub, np.asarray(thr)[idx]


def _fitted_on_array(model) -> bool:
    return hasattr(model, "n_features_in_") and not hasattr(model, "feature_names_in_")


class ModelDifference:
    """``f_B - f_A`` as one model: each response is model_b's minus model_a's on the same rows.

    It offers the responses both models have (``predict``, ``predict_proba``,
    ``decision_function``) and their common ``classes_``, so that
    ``target=`` and ``response_method=`` choose the same output of each.
    A plain callable (no ``predict``) is its own prediction.  A model fit on
    an unnamed array gets the rows as an array.
    """

    def __init__(self, model_a, model_b):
        ca, cb = getattr(model_a, "classes_", None), getattr(model_b, "classes_", None)
        if (ca is None) != (cb is None) or (
                ca is not None and list(np.asarray(ca).tolist()) != list(np.asarray(cb).tolist())):
            raise InvalidParameterError(
                f"the two models' classes differ (model_a: {ca}, model_b: {cb}); compare "
                "models of the same classes.")
        self.model_a, self.model_b = model_a, model_b
        if ca is not None:
            self.classes_ = np.asarray(cb)

    def _both(self, name):
        def fn(model):
            if name == "predict" and not hasattr(model, "predict") and callable(model):
                return model
            method = getattr(model, name, None)
            if method is None:
                raise AttributeError(name)
            return method

        fa, fb = fn(self.model_a), fn(self.model_b)

        def answer(X):
            out_b = np.asarray(fb(_as_input(self.model_b, X)), dtype=np.float64)
            out_a = np.asarray(fa(_as_input(self.model_a, X)), dtype=np.float64)
            if out_a.shape != out_b.shape:
                raise InvalidParameterError(
                    f"model_a's {name} answered shape {out_a.shape} and model_b's "
                    f"{out_b.shape}: the two models must give the same outputs.")
            return out_b - out_a

        return answer

    @property
    def predict(self):
        return self._both("predict")

    @property
    def predict_proba(self):
        return self._both("predict_proba")

    @property
    def decision_function(self):
        return self._both("decision_function")


def _as_input(model, X):
    """``X`` as ``model`` takes it: an array for a model fit on an unnamed array."""
    if isinstance(X, pd.DataFrame) and _fitted_on_array(model):
        return X.to_numpy()
    return X
