"""Gradients of the explained output at the data points.

The local effect of DALE is the partial derivative :math:`\\partial f / \\partial
x_s` at a real data point.  This module produces the derivatives of every
requested feature in one pass, from one of four sources:

- **PyTorch** autograd, for a ``torch.nn.Module`` or a function on tensors;
- **JAX** (``jax.vmap(jax.grad(...))``), for a function on JAX arrays;
- a **user callable** ``gradient(X) -> (n, d)``, called once;
- **central finite differences** for any other model, planned as engine rows
  (two shifted copies of the data per feature, all features in one
  :func:`~modellens.engine.evaluate` call).

PyTorch and JAX are optional: they are imported only when asked for, and a
missing one raises an error that names the extra to install.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

__all__ = ["local_effects", "resolve_backend", "BACKENDS"]

#: Names accepted by ``gradient=`` besides a callable.
BACKENDS = ("auto", "torch", "jax", "finite_differences")

#: Rows per autodiff call when ``chunk_size`` is not given: the memory of a
#: backward pass grows with the network's activations, not with the input
#: width, so the engine's byte budget for input rows does not bound it.
AUTODIFF_CHUNK_ROWS = 2**15


# ---------------------------------------------------------------- imports
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


def import_jax():
    """``(jax, jax.numpy)``, or an ImportError that says how to install them."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as exc:
        raise ImportError(
            "JAX is needed for gradient='jax'; install the extra with "
            "`pip install modellens[jax]`, or pass gradient='finite_differences' or a "
            "gradient= callable."
        ) from exc
    return jax, jnp


