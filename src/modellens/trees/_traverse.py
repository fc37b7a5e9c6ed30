"""Tree kernels shared by every tree method: which way a row goes at a split, the leaf
it reaches, each tree's preorder layout, and the serial twins of small calls."""

from __future__ import annotations

import types
from collections import namedtuple

import numpy as np
from numba import njit, prange

__all__ = ["Nodes", "Layout", "predict_leaves", "root_layout", "sized", "MAX_PATH_FEATURES",
           "SERIAL_ROWS", "SERIAL_TABLE", "SERIAL_WORK"]

#: The split arrays of an ensemble, as every kernel that routes a row reads them (one
#: typed bundle, built once per ensemble: :attr:`TreeEnsemble.nodes`).  ``cat`` is the
#: ensemble's ``cat_left``.
Nodes = namedtuple("Nodes", "left right feature threshold default_left missing cat")

#: The ensemble's trees as the TreeSHAP kernels walk them (built once per ensemble and
#: players: ``TreePaths.lay``): ``roots`` and the fields of :func:`root_layout`, each
#: leaf's index ``leaf_of[node]``, its ``twin`` and ``twin_slot`` (a leaf counted as its
#: left sibling with one bit flipped), the node values ``value`` (``(nodes, K)``) and
#: the leaves' ``leaf_value`` (``(leaves, K)``), whose column ``c`` of tree ``t`` feeds
#: output ``tree_out[t] + c``.
Layout = namedtuple("Layout", "roots order node_slot parent depth leaf_node leaf_roots leaf_of "
                              "feat_off feat_id feat_z feat_depth prev edge_z twin twin_slot "
                              "value leaf_value tree_out")


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
#: A call that visits at least this many (row, node) pairs runs threaded however few its
#: rows (a few rows of a model of thousands of trees is seconds of work).
SERIAL_WORK = 1 << 22
_SERIAL: dict = {}


def sized(kernel, rows, *, limit=SERIAL_ROWS, work=0):
    """``kernel``, or its serial twin when ``rows`` is below ``limit`` and the call's
    ``work`` (row-node visits) below ``SERIAL_WORK``."""
    if rows >= limit or work >= SERIAL_WORK:
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
def predict_leaves(X, nodes, roots):
    """The leaf (node index) each row reaches in each tree, ``(n, n_trees)``."""
    left, right, feature, threshold = nodes.left, nodes.right, nodes.feature, nodes.threshold
    default_left, missing, cat = nodes.default_left, nodes.missing, nodes.cat
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
def _preorder(left, right, roots):
    """Every tree's nodes in preorder, each node's parent and depth, and the leaves' counts:
    ``order, parent, depth, leaf_roots, n_leaves, total depth of the leaves, max depth``."""
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
    return order, parent, depth, leaf_roots, n_leaves, total, max_d


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

    A leaf lists at most ``MAX_PATH_FEATURES + 1`` features: a path of more
    is refused by every caller, and the lists then take at most that many
    entries a leaf, not the sum of the leaves' depths (up to leaves x
    ``MAX_TREE_DEPTH``).
    """
    n_nodes = len(left)
    order, parent, depth, leaf_roots, n_leaves, total, max_d = _preorder(left, right, roots)
    total = min(total, n_leaves * (MAX_PATH_FEATURES + 1))
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
            for j in range(min(k, MAX_PATH_FEATURES + 1)):
                feat_id[f] = fl[j]
                feat_z[f] = zl[j]
                feat_depth[f] = dl[j]
                f += 1
            l += 1
            feat_off[l] = f
    return (order, node_slot, node_new, parent, depth, leaf_node, leaf_roots, feat_off,
            feat_id[:f], feat_z[:f], prev, edge_z, feat_depth[:f])


@njit(inline="always", cache=True)
def _unsatisfied(x, r0, r1, nodes, lay, U):
    """``U[i - r0]``: the slots of node ``i``'s path features whose splits ``x`` fails.

    One pass over the tree ``r0:r1`` in preorder: a node's mask is its
    parent's, plus the parent's slot on the side the row does not take.
    """
    left, right, feature, threshold = nodes.left, nodes.right, nodes.feature, nodes.threshold
    default_left, missing, cat = nodes.default_left, nodes.missing, nodes.cat
    order, node_slot = lay.order, lay.node_slot
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
def _descend(node, nb, lo, XT, nodes, lay, Us, go):
    """A block of rows one node down the tree (preorder): their masks and decisions there.

    ``Us[depth]`` / ``go[depth]`` hold the failed-slot masks and the
    decisions of the rows ``lo:lo + nb`` at the current node of each depth,
    which in preorder are the current node's ancestors.  Returns the depth.
    """
    left, feature, threshold = nodes.left, nodes.feature, nodes.threshold
    default_left, missing, cat = nodes.default_left, nodes.missing, nodes.cat
    node_slot, parent, depth = lay.node_slot, lay.parent, lay.depth
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
