"""What a fitted booster's trees are now, read cheaply: when parsed trees may be reused.

:func:`~modellens.trees.tree_ensemble` keeps each booster's parsed trees while
the model lives and reads them again when the model changed.  Serializing the
whole model on every call to learn that costs more than a many-class TreeSHAP
kernel, so each library's state is read from what it exposes cheaply, and a
reader whose state cannot be read soundly serializes as before:

* LightGBM: the booster object and its C handle object (a refit, a
  ``model_from_string`` or an unpickled copy make new ones), its iteration
  and tree counts (more rounds, a rollback), ``best_iteration`` (the
  serialized trees stop there), ``pandas_categorical``, the wrapper's
  ``classes_``, and the value of every leaf of every parsed tree, read
  through LightGBM's C API (``LGBM_BoosterGetLeafValue``) in a compiled loop
  (``set_leaf_output`` changes a leaf and nothing else).  Every other change
  to a tree, through LightGBM's Python API, grows a new tree (``update``
  after ``rollback_one_iter``: caught by the Python booster's own token of
  its last change, a fresh object each time, when it has one, and by the
  new tree's leaf values) or makes a new booster.
* XGBoost: no call reveals the trees short of serializing them, and
  ``load_model`` replaces them in place, in the same object, with the same
  counts: its state is the digest of its UBJSON serialization (the cheaper
  of its two formats), never a counter.
"""

from __future__ import annotations

import copy
import ctypes
import hashlib

import numpy as np
from numba import njit

__all__ = ["lightgbm_state", "lightgbm_leaves", "digest", "compile_leaf_reader"]

#: ``LGBM_BoosterGetLeafValue(handle, tree, leaf, double *out)``, the two pointers passed
#: as 64-bit integers (the same registers and bits as a pointer on every 64-bit ABI), so
#: that a compiled loop calls it with plain integers
_LEAF_VALUE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint64, ctypes.c_int32, ctypes.c_int32,
                               ctypes.c_uint64)
_READER: list = []


def digest(blob, *extra) -> bytes:
    """A 20-byte digest of ``blob`` (bytes or text) and the reprs of ``extra``."""
    out = hashlib.blake2b(blob if isinstance(blob, (bytes, bytearray)) else blob.encode(),
                          digest_size=20)
    for item in extra:
        out.update(b"\0" + repr(item).encode())
    return out.digest()


def _leaf_reader():
    """The C function reading one leaf's value, or None where it cannot be called so."""
    if not _READER:
        fn = None
        try:
            from lightgbm import basic
            if ctypes.sizeof(ctypes.c_void_p) == 8:
                fn = _LEAF_VALUE(("LGBM_BoosterGetLeafValue", basic._LIB))
        except Exception:  # another LightGBM build: the model is serialized instead
            fn = None
        _READER.append(fn)
    return _READER[0]


@njit(cache=True)
def _read_leaves(fn, handle, n_leaves, out):  # pragma: no cover - compiled
    """Every leaf's value, tree by tree, into ``out``; False when LightGBM refused a call."""
    at = np.uint64(out.ctypes.data)
    k = 0
    for t in range(len(n_leaves)):
        for j in range(n_leaves[t]):
            if fn(handle, np.int32(t), np.int32(j), at + np.uint64(8 * k)) != 0:
                return False
            k += 1
    return True


def compile_leaf_reader() -> None:
    """Compile :func:`_read_leaves` now (``ml.warm_up``): on no leaves, so LightGBM is
    never called; nothing where LightGBM or its C API is not there."""
    fn = _leaf_reader()
    if fn is not None:
        try:
            _read_leaves(fn, np.uint64(0), np.zeros(0, np.int64), np.zeros(0))
        except Exception:  # numba cannot call it here: the cache serializes instead
            pass


def lightgbm_leaves(booster, n_leaves) -> np.ndarray | None:
    """The values of leaves ``0..n_leaves[t] - 1`` of trees ``t = 0, 1, ...`` of ``booster``,
    read from LightGBM itself (None where the C API cannot be called so)."""
    fn = _leaf_reader()
    handle = getattr(getattr(booster, "_handle", None), "value", None)
    if fn is None or not handle:
        return None
    n_leaves = np.ascontiguousarray(n_leaves, np.int64)
    out = np.empty(int(n_leaves.sum()), np.float64)
    try:
        done = _read_leaves(fn, np.uint64(handle), n_leaves, out)
    except Exception:  # numba cannot call it on this platform: serialize instead
        return None
    return out if done else None


def lightgbm_state(model, booster, classes) -> tuple | None:
    """The parts of a LightGBM model's state that cost no serialization (compared with
    ``==``; objects held and compared by identity), or None where they cannot be read."""
    handle = getattr(booster, "_handle", None)
    if not isinstance(handle, ctypes.c_void_p) or not handle.value:
        return None
    try:
        counts = (booster.current_iteration(), booster.num_trees(), booster.best_iteration)
    except Exception:
        return None
    # the Python booster replaces this list on update, rollback and set_leaf_output: a
    # fresh object marks a change (held, so that its identity is never reused)
    token = getattr(booster, "_Booster__is_predicted_cur_iter", None)
    return (_Same(booster if booster is not model else None), _Same(handle), handle.value,
            counts, _Same(token), copy.deepcopy(getattr(booster, "pandas_categorical", None)),
            classes)


class _Same:
    """An object compared by identity (held, so that its id is never another's)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return isinstance(other, _Same) and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)
