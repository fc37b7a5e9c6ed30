"""A checked XGBoost JSON document handed to XGBoost as UBJSON (issue #40: its binary
reader costs a fraction of its JSON reader), and only where XGBoost reads every number
as its JSON reader would.

XGBoost rounds a JSON literal straight to float32; the checks read it as float64
(orjson) first.  Two roundings differ exactly where the float64 is a float32 halfway
point the literal is not: such a document goes to XGBoost as JSON.  The oracle is
XGBoost's own load of the file.
"""

import json
from decimal import Decimal, getcontext

import numpy as np
import pytest

from modellens.files import _models, load_model as load_model_file
from modellens.files._ubjson import typed_arrays

xgb = pytest.importorskip("xgboost")
orjson = pytest.importorskip("orjson")


def _models_of_every_kind():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + 0.3 * X[:, 1] ** 2
    return X, {
        "gbtree": xgb.XGBRegressor(n_estimators=4, max_depth=3).fit(X, y),
        "dart": xgb.XGBRegressor(n_estimators=4, max_depth=3, booster="dart").fit(X, y),
        "gblinear": xgb.XGBRegressor(n_estimators=4, booster="gblinear").fit(X, y),
        "vector leaves": xgb.XGBRegressor(n_estimators=4, max_depth=3, tree_method="hist",
                                          multi_strategy="multi_output_tree").fit(
            X, np.c_[y, -y]),
        "multiclass": xgb.XGBClassifier(n_estimators=4, max_depth=3).fit(
            X, (y > 0).astype(int) + (y > 1)),
    }


def _spy(monkeypatch):
    """The typed copies made (the scan's of the text, else orjson's document's typed)."""
    handed = []
    real, scanned = _models._as_typed, _models._typed_json
    monkeypatch.setattr(_models, "_as_typed", lambda doc, text: handed.append(
        real(doc, text)) or handed[-1])
    monkeypatch.setattr(_models, "_typed_json", lambda data: handed.append(
        scanned(data)) or handed[-1])
    return handed


def test_xgboost_reads_the_typed_copy_as_the_very_model_of_the_file(tmp_path, monkeypatch):
    X, models = _models_of_every_kind()
    handed = _spy(monkeypatch)
    for name, model in models.items():
        model.save_model(tmp_path / f"{name}.json")
        loaded = load_model_file(tmp_path / f"{name}.json")
        assert handed[-1] is not None, name  # went over as UBJSON
        own = type(model)()
        own.load_model(tmp_path / f"{name}.json")
        assert np.array_equal(loaded.predict(X, output_margin=True),
                              own.predict(X, output_margin=True)), name
        # every number as XGBoost read it from the file: its own writing of both agrees
        assert bytes(loaded.get_booster().save_raw("ubj")) == \
            bytes(own.get_booster().save_raw("ubj")), name


def _halfway_literals(seed=1, n=40):
    """Decimal literals just past, at and just short of float32 halfway points, closer
    than a float64 can tell (orjson reads each as the halfway point itself)."""
    getcontext().prec = 80
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        f = np.float32(rng.normal() * 10.0 ** int(rng.integers(-4, 5)))
        mid = (Decimal(float(f)) + Decimal(float(np.nextafter(f, np.float32(np.inf))))) / 2
        step = Decimal(float(np.nextafter(float(mid), np.inf))) - mid
        out += [format(mid + step / 4, "f"), format(mid - step / 4, "f"), format(mid, "f")]
    return out


def test_a_literal_two_roundings_read_otherwise_goes_to_xgboost_as_json(tmp_path,
                                                                        monkeypatch):
    X, models = _models_of_every_kind()
    models["gbtree"].save_model(tmp_path / "ok.json")
    doc = json.loads((tmp_path / "ok.json").read_text())
    tree = doc["learner"]["gradient_booster"]["model"]["trees"][0]
    leaf = int(np.flatnonzero(np.asarray(tree["left_children"]) == -1)[0])
    tree["split_conditions"][leaf] = "LITERAL"  # a leaf's value: every row reaching it
    text = json.dumps(doc)
    handed = _spy(monkeypatch)
    differ = 0
    for k, literal in enumerate(_halfway_literals()):
        path = tmp_path / f"m{k}.json"
        path.write_text(text.replace('"LITERAL"', literal))
        own = xgb.XGBRegressor()
        own.load_model(path)
        twice = float(np.float32(orjson.loads(literal)))
        xgb_reads = json.loads(bytes(own.get_booster().save_raw("json")))["learner"][
            "gradient_booster"]["model"]["trees"][0]["split_conditions"][leaf]
        differ += np.float32(xgb_reads) != np.float32(twice)
        loaded = load_model_file(path)
        assert handed[-1] is None  # as JSON: XGBoost rounds the literal itself
        assert np.array_equal(loaded.predict(X, output_margin=True),
                              own.predict(X, output_margin=True)), literal
    assert differ > 5  # the two roundings do differ on such literals: the case is real


def test_the_typed_copy_declines_what_its_types_do_not_hold():
    doc = {"learner": {"gradient_booster": {"name": "gbtree", "model": {
        "trees": [{"left_children": [1, -1, -1], "split_conditions": [0.5, 1.0, 2.0]}]}}}}
    assert typed_arrays(doc, json.dumps(doc).encode()) is not None
    for key, values in (("left_children", [1.0, -1, -1]), ("left_children", [2 ** 31, -1, -1]),
                        ("split_conditions", [0.5, True, 2.0]),
                        ("split_conditions", [0.5, None, 2.0]),
                        ("split_conditions", [1e39, 1.0, 2.0]),
                        ("split_conditions", [1 + 2 ** -24, 1.0, 2.0])):  # a halfway point
        tree = dict(doc["learner"]["gradient_booster"]["model"]["trees"][0], **{key: values})
        bad = {"learner": {"gradient_booster": {"name": "gbtree", "model": {"trees": [tree]}}}}
        assert typed_arrays(bad, json.dumps(bad).encode()) is None, (key, values)
