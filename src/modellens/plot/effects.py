"""Matplotlib pictures of feature effects."""

from __future__ import annotations

import math

import numpy as np

from .._validation import InvalidParameterError
from ._common import axes_grid

__all__ = ["plot_effect", "plot_effects"]

_TITLES = {"pdp": "PD", "mplot": "M-plot", "ale": "ALE", "dale": "DALE"}
_COLOR = "C0"
#: Contour lines over a numeric 2-D effect (thin, unlabelled, evenly spaced inside the range).
_CONTOUR_LEVELS = 4
#: The ``gid`` of the dots that mark cells without data, and their size (points^2).
EMPTY_CELL = "empty cell"
_EMPTY_SIZE = 4.0


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(5, 3.6), layout="constrained")
    return ax


def plot_effect(effect, ax=None, *, max_ice=100, rug=True, band=True, random_state=0):
    """Draw one :class:`~modellens.effects.result.Effect`; returns the Axes.

    Numeric features: the curve with its ICE lines (at most ``max_ice`` of
    them, a random thinning when there are more), a band of +/- one std or
    the confidence band where the method gives one, and a rug of the data.
    Categorical and boolean features: points per level with ICE as parallel
    coordinates.  Pairs: a heatmap, with four thin unlabelled contour lines
    when both axes are numeric (flat cells when one is categorical or
    boolean), cells without data marked by a light dot.
    """
    ax = _axes(ax)
    if _draw(effect, ax, max_ice=max_ice, rug=rug, band=band, random_state=random_state):
        ax.legend(fontsize=7, loc="best", frameon=False)
    return ax


def _label(effect) -> str:
    """How axis labels and titles name the effect: "PD", "centered PD", "ALE", ..."""
    label = _TITLES.get(effect.method, effect.method)
    return "centered " + label if effect.centered else label


def _draw(effect, ax, *, max_ice=100, rug=True, band=True, random_state=0) -> bool:
    """Draw ``effect`` on ``ax`` without a legend; True when the panel wants one."""
    wants_legend = False
    if effect.is_2d:
        _plot_2d(effect, ax)
    elif effect.kind == "categorical" or _is_boolean(effect.grid):
        _plot_categorical(effect, ax, max_ice, random_state)
    else:
        wants_legend = _plot_numeric(effect, ax, max_ice, rug, band, random_state)
    label = _label(effect)
    if not effect.is_2d:
        ax.set_xlabel(str(effect.feature))
        ax.set_ylabel(f"{label} of {effect.output}")
    ax.set_title(f"{label}: {effect.feature if not effect.is_2d else ' x '.join(effect.feature)}",
                 fontsize=10)
    return wants_legend


def _is_boolean(grid) -> bool:
    """True for grid values that are booleans (numpy bool, or Python / numpy bools in objects)."""
    arr = np.asarray(grid)
    if arr.dtype == bool:
        return True
    return arr.dtype == object and arr.size > 0 \
        and all(isinstance(v, (bool, np.bool_)) for v in arr.ravel())


def _thin(curves, max_ice, random_state):
    if curves is None or max_ice <= 0:
        return None
    if curves.shape[0] > max_ice:
        rng = np.random.default_rng(random_state)
        curves = curves[np.sort(rng.choice(curves.shape[0], max_ice, replace=False))]
    return curves


def _draw_ice(ax, x, ice, max_ice, random_state):
    """ICE curves, thinned to ``max_ice``, fainter the more there are."""
    # one LineCollection instead of a Line2D per curve: drawing stays fast with many curves
    from matplotlib.collections import LineCollection

    curves = _thin(ice, max_ice, random_state)
    if curves is None:
        return
    alpha = float(np.clip(8.0 / curves.shape[0], 0.05, 0.5))
    segments = np.stack([np.broadcast_to(x, curves.shape), curves], axis=-1)
    # an (n, points, 2) array is a sequence of lines; matplotlib's stubs want a Sequence
    ax.add_collection(LineCollection(segments, colors="0.55", linewidths=0.6,  # type: ignore[arg-type]
                                     alpha=alpha, zorder=1, label="ICE"))
    ax.autoscale_view()


