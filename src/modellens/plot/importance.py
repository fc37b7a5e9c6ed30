"""Matplotlib picture of permutation importances."""

from __future__ import annotations

import numpy as np

from ._common import subplots

__all__ = ["plot_importance"]


def plot_importance(result, ax=None, *, max_features=30):
    """Horizontal box plots of the importances over the repeats, sorted by their mean.

    A zero line marks "no loss of score": a box across it is a feature the
    score does not need.  Returns the Axes.
    """
    mean = result.importances_mean
    order = np.argsort(mean, kind="stable")[-max_features:]
    if ax is None:
        _, ax = subplots(figsize=(6, 0.35 * len(order) + 1.5))
    boxes = [result.importances[j] for j in order]
    labels = [str(result.feature_names[j]) for j in order]
    try:
        ax.boxplot(boxes, orientation="horizontal", tick_labels=labels, widths=0.6)
    except TypeError:  # matplotlib before 3.10
        ax.boxplot(boxes, vert=False, labels=labels, widths=0.6)
    ax.axvline(0.0, color="0.6", lw=0.8, ls="--")
    ax.set_xlabel(f"drop of {result.scoring} when the feature is shuffled")
    ax.set_title(f"Permutation importance ({result.importances.shape[1]} repeats, "
                 f"{result.n_rows} rows; baseline {result.baseline:.4g})")
    return ax
