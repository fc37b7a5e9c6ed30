"""Path-dependent TreeSHAP allocates what its stated bound says, no more and not much less.

``kernels.treeshap_bytes`` states the bytes path-dependent TreeSHAP allocates at its peak
(the layout, the rows' arrays, the quadrature tables and the tasks' work arrays), and
``TreePaths.pd_plan`` holds the tasks' work to ``WORK_BYTES``.  The peak is measured by
tracemalloc: numba's runtime allocates through ``PyMem_RawMalloc`` (numba sets it so at
import), which tracemalloc traces, so the arrays the kernels build are counted with
numpy's.  Each case asserts ``|peak - bound| <= ALLOWANCE``: a term of the formula left
out, or one counted twice, moves the bound by more than that.
"""

import tracemalloc

import numba
import numpy as np
import pytest

from modellens.attribution import tree as T
from modellens.attribution.tree import TreePaths, tree_values
from modellens.models import kernel_threads
from modellens.trees import MAX_TREE_DEPTH
from modellens.trees import kernels as K
from modellens.trees._ensemble import Builder
from modellens._validation import InvalidParameterError

#: What the formula leaves out: the Python objects of the call (the plan, the layout's
#: bundle, the kernels' argument tuples), numba's per-array headers and the arrays of a
#: few entries (Gauss nodes, group offsets).  Measured 7-14 KiB on every case here.
ALLOWANCE = 64 * 1024


def _chain(depth, n_features, columns=1):
    """One tree: split ``j`` at node ``2 j`` on feature ``j % n_features``, its left child
    a leaf and its right the next split (a leaf at the bottom)."""
    n = 2 * depth + 1
    left, right = np.full(n, -1), np.full(n, -1)
    left[0:2 * depth:2] = np.arange(1, 2 * depth, 2)
    right[0:2 * depth:2] = np.arange(2, 2 * depth + 1, 2)
    feature = np.zeros(n, np.int64)
    feature[0:2 * depth:2] = np.arange(depth) % n_features
    threshold = np.zeros(n)
    threshold[0:2 * depth:2] = np.linspace(-1, 1, depth)
    cover = np.ones(n)
    cover[0::2] = np.arange(depth + 1)[::-1] + 1.0
    value = np.random.default_rng(0).normal(size=(n, columns))
    b = Builder(columns)
    b.add_trees([n], left, right, feature, threshold, np.zeros(n, np.uint8), value, cover)
    # float32: the rows are cast to a copy, as the bound counts them
    return b.build(np.zeros(columns), n_features, float32=True)


def _forest(n_trees, depth, n_features, columns=1):
    """``n_trees`` complete trees of ``depth`` levels, random features and covers."""
    rng = np.random.default_rng(1)
    n = 2 ** (depth + 1) - 1
    idx = np.arange(n)
    inner = idx < 2 ** depth - 1
    left, right = np.where(inner, 2 * idx + 1, -1), np.where(inner, 2 * idx + 2, -1)
    b = Builder(columns)
    for _ in range(n_trees):
        cover = np.zeros(n)
        cover[~inner] = rng.integers(1, 100, int((~inner).sum()))
        for i in range(2 ** depth - 2, -1, -1):
            cover[i] = cover[2 * i + 1] + cover[2 * i + 2]
        b.add_trees([n], left, right, np.where(inner, rng.integers(0, n_features, n), 0),
                    rng.uniform(-1, 1, n), np.zeros(n, np.uint8),
                    rng.normal(size=(n, columns)), cover)
    return b.build(np.zeros(columns), n_features, float32=True)


