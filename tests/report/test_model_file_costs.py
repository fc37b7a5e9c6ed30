"""Model files cost what they weigh (issue 40).

A tree deeper than ``MAX_TREE_DEPTH`` is refused with one line before any
dump, walk or kernel layout (a LightGBM chain of splits ended in a
RecursionError at 2,000 leaves and a segmentation fault at 20,000; an XGBoost
chain of 20,000 splits passed every check and TreeSHAP's layout then asked for
gigabytes); a chain within the limit is read without recursion trouble.  The
UBJSON reader refuses typed containers of elements that cost no bytes and
counts beyond what the bytes can hold (a 24 KB file asked for 72 million
values).
"""

import json
import struct
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.files import FileError, load_model as load_model_file
from modellens.trees import MAX_TREE_DEPTH, tree_ensemble

sys.path.insert(0, str(Path(__file__).parents[1] / "fuzz"))
from model_fuzz import lgb_chain, xgb_chain  # noqa: E402


def _frame(n=100):
    rng = np.random.default_rng(0)
    return pd.DataFrame(rng.uniform(0, 1, size=(n, 3)), columns=["a", "b", "c"])


def _lgb_chain_text(n_splits):
    """A valid LightGBM model text whose one tree is a chain of ``n_splits`` splits on ``a``."""
    lgb = pytest.importorskip("lightgbm")
    X = _frame()
    text = lgb.LGBMRegressor(n_estimators=1, num_leaves=3, verbose=-1, min_child_samples=5
                             ).fit(X, X.a).booster_.model_to_string()
    return lgb_chain(text, n_splits)


def _xgb_chain_doc(n_splits):
    xgb = pytest.importorskip("xgboost")
    X = _frame()
    model = xgb.XGBRegressor(n_estimators=1, max_depth=1).fit(X, X.a)
    return xgb_chain(json.loads(bytes(model.get_booster().save_raw("json"))), n_splits)


def test_a_lightgbm_chain_past_the_depth_limit_is_refused_in_one_line(tmp_path):
    path = tmp_path / "chain.txt"
    path.write_text(_lgb_chain_text(MAX_TREE_DEPTH + 500))
    with pytest.raises(FileError, match=f"more than {MAX_TREE_DEPTH} levels deep") as err:
        load_model_file(path)
    assert "\n" not in str(err.value)


def test_a_lightgbm_chain_within_the_limit_is_read_without_recursion(tmp_path):
    lgb = pytest.importorskip("lightgbm")
    booster = lgb.Booster(model_str=_lgb_chain_text(MAX_TREE_DEPTH - 10))
    ens = tree_ensemble(booster)
    X = _frame(5).to_numpy()
    np.testing.assert_allclose(ens.predict_raw(X).ravel(), booster.predict(X), rtol=1e-12)


@pytest.mark.parametrize("suffix", [".json", ".ubj"])
def test_an_xgboost_chain_past_the_depth_limit_is_refused_before_treeshap(tmp_path, suffix):
    path = tmp_path / f"chain{suffix}"
    doc = _xgb_chain_doc(20_000)
    if suffix == ".ubj":  # as XGBoost writes it (typed arrays: the compiled scan reads it)
        import xgboost as xgb

        booster = xgb.Booster()
        booster.load_model(bytearray(json.dumps(doc).encode()))
        path.write_bytes(bytes(booster.save_raw("ubj")))
    else:
        path.write_text(json.dumps(doc))
    with pytest.raises(FileError, match=f"more than {MAX_TREE_DEPTH} levels deep") as err:
        load_model_file(path)
    assert "\n" not in str(err.value)


