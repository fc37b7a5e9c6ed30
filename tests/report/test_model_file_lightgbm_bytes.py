"""A plain LightGBM text goes to LightGBM's loader as the bytes checked (issue 40).

``load_model`` checks a plain text on its bytes (``check_lightgbm_file(data)``)
and hands those very bytes to ``LGBM_BoosterLoadModelFromString``
(``lightgbm_loaded_booster``), without decoding them to a ``str`` that
``Booster(model_str=)`` would encode back.  Oracles: LightGBM's own load of the
file (``Booster(model_file=)``: every attribute, predictions, its text,
pickling); the verdict of the text path (the bytes decoded, then checked) on
planted faults the bytes path must not pass; the public path where the guard of
LightGBM's internals does not prove them.
"""

import pickle

import numpy as np
import pytest

from modellens.files import FileError, _models, load_model
from modellens.trees import UnsafeModelError, _lightgbm, check_lightgbm_file

lgb = pytest.importorskip("lightgbm")
pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A multiclass model of a DataFrame with a categorical column and UTF-8 feature names
    (pandas_categorical, num_class 3, a non-ASCII header), and its rows."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"größe": rng.normal(size=300), "b": rng.normal(size=300),
                      "farbe": pd.Categorical(rng.choice(["rot", "grün", "blau"], 300))})
    y = (X["größe"] > 0).astype(int) + (X["farbe"] == "rot")
    booster = lgb.train({"objective": "multiclass", "num_class": 3, "num_leaves": 5,
                         "verbose": -1, "min_data_in_leaf": 5}, lgb.Dataset(X, y),
                        num_boost_round=3)
    path = tmp_path_factory.mktemp("lgb") / "m.txt"
    booster.save_model(path)
    return path, X


def _same_booster(model, own, X):
    assert type(model) is type(own)
    mine, theirs = vars(model), vars(own)
    for key in theirs.keys() - {"_handle"}:
        assert mine[key] == theirs[key], key
    assert model.num_model_per_iteration() == own.num_model_per_iteration() == 3
    assert model.feature_name() == own.feature_name() == ["größe", "b", "farbe"]
    assert model.model_to_string() == own.model_to_string()
    np.testing.assert_array_equal(model.predict(X), own.predict(X))
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(X), own.predict(X))
    assert again.pandas_categorical == own.pandas_categorical


def test_the_bytes_go_to_lightgbm_and_make_its_own_booster(files, monkeypatch):
    path, X = files
    called = []
    real = _models.lightgbm_loaded_booster
    monkeypatch.setattr(_models, "lightgbm_loaded_booster",
                        lambda data: called.append(data) or real(data))
    model = load_model(path)
    assert called == [path.read_bytes()]  # the bytes path, the non-ASCII header included
    own = lgb.Booster(model_file=str(path))
    assert own.pandas_categorical and own.pandas_categorical[0] == ["blau", "grün", "rot"]
    _same_booster(model, own, X)


def test_lightgbm_reads_the_bytes_read_not_the_file_again(files, tmp_path, monkeypatch):
    path, X = files
    copy = tmp_path / "m.txt"
    copy.write_bytes(path.read_bytes())
    real = type(copy).read_bytes

    def read_then_swap(self):
        data = real(self)
        self.write_bytes(b"tree\nhostile\n")  # a file changed right after its check read it
        return data

    monkeypatch.setattr(type(copy), "read_bytes", read_then_swap)
    model = load_model(copy)
    monkeypatch.undo()
    np.testing.assert_array_equal(model.predict(X), lgb.Booster(model_file=str(path)).predict(X))


def _planted(data, where, what):
    at = {"header": data.index(b"feature_names=") + len(b"feature_names="),
          "tree line": data.index(b"\nleaf_value=") + len(b"\nleaf_value="),
          "tree key": data.index(b"\nleaf_value=") + 1,
          "after the trees": data.index(b"pandas_categorical:") + len(b"pandas_categorical:")}
    return data[:at[where]] + what + data[at[where]:]


def _verdict(fn, *args):
    try:
        return fn(*args)
    except (UnsafeModelError, FileError, lgb.basic.LightGBMError, ValueError):
        return "refused"


@pytest.mark.parametrize("where", ["header", "tree line", "tree key", "after the trees"])
@pytest.mark.parametrize("what", [b"\xff", b"\xc3", "é".encode()])
def test_a_planted_byte_gets_the_verdict_of_the_decoded_text(files, tmp_path, where, what):
    # bytes that are no UTF-8 are refused as such wherever they stand (decoding the
    # header and the lines after the trees leniently would pass them); a UTF-8 letter
    # gets the text path's verdict
    path, X = files
    bad = tmp_path / "bad.txt"
    bad.write_bytes(_planted(path.read_bytes(), where, what))
    data = bad.read_bytes()
    fast = _verdict(check_lightgbm_file, data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        assert fast is None  # undecided on the bytes: the text path refuses them
        with pytest.raises(FileError, match="not UTF-8"):
            load_model(bad)
        return
    checked = _verdict(check_lightgbm_file, data, text)
    assert fast is None or fast == checked
    expected = checked if checked == "refused" else _verdict(lambda: lgb.Booster(model_str=text))
    model = _verdict(load_model, bad)
    if expected == "refused":
        assert model == "refused"
    else:
        np.testing.assert_array_equal(model.predict(X), expected.predict(X))


def test_the_public_path_where_the_private_one_fails(files, monkeypatch):
    path, X = files
    own = lgb.Booster(model_file=str(path))
    monkeypatch.setattr(_lightgbm, "_PROVEN", [])
    # the private path's empty model refused by this LightGBM: it cannot run
    monkeypatch.setattr(_lightgbm, "_NO_TREES", "tree\nnot a model\n")
    assert not _lightgbm._loads_as_public()
    public, real = [], lgb.Booster

    def spy(*args, model_str=None, **kwargs):
        public.append(model_str)
        return real(*args, model_str=model_str, **kwargs)

    monkeypatch.setattr(lgb, "Booster", spy)
    model = load_model(path)
    assert public == [path.read_text(encoding="utf-8")]
    monkeypatch.undo()
    _same_booster(model, own, X)


def test_the_guard_refuses_a_layout_that_loads_otherwise(monkeypatch):
    # pandas_categorical read some other way: the public and the private Booster differ
    monkeypatch.setattr(_lightgbm, "_PROVEN", [])
    monkeypatch.setattr(lgb.basic, "_load_pandas_categorical", lambda **kwargs: None)
    assert not _lightgbm._loads_as_public()
    monkeypatch.setattr(_lightgbm, "_PROVEN", [])
    monkeypatch.undo()
    assert _lightgbm._loads_as_public()
