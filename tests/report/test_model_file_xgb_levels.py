"""XGBoost's stored category levels (3.1+) read as XGBoost reads them (issue #40's fuzz
finding m05550): the trees' reading here must give the model's own predictions.

XGBoost re-codes a frame's levels by a binary search (``lower_bound``) through its
stored levels in ``sorted_idx`` order, with no test of equality: a level it never saw
reads as the next larger one it knows, and a ``sorted_idx`` that does not sort the
levels gives known levels other codes.  The oracle is always the model's own
``predict(output_margin=True)``.
"""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.files import FileError, load_model as load_model_file

xgb = pytest.importorskip("xgboost")


def _fit(tmp_path, levels, seed=0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, len(levels), 400)
    X = pd.DataFrame({"c": pd.Categorical(np.asarray(levels, dtype=object)[codes]),
                      "x": rng.normal(size=400)})
    y = 2.0 * (codes % 3 == 0) + X.x.to_numpy() + 0.5 * (codes == 1)
    model = xgb.XGBRegressor(n_estimators=6, max_depth=3, enable_categorical=True,
                             tree_method="hist", max_cat_to_onehot=1).fit(X, y)
    model.save_model(tmp_path / "ok.json")
    doc = json.loads((tmp_path / "ok.json").read_text())
    cats = doc["learner"]["gradient_booster"]["model"].get("cats")
    if cats is None:
        pytest.skip("this XGBoost does not store its categories (3.1+ does)")
    return doc, cats


def _rows(levels, seed=1, n=120):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"c": pd.Categorical(np.asarray(levels, dtype=object)[
        rng.integers(0, len(levels), n)]), "x": rng.normal(size=n)})


def _tree_total(model, X):
    """base + the TreeSHAP values of each row: the trees' own reading of the rows."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unknown levels' warning
        attr = ml.shapley(model, X, algorithm="tree", progress=False)
    return np.asarray(attr.base_values).reshape(-1) + np.asarray(attr.values).sum(axis=1)


def test_a_stored_level_changed_to_int32_min_reads_as_xgboost_reads_it(tmp_path):
    # the fuzz run's m05550: level 3 stored as -2**31 keeps the sorted order (the check
    # passes); the data's level 3 is then one XGBoost never saw, which it reads as the next
    # larger level (7); the trees' reading here took it for an unseen level (1.97 apart)
    doc, cats = _fit(tmp_path, [3, 7, 10, 20, 25, 40])
    cats["enc"][0]["values"][0] = -2 ** 31
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    model = load_model_file(tmp_path / "bad.json")
    X = _rows([3, 7, 10, 20, 25, 40])
    own = model.predict(X, output_margin=True).astype(np.float64)
    assert np.allclose(_tree_total(model, X), own, rtol=1e-5, atol=1e-5)
    # the rows of level 3 read as level 7 by XGBoost: the case is not vacuous
    as7 = X.assign(c=pd.Categorical(np.where(X.c == 3, 7, X.c.astype(int))))
    assert np.array_equal(own, model.predict(as7, output_margin=True))
    assert (X.c == 3).any()


def test_an_untouched_model_reads_a_level_between_its_levels_as_xgboost_does(tmp_path):
    _fit(tmp_path, [3, 7, 10, 20, 25, 40])
    model = load_model_file(tmp_path / "ok.json")
    X = _rows([3, 5, 7, 10, 11, 20, 25, 40, -4])  # 5, 11 and -4 never seen
    own = model.predict(X, output_margin=True).astype(np.float64)
    assert np.allclose(_tree_total(model, X), own, rtol=1e-5, atol=1e-5)


def test_text_levels_never_seen_read_as_xgboost_reads_them(tmp_path):
    # text compared by its UTF-8 bytes as signed chars: "éa" sorts before "apple"
    _fit(tmp_path, ["apple", "fig", "kiwi", "pear", "plum", "zz"])
    model = load_model_file(tmp_path / "ok.json")
    X = _rows(["apple", "banana", "fig", "éa", "Zed", "kiwi", "pear", "plum", "zz", "pz"])
    own = model.predict(X, output_margin=True).astype(np.float64)
    assert np.allclose(_tree_total(model, X), own, rtol=1e-5, atol=1e-5)


def test_text_levels_whose_sorted_positions_do_not_sort_them_are_refused(tmp_path):
    doc, cats = _fit(tmp_path, ["apple", "fig", "kiwi", "pear", "plum", "zz"])
    order = cats["sorted_idx"]
    order[0], order[1] = order[1], order[0]
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    X = _rows(["apple", "fig", "kiwi", "pear", "plum", "zz"])
    # XGBoost reads the file and predicts otherwise than from the untouched file: the
    # levels get other codes (a silent wrong answer where the trees are read here)
    plain = xgb.XGBRegressor()
    plain.load_model(tmp_path / "bad.json")
    ok = load_model_file(tmp_path / "ok.json")
    assert not np.allclose(plain.predict(X), ok.predict(X))
    with pytest.raises(FileError, match="do not sort its text categories"):
        load_model_file(tmp_path / "bad.json")


@pytest.mark.parametrize("suffix", ["json", "ubj"])
def test_xgboost_own_non_ascii_text_levels_still_load(tmp_path, suffix):
    # XGBoost 3.2 writes a non-ASCII level's bytes cut at its length in characters (two
    # levels can be stored alike); its sorted_idx is their stable sort all the same
    levels = ["é", "éa", "a", "zé", "ü", "Ω", "b", "ab"]
    _fit(tmp_path, levels)
    model = xgb.XGBRegressor()
    model.load_model(tmp_path / "ok.json")
    model.save_model(tmp_path / f"own.{suffix}")
    loaded = load_model_file(tmp_path / f"own.{suffix}")
    X = _rows(levels)
    assert np.array_equal(loaded.predict(X), model.predict(X))
