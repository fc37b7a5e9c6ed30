"""PyTorch primitives of the model seam: recognise, call and differentiate torch models.

Torch is optional: it is imported only when a model or an option asks for it,
and a missing install raises an error that names the extra to install.  These
functions evaluate exactly the rows they are given: chunking is the engine's.
"""

from __future__ import annotations

import contextlib
import sys
import warnings

import numpy as np

from .._validation import ModellensWarning
from ._output import select_output

__all__ = ["import_torch", "is_torch_module", "warn_if_training", "to_numpy", "torch_spec",
           "torch_predict", "torch_gradient", "torch_max_rows", "TORCH_MAX_ROWS"]


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
    """``(dtype, device)`` a torch model takes: those of its first floating parameter or buffer.

    A module without floating parameters (or a function on tensors) takes
    torch's default dtype on the CPU.
    """
    torch = import_torch()
    if isinstance(fn, torch.nn.Module):
        for tensor in list(fn.parameters()) + list(fn.buffers()):
            if tensor.is_floating_point():
                return tensor.dtype, tensor.device
    return torch.get_default_dtype(), torch.device("cpu")


#: Most rows of one call of a torch model on the CPU (prediction or gradient): the
#: memory of its activations grows with the network's width, not with the input
#: width that the engine's byte cap on rows bounds.
TORCH_MAX_ROWS = 2**15
#: Share of an accelerator's free memory one chunk may plan to use: the estimate
#: of a row's activations below is rough, and the allocator fragments.
DEVICE_MEMORY_SHARE = 0.25


def _on_host(device) -> bool:
    """Whether ``device`` is the CPU, where the rows need no copy to another memory.

    Every other device takes the device path of :func:`_to_model`; the tests
    replace this function to run that path on the CPU.
    """
    return device.type == "cpu"


