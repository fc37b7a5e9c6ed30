"""The node checks of a tree of at most ``2 * max_depth + 1`` nodes, in two branch-free
passes (issue 40).

``_shallow_nodes`` first writes each split into its children's slots, then reads
every node with its slot, each check a term of one expression (a vectorised loop):
no depth to follow (no tree of that many nodes is deeper than the cap), a child
claimed twice found by counting the slots written.  Anything it does not pass goes
to the two passes (``_any_order_nodes``), whose answer is the only one given.  Each
fault below is planted in the first or the last of several trees and is one that a
single term of the pass alone finds (with the faults of the one-pass tests, every
term is the only one to find one of them): the scan must mark that tree, and only
that one.
"""

import numpy as np
import pytest
from numba import njit

from modellens.files._ubjson import ubjson_bytes
from modellens.trees import UnsafeModelError, check_xgboost_model, scan_xgboost_ubjson
from modellens.trees import _checks_xgboost as checks
from test_model_file_scan import _chain, _trees
from test_model_file_scan_checks import _largest_feature, doc  # noqa: F401
from test_model_file_scan_forward import (_ALL, _DELETED, _arrays, _copy, _last_split, _pruned,
                                          _put, marked_in_first_and_last, mutated_trees)

xgb = pytest.importorskip("xgboost")


def _leaf_past_the_last(tree):
    # a leaf whose right child is one past the last node: its slot lies past the nodes
    a = _arrays(tree)
    leaf = int(np.flatnonzero(a["left_children"] == -1)[0])
    a["right_children"][leaf] = len(a["left_children"])
    _put(tree, a)


def _aliased(side):
    # a child past the tree by the scratch's power of two: its slot, masked, is the
    # child's own, so the claims add up and the child's parent names the split
    def edit(tree):
        a = _arrays(tree)
        s = _last_split(a)
        a[side][s] += 1 << len(a[side]).bit_length()
        _put(tree, a)
    return edit


def _subtree(a, k):
    nodes, todo = [], [k]
    while todo:
        j = todo.pop()
        nodes.append(j)
        if a["left_children"][j] != -1:
            todo += [a["left_children"][j], a["right_children"][j]]
    return nodes


def _pruned_split_unreached(tree, leaves_pruned=False):
    # the last split over two leaves pruned and cut from the root (its parent made a
    # leaf, the parent's other subtree pruned to leaves): its two leaves stay live,
    # each naming it as parent, reached by no live split (or are pruned too)
    a = _arrays(tree)
    s = _last_split(a)
    q = int(a["parents"][s])
    other = a["right_children"][q] if a["left_children"][q] == s else a["left_children"][q]
    cut = _subtree(a, int(other))
    kids = [int(a["left_children"][s]), int(a["right_children"][s])] if leaves_pruned else []
    a["left_children"][[q] + cut] = a["right_children"][[q] + cut] = -1
    a["split_indices"][cut + [s] + kids] = _DELETED
    _put(tree, a, deleted=len(cut) + 1 + len(kids))


#: Faults that one term of the two passes alone finds (besides the one-pass tests').
_SHALLOW_FAULTS = {
    "a leaf whose right child is one past the last node": _leaf_past_the_last,
    "a left child past the tree onto its own slot": _aliased("left_children"),
    "a right child past the tree onto its own slot": _aliased("right_children"),
    "a pruned split, cut from the root, over live leaves": _pruned_split_unreached,
}


@njit
def _both(data, at, n, declared):
    room = np.empty((6, n + 1), np.int64)
    return (checks._shallow_nodes(data, at, n, declared, room[0].view(np.int32)),
            checks._any_order_nodes(data, at, n, declared, 1000, room))


def _answers(flat, k):
    """The two passes' answer and the two passes' of tree ``k`` of ``flat``."""
    return _both(flat.data, flat.at[k], int(flat.nodes[k]), int(flat.deleted[k]))


