"""Shared pieces of the plots: colours, a new Axes, value formats, row checks, literal text."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from .._validation import InvalidParameterError

_POS = "#d6404e"   # pushes the prediction up
_NEG = "#2f7fc1"   # pushes it down
_CMAP = "coolwarm"


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


def _signed(x) -> str:
    return f"{x:+.3g}"


def _row(a, i) -> int:
    """Row ``i`` of the attributions ``a`` as a position (negative ones from the end)."""
    n = len(a)
    if not isinstance(i, (int, np.integer)) or isinstance(i, bool) or not -n <= i < n:
        raise InvalidParameterError(f"row must be an integer in [0, {n}), got {i!r}.")
    return int(i) % n


_F = TypeVar("_F", bound=Callable[..., Any])


def literal_text(plot: _F) -> _F:
    """Draw every text of the Axes ``plot`` returns as given, never as mathtext.

    Names and levels come from the data: a ``$`` in them would start
    matplotlib's mathtext (``"$\\foo$"`` fails to draw, ``"b$_x$"`` shows a
    subscript).  Every text of the returned Axes (title, labels, tick labels,
    legend, annotations), of their colour bars and of the figure's own titles
    and legends is set to plain text once the plot is drawn.
    """
    @functools.wraps(plot)
    def drawn(*args, **kwargs):
        out = plot(*args, **kwargs)
        many = isinstance(out, (np.ndarray, list, tuple))
        drawn_on = [ax for ax in (np.asarray(out, dtype=object).ravel() if many else [out])
                    if hasattr(ax, "xaxis") and hasattr(ax, "findobj")]
        for fig in {id(ax.figure): ax.figure for ax in drawn_on}.values():
            # colour bars (a partner feature's name) and the figure's own titles and legends
            drawn_on += [ax for ax in fig.axes if hasattr(ax, "_colorbar")]
            for text in fig.texts + fig.legends + [getattr(fig, "_suptitle", None)]:
                if text is not None:
                    for t in text.findobj(lambda a: hasattr(a, "set_parse_math")):
                        t.set_parse_math(False)
        for ax in drawn_on:
            _plain(ax)
        return out
    return drawn  # type: ignore[return-value]


def _plain(ax) -> None:
    from matplotlib.text import Text

    for axis in (ax.xaxis, ax.yaxis):
        # the ticks that will carry the labels exist from now on (else drawing makes them)
        axis.get_major_ticks(len(axis.get_majorticklocs()))
    for text in ax.findobj(Text):
        text.set_parse_math(False)
