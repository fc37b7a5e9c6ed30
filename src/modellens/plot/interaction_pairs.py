"""Matplotlib picture of the strongest interacting pairs of features (SHAP interaction values)."""

from __future__ import annotations

import numpy as np

from ._common import _NEG, _axes, literal_text

__all__ = ["plot_interaction_pairs"]


@literal_text
def plot_interaction_pairs(pairs, *, max_display=10, ax=None):
    """Horizontal bars of the ``max_display`` strongest pairs' mean |interaction value|.

    Reads an :class:`~modellens.attribution.interaction_pairs.InteractionPairs`.
    Returns the Axes.
    """
    k = min(int(max_display), len(pairs))
    labels = [f"{a} × {b}" for a, b in zip(pairs.feature_1[:k], pairs.feature_2[:k])]
    heights = np.asarray(pairs.mean_abs[:k], dtype=float)
    ax = _axes(ax, (6, 0.4 * max(k, 1) + 1.4))
    y = np.arange(k)[::-1]
    ax.barh(y, heights, color=_NEG, height=0.65)
    for yy, h in zip(y, heights):
        ax.text(h, yy, f" {h:.3g}", va="center", fontsize=8)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlabel(f"mean |SHAP interaction value| ({pairs.output}, {pairs.n_rows} rows)")
    top = float(heights.max()) if k else 0.0
    ax.set_xlim(0, top * 1.25 if top > 0 else 1)
    return ax
