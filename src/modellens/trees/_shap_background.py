"""Interventional (background) TreeSHAP kernels: the background's counts per leaf and
mask, each leaf's table over masks, the rows' values and interaction indices
(the formulas are in :mod:`._kernels`)."""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit, prange

from ._traverse import _descend, _max_depth, _popcount, _unsatisfied

__all__ = ["Counts", "Tables", "shapley_weights", "leaf_tables", "leaf_values",
           "background_counts", "background_masks", "interaction_values"]

#: The background's counts for a group of trees: rows per leaf and failed-slot mask in a
#: dense table (``cnt[cnt_off[l] + R]``, ``cnt_off[l] < 0``: none), and for leaves of too
#: many features the distinct masks ``sp_mask[sp_off[l]:sp_off[l + 1]]`` with their counts.
Counts = namedtuple("Counts", "cnt cnt_off sp_off sp_mask sp_cnt")
#: The leaves' value tables (:func:`leaf_tables`) and where each leaf's starts.
Tables = namedtuple("Tables", "tab_off partner table")


def shapley_weights(p_max):
    """``W[p, s] = s! (p - s - 1)! / p!`` for ``0 <= s < p <= p_max``."""
    W = np.zeros((p_max + 1, p_max + 1))
    for p in range(1, p_max + 1):
        for s in range(p):
            W[p, s] = math.exp(math.lgamma(s + 1) + math.lgamma(p - s) - math.lgamma(p + 1))
    return W


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


@njit(parallel=True, cache=True)
def leaf_tables(leaf_value, feat_off, tab_off, size, C, scale, cnt, cnt_off, partner,
                twin_slot, l_lo, l_hi):
    """Every leaf's interventional values for every mask ``U`` of failed slots.

    ``leaf_value`` is ``(leaves, K)``: one column per output a leaf feeds at
    once (a forest's classes; 1 for a booster's tree of one class).  With one
    column the value enters the enumeration and the table holds the values:
    ``table[tab_off[l] + U p + j]`` for slot ``j``.  With several the table
    holds the leaf's unit game (value 1), shared by every column: a leaf's
    game is linear in its value, so the rows scale what they read by each
    column's value (:func:`leaf_values`), and the table is the size of one
    output's.  The weights ``C`` (Shapley or Banzhaf) apply to the background
    counts ``cnt`` (times ``scale``, one over the background size).  Leaves
    ``l_lo:l_hi`` with ``tab_off >= 0``.

    A leaf with a ``partner`` (its right sibling, a leaf split on a feature
    new to the path: the same features, and a row fails exactly one of the
    two splits) holds both: the partner's values at the mask with that
    feature's bit flipped are added (one column), or follow the leaf's own
    unit values at the same mask (``table[tab_off[l] + (2 U + 1) p + j]``,
    several columns, each leaf's value scaling its own), and the partner is
    not read again.
    """
    table = np.zeros(size)
    none = np.zeros(0, np.int64)
    # a typed zero: a literal 0 would compile the leaf kernels a second time, for Literal[int]
    zero = np.int64(0)
    n_col = leaf_value.shape[1]
    for l in prange(l_lo, l_hi):
        if tab_off[l] < 0:
            continue
        p = feat_off[l + 1] - feat_off[l]
        t = partner[l]
        if n_col == 1:  # the value enters the enumeration, as for one output
            for U in range(1 << p):
                _iv_leaf(leaf_value[l, 0] * scale, p, U, cnt, cnt_off[l], none, none * 0.0,
                         zero, zero, C, table, tab_off[l] + U * p)
                if t >= 0:
                    _iv_leaf(leaf_value[t, 0] * scale, p, U ^ (np.int64(1) << twin_slot[t]),
                             cnt, cnt_off[t], none, none * 0.0, zero, zero, C, table,
                             tab_off[l] + U * p)
            continue
        w = 1 if t < 0 else 2
        for U in range(1 << p):
            _iv_leaf(scale, p, U, cnt, cnt_off[l], none, none * 0.0, zero, zero, C, table,
                     tab_off[l] + U * w * p)
            if t >= 0:
                _iv_leaf(scale, p, U ^ (np.int64(1) << twin_slot[t]), cnt, cnt_off[t], none,
                         none * 0.0, zero, zero, C, table, tab_off[l] + (U * w + 1) * p)
    return table