@pytest.mark.parametrize("name", sorted(_SHALLOW_FAULTS))
def test_a_fault_in_the_first_or_last_tree_marks_that_tree(doc, name):
    for k, flat in marked_in_first_and_last(doc, _SHALLOW_FAULTS[name]):
        assert _answers(flat, k) == (-3, -2)  # declined here, named by the two passes


@pytest.mark.parametrize("name", sorted(_ALL))
def test_each_fault_of_the_one_pass_is_declined_here_too(doc, name):
    for k in (0, len(_trees(doc)) - 1):
        planted = _copy(doc)
        _ALL[name](_trees(planted)[k])
        flat = _trees(scan_xgboost_ubjson(ubjson_bytes(planted)))
        if flat.plain and flat.nodes[k] <= 2 * checks.MAX_TREE_DEPTH + 1:
            assert _answers(flat, k) == (-3, -2)


def test_trees_as_xgboost_writes_and_prunes_them_pass_here(doc):
    planted = _copy(doc)
    _pruned(_trees(planted)[-1])
    flat = _trees(scan_xgboost_ubjson(ubjson_bytes(planted)))
    assert flat.deleted.tolist()[-1] == 2
    for k in range(len(flat)):  # taken by the two passes, not handed on
        assert _answers(flat, k) == (flat.checked[k],) * 2 == (_largest_feature(
            _trees(planted)[k]),) * 2


def test_a_pruned_split_over_pruned_leaves_is_handed_on(doc):
    # XGBoost prunes leaves only; a pruned split (its leaves pruned, nothing reaching
    # it) passes the two passes of any order, which answer its split feature (the
    # pruned marker, which the model's check then names): this pass declines it
    planted = _copy(doc)
    for k in (0, len(_trees(doc)) - 1):
        _pruned_split_unreached(_trees(planted)[k], leaves_pruned=True)
    scanned = scan_xgboost_ubjson(ubjson_bytes(planted))
    flat = _trees(scanned)
    for k in (0, len(flat) - 1):
        assert _answers(flat, k) == (-3, _DELETED) and flat.checked[k] == _DELETED
    with pytest.raises(UnsafeModelError, match="split feature 2147483647"):
        check_xgboost_model(scanned)


@pytest.mark.parametrize("levels, refused", [(1000, False), (1001, True)])
def test_the_depth_cap_is_met_at_its_node_count(doc, levels, refused):
    # 2 * 1000 + 1 nodes: these passes, no deeper than the cap; two more nodes: the one
    # pass, which follows the depth and names the chain one split too deep
    planted = _copy(doc)
    _trees(planted)[0].update(_chain(levels))
    scanned = scan_xgboost_ubjson(ubjson_bytes(planted))
    flat = _trees(scanned)
    if refused:
        assert flat.checked[0] == -2
        with pytest.raises(UnsafeModelError):
            check_xgboost_model(scanned)
    else:
        assert _answers(flat, 0) == (0, 0) and flat.checked[0] == 0
        check_xgboost_model(scanned)


def _cut_from_the_root(tree, rng):
    if rng.random() < 0.15:
        _pruned_split_unreached(tree, leaves_pruned=rng.random() < 0.5)


def test_the_two_passes_answer_as_the_others_on_mutated_trees(doc):
    # the oracle: the two passes of any order, on random edits of the node arrays (those
    # of this pass's own terms too: a pruned split cut from the root, a child past the
    # tree onto its own slot); these two passes, where they pass a tree, must give the
    # same answer, and they pass a tree XGBoost wrote
    passed = declined = 0
    for data, at, n, declared in mutated_trees(doc, np.random.default_rng(1), 600,
                                               _cut_from_the_root,
                                               [lambda v, n: v % n + (1 << n.bit_length())]):
        one, two = _both(data, at, n, declared)
        assert one == -3 or one == two
        passed += one >= -1
        declined += one == -3 and two >= -1
    assert 100 < passed < 500 and declined > 0  # trees passed here, and handed on