def _sklearn_chain(n_splits):
    """A fitted DecisionTreeRegressor whose tree is a chain of ``n_splits`` splits on x0
    (split j at node 2j: its left child a leaf, its right the next split)."""
    from sklearn.tree import DecisionTreeRegressor

    X = _frame(50)[["a"]].to_numpy()
    model = DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, X[:, 0])
    state = model.tree_.__getstate__()
    n = 2 * n_splits + 1
    nodes = np.zeros(n, dtype=state["nodes"].dtype)
    nodes["left_child"] = nodes["right_child"] = -1
    nodes["feature"], nodes["threshold"] = -2, -2.0
    split = np.arange(0, 2 * n_splits, 2)
    nodes["left_child"][split], nodes["right_child"][split] = split + 1, split + 2
    nodes["feature"][split] = 0
    nodes["threshold"][split] = (np.arange(n_splits) + 1) / (n_splits + 1)
    nodes["n_node_samples"] = nodes["weighted_n_node_samples"] = n - np.arange(n)
    tree = type(model.tree_)(1, np.asarray(model.tree_.n_classes), 1)  # (a fresh Tree)
    values = np.arange(n, dtype=np.float64)[:, None, None]  # each leaf a value of its own
    tree.__setstate__(dict(state, node_count=n, nodes=nodes, values=values,
                           max_depth=n_splits))
    model.tree_ = tree
    return model


def test_a_scikit_learn_chain_past_the_depth_limit_is_refused_in_one_line(tmp_path):
    import skops.io as sio

    sio.dump(_sklearn_chain(MAX_TREE_DEPTH + 1), tmp_path / "chain.skops")
    with pytest.raises(FileError, match=f"more than {MAX_TREE_DEPTH} levels deep") as err:
        load_model_file(tmp_path / "chain.skops")
    assert "\n" not in str(err.value)
    # exactly the limit loads, and its trees are the model's
    sio.dump(_sklearn_chain(MAX_TREE_DEPTH), tmp_path / "limit.skops")
    model = load_model_file(tmp_path / "limit.skops")
    X = np.linspace(0, 1, 7)[:, None]
    np.testing.assert_array_equal(tree_ensemble(model).predict_raw(X).ravel(), model.predict(X))


def test_an_xgboost_chain_within_the_limit_gives_treeshap_values(tmp_path):
    path = tmp_path / "chain.json"
    path.write_text(json.dumps(_xgb_chain_doc(300)))
    model = load_model_file(path)
    X = _frame(4)
    attr = ml.shapley(model, X, algorithm="tree")
    # local accuracy: the values add up to the model's own output
    np.testing.assert_allclose(attr.base_values + attr.values.sum(axis=1), model.predict(X),
                               rtol=1e-5, atol=1e-6)


def _ubj_count(n):
    return b"l" + struct.pack(">i", n)


@pytest.mark.parametrize("element", [b"Z", b"T", b"[", b"{"])
def test_ubjson_typed_containers_of_free_elements_are_refused(tmp_path, element):
    # a 24 KB file: 4,000 typed arrays of 18,000 nulls each (72 million values)
    one = b"[$" + element + b"#" + _ubj_count(18_000)
    doc = b"{" + b"U\x07Learner" + b"[#" + _ubj_count(4_000) + one * 4_000 + b"}"
    path = tmp_path / "free.ubj"
    path.write_bytes(doc)
    with pytest.raises(FileError, match="never writes|more than the document"):
        load_model_file(path)


@pytest.mark.parametrize("doc, said", [
    # a typed array of numbers whose count exceeds the whole document
    (b"{U\x01a[$d#" + _ubj_count(5_000) + b"\x00" * 16 + b"}", "a UBJSON count of 5000"),
    # a counted array whose count the document's length allows but its bytes left do not
    (b"{U\x01bS" + _ubj_count(40) + b"x" * 40 + b"U\x01a[#" + _ubj_count(50) + b"Z" * 5
     + b"}", "a UBJSON container of 50 values, more than the document's bytes"),
])
def test_ubjson_counts_beyond_the_bytes_are_refused(tmp_path, doc, said):
    # refused by the count's bound, before any value is read (without the bound both
    # files end as "the UBJSON document ends early" or another structure's complaint)
    path = tmp_path / "short.ubj"
    path.write_bytes(doc)
    with pytest.raises(FileError, match=said):
        load_model_file(path)
