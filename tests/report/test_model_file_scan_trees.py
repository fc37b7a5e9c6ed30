"""The compiled reading of a UBJSON file's trees, a row per tree (issue 40).

The scan read a row per value, trees' values too (20,000 rows for 900 trees,
then Python over them): a ``model.trees`` array is now read by its own compiled
pass, one row per tree, and the node checks need no walk from the root where
every child comes after its parent (as XGBoost writes them).  What it reads
differently from XGBoost's writing (keys in another order, children before their
parents, the array untyped) is still read as the Python reader reads it, or
declined; what it does not take at all goes the Python reader's way.
"""

import numpy as np
import pandas as pd
import pytest

from modellens.files import FileError, load_model
from modellens.files._ubjson import Ubjson, ubjson_bytes
from modellens.trees import FlatTrees, UnsafeModelError, check_xgboost_model, scan_xgboost_ubjson
from modellens.trees import _checks_xgboost_scan as scan
from test_model_file_scan import _chain  # a chain of splits, as the scan tests build it

xgb = pytest.importorskip("xgboost")


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    y = X.a - 2 * X.b + rng.normal(scale=0.1, size=len(X))
    return xgb.XGBRegressor(n_estimators=4, max_depth=3).fit(X, y), X


def _raw(model):
    return bytes(model[0].get_booster().save_raw("ubj"))


def _trees(doc):
    return doc["learner"]["gradient_booster"]["model"]["trees"]


def _predict(path, X):
    return load_model(path).predict(X)


def test_the_trees_are_read_a_row_per_tree(model):
    data = _raw(model)
    rows, table = scan._scan(np.frombuffer(data, np.uint8), False, scan._NONE_READ)[:2]
    # no row per tree or per value of a tree: one row for the array, one per tree in table
    assert not np.any((rows[:, 2] >= 0) & (rows[:, 2] < scan._N_TREE_KEYS))
    assert np.sum(rows[:, 0] == scan._TREES) == 1 and len(table) == len(_trees(
        Ubjson(data).document()))


def _relabelled(tree, order):
    """``tree`` with its nodes renumbered: node ``i`` becomes ``order[i]``."""
    n = len(order)
    inverse = np.empty(n, np.int64)
    inverse[order] = np.arange(n)
    out = dict(tree)
    for key in ("left_children", "right_children", "parents"):
        old = np.asarray(tree[key], np.int64)[inverse]
        keep = (old == -1) | (old == 2 ** 31 - 1)
        out[key] = np.where(keep, old, order[np.clip(old, 0, n - 1)]).astype(np.int32)
    for key in ("split_indices", "split_conditions", "default_left", "split_type",
                "loss_changes", "sum_hessian", "base_weights"):
        out[key] = np.asarray(tree[key])[inverse]
    return out


def test_children_before_their_parents_are_checked_by_the_walk(model, tmp_path):
    doc = Ubjson(_raw(model)).document()
    tree = _trees(doc)[0]
    n = len(tree["left_children"])
    # the root stays first; the others reversed: every child before its parent
    _trees(doc)[0] = _relabelled(tree, np.concatenate([[0], np.arange(n - 1, 0, -1)]))
    data = ubjson_bytes(doc)
    scanned = scan_xgboost_ubjson(data)
    assert isinstance(_trees(scanned), FlatTrees)
    check_xgboost_model(scanned)
    (tmp_path / "m.ubj").write_bytes(data)
    (tmp_path / "own.ubj").write_bytes(_raw(model))
    assert np.array_equal(_predict(tmp_path / "m.ubj", model[1]),
                          _predict(tmp_path / "own.ubj", model[1]))


@pytest.mark.parametrize("fault", ["unreached", "cycle", "too deep"])
def test_faults_in_trees_out_of_order_are_refused(model, tmp_path, fault):
    doc = Ubjson(_raw(model)).document()
    tree = _trees(doc)[0]
    n = len(tree["left_children"])
    tree = _relabelled(tree, np.concatenate([[0], np.arange(n - 1, 0, -1)]))
    if fault == "unreached":  # a split turned leaf, its two children still live
        left = tree["left_children"].copy()
        right = tree["right_children"].copy()
        split = int(np.flatnonzero(left > 0)[-1])
        left[split] = right[split] = -1
        tree = dict(tree, left_children=left, right_children=right)
    elif fault == "cycle":
        left, right = tree["left_children"].copy(), tree["right_children"].copy()
        inner = np.flatnonzero(left > 0)
        child = int(inner[np.isin(inner, left[inner])][0])  # a split that is a left child
        parent = int(np.flatnonzero(left == child)[0])
        left[child] = parent  # the child splits into its parent
        tree = dict(tree, left_children=left, right_children=right)
    else:
        # a chain of 1,001 splits numbered from its bottom: children before parents
        m = 2 * 1001 + 1
        order = np.concatenate([[0], np.arange(m - 1, 0, -1)])
        tree = _relabelled(dict(_chain(1001), id=0), order)
    _trees(doc)[0] = tree
    data = ubjson_bytes(doc)
    scanned = scan_xgboost_ubjson(data)
    assert isinstance(_trees(scanned), FlatTrees)
    with pytest.raises(UnsafeModelError):
        check_xgboost_model(scanned)
    with pytest.raises(UnsafeModelError):
        check_xgboost_model(Ubjson(data).document())
    (tmp_path / "m.ubj").write_bytes(data)
    with pytest.raises(FileError, match="refusing"):
        load_model(tmp_path / "m.ubj")


