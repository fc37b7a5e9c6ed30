"""The node checks of a UBJSON file's trees run inside the compiled scan (issue 40).

The scan read each tree's keys and noted where its node arrays lie, and a
second compiled pass then read every array again; now the scan checks each
tree's nodes as it reads the tree (``FlatTrees.checked``: -2 at a fault, else
the tree's largest split feature, compared with the model's feature count once
the learner is read).  Each fault below is planted in one tree of several: the
scan must mark that tree, and only that one (with the check left out of the
scan, the faulty tree would read as clean and the model would be taken).
"""

import numpy as np
import pandas as pd
import pytest
from numba import njit

from modellens.files import FileError, load_model
from modellens.files._ubjson import Ubjson, ubjson_bytes
from modellens.trees import FlatTrees, UnsafeModelError, check_xgboost_model, scan_xgboost_ubjson
from modellens.trees import _bytes
from test_model_file_scan import _FAULTS, _trees

xgb = pytest.importorskip("xgboost")

#: The faults of the node arrays themselves (the others are in the counts the document's
#: checks compare: ids, node counts, lengths, features per tree).
_NODE_FAULTS = sorted(set(_FAULTS) - {"num_feature wrong", "an id out of place",
                                      "a split feature outside the model",
                                      "an array of another length"})  # sum_hessian's


@pytest.fixture(scope="module")
def doc():
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    y = X.a - 2 * X.b + X.c ** 2 + rng.normal(scale=0.1, size=len(X))
    model = xgb.XGBRegressor(n_estimators=5, max_depth=3).fit(X, y)
    return Ubjson(bytes(model.get_booster().save_raw("ubj"))).document()


def _copy(doc):
    return Ubjson(ubjson_bytes(doc)).document()


def _largest_feature(tree):
    """The oracle: the largest split feature of a tree's splits, by numpy (-1: none)."""
    split = np.asarray(tree["left_children"]) != -1
    return int(np.asarray(tree["split_indices"])[split].max(initial=-1))


def test_the_scan_answers_each_trees_largest_split_feature(doc):
    flat = _trees(scan_xgboost_ubjson(ubjson_bytes(doc)))
    assert isinstance(flat, FlatTrees)
    assert flat.checked.tolist() == [_largest_feature(t) for t in _trees(doc)]


@pytest.mark.parametrize("name", _NODE_FAULTS)
def test_a_node_fault_marks_its_tree_as_the_scan_reads_it(doc, name, tmp_path):
    planted = _copy(doc)
    _FAULTS[name](_trees(planted)[2])
    data = ubjson_bytes(planted)
    flat = _trees(scan_xgboost_ubjson(data))
    assert isinstance(flat, FlatTrees)  # taken by the scan, the fault marked in place
    expected = [_largest_feature(t) for t in _trees(doc)]
    expected[2] = -2
    assert flat.checked.tolist() == expected
    with pytest.raises(UnsafeModelError):
        check_xgboost_model(scan_xgboost_ubjson(data))
    (tmp_path / "m.ubj").write_bytes(data)
    with pytest.raises(FileError, match="refusing"):
        load_model(tmp_path / "m.ubj")


@pytest.mark.parametrize("feature, refused", [(2, False), (3, True)])
def test_the_largest_split_feature_is_compared_with_the_models(doc, feature, refused):
    # three features: a split on feature 2 is the last one the model has
    planted = _copy(doc)
    tree = _trees(planted)[4]
    split = int(np.flatnonzero(np.asarray(tree["left_children"]) != -1)[-1])
    tree["split_indices"] = tree["split_indices"].copy()
    tree["split_indices"][split] = feature
    scanned = scan_xgboost_ubjson(ubjson_bytes(planted))
    assert _trees(scanned).checked[4] == max(feature, _largest_feature(_trees(doc)[4]))
    if refused:
        with pytest.raises(UnsafeModelError, match="split feature"):
            check_xgboost_model(scanned)
    else:
        check_xgboost_model(scanned)


def test_a_node_count_past_the_arrays_is_not_read_there(doc):
    # the arrays hold fewer values than num_nodes says: the scan reads none of them as
    # nodes (they would be read past), and the document's checks name the lengths
    planted = _copy(doc)
    tree = _trees(planted)[1]
    tree["tree_param"]["num_nodes"] = str(10 ** 6)
    scanned = scan_xgboost_ubjson(ubjson_bytes(planted))
    assert _trees(scanned).checked[1] == -2
    with pytest.raises(UnsafeModelError, match="nodes but"):
        check_xgboost_model(scanned)


@njit
def _read_borrowed(data, at):
    view = _bytes._borrowed(data)
    _bytes._prefetch(view, at)
    return view[at], len(view)


def test_a_borrowed_view_reads_the_arrays_bytes():
    data = np.arange(200, dtype=np.uint8)
    for at in (0, 63, 64, 199):
        assert _read_borrowed(data, at) == (at, 200)
