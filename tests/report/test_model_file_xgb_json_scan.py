"""An XGBoost JSON file's node arrays read straight from its text into typed arrays
(issue #40: orjson's Python numbers and numpy's reading of them were two thirds of the
check cost), exactly as the reading through orjson types them, or declined.

The oracle is the reading it replaces: orjson's document typed by ``typed_arrays``
(which its own tests hold to XGBoost's own load), and XGBoost's load of the file.
"""

import json

import numpy as np
import pytest

from modellens.files import FileError, _models, load_model as load_model_file
from modellens.files._ubjson import typed_arrays, ubjson_bytes

xgb = pytest.importorskip("xgboost")
orjson = pytest.importorskip("orjson")


def _same(a, b):
    """Two documents alike: keys in order, arrays of one type and the same bytes."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and \
            a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if isinstance(a, dict):
        return type(b) is dict and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return type(b) is list and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


def _through_orjson(text: bytes):
    """The reading the scan replaces: orjson's document, typed (None where it declines)."""
    doc, exact = _models._read_xgboost(text, True)
    return typed_arrays(doc, text) if exact else None


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + 0.3 * X[:, 1] ** 2
    folder = tmp_path_factory.mktemp("xgb_json")
    targets = {"vector leaves": np.c_[y, -y], "multiclass": (y > 0).astype(int) + (y > 1)}
    settings = {"gbtree": {}, "dart": {"booster": "dart"}, "gblinear": {"booster": "gblinear"},
                "vector leaves": {"tree_method": "hist", "multi_strategy": "multi_output_tree"},
                "multiclass": {}}
    models = {name: (xgb.XGBClassifier if name == "multiclass" else xgb.XGBRegressor)(
        n_estimators=3, max_depth=3, **kw).fit(X, targets.get(name, y))
        for name, kw in settings.items()}
    for name, model in models.items():
        model.save_model(folder / f"{name}.json")
    return X, models, folder


def test_xgboost_files_take_the_scan_and_load_as_xgboost_loads_them(saved, monkeypatch):
    X, models, folder = saved
    taken = []
    real = _models._typed_json
    monkeypatch.setattr(_models, "_typed_json", lambda data: taken.append(real(data)) or
                        taken[-1])
    for name, model in models.items():
        path = folder / f"{name}.json"
        text = path.read_bytes()
        assert _same(real(text), _through_orjson(text)), name
        loaded = load_model_file(path)
        assert taken[-1] is not None, name  # the scan read it
        own = type(model)()
        own.load_model(path)
        assert np.array_equal(loaded.predict(X, output_margin=True),
                              own.predict(X, output_margin=True)), name
        assert bytes(loaded.get_booster().save_raw("ubj")) == \
            bytes(own.get_booster().save_raw("ubj")), name
        assert loaded.get_booster().get_dump() == own.get_booster().get_dump(), name


def _with_literals(text: bytes, literals) -> bytes:
    """``text`` (gbtree's file) with tree 0's split_conditions written as ``literals``."""
    doc = json.loads(text)
    tree = doc["learner"]["gradient_booster"]["model"]["trees"][0]
    n = len(tree["split_conditions"])
    tree["split_conditions"] = [f"@{k % len(literals)}" for k in range(n)]
    out = json.dumps(doc, separators=(",", ":"))
    for k in range(n):
        out = out.replace(f'"@{k % len(literals)}"', literals[k % len(literals)], 1)
    return out.encode()


