"""Path-dependent TreeSHAP kernels: values and interaction indices by Gauss-Legendre
quadrature, and the game's empty coalition (the formulas are in :mod:`._kernels`)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._traverse import MAX_PATH_FEATURES, _goes_left

__all__ = ["expected_leaf_value", "pd_quadrature", "gauss_nodes", "treeshap_bytes",
           "pd_task_bytes"]


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


@njit(inline="always", cache=True)
def _close(c, nb, t_weights, fac, lay, feature, work, acc, o0):
    """Node ``c`` is finished: credit its edge and pass its sums up.

    ``fac`` holds the edges' factors ``(fz, inv0, dinv)``; ``work`` the open path's
    ``O`` and sums ``S`` and two buffers.
    ``S[depth, g, column, row]`` holds one sum per value column; the edge's
    factor ``H`` is shared by them, and column ``j`` is credited to output
    ``o0 + j`` of ``acc`` (features x outputs x rows).
    """
    _, inv0, dinv = fac
    O, S, T, H = work
    edge_z, prev, depth, parent = lay.edge_z, lay.prev, lay.depth, lay.parent
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


@njit(inline="always", cache=True)
def _leaf_pairs(v, f0, p, nb, t_nodes, t_weights, lay, O, pw, M, o0):
    """Add half the interaction index of every pair of a leaf's features to
    ``M[i, j, o0 + c, r]`` for each value ``v[c]`` of the leaf (``pw``: its buffers)."""
    feat_id, feat_z, feat_depth = lay.feat_id, lay.feat_z, lay.feat_depth
    Ol, Dl, P, Inv, A, T = pw
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


@njit(inline="always", cache=True)
def _enter(node, dd, nb, left, lay, fac, t_nodes, F, work, go):
    """The block's rows enter ``node`` (depth ``dd > 0``): its merged ``O``, factors ``F``
    and, at a leaf, the sums ``S`` start from its values."""
    fz, inv0, dinv = fac
    O, S, _, _ = work
    parent, prev, depth, value = lay.parent, lay.prev, lay.depth, lay.value
    G, n_col = len(t_nodes), value.shape[1]
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


@njit(inline="always", cache=True)
def _flush(lo, nb, acc, M, out, pairs, o_lo):
    """A task's sums into the rows ``lo:lo + nb`` of ``out`` (and ``pairs`` unless ``M`` is
    empty), its outputs ``o_lo:o_lo + acc.shape[1]`` only: no other task writes them."""
    d, k_task = acc.shape[0], acc.shape[1]
    for r in range(nb):
        for f in range(d):
            for o in range(k_task):
                out[lo + r, f, o_lo + o] += acc[f, o, r]
    if M.shape[0] > 0:
        for i in range(d):
            for j in range(d):
                if i != j:
                    for o in range(k_task):
                        for r in range(nb):
                            pairs[lo + r, i, j, o_lo + o] += M[i, j, o, r] + M[j, i, o, r]


@njit(cache=True)
def _pd_trees(XT, nodes, lay, quad, lo, nb, trees, o_lo, buf):
    """The rows ``lo:lo + nb`` down each tree of ``trees`` in turn (one task of
    :func:`pd_quadrature`): sums into ``acc`` and ``M`` of ``buf``, whose output ``o``
    is the ensemble's ``o_lo + o``."""
    t_nodes, t_weights, fac = quad
    F, go, path, acc, work, pbuf, M = buf
    O, S = work[0], work[1]
    G, n_col = len(t_nodes), lay.value.shape[1]
    left, feature, threshold = nodes.left, nodes.feature, nodes.threshold
    default_left, missing, cat = nodes.default_left, nodes.missing, nodes.cat
    value, roots, order, depth = lay.value, lay.roots, lay.order, lay.depth
    leaf_of, feat_off = lay.leaf_of, lay.feat_off
    with_pairs = M.shape[0] > 0
    for q in range(len(trees)):
        k = trees[q]
        o0 = lay.tree_out[k] - o_lo
        top = -1
        for qn in range(roots[k], roots[k + 1]):
            node = order[qn]
            dd = depth[node]
            while top >= dd:
                if top > 0:
                    _close(path[top], nb, t_weights, fac, lay, feature, work, acc, o0)
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
                _enter(node, dd, nb, left, lay, fac, t_nodes, F, work, go)
            if left[node] >= 0:
                col = XT[feature[node]]
                thr, dl, miss = threshold[node], default_left[node], missing[node]
                for r in range(nb):
                    go[dd, r] = 1.0 if _goes_left(col[lo + r], thr, dl, miss, cat) else 0.0
            elif with_pairs:
                l = leaf_of[node]
                p = feat_off[l + 1] - feat_off[l]
                if p >= 2 and np.any(value[node] != 0.0):
                    _leaf_pairs(value[node], feat_off[l], p, nb, t_nodes, t_weights, lay,
                                O, pbuf, M, o0)
        while top > 0:
            _close(path[top], nb, t_weights, fac, lay, feature, work, acc, o0)
            top -= 1