def _peak(ens, n, *, pairs=False, index="shapley"):
    """The traced peak of path-dependent TreeSHAP on ``n`` rows, and its plan."""
    X = np.random.default_rng(2).uniform(-1, 1, size=(n, ens.n_features))
    fx = ens.predict_raw(X)
    # once untraced: loading the kernel (threaded or serial, as the rows pick) from numba's
    # cache makes Python objects of its own
    tree_values(ens, X, prediction=fx, interactions=pairs, index=index)
    plan = TreePaths(ens).pd_plan(n, ens.n_features, index=index, pairs=pairs)
    tracemalloc.start()
    try:
        values, _, _, inter = tree_values(ens, X, prediction=fx, interactions=pairs,
                                          index=index)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    if index == "shapley":  # the values add up (local accuracy): the kernel did the work
        total = values.sum(axis=1) + TreePaths(ens).expected_value()
        np.testing.assert_allclose(total.reshape(fx.shape), fx, rtol=1e-9, atol=1e-9)
    if pairs:
        np.testing.assert_allclose(inter.sum(axis=2), values, rtol=1e-9, atol=1e-9)
    return peak, plan


CASES = {
    # near the depth cap: the tasks' (depth + 1) x G arrays dominate (G = 20)
    "deep chain": (lambda: _chain(900, 40), 100, {}),
    # many nodes, shallow: the layout and the quadrature tables dominate
    "wide forest": (lambda: _forest(300, 8, 30), 200, {}),
    # three value columns, interaction values: the pairs' buffers and the diagonal's
    "three-class forest, pairs": (lambda: _forest(200, 6, 10, columns=3), 300,
                                  {"pairs": True}),
    "deep chain, three columns, pairs": (lambda: _chain(400, 30, columns=3), 100,
                                         {"pairs": True}),
    "wide forest, banzhaf": (lambda: _forest(300, 8, 30), 200, {"index": "banzhaf"}),
    # a small tree of many features: the diagonal's temporaries after the kernel dominate
    "small tree, many features, pairs": (lambda: _forest(1, 3, 40), 4000, {"pairs": True}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_peak_is_the_stated_bound(case):
    make, n, kw = CASES[case]
    ens = make()
    with kernel_threads(1):  # one task at a time: the peak does not hang on the scheduler
        peak, plan = _peak(ens, n, **kw)
    assert abs(peak - plan["bytes"]) <= ALLOWANCE, (peak, plan["bytes"])


def test_threaded_tasks_at_once_are_counted_and_held_to_the_budget(monkeypatch):
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one thread: no tasks at once")
    plain = K.sized
    # the threaded kernel whatever the rows (its serial twin runs one task at a time)
    monkeypatch.setattr(K, "sized", lambda kernel, rows, **kw: plain(kernel, np.inf))
    ens = _chain(900, 40)
    with kernel_threads(2):
        peak, plan = _peak(ens, 600)
    assert plan["kernel"] is K.pd_quadrature and plan["threads"] == 2
    # a row of a task is (901 x 20 x 2 + ...) floats, 300 kB: 64 rows a task would
    # take 37 MiB on two threads, so the planner gives fewer
    task = K.pd_task_bytes(900, 20, 1, 40, plan["block"])
    assert plan["block"] < T.ROW_BLOCK and 2 * task <= T.WORK_BYTES
    assert peak <= plan["bytes"] + ALLOWANCE, (peak, plan["bytes"])
    # two tasks were alive at once, unless a thread was kept off its core for the whole run
    assert peak >= plan["bytes"] - task - ALLOWANCE, (peak, plan["bytes"])


def test_one_row_over_the_budget_runs_on_fewer_threads(monkeypatch):
    """A chain at the depth cap on 63 features (G = 32) with 70 value columns: one row of
    a task is 1001 x 32 x 71 floats, 18 MB, so two threads would pass ``WORK_BYTES``."""
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one thread")
    plain = K.sized
    monkeypatch.setattr(K, "sized", lambda kernel, rows, **kw: plain(kernel, np.inf))
    ens = _chain(MAX_TREE_DEPTH, 63, columns=70)
    with kernel_threads(2):
        plan = TreePaths(ens).pd_plan(2000, 63)
    one = K.pd_task_bytes(MAX_TREE_DEPTH, 32, 70, 63, plan["block"])
    assert (plan["block"], plan["threads"]) == (1, 1) and one <= T.WORK_BYTES < 2 * one


def test_the_deep_many_column_chain_runs_within_its_bound():
    ens = _chain(MAX_TREE_DEPTH, 63, columns=40)
    peak, plan = _peak(ens, 6)
    assert abs(peak - plan["bytes"]) <= ALLOWANCE, (peak, plan["bytes"])
    assert K.pd_task_bytes(MAX_TREE_DEPTH, 32, 40, 63, plan["block"]) <= T.WORK_BYTES


def test_the_worst_case_bound_is_linear_in_the_nodes():
    """At the depth cap the default bound (every leaf at the cap, 63 path features) is
    the stated function of nodes and depth: a few kB a node, whatever the depth."""
    one = K.treeshap_bytes(2001, 1001, MAX_TREE_DEPTH, 10, 1, 64)
    many = K.treeshap_bytes(2_000_001, 1_000_001, MAX_TREE_DEPTH, 10, 1, 64)
    per_node = (many - one) / 1_999_000
    # 56 B of node arrays, 8 of the value column, 24 of leaf arrays (half a node a leaf),
    # 24 x 32 of quadrature tables, and half of a leaf's 64 path entries of 24 B
    assert per_node == pytest.approx(56 + 8 + 24 + 768 + 768, rel=1e-3)


def test_a_path_of_too_many_features_is_refused_with_its_lists_capped():
    ens = _chain(70, 70)
    with pytest.raises(InvalidParameterError, match="more than 63 distinct features"):
        TreePaths(ens)
    out = K.root_layout(ens.left, ens.right, ens.feature, ens.cover, ens.roots)
    feat_off = out[7]
    assert np.diff(feat_off).max() == K.MAX_PATH_FEATURES + 1


def _broom(top, levels):
    """A chain of ``top`` splits on features ``0..top-1``, then under its last right child
    a complete tree of ``levels`` levels splitting on them again: ``2**levels`` leaves of
    ``top`` path features in about ``2**(levels + 1) + 2 top`` nodes."""
    left, right, feature = [], [], []

    def node():
        left.append(-1), right.append(-1), feature.append(0)
        return len(left) - 1

    cur = node()
    for j in range(top):
        feature[cur] = j
        left[cur], right[cur] = node(), node()
        cur = right[cur]
    frontier = [cur]
    for level in range(levels):
        below = []
        for i in frontier:
            feature[i] = level
            left[i], right[i] = node(), node()
            below += [left[i], right[i]]
        frontier = below
    n = len(left)
    rng = np.random.default_rng(4)
    b = Builder(1)
    b.add_trees([n], left, right, feature, rng.uniform(-1, 1, n), np.zeros(n, np.uint8),
                rng.normal(size=(n, 1)), np.ones(n))
    return b.build(np.zeros(1), top)


def test_a_small_background_gets_no_dense_counts_for_many_feature_leaves():
    """1,024 leaves of 20 path features (2,087 nodes): dense counts were 2**20 entries a
    leaf, 8 GiB whatever the background; against 10 background rows those leaves count the
    background's distinct masks."""
    ens = _broom(20, 10)
    paths = TreePaths(ens)
    assert paths.p_max == 20 and len(paths.leaf_node) >= 1024
    plan = paths.plan(5, 10, game="interventional")
    assert plan["big"].sum() >= 1024 and plan["count_entries"] * 8 < 2 ** 20
    rng = np.random.default_rng(5)
    X, B = rng.uniform(-1, 1, (5, 20)), rng.uniform(-1, 1, (10, 20))
    tree_values(ens, X, B)
    tracemalloc.start()
    try:
        values, base, fx, _ = tree_values(ens, X, B)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2 ** 20
    np.testing.assert_allclose(values.sum(axis=1) + base, fx, rtol=1e-9, atol=1e-9)
