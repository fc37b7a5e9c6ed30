"""numba kernels of TreeSHAP, leaf by leaf.

Both tree games are sums over leaves of product games.  For a leaf ``l``
with value :math:`v_l` whose path splits on the features :math:`P_l` (a
feature split on twice is one player), a row reaches the leaf under the
coalition :math:`S` with weight

.. math:: w_l(S) = \\prod_{k \\in P_l} (o_k \\text{ if } k \\in S \\text{ else } z_k),

where :math:`o_k \\in \\{0, 1\\}` says whether the row satisfies every split on
:math:`k` along the path and :math:`z_k` is

* path-dependent: the product of the cover ratios of those splits;
* interventional: whether the background row satisfies them (0 or 1).

Features outside :math:`P_l` are dummies of the leaf's game, so the Shapley
value of :math:`j \\in P_l` is
:math:`v_l (o_j - z_j) \\sum_{S \\subseteq P_l \\setminus j} W(|S|, p)
\\prod_{k \\in S} o_k \\prod_{k \\notin S, k \\neq j} z_k` with
:math:`W(s, p) = s! (p - s - 1)! / p!` and :math:`p = |P_l|`.  The sum is a
weighted sum of the coefficients of :math:`\\prod_k (z_k + o_k y)`, so a leaf
costs :math:`O(p^2)`.  As the answer depends on the row only through the
bit mask :math:`o`, small leaves get a table over all :math:`2^p` masks
(FastTreeSHAP's idea, Yang 2021) and a row then costs :math:`O(p)` per leaf
once its mask is known.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, prange

__all__ = ["predict_leaves", "leaf_paths", "shapley_weights", "pd_tables", "leaf_values",
           "pd_interactions", "row_masks", "iv_tables", "expected_leaf_value", "tree_edges",
           "pd_values_linear", "pd_recursion", "gauss_nodes", "MAX_PATH_FEATURES"]

#: Most distinct features on one root-to-leaf path (masks are 64-bit words).
MAX_PATH_FEATURES = 63
_ZERO = float(np.float32(1e-35))  # LightGBM's kZeroThreshold


@njit(inline="always", cache=True)
def _goes_left(v, thr, dl, miss, cat):
    if miss == 3:
        # a categorical split: row int(thr) of cat says which codes go left; NaN and
        # codes outside the table (unknown categories) take the missing side
        if v != v or v < 0 or v >= cat.shape[1]:
            return dl != 0
        return cat[int(thr), int(v)] != 0
    if v != v:
        if miss == 1:
            v = 0.0
        else:
            return dl != 0
    elif miss == 2 and -_ZERO <= v <= _ZERO:
        return dl != 0
    return v <= thr


@njit(parallel=True, cache=True)
def predict_leaves(X, left, right, feature, threshold, default_left, missing, cat, roots):
    """The leaf (node index) each row reaches in each tree, ``(n, n_trees)``."""
    n, T = X.shape[0], len(roots) - 1
    out = np.empty((n, T), dtype=np.int64)
    for i in prange(n):
        for t in range(T):
            node = roots[t]
            while left[node] >= 0:
                if _goes_left(X[i, feature[node]], threshold[node], default_left[node],
                              missing[node], cat):
                    node = left[node]
                else:
                    node = right[node]
            out[i, t] = node
    return out


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


def shapley_weights(p_max):
    """``W[p, s] = s! (p - s - 1)! / p!`` for ``0 <= s < p <= p_max``."""
    W = np.zeros((p_max + 1, p_max + 1))
    for p in range(1, p_max + 1):
        for s in range(p):
            W[p, s] = math.exp(math.lgamma(s + 1) + math.lgamma(p - s) - math.lgamma(p + 1))
    return W


@njit(cache=True)
def _leaf_phi(v, z, p, mask, W, q, r, out, base):
    """Add leaf ``v``'s path-dependent Shapley values for mask ``mask`` to ``out[base + slot]``.

    ``q`` and ``r`` are scratch arrays of length ``p + 1``.
    """
    zb = 1.0
    a = 0
    for k in range(p):
        if (mask >> k) & 1:
            a += 1
        else:
            zb *= z[k]
    if zb == 0.0 or v == 0.0:
        return
    # q = prod over satisfied features of (z_k + y), lowest degree first
    q[0] = 1.0
    deg = 0
    for k in range(p):
        if (mask >> k) & 1:
            q[deg + 1] = q[deg]
            for s in range(deg, 0, -1):
                q[s] = q[s] * z[k] + q[s - 1]
            q[0] = q[0] * z[k]
            deg += 1
    if a < p:
        sb = 0.0
        for s in range(a + 1):
            sb += W[p, s] * q[s]
        sb *= -v * zb
    else:
        sb = 0.0
    for k in range(p):
        if (mask >> k) & 1:
            # q / (z_k + y), from the top: stable as 0 <= z_k <= 1
            zk = z[k]
            r[a - 1] = q[a]
            for s in range(a - 1, 0, -1):
                r[s - 1] = q[s] - zk * r[s]
            acc = 0.0
            for s in range(a):
                acc += W[p, s] * r[s]
            out[base + k] += v * (1.0 - zk) * zb * acc
        else:
            out[base + k] += sb


@njit(cache=True)
def _table_size(feat_off, table_off):
    """Entries of the tables laid out at ``table_off``: ``2**p * p`` for a leaf of p features."""
    size = 0
    for l in range(len(table_off)):
        if table_off[l] >= 0:
            p = feat_off[l + 1] - feat_off[l]
            size = max(size, table_off[l] + (1 << p) * p)
    return size


@njit(parallel=True, cache=True)
def pd_tables(leaf_value, feat_off, feat_z, table_off, W):
    """Path-dependent values of every mask of every tabled leaf (``table_off >= 0``)."""
    L = len(leaf_value)
    table = np.zeros(_table_size(feat_off, table_off))
    for l in prange(L):
        if table_off[l] < 0:
            continue
        p = feat_off[l + 1] - feat_off[l]
        z = feat_z[feat_off[l]:feat_off[l + 1]]
        q = np.empty(p + 2)
        r = np.empty(p + 2)
        for mask in range(1 << p):
            _leaf_phi(leaf_value[l], z, p, mask, W, q, r, table, table_off[l] + mask * p)
    return table


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
def leaf_values(X, left, feature, threshold, default_left, missing, cat, leaf_value, path_off,
                path_node, path_left, path_slot, feat_off, feat_id, feat_z, table_off, table, W,
                bg_masks, bg_counts, bg_off, C, scale, leaf_roots, node_roots, block):
    """Shapley values ``(n, d)`` of every row of ``X`` (cast already), leaf by leaf.

    A tabled leaf (``table_off >= 0``) reads its values at the row's mask; the
    others are computed: the path-dependent game when ``bg_off`` is empty,
    else the interventional one over the leaf's distinct background masks
    (times ``scale``).  Rows go in blocks, tree by tree within a block, so
    that a tree's tables stay in cache for the block's rows.  Tree ``k`` owns
    leaves ``leaf_roots[k]:leaf_roots[k+1]`` and nodes
    ``node_roots[k]:node_roots[k+1]``.
    """
    n, d = X.shape
    L = len(leaf_value)
    T = len(leaf_roots) - 1
    interventional = len(bg_off) > 0
    out = np.zeros((n, d))
    p_max = 1
    for l in range(L):
        p_max = max(p_max, feat_off[l + 1] - feat_off[l])
    n_blk = (n + block - 1) // block
    for b in prange(n_blk):
        dec = np.zeros(len(left), np.uint8)
        q = np.empty(p_max + 2)
        r = np.empty(p_max + 2)
        local = np.zeros(p_max)
        lo, hi = b * block, min(n, (b + 1) * block)
        for k in range(T):
            for i in range(lo, hi):
                x = X[i]
                for node in range(node_roots[k], node_roots[k + 1]):
                    if left[node] >= 0:
                        dec[node] = 1 if _goes_left(x[feature[node]], threshold[node],
                                                    default_left[node], missing[node],
                                                    cat) else 0
                row = out[i]
                for l in range(leaf_roots[k], leaf_roots[k + 1]):
                    f0 = feat_off[l]
                    p = feat_off[l + 1] - f0
                    m = _mask(l, dec, path_off, path_node, path_left, path_slot, p)
                    if table_off[l] >= 0:
                        t0 = table_off[l] + np.int64(m) * p
                        for j in range(p):
                            row[feat_id[f0 + j]] += table[t0 + j]
                        continue
                    for j in range(p):
                        local[j] = 0.0
                    if interventional:
                        v = leaf_value[l] * scale
                        for s in range(bg_off[l], bg_off[l + 1]):
                            _iv_add(v, p, m, bg_masks[s], bg_counts[s], C, local, 0)
                    else:
                        _leaf_phi(leaf_value[l], feat_z[f0:f0 + p], p, np.int64(m), W, q, r,
                                  local, 0)
                    for j in range(p):
                        row[feat_id[f0 + j]] += local[j]
    return out


@njit(cache=True)
def _pair_sum(z, o, p, i, j, W2, q):
    """``sum_s W2[p, s] [prod_{k != i, j} (z_k + o_k y)]_s``."""
    q[0] = 1.0
    deg = 0
    for k in range(p):
        if k == i or k == j:
            continue
        q[deg + 1] = 0.0
        for s in range(deg + 1, 0, -1):
            q[s] = q[s] * z[k] + o[k] * q[s - 1]
        q[0] = q[0] * z[k]
        deg += 1
    acc = 0.0
    for s in range(deg + 1):
        acc += W2[p, s] * q[s]
    return acc


@njit(parallel=True, cache=True)
def pd_interactions(X, left, feature, threshold, default_left, missing, cat, leaf_value,
                    path_off, path_node, path_left, path_slot, feat_off, feat_id, feat_z, W, W2,
                    phi):
    """Path-dependent SHAP interaction values ``(n, d, d)``; ``phi`` the Shapley values.

    Off the diagonal, :math:`\\Phi_{ij} = \\frac12 \\sum_{S \\subseteq N \\setminus
    \\{i, j\\}} \\frac{|S|! (M - |S| - 2)!}{(M - 1)!} \\nabla_{ij}(S)`, leaf by leaf
    with :math:`W_2(s, p) = s! (p - s - 2)! / (p - 1)!`; the diagonal holds
    :math:`\\phi_i - \\sum_{j \\neq i} \\Phi_{ij}`.
    """
    n, d = X.shape
    L = len(leaf_value)
    out = np.zeros((n, d, d))
    p_max = 1
    for l in range(L):
        p_max = max(p_max, feat_off[l + 1] - feat_off[l])
    for i in prange(n):
        dec = np.zeros(len(left), np.uint8)
        q = np.empty(p_max + 2)
        o = np.empty(p_max)
        _decide(X[i], left, feature, threshold, default_left, missing, cat, dec)
        M = out[i]
        for l in range(L):
            f0 = feat_off[l]
            p = feat_off[l + 1] - f0
            if p < 2:
                continue
            m = _mask(l, dec, path_off, path_node, path_left, path_slot, p)
            z = feat_z[f0:f0 + p]
            for k in range(p):
                o[k] = 1.0 if (m >> np.uint64(k)) & np.uint64(1) else 0.0
            v = leaf_value[l]
            for a in range(p):
                da = o[a] - z[a]
                if da == 0.0:
                    continue
                for c in range(a + 1, p):
                    dc = o[c] - z[c]
                    if dc == 0.0:
                        continue
                    val = 0.5 * v * da * dc * _pair_sum(z, o, p, a, c, W2, q)
                    fa, fc = feat_id[f0 + a], feat_id[f0 + c]
                    M[fa, fc] += val
                    M[fc, fa] += val
        for a in range(d):
            s = 0.0
            for c in range(d):
                if c != a:
                    s += M[a, c]
            M[a, a] = phi[i, a] - s
    return out


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


@njit(inline="always", cache=True)
def _popcount(m):
    c = 0
    while m:
        m &= m - np.uint64(1)
        c += 1
    return c


@njit(cache=True)
def _iv_add(v, p, a, b, count, C, out, base):
    """Add ``count`` background rows' interventional values for masks ``a`` (row), ``b``."""
    full = (np.uint64(1) << np.uint64(p)) - np.uint64(1)
    if (a | b) != full:
        return
    u_mask = a & ~b
    w_mask = b & ~a
    u = _popcount(u_mask)
    w = _popcount(w_mask)
    if u + w == 0:
        return
    gain = v * count * C[u, w] if u > 0 else 0.0      # (u-1)! w! / (u+w)!
    loss = -v * count * C[w, u] if w > 0 else 0.0     # u! (w-1)! / (u+w)!
    for k in range(p):
        bit = np.uint64(1) << np.uint64(k)
        if u_mask & bit:
            out[base + k] += gain
        elif w_mask & bit:
            out[base + k] += loss