def torch_max_rows(fn, spec, width: int) -> int:
    """Most rows of one chunk for a torch model, from the free memory of its device.

    On the CPU: :data:`TORCH_MAX_ROWS`.  On a CUDA device: the rows whose
    estimated memory fits :data:`DEVICE_MEMORY_SHARE` of the device's free
    memory (``torch.cuda.mem_get_info``, read at each run), which exceeds
    ``TORCH_MAX_ROWS`` on any GPU with a few free GiB and falls below it on
    a nearly full one; the engine's 32 MiB cap on the host's float64 rows
    still applies.  A row is counted as ``itemsize * 4 * (width + A)``
    bytes, where ``A`` sums the leading dimension of every parameter (a
    linear layer's output units, twice with its bias): the activations a
    backward pass keeps, with room for the gradients.  Convolutions' activations also grow with the
    spatial size, which this misses: pass ``chunk_size=`` for those.
    """
    torch = import_torch()
    dtype, device = spec if spec is not None else torch_spec(fn)
    if device.type != "cuda":  # the CPU, or a device whose free memory torch does not report
        return TORCH_MAX_ROWS
    free, _total = _free_bytes(torch, device)
    units = width
    if isinstance(fn, torch.nn.Module):
        units += sum(int(p.shape[0]) for p in fn.parameters() if p.ndim >= 1)
    per_row = torch.empty((), dtype=dtype).element_size() * 4 * max(1, units)
    return max(1, int(DEVICE_MEMORY_SHARE * free) // per_row)


def _free_bytes(torch, device):
    """``(free, total)`` bytes of a CUDA device (a seam for the tests)."""
    return torch.cuda.mem_get_info(device)


def _to_model(torch, rows: np.ndarray, dtype, device, *, requires_grad: bool = False):
    """One chunk of encoded rows as a tensor of the model's dtype on the model's device.

    On the host: one copy into the model's dtype.  On any other device (the
    device path): the rows are cast on the host (a float32 model moves half
    the bytes), pinned when the device is a GPU, and copied in one transfer
    per chunk, never row by row.
    """
    if _on_host(device):
        return torch.tensor(rows, dtype=dtype, device=device, requires_grad=requires_grad)
    host = torch.tensor(rows, dtype=dtype)
    if device.type == "cuda":
        host = host.pin_memory()
    x = host.to(device, non_blocking=device.type == "cuda")
    return x.requires_grad_() if requires_grad else x


def _to_host(out):
    """A model's answer (or a gradient) as float64 numpy on the host: one transfer.

    The cast to float64 happens with the copy (exact from float32 and float16),
    so only the float answers leave the device.  Anything that is not a
    tensor comes back as it is, for the adapter's checks to judge.
    """
    if not (hasattr(out, "detach") and hasattr(out, "to")):
        return out
    out = out.detach()
    if out.is_floating_point():
        return out.to("cpu", sys.modules["torch"].float64).numpy()
    return out.cpu().numpy()  # integers, booleans: the caller's cast or checks judge them


@contextlib.contextmanager
def _memory_hint(torch, rows):
    """Name the fix when a chunk does not fit the device's memory."""
    try:
        yield
    except torch.cuda.OutOfMemoryError as exc:  # torch.OutOfMemoryError from 2.5 on
        raise MemoryError(
            f"the device ran out of memory on a chunk of {rows.shape[0]} rows ({exc}); pass a "
            "smaller chunk_size= (rows per model call) or free memory on the device."
        ) from exc


def torch_predict(fn, rows: np.ndarray, spec=None) -> np.ndarray:
    """Evaluate a torch model on encoded rows where it lives, without a graph; numpy out.

    The rows go to the model's device and dtype in one copy, the model runs
    under ``torch.no_grad()`` (not ``inference_mode``, whose tensors a module
    that caches them could not use in a later gradient pass) and only its
    answers come back, as float64.
    """
    torch = import_torch()
    dtype, device = spec if spec is not None else torch_spec(fn)
    with torch.no_grad(), _memory_hint(torch, rows):
        x = _to_model(torch, rows, dtype, device)
        return np.asarray(_to_host(fn(x)), dtype=np.float64)


def torch_gradient(fn, rows: np.ndarray, *, output_index=None, spec=None) -> np.ndarray:
    """Autograd gradient of a torch model at every row, shape ``(m, d)``: one pass per chunk.

    One forward and one backward pass on the model's device give the
    gradient of every row and feature at once: the gradient of the summed
    outputs equals the per-row gradients because each output depends on its
    own row only (true of any model that treats rows independently; a
    BatchNorm layer in training mode does not).  A list ``output_index``
    gives each of those columns' gradient, ``(m, d, k)``.
    """
    if isinstance(output_index, (list, tuple)):
        return _torch_gradients(fn, rows, list(output_index), spec)
    torch = import_torch()
    dtype, device = spec if spec is not None else torch_spec(fn)
    with torch.enable_grad(), _memory_hint(torch, rows):
        x = _to_model(torch, rows, dtype, device, requires_grad=True)
        y = select_output(fn(x), output_index, rows.shape[0])
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
    return np.asarray(_to_host(grad), dtype=np.float64)


def _torch_gradients(fn, rows, columns, spec):
    """The gradient of each output column, shape ``(m, d, k)``: one forward pass, k backward.

    The k backward passes share the forward's graph (``retain_graph``) and run
    on the device.  ``torch.func.jacrev`` / ``vmap`` would batch them into one
    call, but they refuse modules with in-place or data-dependent operations
    and hold k gradients' activations at once; the loop takes any module and
    the memory of one backward pass.
    """
    torch = import_torch()
    dtype, device = spec if spec is not None else torch_spec(fn)
    with torch.enable_grad(), _memory_hint(torch, rows):
        x = _to_model(torch, rows, dtype, device, requires_grad=True)
        return _each_gradient(torch, fn(x), x, columns, rows)


def _each_gradient(torch, y, x, columns, rows):
    """The gradient of each column of the forward answer ``y``, stacked on a last axis."""
    grads = [_grad_of(torch, select_output(y, c, rows.shape[0]), x, rows.shape,
                      retain=i + 1 < len(columns))
             for i, c in enumerate(columns)]
    return np.stack(grads, axis=-1)
