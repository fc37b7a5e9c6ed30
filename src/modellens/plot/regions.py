"""Matplotlib picture of regional effects: one curve per region on one axes."""

from __future__ import annotations

import numpy as np

from .effects import _axes, _is_boolean, _label

__all__ = ["plot_regions", "GLOBAL_GID"]

#: The ``gid`` of the dashed global curve.
GLOBAL_GID = "global effect"


def plot_regions(global_effect, regional, tree, ax=None, *, band=True):
    """Draw each region's curve (its condition in the legend) and the global curve dashed.

    Numeric features get lines (with their confidence bands for ALE / DALE);
    categorical and boolean ones a point per level, offset a little per
    region so that they do not hide each other.
    """
    ax = _axes(ax)
    levels = global_effect.kind == "categorical" or _is_boolean(global_effect.grid)
    if levels:
        labels = [str(v) for v in np.asarray(global_effect.grid, dtype=object)]
        x = np.arange(len(labels), dtype=float)
    else:
        x = np.asarray(global_effect.grid, dtype=float)
    n = max(len(regional), 1)
    for k, (region, effect) in enumerate(regional.items()):
        color = f"C{k % 10}"
        rows = effect.counts.sum() if effect.method in ("ale",) and effect.counts is not None \
            and not levels else None
        name = region if rows is None else f"{region}"
        if levels:
            offset = (k - (n - 1) / 2) * 0.12
            ax.plot(x + offset, effect.values, "o-", color=color, ms=5, lw=1.2, label=name)
        else:
            if band and effect.band is not None and effect.band.level is not None:
                ax.fill_between(x, effect.band.lower, effect.band.upper, color=color,
                                alpha=0.15, lw=0)
            ax.plot(x, effect.values, color=color, lw=2, label=name)
    ax.plot(x, global_effect.values, color="k", lw=1.4, ls="--", label="all rows",
            gid=GLOBAL_GID, zorder=5)
    if levels:
        ax.set_xticks(x)
        ax.set_xticklabels(labels)
    ax.set_xlabel(str(global_effect.feature))
    ax.set_ylabel(f"{_label(global_effect)} of {global_effect.output}")
    title = f"Regional {_label(global_effect)}: {global_effect.feature}"
    if tree.is_leaf:
        title += " (no significant split)"
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="best", frameon=False)
    return ax
