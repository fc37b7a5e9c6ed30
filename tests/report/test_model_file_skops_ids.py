"""skops files whose objects of one id differ, and HistGradientBoosting models whose
``predict`` reads other columns or codes than their trees (a silent wrong answer of the
fuzz run: ``verbose`` changed 0 -> 2, predictions 0.96 away from the model's own).

skops builds every ``__id__`` once, from the first node of that id it reads.  CPython
shares small ints, so ``verbose=0`` and a column index 0 of the categorical
preprocessor are one id: a file with ``verbose`` changed loads with that column index
changed, the model then routes another column into its trees, and everything the trees
say (modellens' parse of them) is about other inputs than the model's predictions.
"""

import io
import json
import warnings
import zipfile
from functools import partial

import numpy as np
import pandas as pd
import pytest

from modellens.files import FileError, load_model
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
