"""JAX primitives of the model seam: recognise and differentiate JAX functions."""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["import_jax", "is_jax_function", "jax_gradient"]


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


def is_jax_function(model) -> bool:
    """True for a ``jax.jit``-compiled function, the one JAX callable we can recognise."""
    return "jax" in sys.modules and type(model).__module__.split(".")[0] in ("jax", "jaxlib")


def jax_gradient(fn, rows: np.ndarray, *, output_index=None) -> np.ndarray:
    """``jax.vmap(jax.grad(.))`` of a JAX function at every row, shape ``(m, d)``.

    A list of output columns gives each one's gradient, shape ``(m, d, k)``.
    """
    if isinstance(output_index, (list, tuple)):
        return np.stack([jax_gradient(fn, rows, output_index=c) for c in output_index], axis=-1)
    jax, jnp = import_jax()

    def one_row(x):
        y = jnp.reshape(fn(x[None, :]), (1, -1))
        if output_index is None and y.shape[1] != 1:
            raise ValueError(f"the model returns {y.shape[1]} outputs per row; expected one.")
        return y[0, 0 if output_index is None else output_index]

    grad = jax.vmap(jax.grad(one_row))
    return np.asarray(grad(jnp.asarray(rows)), dtype=np.float64)
