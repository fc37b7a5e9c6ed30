"""Kernels of the tree H statistics (``ml.interactions``): each leaf's path, each row's
mask of satisfied path features at every leaf, the counts of rows per leaf and group
that the masks give, and the group sums of the blocks of single features and pairs
(the formulas are in :mod:`modellens.effects._interactions_tree`)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._traverse import _goes_left

__all__ = ["leaf_paths", "row_masks", "leaf_counts", "single_sums", "pair_sums"]


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
def _decide(x, nodes, dec):
    left, feature, threshold = nodes.left, nodes.feature, nodes.threshold
    default_left, missing, cat = nodes.default_left, nodes.missing, nodes.cat
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
def row_masks(X, nodes, path_off, path_node, path_left, path_slot, feat_off):
    """Each row's mask of satisfied path features at every leaf, ``(n, L)``."""
    n = X.shape[0]
    L = len(path_off) - 1
    out = np.empty((n, L), np.uint64)
    for i in prange(n):
        dec = np.zeros(len(nodes.left), np.uint8)
        _decide(X[i], nodes, dec)
        for l in range(L):
            out[i, l] = _mask(l, dec, path_off, path_node, path_left, path_slot,
                              feat_off[l + 1] - feat_off[l])
    return out


# ------------------------------------------------ counts and sums by group of rows
@njit(inline="always", cache=True)
def _low_bit(m):
    s = 0
    while (m >> np.uint64(s)) & np.uint64(1) == 0:
        s += 1
    return s


@njit(inline="always", cache=True)
def _pair_slot(s, t, p):
    """Position of slots ``s < t`` among a leaf's ``p * (p - 1) / 2`` pairs."""
    return s * (2 * p - s - 1) // 2 + (t - s - 1)


@njit(parallel=True, cache=True)
def leaf_counts(masks, labels, feat_off, pair_off, full, miss1, bits, miss2):
    """Add the rows of ``masks`` (groups ``labels``) to each leaf's counts by group."""
    b, L = masks.shape
    for l in prange(L):
        o, p = feat_off[l], feat_off[l + 1] - feat_off[l]
        every = (np.uint64(1) << np.uint64(p)) - np.uint64(1)
        for i in range(b):
            m, g = masks[i, l], labels[i]
            for s in range(p):
                if (m >> np.uint64(s)) & np.uint64(1):
                    bits[o + s, g] += 1.0
            miss = every & ~m
            if miss == 0:
                full[l, g] += 1.0
                continue
            s = _low_bit(miss)
            rest = miss & (miss - np.uint64(1))
            if rest == 0:
                miss1[o + s, g] += 1.0
            elif rest & (rest - np.uint64(1)) == 0:
                miss2[pair_off[l] + _pair_slot(s, _low_bit(rest), p), g] += 1.0


@njit(parallel=True, cache=True)
def single_sums(masks, row0, value, feat_off, feat_id, index, full, miss1, bits, sizes, C, R):
    """Group sums of the blocks of single features for the rows of ``masks``.

    ``C[a, k, g]``: rows of group ``g`` with feature ``index^-1[a]`` from row
    ``k``; ``R[a, k, h]``: row ``k`` with the feature from the rows of group
    ``h``, less ``n_h f(x_k)`` (added by the caller).  Leaves without the
    feature are left out (a constant per group).
    """
    b, L = masks.shape
    G = sizes.shape[0]
    for i in prange(b):
        k = row0 + i
        for l in range(L):
            o, p = feat_off[l], feat_off[l + 1] - feat_off[l]
            v = value[l]
            if p == 0 or v == 0.0:  # a leaf of another output's tree adds nothing
                continue
            m = masks[i, l]
            miss = ((np.uint64(1) << np.uint64(p)) - np.uint64(1)) & ~m
            for s in range(p):
                a = index[feat_id[o + s]]
                if a < 0:
                    continue
                if (m >> np.uint64(s)) & np.uint64(1):
                    for g in range(G):
                        C[a, k, g] += v * (full[l, g] + miss1[o + s, g])
                if miss == 0:
                    for h in range(G):
                        R[a, k, h] += v * (bits[o + s, h] - sizes[h])
                elif miss == np.uint64(1) << np.uint64(s):
                    for h in range(G):
                        R[a, k, h] += v * bits[o + s, h]


@njit(parallel=True, cache=True)
def pair_sums(masks, row0, value, feat_off, feat_id, pair_off, pair_id, full, miss1, miss2, D):
    """``D[q, k, g]``: the column sums of pair ``q``'s block less its features' own ones."""
    b, L = masks.shape
    G = D.shape[2]
    for i in prange(b):
        k = row0 + i
        for l in range(L):
            o, p = feat_off[l], feat_off[l + 1] - feat_off[l]
            v = value[l]
            if p < 2 or v == 0.0:  # a leaf of another output's tree adds nothing
                continue
            m = masks[i, l]
            for s in range(p - 1):
                bs = (m >> np.uint64(s)) & np.uint64(1)
                for t in range(s + 1, p):
                    q = pair_id[feat_id[o + s], feat_id[o + t]]
                    if q < 0:
                        continue
                    bt = (m >> np.uint64(t)) & np.uint64(1)
                    if bs and bt:
                        w = pair_off[l] + _pair_slot(s, t, p)
                        for g in range(G):
                            D[q, k, g] += v * (miss2[w, g] - full[l, g])
                    elif bs:
                        for g in range(G):
                            D[q, k, g] -= v * (full[l, g] + miss1[o + s, g])
                    elif bt:
                        for g in range(G):
                            D[q, k, g] -= v * (full[l, g] + miss1[o + t, g])
