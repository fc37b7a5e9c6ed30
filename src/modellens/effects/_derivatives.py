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

import warnings

import numpy as np

from .._validation import InvalidParameterError, check_positive_float
from ..engine import GradientRows, Plan, ShiftedRows
from ..models._jax import is_jax_function
from ..models._torch import is_torch_module

__all__ = ["DerivativePlan", "resolve_backend", "feature_scale", "BACKENDS"]

#: Names accepted by ``gradient=`` besides a callable.
BACKENDS = ("auto", "torch", "jax", "finite_differences")


def resolve_backend(mdl, gradient) -> str:
    """The gradient source for ``gradient=`` and the wrapped model.

    Returns one of ``"callable"``, ``"torch"``, ``"jax"``, ``"finite_differences"``.
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
        return "finite_differences"
    return gradient


def feature_scale(values: np.ndarray) -> np.ndarray:
    """Per-column finite-difference scale: the standard deviation, else max |x|, else 1."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-missing column gets scale 1
        scale = np.nanstd(values, axis=0)
        fallback = np.nanmax(np.abs(values), axis=0)
    scale = np.where(np.isfinite(scale) & (scale > 0), scale, fallback)
    return np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)


class DerivativePlan(Plan):
    r"""Derivatives of the explained output at ``rows`` for ``columns``.

    Finite differences are central,
    :math:`(f(x + h_j e_j) - f(x - h_j e_j)) / 2 h_j`, with the step of
    feature ``j`` ``fd_step`` times its standard deviation (``2 m`` model rows
    per feature); each feature's differences are taken as soon as its rows are
    in, so the shifted predictions of one feature at a time are held.

    :meth:`reduce` returns ``(derivatives, backend)``: an array of shape
    ``(c, m)``, feature-major, NaN or inf where the model's derivative is not
    finite (the caller decides what to leave out), and the source used.
    """

    def __init__(self, mdl, rows: np.ndarray, columns, *, gradient=None, fd_step=1e-3):
        self.backend = resolve_backend(mdl, gradient)
        self.columns = list(columns)
        m = rows.shape[0]
        if self.backend != "finite_differences":
            self._gradient = GradientRows(rows, self.columns, backend=self.backend,
                                          function=gradient if self.backend == "callable"
                                          else None)
            self.segments = [self._gradient]
            return
        step = check_positive_float(fd_step, "fd_step",
                                    "a positive fraction of each feature's scale")
        self._gradient = None
        self.derivatives = np.empty((len(self.columns), m))
        h = step * feature_scale(rows[:, self.columns])
        self.segments = []
        for c, (j, hj) in enumerate(zip(self.columns, h)):
            seg = ShiftedRows(rows, j, (hj, -hj))
            seg.on_finish = self._difference(c, hj, m)
            self.segments.append(seg)

    def _difference(self, c, hj, m):
        def collect(seg):
            self.derivatives[c] = (seg.result[:m] - seg.result[m:]) / (2 * hj)
            seg.result = None
        return collect

    def reduce(self):
        if self._gradient is not None:
            return self._gradient.result, self.backend
        return self.derivatives, self.backend
