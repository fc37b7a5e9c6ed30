"""The node checks of a tree as XGBoost writes it, in one pass (issue 40).

The scan checked each tree's nodes in two passes (children, then parents, depth and
reach), writing arrays only a walk from the root reads.  A tree whose every child
comes after its parent is now checked in one pass (``_forward_nodes``); anything it
does not pass, a fault or a child before its parent, goes to the two passes
(``_any_order_nodes``), whose answer is the only one given.  Each fault below is
planted in the first or the last of several trees: the scan must mark that tree and
only that one, and the one pass must hand it on (a check left out of it would pass
the faulty tree).  The scan's trees of up to ``2 * max_depth + 1`` nodes go to two
branch-free passes first (``_shallow_nodes``, test_model_file_scan_shallow); the one
pass takes the rest and is tested here by itself.
"""

import numpy as np
import pytest
from numba import njit

from modellens.files._ubjson import Ubjson, ubjson_bytes
from modellens.trees import UnsafeModelError, check_xgboost_model, scan_xgboost_ubjson
from modellens.trees import _checks_xgboost as checks
from test_model_file_scan import _FAULTS, _trees
from test_model_file_scan_checks import _NODE_FAULTS, _largest_feature, doc  # noqa: F401

xgb = pytest.importorskip("xgboost")

_DELETED = 2 ** 31 - 1


def _arrays(tree):
    """A tree's node arrays, copied (int64 children and parents)."""
    out = {key: np.array(tree[key]) for key in ("left_children", "right_children",
                                                 "parents", "split_indices")}
    return out


def _put(tree, arrays, deleted=None):
    for key, values in arrays.items():
        tree[key] = values.astype(np.int32)
    if deleted is not None:
        tree["tree_param"]["num_deleted"] = str(deleted)


def _last_split(a):
    """The last split both of whose children are leaves."""
    left, right = a["left_children"], a["right_children"]
    return max(i for i in range(len(left)) if left[i] != -1 and left[left[i]] == -1
               and left[right[i]] == -1)


def _pruned(tree, parent_of_first=None):
    """The last split made a leaf, its two children pruned as XGBoost prunes them."""
    a = _arrays(tree)
    s = _last_split(a)
    kids = [a["left_children"][s], a["right_children"][s]]
    a["left_children"][s] = a["right_children"][s] = -1
    a["split_indices"][kids] = _DELETED
    if parent_of_first is not None:
        a["parents"][kids[0]] = parent_of_first(len(a["parents"]))
    _put(tree, a, deleted=2)


def _edit(change):
    """A fault planted by ``change(arrays, s)`` (``s``: the last split over two leaves),
    which returns the leaf it left without a parent (pruned, so that no other check
    finds the tree at fault) or None."""
    def edit(tree):
        a = _arrays(tree)
        orphan = change(a, _last_split(a))
        if orphan is not None:
            a["split_indices"][orphan] = _DELETED
        _put(tree, a, deleted=int(orphan is not None))
    return edit


def _unreached(a, s):
    # the split made a leaf, its children left live, each saying it has no parent
    a["parents"][[a["left_children"][s], a["right_children"][s]]] = -1
    a["left_children"][s] = a["right_children"][s] = -1


def _root_a_child(side):
    def change(a, s):
        orphan, a[side][s] = a[side][s], 0
        return orphan
    return change


def _one_child_twice(a, s):
    orphan, a["right_children"][s] = a["right_children"][s], a["left_children"][s]
    return orphan


def _two_parents(side):
    # the split's child on ``side`` also a child of the split before it (its parent now)
    def change(a, s):
        inner = np.flatnonzero(a["left_children"] != -1)
        shared = a["left_children"][int(inner[inner < s][-1])]
        orphan, a[side][s], a["parents"][shared] = a[side][s], shared, s
        return orphan
    return change


def _past_the_last(side):
    def change(a, s):
        orphan, a[side][s] = a[side][s], len(a[side])
        return orphan
    return change


