"""A tree read where XGBoost writes its keys (issue 40).

The UBJSON scan reads a tree laid out byte for byte as XGBoost writes it by
comparing each key's head where it must lie (:func:`_tree_as_written`),
instead of key after key; anything else is read key by key (:func:`_tree`)
as before.  The claim: whatever the first takes, the second takes into the
same row, and XGBoost's own files are taken by the first.
"""

import numpy as np
import pandas as pd
import pytest

from modellens.files._ubjson import Ubjson, ubjson_bytes
from modellens.trees import _checks_xgboost_scan as scan

xgb = pytest.importorskip("xgboost")


@pytest.fixture(scope="module")
def files():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 4)), columns=list("abcd"))
    X.iloc[::7, 2] = np.nan  # missing values: default_left set
    y = X.a - 2 * X.b + rng.normal(scale=0.1, size=len(X))
    models = {
        "regressor": xgb.XGBRegressor(n_estimators=150, max_depth=4).fit(X, y),
        "multiclass": xgb.XGBClassifier(n_estimators=3, max_depth=3).fit(
            X, np.digitize(y, [-1.0, 1.0])),
        "stumps": xgb.XGBRegressor(n_estimators=2, max_depth=1).fit(X, y),
        "pruned": xgb.XGBRegressor(n_estimators=3, max_depth=6, gamma=50.0).fit(X, y),
    }
    return {name: bytes(m.get_booster().save_raw("ubj")) for name, m in models.items()}


def _tree_starts(data):
    """Where each tree's object begins (its ``{``)."""
    buf = np.frombuffer(data, np.uint8)
    _, _, where = scan._scan(buf, True, scan._NONE_READ)
    pos, count = scan._tree_list_head(buf, where)[:2]
    starts, row = [], np.empty(scan._TREE_COLUMNS, np.int64)
    for _ in range(count):
        starts.append(pos)
        pos = scan._tree(buf, pos + 1, row)
    return starts


def _both(data, start):
    buf = np.frombuffer(data, np.uint8)
    rows = np.full((2, scan._TREE_COLUMNS), 7, np.int64)
    return (scan._tree_as_written(buf, start + 1, rows[0]),
            scan._tree(buf, start + 1, rows[1]), rows)


def test_xgboosts_trees_are_read_where_it_writes_their_keys(files):
    for name, data in files.items():
        starts = _tree_starts(data)
        assert starts, name
        for start in starts:
            written, keyed, rows = _both(data, start)
            assert written > start and written == keyed, name
            np.testing.assert_array_equal(rows[0], rows[1])


def _flipped(data, start, end, rng):
    out = bytearray(data)
    for at in rng.integers(start, end, rng.integers(1, 4)):
        out[at] = rng.integers(0, 256)
    return bytes(out)


def test_what_it_takes_is_read_alike_key_by_key(files):
    """Bytes changed in and around the heads, counts and values of the first two trees."""
    rng = np.random.default_rng(3)
    data = files["multiclass"]
    starts = _tree_starts(data)
    taken = declined = 0
    for _ in range(3000):
        case = _flipped(data, starts[0], starts[2], rng)
        for start in starts[:2]:
            written, keyed, rows = _both(case, start)
            if written < 0:  # left to the key by key reading
                declined += 1
                continue
            taken += 1
            assert written == keyed
            np.testing.assert_array_equal(rows[0], rows[1])
    assert taken > 1000 and declined > 10


def _key(name):
    return b"L" + len(name).to_bytes(8, "big") + name.encode()


def _count(n):
    return b"L" + int(n).to_bytes(8, "big", signed=True)


def _in_first_tree(data, old, new):
    """``data`` with the first ``old`` after the trees begin replaced by ``new``."""
    at = data.index(old, _tree_starts(data)[0])
    return data[:at] + new + data[at + len(old):]


def _nodes(data):
    head = _key("base_weights") + b"[$d#L"
    at = data.index(head, _tree_starts(data)[0]) + len(head)
    return int.from_bytes(data[at:at + 8], "big")


_OTHER_LAYOUTS = {
    # each read key by key (taken or declined there), never here
    "a node array of another element type": lambda d: _in_first_tree(
        d, _key("base_weights") + b"[$d", _key("base_weights") + b"[$l"),
    "a category listed": lambda d: _in_first_tree(
        d, _key("categories") + b"[$l#" + _count(0),
        _key("categories") + b"[$l#" + _count(1) + bytes(4)),
    "an array shorter than the nodes": lambda d: _in_first_tree(
        d, _key("default_left") + b"[$U#" + _count(_nodes(d)) + bytes(1),
        _key("default_left") + b"[$U#" + _count(_nodes(d) - 1)),
    "a key more": lambda d: _in_first_tree(d, _key("id"), _key("extra") + b"Z" + _key("id")),
    "two keys swapped": lambda d: _in_first_tree(
        d, _key("categories") + b"[$l#" + _count(0) + _key("categories_nodes") + b"[$l#"
        + _count(0), _key("categories_nodes") + b"[$l#" + _count(0) + _key("categories")
        + b"[$l#" + _count(0)),
}


@pytest.mark.parametrize("name", sorted(_OTHER_LAYOUTS))
def test_other_layouts_are_read_key_by_key(files, name):
    data = _OTHER_LAYOUTS[name](files["stumps"])
    assert data != files["stumps"]
    start = _tree_starts(files["stumps"])[0]
    written, keyed, _ = _both(data, start)
    assert written == -1
    # those the key by key reading takes (the checks after it name a short array)
    assert (keyed > start) == (name in ("two keys swapped", "a node array of another "
                                        "element type", "an array shorter than the nodes"))


@pytest.mark.parametrize("marker, value", [(b"i", b"\x00"), (b"U", b"\x00"),
                                           (b"I", bytes(2)), (b"l", bytes(4)),
                                           (b"L", bytes(8)), (b"d", bytes(4))])
def test_an_id_of_any_integer_width_is_read_where_it_lies(files, marker, value):
    data = _in_first_tree(files["stumps"], _key("id") + b"i\x00", _key("id") + marker + value)
    start = _tree_starts(files["stumps"])[0]
    written, keyed, rows = _both(data, start)
    assert written == keyed
    if marker == b"d":  # a float32 id: declined by both
        assert written == -1
        return
    assert written > start and rows[0, scan._T_ID] == 0
    np.testing.assert_array_equal(rows[0], rows[1])
