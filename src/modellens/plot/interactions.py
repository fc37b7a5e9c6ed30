"""Matplotlib pictures of interaction statistics."""

from __future__ import annotations

import numpy as np

from .._validation import InvalidParameterError
from ._common import axes_grid, literal_text, subplots

__all__ = ["plot_interactions"]


@literal_text
def plot_interactions(result, ax=None, *, max_features=30):
    """Bars of the overall :math:`H^2_j` and a heatmap of the pairwise :math:`H^2_{jk}`.

    ``ax``: None (a new figure with both panels), a pair of Axes (both
    panels), or one Axes (the bars only).  The bars are sorted by size, at
    most ``max_features`` of them, with their jackknife standard errors; the
    heatmap lists the features of the pairs computed, blank where a pair
    was not.  Returns the Axes drawn on (the pair, or the one).
    """
    if ax is None:
        _, ax = subplots(1, 2, figsize=(11, 4.2), width_ratios=(1, 1.2))
    panels = list(ax) if isinstance(ax, (list, tuple, np.ndarray)) else [ax]
    if len(panels) not in (1, 2):
        raise InvalidParameterError(f"ax must be one Axes or a pair of them, got {len(panels)}.")
    _bars(result, panels[0], max_features)
    if len(panels) == 2:
        _heatmap(result, panels[1])
    return axes_grid(panels) if len(panels) == 2 else panels[0]


def _bars(result, ax, max_features):
    order = result.overall.sort_values(ascending=True, na_position="first").index
    order = order[-max_features:]
    values = result.overall[order].to_numpy(float)
    errors = result.overall_std[order].to_numpy(float)
    pos = np.arange(len(order))
    ax.barh(pos, values, xerr=np.where(np.isfinite(errors), errors, 0), color="C0",
            error_kw={"lw": 0.8, "capsize": 2})
    ax.set_yticks(pos, [str(n) for n in order])
    ax.set_xlabel(r"overall $H^2_j$ (share of the variance from interactions)")
    ax.set_title(f"Interaction strength ({result.method}, {result.sample_size} rows)")


def _heatmap(result, ax):
    pairs = result.pairwise
    names = [n for n in result.overall.index
             if n in set(pairs.feature_1) | set(pairs.feature_2)]
    ax.set_title(r"pairwise $H^2_{jk}$")
    if not names:
        ax.text(0.5, 0.5, "no pairs computed", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()
        return
    where = {n: i for i, n in enumerate(names)}
    grid = np.full((len(names), len(names)), np.nan)
    for r in pairs.itertuples():
        a, b = where[r.feature_1], where[r.feature_2]
        grid[a, b] = grid[b, a] = r.h2
    image = ax.imshow(grid, cmap="viridis", vmin=0, vmax=max(1e-12, float(np.nanmax(grid))))
    ax.set_xticks(range(len(names)), names, rotation=90)
    ax.set_yticks(range(len(names)), names)
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