def _leaf_with_a_right_child(a, s):
    leaf = int(np.flatnonzero(a["left_children"] == -1)[0])
    a["right_children"][leaf] = len(a["left_children"]) - 1  # a node reached otherwise


def _reached_leaf_pruned(a, s):
    return a["left_children"][s]  # pruned, num_deleted counting it, still reached


def _negative_feature(a, s):
    a["split_indices"][0] = -1


#: Faults of trees in XGBoost's order that the one pass must find itself, each by one
#: check of it alone (with those of test_model_file_scan's list).
_FORWARD_FAULTS = {
    "a live node no split reaches": _edit(_unreached),
    "a pruned node whose parent is outside the tree": lambda t: _pruned(t, lambda n: n),
    "a pruned node whose parent is negative": lambda t: _pruned(t, lambda n: -1),
    "a reached leaf pruned": _edit(_reached_leaf_pruned),
    "the root a left child": _edit(_root_a_child("left_children")),
    "the root a right child": _edit(_root_a_child("right_children")),
    "a split's two children one node": _edit(_one_child_twice),
    "a left child one past the last node": _edit(_past_the_last("left_children")),
    "a right child one past the last node": _edit(_past_the_last("right_children")),
    "a left child of two splits": _edit(_two_parents("left_children")),
    "a right child of two splits": _edit(_two_parents("right_children")),
    "a leaf with a right child only": _edit(_leaf_with_a_right_child),
    "a negative split feature": _edit(_negative_feature),
}
_ALL = {**{name: _FAULTS[name] for name in _NODE_FAULTS}, **_FORWARD_FAULTS}


def _copy(doc):
    return Ubjson(ubjson_bytes(doc)).document()


def marked_in_first_and_last(doc, fault):
    """``fault`` planted in the first tree, then the last: each time the scan marks that
    tree and only that one, and the model is refused (scanned or read by the Python
    reader).  Yields the tree's position and the scan's trees."""
    clean = [_largest_feature(t) for t in _trees(doc)]
    for k in (0, len(clean) - 1):
        planted = _copy(doc)
        fault(_trees(planted)[k])
        data = ubjson_bytes(planted)
        expected = list(clean)
        expected[k] = -2
        flat = _trees(scan_xgboost_ubjson(data))
        assert flat.checked.tolist() == expected
        with pytest.raises(UnsafeModelError):
            check_xgboost_model(scan_xgboost_ubjson(data))
        with pytest.raises(UnsafeModelError):  # as the Python reader's document is
            check_xgboost_model(Ubjson(data).document())
        yield k, flat


@pytest.mark.parametrize("name", sorted(_ALL))
def test_a_fault_in_the_first_or_last_tree_marks_that_tree(doc, name):
    for k, flat in marked_in_first_and_last(doc, _ALL[name]):
        n = int(flat.nodes[k])
        if flat.plain:  # the one pass hands it on (the scan's trees go to the two
            room = np.empty((6, n + 1), np.int64)  # branch-free passes first)
            assert checks._forward_nodes(flat.data, flat.at[k], n, int(flat.deleted[k]),
                                         1000, room[0], room[1]) == -3


def test_a_tree_pruned_as_xgboost_prunes_passes_in_one_pass(doc):
    planted = _copy(doc)
    _pruned(_trees(planted)[-1])
    data = ubjson_bytes(planted)
    flat = _trees(scan_xgboost_ubjson(data))
    assert flat.deleted.tolist()[-1] == 2
    assert flat.checked.tolist() == [_largest_feature(t) for t in _trees(planted)]
    check_xgboost_model(scan_xgboost_ubjson(data))
    check_xgboost_model(Ubjson(data).document())
    at, n = flat.at[-1], int(flat.nodes[-1])
    room = np.empty((6, n + 1), np.int64)
    assert checks._forward_nodes(flat.data, at, n, 2, 1000, room[0], room[1]) == \
        flat.checked[-1]  # taken by the one pass, not handed on


