"""skops files whose objects of one id differ, and HistGradientBoosting models whose
``predict`` reads other columns or codes than their trees (a silent wrong answer of the
fuzz run: ``verbose`` changed 0 -> 2, predictions 0.96 away from the model's own).

skops builds every ``__id__`` once, from the first node of that id it reads.  CPython
shares small ints, so ``verbose=0`` and a column index 0 of the categorical
preprocessor are one id: a file with ``verbose`` changed loads with that column index
changed, the model then routes another column into its trees, and everything the trees
say (modellens' parse of them) is about other inputs than the model's predictions.

Nodes of one id are compared side by side (a gradient boosting's RandomState is
written once per tree, 301 times), which must tell exactly what the digests tell
(their comparison is the oracle), falling back to the digests past its budget; the
fast reader of their array files hands over the bytes zipfile reads, or leaves a
file zipfile refuses to zipfile.
"""

import io
import json
import struct
import tracemalloc
import warnings
import zipfile
from functools import partial

import numpy as np
import pandas as pd
import pytest

from modellens.files import FileError, _skops_ids, load_model
from modellens.files._skops_ids import (_ALL_AT_ONCE, _all_same, _ArrayFiles, _digest,
                                         _same, _stored_bytes)
from modellens.trees import UnsafeModelError, check_sklearn_objects

sio = pytest.importorskip("skops.io")


def _frame(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                      "c": rng.integers(0, 6, n).astype(float)})
    X.loc[::10, "c"] = np.nan  # a missing category: the encoder's missing code matters
    return X, X.a - 2 * X.b + 3 * (X.c == 2) + rng.normal(scale=0.1, size=n)


def _hgb():
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = _frame()
    return HistGradientBoostingRegressor(max_iter=6, max_depth=3,
                                         categorical_features=[2]).fit(X, y), X


