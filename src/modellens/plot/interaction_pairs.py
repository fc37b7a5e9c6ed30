"""Matplotlib picture of the strongest interacting pairs of features (SHAP interaction values)."""

from __future__ import annotations

from ._common import literal_text, value_bars

__all__ = ["plot_interaction_pairs"]


@literal_text
def plot_interaction_pairs(pairs, *, max_display=10, ax=None):
    """Horizontal bars of the ``max_display`` strongest pairs' mean |interaction value|.

    Reads an :class:`~modellens.attribution.interaction_pairs.InteractionPairs`.
    Returns the Axes.
    """
    k = min(int(max_display), len(pairs))
    labels = [f"{a} × {b}" for a, b in zip(pairs.feature_1[:k], pairs.feature_2[:k])]
    return value_bars(ax, labels, pairs.mean_abs[:k], margin=1.25,
                      xlabel=f"mean |SHAP interaction value| ({pairs.output}, "
                             f"{pairs.n_rows} rows)")