@njit(parallel=True, cache=True)
def iv_tables(leaf_value, feat_off, bg_masks, bg_counts, bg_off, table_off, C, scale):
    """Interventional values of every row mask of every tabled leaf, averaged over background.

    Leaf ``l``'s distinct background masks are ``bg_masks[bg_off[l]:bg_off[l+1]]`` with
    their counts.
    """
    L = len(leaf_value)
    table = np.zeros(_table_size(feat_off, table_off))
    for l in prange(L):
        if table_off[l] < 0:
            continue
        p = feat_off[l + 1] - feat_off[l]
        v = leaf_value[l] * scale
        for a in range(1 << p):
            base = table_off[l] + a * p
            for s in range(bg_off[l], bg_off[l + 1]):
                _iv_add(v, p, np.uint64(a), bg_masks[s], bg_counts[s], C, table, base)
    return table


@njit(cache=True)
def expected_leaf_value(leaf_value, feat_off, feat_z):
    """The path-dependent game's empty coalition: leaves weighted by their cover ratios."""
    total = 0.0
    for l in range(len(leaf_value)):
        w = 1.0
        for k in range(feat_off[l], feat_off[l + 1]):
            w *= feat_z[k]
        total += leaf_value[l] * w
    return total


def n_blocks(n):
    """Row blocks for the parallel loops: a few per thread, so uneven rows even out."""
    return max(1, min(n, 8 * numba.get_num_threads()))


