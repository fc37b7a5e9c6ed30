"""The trees of an XGBoost UBJSON file read and checked as the file is read (issue 40).

``load_model`` reads a file a part at a time and hands each part to
:class:`~modellens.trees.TreesAsRead`, which reads and checks the trees that
lie whole in what has been read, while those bytes are still in the cache;
the scan of the whole file then reads on from there.  The claim tested here:
the document and every answer are those of the one scan of the whole file,
whatever the part size and whatever the bytes not yet read hold.  The buffer's
unread bytes are a valid file's: a reading past what has been read would find
them and answer for them.
"""

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from modellens.files import FileError, load_model
from modellens.files import _models, _read
from modellens.files._ubjson import Ubjson, ubjson_bytes
from modellens.trees import FlatTrees, TreesAsRead, scan_xgboost_ubjson

xgb = pytest.importorskip("xgboost")

N_TREES = 40


def _trees(doc):
    return doc["learner"]["gradient_booster"]["model"]["trees"]


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(400, 4)), columns=list("abcd"))
    y = X.a - 2 * X.b + X.c * X.d + rng.normal(scale=0.1, size=len(X))
    return xgb.XGBRegressor(n_estimators=N_TREES, max_depth=4).fit(X, y), X


@pytest.fixture(scope="module")
def data(model):
    raw = bytes(model[0].get_booster().save_raw("ubj"))
    assert len(raw) > 10 * 4096  # many parts, trees across their bounds
    return raw


def _fed(data, part, unread, as_read=None):
    """scan_xgboost_ubjson of ``data`` with ``as_read`` handed it ``part`` bytes at a time
    into a buffer whose bytes not yet read are ``unread``'s."""
    as_read = TreesAsRead() if as_read is None else as_read
    buf = bytearray(unread[:len(data)].ljust(len(data), b"\0"))
    for start in range(0, len(data), part):
        end = min(start + part, len(data))
        buf[start:end] = data[start:end]
        as_read(buf, end)
    return scan_xgboost_ubjson(buf, as_read), as_read


def _summary(doc):
    """The document as text, its trees' table field by field (their bytes left out)."""
    if doc is None:
        return None

    def default(value):
        if isinstance(value, FlatTrees):
            return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)
                    if f.name != "data"}
        return value.tolist()
    return json.dumps(doc, default=default, sort_keys=True)


def _read_trees(as_read):
    """How many trees ``as_read`` read and checked before the scan of the whole file."""
    at = as_read.state[0]
    return int(at[3]) if at[0] >= 0 else 0


@pytest.mark.parametrize("part", [1, 97, 1000, 4096, 1 << 18])
def test_trees_read_as_the_file_is_read_are_the_one_scans(data, part):
    plain = scan_xgboost_ubjson(data)
    assert isinstance(_trees(plain), FlatTrees) and len(_trees(plain)) == N_TREES
    fed, as_read = _fed(data, part, unread=bytes(len(data)))
    assert _summary(fed) == _summary(plain)
    # every tree was read as the file came in, none left to the whole file's scan
    assert _read_trees(as_read) == N_TREES


def _flipped(data, rng):
    out = bytearray(data)
    for at in rng.integers(0, len(out), rng.integers(1, 4)):
        out[at] = rng.integers(0, 256)
    return bytes(out)


def _in_tree(data, k, edit):
    doc = Ubjson(data).document()
    edit(_trees(doc)[k])
    return ubjson_bytes(doc)


