"""Reading LightGBM boosters from their model text.

The trees are read from ``Booster.model_to_string()``: each tree's arrays
(``split_feature``, ``threshold``, ``decision_type``, ``left_child``, ...)
are parsed at once for all trees, key by key, and the nodes put in the
preorder the kernels walk.  ``dump_model()`` would give the same trees as
nested JSON, but LightGBM builds it recursively (a cyclic tree would
overflow its stack) and it costs several times the text's reading on a
many-class booster (1,400 trees: about 2 s against 0.3 s).

A tree of ``num_leaves`` leaves has ``num_leaves - 1`` splits: split ``i``'s
children are ``left_child[i]`` / ``right_child[i]``, another split when
non-negative, leaf ``~c`` when negative.  ``decision_type`` holds bit 0
(categorical), bit 1 (missing values go left) and bits 2-3 (missing type:
0 None, 1 Zero, 2 NaN).  A categorical split's ``threshold`` is the index of
its bitset (``cat_boundaries`` delimit the 32-bit words of each bitset in
``cat_threshold``): the codes whose bit is set go left.
"""

from __future__ import annotations

import numpy as np

from .._validation import InvalidParameterError
from ._checks import UnsafeModelError, check_trees, int_param
from ._checks_lightgbm import lightgbm_blocks
from ._ensemble import (MISSING_AS_ZERO, MISSING_CATEGORICAL, MISSING_DEFAULT, MISSING_ZERO_OR_NAN,
                        Builder, TreeEnsemble, category_rows, model_outputs, unsupported)

__all__ = ["lightgbm_ensemble", "lightgbm_text", "lightgbm_booster", "lightgbm_saved_text"]

#: decision_type's missing type (bits 2-3) -> the kernels' rule
_MISSING = np.array([MISSING_AS_ZERO, MISSING_ZERO_OR_NAN, MISSING_DEFAULT, 255], np.uint8)


def lightgbm_booster(model):
    """The fitted ``lightgbm.Booster`` of ``model`` (itself, or its sklearn wrapper's)."""
    import lightgbm as lgb
    booster = model if isinstance(model, lgb.Booster) else getattr(model, "booster_", None)
    if booster is None:
        try:
            booster = model.booster_
        except Exception as exc:
            raise InvalidParameterError(f"the {type(model).__name__} is not fitted.") from exc
    return booster


def _link(objective: str) -> str:
    if objective in ("binary", "cross_entropy", "xentropy"):
        return "logit"
    if objective.startswith("multiclass"):
        return "softmax"
    if objective in ("poisson", "gamma", "tweedie"):
        return "log"
    return "identity"


def lightgbm_text(model) -> str:
    """The model text the trees are read from (``model_to_string()``)."""
    return lightgbm_booster(model).model_to_string()


