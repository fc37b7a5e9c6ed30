"""The tree partial-dependence kernel: the weighted traversal of every tree at each setting."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._traverse import _goes_left

__all__ = ["pd_recursion"]


@njit(parallel=True, cache=True)
def pd_recursion(settings, position, nodes, value, tree_out, k_out, cover, roots):
    """Partial dependence of every output at each setting, ``(G, k)``, by the weighted
    traversal of every tree.

    A split on a feature of the setting (``position[f] >= 0``) follows the
    setting's value; any other split sends the weight down both sides in
    proportion to the children's covers.  Column ``c`` of ``value``
    (``(nodes, K)``) of tree ``t`` feeds output ``tree_out[t] + c``: every
    output in one traversal.
    """
    left, right, feature, threshold = nodes.left, nodes.right, nodes.feature, nodes.threshold
    default_left, missing, cat = nodes.default_left, nodes.missing, nodes.cat
    G = settings.shape[0]
    T = len(roots) - 1
    n_col = value.shape[1]
    out = np.zeros((G, k_out))
    for g in prange(G):
        nodes = np.empty(len(left), np.int64)
        weights = np.empty(len(left))
        acc = np.zeros(k_out)
        for k in range(T):
            o0 = tree_out[k]
            top = 0
            nodes[0] = roots[k]
            weights[0] = 1.0
            while top >= 0:
                node = nodes[top]
                w = weights[top]
                top -= 1
                if left[node] < 0:
                    for j in range(n_col):
                        acc[o0 + j] += w * value[node, j]
                    continue
                pos = position[feature[node]]
                if pos >= 0:
                    top += 1
                    if _goes_left(settings[g, pos], threshold[node], default_left[node],
                                  missing[node], cat):
                        nodes[top] = left[node]
                    else:
                        nodes[top] = right[node]
                    weights[top] = w
                elif cover[node] > 0:
                    for c in (left[node], right[node]):
                        top += 1
                        nodes[top] = c
                        weights[top] = w * cover[c] / cover[node]
        out[g] = acc
    return out
