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
:math:`W(s, p) = s! (p - s - 1)! / p!` and :math:`p = |P_l|`.

**Path-dependent values by quadrature** (:func:`pd_quadrature`).  As
:math:`W(s, p) = \\int_0^1 t^s (1 - t)^{p - 1 - s} dt` (a Beta integral), the
sum over coalitions is an integral of one product of linear factors
(Quadrature-TreeSHAP, Wettenstein, Mitchell & Yu, arXiv 2605.04497; the
same identity as Linear TreeSHAP, Yu et al. 2022):

.. math:: \\phi_j = \\sum_l v_l (o_{lj} - z_{lj}) \\int_0^1
          \\prod_{k \\in P_l, k \\neq j} f_{lk}(t) \\, dt, \\qquad
          f_{lk}(t) = z_{lk} (1 - t) + o_{lk} t.

The integrand is a polynomial of degree :math:`p - 1`, so ``G = ceil(p_max /
2)`` Gauss-Legendre nodes :math:`t_g` with weights :math:`w_g` on [0, 1]
integrate it exactly (:func:`gauss_nodes`; 8 nodes up to 16 distinct path
features, more for deeper trees).  The weighted Banzhaf value
:math:`\\beta_j(t) = \\sum_l v_l (o_{lj} - z_{lj}) \\prod_{k \\neq j} f_{lk}(t)`
is the integrand itself; the Banzhaf value is :math:`\\beta_j(1/2)` (one node,
weight 1).  Leaves share the factors of their common ancestors, so the
products are carried down each tree and the sums over the leaves below each
edge carried up: :math:`O(G)` per node and row, :math:`O(L D)` per tree and
row, where the per-leaf polynomial forms cost :math:`O(L D^2)`.  A feature
split on again deeper down has one merged factor (the product of its
:math:`o` and of its cover ratios), replaced at each such split.

The pairwise Shapley interaction index of the product game has weights
:math:`s! (p - s - 2)! / (p - 1)! = \\int_0^1 t^s (1 - t)^{p - 2 - s} dt`, so off
the diagonal

.. math:: \\Phi_{ij} = \\frac12 \\sum_l v_l (o_{li} - z_{li})(o_{lj} - z_{lj})
          \\sum_g w_g \\prod_{k \\neq i, j} f_{lk}(t_g),

:math:`O(p^2 G)` per leaf and row (:func:`_leaf_pairs`), and the diagonal is
:math:`\\phi_i - \\sum_{j \\neq i} \\Phi_{ij}`.  Every term is a product of
factors in [0, 1] times a leaf value: no alternating sums of polynomial
coefficients, so depth costs no digits.