@njit(cache=True)
def tree_edges(left, right, feature, cover, roots):
    """Preorder of each tree and, per node, its incoming edge's data.

    Returns ``order`` (every tree's nodes in preorder, trees in turn),
    ``parent``, ``is_left``, ``prev`` (the node whose incoming edge is the
    nearest earlier split on the same feature along the path, -1 if none) and
    ``z`` (the product of the cover ratios of the edges on that feature down
    to this node).
    """
    n_nodes = len(left)
    order = np.empty(n_nodes, np.int64)
    parent = np.full(n_nodes, -1, np.int64)
    is_left = np.zeros(n_nodes, np.uint8)
    prev = np.full(n_nodes, -1, np.int64)
    z = np.ones(n_nodes)
    stack = np.empty(n_nodes, np.int64)
    q = 0
    for t in range(len(roots) - 1):
        top = 0
        stack[0] = roots[t]
        while top >= 0:
            node = stack[top]
            top -= 1
            order[q] = node
            q += 1
            if left[node] < 0:
                continue
            f = feature[node]
            # the nearest edge above whose split is on f
            up = -1
            child = node
            while parent[child] >= 0:
                if feature[parent[child]] == f:
                    up = child
                    break
                child = parent[child]
            for c, lft in ((right[node], 0), (left[node], 1)):
                parent[c] = node
                is_left[c] = lft
                prev[c] = up
                ratio = cover[c] / cover[node] if cover[node] > 0 else 0.0
                z[c] = ratio * (z[up] if up >= 0 else 1.0)
                top += 1
                stack[top] = c
    return order, parent, is_left, prev, z


