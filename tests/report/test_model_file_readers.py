"""Model files read at about the cost of the library's own load (issue 40, the checks' cost).

UBJSON's typed arrays of numbers are read as one numpy array each (not value by
value), and the checked document goes back to XGBoost as UBJSON, those
arrays' bytes as they were read: XGBoost gets exactly the document checked.
An XGBoost JSON file is read by orjson where that is exactly json's reading
with no key repeated; a repeated key is still refused by name, wherever it is
(the oracle: json's own reading with a hook that sees every key).
"""

import json

import numpy as np
import pandas as pd
import pytest

from modellens.files import load_model as load_model_file
from modellens.files import _models
from modellens.files._ubjson import Ubjson, ubjson_bytes

xgb = pytest.importorskip("xgboost")


def _frame(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    return X, X.a - 2 * X.b + rng.normal(scale=0.1, size=n)


def _models_of_every_kind():
    X, y = _frame()
    Xc = X.assign(c=pd.Categorical(np.arange(len(X)) % 4))
    yield "gbtree", xgb.XGBRegressor(n_estimators=4, max_depth=3).fit(X, y), X
    yield "categorical", xgb.XGBRegressor(n_estimators=3, max_depth=3, enable_categorical=True,
                                          tree_method="hist").fit(Xc, y), Xc
    yield "vector leaves", xgb.XGBRegressor(
        n_estimators=3, max_depth=2, tree_method="hist", multi_strategy="multi_output_tree"
    ).fit(X, np.c_[y, -y]), X
    yield "dart", xgb.XGBRegressor(n_estimators=3, max_depth=2, booster="dart").fit(X, y), X
    yield "gblinear", xgb.XGBRegressor(n_estimators=3, booster="gblinear").fit(X, y), X
    yield "classifier", xgb.XGBClassifier(n_estimators=3, max_depth=2).fit(X, y > 0), X


def test_ubjson_typed_arrays_are_read_as_one_array_each(tmp_path):
    X, y = _frame()
    xgb.XGBRegressor(n_estimators=2, max_depth=3).fit(X, y).save_model(tmp_path / "m.ubj")
    doc = Ubjson((tmp_path / "m.ubj").read_bytes()).document()
    tree = doc["learner"]["gradient_booster"]["model"]["trees"][1]
    assert isinstance(tree["left_children"], np.ndarray)
    assert tree["left_children"].dtype == np.int32 and tree["left_children"][0] > 0
    assert tree["split_conditions"].dtype == np.float32
    # written back and read again: the same document, each array of its own type
    again = Ubjson(ubjson_bytes(doc)).document()
    assert again.keys() == doc.keys()
    t2 = again["learner"]["gradient_booster"]["model"]["trees"][1]
    for key, value in tree.items():
        if isinstance(value, np.ndarray):
            assert t2[key].dtype == value.dtype and np.array_equal(t2[key], value), key
        else:
            assert t2[key] == value, key


def test_the_checked_ubjson_document_goes_back_to_xgboost_as_ubjson(tmp_path, monkeypatch):
    given = []
    original = xgb.Booster.load_model

    def spy(self, fname):
        given.append(bytes(fname) if isinstance(fname, (bytes, bytearray)) else fname)
        return original(self, fname)

    monkeypatch.setattr(xgb.Booster, "load_model", spy)
    for name, model, X in _models_of_every_kind():
        path = tmp_path / f"{name}.ubj"
        model.save_model(path)
        given.clear()
        ours = load_model_file(path)
        assert len(given) == 1 and not _models._is_json(given[0]), name
        own = type(ours)()
        own.load_model(str(path))
        # the whole model, every number of it: what XGBoost reads from its own file
        assert bytes(ours.get_booster().save_raw("json")) == \
            bytes(own.get_booster().save_raw("json")), name
        np.testing.assert_array_equal(ours.predict(X), own.predict(X), err_msg=name)


@pytest.mark.parametrize("text", [
    '{"a":1,"a":2}',
    '{"a":{"b":1,"b":2}}',
    '{"a":[{"b":1},{"b":2,"c":{"b":3},"b":4}]}',
    '{"a" :1,\n "a"\t: 2}',
    '{"x":":","x":1}',
    '{"a":"\\u0061","\\u0061":1}',  # the same key once decoded
    '{"learner":{"a":[1,2,3],"b":[{"c":"{","c":"}"}]}}',
])
def test_a_repeated_key_is_refused_wherever_it_is(text):
    with pytest.raises(ValueError, match="appears twice"):
        _models._decode_xgboost(text.encode(), "t")


@pytest.mark.parametrize("text", [
    '{"a":"\\"b\\":","b":1}',
    '{"k":"{","v":"[","w":"}]","x":"\\"","y":":"}',
    '{"a":[1,{"a":2}],"b":{"a":3},"c":[[{"a":4}],{"a":5}]}',
    '{"a":":x","b":"\\u003a","c":NaN,"d":123456789012345678901234567890}',
    '{"a":{},"b":[],"c":[{}],"a ":1,"A":2}',
])
def test_documents_without_a_repeated_key_read_as_json_reads_them(text):
    got = _models._decode_xgboost(text.encode(), "t")
    assert json.dumps(got) == json.dumps(json.loads(text))


def _random_document(rng, depth=0):
    keys = ["a", "b", ":", "{", "[", "a:", '"', "\\u0061", " "]
    if depth > 3 or rng.random() < 0.3:
        return [1, 2.5, "x", '":', "{", None, True][int(rng.integers(0, 7))]
    if rng.random() < 0.4:
        return [_random_document(rng, depth + 1) for _ in range(int(rng.integers(0, 4)))]
    out = []
    for _ in range(int(rng.integers(0, 5))):
        out.append((keys[int(rng.integers(0, len(keys)))], _random_document(rng, depth + 1)))
    return out


def _written(node):
    """A random document as JSON text, its objects' keys (repeats included) as drawn."""
    if isinstance(node, list) and node and all(isinstance(p, tuple) for p in node):
        parts = []
        for key, value in node:
            # "\\u0061" is written as an escape (the key a once decoded)
            name = '"\\u0061"' if key == "\\u0061" else json.dumps(key)
            parts.append(f"{name}{' ' if key == ' ' else ''}:{_written(value)}")
        return "{" + ",".join(parts) + "}"
    if isinstance(node, list) and not node:
        return "{}"
    if isinstance(node, list):
        return "[" + ",".join(_written(v) for v in node) + "]"
    return json.dumps(node)


def test_random_documents_are_read_as_json_with_every_key_seen_reads_them():
    rng = np.random.default_rng(5)
    repeated = 0
    for _ in range(300):
        text = '{"k":' + _written(_random_document(rng)) + \
            (',"k":0}' if rng.random() < 0.1 else "}")
        try:
            expect = json.dumps(json.loads(text, object_pairs_hook=_models._no_repeats))
        except ValueError:
            expect = None
        if expect is None:
            repeated += 1
            with pytest.raises(ValueError, match="appears twice"):
                _models._decode_xgboost(text.encode(), "t")
        else:
            assert json.dumps(_models._decode_xgboost(text.encode(), "t")) == expect, text
    assert 30 < repeated < 270  # both kinds drawn


def test_an_xgboost_json_file_is_read_without_json_where_orjson_reads_it(tmp_path,
                                                                       monkeypatch):
    pytest.importorskip("orjson")
    hooked = []
    loads = json.loads

    def spy(*args, **kwargs):
        if kwargs.get("object_pairs_hook") is _models._no_repeats:
            hooked.append(1)
        return loads(*args, **kwargs)

    monkeypatch.setattr(json, "loads", spy)
    X, y = _frame()
    model = xgb.XGBRegressor(n_estimators=3, max_depth=2).fit(X, y)
    model.save_model(tmp_path / "m.json")
    np.testing.assert_array_equal(load_model_file(tmp_path / "m.json").predict(X),
                                  model.predict(X))
    assert not hooked


def test_a_ubjson_file_of_untyped_arrays_still_loads(tmp_path):
    # found by the long fuzz run: XGBoost's binary reader refuses an untyped array where it
    # writes a typed one (its JSON reader does not): such a file is read back as JSON
    X, y = _frame()
    model = xgb.XGBRegressor(n_estimators=3, max_depth=3).fit(X, y)
    model.save_model(tmp_path / "m.ubj")
    doc = Ubjson((tmp_path / "m.ubj").read_bytes()).document()
    for tree in doc["learner"]["gradient_booster"]["model"]["trees"]:
        tree["left_children"] = tree["left_children"].tolist()
    (tmp_path / "untyped.ubj").write_bytes(ubjson_bytes(doc))
    np.testing.assert_array_equal(load_model_file(tmp_path / "untyped.ubj").predict(X),
                                  model.predict(X))