def test_keys_in_another_order_are_read_alike(model):
    doc = Ubjson(_raw(model)).document()
    for k, tree in enumerate(_trees(doc)):
        items = list(tree.items())[::-1]
        items = [(key, dict(list(v.items())[::-1]) if key == "tree_param" else v)
                 for key, v in items]
        _trees(doc)[k] = dict(items)
    scanned = scan_xgboost_ubjson(ubjson_bytes(doc))
    own = scan_xgboost_ubjson(_raw(model))
    for key in ("ids", "nodes", "deleted", "features"):
        assert np.array_equal(getattr(_trees(scanned), key), getattr(_trees(own), key)), key
    for key, values in _trees(own).arrays().items():
        assert np.array_equal(_trees(scanned).arrays()[key], values, equal_nan=True), key


def test_a_counted_trees_array_must_hold_its_count(model):
    data = _raw(model)
    at = data.index(b"\x05trees") + 6
    count = int.from_bytes(data[at + 3:at + 11], "big")
    for other in (count - 1, count + 1, 2 ** 40, -1):
        bad = data[:at + 3] + int(other).to_bytes(8, "big", signed=True) + data[at + 11:]
        assert scan_xgboost_ubjson(bad) is None, other


@pytest.mark.parametrize("how", ["typed", "twice", "a key twice", "a key unknown",
                                 "a float id", "a parameter not digits", "vector leaves",
                                 "a node array of other elements"])
def test_trees_not_as_xgboost_writes_them_are_declined(model, how):
    doc = Ubjson(_raw(model)).document()
    tree = _trees(doc)[0]
    if how == "typed":
        data = _raw(model)
        at = data.index(b"\x05trees") + 6
        data = data[:at + 1] + b"$" + data[at + 1:]
    elif how == "twice":
        doc["learner"]["model"] = {"trees": []}
        data = ubjson_bytes(doc)
    elif how == "a key twice":
        data = ubjson_bytes(doc)
        at = data.index(b"\x0atree_param")
        key = b"L" + (2).to_bytes(8, "big") + b"id"
        data = data[:at - 8] + key + b"L" + (0).to_bytes(8, "big") + data[at - 8:]
    else:
        if how == "a key unknown":
            tree["leaf_weights"] = np.zeros(0, np.float32)
        elif how == "a float id":
            tree["id"] = 0.0
        elif how == "a parameter not digits":
            tree["tree_param"]["num_nodes"] = " " + tree["tree_param"]["num_nodes"]
        elif how == "vector leaves":
            tree["tree_param"]["size_leaf_vector"] = "2"
        else:
            tree["left_children"] = tree["left_children"].astype(np.int64)
        data = ubjson_bytes(doc)
    assert data is not None and data != _raw(model)
    assert scan_xgboost_ubjson(data) is None


def test_a_tree_key_one_byte_off_is_declined(model):
    # keys are compared 8 bytes at a time (first, middle past 16, last): each byte of each
    # name a tree holds changed in turn (one bit, still ASCII) is another key, declined
    data = _raw(model)
    start = data.index(b"trees")
    assert len(scan._scan(np.frombuffer(data, np.uint8), False, scan._NONE_READ)[:2][0])
    names = scan._NAMES[:scan._N_TREE_KEYS] + scan._PARAMS
    for name in names:
        key = b"L" + len(name).to_bytes(8, "big") + name.encode()
        at = data.index(key, start) + 9
        for j in range(len(name)):
            bad = bytearray(data)
            bad[at + j] ^= 1
            rows, table = scan._scan(np.frombuffer(bytes(bad), np.uint8), False,
                                     scan._NONE_READ)[:2]
            assert not len(rows) and not len(table), (name, j)
