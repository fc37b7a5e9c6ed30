r"""MSEv: how well a game's worths estimate the conditional expectation (Olsen et al.).

For the explained rows :math:`x^{(i)}` and the coalitions :math:`S` a
result used (neither empty nor full, each counted once per row, equal
weights), R's shapr reports

.. math:: \mathrm{MSE}_v = \frac1n \sum_i \mathrm{MSE}_{v,i}, \qquad
          \mathrm{MSE}_{v,i} = \frac{1}{|\mathcal S_i|} \sum_{S \in \mathcal S_i}
          \big(f(x^{(i)}) - \hat v_i(S)\big)^2,

with standard error :math:`\mathrm{sd}(\mathrm{MSE}_{v,i}) / \sqrt n`.  The
true conditional expectation :math:`E[f(X) | X_S = x_S]` minimises its
expectation over rows drawn from the data, so lower is better; only
differences between games on the same rows and coalitions are meaningful.
"""

from __future__ import annotations

import numpy as np

from ._conditional import coalition_queries

__all__ = ["msev", "game_msev"]


def msev(rows, masks, worths, predictions):
    """``(MSEv, its standard error, per-row MSEv)`` of worths of (row, coalition) queries.

    Parameters
    ----------
    rows : int array (Q,)
        The explained row of each query.
    masks : bool array (Q, d)
        Its coalition; empty and full ones are left out, repeats counted once.
    worths : array (Q,)
        :math:`\\hat v_i(S)`.
    predictions : array (n,)
        :math:`f(x^{(i)})`.
    """
    rows, masks = np.asarray(rows, dtype=np.intp), np.asarray(masks, dtype=bool)
    worths, fx = np.asarray(worths, dtype=float), np.asarray(predictions, dtype=float)
    size = masks.sum(axis=1)
    proper = (size > 0) & (size < masks.shape[1])
    keys = np.column_stack([rows[proper], np.packbits(masks[proper], axis=1)])
    _, first = np.unique(keys, axis=0, return_index=True)
    r, w = rows[proper][first], worths[proper][first]
    n = fx.shape[0]
    sums = np.bincount(r, weights=(fx[r] - w) ** 2, minlength=n)
    counts = np.bincount(r, minlength=n)
    per_row = sums[counts > 0] / counts[counts > 0]
    if per_row.size == 0:
        return np.nan, np.nan, per_row
    se = per_row.std(ddof=1) / np.sqrt(per_row.size) if per_row.size > 1 else np.nan
    return float(per_row.mean()), float(se), per_row


def _queries(seg):
    """``(explained row, mask)`` of every query of a coalition segment."""
    return coalition_queries(seg, np.arange(getattr(seg, "n_queries", seg.n_rows // seg.group)))


def game_msev(game, predictions) -> dict:
    """``{"msev": ..., "msev_se": ...}`` of the coalitions a table game evaluated ({} if none)."""
    base = getattr(game, "inner", game)
    segs = [s for s in getattr(base, "made", ()) if s.result is not None]
    if not segs:
        return {}
    parts = [_queries(s) for s in segs]
    rows = np.concatenate([p[0] for p in parts])
    masks = np.concatenate([p[1] for p in parts])
    worths = np.concatenate([np.asarray(s.result, dtype=float).ravel() for s in segs])
    value, se, _ = msev(rows, masks, worths, predictions)
    return {"msev": value, "msev_se": se}