@njit(parallel=True, cache=True)
def pd_values_linear(X, left, right, feature, threshold, default_left, missing, cat, value,
                     roots, order, parent, is_left, prev, z, t_nodes, t_weights, n_blocks):
    """Path-dependent Shapley values ``(n, d)``, O(nodes x G) per tree and row.

    A leaf's value for feature ``j`` is ``v (o_j - z_j) * integral_0^1 prod_{k != j}
    (z_k (1 - t) + o_k t) dt`` (the Shapley weights are Beta integrals), a
    polynomial of degree below the path length, so ``G`` Gauss-Legendre nodes
    integrate it exactly (Linear TreeSHAP's idea, Yu et al. 2022).  The
    integrands are carried down the tree as their values at the nodes, summed
    back up, and each edge takes the leaves below it for which it is the
    deepest split on its feature.
    """
    n, d = X.shape
    G = len(t_nodes)
    T = len(roots) - 1
    # each edge's factor is z (1 - t) + o t with o in {0, 1}: its two values and inverses
    n_nodes = len(left)
    fac = np.empty((2, n_nodes, G))
    inv = np.empty((2, n_nodes, G))
    for node in range(n_nodes):
        for g in range(G):
            for ok in range(2):
                f = z[node] * (1.0 - t_nodes[g]) + ok * t_nodes[g]
                fac[ok, node, g] = f
                inv[ok, node, g] = 1.0 / f if f != 0.0 else 0.0
    width = 1
    for k in range(T):
        width = max(width, roots[k + 1] - roots[k])
    out = np.zeros((n, d))
    step = (n + n_blocks - 1) // n_blocks
    for blk in prange(n_blocks):
        F = np.empty((width, G))
        S = np.empty((width, G))
        Dd = np.empty((width, G))
        o = np.empty(width, np.int64)
        dec = np.empty(width, np.uint8)
        for i in range(blk * step, min(n, (blk + 1) * step)):
            x = X[i]
            row = out[i]
            for k in range(T):
                r0, r1 = roots[k], roots[k + 1]
                # down: the integrand's values at the nodes along each path
                for q in range(r0, r1):
                    node = order[q]
                    a = node - r0
                    for g in range(G):
                        Dd[a, g] = 0.0
                    if left[node] >= 0:
                        dec[a] = 1 if _goes_left(x[feature[node]], threshold[node],
                                                 default_left[node], missing[node], cat) else 0
                    if node == r0:
                        o[a] = 1
                        for g in range(G):
                            F[a, g] = 1.0
                        continue
                    pa = parent[node] - r0
                    ok = 1 if dec[pa] == is_left[node] else 0
                    pv = prev[node]
                    if pv >= 0:
                        # the feature's earlier factor is replaced by the combined one
                        ok *= o[pv - r0]
                        okp = o[pv - r0]
                        for g in range(G):
                            F[a, g] = F[pa, g] * fac[ok, node, g] * inv[okp, pv, g]
                    else:
                        for g in range(G):
                            F[a, g] = F[pa, g] * fac[ok, node, g]
                    o[a] = ok
                # up: sums over the leaves below, and each edge's share
                for q in range(r1 - 1, r0, -1):
                    node = order[q]
                    a = node - r0
                    if left[node] < 0:
                        v = value[node]
                        for g in range(G):
                            S[a, g] = v * F[a, g]
                    else:
                        la, ra = left[node] - r0, right[node] - r0
                        for g in range(G):
                            S[a, g] = S[la, g] + S[ra, g]
                    delta = o[a] - z[node]
                    if delta != 0.0:
                        acc = 0.0
                        oa = o[a]
                        for g in range(G):
                            acc += t_weights[g] * (S[a, g] - Dd[a, g]) * inv[oa, node, g]
                        row[feature[parent[node]]] += delta * acc
                    pv = prev[node]
                    if pv >= 0:
                        for g in range(G):
                            Dd[pv - r0, g] += S[a, g]
    return out


def gauss_nodes(degree):
    """Gauss-Legendre nodes and weights on [0, 1], exact for polynomials up to ``degree``."""
    G = max(1, (degree + 2) // 2)  # G nodes integrate degree 2 G - 1 exactly
    t, w = np.polynomial.legendre.leggauss(G)
    return (t + 1.0) / 2.0, w / 2.0


@njit(parallel=True, cache=True)
def pd_recursion(settings, position, left, right, feature, threshold, default_left, missing,
                 cat, value, cover, roots):
    """Partial dependence at each setting by the weighted traversal of every tree.

    A split on a feature of the setting (``position[f] >= 0``) follows the
    setting's value; any other split sends the weight down both sides in
    proportion to the children's covers.
    """
    G = settings.shape[0]
    T = len(roots) - 1
    out = np.zeros(G)
    for g in prange(G):
        nodes = np.empty(len(left), np.int64)
        weights = np.empty(len(left))
        acc = 0.0
        for k in range(T):
            top = 0
            nodes[0] = roots[k]
            weights[0] = 1.0
            while top >= 0:
                node = nodes[top]
                w = weights[top]
                top -= 1
                if left[node] < 0:
                    acc += w * value[node]
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