def _cases(data):
    rng = np.random.default_rng(1)
    cases = [_flipped(data, rng) for _ in range(300)]
    for k in (0, N_TREES // 2, N_TREES - 1):  # faults the node checks find, in place
        cases.append(_in_tree(data, k, lambda t: t["left_children"].__setitem__(0, 10 ** 6)))
        cases.append(_in_tree(data, k, lambda t: t["parents"].__setitem__(1, 5)))
        cases.append(_in_tree(data, k, lambda t: t["split_conditions"].__setitem__(0, np.nan)))
        cases.append(_in_tree(data, k, lambda t: t["tree_param"].update(num_deleted="1")))
    return cases


def test_files_changed_anywhere_get_the_one_scans_answer(data):
    rng = np.random.default_rng(2)
    declined = refused = 0
    for case in _cases(data):
        part = int(rng.choice([61, 1000, 4096]))
        plain = scan_xgboost_ubjson(case)
        fed, as_read = _fed(case, part, unread=data)
        assert _summary(fed) == _summary(plain), part
        declined += plain is None
        refused += plain is not None and bool(np.any(_trees(plain).checked < -1))
    # both answers are met, not only files taken whole
    assert declined > 10 and refused > 10


class _PastTheRead(TreesAsRead):
    """A reader that takes the whole buffer for what has been read (the fault the tests
    above must catch)."""

    def __call__(self, data, filled):
        super().__call__(data, len(data))


def test_reading_past_what_was_read_would_be_caught(data):
    differ = sum(_summary(_fed(case, 1000, unread=data, as_read=_PastTheRead())[0])
                 != _summary(scan_xgboost_ubjson(case)) for case in _cases(data))
    assert differ > 5


@pytest.mark.parametrize("size", [0, 1, 7, 4096, 100_003])
def test_read_all_hands_on_each_part_and_returns_the_files_bytes(tmp_path, monkeypatch,
                                                                  size):
    monkeypatch.setattr(_read, "READ_PART", 4096)
    path = tmp_path / "model.ubj"
    path.write_bytes(np.random.default_rng(size).integers(0, 256, size, np.uint8).tobytes())
    seen = []
    data = _read.read_all(path, lambda buf, filled: seen.append(
        (filled, bytes(buf[:filled]))))
    assert type(data) is bytearray and data == path.read_bytes()
    assert [filled for filled, _ in seen] == list(range(4096, size, 4096)) + [size] * (size > 0)
    assert all(prefix == data[:filled] for filled, prefix in seen)


def test_load_model_reads_the_trees_as_it_reads_the_file(model, data, tmp_path,
                                                           monkeypatch):
    monkeypatch.setattr(_read, "READ_PART", 1000)
    made = []

    class Recorded(TreesAsRead):
        def __init__(self):
            super().__init__()
            made.append(self)
    monkeypatch.setattr(_models, "TreesAsRead", Recorded)
    (tmp_path / "m.ubj").write_bytes(data)
    loaded = load_model(tmp_path / "m.ubj")
    assert _read_trees(made[-1]) == N_TREES
    regressor, X = model
    np.testing.assert_array_equal(loaded.predict(X), regressor.predict(X))
    # a fault in the last tree, read in the last parts
    (tmp_path / "bad.ubj").write_bytes(
        _in_tree(data, N_TREES - 1, lambda t: t["right_children"].__setitem__(0, -5)))
    with pytest.raises(FileError, match="refusing"):
        load_model(tmp_path / "bad.ubj")
    assert _read_trees(made[-1]) == N_TREES  # its fault found as it was read


@pytest.mark.parametrize("change", ["grows", "shrinks"])
def test_a_file_changed_while_read_loads_as_its_bytes_read(model, data, tmp_path,
                                                             monkeypatch, change):
    """The bytes handed to the checks and to XGBoost are the ones read, all of them."""
    monkeypatch.setattr(_read, "READ_PART", 4096)
    path = tmp_path / "m.ubj"
    path.write_bytes(data)

    class Changing(TreesAsRead):
        def __call__(self, buf, filled):
            super().__call__(buf, filled)
            if filled == 4096:  # after the first part
                with open(path, "r+b") as f:
                    if change == "grows":
                        f.seek(0, 2)
                        f.write(b"Z")
                    else:
                        f.truncate(len(data) // 2)
    monkeypatch.setattr(_models, "TreesAsRead", Changing)
    with pytest.raises(FileError) as changed:
        load_model(path)
    monkeypatch.setattr(_models, "TreesAsRead", TreesAsRead)
    with pytest.raises(FileError) as settled:  # the file as it is now, read at rest
        load_model(path)
    assert str(changed.value) == str(settled.value)
