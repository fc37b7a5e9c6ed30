"""Matplotlib picture of regional effects: one curve per region on one axes."""

from __future__ import annotations

import numpy as np

from .effects import _axes, _is_boolean, _label

__all__ = ["plot_regions", "GLOBAL_GID"]

#: The ``gid`` of the dashed global curve.
GLOBAL_GID = "global effect"
#: Line styles of the outputs of a multi-output effect, in turn.
_STYLES = ("-", ":", "-.", (0, (5, 1, 1, 1)))


def plot_regions(global_effect, regional, tree, ax=None, *, band=True):
    """Draw each region's curve (its condition in the legend) and the global curve dashed.

    Numeric features get lines (with their confidence bands for ALE / DALE);
    categorical and boolean ones a point per level, offset a little per
    region so that they do not hide each other.  Effects of several outputs
    draw every output of a region in its colour, one line style per output
    (bands left out), and the output's name in the legend.  Accepted splits
    whose evidence disagrees (``Split.flags``) are named in the title.
    """
    ax = _axes(ax)
    levels = global_effect.kind == "categorical" or _is_boolean(global_effect.grid)
    if levels:
        labels = [str(v) for v in np.asarray(global_effect.grid, dtype=object)]
        x = np.arange(len(labels), dtype=float)
    else:
        x = np.asarray(global_effect.grid, dtype=float)
    outputs = getattr(global_effect, "outputs", None)
    names = [None] if outputs is None else list(outputs)
    n = max(len(regional), 1)
    for c, out in enumerate(names):
        style = _STYLES[c % len(_STYLES)]
        for k, (region, effect) in enumerate(regional.items()):
            color = f"C{k % 10}"
            one = effect if out is None else effect.for_output(c)
            name = region if out is None else f"{region}: {out}"
            if levels:
                offset = (k - (n - 1) / 2) * 0.12
                ax.plot(x + offset, one.values, "o", ls=style, color=color, ms=5, lw=1.2,
                        label=name)
            else:
                if out is None and band and one.band is not None and one.band.level is not None:
                    ax.fill_between(x, one.band.lower, one.band.upper, color=color,
                                    alpha=0.15, lw=0)
                ax.plot(x, one.values, color=color, lw=2, ls=style, label=name)
        whole = global_effect if out is None else global_effect.for_output(c)
        ax.plot(x, whole.values, color="k" if out is None else "0.35", lw=1.4, ls="--",
                label="all rows" if out is None else f"all rows: {out}", gid=GLOBAL_GID,
                zorder=5)
    if levels:
        ax.set_xticks(x)
        ax.set_xticklabels(labels)
    ax.set_xlabel(str(global_effect.feature))
    ax.set_ylabel(f"{_label(global_effect)} of {global_effect.output}")
    title = f"Regional {_label(global_effect)}: {global_effect.feature}"
    if tree.is_leaf:
        title += " (no significant split)"
    # a split whose evidence disagrees (held-out gain near zero, low stability) says so
    # where the curves are read, not only in the table
    cautions = [f"{node.split.describe()}: {', '.join(node.split.flags)}"
                for node in tree.nodes() if node.split is not None and node.split.flags]
    if cautions:
        title += "\ncaution: " + "; ".join(cautions)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="best", frameon=False)
    return ax