def test_every_literal_reads_as_orjson_and_numpy_read_it_or_declines(saved):
    _, _, folder = saved
    text = (folder / "gbtree.json").read_bytes()
    rng = np.random.default_rng(3)
    floats = rng.normal(size=140) * 10.0 ** rng.integers(-12, 12, 140)
    # XGBoost's own writing (float32's shortest digits), Python's (float64's: 17 digits)
    literals = [np.format_float_scientific(np.float32(f), unique=True).upper() for f in floats] + \
        ["0", "-0", "-0.0", "0.0", "1E5", "1e+5", "-2.5e-3", "0.000123", "123456789",
         "9007199254740992", "4.5E22", "7E-22", "-1.5E-0", "2E0",
         # float32's subnormals and largest (powers of ten past 22, read in steps)
         "1E-45", "-1.4E-45", "3E-40", "1.1754944E-38", "3.4028235E38", "-7.006492E-46"] + \
        [repr(float(np.float32(f))) for f in floats[:28]]
    read = {"taken": 0, "declined": 0}
    for k in range(0, len(literals), 7):
        case = _with_literals(text, literals[k:k + 7])
        ours, theirs = _models._typed_json(case), _through_orjson(case)
        read["taken" if ours is not None else "declined"] += 1
        # (7.527786E+07 is a float32 halfway point: both decline)
        assert ours is None or _same(ours, theirs), literals[k:k + 7]
    assert read["taken"] >= 20 and read["declined"] > 0  # both ways are met


@pytest.mark.parametrize("literal", ["16777217", "16777217.0", "1.6777217E7",  # halfway
                                     "3.4E39", "01", "1.", ".5", "+1", "1e", "- 1",
                                     "12345678901234567890", "1E67", "1E-67",
                                     "7.006492321624085E-46"])  # near 2**-150, halfway
def test_what_the_scan_does_not_read_exactly_is_declined(saved, literal):
    _, _, folder = saved
    case = _with_literals((folder / "gbtree.json").read_bytes(), ["0.5", literal])
    assert _models._typed_json(case) is None


def test_what_is_not_a_node_array_where_it_types_them_is_declined(saved):
    _, _, folder = saved
    text = (folder / "gbtree.json").read_bytes()
    doc = json.loads(text)
    elsewhere = json.loads(text)  # a node array's key outside the trees
    elsewhere["learner"]["learner_model_param"]["weights"] = [1.5, 2.5]
    strings = json.loads(text)  # the keys and brackets inside a string are not read
    strings["learner"]["attributes"]["note"] = '"left_children":[7, 8], "x": ["\\"'
    assert _models._typed_json(json.dumps(strings).encode()) is not None
    ints = json.loads(text)
    ints["learner"]["gradient_booster"]["model"]["trees"][0]["left_children"][0] = 1.0
    scalar = json.loads(text)  # a node array's key holding a number
    scalar["learner"]["gradient_booster"]["model"]["trees"][1]["split_type"] = 0
    for bad in (elsewhere, ints, scalar):
        assert _models._typed_json(json.dumps(bad).encode()) is None
    assert _models._typed_json(json.dumps(doc).encode()) is not None


def test_a_repeated_key_is_refused_not_read_as_orjson_keeps_it(saved, tmp_path):
    _, _, folder = saved
    text = (folder / "gbtree.json").read_text()
    tree = text.index('"id":1')
    path = tmp_path / "twice.json"
    path.write_text(text[:tree] + '"id":0,' + text[tree:])  # orjson keeps the last: 1
    assert _models._typed_json(path.read_bytes()) is None
    with pytest.raises(FileError, match="appears twice"):
        load_model_file(path)


def test_a_planted_fault_in_a_scanned_file_is_refused(saved, tmp_path):
    _, _, folder = saved
    doc = json.loads((folder / "gbtree.json").read_bytes())
    tree = doc["learner"]["gradient_booster"]["model"]["trees"][1]
    tree["split_indices"][0] = 1000  # a feature the model does not have
    text = json.dumps(doc, separators=(",", ":")).encode()
    assert _models._typed_json(text) is not None  # the scan reads it
    (tmp_path / "bad.json").write_bytes(text)
    with pytest.raises(FileError, match="split feature"):
        load_model_file(tmp_path / "bad.json")
    assert ubjson_bytes(_models._typed_json(text)) == ubjson_bytes(_through_orjson(text))
