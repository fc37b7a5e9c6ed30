"""The skops schema parsed once, its ids gathered by json's parse (issue 40, session 20).

``read_skops_schema`` parses ``schema.json`` with a hook gathering the nodes of each
``__id__`` (what the walk of the parsed schema, ``_nodes_by_id``, gathers: the oracle),
hands skops' own ``read_schema`` the protocol alone to validate, and gives its context
the archive back.  The side-by-side comparison passes over pairs of nodes of an id whose
flat nodes are all alike (``settled``); an array file is read by one ``os.pread``.
"""

import functools
import io
import json
import zipfile

import numpy as np
import pytest

from modellens.files import FileError, load_model
from modellens.files._skops_ids import (_ArrayFiles, _flat_copies, _nodes_by_id, _same,
                                        _stored_bytes, check_skops_ids, read_skops_schema,
                                        skops_private)

sio = pytest.importorskip("skops.io")
from test_model_file_skops_ids import _states  # noqa: E402  (RandomState nodes, in order)


@functools.lru_cache(maxsize=None)
def _file(kind):
    from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] - X[:, 1]
    if kind != "gb":
        X[::7, 2] = np.nan  # (the imputer's fill, the encoder's missing code)
    model = {"gb": lambda: GradientBoostingRegressor(n_estimators=4, max_depth=2,
                                                     random_state=0),
             "hgb": lambda: HistGradientBoostingRegressor(max_iter=4, categorical_features=[1]),
             "pipeline": lambda: make_pipeline(SimpleImputer(), Ridge())}[kind]()
    if kind == "hgb":
        X[:, 1] = rng.integers(0, 4, len(X))
    return sio.dumps(model.fit(X, y))


def _groups(by_id):
    """Each id's nodes, as the ``id()`` of each, in no order."""
    return {saved: sorted(map(id, nodes)) for saved, nodes in by_id.items()}


@pytest.mark.parametrize("kind", ["gb", "hgb", "pipeline"])
def test_the_parse_gathers_what_the_walk_gathers(kind):
    get_tree, read_schema = skops_private()
    archive = zipfile.ZipFile(io.BytesIO(_file(kind)))
    schema, context, (by_id, booster) = read_skops_schema(archive, read_schema)
    walked, walked_booster = _nodes_by_id(schema)
    assert by_id and _groups(by_id) == _groups(walked) and booster is walked_booster
    theirs, their_context = read_schema(archive)
    assert schema == theirs and context.src.archive is archive
    assert context.protocol == their_context.protocol and context.memo == {}
    get_tree(schema, context, trusted=None).construct()  # the context loads the arrays


def _rewritten(data, change):
    """The skops file ``data`` with its schema's text changed by ``change(text)``."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            raw = src.read(name)
            dst.writestr(name, change(raw.decode()) if name == "schema.json" else raw)
    return out.getvalue()


@pytest.mark.parametrize("protocol", ["true", "1.0", '"1"', "-1", "99", "null", "[1]"])
def test_a_protocol_skops_refuses_is_refused(tmp_path, protocol):
    data = _file("gb")
    found = json.loads(zipfile.ZipFile(io.BytesIO(data)).read("schema.json"))["protocol"]
    path = tmp_path / "gb.skops"
    path.write_bytes(_rewritten(data, lambda text: text.replace(
        f'"protocol": {found}', f'"protocol": {protocol}', 1)))
    with pytest.raises((TypeError, ValueError), match="protocol"):  # skops' own reader
        skops_private()[1](zipfile.ZipFile(path))
    with pytest.raises(FileError, match="protocol"):
        load_model(path)


def test_a_dict_a_repeated_key_drops_is_compared_too(tmp_path):
    """json keeps the last of a repeated key; the hook saw the first too: a node of a known
    id holding other values there is refused (the walk of the parsed schema missed it)."""
    data = _file("gb")
    schema = json.loads(zipfile.ZipFile(io.BytesIO(data)).read("schema.json"))
    verbose = schema["content"]["content"]["verbose"]
    changed = json.dumps({"verbose": dict(verbose, content="7")})
    path = tmp_path / "gb.skops"
    path.write_bytes(_rewritten(data, lambda text: text.replace(
        '"content": {', '"content": ' + changed + ', "content": {', 1)))
    archive = zipfile.ZipFile(path)
    parsed = json.loads(archive.read("schema.json"))
    assert parsed == schema  # json dropped the first "content" of the top level
    check_skops_ids(parsed, archive)  # the walk of the parsed schema does not see it
    with pytest.raises(FileError, match=rf"two objects of one id \({verbose['__id__']}\)"):
        load_model(path)


def test_a_changed_type_node_in_a_random_state_copy_is_refused(tmp_path):
    """The side-by-side comparison of two RandomState copies passes over their ``str``
    TypeNodes (their id settled: every node of it alike); a changed one unsettles it."""
    data = _file("gb")
    archive = zipfile.ZipFile(io.BytesIO(data))
    schema = json.loads(archive.read("schema.json"))
    head, *_, last = _states(schema)
    type_node = last["content"]["key_types"]["content"][0]
    assert type_node["__loader__"] == "TypeNode"
    saved = type_node["__id__"]
    copies = _nodes_by_id(schema)[0][saved]
    assert _flat_copies(copies[0], copies)  # as saved: settled
    type_node["__class__"] = "int"
    assert not _flat_copies(copies[0], copies)
    files = _ArrayFiles(archive)
    # a settled id is passed over, an unsettled one compared
    assert _same(head, last, files, [10 ** 6], {saved}) is True
    assert _same(head, last, files, [10 ** 6]) is False
    path = tmp_path / "gb.skops"
    path.write_bytes(_rewritten(data, lambda text: json.dumps(schema)))
    with pytest.raises(FileError, match=rf"two objects of one id \({saved}\)"):
        load_model(path)


def test_the_reader_of_an_entry_with_an_extra_field(tmp_path):
    """An entry whose local header has an extra field: its bytes read where they start."""
    path = tmp_path / "extra.skops"
    with zipfile.ZipFile(io.BytesIO(_file("gb"))) as src, zipfile.ZipFile(path, "w") as dst:
        for name in src.namelist():
            info = zipfile.ZipInfo(name)
            info.extra = b"\xfe\xca\x04\x00abcd"  # a 4-byte field of an unknown kind
            dst.writestr(info, src.read(name))
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        assert all(_stored_bytes(archive, name) == archive.read(name) for name in names)
    load_model(path)


def test_the_parse_tells_a_booster_and_ids_as_the_walk():
    """A schema of a ``Booster`` node, one memo key written as 3 and 3.0, a string id, and
    a list id (not a memo key)."""
    _, read_schema = skops_private()
    protocol = read_schema(zipfile.ZipFile(io.BytesIO(_file("gb"))))[1].protocol
    text = json.dumps({"protocol": protocol, "content": [
        {"__class__": "Booster", "__id__": 3}, {"__id__": 3.0, "v": [{"__id__": [1]}]},
        {"__id__": [1]}, {"__id__": "3"}, {"__id__": "3", "w": None}]})
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        dst.writestr("schema.json", text)
    schema, _, (by_id, booster) = read_skops_schema(zipfile.ZipFile(out), read_schema)
    walked, walked_booster = _nodes_by_id(schema)
    assert booster is walked_booster is True
    assert _groups(by_id) == _groups(walked) and sorted(map(len, by_id.values())) == [2, 2]
