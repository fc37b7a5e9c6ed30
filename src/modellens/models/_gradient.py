"""The gradient of the explained output(s) (DALE's derivatives): torch, jax or the user's.

A mixin of :class:`~modellens.models.Model`: the same counting and checking
of answers as its predictions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import InvalidParameterError
from ._answers import ModelError
from ._jax import jax_gradient
from ._torch import to_numpy, torch_gradient

# A mixin: its methods read the fields of the class it is part of, so ``self`` is typed
# Any (the checker takes no subclass as a mixin's self type).
__all__ = ["Gradients"]


class Gradients:
    """``model.gradient(rows, backend=...)``: derivatives of what the model explains."""

    def gradient(self: Any, rows: np.ndarray, *, backend: str, function=None) -> np.ndarray:
        """Gradient of the explained output at encoded ``rows``, shape ``(m, d)``.

        Parameters
        ----------
        backend : {"torch", "jax", "callable"}
            Autodiff of the model itself, or the user's ``function``.
        function : callable, optional
            ``function(X) -> (m, d)``, called with the rows in the form the
            model takes (see :meth:`to_input`).

        The engine hands this method one chunk of rows at a time; each call
        counts once in :attr:`n_calls`.  A model of several outputs (learnt
        when it was wrapped) gives ``(m, d, k)``: each output's gradient.
        """
        m, d = rows.shape
        out = self._gradient(rows, backend, function)
        shape = (m, d) if self._columns is None else (m, d, self.n_outputs)
        if out.shape != shape:
            per = "" if self._columns is None else f" and output {self.outputs}"
            raise ModelError(f"the gradient has shape {out.shape} for {m} rows of {d} features; "
                             f"expected {shape}: one partial derivative per row and "
                             f"feature{per}.")
        return out

    def _gradient(self: Any, rows, backend, function) -> np.ndarray:
        """The gradient of the explained output(s) at ``rows`` as float64, counted."""
        m = rows.shape[0]
        try:
            if backend == "callable":
                out = function(self.to_input(rows))
            elif backend == "torch":
                out = torch_gradient(self._fn, rows, output_index=self._gradient_index(),
                                     spec=self._torch_spec)
            elif backend == "jax":
                out = jax_gradient(self._fn, rows, output_index=self._gradient_index())
            else:
                raise InvalidParameterError(f"unknown gradient backend {backend!r}")
        except ImportError:
            raise
        except Exception as exc:
            what = "gradient= callable" if backend == "callable" else f"{backend} gradient"
            raise ModelError(f"the {what} raised {type(exc).__name__} on {m} rows: {exc}") from exc
        self.account(1, m)
        try:
            return np.asarray(to_numpy(out), dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ModelError(f"the gradient is not an array of numbers: {exc}") from exc

    def _gradient_index(self: Any):
        return self.class_index if self._columns is None else list(self._columns)