@njit(inline="always", cache=True)
def _tabled_leaf(acc, lay, tabs, l, o0, Ud, nb, own, twin, row):
    """Add a tabled leaf's values for the block's rows (failed-slot masks ``Ud``) to ``acc``."""
    feat_id, leaf_value = lay.feat_id, lay.leaf_value
    table, partner = tabs.table, tabs.partner
    n_col = leaf_value.shape[1]
    f0 = lay.feat_off[l]
    p = lay.feat_off[l + 1] - f0
    t0 = tabs.tab_off[l]
    if n_col == 1:
        for j in range(p):
            a_j0 = acc[feat_id[f0 + j], o0]
            for r in range(nb):
                a_j0[r] += table[t0 + Ud[r] * p + j]
        return
    t = partner[l]
    w = 1 if t < 0 else 2
    for r in range(nb):
        row[r] = t0 + Ud[r] * w * p
    for j in range(p):
        # the unit values once per row, then every column scales them
        for r in range(nb):
            own[r] = table[row[r] + j]
        if t >= 0:
            for r in range(nb):
                twin[r] = table[row[r] + p + j]
        a_j = acc[feat_id[f0 + j]]
        for c in range(n_col):
            a_jc = a_j[o0 + c]
            v = leaf_value[l, c]
            if t >= 0:
                vt = leaf_value[t, c]
                for r in range(nb):
                    a_jc[r] += v * own[r] + vt * twin[r]
            else:
                for r in range(nb):
                    a_jc[r] += v * own[r]


@njit(inline="always", cache=True)
def _computed_leaf(acc, lay, l, o0, Ud, nb, C, scale, counts, local):
    """Add an untabled leaf's values for the block's rows, each computed (:func:`_iv_leaf`)."""
    feat_id, leaf_value = lay.feat_id, lay.leaf_value
    n_col = leaf_value.shape[1]
    f0 = lay.feat_off[l]
    p = lay.feat_off[l + 1] - f0
    # a typed zero: a literal 0 would compile the leaf kernels a second time, for Literal[int]
    zero = np.int64(0)
    # one column: its value enters the game, as for one output
    vm = leaf_value[l, 0] * scale if n_col == 1 else scale
    for r in range(nb):
        for j in range(p):
            local[j] = 0.0
        _iv_leaf(vm, p, Ud[r], counts.cnt, counts.cnt_off[l], counts.sp_mask, counts.sp_cnt,
                 counts.sp_off[l], counts.sp_off[l + 1], C, local, zero)
        for j in range(p):
            if n_col == 1:
                acc[feat_id[f0 + j], o0, r] += local[j]
            else:
                for c in range(n_col):
                    acc[feat_id[f0 + j], o0 + c, r] += leaf_value[l, c] * local[j]


@njit(cache=True)
def _iv_trees(XT, nodes, lay, tabs, lo, nb, trees, o_lo, leaf_game, buf):
    """The rows ``lo:lo + nb`` down each tree of ``trees`` in turn (one task of
    :func:`leaf_values`): their values into ``acc`` of ``buf``, whose output ``o`` is
    the ensemble's ``o_lo + o``; ``leaf_game = (C, scale, counts)``."""
    C, scale, counts = leaf_game
    Us, go, acc, local, own, twin, row = buf
    left, order, roots, leaf_of = nodes.left, lay.order, lay.roots, lay.leaf_of
    tab_off = tabs.tab_off
    for q in range(len(trees)):
        k = trees[q]
        o0 = lay.tree_out[k] - o_lo
        for qn in range(roots[k], roots[k + 1]):
            node = order[qn]
            dd = _descend(node, nb, lo, XT, nodes, lay, Us, go)
            if left[node] >= 0:
                continue
            l = leaf_of[node]
            if tab_off[l] == -2:  # a twin, merged into its sibling's table
                continue
            if tab_off[l] >= 0:
                _tabled_leaf(acc, lay, tabs, l, o0, Us[dd], nb, own, twin, row)
            else:
                _computed_leaf(acc, lay, l, o0, Us[dd], nb, C, scale, counts, local)