**Interventional values** (:func:`leaf_values`): the answer depends on the
row only through the bit mask :math:`o`, so small leaves get a table over
all :math:`2^p` masks (FastTreeSHAP's idea, Yang 2021) and a row then costs
:math:`O(p)` per leaf once its mask is known.
"""

from __future__ import annotations

import math
import types

import numpy as np
from numba import njit, prange

__all__ = ["predict_leaves", "root_layout", "shapley_weights", "leaf_tables", "leaf_values",
           "background_counts", "background_masks", "interaction_values",
           "expected_leaf_value", "pd_quadrature", "pd_recursion",
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
def root_layout(left, right, feature, cover, roots):
    """Every tree's preorder and each leaf's distinct path features, in root-first order.

    Returns ``order, node_slot, node_new, parent, depth, leaf_node, leaf_roots,
    feat_off, feat_id, feat_z, prev, edge_z, feat_depth``:
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
    path's splits on each and ``feat_depth`` the depth of the node below the
    deepest of them.  Per node, ``prev[i]`` is the node below the nearest
    earlier split on the feature of the split above ``i`` (-1 if none) and
    ``edge_z[i]`` the product of the cover ratios of the splits on that
    feature from the root down to ``i``.
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
    feat_depth = np.empty(total, np.int64)
    prev = np.full(n_nodes, -1, np.int64)
    edge_z = np.ones(n_nodes)
    anc = np.empty(max_d + 1, np.int64)
    fl = np.empty(max_d + 1, np.int64)
    zl = np.empty(max_d + 1)
    dl = np.empty(max_d + 1, np.int64)
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
                s = k
                fl[k] = ff
                zl[k] = ratio
                k += 1
                last = -1
            else:
                zl[s] *= ratio
                last = anc[dl[s]]
            dl[s] = i + 1
            if i == dd - 1:
                prev[node] = last
                edge_z[node] = zl[s]
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
                feat_depth[f] = dl[j]
                f += 1
            l += 1
            feat_off[l] = f
    return (order, node_slot, node_new, parent, depth, leaf_node, leaf_roots, feat_off,
            feat_id[:f], feat_z[:f], prev, edge_z, feat_depth[:f])


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
                node_slot, parent, depth, roots, leaf_of, feat_off, feat_id, leaf_value,
                tree_out, t_lo, t_hi, tab_off, partner, table, C, scale, cnt, cnt_off, sp_off,
                sp_mask, sp_cnt, block, out):
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
    """
    d, n = XT.shape
    n_col, k_out = leaf_value.shape[1], out.shape[2]
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
        acc = np.zeros((d, k_out, block))
        local = np.zeros(p_max)
        own = np.zeros(block)
        twin = np.zeros(block)
        row = np.zeros(block, np.int64)
        lo = b * block
        nb = min(n, lo + block) - lo
        for k in range(t_lo, t_hi):
            o0 = tree_out[k]
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
                    if n_col == 1:
                        for j in range(p):
                            a_j0 = acc[feat_id[f0 + j], o0]
                            for r in range(nb):
                                a_j0[r] += table[t0 + Us[dd, r] * p + j]
                        continue
                    t = partner[l]
                    w = 1 if t < 0 else 2
                    for r in range(nb):
                        row[r] = t0 + Us[dd, r] * w * p
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
                    continue
                # one column: its value enters the game, as for one output
                vm = leaf_value[l, 0] * scale if n_col == 1 else scale
                for r in range(nb):
                    for j in range(p):
                        local[j] = 0.0
                    _iv_leaf(vm, p, Us[dd, r], cnt, cnt_off[l], sp_mask, sp_cnt, sp_off[l],
                             sp_off[l + 1], C, local, zero)
                    for j in range(p):
                        if n_col == 1:
                            acc[feat_id[f0 + j], o0, r] += local[j]
                        else:
                            for c in range(n_col):
                                acc[feat_id[f0 + j], o0 + c, r] += leaf_value[l, c] * local[j]
        for r in range(nb):
            for f in range(d):
                for o in range(k_out):
                    out[lo + r, f, o] += acc[f, o, r]


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
                       node_slot, roots, leaf_roots, leaf_node, leaf_value, tree_out, feat_off,
                       feat_id, t_lo, t_hi, I_UU, I_UW, I_WW, scale, cnt, cnt_off, sp_off,
                       sp_mask, sp_cnt, out):
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
            _unsatisfied(X[i], r0, r1, order, left, right, feature, threshold, default_left,
                         missing, cat, node_slot, U)
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


@njit(cache=True)
def expected_leaf_value(leaf_value, feat_off, feat_z, leaf_roots, tree_out, k_out):
    """The path-dependent game's empty coalition of every output: leaves weighted by their
    cover ratios (value column ``c`` of tree ``t`` feeds output ``tree_out[t] + c``)."""
    total = np.zeros(k_out)
    for t in range(len(leaf_roots) - 1):
        o0 = tree_out[t]
        for l in range(leaf_roots[t], leaf_roots[t + 1]):
            w = 1.0
            for k in range(feat_off[l], feat_off[l + 1]):
                w *= feat_z[k]
            for c in range(leaf_value.shape[1]):
                total[o0 + c] += leaf_value[l, c] * w
    return total


@njit(cache=True)
def _close(c, nb, t_weights, inv0, dinv, edge_z, prev, depth, feature, parent, O, S, T, H,
           acc, o0):
    """Node ``c`` is finished: credit its edge and pass its sums up.

    ``S[depth, g, column, row]`` holds one sum per value column; the edge's
    factor ``H`` is shared by them, and column ``j`` is credited to output
    ``o0 + j`` of ``acc`` (features x outputs x rows).
    """
    G = len(t_weights)
    n_col = S.shape[2]
    dd = depth[c]
    zc = edge_z[c]
    a = prev[c]
    pa = depth[a] if a >= 0 else 0
    za = edge_z[a] if a >= 0 else 0.0
    live = 0.0 if a < 0 else 1.0
    ia = a if a >= 0 else c
    for j in range(n_col):
        for r in range(nb):
            T[j, r] = 0.0
    for g in range(G):
        wg = t_weights[g]
        i0c, dic = inv0[c, g], dinv[c, g]
        i0a, dia = live * inv0[ia, g], live * dinv[ia, g]
        for r in range(nb):
            oc = O[dd, r]
            oa = O[pa, r]
            H[r] = (oc - zc) * (i0c + oc * dic) - (oa - za) * (i0a + oa * dia)
        for j in range(n_col):
            Sj, Tj, Up = S[dd, g, j], T[j], S[dd - 1, g, j]
            for r in range(nb):
                Tj[r] += wg * Sj[r] * H[r]
                Up[r] += Sj[r]
    a_f = acc[feature[parent[c]]]
    for j in range(n_col):
        for r in range(nb):
            a_f[o0 + j, r] += T[j, r]


@njit(cache=True)
def _leaf_pairs(v, f0, p, nb, t_nodes, t_weights, feat_id, feat_z, feat_depth, O, Ol, Dl, P,
                Inv, A, T, M, o0):
    """Add half the interaction index of every pair of a leaf's features to
    ``M[i, j, o0 + c, r]`` for each value ``v[c]`` of the leaf."""
    G = len(t_nodes)
    n_col = len(v)
    # one column: its value enters the products, as for one output
    v0 = v[0] if n_col == 1 else 1.0
    for g in range(G):
        for r in range(nb):
            P[g, r] = 0.5 * v0 * t_weights[g]
    for a in range(p):
        za = feat_z[f0 + a]
        Oa = O[feat_depth[f0 + a]]
        for r in range(nb):
            Ol[a, r] = Oa[r]
            Dl[a, r] = Oa[r] - za
        for g in range(G):
            tg = t_nodes[g]
            for r in range(nb):
                fa = za * (1.0 - tg) + Oa[r] * tg
                P[g, r] *= fa
                # f = 0 only where o = z = 0: then P = 0 and delta = 0, the leaf adds nothing
                Inv[a, g, r] = 1.0 / fa if fa != 0.0 else 0.0
    for a in range(p - 1):
        for g in range(G):
            for r in range(nb):
                A[g, r] = P[g, r] * Inv[a, g, r] * Dl[a, r]
        fa_ = feat_id[f0 + a]
        for c in range(a + 1, p):
            for r in range(nb):
                T[r] = 0.0
            for g in range(G):
                for r in range(nb):
                    T[r] += A[g, r] * Inv[c, g, r]
            Mc = M[fa_, feat_id[f0 + c]]
            if n_col == 1:
                for r in range(nb):
                    Mc[o0, r] += T[r] * Dl[c, r]
            else:
                for j in range(n_col):
                    for r in range(nb):
                        Mc[o0 + j, r] += T[r] * Dl[c, r] * v[j]


@njit(parallel=True, cache=True)
def pd_quadrature(XT, left, right, feature, threshold, default_left, missing, cat, value,
                  tree_out, roots, order, parent, depth, prev, edge_z, leaf_of, feat_off,
                  feat_id, feat_z, feat_depth, t_nodes, t_weights, block, out, pairs):
    """Add the path-dependent values of every tree and row to ``out`` (``(n, d, k)``), and
    half their interaction indices off the diagonal to ``pairs`` (``(n, d, d, k)``) unless
    it is empty.

    ``value`` is ``(nodes, K)``: column ``c`` of tree ``t`` feeds output
    ``tree_out[t] + c`` (a booster's tree its class with ``K = 1``; a forest's
    tree every class, ``K = k``), so every output is one traversal: the
    factors ``F`` are shared by the columns, only the sums ``S`` are per column.

    ``XT``: the rows, cast and transposed (features x rows).  With Gauss-Legendre
    nodes ``t_nodes`` and weights ``t_weights`` on [0, 1] exact for degree
    ``p_max - 1`` (:func:`gauss_nodes`) these are the Shapley values; with the
    one node 1/2 and weight 1, the Banzhaf values (then ``pairs`` is empty).
    The formulas are in the module's docstring.  A block of rows goes down each
    tree together in preorder, the open path held by depth: ``F`` the product
    of the factors down to the node, ``S`` the sum of ``v F`` over the leaves
    below, ``O`` each edge's merged ``o`` (0 or 1).  When a node is finished its
    edge (feature ``i``) is credited ``sum_g w_g S_g (delta_c / f_c - delta_a /
    f_a)``, ``a`` the nearest earlier edge on ``i`` (whose own credit counted
    these leaves at its factor), so the credits telescope to each leaf's
    deepest edge on ``i``.  Pairs are summed leaf by leaf (:func:`_leaf_pairs`).
    """
    d, n = XT.shape
    G = len(t_nodes)
    n_nodes = len(left)
    n_col, k_out = value.shape[1], out.shape[2]
    with_pairs = pairs.shape[0] > 0
    # each edge's factor z (1 - t) + o t, o in {0, 1}, and its inverse inv0 + o dinv
    fz = np.empty((n_nodes, G))
    inv0 = np.zeros((n_nodes, G))
    dinv = np.zeros((n_nodes, G))
    for node in range(n_nodes):
        for g in range(G):
            f0 = edge_z[node] * (1.0 - t_nodes[g])
            f1 = f0 + t_nodes[g]
            fz[node, g] = f0
            inv0[node, g] = 1.0 / f0 if f0 != 0.0 else 0.0
            dinv[node, g] = (1.0 / f1 if f1 != 0.0 else 0.0) - inv0[node, g]
    d_max = 0
    for node in range(n_nodes):
        d_max = max(d_max, depth[node])
    p_max = 1
    for l in range(len(feat_off) - 1):
        p_max = max(p_max, feat_off[l + 1] - feat_off[l])
    n_blk = (n + block - 1) // block
    for b in prange(n_blk):
        F = np.empty((d_max + 1, G, block))
        S = np.zeros((d_max + 1, G, n_col, block))
        O = np.ones((d_max + 1, block))
        go = np.zeros((d_max + 1, block))
        path = np.zeros(d_max + 1, np.int64)
        acc = np.zeros((d, k_out, block))
        T = np.zeros(block)
        TS = np.zeros((n_col, block))
        H = np.zeros(block)
        pw = p_max if with_pairs else 0
        Ol = np.empty((pw, block))
        Dl = np.empty((pw, block))
        P = np.empty((G, block))
        A = np.empty((G, block))
        Inv = np.empty((pw, G, block))
        M = np.zeros((d if with_pairs else 0, d, k_out, block))
        lo = b * block
        nb = min(n, lo + block) - lo
        for k in range(len(roots) - 1):
            o0 = tree_out[k]
            top = -1
            for q in range(roots[k], roots[k + 1]):
                node = order[q]
                dd = depth[node]
                while top >= dd:
                    if top > 0:
                        _close(path[top], nb, t_weights, inv0, dinv, edge_z, prev, depth,
                               feature, parent, O, S, TS, H, acc, o0)
                    top -= 1
                path[dd] = node
                top = dd
                if dd == 0:
                    for g in range(G):
                        for r in range(nb):
                            F[0, g, r] = 1.0
                        for j in range(n_col):
                            for r in range(nb):
                                S[0, g, j, r] = 0.0
                else:
                    want = 1.0 if left[parent[node]] == node else 0.0
                    a = prev[node]
                    pa = depth[a] if a >= 0 else 0
                    live = 1.0 if a >= 0 else 0.0
                    for r in range(nb):
                        # the row satisfies this split and (merged) the earlier ones on its feature
                        O[dd, r] = (1.0 - abs(go[dd - 1, r] - want)) * (
                            1.0 - live + live * O[pa, r])
                    if a >= 0:
                        for g in range(G):
                            tg = t_nodes[g]
                            for r in range(nb):
                                # the earlier factor on the feature is replaced by the merged one
                                F[dd, g, r] = (F[dd - 1, g, r] * (fz[node, g] + O[dd, r] * tg)
                                               * (inv0[a, g] + O[pa, r] * dinv[a, g]))
                    else:
                        for g in range(G):
                            tg = t_nodes[g]
                            for r in range(nb):
                                F[dd, g, r] = F[dd - 1, g, r] * (fz[node, g] + O[dd, r] * tg)
                    if left[node] < 0:
                        for g in range(G):
                            for j in range(n_col):
                                v = value[node, j]
                                for r in range(nb):
                                    S[dd, g, j, r] = v * F[dd, g, r]
                    else:
                        for g in range(G):
                            for j in range(n_col):
                                for r in range(nb):
                                    S[dd, g, j, r] = 0.0
                if left[node] >= 0:
                    col = XT[feature[node]]
                    thr, dl, miss = threshold[node], default_left[node], missing[node]
                    for r in range(nb):
                        go[dd, r] = 1.0 if _goes_left(col[lo + r], thr, dl, miss, cat) else 0.0
                elif with_pairs:
                    l = leaf_of[node]
                    p = feat_off[l + 1] - feat_off[l]
                    if p >= 2 and np.any(value[node] != 0.0):
                        _leaf_pairs(value[node], feat_off[l], p, nb, t_nodes, t_weights,
                                    feat_id, feat_z, feat_depth, O, Ol, Dl, P, Inv, A, T, M,
                                    o0)
            while top > 0:
                _close(path[top], nb, t_weights, inv0, dinv, edge_z, prev, depth, feature,
                       parent, O, S, TS, H, acc, o0)
                top -= 1
        for r in range(nb):
            for f in range(d):
                for o in range(k_out):
                    out[lo + r, f, o] += acc[f, o, r]
        if with_pairs:
            for i in range(d):
                for j in range(d):
                    if i != j:
                        for o in range(k_out):
                            for r in range(nb):
                                pairs[lo + r, i, j, o] += M[i, j, o, r] + M[j, i, o, r]


def gauss_nodes(p_max):
    """Gauss-Legendre nodes and weights on [0, 1] for leaves of up to ``p_max`` features.

    A leaf's integrand has degree ``p_max - 1`` at most, and ``G`` nodes are exact up
    to degree ``2 G - 1``: ``G = ceil(p_max / 2)`` (8 nodes up to 16 features).
    """
    G = max(1, (p_max + 1) // 2)
    t, w = np.polynomial.legendre.leggauss(G)
    return (t + 1.0) / 2.0, w / 2.0


@njit(parallel=True, cache=True)
def pd_recursion(settings, position, left, right, feature, threshold, default_left, missing,
                 cat, value, tree_out, k_out, cover, roots):
    """Partial dependence of every output at each setting, ``(G, k)``, by the weighted
    traversal of every tree.

    A split on a feature of the setting (``position[f] >= 0``) follows the
    setting's value; any other split sends the weight down both sides in
    proportion to the children's covers.  Column ``c`` of ``value``
    (``(nodes, K)``) of tree ``t`` feeds output ``tree_out[t] + c``: every
    output in one traversal.
    """
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

