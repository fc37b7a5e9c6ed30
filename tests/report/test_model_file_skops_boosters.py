"""A booster in a skops file is checked whatever encoding its schema is written in.

json (and so skops) reads a ``schema.json`` in UTF-8, UTF-16 or UTF-32; a test of
the bytes for ``Booster`` before the booster walk missed one in UTF-16 (session 21),
and LightGBM then read its text unchecked.
"""

import json
import zipfile

import numpy as np
import pytest

from modellens.files import FileError, load_model

sio = pytest.importorskip("skops.io")
lgb = pytest.importorskip("lightgbm")


def _out_of_range_child(text):
    """Tree 0's first split's left child written as a node far past the tree's end (the
    ``tree_sizes`` line dropped: the sizes no longer hold)."""
    lines = [line for line in text.split("\n") if not line.startswith("tree_sizes=")]
    at = next(i for i, line in enumerate(lines) if line.startswith("left_child="))
    values = lines[at].split("=", 1)[1].split(" ")
    values[0] = "900"
    lines[at] = "left_child=" + " ".join(values)
    return "\n".join(lines)


def _rewritten(src, dst, encoding, change=None):
    """``src`` with its schema written in ``encoding``, each booster's text changed."""
    with zipfile.ZipFile(src) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    doc = json.loads(files["schema.json"])
    stack = [doc]
    while change and stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("__class__") == "Booster":
                handle = node["content"]["content"]["_handle"]
                handle["content"] = json.dumps(change(json.loads(handle["content"])))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    files["schema.json"] = json.dumps(doc).encode(encoding)
    with zipfile.ZipFile(dst, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return dst


def _saved_booster(tmp_path):
    """A small LightGBM regressor saved as ``ok.skops``, and its rows."""
    X = np.random.default_rng(0).normal(size=(150, 3))
    model = lgb.LGBMRegressor(n_estimators=3, num_leaves=6, verbose=-1,
                              min_child_samples=5).fit(X, X[:, 0])
    sio.dump(model, tmp_path / "ok.skops")
    return model, X


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32-be"])
def test_a_booster_in_a_schema_of_another_encoding_is_checked(tmp_path, encoding):
    model, X = _saved_booster(tmp_path)
    clean = _rewritten(tmp_path / "ok.skops", tmp_path / "clean.skops", encoding)
    bad = _rewritten(tmp_path / "ok.skops", tmp_path / "bad.skops", encoding,
                     _out_of_range_child)
    # skops reads both; the clean one loads as saved, the changed one is refused
    np.testing.assert_array_equal(load_model(clean).predict(X), model.predict(X))
    with pytest.raises(FileError, match="child"):
        load_model(bad)


def test_the_booster_walk_reads_the_schema_the_ids_walk_parsed(tmp_path, monkeypatch):
    # the opened file's schema.json read (and parsed) once, the booster still checked
    model, X = _saved_booster(tmp_path)
    bad = _rewritten(tmp_path / "ok.skops", tmp_path / "bad.skops", "utf-8",
                     _out_of_range_child)
    reads = []
    real = zipfile.ZipFile.read
    monkeypatch.setattr(zipfile.ZipFile, "read", lambda self, name, *args: reads.append(
        (self.filename, name)) or real(self, name, *args))
    np.testing.assert_array_equal(load_model(tmp_path / "ok.skops").predict(X),
                                  model.predict(X))
    assert reads.count((str(tmp_path / "ok.skops"), "schema.json")) == 1
    with pytest.raises(FileError, match="child"):
        load_model(bad)
    assert reads.count((str(bad), "schema.json")) == 1


def test_a_rewritten_booster_loads_from_the_rewritten_file_not_the_nodes(tmp_path, monkeypatch):
    # skops' tree of nodes is built from the parsed schema before the booster walk
    # rewrites a LightGBM text in that very schema (tree by tree, its tree_sizes line
    # dropped): the model must then come from the rewritten file's bytes, never from
    # constructing those nodes, whose state the rewrite changed under them
    from modellens.files import _models

    model, X = _saved_booster(tmp_path)
    built, rewrites, loaded = [], [], []
    real_nodes, real_check = _models._skops_nodes, _models._check_skops_boosters

    def nodes_spied(archive):
        nodes, schema, boosters = real_nodes(archive)
        construct = nodes.construct

        def spied():
            built.append(rewrites[:])  # the rewrites made before this construct()
            return construct()
        monkeypatch.setattr(nodes, "construct", spied)
        return nodes, schema, boosters

    def check_spied(archive, schema):
        data = real_check(archive, schema)
        rewrites.append(data is not None)
        return data

    real_loads = sio.loads
    monkeypatch.setattr(_models, "_skops_nodes", nodes_spied)
    monkeypatch.setattr(_models, "_check_skops_boosters", check_spied)
    monkeypatch.setattr(sio, "loads", lambda data, **kw: loaded.append(len(data)) or
                        real_loads(data, **kw))
    np.testing.assert_array_equal(load_model(tmp_path / "ok.skops").predict(X),
                                  model.predict(X))
    assert rewrites == [True] and loaded and built == []
    # the spy sees a construct where no booster is rewritten (a tree model)
    from sklearn.tree import DecisionTreeRegressor

    sio.dump(DecisionTreeRegressor(max_depth=2).fit(X, X[:, 0]), tmp_path / "tree.skops")
    rewrites.clear()
    load_model(tmp_path / "tree.skops")
    assert built == [[]] and rewrites == []
