"""Pictures of what changed: intervals per feature, a difference waterfall, before / after."""

from __future__ import annotations

import numpy as np

from ._common import literal_text, subplots

__all__ = ["plot_intervals", "plot_paired_beeswarm", "plot_before_after"]


def _axes(ax, rows):
    if ax is None:
        _, ax = subplots(figsize=(7, 0.35 * rows + 1.5))
    return ax


@literal_text
def plot_intervals(names, values, low, high, *, ax=None, max_features: int = 20,
                   xlabel: str = ""):
    """Horizontal bars of ``values`` with ``[low, high]`` error bars, largest |value| on top."""
    values = np.asarray(values, dtype=float)
    ax = _axes(ax, min(len(values), max_features))
    order = np.argsort(np.abs(values), kind="stable")[::-1][:max_features][::-1]
    y = np.arange(len(order))
    ax.barh(y, values[order], color=np.where(values[order] >= 0, "#d6604d", "#4393c3"))
    err = np.vstack([values[order] - np.asarray(low)[order],
                     np.asarray(high)[order] - values[order]])
    ax.errorbar(values[order], y, xerr=np.clip(err, 0, None), fmt="none", ecolor="black",
                capsize=3)
    ax.set_yticks(y)
    ax.set_yticklabels([str(names[i]) for i in order])
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_xlabel(xlabel)
    return ax


@literal_text
def plot_paired_beeswarm(before, after, *, ax=None, max_features: int = 12):
    """Two explanations of the same rows, before and after (say ``ml.shapley(old, X)`` and
    ``ml.shapley(new, X)``): per feature the rows' values before (blue, below) and after
    (red, above), the features whose rows moved most on top.

    ``before`` and ``after`` are single-output :class:`~modellens.Attributions` of the
    same rows and features.
    """
    names = list(before.feature_names)
    if list(after.feature_names) != names or np.shape(before.values) != np.shape(after.values) \
            or np.ndim(before.values) != 2:
        from .._validation import InvalidParameterError

        raise InvalidParameterError(
            "before and after must explain the same rows and features with one output each "
            f"(got shapes {np.shape(before.values)} and {np.shape(after.values)}).")
    ax = _axes(ax, min(len(names), max_features))
    before, after = np.asarray(before.values, dtype=float), np.asarray(after.values, dtype=float)
    score = np.abs(after - before).mean(axis=0)
    order = np.argsort(score, kind="stable")[::-1][:max_features][::-1]
    rng = np.random.default_rng(0)  # a fixed jitter: the same picture every time
    for row, j in enumerate(order):
        jitter = rng.uniform(-0.12, 0.12, len(before))
        ax.scatter(before[:, j], row - 0.18 + jitter, s=6, color="#4393c3",
                   label="before" if row == 0 else None)
        ax.scatter(after[:, j], row + 0.18 + jitter, s=6, color="#d6604d",
                   label="after" if row == 0 else None)
    ax.set_yticks(np.arange(len(order)))
    ax.set_yticklabels([str(names[j]) for j in order])
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_xlabel("attribution")
    ax.legend(loc="lower right")
    return ax


@literal_text
def plot_before_after(grid, before, after, *, ax=None, categorical: bool = False,
                      xlabel: str = "", ylabel: str = ""):
    """One curve on two data sets: ``before`` (reference rows, blue) and ``after`` (current
    rows, red) at the points ``grid`` (levels of a categorical feature, drawn as points)."""
    if ax is None:
        _, ax = subplots(figsize=(6, 3.5))
    labels = [str(g) for g in grid]
    x = np.arange(len(labels)) if categorical else np.asarray(grid, dtype=float)
    style = dict(marker="o") if categorical else {}
    ax.plot(x, np.asarray(before, dtype=float), color="#4393c3", lw=2, label="reference rows",
            **style)
    ax.plot(x, np.asarray(after, dtype=float), color="#d6604d", lw=2, label="current rows",
            **style)
    if categorical:
        ax.set_xticks(x)
        ax.set_xticklabels(labels, rotation=30, ha="right")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(loc="best")
    return ax
