"""DALE's local effects: partial derivatives of the explained output at the data points.

The derivatives of every requested feature come from one plan, in one engine
pass, from one of four sources:

- **PyTorch** autograd, for a ``torch.nn.Module`` or a function on tensors;
- **JAX** (``jax.vmap(jax.grad(...))``), for a function on JAX arrays;
- a **user callable** ``gradient(X) -> (n, d)``;
- **central finite differences** for any other model: two shifted copies of
  the data per feature, evaluated as model rows.

Autodiff and callables are answered chunk by chunk as gradient segments, so
they share the engine's chunking, progress bar and threads with predictions.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

from .._validation import (InvalidParameterError, ModellensWarning, check_positive_float,
                           check_random_state, user_stacklevel)
from ..engine import GradientRows, Plan, ShiftedRows
from ..models import import_torch, is_jax_function, is_torch_module, tree_ensemble_name

__all__ = ["DerivativePlan", "resolve_backend", "feature_scale", "BACKENDS"]

#: Names accepted by ``gradient=`` besides a callable.
BACKENDS = ("auto", "torch", "jax", "finite_differences")
#: Rows per feature at which finite differences are checked at a second step.
CHECK_ROWS = 256
#: Ratio of the second step to the first.
CHECK_RATIO = 10.0
#: Share of checked points whose two derivatives may disagree before we warn.
CHECK_SHARE = 0.1


#: Steps at least this many float roundings of the largest value, for narrow float columns.
_ROUNDING_STEPS = 64


def _narrow_float(dtype):
    """The numpy float type narrower than float64 that a column reaches the model in, or None."""
    numpy_dtype = getattr(dtype, "numpy_dtype", dtype)  # pandas' nullable Float32
    if isinstance(numpy_dtype, np.dtype) and numpy_dtype.kind == "f" and numpy_dtype.itemsize < 8:
        return numpy_dtype
    return None


def resolve_backend(mdl, gradient, rows=None) -> str:
    """The gradient source for ``gradient=`` and the wrapped model.

    Returns one of ``"callable"``, ``"torch"``, ``"jax"``, ``"finite_differences"``.
    A known tree model is refused when its derivatives would come from finite
    differences: it is flat almost everywhere and jumps at its thresholds.  A
    plain function that takes torch tensors (tried on two ``rows`` when torch
    is loaded) gets autograd.
    """
    if callable(gradient) and not isinstance(gradient, str):
        return "callable"
    if gradient is None:
        gradient = "auto"
    if not isinstance(gradient, str) or gradient not in BACKENDS:
        raise InvalidParameterError(
            f"gradient must be one of {BACKENDS} or a callable gradient(X) -> (n, d) array, "
            f"got {gradient!r}.")
    if gradient == "auto":
        if mdl.framework == "torch" or is_torch_module(mdl.model):
            return "torch"
        if is_jax_function(mdl.model):
            return "jax"
        if rows is not None and mdl.may_take_tensors and _takes_tensors(mdl, rows):
            return "torch"
        gradient = "finite_differences"
    if gradient == "torch" and not (mdl.framework == "torch" or is_torch_module(mdl.model)):
        import_torch()  # a missing install names the extra first
        if rows is None or not _takes_tensors(mdl, rows):
            raise InvalidParameterError(
                "gradient='torch' needs a torch.nn.Module or a function that takes a torch "
                "tensor and returns one built with torch operations; this model does not. "
                "Pass gradient='finite_differences' or a gradient= callable.")
    if gradient == "finite_differences":
        tree = tree_ensemble_name(mdl.model)
        if tree is not None:
            raise InvalidParameterError(
                f"DALE needs derivatives, but {tree} is a tree model: piecewise constant, so its "
                "derivative is 0 almost everywhere and infinite at its thresholds, and finite "
                "differences give zero or spiking effects. Use ml.ale, which compares "
                "predictions at bin edges.")
    return gradient


def _takes_tensors(mdl, rows) -> bool:
    """True when the model maps a torch tensor with a gradient to a tensor that keeps it."""
    torch = sys.modules.get("torch")
    if torch is None or rows.shape[0] == 0 or rows.dtype.kind != "f":
        return False
    try:
        x = torch.tensor(np.asarray(rows[:2]), dtype=torch.get_default_dtype(),
                         requires_grad=True)
        with torch.enable_grad():
            y = mdl.model(x)
    except Exception:
        return False
    return isinstance(y, torch.Tensor) and y.requires_grad


def feature_scale(values: np.ndarray) -> np.ndarray:
    """Per-column finite-difference scale: the standard deviation, else max |x|, else 1."""
    # an all-missing column (which numpy would warn about) gets scale 1: it is left out
    # here rather than silenced, as warning filters are process-wide
    has = ~np.isnan(values).all(axis=0)
    if has.all():
        return scale_rule(np.nanstd(values, axis=0), np.nanmax(np.abs(values), axis=0))
    scale, fallback = np.full(values.shape[1], np.nan), np.full(values.shape[1], np.nan)
    if has.any():
        scale[has] = np.nanstd(values[:, has], axis=0)
        fallback[has] = np.nanmax(np.abs(values[:, has]), axis=0)
    return scale_rule(scale, fallback)


def scale_rule(std: np.ndarray, largest: np.ndarray) -> np.ndarray:
    """:func:`feature_scale` from each column's standard deviation and largest ``|x|``."""
    scale = np.where(np.isfinite(std) & (std > 0), std, largest)
    return np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)