@njit
def _both(data, at, n, declared, room):
    # the one pass, handing on what it does not pass (as _tree_nodes does for trees
    # past the cap of the two branch-free passes), and the two passes alone
    most = checks._forward_nodes(data, at, n, declared, 1000, room[0], room[1])
    return (most if most >= -1 else checks._any_order_nodes(data, at, n, declared, 1000, room),
            checks._any_order_nodes(data, at, n, declared, 1000, room))


def mutated_trees(doc, rng, count, edit=None, values=()):
    """``count`` random edits of ``doc``'s trees' node arrays (a third pruned as XGBoost
    prunes, then ``edit(tree, rng)``; up to two values set, among them ``values``'
    functions of the value and the node count) and of their deleted counts: each as the
    node arrays' bytes, where each begins, the node count and the deleted count."""
    dtypes = dict(zip(checks.FLAT_ARRAYS, checks._DTYPES))
    for _ in range(count):
        tree = _trees(doc)[int(rng.integers(0, len(_trees(doc))))]
        tree = dict(tree, tree_param=dict(tree["tree_param"]))
        if rng.random() < 0.3:
            _pruned(tree)
        if edit is not None:
            edit(tree, rng)
        cols = {key: np.array(tree[key]) for key in checks.FLAT_ARRAYS}
        n, declared = len(cols["parents"]), int(tree["tree_param"]["num_deleted"])
        for _ in range(int(rng.integers(0, 3))):
            key = checks.FLAT_ARRAYS[int(rng.integers(0, 6))]
            i = int(rng.integers(0, n))
            choices = [-1, -2, n, i, 0, int(rng.integers(0, n))] + \
                [value(int(cols[key][i]), n) for value in values]
            cols[key][i] = {"split_type": rng.integers(0, 3),
                            "split_conditions": np.nan if rng.random() < 0.5 else 1.0,
                            "split_indices": [_DELETED, -1, 2][int(rng.integers(0, 3))]}.get(
                key, choices[int(rng.integers(0, len(choices)))])
        declared += int(rng.integers(-1, 2)) if rng.random() < 0.1 else 0
        data = b"".join(cols[key].astype(dtypes[key]).tobytes() for key in checks.FLAT_ARRAYS)
        at = np.cumsum([0] + [n * np.dtype(dtypes[key]).itemsize
                              for key in checks.FLAT_ARRAYS[:-1]]).astype(np.int64)
        yield np.frombuffer(data, np.uint8), at, n, declared


def test_the_one_pass_answers_as_the_two_passes_on_mutated_trees(doc):
    # the oracle: the two passes alone, on random edits of the node arrays (a third of
    # them pass); one pass then the other must give the same answer every time
    answers = []
    for data, at, n, declared in mutated_trees(doc, np.random.default_rng(0), 400):
        one, two = _both(data, at, n, declared, np.empty((6, n + 1), np.int64))
        assert one == two
        answers.append(two >= -1)
    assert 50 < sum(answers) < 350  # both kinds of tree met


def _lengths(key, cut):
    def edit(tree):
        tree[key] = tree[key][:cut]
    return edit


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.update(id=3), "tree 0 says it is tree 3"),
    (_lengths("sum_hessian", -1), "tree 0 has {n} nodes but {n1} sum_hessian"),
    (_lengths("base_weights", -2), "tree 0 has {n} nodes but {n2} base_weights"),
    (lambda t: t["tree_param"].update(num_nodes="0"), "tree 0 has 0 nodes"),
])
def test_a_tree_laid_out_otherwise_is_named_as_before(doc, edit, message):
    # the scan notes whether every tree is laid out as XGBoost writes it (FlatTrees.plain,
    # one compiled pass over its table); the numpy checks of ids, node counts and array
    # lengths run only where it is not, and name the first fault as they did
    assert _trees(scan_xgboost_ubjson(ubjson_bytes(doc))).plain
    planted = _copy(doc)
    n = len(_trees(planted)[0]["left_children"])
    edit(_trees(planted)[0])
    scanned = scan_xgboost_ubjson(ubjson_bytes(planted))
    assert not _trees(scanned).plain
    with pytest.raises(UnsafeModelError, match=message.format(n=n, n1=n - 1, n2=n - 2)):
        check_xgboost_model(scanned)