def is_torch_module(model) -> bool:
    """True for a ``torch.nn.Module`` (without importing torch when it is not loaded)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(model, torch.nn.Module)


def is_jax_function(model) -> bool:
    """True for a ``jax.jit``-compiled function, the one JAX callable we can recognise."""
    return "jax" in sys.modules and type(model).__module__.split(".")[0] in ("jax", "jaxlib")


def warn_if_training(module):
    """Dropout / batch norm in training mode make predictions random; say so once."""
    torch = sys.modules["torch"]
    stochastic = (torch.nn.modules.dropout._DropoutNd, torch.nn.modules.batchnorm._BatchNorm)
    if module.training and any(isinstance(m, stochastic) for m in module.modules()):
        warnings.warn("the torch model is in training mode and has dropout or batch-norm layers, "
                      "so its predictions vary between calls; call model.eval() first.",
                      UserWarning, stacklevel=5)


def to_numpy(out):
    """A framework tensor (torch, JAX) as a numpy array; anything else unchanged."""
    if hasattr(out, "detach") and hasattr(out, "cpu"):  # torch.Tensor
        return out.detach().cpu().numpy()
    return out


# ------------------------------------------------------------------ torch
def torch_spec(fn):
    """``(dtype, device)`` a torch model takes: those of its first floating parameter."""
    torch = import_torch()
    if isinstance(fn, torch.nn.Module):
        for tensor in list(fn.parameters()) + list(fn.buffers()):
            if tensor.is_floating_point():
                return tensor.dtype, tensor.device
    return torch.get_default_dtype(), torch.device("cpu")


def torch_predict(fn, rows: np.ndarray, spec=None, *, chunk_rows=AUTODIFF_CHUNK_ROWS):
    """Evaluate a torch model on encoded rows without building a graph; numpy out."""
    torch = import_torch()
    dtype, device = spec if spec is not None else torch_spec(fn)
    outs = []
    with torch.no_grad():
        for start in range(0, rows.shape[0], chunk_rows):
            x = torch.tensor(rows[start:start + chunk_rows], dtype=dtype, device=device)
            outs.append(np.asarray(to_numpy(fn(x)), dtype=np.float64))
    return outs[0] if len(outs) == 1 else np.concatenate(outs, axis=0)


def _select_output(y, index, m):
    """The explained output of a batch: shape ``(m,)`` (index picks a column of 2-D outputs)."""
    if y.ndim == 2 and index is not None:
        y = y[:, index]
    elif y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if tuple(y.shape) != (m,):
        hint = " Pass target= (an output column) for a model with several outputs." \
            if y.ndim == 2 else ""
        raise ValueError(f"the model returned shape {tuple(y.shape)} for {m} rows; "
                         f"expected ({m},).{hint}")
    return y


def torch_gradient(fn, rows: np.ndarray, *, output_index=None, spec=None,
                   chunk_rows=AUTODIFF_CHUNK_ROWS):
    """Autograd gradient of a torch model at every row, shape ``(m, d)``, and the call count.

    The gradient of the summed outputs of a chunk equals the per-row gradients
    because each output depends on its own row only (true of any model that
    treats rows independently; a BatchNorm layer in training mode does not).
    """
    torch = import_torch()
    dtype, device = spec if spec is not None else torch_spec(fn)
    out = np.empty(rows.shape, dtype=np.float64)
    calls = 0
    for start in range(0, rows.shape[0], chunk_rows):
        chunk = rows[start:start + chunk_rows]
        x = torch.tensor(chunk, dtype=dtype, device=device, requires_grad=True)
        with torch.enable_grad():
            y = _select_output(fn(x), output_index, chunk.shape[0])
            calls += 1
            if not y.requires_grad:
                raise ValueError("the model's output does not depend on its input through torch "
                                 "operations (was it converted to numpy inside?); autograd "
                                 "cannot differentiate it.")
            (grad,) = torch.autograd.grad(y.sum(), x, allow_unused=True)
        if grad is None:  # the output does not use the input at all
            out[start:start + chunk.shape[0]] = 0.0
        else:
            out[start:start + chunk.shape[0]] = grad.detach().cpu().numpy()
    return out, calls


# -------------------------------------------------------------------- jax
def jax_gradient(fn, rows: np.ndarray, *, output_index=None, chunk_rows=AUTODIFF_CHUNK_ROWS):
    """``jax.vmap(jax.grad(.))`` of a JAX function at every row, shape ``(m, d)``, and the calls."""
    jax, jnp = import_jax()

    def one_row(x):
        y = jnp.reshape(fn(x[None, :]), (1, -1))
        if output_index is None and y.shape[1] != 1:
            raise ValueError(f"the model returns {y.shape[1]} outputs per row; expected one.")
        return y[0, 0 if output_index is None else output_index]

    grad = jax.vmap(jax.grad(one_row))
    out = np.empty(rows.shape, dtype=np.float64)
    calls = 0
    for start in range(0, rows.shape[0], chunk_rows):
        chunk = rows[start:start + chunk_rows]
        out[start:start + chunk.shape[0]] = np.asarray(grad(jnp.asarray(chunk)), dtype=np.float64)
        calls += 1
    return out, calls


# ---------------------------------------------------------------- choose
def resolve_backend(mdl, gradient) -> str:
    """The gradient source for ``gradient=`` and the wrapped model.

    Returns one of ``"callable"``, ``"torch"``, ``"jax"``, ``"finite_differences"``.
    """
    if callable(gradient) and not isinstance(gradient, str):
        return "callable"
    if gradient is None:
        gradient = "auto"
    if not isinstance(gradient, str) or gradient not in BACKENDS:
        raise ValueError(
            f"gradient must be one of {BACKENDS} or a callable gradient(X) -> (n, d) array, "
            f"got {gradient!r}."
        )
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


def finite_differences(mdl, rows: np.ndarray, columns, *, step=1e-3, chunk_size=None, n_jobs=1,
                       progress=None) -> np.ndarray:
    r"""Central differences :math:`(f(x + h_j e_j) - f(x - h_j e_j)) / 2 h_j`, shape ``(m, c)``.

    The step of feature ``j`` is ``step`` times its standard deviation, so one
    relative step suits features of any scale.  Every feature's shifted rows are
    planned as :class:`~modellens.engine.GridRows` and evaluated in one
    :func:`~modellens.engine.evaluate` call (``2 m c`` model rows).
    """
    from .engine import GridRows, evaluate

    if not isinstance(step, (int, float, np.number)) or isinstance(step, bool) \
            or not np.isfinite(step) or step <= 0:
        raise ValueError(f"fd_step must be a positive fraction of each feature's scale, "
                         f"got {step}.")
    columns = list(columns)
    h = float(step) * feature_scale(rows[:, columns])
    segments = []
    for j, hj in zip(columns, h):
        x = rows[:, j]
        shifted = np.stack([x + hj, x - hj])[:, :, None]
        segments.append(GridRows(rows, [j], shifted))
    evaluate(mdl, segments, chunk_size=chunk_size, n_jobs=n_jobs, progress=progress,
             desc="dale gradients")
    m = rows.shape[0]
    out = np.empty((m, len(columns)))
    for c, (seg, hj) in enumerate(zip(segments, h)):
        out[:, c] = (seg.result[:m] - seg.result[m:]) / (2 * hj)
    return out


def local_effects(mdl, rows: np.ndarray, columns, *, gradient=None, fd_step=1e-3,
                  chunk_size=None, n_jobs=1, progress=None):
    """Derivatives of the explained output at ``rows`` for ``columns``, shape ``(m, c)``.

    Parameters
    ----------
    mdl : Model
    rows : ndarray of shape (m, d)
        Encoded data rows.
    columns : list of int
        Features whose derivatives are returned, in this order.
    gradient : None, str or callable
        See :func:`modellens.dale`.

    Returns
    -------
    effects : ndarray of shape (m, c)
        NaN or inf where the model's derivative is not finite (for example
        at rows with missing values); the caller decides what to leave out.
    backend : str
        The source used (``"torch"``, ``"jax"``, ``"callable"``, ``"finite_differences"``).
    """
    backend = resolve_backend(mdl, gradient)
    if backend == "finite_differences":
        return finite_differences(mdl, rows, columns, step=fd_step, chunk_size=chunk_size,
                                  n_jobs=n_jobs, progress=progress), backend
    full = mdl.gradient(rows, backend=backend, function=gradient if backend == "callable" else None,
                        chunk_size=chunk_size)
    columns = list(columns)
    if columns == list(range(full.shape[1])):
        return full, backend
    return full[:, columns], backend
