"""PyTorch primitives of the model seam: recognise, call and differentiate torch models.

Torch is optional: it is imported only when a model or an option asks for it,
and a missing install raises an error that names the extra to install.  These
functions evaluate exactly the rows they are given: chunking is the engine's.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

from .._validation import ModellensWarning
from ._output import OutputsFound, select_output

__all__ = ["import_torch", "is_torch_module", "warn_if_training", "to_numpy", "torch_spec",
           "torch_predict", "torch_gradient"]


def import_torch():
    """The ``torch`` module, or an ImportError that says how to install it."""
    try:
        import torch
    except ImportError as exc:
        raise ImportError(
            "PyTorch is needed for this model or for gradient='torch'; install the extra with "
            "`pip install modellens[torch]`, or pass gradient='finite_differences' or a "
            "gradient= callable."
        ) from exc
    return torch


def is_torch_module(model) -> bool:
    """True for a ``torch.nn.Module`` (without importing torch when it is not loaded)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(model, torch.nn.Module)


def warn_if_training(module):
    """Dropout / batch norm in training mode make predictions random; say so once."""
    torch = sys.modules["torch"]
    stochastic = (torch.nn.modules.dropout._DropoutNd, torch.nn.modules.batchnorm._BatchNorm)
    if module.training and any(isinstance(m, stochastic) for m in module.modules()):
        warnings.warn("the torch model is in training mode and has dropout or batch-norm layers, "
                      "so its predictions vary between calls; call model.eval() first.",
                      ModellensWarning, stacklevel=6)


def to_numpy(out):
    """A framework tensor (torch, JAX) as a numpy array; anything else unchanged."""
    if hasattr(out, "detach") and hasattr(out, "cpu"):  # torch.Tensor
        return out.detach().cpu().numpy()
    return out


def torch_spec(fn):
    """``(dtype, device)`` a torch model takes: those of its first floating parameter."""
    torch = import_torch()
    if isinstance(fn, torch.nn.Module):
        for tensor in list(fn.parameters()) + list(fn.buffers()):
            if tensor.is_floating_point():
                return tensor.dtype, tensor.device
    return torch.get_default_dtype(), torch.device("cpu")


def torch_predict(fn, rows: np.ndarray, spec=None) -> np.ndarray:
    """Evaluate a torch model on encoded rows without building a graph; numpy out."""
    torch = import_torch()
    dtype, device = spec if spec is not None else torch_spec(fn)
    with torch.no_grad():
        x = torch.tensor(rows, dtype=dtype, device=device)
        return np.asarray(to_numpy(fn(x)), dtype=np.float64)


def torch_gradient(fn, rows: np.ndarray, *, output_index=None, spec=None,
                   several=False) -> np.ndarray:
    """Autograd gradient of a torch model at every row, shape ``(m, d)``.

    The gradient of the summed outputs equals the per-row gradients because
    each output depends on its own row only (true of any model that treats
    rows independently; a BatchNorm layer in training mode does not).
    """
    if isinstance(output_index, (list, tuple)):
        return _torch_gradients(fn, rows, list(output_index), spec)
    torch = import_torch()
    dtype, device = spec if spec is not None else torch_spec(fn)
    x = torch.tensor(rows, dtype=dtype, device=device, requires_grad=True)
    with torch.enable_grad():
        y = fn(x)
        if several and output_index is None and y.ndim == 2 and y.shape[1] > 1:
            raise OutputsFound(int(y.shape[1]))  # the outputs were unknown: now they are
        y = select_output(y, output_index, rows.shape[0])
        return _grad_of(torch, y, x, rows.shape)


def _grad_of(torch, y, x, shape, retain=False):
    """The gradient of ``y.sum()`` with respect to ``x`` as float64 numpy."""
    if not y.requires_grad:
        raise ValueError("the model's output does not depend on its input through torch "
                         "operations (was it converted to numpy inside?); autograd "
                         "cannot differentiate it.")
    (grad,) = torch.autograd.grad(y.sum(), x, allow_unused=True, retain_graph=retain)
    if grad is None:  # the output does not use the input at all
        return np.zeros(shape)
    return np.asarray(grad.detach().cpu().numpy(), dtype=np.float64)


def _torch_gradients(fn, rows, columns, spec):
    """The gradient of each output column, shape ``(m, d, k)``: one forward pass, k backward."""
    torch = import_torch()
    dtype, device = spec if spec is not None else torch_spec(fn)
    x = torch.tensor(rows, dtype=dtype, device=device, requires_grad=True)
    with torch.enable_grad():
        y = fn(x)
        grads = [_grad_of(torch, select_output(y, c, rows.shape[0]), x, rows.shape,
                          retain=i + 1 < len(columns))
                 for i, c in enumerate(columns)]
    return np.stack(grads, axis=-1)
