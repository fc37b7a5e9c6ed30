"""Matplotlib pictures of feature effects."""

from __future__ import annotations

import math

import numpy as np

from .._validation import InvalidParameterError
from ._common import axes_grid, literal_text, subplots

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
        _, ax = subplots(figsize=(5, 3.6), layout="constrained")
    return ax


@literal_text
def plot_effect(effect, ax=None, *, max_ice=100, rug=True, band=True, random_state=0,
                total=False, support=True, output=None):
    """Draw one :class:`~modellens.effects.result.Effect`; returns the Axes.

    Numeric features: the curve with its ICE lines (at most ``max_ice`` of
    them, a random thinning when there are more), a band of +/- one std or
    the confidence band where the method gives one, and a rug of the data.
    Categorical and boolean features: points per level with ICE as parallel
    coordinates.  Pairs: a heatmap, with four thin unlabelled contour lines
    when both axes are numeric (flat cells when one is categorical or
    boolean), cells without data marked by a light dot.  A second-order ALE
    draws, with ``total=True``, the total effect (both main effects plus the
    interaction) instead of the pure interaction; with ``support`` (default)
    thin cells (fewer than :data:`THIN_CELL` rows) get a light cross and, on grids
    of at most :data:`ANNOTATE_CELLS` cells a side, each cell shows its rows
    and the standard error of its mean local effect.

    An effect of several outputs draws one curve per output (with its band,
    without ICE lines) and a legend naming them; ``output=`` (a class label,
    an output name or a position) draws one output as above.  A 2-D effect of
    several outputs needs ``output=``.
    """
    ax = _axes(ax)
    if _draw(effect, ax, max_ice=max_ice, rug=rug, band=band, random_state=random_state,
             total=total, support=support, output=output):
        ax.legend(fontsize=7, loc="best", frameon=False)
    return ax


def _label(effect) -> str:
    """How axis labels and titles name the effect: "PD", "centered PD", "ALE", ..."""
    label = _TITLES.get(effect.method, effect.method)
    if effect.extra.get("total"):
        label = "total " + label
    return "centered " + label if effect.centered else label


def _draw(effect, ax, *, max_ice=100, rug=True, band=True, random_state=0, total=False,
          support=True, output=None) -> bool:
    """Draw ``effect`` on ``ax`` without a legend; True when the panel wants one."""
    wants_legend = False
    if getattr(effect, "outputs", None) is not None:
        if output is not None:
            effect = effect.for_output(output)
        elif effect.is_2d:
            raise InvalidParameterError(
                f"the effect of {effect.feature!r} has several outputs {effect.outputs}; a "
                "heatmap shows one: pass output= (a class label, an output name or a position).")
        else:
            return _plot_outputs(effect, ax, rug, band)
    if total and effect.is_2d:
        effect = total_effect(effect)
    if effect.is_2d:
        wants_legend = _plot_2d(effect, ax, support=support)
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
    if rug:
        _draw_rug(ax, effect.feature_values)
    return shown is not None  # a legend names the band


def _draw_rug(ax, values):
    """Ticks at the data's values on the x axis (101 quantiles of more than 500)."""
    if values is None:
        return
    x = np.asarray(values, dtype=float)
    if x.size > 500:
        x = np.quantile(x, np.linspace(0, 1, 101))
    ax.plot(x, np.zeros_like(x), "|", color="k", ms=8, alpha=0.5,
            transform=ax.get_xaxis_transform(), zorder=4)


def _plot_outputs(effect, ax, rug, band) -> bool:
    """One curve (or one set of points per level) for each output, named in a legend."""
    categorical = effect.kind == "categorical" or _is_boolean(effect.grid)
    k = len(effect.outputs)
    for c, name in enumerate(effect.outputs):
        one = effect.for_output(c)
        color = f"C{c % 10}"
        shown = one.band if band else None
        if categorical:
            pos = np.arange(len(one.grid)) + (c - (k - 1) / 2) * 0.6 / max(k, 1)
            values = np.asarray(one.values, dtype=float)
            err = None if shown is None else np.vstack([values - shown.lower,
                                                        shown.upper - values])
            ax.errorbar(pos, values, yerr=err, fmt="o", color=color, ms=5, capsize=2,
                        label=name)
            continue
        grid = np.asarray(one.grid, dtype=float)
        if shown is not None:
            ax.fill_between(grid, shown.lower, shown.upper, color=color, alpha=0.15, lw=0)
        ax.plot(grid, one.values, color=color, lw=2, marker="o" if grid.size <= 12 else None,
                ms=3, label=name)
    if categorical:
        labels = [str(v) for v in np.asarray(effect.grid, dtype=object)]
        ax.set_xticks(np.arange(len(labels)))
        ax.set_xticklabels(labels)
        ax.axhline(0, color="0.3", lw=0.6)
    elif rug:
        _draw_rug(ax, effect.feature_values)
    label = _label(effect)
    ax.set_xlabel(str(effect.feature))
    ax.set_ylabel(f"{label} of each output")
    ax.set_title(f"{label}: {effect.feature}", fontsize=10)
    return True


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


