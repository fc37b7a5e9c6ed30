"""Exact ICE curves of a tree ensemble over data rows, with no model rows.

For a row :math:`x` and a feature :math:`s`, the row's ICE curve is
:math:`f(x_s = g, x_{-s})` at each grid value :math:`g`.  In one tree, the
row's path to its leaf :math:`L` decides every split on the row's own
values; a split on :math:`s` is the only one a grid value can change.  So

* a tree whose path from the root to :math:`L` never splits on :math:`s`
  sends the row to :math:`L` at every grid value: it adds the leaf's value
  to the whole curve;
* a tree whose path splits on :math:`s`, first at node :math:`p`, sends
  every grid value to :math:`p` (the splits above it do not read
  :math:`s`); below :math:`p` the grid values part at each split on
  :math:`s` (each by the very rule a prediction follows, NaN, zero and
  category routing included) and follow the row at every other split, so
  each grid value reaches exactly the leaf a prediction of the changed row
  reaches.

The curve of every feature is the row's raw output plus, for each tree
whose path splits on the feature, the walked leaf values minus the row's
own leaf.  One walk of each tree per row serves every feature: its cost is
the path plus the subtrees below the first split on each path feature that
the grid values reach, not ``G`` predictions per feature.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit, prange

from ._checks import MAX_TREE_DEPTH
from ._traverse import _goes_left

__all__ = ["IceGrids", "ice_margins"]

#: The grids of the features whose curves are asked: ``values`` ``(R, F, G_max)`` (the
#: model's codes, cast as the library casts rows), ``lengths`` ``(R, F)`` (the grid
#: points of each, the rest unused) and ``slot`` ``(d,)`` (each feature's place on the
#: ``F`` axis, -1 for a feature not asked).  ``R = 1``: one grid for every row (ICE);
#: ``R`` the rows' count: each row its own grid (the two edges of its ALE bin), a row of
#: length 0 asking for no curve of that feature.
IceGrids = namedtuple("IceGrids", "values lengths slot")


@njit(inline="always", cache=True)
def _walk(x, start, s, grid, n_grid, nodes, stack):
    """Where the grid values of feature ``s`` go below node ``start``, the row fixed elsewhere.

    Fills ``stack`` (``(3, G + 1)`` int64) from the back with ``(leaf, lo,
    hi)``: the grid values ``lo:hi`` reach that leaf; returns the first
    filled column.  Pending entries (at the front) and finished ones hold
    disjoint non-empty runs of the grid, so together at most ``G``.
    """
    left, right, feature, threshold = nodes.left, nodes.right, nodes.feature, nodes.threshold
    default_left, missing, cat = nodes.default_left, nodes.missing, nodes.cat
    done = stack.shape[1]
    if n_grid == 0:
        return done
    stack[0, 0], stack[1, 0], stack[2, 0] = start, 0, n_grid
    top = 1
    while top > 0:
        top -= 1
        node, lo, hi = stack[0, top], stack[1, top], stack[2, top]
        while left[node] >= 0 and feature[node] != s:
            if _goes_left(x[feature[node]], threshold[node], default_left[node],
                          missing[node], cat):
                node = left[node]
            else:
                node = right[node]
        if left[node] < 0:
            done -= 1
            stack[0, done], stack[1, done], stack[2, done] = node, lo, hi
            continue
        # a split on s: consecutive grid values going the same way form one run
        thr, dl, miss = threshold[node], default_left[node], missing[node]
        g = lo
        way = _goes_left(grid[g], thr, dl, miss, cat)
        while g < hi:
            h = g + 1
            nxt = way
            while h < hi:
                nxt = _goes_left(grid[h], thr, dl, miss, cat)
                if nxt != way:
                    break
                h += 1
            stack[0, top] = left[node] if way else right[node]
            stack[1, top], stack[2, top] = g, h
            top += 1
            g, way = h, nxt
    return done


@njit(parallel=True, cache=True)
def ice_margins(X, nodes, value, tree_out, k_out, roots, grids):
    """Raw-output ICE curves ``(n, F, G_max, k_out)`` of every row and asked feature
    (the model's baseline not added; entries past a feature's grid are 0), on the
    grids of :class:`IceGrids` (shared, or one per row).

    ``X`` are the rows as the library compares them (encoded and cast); column
    ``c`` of ``value`` (``(nodes, K)``) of tree ``t`` feeds output
    ``tree_out[t] + c`` (:meth:`TreeEnsemble.traversal`).
    """
    left, right, feature, threshold = nodes.left, nodes.right, nodes.feature, nodes.threshold
    default_left, missing, cat = nodes.default_left, nodes.missing, nodes.cat
    gv, glen, slot = grids.values, grids.lengths, grids.slot
    n, T, n_col = X.shape[0], len(roots) - 1, value.shape[1]
    F, G = gv.shape[1], gv.shape[2]
    per_row = gv.shape[0] > 1
    out = np.zeros((n, F, G, k_out))
    for i in prange(n):
        x = X[i]
        # (both sides int64: under prange i may be unsigned, and numba unifies uint64 with
        # int64 as float64, which cannot index)
        ig = np.int64(i) if per_row else np.int64(0)
        own = np.zeros(k_out)  # the row's raw output
        gone = np.zeros((F, k_out))  # own leaves of the trees whose path reads the feature
        seen = np.full(X.shape[1], -1, np.int64)
        hits = np.empty(MAX_TREE_DEPTH + 1, np.int64)
        stack = np.empty((3, G + 1), np.int64)
        curve = out[i]
        for t in range(T):
            node = roots[t]
            n_hits = 0
            while left[node] >= 0:
                f = feature[node]
                if slot[f] >= 0 and seen[f] != t:  # the first split on an asked feature
                    seen[f] = t
                    hits[n_hits] = node
                    n_hits += 1
                if _goes_left(x[f], threshold[node], default_left[node], missing[node], cat):
                    node = left[node]
                else:
                    node = right[node]
            o0 = tree_out[t]
            for c in range(n_col):
                own[o0 + c] += value[node, c]
            for h in range(n_hits):
                s = feature[hits[h]]
                k = slot[s]
                for c in range(n_col):
                    gone[k, o0 + c] += value[node, c]
                done = _walk(x, hits[h], s, gv[ig, k], glen[ig, k], nodes, stack)
                for e in range(done, G + 1):
                    leaf, lo, hi = stack[0, e], stack[1, e], stack[2, e]
                    for c in range(n_col):
                        v = value[leaf, c]
                        for g in range(lo, hi):
                            curve[k, g, o0 + c] += v
        for k in range(F):
            for g in range(glen[ig, k]):
                for o in range(k_out):
                    curve[k, g, o] += own[o] - gone[k, o]
    return out
