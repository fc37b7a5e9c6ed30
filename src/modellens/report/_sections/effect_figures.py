"""The PD and ALE panels of one feature, drawn on one vertical span."""

from __future__ import annotations

import numpy as np

from ...plot import subplots
from .._render import figure_from
from .page import fmt, plural


def feature_panels(name, pd_effect, ale_effect, inputs, *, discrete, levels, random_state,
                    other=None, order=None):
    """The PD and the ALE panel of one feature, as two figures on one vertical span.

    Returns the figures and the span.  A numeric panel's span holds its ICE
    curves; a panel of levels (PD points without curves) gets at least the
    span of its rows' predictions at those levels (the 1%-99% range of the
    ICE values), so a negligible effect is not zoomed to look like a real one.
    """
    fig_pd, ax_pd = subplots(figsize=(4.8, 3.3), plain=True)
    fig_ale, ax_ale = subplots(figsize=(4.8, 3.3), plain=True)
    least = 0.0
    several = len(getattr(pd_effect, "outputs", None) or ()) > 1
    if several:
        pd_effect.plot(ax=ax_pd)
    elif levels:
        _draw_many_levels(ax_pd, pd_effect, levels, inputs, other, order=order)
        if pd_effect.ice is not None:
            lo, hi = np.nanquantile(np.asarray(pd_effect.ice, dtype=float), [0.01, 0.99])
            least = float(hi - lo)
    elif discrete:
        _draw_points(ax_pd, pd_effect, ice=True, random_state=random_state)
    else:
        pd_effect.plot(ax=ax_pd, random_state=random_state)
    if ale_effect is None:
        ax_ale.axis("off")
        ax_ale.text(0.5, 0.5, "ALE not available", ha="center", va="center")
    elif len(getattr(ale_effect, "outputs", None) or ()) > 1:
        ale_effect.plot(ax=ax_ale)
    elif discrete:
        _draw_points(ax_ale, ale_effect, ice=False, random_state=random_state)
    else:
        ale_effect.plot(ax=ax_ale)
    span = _share_span(ax_pd, ax_ale, least=least) if ale_effect is not None else \
        _share_span(ax_pd, least=least)
    return [figure_from(fig_pd, f"PD and ICE of {name}"),
            figure_from(fig_ale, f"ALE of {name}")], span


def _share_span(*axes, least: float = 0.0) -> float:
    """Give the axes one vertical span, at least ``least`` (each keeps its own centre)."""
    lims = [ax.get_ylim() for ax in axes]
    span = max([hi - lo for lo, hi in lims] + [least])
    for ax, (lo, hi) in zip(axes, lims):
        mid = (lo + hi) / 2
        ax.set_ylim(mid - span / 2, mid + span / 2)
    return float(span)


def _draw_points(ax, effect, *, ice, random_state):
    """A few-valued numeric feature: the effect at its values, as points joined by steps."""
    x = np.asarray(effect.grid, dtype=float)
    v = np.asarray(effect.values, dtype=float)
    if ice and effect.ice is not None:
        rows = np.asarray(effect.ice, dtype=float)
        pick = np.random.default_rng(random_state).permutation(rows.shape[0])[:100]
        for r in rows[pick]:
            ax.plot(x, r, color="grey", alpha=0.15, lw=0.6, drawstyle="steps-mid")
    ax.plot(x, v, drawstyle="steps-mid", color="C0", lw=1)
    ax.plot(x, v, "o", color="C0", label=effect.method.upper())
    if effect.std is not None and not ice and np.shape(effect.std) == v.shape:
        ax.errorbar(x, v, yerr=1.96 * np.asarray(effect.std, dtype=float), fmt="none",
                    ecolor="C0", alpha=0.5)
    ax.set_xticks(x, [fmt(t, 4) for t in x])
    ax.set_xlabel(str(effect.feature))
    ax.set_ylabel({"pdp": "partial dependence", "ale": "ALE"}.get(effect.method,
                                                                  effect.method))
    ax.set_title(f"{'PD' if effect.method == 'pdp' else 'ALE'} of {effect.feature}")


def levels_by_effect(effect) -> list:
    """The levels of a PD over levels, from the lowest partial dependence to the highest."""
    labels = [str(v) for v in np.asarray(effect.grid).tolist()]
    order = np.argsort(np.asarray(effect.values, dtype=float), kind="stable")
    return [labels[i] for i in order]


def _draw_many_levels(ax, effect, levels, inputs, other=None, order=None):
    """PD over the levels of an unordered categorical, in ``order`` (the ALE panel's) or in
    order of effect (the most frequent ``TOP_LEVELS`` of a many-level one, then its "other"
    group)."""
    labels = order or levels_by_effect(effect)
    at = {str(g): float(v) for g, v in zip(np.asarray(effect.grid).tolist(),
                                            np.asarray(effect.values, dtype=float))}
    v = np.array([at[label] for label in labels])
    ax.plot(np.arange(v.size), v, "o", color="C0")
    if other:
        # set apart: another marker and colour, its interval, its size in the label
        ax.axvline(v.size - 0.5, color="grey", lw=0.5, ls=":")
        ax.errorbar([v.size], [other["value"]], yerr=[1.96 * other["se"]], fmt="D",
                    color="C1", ecolor="C1", capsize=3)
        labels = labels + [f"other ({plural(other['levels'], 'level')})"]
    ax.set_xticks(np.arange(len(labels)), labels, rotation=60, ha="right")
    ax.set_xlabel(f"{effect.feature}: {v.size} most frequent of {levels:,} levels, by effect"
                  if levels > v.size else f"{effect.feature}: levels in the ALE panel's order"
                  if order else f"{effect.feature}: levels in order of effect")
    ax.set_ylabel("partial dependence")
    ax.set_title(f"PD of {effect.feature}")