def _rewrite(data: bytes, change) -> bytes:
    """A skops file with ``change(schema, arrays)`` applied (arrays: name -> bytes)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    schema = json.loads(src.read("schema.json"))
    arrays = {n: src.read(n) for n in src.namelist() if n != "schema.json"}
    change(schema, arrays)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        dst.writestr("schema.json", json.dumps(schema))
        for name, raw in arrays.items():
            dst.writestr(name, raw)
    return out.getvalue()


def _nodes(schema):
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            yield node
            stack.extend(node.values())


def test_a_changed_int_shared_by_id_is_refused(tmp_path):
    model, X = _hgb()
    data = sio.dumps(model)

    def set_verbose(schema, arrays):
        verbose = schema["content"]["content"]["verbose"]
        assert verbose["content"] == "0"
        # the file as skops writes it: verbose shares its id with a column index
        assert sum(n.get("__id__") == verbose["__id__"] for n in _nodes(schema)) > 1
        verbose["content"] = "2"

    path = tmp_path / "hgb.skops"
    path.write_bytes(_rewrite(data, set_verbose))
    # the harm: skops builds a model that predicts other values than the one saved
    built = sio.load(path, trusted=sio.get_untrusted_types(file=path))
    assert built.verbose == 2
    assert np.max(np.abs(built.predict(X) - model.predict(X))) > 0.1
    with pytest.raises(FileError, match="two objects of one id"):
        load_model(path)
    # the file as saved loads, and predicts as the model
    path.write_bytes(data)
    np.testing.assert_array_equal(load_model(path).predict(X), model.predict(X))


def test_array_files_of_one_id_must_hold_the_same_bytes(tmp_path):
    """Two nodes of one id may name other array files (skops' temporaries), of equal
    bytes: a SimpleImputer's two dtypes are one object, written twice."""
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline

    X, y = _frame()
    data = sio.dumps(make_pipeline(SimpleImputer(), Ridge()).fit(X, y))
    path = tmp_path / "pipe.skops"
    path.write_bytes(data)
    load_model(path)  # two names, equal bytes: loads

    def change_one_dtype(schema, arrays):
        imputer = schema["content"]["content"]["steps"]["content"][0]["content"][1]
        state = imputer["content"]["content"]
        fit, fill = state["_fit_dtype"], state["_fill_dtype"]
        assert fit["__id__"] == fill["__id__"]
        name = fill["content"]["file"]
        assert name != fit["content"]["file"]
        buf = io.BytesIO()
        np.save(buf, np.zeros(0, np.float32), allow_pickle=False)
        arrays[name] = buf.getvalue()

    path.write_bytes(_rewrite(data, change_one_dtype))
    with pytest.raises(FileError, match="two objects of one id"):
        load_model(path)


def _unseen(model, X):
    """Rows with categories the model never saw, missing values (the codes where the
    encoder's settings matter) and numbers just above each split (where float32 differs)."""
    nodes = np.concatenate([p.nodes for per in model._predictors for p in per])
    split = (nodes["is_leaf"] == 0) & (nodes["is_categorical"] == 0)
    near = pd.DataFrame(np.repeat(X.head(1).to_numpy(), split.sum(), axis=0), columns=X.columns)
    for row, (f, t) in enumerate(zip(nodes["feature_idx"][split], nodes["num_threshold"][split])):
        # the preprocessor puts the categorical column first: tree feature j is column j - 1
        near.iloc[row, int(f) - 1] = np.nextafter(np.float64(np.float32(t)), np.inf) \
            if np.float32(t) > t else np.nextafter(t, np.inf)
    return pd.concat([X, X.head(5).assign(c=[7.0, 8.0, np.nan, 9.0, np.nan]), near],
                     ignore_index=True)


def _set_numeric_dtype(model):
    model._preprocessor.transformers_[1][1].func = partial(
        model._preprocessor.transformers_[1][1].func.func, dtype=[np.float32],
        ensure_all_finite=False)


def _swap_categories(model):
    cats = model._preprocessor.named_transformers_["encoder"].categories_
    cats[0] = cats[0][::-1].copy()


TAMPERS = {
    "input indices": lambda m: m._preprocessor._transformer_to_input_indices.update(
        numerical=[2, 1]),
    "numeric mask": lambda m: m._preprocessor.transformers_[1][2].__setitem__(
        slice(None), [False, True, True]),
    "column names": lambda m: setattr(m._preprocessor, "feature_names_in_",
                                      np.array(["b", "a", "c"], object)),
    "weights": lambda m: setattr(m._preprocessor, "transformer_weights", {"numerical": 2.0}),
    "unknown value": lambda m: setattr(m._preprocessor.named_transformers_["encoder"],
                                       "unknown_value", 2),
    "missing value": lambda m: setattr(m._preprocessor.named_transformers_["encoder"],
                                       "encoded_missing_value", 2),
    "missing index": lambda m: setattr(m._preprocessor.named_transformers_["encoder"],
                                       "_missing_indices", {0: 2}),
    "unsorted categories": _swap_categories,
    "numeric dtype": _set_numeric_dtype,
    "in fit": lambda m: setattr(m, "_in_fit", True),
}


@pytest.mark.parametrize("name", list(TAMPERS))
def test_what_predict_reads_and_the_trees_do_not_is_checked(name):
    model, X = _hgb()
    check_sklearn_objects(model)  # as fitted: passes
    rows = _unseen(model, X)
    # a DataFrame's columns are routed by name, an array's by position
    inputs = (rows, rows.to_numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an array for a model fitted on a DataFrame
        before = [model.predict(x) for x in inputs]
        TAMPERS[name](model)
        try:  # the change matters: the model predicts other values (or fails)
            assert not all(np.allclose(model.predict(x), b) for x, b in zip(inputs, before))
        except (ValueError, IndexError, TypeError):
            pass
    with pytest.raises(UnsafeModelError):
        check_sklearn_objects(model)


def test_outputs_and_baseline_agree():
    model, _ = _hgb()
    model._baseline_prediction = model._baseline_prediction.reshape(1, 1, 1)
    with pytest.raises(UnsafeModelError, match="baseline"):
        check_sklearn_objects(model)
    model, _ = _hgb()
    model.n_trees_per_iteration_ = 2
    with pytest.raises(UnsafeModelError, match="baseline"):
        check_sklearn_objects(model)


# ------------------------------------------- copies of one id (issue 40, session 19)
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
                            lambda schema, archive, **how: real(schema, archive, budget=budget, **how))
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


def test_many_copies_of_the_random_state_are_compared_at_once_and_a_changed_one_refused(
        tmp_path, monkeypatch):
    from sklearn.ensemble import GradientBoostingRegressor

    X = np.random.default_rng(1).normal(size=(60, 2))
    count = _ALL_AT_ONCE + 2  # trees, each with a copy of the RandomState
    data = sio.dumps(GradientBoostingRegressor(n_estimators=count, max_depth=1,
                                               random_state=0).fit(X, X[:, 0]))
    path = tmp_path / "gb.skops"
    path.write_bytes(data)
    at_once = []
    real = _skops_ids._all_same
    monkeypatch.setattr(_skops_ids, "_all_same",
                        lambda head, copies, *rest: at_once.append(len(copies)) or
                        real(head, copies, *rest))
    load_model(path)  # as saved
    assert at_once == [count]  # the copies, one id: compared all at once

    def state(schema, which):
        states = _states(schema)
        assert len(states) == count + 1 and len({s["__id__"] for s in states}) == 1
        return states[which]["content"]["content"]["state"]["content"]

    def new_word(which):  # one word of the key array, in the copy's own file
        def change(schema, files):
            name = state(schema, which)["key"]["file"]
            key = np.load(io.BytesIO(files[name]))
            key[5] ^= 1 << 20
            buffer = io.BytesIO()
            np.save(buffer, key)
            files[name] = buffer.getvalue()
        return change

    def new_position(schema, files):  # the copy's text
        state(schema, 4)["pos"]["content"] += "0"

    def shared_file(schema, files):  # a copy naming another copy's file: same bytes
        state(schema, 3)["key"]["file"] = state(schema, 2)["key"]["file"]

    for change in (new_word(-1), new_word(1), new_position):
        path.write_bytes(_rewrite(data, change))
        with pytest.raises(FileError, match="two objects of one id"):
            load_model(path)
    path.write_bytes(_rewrite(data, shared_file))
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
    head, copy, *others = _states(schema)
    # all with x: 1 and NaN in the head, the copy's own values as saved
    for node in (head, copy, *others):
        node["content"]["content"]["gauss"]["x"] = 1
        node["content"]["content"]["gauss"]["y"] = [float("nan"), 0.0]
    _cases()[case](copy)
    files = _ArrayFiles(archive)
    digested = _digest(head, {}, files) == _digest(copy, {}, files)
    assert _same(head, copy, files, [10 ** 6]) is digested
    assert digested is (case in ("nothing", "an __id__ only", "no __id__", "NaN for NaN"))
    assert _same(head, copy, files, [3]) is None  # past its budget: the digests decide
    # all copies at once: passes only what the digests pass (a dict of other keys, as one
    # without its __id__, is left to the side-by-side comparison), the copy among others
    for before in ([], others):
        fast = _all_same(head, [*before, copy], files, [10 ** 6], frozenset())
        assert fast is (digested and case != "no __id__")
    assert _all_same(head, [copy], files, [3], frozenset()) is False  # past its budget


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


def _central_header(data, name):
    """Where the central directory's header of the file ``name`` begins (46 bytes, then
    the name)."""
    central = data.index(b"PK\x01\x02")
    while bytes(data[central + 46:central + 46 + len(name)]) != name.encode():
        central = data.index(b"PK\x01\x02", central + 4)
    return central


@pytest.mark.parametrize("fault", ["central CRC", "local name", "size"])
def test_a_copy_file_zipfile_refuses_is_refused(tmp_path, fault):
    # the bytes of the copy's key file stay the same: only zipfile's own checks see it
    data = bytearray(_gradient_boosting_file())
    name = _copy_key_entry(bytes(data))
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo(name)
    if fault == "central CRC":
        central = _central_header(data, name)
        crc = struct.unpack_from("<I", data, central + 16)[0]
        struct.pack_into("<I", data, central + 16, crc ^ 1)
    elif fault == "size":  # 4 GB, said in both sizes of the central directory
        central = _central_header(data, name)
        struct.pack_into("<II", data, central + 20, 0xFFFFFFF0, 0xFFFFFFF0)
    else:
        start = info.header_offset + 30
        assert bytes(data[start:start + len(name)]) == name.encode()
        data[start] = ord("9") if data[start] != ord("9") else ord("8")
    path = tmp_path / "bad.skops"
    path.write_bytes(bytes(data))
    with zipfile.ZipFile(path) as archive:
        tracemalloc.start()
        try:
            assert _stored_bytes(archive, name) is None
            assert tracemalloc.get_traced_memory()[1] < 1 << 26  # no buffer of the size said
        finally:
            tracemalloc.stop()
        with pytest.raises((zipfile.BadZipFile, EOFError)):
            archive.read(name)
    with pytest.raises(FileError, match="skops file"):
        load_model(path)
