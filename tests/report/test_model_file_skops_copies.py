"""Nodes of one skops id compared side by side, and their array files read by ``os.pread``
(issue 40: a gradient boosting's RandomState is written once per tree, 301 times).

skops builds each ``__id__`` once, from the first of its nodes it reads, so every
other node of that id must hold the same values.  The side-by-side comparison
(:func:`_same`) must tell exactly what the digests tell (their comparison is the
oracle here), fall back to the digests past its budget, and the fast reader of
the array files must hand over the bytes zipfile reads, or leave a file that
zipfile refuses to zipfile.
"""

import io
import json
import struct
import zipfile

import numpy as np
import pytest

from modellens.files import FileError, load_model
from modellens.files import _skops_ids
from modellens.files._skops_ids import _ArrayFiles, _digest, _same, _stored_bytes

sio = pytest.importorskip("skops.io")


def _gradient_boosting_file():
    from sklearn.ensemble import GradientBoostingRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    model = GradientBoostingRegressor(n_estimators=4, max_depth=2, random_state=0)
    return sio.dumps(model.fit(X, X[:, 0] - X[:, 1]))


def _states(schema):
    """The RandomState nodes of a schema, in the order of the file."""
    found, stack = [], [schema]
    while stack:
        node = stack.pop(0)
        if isinstance(node, dict):
            if node.get("__class__") == "RandomState":
                found.append(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _rewrite(data, change):
    """The skops file ``data`` with ``change(schema, files)`` applied (files: name -> bytes)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    schema = json.loads(src.read("schema.json"))
    files = {name: src.read(name) for name in src.namelist() if name != "schema.json"}
    change(schema, files)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        dst.writestr("schema.json", json.dumps(schema))
        for name, raw in files.items():
            dst.writestr(name, raw)
    return out.getvalue()


def _last_key(schema):
    """The node of the ``key`` array of the last RandomState copy (one skops never reads)."""
    states = _states(schema)
    assert len(states) == 5 and len({s["__id__"] for s in states}) == 1  # one id, 5 times
    return states[-1]["content"]["content"]["state"]["content"]["key"]


@pytest.mark.parametrize("budget", [None, 0])  # side by side, or digests from the start
def test_a_changed_copy_of_the_random_state_is_refused(tmp_path, budget, monkeypatch):
    data = _gradient_boosting_file()
    path = tmp_path / "gb.skops"
    path.write_bytes(data)
    if budget is not None:
        real = _skops_ids.check_skops_ids
        monkeypatch.setattr("modellens.files._models.check_skops_ids",
                            lambda schema, archive: real(schema, archive, budget=budget))
    load_model(path)  # as saved: its copies are the same

    def new_key(schema, files):
        name = _last_key(schema)["file"]
        key = np.load(io.BytesIO(files[name]))
        key[0] ^= 1
        buffer = io.BytesIO()
        np.save(buffer, key)
        files[name] = buffer.getvalue()

    def new_position(schema, files):
        pos = _states(schema)[-1]["content"]["content"]["state"]["content"]["pos"]
        pos["content"] = str(int(pos["content"]) + 1)

    for change in (new_key, new_position):
        path.write_bytes(_rewrite(data, change))
        with pytest.raises(FileError, match="two objects of one id"):
            load_model(path)


def _cases():
    """Pairs of a node and a changed copy of it: (name, change of the copy)."""
    def at(path, value):
        def change(node):
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
        return change

    def drop(path):
        def change(node):
            for key in path[:-1]:
                node = node[key]
            del node[path[-1]]
        return change

    gauss = ["content", "content", "gauss"]
    return {
        "nothing": lambda node: None,
        "an __id__ only": at([*gauss, "__id__"], 7),
        "no __id__": drop([*gauss, "__id__"]),
        "a key instead of the __id__": lambda node: (drop([*gauss, "__id__"])(node),
                                                     at([*gauss, "extra"], 7)(node)),
        "a str": at([*gauss, "content"], "0.5"),
        "an int for a str": at([*gauss, "content"], 0),
        "true for 1": at([*gauss, "is_json"], 1),
        "1.0 for 1": at([*gauss, "x"], 1.0),
        "-0.0 for 0.0": at([*gauss, "y", 1], -0.0),
        "NaN for NaN": at([*gauss, "y", 0], float("nan")),
        "a list for a dict": at(gauss, []),
        "a dict for a str": at([*gauss, "content"], {}),
        "a list one longer": lambda node: node["content"]["key_types"]["content"].append(1),
        "a list item retyped": at(["content", "key_types", "content", 0], "str"),
        "a file name of other bytes": at(["content", "content", "state", "content", "key",
                                          "file"], "schema.json"),
        "a file name not in the archive": at(["content", "content", "state", "content",
                                              "key", "file"], "none.npy"),
        "a list for a file name": at(["content", "content", "state", "content", "key",
                                      "file"], []),
    }


@pytest.mark.parametrize("case", list(_cases()))
def test_side_by_side_tells_what_the_digests_tell(case):
    data = _gradient_boosting_file()
    archive = zipfile.ZipFile(io.BytesIO(data))
    schema = json.loads(archive.read("schema.json"))
    head, copy = _states(schema)[:2]
    # both with x: 1 and NaN in the head, the copy's own values as saved
    for node in (head, copy):
        node["content"]["content"]["gauss"]["x"] = 1
        node["content"]["content"]["gauss"]["y"] = [float("nan"), 0.0]
    _cases()[case](copy)
    files = _ArrayFiles(archive)
    digested = _digest(head, {}, files) == _digest(copy, {}, files)
    assert _same(head, copy, files, [10 ** 6]) is digested
    assert digested is (case in ("nothing", "an __id__ only", "no __id__", "NaN for NaN"))
    assert _same(head, copy, files, [3]) is None  # past its budget: the digests decide


def test_nested_copies_cost_at_most_the_budget_then_the_digests(monkeypatch):
    # nodes of one id nested in each other's, each level's ids other than the copy's:
    # side by side, each level would walk all below it again (the square of the depth)
    depth = 300

    def chain(tag):
        node = {"__id__": f"leaf-{tag}", "v": 1}
        for level in range(depth):
            node = {"__id__": level if tag else f"{level}-{tag}", "child": node}
        return node

    schema = {"a": chain(0), "b": chain(1), "c": chain(1)}  # a: ids of its own
    visits = []
    real = _skops_ids._same
    monkeypatch.setattr(_skops_ids, "_same", lambda *args: visits.append(1) or real(*args))
    archive = zipfile.ZipFile(io.BytesIO(_gradient_boosting_file()))
    _skops_ids.check_skops_ids(schema, archive, budget=4 * depth)
    assert len(visits) < depth  # the digests took over
    schema["c"]["child"]["child"]["v"] = 2
    with pytest.raises(FileError, match="two objects of one id"):
        _skops_ids.check_skops_ids(schema, archive, budget=4 * depth)


def test_the_fast_reader_hands_over_what_zipfile_reads(tmp_path):
    path = tmp_path / "gb.skops"
    path.write_bytes(_gradient_boosting_file())
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        assert all(_stored_bytes(archive, name) == archive.read(name) for name in names)
    deflated = tmp_path / "deflated.skops"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(deflated, "w", zipfile.ZIP_DEFLATED) \
            as dst:
        for name in names:
            dst.writestr(name, src.read(name))
    with zipfile.ZipFile(deflated) as archive:  # zipfile inflates it
        assert _stored_bytes(archive, names[-1]) is None
    with zipfile.ZipFile(io.BytesIO(path.read_bytes())) as archive:  # no file to pread
        assert _stored_bytes(archive, names[-1]) is None


def _copy_key_entry(data):
    """The name of the array file of the last RandomState copy."""
    return _last_key(json.loads(zipfile.ZipFile(io.BytesIO(data)).read("schema.json")))["file"]


@pytest.mark.parametrize("fault", ["central CRC", "local name"])
def test_a_copy_file_zipfile_refuses_is_refused(tmp_path, fault):
    # the bytes of the copy's key file stay the same: only zipfile's own checks see it
    data = bytearray(_gradient_boosting_file())
    name = _copy_key_entry(bytes(data))
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo(name)
    if fault == "central CRC":
        central = data.index(b"PK\x01\x02")  # the central directory's headers: 46 bytes
        while bytes(data[central + 46:central + 46 + len(name)]) != name.encode():
            central = data.index(b"PK\x01\x02", central + 4)
        crc = struct.unpack_from("<I", data, central + 16)[0]
        struct.pack_into("<I", data, central + 16, crc ^ 1)
    else:
        start = info.header_offset + 30
        assert bytes(data[start:start + len(name)]) == name.encode()
        data[start] = ord("9") if data[start] != ord("9") else ord("8")
    path = tmp_path / "bad.skops"
    path.write_bytes(bytes(data))
    with zipfile.ZipFile(path) as archive:
        assert _stored_bytes(archive, name) is None
        with pytest.raises(zipfile.BadZipFile):
            archive.read(name)
    with pytest.raises(FileError, match="skops file"):
        load_model(path)
