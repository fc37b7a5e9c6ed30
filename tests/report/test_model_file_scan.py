"""The compiled scan of XGBoost's UBJSON files and the checks of their trees in place (issue 40).

The Python UBJSON reader built an object per value (ten times XGBoost's own
load); files as XGBoost writes them are now read by one compiled scan that
checks the structure and notes where each tree's node arrays lie, and the
node checks read them there.  Whatever the scan does not take (odd but legal
constructs, hostile ones) is left to the Python reader, which names the fault:
each hostile test below finds the scan declining or the in-place checks
refusing, and would find the file taken without that check.
"""

import json

import numpy as np
import pandas as pd
import pytest

from modellens.files import FileError, load_model
from modellens.files import _models
from modellens.files._ubjson import Ubjson, ubjson_bytes
from modellens.trees import (FLAT_ARRAYS, FlatTrees, UnsafeModelError, check_xgboost_model,
                             scan_xgboost_ubjson)

xgb = pytest.importorskip("xgboost")


def _frame(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    return X, X.a - 2 * X.b + rng.normal(scale=0.1, size=n)


@pytest.fixture(scope="module")
def files():
    X, y = _frame()
    Xn = X.mask(np.random.default_rng(1).random(X.shape) < 0.2)  # missing values
    Xc = X.assign(c=pd.Categorical(np.arange(len(X)) % 4))
    models = {
        "regressor": xgb.XGBRegressor(n_estimators=3, max_depth=3).fit(X, y),
        "binary": xgb.XGBClassifier(n_estimators=2, max_depth=2).fit(X, y > 0),
        "multiclass": xgb.XGBClassifier(n_estimators=2, max_depth=3).fit(
            X, np.digitize(y, [-1.0, 1.0])),
        "missing values": xgb.XGBRegressor(n_estimators=2, max_depth=3).fit(Xn, y),
        "categorical": xgb.XGBRegressor(n_estimators=2, max_depth=3, enable_categorical=True,
                                        tree_method="hist").fit(
            Xc, y + 3.0 * (np.arange(len(X)) % 4 == 1)),
    }
    return {name: bytes(m.get_booster().save_raw("ubj")) for name, m in models.items()}


def _trees(doc):
    return doc["learner"]["gradient_booster"]["model"]["trees"]


def _as_json(doc):
    return json.dumps(doc, default=lambda a: a.tolist())


def test_the_scan_reads_xgboost_files_as_the_python_reader_does(files):
    for name, data in files.items():
        full = Ubjson(data).document()
        doc = scan_xgboost_ubjson(data)
        listed = any(len(t["categories_nodes"]) for t in _trees(full))
        if listed:  # categorical splits: the Python reader's document is checked
            assert doc is None, name
            continue
        flat = _trees(doc)
        assert isinstance(flat, FlatTrees), name
        arrays = flat.arrays()
        for key in FLAT_ARRAYS:
            assert np.array_equal(np.concatenate([t[key] for t in _trees(full)]), arrays[key],
                                  equal_nan=True), (name, key)
        assert flat.ids.tolist() == [t["id"] for t in _trees(full)], name
        assert flat.nodes.tolist() == [int(t["tree_param"]["num_nodes"]) for t in _trees(full)]
        assert flat.lengths["sum_hessian"].tolist() == [len(t["sum_hessian"])
                                                        for t in _trees(full)]
        check_xgboost_model(doc)
        doc["learner"]["gradient_booster"]["model"]["trees"] = _trees(full)
        assert _as_json(doc) == _as_json(full), name
    assert "categorical" in files and scan_xgboost_ubjson(files["categorical"]) is None


def test_xgboost_files_load_without_the_python_reader(files, tmp_path, monkeypatch):
    def refuse(*args):
        raise AssertionError("the Python reader was used")

    monkeypatch.setattr(_models, "Ubjson", refuse)
    given = []
    real = xgb.Booster.load_model
    monkeypatch.setattr(xgb.Booster, "load_model",
                        lambda self, f: given.append(bytes(f)) or real(self, f))
    for name in ("regressor", "multiclass", "missing values"):
        (tmp_path / "m.ubj").write_bytes(files[name])
        load_model(tmp_path / "m.ubj")
        assert given[-1] == files[name], name


def _key(name):
    raw = name.encode()
    return b"L" + len(raw).to_bytes(8, "big") + raw


def _count(n):
    return b"L" + int(n).to_bytes(8, "big", signed=True)


def _in_first_tree(data, extra):
    at = data.index(_key("base_weights"))
    return data[:at] + extra + data[at:]


def _recount(data, n):
    """``data`` with its first typed int32 array's count replaced by ``n``."""
    at = data.index(b"[$l#L") + 4
    return data[:at] + _count(n) + data[at + 9:]


_HOSTILE = {
    # typed arrays of elements that cost no bytes: a few bytes ask for millions of values
    "typed nulls": lambda d: d[:1] + _key("probe") + b"[$Z#" + _count(10 ** 7) + d[1:],
    "typed containers": lambda d: d[:1] + _key("probe") + b"[$[#" + _count(10 ** 7) + d[1:],
    "a count past the end": lambda d: _recount(d, 2 ** 40),
    "a negative count": lambda d: _recount(d, -1),
    "an untyped count past the end": lambda d: d[:1] + _key("probe") + b"[#" + _count(10 ** 6)
    + b"Z" + d[1:],
    "a string past the end": lambda d: d[:1] + _key("probe") + b"S" + _count(2 ** 40) + d[1:],
    "deep nesting": lambda d: d[:1] + _key("probe") + b"[" * 70 + b"]" * 70 + d[1:],
    "a repeated key": lambda d: d[:1] + _key("learner") + b"Z" + d[1:],
    "a repeated tree key": lambda d: _in_first_tree(d, _key("left_children") + b"[$l#"
                                                    + _count(0)),
    "a false": lambda d: d[:1] + _key("probe") + b"F" + d[1:],
    "a float64": lambda d: d[:1] + _key("probe") + b"D" + bytes(8) + d[1:],
    "a count in int32": lambda d: d[:1] + _key("probe") + b"[$l#l" + bytes(4) + d[1:],
    "a length in int8": lambda d: d[:1] + b"i\x05probe" + b"T" + d[1:],
    "a non-ASCII key": lambda d: d[:1] + _key("pr\u00f6be") + b"T" + d[1:],
    "bytes after the document": lambda d: d + b"Z",
}


@pytest.mark.parametrize("name", sorted(_HOSTILE))
def test_the_scan_declines_what_xgboost_does_not_write(files, name):
    data = _HOSTILE[name](files["regressor"])
    assert data != files["regressor"]
    assert scan_xgboost_ubjson(data) is None
    if name == "a non-ASCII key":
        return  # legal: the Python reader reads it
    # the Python reader reads it (as not XGBoost's own: written back) or refuses it
    try:
        reader = Ubjson(data)
        reader.document()
        assert not reader.canonical
    except ValueError:
        pass


def _chain(levels):
    """A tree of ``levels`` splits one under the other (each right child the next split)."""
    n = 2 * levels + 1
    left = [j + 1 if j % 2 == 0 and j < 2 * levels else -1 for j in range(n)]
    right = [j + 2 if j % 2 == 0 and j < 2 * levels else -1 for j in range(n)]
    parents = [2 ** 31 - 1] + [(j - 1) // 2 * 2 for j in range(1, n)]
    zeros = np.zeros(n, np.float32)
    return {"base_weights": zeros, "categories": np.zeros(0, np.int32),
            "categories_nodes": np.zeros(0, np.int32),
            "categories_segments": np.zeros(0, np.int64),
            "categories_sizes": np.zeros(0, np.int64), "default_left": np.zeros(n, np.uint8),
            "id": 0, "left_children": np.array(left, np.int32), "loss_changes": zeros,
            "parents": np.array(parents, np.int32), "right_children": np.array(right, np.int32),
            "split_conditions": zeros + 0.5, "split_indices": np.zeros(n, np.int32),
            "split_type": np.zeros(n, np.uint8), "sum_hessian": zeros + 1,
            "tree_param": {"num_deleted": "0", "num_feature": "3", "num_nodes": str(n),
                           "size_leaf_vector": "1"}}


def _set(key, k, value):
    def edit(tree):
        tree[key] = tree[key].copy()
        tree[key][k] = value
    return edit


def _param(key, value):
    def edit(tree):
        tree["tree_param"][key] = value
    return edit


_FAULTS = {
    "a child outside the tree": _set("left_children", 0, 1000),
    "a negative child": _set("right_children", 0, -5),
    "a node its own child (a cycle)": _set("left_children", 1, 1),
    "the root a child (a cycle)": _set("left_children", 1, 0),
    "a shared subtree": _set("right_children", 0, 1),
    "a leaf with one child": _set("left_children", 3, 4),
    "a split feature outside the model": _set("split_indices", 0, 3),
    "a NaN threshold": _set("split_conditions", 0, np.nan),
    "a parent that is not the splitting node": _set("parents", 1, 2),
    "a categorical split without categories": _set("split_type", 0, 1),
    "a split type past 1": _set("split_type", 3, 2),
    "a leaf marked as a categorical split": lambda t: _set(
        "split_type", int(np.flatnonzero(np.asarray(t["left_children"]) == -1)[0]), 1)(t),
    "a deleted node reached": _set("split_indices", 1, 2 ** 31 - 1),
    "num_deleted wrong": _param("num_deleted", "1"),
    "num_nodes wrong": _param("num_nodes", "6"),
    "num_feature wrong": _param("num_feature", "4"),
    "an array of another length": lambda t: t.update(sum_hessian=t["sum_hessian"][:-1]),
    "an id out of place": lambda t: t.update(id=1),
    "a chain past the depth cap": lambda t: t.update(_chain(1001)),
}


@pytest.mark.parametrize("name", sorted(_FAULTS))
def test_faulty_trees_are_refused_by_the_checks_in_place(files, tmp_path, name):
    doc = Ubjson(files["regressor"]).document()
    _FAULTS[name](_trees(doc)[0])
    data = ubjson_bytes(doc)
    scanned = scan_xgboost_ubjson(data)
    assert isinstance(_trees(scanned), FlatTrees)  # taken by the scan: checked in place
    with pytest.raises(UnsafeModelError):
        check_xgboost_model(scanned)
    with pytest.raises(UnsafeModelError):  # as the Python reader's document is
        check_xgboost_model(Ubjson(data).document())
    (tmp_path / "m.ubj").write_bytes(data)
    with pytest.raises(FileError, match="refusing"):
        load_model(tmp_path / "m.ubj")


def test_a_chain_at_the_depth_cap_is_read_in_place(files):
    doc = Ubjson(files["regressor"]).document()
    _trees(doc)[0].update(_chain(1000))
    scanned = scan_xgboost_ubjson(ubjson_bytes(doc))
    check_xgboost_model(scanned)  # the deepest tree read, as the Python reader's is
    check_xgboost_model(doc)


def test_mutated_files_the_scan_takes_are_files_the_python_reader_takes(files):
    rng = np.random.default_rng(0)
    base = files["binary"]
    taken = 0
    for _ in range(300):
        data = bytearray(base)
        for at in rng.integers(0, len(data), rng.integers(1, 4)):
            data[at] = rng.integers(0, 256)
        if _models._scanned_and_checked(bytes(data)) is None:
            continue
        taken += 1
        reader = Ubjson(bytes(data))
        doc = reader.document()
        assert reader.canonical
        check_xgboost_model(doc)
    assert taken > 20  # most mutations land in the node arrays' floats