def total_effect(effect):
    """A second-order ALE as its total effect: the two main effects plus the interaction.

    A 2-D partial dependence already is a total effect and comes back as it is.
    """
    import dataclasses

    if effect.method == "pdp" or effect.extra.get("total"):
        return effect
    mains = effect.extra.get("main_effects")
    if mains is None:
        raise InvalidParameterError(
            f"total=True needs the main effects of the pair, which this {effect.method} effect "
            "does not hold; compute it with ml.ale(model, X, [(a, b)]) of this version.")
    main_a, main_b = (np.asarray(m, dtype=float) for m in mains)
    values = np.asarray(effect.values, dtype=float) + main_a[:, None] + main_b[None, :]
    return dataclasses.replace(effect, values=values, extra={**effect.extra, "total": True})


#: Cells of a second-order ALE with fewer rows than this are thin (marked; no standard error).
THIN_CELL = 5
#: Grids with at most this many cells along each axis get each cell's rows and standard error.
ANNOTATE_CELLS = 8
#: The ``gid`` of the crosses on thin cells.
THIN_GID = "thin cell"


def _plot_2d(effect, ax, support=True):
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
    marked = support and _mark_support(ax, x, y, effect)
    if not numeric[0]:
        ax.set_xticks(x)
        ax.set_xticklabels([str(v) for v in g1])
    if not numeric[1]:
        ax.set_yticks(y)
        ax.set_yticklabels([str(v) for v in g2])
    ax.set_xlabel(str(effect.feature[0]))
    ax.set_ylabel(str(effect.feature[1]))
    ax.figure.colorbar(mesh, ax=ax, label=f"{_label(effect)} of {effect.output}")
    return bool(marked)


def _mark_support(ax, x, y, effect) -> bool:
    """Mark thin cells of a binned 2-D ALE; on small grids write rows and standard error.

    Thin cells (some rows, fewer than :data:`THIN_CELL`) get a small light
    cross in their middle (one scatter, like the dots of empty cells: a
    20-bin grid stays readable).  Returns True when something that a legend
    names was drawn.
    """
    bins = effect.bins
    kinds = effect.kind if isinstance(effect.kind, tuple) else ("numeric", "numeric")
    if bins is None or effect.method != "ale" or any(k != "numeric" for k in kinds) \
            or any(_is_boolean(g) for g in effect.grid):
        return False
    counts = np.asarray(bins.counts)
    if counts.shape != (len(x) - 1, len(y) - 1):
        return False  # level axes: cells are steps between levels; support not drawn
    cx, cy = (x[:-1] + x[1:]) / 2, (y[:-1] + y[1:]) / 2
    thin = (counts > 0) & (counts < THIN_CELL)
    i, j = np.nonzero(thin)
    if i.size:
        ax.scatter(cx[i], cy[j], s=12, marker="x", color="white", linewidths=0.8, alpha=0.8,
                   zorder=4, gid=THIN_GID, label=f"thin cell (< {THIN_CELL} rows)")
    if counts.shape[0] <= ANNOTATE_CELLS and counts.shape[1] <= ANNOTATE_CELLS:
        std = np.asarray(bins.std, dtype=float)
        for a in range(counts.shape[0]):
            for b in range(counts.shape[1]):
                n = int(counts[a, b])
                if n == 0:
                    continue  # an empty cell has its dot
                text = f"n={n}"
                if n >= THIN_CELL:
                    # the standard error of the cell's mean four-corner difference
                    text += f"\nse={std[a, b] / np.sqrt(n - 1):.2g}"
                ax.text(cx[a], cy[b], text, ha="center", va="center", fontsize=6,
                        color="white", gid="cell support", zorder=5)
    return bool(i.size)


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


@literal_text
def plot_effects(effects, *, ncols=3, axes=None, figsize=None, sharey=False, ax=None,
                 **kwargs):
    """One panel per effect in a grid; returns the ndarray of Axes.

    The Axes come in the grid's shape (``nrows, ncols``; the shape of
    ``axes`` when given), panels past the last effect hidden; their figure
    is ``axes.flat[0].figure``.  A Figure is not returned, so that Jupyter
    shows the grid once (the inline backend draws it).  The legend (bands and curves) is drawn once, in the first panel that has
    one, with the entries of all panels.  ``sharey=True`` shares the y axis
    across the 1-D panels (heatmaps of pairs keep their own axes).  Other
    keywords go to :func:`plot_effect`.
    """
    items = list(effects.values())
    if ax is not None:
        # ``ax=`` is every other plot's name for where to draw: one Axes serves one effect
        if axes is not None:
            raise InvalidParameterError("give axes= (one Axes per effect) or ax=, not both.")
        axes = np.atleast_1d(np.asarray(ax, dtype=object))
    if axes is None:
        ncols = max(1, min(ncols, len(items)))
        nrows = math.ceil(len(items) / ncols)
        _, axes = subplots(nrows, ncols, figsize=figsize or (4.2 * ncols, 3.3 * nrows),
                           squeeze=False, layout="constrained")
    axes = np.asarray(axes, dtype=object)
    flat = np.ravel(axes)
    if len(flat) < len(items):
        raise InvalidParameterError(
            f"{len(items)} effects need {len(items)} axes, got {len(flat)}: pass axes= with "
            f"one Axes per effect (e.g. plt.subplots(1, {len(items)})[1]), or draw one effect "
            "with effects[feature].plot(ax=ax).")
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
