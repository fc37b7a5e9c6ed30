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


def test_an_xgboost_chain_past_the_depth_limit_is_refused_before_treeshap(tmp_path):
    path = tmp_path / "chain.json"
    path.write_text(json.dumps(_xgb_chain_doc(20_000)))
    with pytest.raises(FileError, match=f"more than {MAX_TREE_DEPTH} levels deep"):
        load_model_file(path)


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


def test_ubjson_counts_beyond_the_bytes_are_refused(tmp_path):
    # a typed array of numbers whose count exceeds the bytes left
    doc = b"{U\x01a[$d#" + _ubj_count(5_000) + b"\x00" * 16 + b"}"
    path = tmp_path / "short.ubj"
    path.write_bytes(doc)
    with pytest.raises(FileError, match="refusing|ends early|more than the document"):
        load_model_file(path)
