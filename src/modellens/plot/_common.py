"""Shared pieces of the attribution plots: colours, a new Axes, value formats, row checks."""

from __future__ import annotations

import numpy as np

from .._validation import InvalidParameterError

_POS = "#d6404e"   # pushes the prediction up
_NEG = "#2f7fc1"   # pushes it down
_CMAP = "coolwarm"


class AxesGrid(np.ndarray):
    """An ndarray of Axes whose repr is one line.

    A notebook shows the last value of a cell: a plain ndarray of Axes would
    print one ``<Axes: ...>`` line per panel under the picture.  Indexing,
    ``shape`` and ``flat`` are the ndarray's.
    """

    def __repr__(self):
        shape = "x".join(str(n) for n in self.shape)
        return f"<AxesGrid {shape} of matplotlib Axes>"

    __str__ = __repr__


def axes_grid(axes) -> AxesGrid:
    """``axes`` (Axes in an array or a sequence) as an :class:`AxesGrid`."""
    return np.asarray(axes, dtype=object).view(AxesGrid)


def _axes(ax, size):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=size, layout="constrained")
    return ax


def _fmt(x) -> str:
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))  # "True", not "1": bool is an int, and np.bool_ prints its repr
    if isinstance(x, (float, np.floating)):
        return "nan" if np.isnan(x) else f"{x:.4g}"
    return str(x)


def _value(x) -> str:
    """A prediction with 4 significant digits, more where 4 would round it to a whole number.

    A probability of 0.99996 must not read as a certain 1 (nor 2.00004 as 2).
    """
    x = float(x)
    text = f"{x:.4g}"
    digits = 4
    while digits < 12 and np.isfinite(x) and x != round(x) and float(text) == round(float(text)):
        digits += 1
        text = f"{x:.{digits}g}"
    return text


def _signed(x) -> str:
    return f"{x:+.3g}"


def _row(a, i) -> int:
    """Row ``i`` of the attributions ``a`` as a position (negative ones from the end)."""
    n = len(a)
    if not isinstance(i, (int, np.integer)) or isinstance(i, bool) or not -n <= i < n:
        raise InvalidParameterError(f"row must be an integer in [0, {n}), got {i!r}.")
    return int(i) % n
