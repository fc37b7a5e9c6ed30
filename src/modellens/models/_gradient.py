"""The gradient of the explained output(s) (DALE's derivatives): torch, jax or the user's.

A mixin of :class:`~modellens.models.Model`: the same counting, keeping and
checking of answers as its predictions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import InvalidParameterError
from ._answers import ModelError, _numbers
from ._jax import jax_gradient
from ._output import OutputsFound
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
        counts once in :attr:`n_calls`.
        """
        m, d = rows.shape
        kind = f"gradient {backend}"
        held = rows.copy() if self._undetermined else None
        out = self._answer(kind, rows, lambda asked: self._gradient(asked, backend, function))
        if held is not None and out.ndim == 3 and out.shape[:2] == (m, d):
            if backend == "callable" and self._answer_names is None \
                    and self._fn is self.model and self.framework is None:
                self._name_outputs(held[:1])  # several outputs: the model's names for them
            raise self._keep(kind, held, out)  # every output's gradient, kept
        if held is not None and out.shape == (m, d) and self._wanted is None:
            self._undetermined = False  # one output's gradient: the model has one output
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
        if self._undetermined and backend == "jax" and not self._name_only:
            # autodiff needs the outputs first: one row tells them (not counted, not kept)
            probe = _numbers(to_numpy(self._call(rows[:1])))
            if probe.ndim == 2 and probe.shape[1] > 1:
                raise OutputsFound(int(probe.shape[1]))
            self._check(probe, rows[:1])
        try:
            if backend == "callable":
                out = function(self.to_input(rows))
            elif backend == "torch":
                out = torch_gradient(self._fn, rows, output_index=self._gradient_index(),
                                     spec=self._torch_spec,
                                     several=self._undetermined and not self._name_only)
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

    def _name_outputs(self: Any, row) -> None:
        """Learn the output names from the model's answer at one row (not counted, not kept).

        A ``gradient=`` callable tells how many outputs there are, not their
        names; the model's own answer (a DataFrame's columns) does.  A model
        that fails here is left to fail where its answers are needed.
        """
        try:
            self._note_names(self._call(row))
        except Exception:  # noqa: BLE001 - the names are only a label
            pass

    def _gradient_index(self: Any):
        return self.class_index if self._columns is None else list(self._columns)