@njit(cache=True)
def _edge_factors(edge_z, t_nodes):
    """Each edge's factor ``z (1 - t) + o t`` at ``o = 0`` and its inverse ``inv0 + o dinv``."""
    n_nodes, G = len(edge_z), len(t_nodes)
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
    return fz, inv0, dinv


@njit(parallel=True, cache=True)
def pd_quadrature(XT, nodes, lay, t_nodes, t_weights, block, out, pairs, split):
    """Add the path-dependent values of every tree and row to ``out`` (``(n, d, k)``), and
    half their interaction indices off the diagonal to ``pairs`` (``(n, d, d, k)``) unless
    it is empty.

    ``lay.value`` is ``(nodes, K)``: column ``c`` of tree ``t`` feeds output
    ``tree_out[t] + c`` (a booster's tree its class with ``K = 1``; a forest's
    tree every class, ``K = k``), so every output is one traversal: the
    factors ``F`` are shared by the columns, only the sums ``S`` are per column.

    The work is split into tasks, one per block of ``block`` rows and group of
    trees: ``split = (off, trees, o_lo, o_hi)``, group ``q`` the trees
    ``trees[off[q]:off[q + 1]]`` (ascending) feeding only the outputs
    ``o_lo[q]:o_hi[q]``, which no other group feeds (a booster's classes).  A
    task sums its own outputs of its own rows, tree by tree in order, so the
    threads write apart and every split gives the same bits; a few rows of a
    many-class booster still give every thread work.

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
    off, trees, o_lo, o_hi = split
    n_col = lay.value.shape[1]
    with_pairs = pairs.shape[0] > 0
    # (unpacked: a tuple made outside a parallel loop does not pass into it)
    fz, inv0, dinv = _edge_factors(lay.edge_z, t_nodes)
    d_max = 0
    for node in range(len(nodes.left)):
        d_max = max(d_max, lay.depth[node])
    p_max = 1
    for l in range(len(lay.feat_off) - 1):
        p_max = max(p_max, lay.feat_off[l + 1] - lay.feat_off[l])
    pw = p_max if with_pairs else 0
    n_blk = (n + block - 1) // block
    n_grp = len(off) - 1
    for task in prange(n_blk * n_grp):
        b, q = task // n_grp, task % n_grp
        k_task = o_hi[q] - o_lo[q]
        # a leaf's pair buffers (_leaf_pairs): Ol, Dl, P, Inv, A, T
        pbuf = (np.empty((pw, block)), np.empty((pw, block)), np.empty((G, block)),
                np.empty((pw, G, block)), np.empty((G, block)), np.zeros(block))
        work = (np.ones((d_max + 1, block)), np.zeros((d_max + 1, G, n_col, block)),
                np.zeros((n_col, block)), np.zeros(block))
        acc = np.zeros((d, k_task, block))
        M = np.zeros((d if with_pairs else 0, d, k_task, block))
        buf = (np.empty((d_max + 1, G, block)), np.zeros((d_max + 1, block)),
               np.zeros(d_max + 1, np.int64), acc, work, pbuf, M)
        lo = b * block
        nb = min(n, lo + block) - lo
        _pd_trees(XT, nodes, lay, (t_nodes, t_weights, (fz, inv0, dinv)), lo, nb,
                  trees[off[q]:off[q + 1]], o_lo[q], buf)
        _flush(lo, nb, acc, M, out, pairs, o_lo[q])


def gauss_nodes(p_max):
    """Gauss-Legendre nodes and weights on [0, 1] for leaves of up to ``p_max`` features.

    A leaf's integrand has degree ``p_max - 1`` at most, and ``G`` nodes are exact up
    to degree ``2 G - 1``: ``G = ceil(p_max / 2)`` (8 nodes up to 16 features).
    """
    G = max(1, (p_max + 1) // 2)
    t, w = np.polynomial.legendre.leggauss(G)
    return (t + 1.0) / 2.0, w / 2.0


# ---------------------------------------------------------------------- memory
def pd_task_bytes(depth, quad, columns, features, block, pair_features=0):
    """Bytes one task of :func:`pd_quadrature` allocates: ``block`` rows, one group of trees.

    Each task holds the open path of its rows by depth, so the per-row arrays
    have ``depth + 1`` levels (``depth``: the deepest node of the ensemble,
    at most ``MAX_TREE_DEPTH``), ``quad`` Gauss-Legendre nodes and
    ``columns`` value columns (the outputs a task sums, as ``columns`` is
    ``K`` for a forest and 1 for a booster's group).  ``pair_features``:
    ``p_max`` when interaction values are asked, else 0.  Per row, in float64
    or int64 entries: ``F`` and ``S`` ``(depth + 1) quad (columns + 1)``,
    ``O`` and the decisions ``2 (depth + 1)``, the close buffers ``columns +
    1``, the pair buffers ``2 quad + 1 + pair_features (quad + 2)`` (``P``,
    ``A`` and ``T`` are built without pairs too), the sums ``acc``
    ``features x columns`` and with pairs ``M`` ``features**2 x columns``; and
    per task the path's nodes, ``depth + 1``.
    """
    d1, pf = depth + 1, pair_features
    per_row = (d1 * (quad * (columns + 1) + 2) + columns + 1 + 2 * quad + 1 + pf * (quad + 2)
               + features * columns * (1 + (features if pf else 0)))
    return 8 * (d1 + block * per_row)


def treeshap_bytes(nodes, leaves, depth, features, outputs, block, *, rows=0, trees=1,
                   leaf_depths=None, path_features=None, quad=None, columns=None, tasks=1,
                   pairs=False):
    """The bytes path-dependent TreeSHAP allocates at its peak, from the model's layout to
    its values: every array counted, in the phase it lives (see the Notes).

    Parameters
    ----------
    nodes, leaves, depth, trees : int
        The ensemble's nodes ``N``, leaves ``L``, deepest node ``D`` and trees ``T``.
    features, outputs : int
        The rows' columns ``F`` and the ensemble's outputs ``K``.
    block : int
        Rows of a task ``B`` (the planner's, :meth:`TreePaths.pd_plan`).
    rows : int
        Rows explained ``n`` (their input, output and interaction arrays).
    leaf_depths : int, optional
        The sum of the leaves' depths (default ``L D``, the most): the leaves'
        feature lists hold ``P = min(leaf_depths, 64 L)`` entries
        (``root_layout`` lists ``MAX_PATH_FEATURES + 1`` features a leaf at most).
    path_features : int, optional
        The most distinct features of a path ``p`` (default ``min(D,
        MAX_PATH_FEATURES)``).
    quad : int, optional
        Gauss-Legendre nodes ``G``: ``ceil(p / 2)`` for Shapley values (at most
        32), 1 for Banzhaf values (default: Shapley's).
    columns : int, optional
        Value columns a pass carries ``c``: ``K`` for a forest, 1 for a booster
        (default ``K``).
    tasks : int
        Tasks at once (the kernel's threads; 1 for its serial twin).
    pairs : bool
        Interaction values too.

    Returns
    -------
    int
        The planned bytes.

    Notes
    -----
    With ``W`` = 8 bytes, ``layout + rows + max(kernel, after)``:

    * layout, the whole call: ``W (7 N + (5 + c) L + 4 T + 2 K + (p + 1)**2)
      + 24 P``, plus ``W N`` for the value column a one-column pass copies
      (the node arrays of the preorder and each leaf's path lists, ``feat_id``,
      ``feat_z`` and ``feat_depth`` of 24 bytes an entry);
    * rows: ``W n F (1 + K (1 + F pairs))``, the cast rows, the values and the
      interaction values;
    * kernel: ``W n F`` for the rows transposed, ``24 N G`` for each node's
      factors at the quadrature nodes (``fz``, ``inv0``, ``dinv``) and
      ``tasks`` x :func:`pd_task_bytes`, whose largest term is ``W B (D + 1) G
      (c + 1)``;
    * after, with pairs: ``2 W n F K`` for the diagonal's temporaries (the
      kernel's arrays are gone by then).

    So a model costs ``O(N G + L min(D, 64))`` whatever the rows, with ``G <=
    32``, and the work ``tasks x B (D + 1) G (c + 1)`` is what the block
    planner holds to its budget.  Not counted: the caller's rows and model,
    the call's Python objects and arrays of a few entries (10-15 KiB
    measured); the cast rows are counted where the input needs no cast too.
    """
    N, L, D, F, K = nodes, leaves, depth, features, outputs
    p = min(D, MAX_PATH_FEATURES) if path_features is None else path_features
    G = max(1, (p + 1) // 2) if quad is None else quad
    c = K if columns is None else columns
    P = min(L * D if leaf_depths is None else leaf_depths, L * (MAX_PATH_FEATURES + 1))
    layout = 8 * (7 * N + (5 + c) * L + 4 * trees + 2 * K + (p + 1) ** 2
                  + (N if c == 1 else 0)) + 24 * P
    rows_part = 8 * rows * F * (1 + K * (1 + (F if pairs else 0)))
    kernel = 8 * rows * F + 24 * N * G + tasks * pd_task_bytes(D, G, c, F, block,
                                                               p if pairs else 0)
    after = 16 * rows * F * K if pairs else 0
    return layout + rows_part + max(kernel, after)