def lightgbm_ensemble(model, text: str | None = None) -> TreeEnsemble:
    """The :class:`TreeEnsemble` of a LightGBM model (``LGBMModel`` or ``Booster``), read
    from ``text`` (:func:`lightgbm_text`, read here when None)."""
    booster = lightgbm_booster(model)
    text = booster.model_to_string() if text is None else text
    if "\nis_linear=1" in text:  # a model the tree methods do not read, not an unsafe one
        raise unsupported(model, "linear trees: a leaf's value depends on the row")
    header, blocks = lightgbm_blocks(text)
    if not blocks:
        raise InvalidParameterError("the model has no trees to explain.")
    n_out = int_param(header, "num_tree_per_iteration", "the model's header", 1)
    if n_out < 1:
        raise UnsafeModelError(f"refusing the model: {n_out} trees per iteration.")
    link = _link(header.get("objective", "").split(" ")[0])
    d = int_param(header, "max_feature_idx", "the model's header") + 1
    # random forest mode: predict averages the trees
    scale = 1.0 / (len(blocks) // n_out) if "\naverage_output\n" in text else 1.0
    nodes = _read_trees(blocks)
    left, right, order, sizes, chosen = _preorder(nodes)
    k = np.repeat(np.arange(len(blocks)), sizes)
    value = np.zeros((len(order), n_out))
    value[np.arange(len(order)), k % n_out if n_out > 1 else 0] = \
        nodes["value"][order] * scale
    b = Builder(n_out)
    b.add_trees(sizes, left, right, nodes["feature"][order], nodes["threshold"][order],
                nodes["default_left"][order], value, nodes["cover"][order],
                missing=nodes["missing"][order])
    classes, outs = model_outputs(model, link, n_out)
    categories = _categories(booster, header) if chosen else {}
    # the listed categories go left, any other code right; an unseen category is NaN
    rows, _ = category_rows(chosen, True, 0, 0)
    return b.build(np.zeros(n_out), d, link=link, float32=False, library="lightgbm",
                   classes=classes, output_names=outs, cat_left=rows, categories=categories)


def _numbers(blocks, key, counts, kind=np.float64) -> np.ndarray:
    """The values of ``key`` of every tree, concatenated; ``counts[k]`` of tree ``k``."""
    joined = " ".join(b.get(key, "") if n else "" for b, n in zip(blocks, counts))
    parts = joined.split()
    if len(parts) != int(np.sum(counts)):
        raise UnsafeModelError(f"refusing the model: the trees' {key!r} hold {len(parts)} "
                               f"values for {int(np.sum(counts))}.")
    try:
        out = np.array(parts, dtype=np.float64)
    except ValueError:
        raise UnsafeModelError(f"refusing the model: the trees' {key!r} hold something other "
                               "than numbers.") from None
    if kind is not np.float64:
        if not (np.all(np.isfinite(out)) and np.all(out == np.round(out))
                and np.all(np.abs(out) < 2.0 ** 62)):
            raise UnsafeModelError(f"refusing the model: the trees' {key!r} hold values that "
                                   "are not integers.")
        out = out.astype(kind)
    return out


def _read_trees(blocks) -> dict:
    """Every tree's nodes in LightGBM's numbering (tree by tree: its splits, then its leaves).

    Children are node numbers within their tree (-1 for a leaf); ``cat_codes``
    holds each categorical split's codes that go left.
    """
    n_leaves = np.array([int_param(b, "num_leaves", f"tree {k}") for k, b in enumerate(blocks)],
                        np.int64)
    if np.any(n_leaves < 1) or np.any(n_leaves >= 2 ** 31):
        raise UnsafeModelError("refusing the model: a tree has no leaves, or implausibly many.")
    m = n_leaves - 1
    lc, rc = (_numbers(blocks, key, m, np.int64) for key in ("left_child", "right_child"))
    split_off = np.concatenate([[0], np.cumsum(m)])
    tree_of_split = np.repeat(np.arange(len(blocks)), m)
    m_of = m[tree_of_split]
    # a negative child -c - 1 is leaf c, numbered after the tree's m splits
    lc, rc = (np.where(c >= 0, c, m_of + ~c) for c in (lc, rc))
    dtype = _numbers(blocks, "decision_type", m, np.int64)
    threshold = _numbers(blocks, "threshold", m)
    feature = _numbers(blocks, "split_feature", m, np.int64)
    cover_split = _numbers(blocks, "internal_count", m)
    leaf_value = _numbers(blocks, "leaf_value", n_leaves)
    leaf_cover = _numbers(blocks, "leaf_count", n_leaves)
    sizes = m + n_leaves
    if np.any((dtype < 0) | (dtype >= 16)) or np.any(((dtype >> 2) & 3) == 3):
        raise UnsafeModelError("refusing the model: a decision type names no split rule.")
    cat = (dtype & 1) == 1
    cat_codes = _bitsets(blocks, threshold, cat, tree_of_split, split_off)
    return _interleave(sizes, m, n_leaves, lc, rc, feature, threshold, dtype, cat,
                       cover_split, leaf_value, leaf_cover, cat_codes)


def _interleave(sizes, m, n_leaves, lc, rc, feature, threshold, dtype, cat, cover_split,
                leaf_value, leaf_cover, cat_codes) -> dict:
    """Splits and leaves of each tree in one numbering: tree ``k``'s splits, then its leaves."""
    n = int(sizes.sum())
    roots = np.concatenate([[0], np.cumsum(sizes)])
    tree_of_split = np.repeat(np.arange(len(sizes)), m)
    tree_of_leaf = np.repeat(np.arange(len(sizes)), n_leaves)
    split_at = roots[tree_of_split] + (np.arange(len(tree_of_split))
                                       - np.concatenate([[0], np.cumsum(m)])[tree_of_split])
    leaf_at = roots[tree_of_leaf] + m[tree_of_leaf] + (
        np.arange(len(tree_of_leaf)) - np.concatenate([[0], np.cumsum(n_leaves)])[tree_of_leaf])
    out = {"left": np.full(n, -1, np.int64), "right": np.full(n, -1, np.int64),
           "feature": np.zeros(n, np.int64), "threshold": np.zeros(n),
           "default_left": np.zeros(n, np.uint8), "missing": np.zeros(n, np.uint8),
           "value": np.zeros(n), "cover": np.zeros(n), "cat": np.zeros(n, bool),
           "sizes": sizes, "roots": roots, "cat_codes": {}}
    # children as node numbers over all trees, for the walk
    out["left"][split_at] = lc + roots[tree_of_split]
    out["right"][split_at] = rc + roots[tree_of_split]
    out["feature"][split_at] = feature
    # infinite thresholds as dump_model writes them (its AvoidInf), as this reader always had
    out["threshold"][split_at] = np.where(cat, 0.0, np.clip(threshold, -1e300, 1e300))
    out["default_left"][split_at] = np.where(cat, 0, (dtype >> 1) & 1)
    out["missing"][split_at] = np.where(cat, MISSING_CATEGORICAL, _MISSING[(dtype >> 2) & 3])
    out["cover"][split_at] = cover_split
    out["cat"][split_at] = cat
    out["value"][leaf_at], out["cover"][leaf_at] = leaf_value, leaf_cover
    out["cat_codes"] = {int(split_at[i]): codes for i, codes in cat_codes.items()}
    return out


def _bitsets(blocks, threshold, cat, tree_of_split, split_off) -> dict:
    """Split number (over all trees) -> the codes its bitset sends left, for categorical splits."""
    found = {}
    for k in np.unique(tree_of_split[cat]):
        block, what = blocks[k], f"tree {k}"
        n_cat = int_param(block, "num_cat", what, 0)
        bounds = _numbers([block], "cat_boundaries", [n_cat + 1], np.int64)
        words = _numbers([block], "cat_threshold", [int(bounds[-1])], np.int64)
        if bounds[0] != 0 or np.any(np.diff(bounds) < 0) or np.any(words < 0) \
                or np.any(words >= 2 ** 32):
            raise UnsafeModelError(f"refusing the model: {what}'s category bitsets are not "
                                   "32-bit words between increasing boundaries.")
        bits = ((words[:, None] >> np.arange(32)) & 1).astype(bool).reshape(-1)
        for i in split_off[k] + np.flatnonzero(cat[split_off[k]:split_off[k + 1]]):
            c = threshold[i]
            if not (c == round(c) and 0 <= c < n_cat):
                raise UnsafeModelError(f"refusing the model: {what}: a categorical split "
                                       f"names no category set of its {n_cat}.")
            lo, hi = bounds[int(c)] * 32, bounds[int(c) + 1] * 32
            found[int(i)] = (np.flatnonzero(bits[lo:hi])).tolist()
    return found


def _preorder(nodes):
    """The nodes in the order the kernels read them: each tree in preorder, left first.

    Returns ``left, right`` (children as positions within their tree in that
    order), ``order`` (the LightGBM numbering of each position), the tree
    sizes and the categorical splits' code sets in that order (their
    ``threshold`` is their 1-based place in it).
    """
    sizes, roots = nodes["sizes"], nodes["roots"]
    # every node reached once from its root, children in range: before walking them
    check_trees(nodes["left"] - np.repeat(roots[:-1], sizes) * (nodes["left"] >= 0),
                nodes["right"] - np.repeat(roots[:-1], sizes) * (nodes["right"] >= 0), sizes)
    left, right = nodes["left"].tolist(), nodes["right"].tolist()
    order: list[int] = []
    for r in roots[:-1].tolist():
        stack = [r]
        while stack:
            i = stack.pop()
            order.append(i)
            if left[i] >= 0:
                stack.append(right[i])
                stack.append(left[i])
    order_arr = np.asarray(order, np.int64)
    position = np.empty_like(order_arr)
    position[order_arr] = np.arange(len(order_arr))
    tree_root = np.repeat(roots[:-1], sizes)
    new_left = np.where(nodes["left"][order_arr] >= 0,
                        position[np.maximum(nodes["left"][order_arr], 0)] - tree_root, -1)
    new_right = np.where(nodes["right"][order_arr] >= 0,
                         position[np.maximum(nodes["right"][order_arr], 0)] - tree_root, -1)
    chosen = []
    threshold = nodes["threshold"]
    for i in order:
        if nodes["cat"][i]:
            chosen.append(nodes["cat_codes"][i])
            threshold[i] = len(chosen)
    return new_left, new_right, order_arr, sizes, chosen


def _categories(booster, header):
    """The pandas categories of each categorical feature, None where the model read codes.

    LightGBM keeps the categories of a DataFrame's categorical columns
    (``pandas_categorical``, in column order); a category it did not see
    there becomes NaN when it predicts.  A categorical feature's info lists
    its codes (``a:b:c``), a numeric one's its range (``[low:high]``) or
    ``none``.
    """
    infos = header.get("feature_infos", "").split()
    cat_features = [f for f, info in enumerate(infos)
                    if info != "none" and not info.startswith("[")]
    pandas_cats = getattr(booster, "pandas_categorical", None) or []
    out: dict[int, np.ndarray | None] = {f: None for f in cat_features}
    if len(pandas_cats) == len(cat_features):
        for f, cats in zip(cat_features, pandas_cats):
            out[f] = np.asarray(list(cats), dtype=object)
    return out


def lightgbm_saved_text(booster, size_hint: int) -> str:
    """Every tree of ``booster`` as its model text, serialized once.

    ``model_to_string`` serializes a model of over 1 MB twice (the first time
    to learn its length); with a buffer sized from ``size_hint`` (the length
    of the text it was loaded from) LightGBM's C API writes it once.  Falls
    back on ``model_to_string`` where the buffer is short or the API differs.
    """
    import ctypes

    try:
        from lightgbm import basic
        length = max(int(size_hint * 1.25) + (1 << 16), 1 << 20)
        written = ctypes.c_int64(0)
        buffer = ctypes.create_string_buffer(length)
        failed = basic._LIB.LGBM_BoosterSaveModelToString(
            booster._handle, ctypes.c_int(0), ctypes.c_int(-1), ctypes.c_int(0),
            ctypes.c_int64(length), ctypes.byref(written),
            ctypes.c_char_p(ctypes.addressof(buffer)))
        if not failed and 0 < written.value <= length:
            return buffer.value.decode("utf-8")
    except (AttributeError, ImportError, ctypes.ArgumentError):
        pass
    return booster.model_to_string(num_iteration=-1)


def lightgbm_loaded_booster(data: bytes):
    """A ``lightgbm.Booster`` loaded from a model text's UTF-8 bytes, as
    ``Booster(model_str=data.decode())`` makes it, without that round trip.

    ``model_str=`` encodes the text back to bytes for LightGBM's C loader
    (``LGBM_BoosterLoadModelFromString``, which reads a NUL-terminated ``char*``:
    a ``bytes`` object is one): the decode and the encode cost a few percent of the
    load of a large model.  Here a Booster made by the public constructor from a
    text of no trees gets the handle LightGBM's loader makes of ``data`` itself
    (the very bytes, no copy: nothing reads the file again), then what
    ``Booster.model_from_string`` sets after loading.  That reaches LightGBM's
    private ``_LIB`` and Booster attributes, so it runs only where
    :func:`_loads_as_public` proved, once, that it makes the Booster the public
    path makes; elsewhere the public path is taken.
    """
    import lightgbm

    if not _loads_as_public():
        return lightgbm.Booster(model_str=data.decode("utf-8"))
    return _from_bytes(lightgbm, data)


def _from_bytes(lightgbm, data: bytes):
    """The Booster of ``data`` by LightGBM's C loader (see :func:`lightgbm_loaded_booster`)."""
    import ctypes

    basic = lightgbm.basic
    booster = lightgbm.Booster(model_str=_NO_TREES)
    handle, iterations = ctypes.c_void_p(), ctypes.c_int(0)
    basic._safe_call(basic._LIB.LGBM_BoosterLoadModelFromString(
        ctypes.c_char_p(data), ctypes.byref(iterations), ctypes.byref(handle)))
    # as model_from_string does, the empty model's handle freed once the new one is made
    basic._safe_call(basic._LIB.LGBM_BoosterFree(booster._handle))
    booster._free_buffer()
    booster._handle = handle
    classes = ctypes.c_int(0)
    basic._safe_call(basic._LIB.LGBM_BoosterGetNumClasses(handle, ctypes.byref(classes)))
    booster._Booster__num_class = classes.value
    booster.pandas_categorical = basic._load_pandas_categorical(model_str=_last_lines(data))
    booster.params = booster._get_loaded_param()
    return booster


def _last_lines(data: bytes) -> str:
    """The end of ``data`` from a line break at least 80 bytes before its end (all of it where
    there is none), decoded: ``_load_pandas_categorical(model_str=)`` reads the line from
    the last break before the text's last 19 characters (at most 76 bytes), which is
    there, so it reads the same line as from the whole text."""
    at = data.rfind(b"\n", 0, max(len(data) - 80, 0))
    return data[max(at, 0):].decode("utf-8")


#: A model text of no trees: the public constructor's Booster, before its handle is replaced.
_NO_TREES = ("tree\nversion=v4\nnum_class=1\nnum_tree_per_iteration=1\nlabel_index=0\n"
             "max_feature_idx=0\nobjective=regression\nfeature_names=x\nfeature_infos=none\n\n"
             "end of trees\n")

#: A model text that differs from _NO_TREES in all _from_bytes sets (LightGBM reads the
#: parameters of a text with trees only): its proof.
_PROBE = ("tree\nversion=v4\nnum_class=3\nnum_tree_per_iteration=3\nlabel_index=0\n"
          "max_feature_idx=1\nobjective=multiclass num_class:3\nfeature_names=a b\n"
          "feature_infos=none 0:1\n\n"
          + "".join(f"Tree={k}\nnum_leaves=1\nnum_cat=0\nleaf_value={k / 4}\nshrinkage=1\n\n\n"
                    for k in range(3))
          + "end of trees\n\nparameters:\n[boosting: gbdt]\n[objective: multiclass]\n"
          "[num_class: 3]\n\nend of parameters\n\npandas_categorical:[[\"u\", \"v\"]]\n")

_PROVEN: list[bool] = []


def _loads_as_public() -> bool:
    """Whether :func:`_from_bytes` makes the Booster ``Booster(model_str=)`` makes, in this
    LightGBM: the same attributes and values (the handle aside) and the same model
    read from :data:`_PROBE` (its trees, features and classes, through LightGBM's C
    API: cheap calls, where its text and a prediction cost some 20 ms the first
    time); decided once a process (False where anything differs or fails: another
    layout of LightGBM's internals)."""
    if not _PROVEN:
        import lightgbm

        try:
            public = lightgbm.Booster(model_str=_PROBE)
            ours = _from_bytes(lightgbm, _PROBE.encode())
            mine, theirs = vars(ours), vars(public)
            same = mine.keys() == theirs.keys() and all(
                mine[key] == theirs[key] for key in mine if key != "_handle") \
                and _read(ours) == _read(public) == (3, 2, ["a", "b"], 3) \
                and ours.params != {} and ours.pandas_categorical == [["u", "v"]]
        except Exception:  # noqa: BLE001 - any failure: another layout, the public path
            same = False
        _PROVEN.append(bool(same))
    return _PROVEN[0]


def _read(booster) -> tuple:
    """What LightGBM's handle of ``booster`` holds: trees, features, their names, trees an
    iteration."""
    return (booster.num_trees(), booster.num_feature(), booster.feature_name(),
            booster.num_model_per_iteration())