@njit(parallel=True, cache=True)
def leaf_values(XT, nodes, lay, t_lo, t_hi, tabs, C, scale, counts, block, out, split):
    """Add the interventional values of trees ``t_lo:t_hi`` for every row to ``out``
    (``(n, d, k)``; ``XT``: rows, cast, transposed to features x rows).

    Tree ``t``'s value column ``c`` (``leaf_value`` is ``(leaves, K)``) feeds
    output ``tree_out[t] + c``: a booster's tree its class (``K = 1``), a
    forest's tree every class at once, so every output is one traversal.
    A block of rows goes down each tree together, one node at a time in
    preorder (:func:`_descend`), so the decisions of a node are one tight
    loop over the block; at a leaf each row's failed-slot mask picks its
    ``p`` values from the leaf's table (``tab_off >= 0``, :func:`leaf_tables`)
    or they are computed (:func:`_iv_leaf`); with several columns they are the
    unit game's, read once and scaled by each column's value (and the merged
    partner's ``p`` after them by its own).  A tree's tables stay in cache for
    the block's rows.  Sums go to a (features x outputs x block) buffer first.

    One task per block of rows and group of trees of ``split`` (as in
    :func:`~._shap_path.pd_quadrature`: groups feed disjoint outputs, so tasks
    write apart and the bits do not depend on the threads).
    """
    d, n = XT.shape
    off, trees, o_lo, o_hi = split
    p_max = 1
    for l in range(len(lay.feat_off) - 1):
        p_max = max(p_max, lay.feat_off[l + 1] - lay.feat_off[l])
    d_max = _max_depth(lay.depth, lay.roots, t_lo, t_hi)
    n_blk = (n + block - 1) // block
    n_grp = len(off) - 1
    for task in prange(n_blk * n_grp):
        b, q = task // n_grp, task % n_grp
        mine = trees[off[q]:off[q + 1]]
        mine = mine[(mine >= t_lo) & (mine < t_hi)]
        k_task = o_hi[q] - o_lo[q]
        acc = np.zeros((d, k_task, block))
        buf = (np.zeros((d_max + 1, block), np.int64), np.zeros((d_max + 1, block), np.int64),
               acc, np.zeros(p_max), np.zeros(block), np.zeros(block),
               np.zeros(block, np.int64))
        lo = b * block
        nb = min(n, lo + block) - lo
        _iv_trees(XT, nodes, lay, tabs, lo, nb, mine, o_lo[q], (C, scale, counts), buf)
        for r in range(nb):
            for f in range(d):
                for o in range(k_task):
                    out[lo + r, f, o_lo[q] + o] += acc[f, o, r]