def _plot_numeric(effect, ax, max_ice, rug, band, random_state):
    grid = np.asarray(effect.grid, dtype=float)
    _draw_ice(ax, grid, effect.ice, max_ice, random_state)
    shown = effect.band if band else None
    if shown is not None:
        # a confidence band is drawn stronger than a spread of predictions
        ax.fill_between(grid, shown.lower, shown.upper, color=_COLOR,
                        alpha=0.2 if shown.level is not None else 0.15, lw=0, label=shown.label)
    ax.plot(grid, effect.values, color=_COLOR, lw=2.2, zorder=3,
            marker="o" if grid.size <= 12 else None, ms=4, label=effect.method)
    if rug and effect.feature_values is not None:
        x = np.asarray(effect.feature_values, dtype=float)
        if x.size > 500:
            x = np.quantile(x, np.linspace(0, 1, 101))
        ax.plot(x, np.zeros_like(x), "|", color="k", ms=8, alpha=0.5,
                transform=ax.get_xaxis_transform(), zorder=4)
    return shown is not None  # a legend names the band


def _plot_categorical(effect, ax, max_ice, random_state):
    labels = [str(v) for v in np.asarray(effect.grid, dtype=object)]
    pos = np.arange(len(labels))
    _draw_ice(ax, pos, effect.ice, max_ice, random_state)
    values = np.asarray(effect.values, dtype=float)
    ax.bar(pos, values, width=0.5, color=_COLOR, alpha=0.35, zorder=2)
    shown = effect.band
    err = None
    if shown is not None:
        err = np.vstack([values - shown.lower, shown.upper - values])
    ax.errorbar(pos, values, yerr=err, fmt="o", color=_COLOR, ms=6, zorder=3, capsize=3,
                label=shown.label if shown is not None else None)
    ax.set_xticks(pos)
    ax.set_xticklabels(labels, rotation=30 if max(map(len, labels), default=0) > 6 else 0,
                       ha="right" if max(map(len, labels), default=0) > 6 else "center")
    ax.axhline(0, color="0.3", lw=0.6)


def _plot_2d(effect, ax):
    g1, g2 = effect.grid
    values = np.asarray(effect.values, dtype=float)
    kinds = effect.kind if isinstance(effect.kind, tuple) else ("numeric", "numeric")
    # categorical and boolean axes are levels at positions 0, 1, ...: no order between them
    numeric = [k == "numeric" and not _is_boolean(g) for k, g in zip(kinds, (g1, g2))]
    x = np.asarray(g1, dtype=float) if numeric[0] else np.arange(len(g1))
    y = np.asarray(g2, dtype=float) if numeric[1] else np.arange(len(g2))
    # interpolating (gouraud shading, contour lines) only makes sense between numeric values
    smooth = all(numeric) and values.shape[0] > 1 and values.shape[1] > 1
    # values estimated from bins live on the corners of data cells: interpolate between them
    shading = "gouraud" if effect.bins is not None and smooth else "nearest"
    mesh = ax.pcolormesh(x, y, values.T, shading=shading, cmap="viridis")
    if smooth and np.ptp(values) > 0:
        # a few thin lines guide the eye along the surface; the colour bar gives the
        # values (labels on dense contours of a 20-bin grid hide the picture)
        levels = np.linspace(np.nanmin(values), np.nanmax(values), _CONTOUR_LEVELS + 2)[1:-1]
        ax.contour(x, y, values.T, colors="white", linewidths=0.6, alpha=0.7,
                   linestyles="solid", levels=levels)
    empty = effect.empty_cells
    if empty is not None and np.any(empty):
        _mark_empty_cells(ax, x, y, np.asarray(empty, dtype=bool))
    if not numeric[0]:
        ax.set_xticks(x)
        ax.set_xticklabels([str(v) for v in g1])
    if not numeric[1]:
        ax.set_yticks(y)
        ax.set_yticklabels([str(v) for v in g2])
    ax.set_xlabel(str(effect.feature[0]))
    ax.set_ylabel(str(effect.feature[1]))
    ax.figure.colorbar(mesh, ax=ax, label=f"{_label(effect)} of {effect.output}")


