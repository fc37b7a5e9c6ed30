"""Shared pieces of the plots: colours, a new Axes, value formats, row checks, literal text."""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Callable
from typing import Any, TypeVar

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


#: Whether new figures stay out of pyplot (set by :func:`plain_figures`, per thread and task).
_PLAIN: contextvars.ContextVar[bool] = contextvars.ContextVar("modellens_plain_figures",
                                                              default=False)


@contextlib.contextmanager
def plain_figures():
    """Inside it, the plots make their new figures as ``matplotlib.figure.Figure`` on an Agg
    canvas, outside pyplot's registry of open figures.

    Such a figure is never shown by pyplot, counts toward no "More than 20 figures"
    warning, needs no ``plt.close`` and can be drawn in any thread.  Outside it (a user's
    ``attr.plot.bar()``), new figures are pyplot's, shown as notebooks expect.  The
    setting is per thread (a context variable).
    """
    token = _PLAIN.set(True)
    try:
        yield
    finally:
        _PLAIN.reset(token)


def subplots(nrows: int = 1, ncols: int = 1, *, figsize, plain: bool = False, **kwargs):
    """``(figure, axes)`` like ``plt.subplots``; the figure is pyplot's, or a plain
    ``Figure`` on an Agg canvas with ``plain=True`` or inside :func:`plain_figures`.

    ``layout`` goes to the figure, every other keyword to ``Figure.subplots``.
    """
    if not (plain or _PLAIN.get()):
        import matplotlib.pyplot as plt

        return plt.subplots(nrows, ncols, figsize=figsize, **kwargs)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout=kwargs.pop("layout", None))
    FigureCanvasAgg(fig)
    return fig, fig.subplots(nrows, ncols, **kwargs)


def _axes(ax, size):
    if ax is None:
        _, ax = subplots(figsize=size, layout="constrained")
    return ax


def value_bars(ax, labels, heights, *, xlabel: str, margin: float):
    """Horizontal bars, the first on top, each with its value written at its end.

    ``ax`` is an Axes or None (a new figure sized for the bars); the x axis
    runs from 0 to ``margin`` times the longest bar, room for its value.
    """
    heights = np.asarray(heights, dtype=float)
    k = len(heights)
    ax = _axes(ax, (6, 0.4 * max(k, 1) + 1.4))
    y = np.arange(k)[::-1]
    ax.barh(y, heights, color=_NEG, height=0.65)
    for yy, h in zip(y, heights):
        ax.text(h, yy, f" {h:.3g}", va="center", fontsize=8)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlabel(xlabel)
    top = float(heights.max()) if k else 0.0
    ax.set_xlim(0, top * margin if top > 0 else 1)
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


#: Longest text drawn whole; a longer name or level is cut (a 2 MB level made a figure
#: millions of pixels wide, which matplotlib refuses to save).
MAX_LABEL = 120


def short(text: str, limit: int = MAX_LABEL) -> str:
    """``text`` cut to ``limit`` characters, its end marked with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _plain(ax) -> None:
    from matplotlib.text import Text

    for axis in (ax.xaxis, ax.yaxis):
        # the ticks that will carry the labels exist from now on (else drawing makes them)
        axis.get_major_ticks(len(axis.get_majorticklocs()))
        formatter = axis.get_major_formatter()
        short_formatter = _short_formatter_class()
        if not isinstance(formatter, short_formatter):  # names set as tick labels are cut
            axis.set_major_formatter(short_formatter(formatter))
    for text in ax.findobj(Text):
        text.set_parse_math(False)
        if len(text.get_text()) > MAX_LABEL:
            text.set_text(short(text.get_text()))


@functools.cache
def _short_formatter_class():
    # built on first use: matplotlib is imported when a plot is drawn, not with modellens
    from matplotlib.ticker import Formatter

    class ShortFormatter(Formatter):
        """Another formatter's tick labels, each cut to ``MAX_LABEL`` characters."""

        def __init__(self, inner):
            self.inner = inner

        def set_axis(self, axis):
            super().set_axis(axis)
            self.inner.set_axis(axis)

        def set_locs(self, locs):
            self.inner.set_locs(locs)

        def get_offset(self):
            return self.inner.get_offset()

        def __call__(self, x, pos=None):
            return short(str(self.inner(x, pos)))

        def format_ticks(self, values):
            return [short(str(label)) for label in self.inner.format_ticks(values)]

    return ShortFormatter


def plain_figure(fig) -> None:
    """:func:`literal_text` for a whole figure: every Axes and the figure's own texts."""
    from matplotlib.text import Text

    for ax in fig.axes:
        _plain(ax)
    for text in fig.findobj(Text):
        text.set_parse_math(False)
        if len(text.get_text()) > MAX_LABEL:
            text.set_text(short(text.get_text()))
