"""numba kernels of TreeSHAP, leaf by leaf.

Both tree games are sums over leaves of product games.  For a leaf ``l``
with value :math:`v_l` whose path splits on the features :math:`P_l` (a
feature split on twice is one player), a row reaches the leaf under the
coalition :math:`S` with weight

.. math:: w_l(S) = \\prod_{k \\in P_l} (o_k \\text{ if } k \\in S \\text{ else } z_k),

where :math:`o_k \\in \\{0, 1\\}` says whether the row satisfies every split on
:math:`k` along the path and :math:`z_k` is

* path-dependent: the product of the cover ratios of those splits;
* interventional: whether the background row satisfies them (0 or 1), so
  that a background row enters only through the mask of the path features
  it fails: the background is counted per leaf and mask once
  (:func:`background_counts`), and a row's values read those counts.

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
import types

import numba
import numpy as np
from numba import njit, prange

__all__ = ["predict_leaves", "root_layout", "shapley_weights", "leaf_tables", "leaf_values",
           "background_counts", "background_masks", "interaction_values",
           "expected_leaf_value", "tree_edges", "pd_values_linear", "pd_recursion",
           "gauss_nodes", "MAX_PATH_FEATURES", "sized", "SERIAL_ROWS", "SERIAL_TABLE"]

#: Most distinct features on one root-to-leaf path (masks are 64-bit words).
MAX_PATH_FEATURES = 63
_ZERO = float(np.float32(1e-35))  # LightGBM's kZeroThreshold

#: A call over fewer rows than this (or a leaf table of fewer entries than
#: ``SERIAL_TABLE``) runs the kernel's serial twin: the same code compiled
#: without threads.  Threads save milliseconds there, while numba's parallel
#: lowering doubles the compile time of a kernel, most of a first run's wait
#: (about 20 s of CPU time for TreeSHAP and the tree H screen, 10 s serial).
#: Every parallel loop writes its own rows, blocks or parts, so both give
#: the same bits.
SERIAL_ROWS = 1024
SERIAL_TABLE = 1 << 20
_SERIAL: dict = {}


def sized(kernel, rows, *, limit=SERIAL_ROWS):
    """``kernel``, or its serial twin when ``rows`` is below ``limit``."""
    if rows >= limit:
        return kernel
    twin = _SERIAL.get(kernel)
    if twin is None:
        f = kernel.py_func
        copy = types.FunctionType(f.__code__, f.__globals__, f.__name__ + "_serial",
                                  f.__defaults__, f.__closure__)
        # its own name: numba's disk cache is keyed by the function's qualified name
        copy.__qualname__ = f.__qualname__ + "_serial"
        copy.__module__, copy.__doc__ = f.__module__, f.__doc__
        twin = _SERIAL[kernel] = njit(cache=True)(copy)
    return twin


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
def root_layout(left, right, feature, cover, roots):
    """Every tree's preorder and each leaf's distinct path features, in root-first order.

    Returns ``order, node_slot, node_new, parent, depth, leaf_node, leaf_roots,
    feat_off, feat_id, feat_z``:
    ``order`` lists every tree's nodes in preorder (trees in turn, so a parent
    comes before its children); ``node_slot[i]`` is the position of inner
    node ``i``'s feature among the distinct features of the path from the
    root down to ``i``, in order of first use (``node_new[i]``: first used at
    ``i``).  As a path's first uses do
    not depend on what lies below, that slot is the feature's bit in the
    masks of every leaf under ``i``.  Leaves are numbered in preorder, tree
    ``k`` owning ``leaf_roots[k]:leaf_roots[k+1]``; leaf ``l`` sits at node
    ``leaf_node[l]`` and its features are ``feat_id[feat_off[l]:feat_off[l+1]]``
    (slot order), with ``feat_z`` the product of the cover ratios of the
    path's splits on each.
    """
    n_nodes = len(left)
    T = len(roots) - 1
    order = np.empty(n_nodes, np.int64)
    parent = np.full(n_nodes, -1, np.int64)
    depth = np.zeros(n_nodes, np.int64)
    stack = np.empty(n_nodes + 1, np.int64)
    leaf_roots = np.zeros(T + 1, np.int64)
    q = 0
    n_leaves = 0
    total = 0
    max_d = 0
    for t in range(T):
        top = 0
        stack[0] = roots[t]
        while top >= 0:
            node = stack[top]
            top -= 1
            order[q] = node
            q += 1
            if left[node] < 0:
                n_leaves += 1
                total += depth[node]
                continue
            for c in (right[node], left[node]):
                parent[c] = node
                depth[c] = depth[node] + 1
                max_d = max(max_d, depth[c])
                top += 1
                stack[top] = c
        leaf_roots[t + 1] = n_leaves
    node_slot = np.zeros(n_nodes, np.int64)
    node_new = np.zeros(n_nodes, np.uint8)
    leaf_node = np.empty(n_leaves, np.int64)
    feat_off = np.zeros(n_leaves + 1, np.int64)
    feat_id = np.empty(total, np.int64)
    feat_z = np.empty(total)
    anc = np.empty(max_d + 1, np.int64)
    fl = np.empty(max_d + 1, np.int64)
    zl = np.empty(max_d + 1)
    l = 0
    f = 0
    for q in range(n_nodes):
        node = order[q]
        dd = depth[node]
        up = node
        for i in range(dd, -1, -1):
            anc[i] = up
            up = parent[up]
        k = 0
        for i in range(dd):
            par = anc[i]
            ff = feature[par]
            ratio = cover[anc[i + 1]] / cover[par] if cover[par] > 0 else 0.0
            s = -1
            for j in range(k):
                if fl[j] == ff:
                    s = j
                    break
            if s < 0:
                fl[k] = ff
                zl[k] = ratio
                k += 1
            else:
                zl[s] *= ratio
        if left[node] >= 0:
            s = k
            for j in range(k):
                if fl[j] == feature[node]:
                    s = j
                    break
            node_slot[node] = s
            node_new[node] = s == k
        else:
            leaf_node[l] = node
            for j in range(k):
                feat_id[f] = fl[j]
                feat_z[f] = zl[j]
                f += 1
            l += 1
            feat_off[l] = f
    return (order, node_slot, node_new, parent, depth, leaf_node, leaf_roots, feat_off,
            feat_id[:f], feat_z[:f])


@njit(inline="always", cache=True)
def _unsatisfied(x, r0, r1, order, left, right, feature, threshold, default_left, missing, cat,
                 node_slot, U):
    """``U[i - r0]``: the slots of node ``i``'s path features whose splits ``x`` fails.

    One pass over the tree ``r0:r1`` in preorder: a node's mask is its
    parent's, plus the parent's slot on the side the row does not take.
    """
    U[0] = 0
    for q in range(r0, r1):
        node = order[q]
        lc = left[node]
        if lc < 0:
            continue
        u = U[node - r0]
        # branch-free: which way a row goes is a coin toss the CPU cannot predict
        go = np.int64(_goes_left(x[feature[node]], threshold[node], default_left[node],
                                 missing[node], cat))
        s = node_slot[node]
        U[lc - r0] = u | ((1 - go) << s)
        U[right[node] - r0] = u | (go << s)


@njit(inline="always", cache=True)
def _popcount(m):
    c = 0
    while m:
        m &= m - 1
        c += 1
    return c


@njit(cache=True)
def _leaf_banzhaf(v, z, p, mask, out, base):
    """Add a leaf's path-dependent Banzhaf values for the satisfied set ``mask``.

    The leaf's game is :math:`v \\prod_k (o_k \\text{ if } k \\in S \\text{ else } z_k)`,
    so :math:`\\beta_j = v (o_j - z_j) \\prod_{k \\neq j} (o_k + z_k) / 2`.
    """
    prod = 1.0
    zeros = 0
    for k in range(p):
        f = (((mask >> k) & 1) + z[k]) * 0.5
        if f == 0.0:
            zeros += 1
        else:
            prod *= f
    if zeros > 1 or v == 0.0:
        return
    for k in range(p):
        o = (mask >> k) & 1
        f = (o + z[k]) * 0.5
        rest = prod / f if zeros == 0 else (prod if f == 0.0 else 0.0)
        out[base + k] += v * (o - z[k]) * rest


@njit(inline="always", cache=True)
def _iv_term(R, c, p, w, C, vm, out, base):
    """One background pattern's share of a leaf's interventional values.

    ``R``: the slots the background rows fail (all satisfied by the row),
    ``c`` of them; ``w``: how many slots the row fails.  The features of
    ``R`` gain ``C[|R|, w]``; the row's failed ones lose the returned amount.
    """
    u = _popcount(R)
    if u + w == 0:
        return 0.0
    if u > 0:
        g = vm * c * C[u, w]
        for k in range(p):
            if (R >> k) & 1:
                out[base + k] += g
    return vm * c * C[w, u] if w > 0 else 0.0


@njit(cache=True)
def _iv_leaf(vm, p, U, cnt, c0, sp_mask, sp_cnt, s0, s1, C, out, base):
    """Add a leaf's interventional values for a row failing the slots ``U``.

    Against a background row failing ``R``, the leaf is reached under the
    coalition ``S`` when ``S`` holds every slot the row alone satisfies
    (``R``) and none that only the background row satisfies (``U``): the game
    is 0 unless ``R`` and ``U`` are disjoint, and then the Shapley value of a feature of
    ``R`` is ``v (u - 1)! w! / (u + w)!``, of a feature of ``U`` ``-v u! (w - 1)!
    / (u + w)!`` (``u = |R|``, ``w = |U|``).  The background enters only as
    the count of its rows per ``R``: the dense table ``cnt[c0 + R]``
    (subsets of the row's satisfied slots are enumerated), or the distinct
    patterns ``sp_mask[s0:s1]`` with counts when the table would be too big.
    """
    full = (np.int64(1) << p) - 1
    a = full ^ U
    w = _popcount(U)
    loss = 0.0
    if c0 >= 0:
        R = a
        while True:
            c = cnt[c0 + R]
            if c != 0.0:
                loss += _iv_term(R, c, p, w, C, vm, out, base)
            if R == 0:
                break
            R = (R - 1) & a
    else:
        for s in range(s0, s1):
            R = sp_mask[s]
            if R & U == 0:
                loss += _iv_term(R, sp_cnt[s], p, w, C, vm, out, base)
    if loss != 0.0:
        for k in range(p):
            if (U >> k) & 1:
                out[base + k] -= loss


@njit(cache=True)
def _leaf_game(game, v, z, p, U, W, C, scale, cnt, c0, sp_mask, sp_cnt, s0, s1, q, r, out,
               base):
    """One leaf's values for a row failing ``U``, in the game ``game`` (see leaf_tables)."""
    full = (np.int64(1) << p) - 1
    if game == 0:
        _leaf_phi(v, z, p, full ^ U, W, q, r, out, base)
    elif game == 1:
        _leaf_banzhaf(v, z, p, full ^ U, out, base)
    else:
        _iv_leaf(v * scale, p, U, cnt, c0, sp_mask, sp_cnt, s0, s1, C, out, base)


@njit(parallel=True, cache=True)
def leaf_tables(leaf_value, feat_off, feat_z, tab_off, size, game, W, C, scale, cnt, cnt_off,
                partner, twin_slot, l_lo, l_hi):
    """Every leaf's values for every mask ``U`` of failed slots: ``table[tab_off[l] + U p]``.

    ``game``: 0 the path-dependent Shapley values, 1 the path-dependent
    Banzhaf values, 2 the interventional values with weights ``C`` (Shapley
    or Banzhaf) from the background counts ``cnt`` (times ``scale``, one
    over the background size).  Leaves ``l_lo:l_hi`` with ``tab_off >= 0``.

    A leaf with a ``partner`` (its right sibling, a leaf split on a feature
    new to the path: the same features, and a row fails exactly one of the
    two splits) holds both: the partner's values at the mask with that
    feature's bit flipped are added, and the partner is not read again.
    """
    table = np.zeros(size)
    none = np.zeros(0, np.int64)
    # a typed zero: a literal 0 would compile the leaf kernels a second time, for Literal[int]
    zero = np.int64(0)
    for l in prange(l_lo, l_hi):
        if tab_off[l] < 0:
            continue
        p = feat_off[l + 1] - feat_off[l]
        z = feat_z[feat_off[l]:feat_off[l + 1]]
        q = np.empty(p + 2)
        r = np.empty(p + 2)
        t = partner[l]
        for U in range(1 << p):
            _leaf_game(game, leaf_value[l], z, p, U, W, C, scale, cnt, cnt_off[l], none,
                       none * 0.0, zero, zero, q, r, table, tab_off[l] + U * p)
            if t >= 0:
                _leaf_game(game, leaf_value[t], feat_z[feat_off[t]:feat_off[t + 1]], p,
                           U ^ (np.int64(1) << twin_slot[t]), W, C, scale, cnt, cnt_off[t],
                           none, none * 0.0, zero, zero, q, r, table, tab_off[l] + U * p)
    return table


@njit(inline="always", cache=True)
def _descend(node, nb, lo, XT, left, feature, threshold, default_left, missing, cat, node_slot,
             parent, depth, Us, go):
    """A block of rows one node down the tree (preorder): their masks and decisions there.

    ``Us[depth]`` / ``go[depth]`` hold the failed-slot masks and the
    decisions of the rows ``lo:lo + nb`` at the current node of each depth,
    which in preorder are the current node's ancestors.  Returns the depth.
    """
    dd = depth[node]
    if dd == 0:
        for r in range(nb):
            Us[0, r] = 0
    else:
        par = parent[node]
        # a row fails the step when it goes the other way
        want = np.int64(left[par] == node)
        s = node_slot[par]
        for r in range(nb):
            Us[dd, r] = Us[dd - 1, r] | ((go[dd - 1, r] ^ want) << s)
    if left[node] >= 0:
        col = XT[feature[node]]
        thr, dl, miss = threshold[node], default_left[node], missing[node]
        for r in range(nb):
            go[dd, r] = np.int64(_goes_left(col[lo + r], thr, dl, miss, cat))
    return dd


@njit(inline="always", cache=True)
def _max_depth(depth, roots, t_lo, t_hi):
    d_max = 0
    for node in range(roots[t_lo], roots[t_hi]):
        d_max = max(d_max, depth[node])
    return d_max


@njit(parallel=True, cache=True)
def leaf_values(XT, left, right, feature, threshold, default_left, missing, cat, order,
                node_slot, parent, depth, roots, leaf_of, feat_off, feat_id, feat_z, leaf_value,
                t_lo, t_hi, tab_off, table, game, W, C, scale, cnt, cnt_off, sp_off, sp_mask,
                sp_cnt, block, out):
    """Add the values of trees ``t_lo:t_hi`` for every row to ``out`` (``XT``: rows, cast,
    transposed to features x rows).

    A block of rows goes down each tree together, one node at a time in
    preorder (:func:`_descend`), so the decisions of a node are one tight
    loop over the block; at a leaf each row's failed-slot mask picks its
    ``p`` values from the leaf's table (``tab_off >= 0``) or they are
    computed (:func:`_leaf_game`).  A tree's tables stay in cache for the
    block's rows.  Sums go to a (features x block) buffer first.
    """
    d, n = XT.shape
    p_max = 1
    for l in range(len(feat_off) - 1):
        p_max = max(p_max, feat_off[l + 1] - feat_off[l])
    d_max = _max_depth(depth, roots, t_lo, t_hi)
    n_blk = (n + block - 1) // block
    # a typed zero: a literal 0 would compile the leaf kernels a second time, for Literal[int]
    zero = np.int64(0)
    for b in prange(n_blk):
        Us = np.zeros((d_max + 1, block), np.int64)
        go = np.zeros((d_max + 1, block), np.int64)
        acc = np.zeros((d, block))
        q = np.empty(p_max + 2)
        r_ = np.empty(p_max + 2)
        local = np.zeros(p_max)
        lo = b * block
        nb = min(n, lo + block) - lo
        for k in range(t_lo, t_hi):
            for qn in range(roots[k], roots[k + 1]):
                node = order[qn]
                dd = _descend(node, nb, lo, XT, left, feature, threshold, default_left, missing,
                              cat, node_slot, parent, depth, Us, go)
                if left[node] >= 0:
                    continue
                l = leaf_of[node]
                if tab_off[l] == -2:  # a twin, merged into its sibling's table
                    continue
                f0 = feat_off[l]
                p = feat_off[l + 1] - f0
                if tab_off[l] >= 0:
                    t0 = tab_off[l]
                    for j in range(p):
                        a_j = acc[feat_id[f0 + j]]
                        for r in range(nb):
                            a_j[r] += table[t0 + Us[dd, r] * p + j]
                    continue
                for r in range(nb):
                    for j in range(p):
                        local[j] = 0.0
                    _leaf_game(game, leaf_value[l], feat_z[f0:f0 + p], p, Us[dd, r], W, C,
                               scale, cnt, cnt_off[l], sp_mask, sp_cnt, sp_off[l],
                               sp_off[l + 1], q, r_, local, zero)
                    for j in range(p):
                        acc[feat_id[f0 + j], r] += local[j]
        for r in range(nb):
            for f in range(d):
                out[lo + r, f] += acc[f, r]


@njit(parallel=True, cache=True)
def background_counts(BT, left, right, feature, threshold, default_left, missing, cat, order,
                      node_slot, parent, depth, roots, leaf_roots, leaf_of, feat_off, t_lo, t_hi,
                      cnt_off, twin, twin_slot, size, n_parts, block):
    """Rows per leaf and failed-slot mask: ``cnt[cnt_off[l] + R]`` (trees ``t_lo:t_hi``).

    The background's one pass, ``BT`` its transpose (features x rows): each
    row costs one preorder pass per tree and one increment per leaf, whatever
    the rows to explain.  A block of rows goes down a tree together, one
    node at a time, the masks of the current path kept by depth; ``n_parts``
    threads count into their own tables, summed at the end.  A leaf whose
    left sibling is a leaf split on a feature new to the path
    (``twin[l] >= 0``) is not counted: its counts are the sibling's with that
    feature's bit flipped, as every row fails exactly one of the two.
    """
    m = BT.shape[1]
    d_max = _max_depth(depth, roots, t_lo, t_hi)
    part = np.zeros((n_parts, size))
    step = (m + n_parts - 1) // n_parts
    for c in prange(n_parts):
        Us = np.zeros((d_max + 1, block), np.int64)
        go = np.zeros((d_max + 1, block), np.int64)
        acc = part[c]
        end = min(m, (c + 1) * step)
        for lo in range(c * step, end, block):
            nb = min(end, lo + block) - lo
            for k in range(t_lo, t_hi):
                for q in range(roots[k], roots[k + 1]):
                    node = order[q]
                    dd = _descend(node, nb, lo, BT, left, feature, threshold, default_left,
                                  missing, cat, node_slot, parent, depth, Us, go)
                    if left[node] >= 0:
                        continue
                    l = leaf_of[node]
                    if cnt_off[l] >= 0 and twin[l] < 0:
                        c0 = cnt_off[l]
                        for r in range(nb):
                            acc[c0 + Us[dd, r]] += 1.0
    cnt = np.zeros(size)
    for c in range(n_parts):
        cnt += part[c]
    for l in range(leaf_roots[t_lo], leaf_roots[t_hi]):
        t = twin[l]
        if t >= 0 and cnt_off[l] >= 0:
            bit = np.int64(1) << twin_slot[l]
            for U in range(1 << (feat_off[l + 1] - feat_off[l])):
                cnt[cnt_off[l] + U] = cnt[cnt_off[t] + (U ^ bit)]
    return cnt


@njit(parallel=True, cache=True)
def background_masks(B, left, right, feature, threshold, default_left, missing, cat, order,
                     node_slot, roots, leaf_roots, leaf_node, t_lo, t_hi, column, n_cols):
    """Each row's failed-slot mask at the leaves with ``column[l] >= 0``: ``(m, n_cols)``.

    For leaves of too many features for a dense table of counts.
    """
    m = B.shape[0]
    width = 1
    for k in range(t_lo, t_hi):
        width = max(width, roots[k + 1] - roots[k])
    out = np.empty((m, n_cols), np.int64)
    for i in prange(m):
        U = np.empty(width, np.int64)
        for k in range(t_lo, t_hi):
            r0, r1 = roots[k], roots[k + 1]
            _unsatisfied(B[i], r0, r1, order, left, right, feature, threshold, default_left,
                         missing, cat, node_slot, U)
            for l in range(leaf_roots[k], leaf_roots[k + 1]):
                if column[l] >= 0:
                    out[i, column[l]] = U[leaf_node[l] - r0]
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


@njit(inline="always", cache=True)
def _iv_pair_term(R, c, U, p, w, I_UU, I_UW, I_WW, M, g):
    """One background pattern's share of a leaf's interaction indices (see iv_interactions)."""
    u = _popcount(R)
    if u >= 2:
        wt = c * I_UU[u, w]
        for i in range(p):
            if (R >> i) & 1:
                for j in range(i + 1, p):
                    if (R >> j) & 1:
                        M[i, j] += wt
    if u >= 1 and w >= 1:
        wt = c * I_UW[u, w]
        for i in range(p):
            if (R >> i) & 1:
                g[i] += wt
    return c * I_WW[u, w] if w >= 2 else 0.0


@njit(parallel=True, cache=True)
def interaction_values(X, left, right, feature, threshold, default_left, missing, cat, order,
                       node_slot, roots, leaf_roots, leaf_node, leaf_value, feat_off, feat_id,
                       feat_z, t_lo, t_hi, game, W2, I_UU, I_UW, I_WW, scale, cnt, cnt_off,
                       sp_off, sp_mask, sp_cnt, out):
    """Add half the Shapley interaction index of every pair (trees ``t_lo:t_hi``) to ``out``.

    Off the diagonal, :math:`\\Phi_{ij} = \\frac12 \\sum_{S \\subseteq N \\setminus
    \\{i, j\\}} \\frac{|S|! (M - |S| - 2)!}{(M - 1)!} \\nabla_{ij}(S)`, leaf by leaf
    (the caller fills the diagonal with :math:`\\phi_i - \\sum_{j \\neq i} \\Phi_{ij}`).

    * ``game == 0``, path-dependent: with :math:`W_2(s, p) = s! (p - s - 2)! /
      (p - 1)!`, :math:`\\frac12 v (o_i - z_i)(o_j - z_j) \\sum_s W_2(s, p)
      [\\prod_{k \\neq i, j} (z_k + o_k y)]_s`.
    * ``game == 2``, interventional: against background rows failing ``R``
      (disjoint from the row's failed ``U``, ``u = |R|``, ``w = |U|``) the leaf's
      game is :math:`v [R \\subseteq S, S \\cap U = \\emptyset]`, whose index is
      :math:`v (u-2)! w! / (u+w-1)!` for two features of ``R``, :math:`-v (u-1)!
      (w-1)! / (u+w-1)!` for one of ``R`` and one of ``U``, :math:`v u! (w-2)! /
      (u+w-1)!` for two of ``U``, and 0 for a feature both satisfy.
    """
    n, d = X.shape
    width = 1
    p_max = 2
    for k in range(t_lo, t_hi):
        width = max(width, roots[k + 1] - roots[k])
        for l in range(leaf_roots[k], leaf_roots[k + 1]):
            p_max = max(p_max, feat_off[l + 1] - feat_off[l])
    for i in prange(n):
        U = np.empty(width, np.int64)
        q = np.empty(p_max + 2)
        o = np.empty(p_max)
        M = np.zeros((p_max, p_max))
        g = np.zeros(p_max)
        Mi = out[i]
        for k in range(t_lo, t_hi):
            r0, r1 = roots[k], roots[k + 1]
            _unsatisfied(X[i], r0, r1, order, left, right, feature, threshold, default_left,
                         missing, cat, node_slot, U)
            for l in range(leaf_roots[k], leaf_roots[k + 1]):
                f0 = feat_off[l]
                p = feat_off[l + 1] - f0
                if p < 2:
                    continue
                u_row = U[leaf_node[l] - r0]
                v = leaf_value[l]
                if game == 0:
                    z = feat_z[f0:f0 + p]
                    for a in range(p):
                        o[a] = 1.0 if not (u_row >> a) & 1 else 0.0
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
                            Mi[fa, fc] += val
                            Mi[fc, fa] += val
                    continue
                for a in range(p):
                    g[a] = 0.0
                    for c in range(p):
                        M[a, c] = 0.0
                full = (np.int64(1) << p) - 1
                sat = full ^ u_row
                w = _popcount(u_row)
                ww = 0.0
                if cnt_off[l] >= 0:
                    R = sat
                    while True:
                        c = cnt[cnt_off[l] + R]
                        if c != 0.0:
                            ww += _iv_pair_term(R, c, u_row, p, w, I_UU, I_UW, I_WW, M, g)
                        if R == 0:
                            break
                        R = (R - 1) & sat
                else:
                    for s in range(sp_off[l], sp_off[l + 1]):
                        R = sp_mask[s]
                        if R & u_row == 0:
                            ww += _iv_pair_term(R, sp_cnt[s], u_row, p, w, I_UU, I_UW, I_WW,
                                                M, g)
                half = 0.5 * v * scale
                for a in range(p):
                    in_u = (u_row >> a) & 1
                    for c in range(a + 1, p):
                        in_uc = (u_row >> c) & 1
                        if in_u and in_uc:
                            val = ww
                        elif in_u:
                            val = -g[c]
                        elif in_uc:
                            val = -g[a]
                        else:
                            val = M[a, c]
                        if val != 0.0:
                            fa, fc = feat_id[f0 + a], feat_id[f0 + c]
                            Mi[fa, fc] += half * val
                            Mi[fc, fa] += half * val


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



# ------------------------------------------------ leaf paths and row masks (ml.interactions)
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