def _mark_empty_cells(ax, x, y, empty):
    """A light dot in the middle of each cell without data (one scatter for all).

    A mask of shape ``(len(x) - 1, len(y) - 1)`` flags the cells between grid
    points (ALE); one of shape ``(len(x), len(y))`` the cells around them.
    The cells' colours stay readable (their values are extrapolated from the
    neighbouring cells); the dots only say that no row fell there.
    """
    def bounds(points, n_cells):
        if n_cells == len(points) - 1:
            return points
        mid = (points[:-1] + points[1:]) / 2
        first = points[0] - (mid[0] - points[0]) if mid.size else points[0] - 0.5
        last = points[-1] + (points[-1] - mid[-1]) if mid.size else points[-1] + 0.5
        return np.concatenate([[first], mid, [last]])

    bx = bounds(np.asarray(x, float), empty.shape[0])
    by = bounds(np.asarray(y, float), empty.shape[1])
    i, j = np.nonzero(empty)
    ax.scatter((bx[i] + bx[i + 1]) / 2, (by[j] + by[j + 1]) / 2, s=_EMPTY_SIZE, marker="o",
               facecolor="white", edgecolor="none", alpha=0.75, zorder=4, gid=EMPTY_CELL,
               label="empty cell (no data)")


def plot_effects(effects, *, ncols=3, axes=None, figsize=None, sharey=False, **kwargs):
    """One panel per effect in a grid; returns the ndarray of Axes.

    The Axes come in the grid's shape (``nrows, ncols``; the shape of
    ``axes`` when given), panels past the last effect hidden; their figure
    is ``axes.flat[0].figure``.  A Figure is not returned, so that Jupyter
    shows the grid once (the inline backend draws it).  The legend (bands and curves) is drawn once, in the first panel that has
    one, with the entries of all panels.  ``sharey=True`` shares the y axis
    across the 1-D panels (heatmaps of pairs keep their own axes).  Other
    keywords go to :func:`plot_effect`.
    """
    import matplotlib.pyplot as plt

    items = list(effects.values())
    if axes is None:
        ncols = max(1, min(ncols, len(items)))
        nrows = math.ceil(len(items) / ncols)
        _, axes = plt.subplots(nrows, ncols, figsize=figsize or (4.2 * ncols, 3.3 * nrows),
                               squeeze=False, layout="constrained")
    axes = np.asarray(axes, dtype=object)
    flat = np.ravel(axes)
    if len(flat) < len(items):
        raise InvalidParameterError(
            f"{len(items)} effects need {len(items)} axes, got {len(flat)}.")
    if sharey:
        _share_y([ax for effect, ax in zip(items, flat) if not effect.is_2d])
    with_legend = [ax for effect, ax in zip(items, flat) if _draw(effect, ax, **kwargs)]
    if with_legend:
        entries: dict[str, object] = {}
        for ax in with_legend:
            for handle, label in zip(*ax.get_legend_handles_labels()):
                entries.setdefault(label, handle)
        with_legend[0].legend(list(entries.values()), list(entries), fontsize=7, loc="best",
                              frameon=False)
    for ax in flat[len(items):]:
        ax.set_visible(False)
    return axes_grid(axes)  # a one-line repr under a notebook cell


def _share_y(axes):
    """Join the y axes of ``axes`` (before drawing, so that autoscaling sees every panel)."""
    if len(axes) < 2:
        return
    first = axes[0]
    for ax in axes[1:]:
        if first.get_shared_y_axes().joined(first, ax):
            continue
        if len(ax.get_shared_y_axes().get_siblings(ax)) > 1:
            raise InvalidParameterError("sharey=True needs axes whose y axes are not already "
                                        "shared with other axes.")
        ax.sharey(first)
