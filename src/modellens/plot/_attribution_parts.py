"""The helpers of the attribution plots: labels, levels, swarm offsets, interaction partners."""

from __future__ import annotations

import numpy as np
from matplotlib.artist import Artist

__all__ = ["interaction_partner"]


def _method_label(a) -> str:
    if a.method.startswith("owen"):  # players="hierarchy"
        return "Owen value"
    return "SHAP value" if a.method.startswith("shapley") else "attribution"


def _is_boolean(a, j) -> bool:
    """A numeric column of booleans (codes 0 / 1, shown as False / True)."""
    return bool(getattr(a.columns[j], "is_boolean", False))


def _levels(a, j):
    """Labels of the codes 0, 1, ... of a categorical (or boolean) feature."""
    return [False, True] if _is_boolean(a, j) else a.levels(j)


class _NoOverlap(Artist):
    """Shows ``texts`` in order of priority and hides, each time the Axes is drawn, every
    one whose box (padded by ``pad`` pixels) would overlap a text already shown.

    Deciding at draw time uses the figure's final size and layout; the artist sits just
    below the texts in z-order, so it runs before they are drawn.
    """

    def __init__(self, texts, pad=1.5):
        super().__init__()
        self.texts = list(texts)
        self.pad = pad
        self.set_in_layout(False)
        self.set_zorder(min(t.get_zorder() for t in self.texts) - 0.01)

    def draw(self, renderer):
        if not self.get_visible():
            return
        shown: list = []
        for t in self.texts:
            t.set_visible(True)
            box = t.get_window_extent(renderer).padded(self.pad)
            overlaps = any(box.overlaps(other) for other in shown)
            t.set_visible(not overlaps)
            if not overlaps:
                shown.append(box)
        self.stale = False


def _unit_scale(x):
    """Feature values to [0, 1] between their 5 % and 95 % quantiles (NaN stays NaN)."""
    x = np.asarray(x, dtype=float)
    ok = ~np.isnan(x)
    if not ok.any():
        return x
    lo, hi = np.quantile(x[ok], [0.05, 0.95])
    if hi <= lo:
        lo, hi = x[ok].min(), x[ok].max()
    if hi <= lo:
        return np.where(ok, 0.5, np.nan)
    return np.clip((x - lo) / (hi - lo), 0, 1)


def _swarm_offsets(values, rng, width=0.4, n_bins=80):
    """Vertical offsets that spread dots with close values (a beeswarm by bins)."""
    n = len(values)
    if n == 0:
        return np.zeros(0)
    lo, hi = np.min(values), np.max(values)
    bins = np.zeros(n, dtype=np.intp) if hi <= lo else \
        np.minimum(((values - lo) / (hi - lo) * n_bins).astype(np.intp), n_bins - 1)
    order = np.lexsort((rng.random(n), bins))
    sorted_bins = bins[order]
    starts = np.searchsorted(sorted_bins, sorted_bins, side="left")
    rank = np.arange(n) - starts                      # position inside the bin
    level = (rank + 1) // 2 * np.where(rank % 2 == 1, 1, -1)  # 0, +1, -1, +2, -2, ...
    crowd = np.bincount(bins, minlength=n_bins).max()
    out = np.empty(n)
    out[order] = level * (width / max(1, crowd // 2 + 1))
    return out


def interaction_partner(attributions, feature):
    """The feature whose values best explain the spread of ``feature``'s attributions.

    The rows are sorted by the feature's value and cut into (up to ten)
    consecutive groups; in each group, where the feature itself barely moves,
    a dependence of its attribution on another feature ``k`` can only be an
    interaction.  The score of ``k`` is the size-weighted mean of
    ``|corr(phi_feature, x_k)|`` over the groups; the best one is returned
    (None when there is no other feature).  When the attributions carry SHAP
    interaction values (``interactions``, from ``ml.shapley(...,
    interactions=True)``), the partner is instead the feature with the largest
    mean ``|interaction|`` with ``feature`` over the rows.
    """
    return _partner_of(attributions, attributions.index_of(feature))


def _partner_of(a, j):
    """:func:`interaction_partner` of the feature at position ``j``."""
    n, d = a.values.shape
    if d < 2:
        return None
    if a.interactions is not None:
        strength = np.abs(a.interactions[:, j, :]).mean(axis=0)
        strength[j] = -np.inf
        return int(np.argmax(strength))
    numeric = a.numeric_data()
    phi = a.values[:, j]
    order = np.argsort(numeric[:, j], kind="stable")
    n_groups = int(np.clip(n // 10, 1, 10))
    scores = np.zeros(d)
    for rows in np.array_split(order, n_groups):
        if rows.size < 3:
            continue
        p = phi[rows] - phi[rows].mean()
        for k in range(d):
            if k == j:
                continue
            xk = numeric[rows, k]
            ok = ~np.isnan(xk)
            if ok.sum() < 3:
                continue
            xc = xk[ok] - xk[ok].mean()
            pc = p[ok] - p[ok].mean()
            denom = np.sqrt((xc @ xc) * (pc @ pc))
            if denom > 0:
                scores[k] += rows.size * abs(xc @ pc) / denom
    scores[j] = -np.inf
    return int(np.argmax(scores))