@njit(parallel=True, cache=True)
def background_counts(BT, nodes, lay, t_lo, t_hi, cnt_off, size, n_parts, block, n_chunks):
    """Rows per leaf and failed-slot mask: ``cnt[cnt_off[l] + R]`` (trees ``t_lo:t_hi``).

    The background's one pass, ``BT`` its transpose (features x rows): each
    row costs one preorder pass per tree and one increment per leaf, whatever
    the rows to explain.  A block of rows goes down a tree together, one
    node at a time, the masks of the current path kept by depth; ``n_parts``
    parts of the rows count into their own tables, summed at the end, and
    within a part the trees are cut into ``n_chunks`` chunks counted apart (their leaves'
    entries are apart: a small background of a many-tree model gives every
    thread work; the counts are whole numbers, the same in any order).  A leaf whose
    left sibling is a leaf split on a feature new to the path
    (``twin[l] >= 0``) is not counted: its counts are the sibling's with that
    feature's bit flipped, as every row fails exactly one of the two.
    """
    m = BT.shape[1]
    left, order, roots, leaf_roots, leaf_of = nodes.left, lay.order, lay.roots, \
        lay.leaf_roots, lay.leaf_of
    feat_off, twin, twin_slot = lay.feat_off, lay.twin, lay.twin_slot
    d_max = _max_depth(lay.depth, roots, t_lo, t_hi)
    part = np.zeros((n_parts, size))
    step = (m + n_parts - 1) // n_parts
    n_chunks = max(1, min(t_hi - t_lo, n_chunks))
    width = (t_hi - t_lo + n_chunks - 1) // n_chunks
    for task in prange(n_parts * n_chunks):
        c, h = task // n_chunks, task % n_chunks
        Us = np.zeros((d_max + 1, block), np.int64)
        go = np.zeros((d_max + 1, block), np.int64)
        acc = part[c]
        end = min(m, (c + 1) * step)
        for lo in range(c * step, end, block):
            nb = min(end, lo + block) - lo
            for k in range(t_lo + h * width, min(t_hi, t_lo + (h + 1) * width)):
                for q in range(roots[k], roots[k + 1]):
                    node = order[q]
                    dd = _descend(node, nb, lo, BT, nodes, lay, Us, go)
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
def background_masks(B, nodes, lay, t_lo, t_hi, column, n_cols):
    """Each row's failed-slot mask at the leaves with ``column[l] >= 0``: ``(m, n_cols)``.

    For leaves of too many features for a dense table of counts.
    """
    m = B.shape[0]
    roots, leaf_roots, leaf_node = lay.roots, lay.leaf_roots, lay.leaf_node
    width = 1
    for k in range(t_lo, t_hi):
        width = max(width, roots[k + 1] - roots[k])
    out = np.empty((m, n_cols), np.int64)
    for i in prange(m):
        U = np.empty(width, np.int64)
        for k in range(t_lo, t_hi):
            r0, r1 = roots[k], roots[k + 1]
            _unsatisfied(B[i], r0, r1, nodes, lay, U)
            for l in range(leaf_roots[k], leaf_roots[k + 1]):
                if column[l] >= 0:
                    out[i, column[l]] = U[leaf_node[l] - r0]
    return out


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
def interaction_values(X, nodes, lay, t_lo, t_hi, I_UU, I_UW, I_WW, scale, counts, out):
    """Add half the interventional Shapley interaction index of every pair (trees
    ``t_lo:t_hi``) to ``out`` (``(n, d, d, k)``; value column ``c`` of tree ``t``
    feeds output ``tree_out[t] + c``, as in :func:`leaf_values`).

    Off the diagonal, :math:`\\Phi_{ij} = \\frac12 \\sum_{S \\subseteq N \\setminus
    \\{i, j\\}} \\frac{|S|! (M - |S| - 2)!}{(M - 1)!} \\nabla_{ij}(S)`, leaf by leaf
    (the caller fills the diagonal with :math:`\\phi_i - \\sum_{j \\neq i} \\Phi_{ij}`).

    Against background rows failing ``R`` (disjoint from the row's failed ``U``,
    ``u = |R|``, ``w = |U|``) the leaf's game is :math:`v [R \\subseteq S, S \\cap U =
    \\emptyset]`, whose index is :math:`v (u-2)! w! / (u+w-1)!` for two features of
    ``R``, :math:`-v (u-1)! (w-1)! / (u+w-1)!` for one of ``R`` and one of ``U``,
    :math:`v u! (w-2)! / (u+w-1)!` for two of ``U``, and 0 for a feature both satisfy.
    (The path-dependent index comes from :func:`pd_quadrature`.)
    """
    n, d = X.shape
    roots, leaf_roots, leaf_node, leaf_value = lay.roots, lay.leaf_roots, lay.leaf_node, \
        lay.leaf_value
    tree_out, feat_off, feat_id = lay.tree_out, lay.feat_off, lay.feat_id
    cnt, cnt_off, sp_off, sp_mask, sp_cnt = counts.cnt, counts.cnt_off, counts.sp_off, \
        counts.sp_mask, counts.sp_cnt
    n_col = leaf_value.shape[1]
    width = 1
    p_max = 2
    for k in range(t_lo, t_hi):
        width = max(width, roots[k + 1] - roots[k])
        for l in range(leaf_roots[k], leaf_roots[k + 1]):
            p_max = max(p_max, feat_off[l + 1] - feat_off[l])
    for i in prange(n):
        U = np.empty(width, np.int64)
        M = np.zeros((p_max, p_max))
        g = np.zeros(p_max)
        Mi = out[i]
        for k in range(t_lo, t_hi):
            r0, r1 = roots[k], roots[k + 1]
            o0 = tree_out[k]
            _unsatisfied(X[i], r0, r1, nodes, lay, U)
            for l in range(leaf_roots[k], leaf_roots[k + 1]):
                f0 = feat_off[l]
                p = feat_off[l + 1] - f0
                if p < 2:
                    continue
                u_row = U[leaf_node[l] - r0]
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
                            for o in range(n_col):
                                half = 0.5 * leaf_value[l, o] * scale
                                Mi[fa, fc, o0 + o] += half * val
                                Mi[fc, fa, o0 + o] += half * val
