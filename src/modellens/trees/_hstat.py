"""Kernels of the tree H statistics (``ml.interactions``): each leaf's path and each row's
mask of satisfied path features at every leaf."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._traverse import _goes_left

__all__ = ["leaf_paths", "row_masks"]


@njit(cache=True)
def leaf_paths(left, right, feature, cover, roots):
    """Each leaf's path: its nodes, the side taken, and its distinct features.

    Returns ``leaf_node, path_off, path_node, path_left, path_slot, feat_off,
    feat_id, feat_z``: leaf ``l``'s path steps are ``path_off[l]:path_off[l+1]``
    (the node, whether the leaf lies left of it, the slot of its feature among
    the leaf's distinct features); its features ``feat_off[l]:feat_off[l+1]``
    with the product of their cover ratios ``feat_z``.
    """
    n_nodes = len(left)
    parent = np.full(n_nodes, -1, np.int64)
    n_leaves = 0
    total = 0
    for t in range(len(roots) - 1):
        for node in range(roots[t], roots[t + 1]):
            if left[node] >= 0:
                parent[left[node]] = node
                parent[right[node]] = node
    for node in range(n_nodes):
        if left[node] < 0:
            n_leaves += 1
            up = node
            while parent[up] >= 0:
                total += 1
                up = parent[up]
    leaf_node = np.empty(n_leaves, np.int64)
    path_off = np.zeros(n_leaves + 1, np.int64)
    path_node = np.empty(total, np.int64)
    path_left = np.empty(total, np.uint8)
    path_slot = np.empty(total, np.int64)
    feat_off = np.zeros(n_leaves + 1, np.int64)
    feat_id = np.empty(total, np.int64)
    feat_z = np.empty(total, np.float64)
    l = 0
    q = 0
    f = 0
    for node in range(n_nodes):
        if left[node] >= 0:
            continue
        leaf_node[l] = node
        child = node
        start_f = f
        while parent[child] >= 0:
            par = parent[child]
            path_node[q] = par
            path_left[q] = 1 if left[par] == child else 0
            ratio = cover[child] / cover[par] if cover[par] > 0 else 0.0
            slot = -1
            for s in range(start_f, f):
                if feat_id[s] == feature[par]:
                    slot = s - start_f
                    feat_z[s] *= ratio
                    break
            if slot < 0:
                slot = f - start_f
                feat_id[f] = feature[par]
                feat_z[f] = ratio
                f += 1
            path_slot[q] = slot
            q += 1
            child = par
        l += 1
        path_off[l] = q
        feat_off[l] = f
    return (leaf_node, path_off, path_node, path_left, path_slot, feat_off, feat_id[:f],
            feat_z[:f])


@njit(inline="always", cache=True)
def _decide(x, left, feature, threshold, default_left, missing, cat, dec):
    for node in range(len(left)):
        if left[node] >= 0:
            dec[node] = 1 if _goes_left(x[feature[node]], threshold[node], default_left[node],
                                        missing[node], cat) else 0


@njit(inline="always", cache=True)
def _mask(l, dec, path_off, path_node, path_left, path_slot, p):
    m = (np.uint64(1) << np.uint64(p)) - np.uint64(1)
    for s in range(path_off[l], path_off[l + 1]):
        if dec[path_node[s]] != path_left[s]:
            m &= ~(np.uint64(1) << np.uint64(path_slot[s]))
    return m


@njit(parallel=True, cache=True)
def row_masks(X, left, feature, threshold, default_left, missing, cat, path_off, path_node,
              path_left, path_slot, feat_off):
    """Each row's mask of satisfied path features at every leaf, ``(n, L)``."""
    n = X.shape[0]
    L = len(path_off) - 1
    out = np.empty((n, L), np.uint64)
    for i in prange(n):
        dec = np.zeros(len(left), np.uint8)
        _decide(X[i], left, feature, threshold, default_left, missing, cat, dec)
        for l in range(L):
            out[i, l] = _mask(l, dec, path_off, path_node, path_left, path_slot,
                              feat_off[l + 1] - feat_off[l])
    return out