class DerivativePlan(Plan):
    r"""Derivatives of the explained output at ``rows`` for ``columns``.

    Finite differences are central,
    :math:`(f(x + h_j e_j) - f(x - h_j e_j)) / 2 h_j`, with the step of
    feature ``j`` ``fd_step`` times its standard deviation (``2 m`` model rows
    per feature); each feature's differences are taken as soon as its rows are
    in, so the shifted predictions of one feature at a time are held.

    ``scale`` gives the features' scales for the steps (default: their
    standard deviations over ``rows``); a partition of out-of-core data takes
    those of the whole data, so that every partition steps alike.

    :meth:`reduce` returns ``(derivatives, backend)``: an array of shape
    ``(c, m)``, feature-major, NaN or inf where the model's derivative is not
    finite (the caller decides what to leave out), and the source used.
    """

    def __init__(self, mdl, rows: np.ndarray, columns, *, gradient=None, fd_step=1e-3,
                 names=None, random_state=0, scale=None):
        # validated whatever the source, so that a bad option never depends on the model
        step = check_positive_float(fd_step, "fd_step",
                                    "a positive fraction of each feature's scale")
        self.backend = resolve_backend(mdl, gradient, rows)
        self.columns = list(columns)
        m = rows.shape[0]
        self._gradient: GradientRows | None
        if self.backend != "finite_differences":
            self._gradient = GradientRows(rows, self.columns, backend=self.backend,
                                          function=gradient if self.backend == "callable"
                                          else None)
            self.segments = [self._gradient]
            return
        self._gradient = None
        self.derivatives = np.empty((len(self.columns), m))
        self.rows = rows
        self.names = names or [str(j) for j in self.columns]
        # a column the model takes in a narrower float type sees x +- h rounded to it:
        # the step is kept well above that rounding, and the differences are divided by
        # the step that reached the model
        self._casts = [_narrow_float(mdl.dataset.columns[j].dtype) for j in self.columns]
        h = np.empty(len(self.columns))
        for c, (j, cast) in enumerate(zip(self.columns, self._casts)):
            x = rows[:, j]
            # scale: of the whole data, when rows are one partition of it
            h[c] = step * (feature_scale(x[:, None])[0] if scale is None else scale[c])
            if cast is not None:
                h[c] = max(h[c], _ROUNDING_STEPS * np.finfo(cast).eps
                           * float(np.nanmax(np.abs(x), initial=0.0)))
        # the same differences at a wider step on a few rows: a smooth model agrees
        # with itself, a piecewise constant one does not
        check = min(m, CHECK_ROWS)
        self.check_rows = np.sort(check_random_state(random_state).choice(m, check,
                                                                             replace=False))
        sample = rows[self.check_rows]
        self.segments, self._checks = [], []
        for c, (j, hj) in enumerate(zip(self.columns, h)):
            seg = ShiftedRows(rows, j, (hj, -hj))
            seg.on_finish = self._difference(c, j, hj, m)
            wide = ShiftedRows(sample, j, (CHECK_RATIO * hj, -CHECK_RATIO * hj))
            self.segments += [seg, wide]
            self._checks.append((wide, j, CHECK_RATIO * hj))

    def _span(self, c, x, h):
        """``x + h`` minus ``x - h`` as the model receives them (``2 h`` unless rounded)."""
        cast = self._casts[c]
        if cast is None:
            return 2 * h
        return (x + h).astype(cast).astype(np.float64) - (x - h).astype(cast).astype(np.float64)

    def _difference(self, c, j, hj, m):
        def collect(seg):
            with np.errstate(divide="ignore", invalid="ignore"):
                self.derivatives[c] = (seg.result[:m] - seg.result[m:]) \
                    / self._span(c, self.rows[:, j], hj)
            seg.result = None
        return collect

    def reduce(self):
        if self._gradient is not None:
            return self._gradient.result, self.backend
        self.warn_unreliable(self.check_counts())
        return self.derivatives, self.backend

    def check_counts(self) -> np.ndarray:
        """Per feature: checked points, inconsistent ones, moving ones, inconsistent among
        those, and points with a derivative of exactly 0, ``(c, 5)``; these add up over
        partitions of the data."""
        k = self.check_rows.size
        out = np.zeros((len(self._checks), 5), dtype=np.int64)
        for c, (wide, j, h_wide) in enumerate(self._checks):
            narrow = self.derivatives[c, self.check_rows]
            with np.errstate(divide="ignore", invalid="ignore"):
                broad = (wide.result[:k] - wide.result[k:]) \
                    / self._span(c, self.rows[self.check_rows, j], h_wide)
            inconsistent, moving = _disagreement(narrow, broad)
            out[c] = (k, inconsistent.sum(), moving.sum(), inconsistent[moving].sum(),
                      np.count_nonzero(narrow == 0))
        return out

    def warn_unreliable(self, counts, names=None):
        """Warn for each feature whose finite differences disagree at the wider step."""
        for c, (k, n_inc, n_moving, inc_moving, n_zero) in enumerate(np.asarray(counts)):
            if not k:
                continue
            if n_inc / k > CHECK_SHARE or (n_moving >= 5 and inc_moving / n_moving > 0.5):
                warnings.warn(
                    f"finite differences look unreliable for {(names or self.names)[c]!r}: at "
                    f"{n_inc / max(n_moving, 1):.0%} of the {n_moving} of {k} "
                    f"checked points where the model moves, the derivative at a "
                    f"{CHECK_RATIO:g}x wider step disagrees (and {n_zero / k:.0%} of "
                    "the points have a derivative of exactly 0). The model seems not smooth "
                    "in this feature (piecewise constant, such as trees or rounding); use "
                    "ml.ale, or pass gradient=.", ModellensWarning,
                    stacklevel=user_stacklevel())


def _disagreement(narrow: np.ndarray, broad: np.ndarray):
    """Where two finite-difference derivatives tell different stories.

    Returns two masks over the points: ``inconsistent``, where they differ by
    more than half their size or one is exactly 0 while the other is not, and
    ``moving``, where either is not 0.  For a smooth model both estimate the
    same derivative to second order in the step; a piecewise constant one is
    flat at most points and jumps, with a size that scales as one over the
    step, at the others.
    """
    a = np.where(np.isfinite(narrow), narrow, 0.0)
    b = np.where(np.isfinite(broad), broad, 0.0)
    scale = np.maximum(np.abs(a), np.abs(b))
    tiny = 1e-9 * scale.max() if scale.size else 0.0
    moving = scale > tiny
    apart = (np.abs(a - b) > 0.5 * scale) & moving
    one_flat = ((a == 0) | (b == 0)) & moving
    return apart | one_flat, moving
