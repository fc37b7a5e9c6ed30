"""The model-file checks run over all of a model's trees at once (issue 40, their cost).

Batched, a fault must still be found in any tree and named with that tree;
the numbers of a LightGBM text are counted and read without splitting them
one tree at a time, which must count exactly what ``str.split`` counts and
refuse what is not a number; LightGBM's text is checked again as LightGBM
writes what it read, the tree checks skipped only when those trees are the
lines already checked.
"""

import json

import numpy as np
import pandas as pd
import pytest

from modellens.files import load_model as load_model_file
from modellens.trees import UnsafeModelError, check_lightgbm_text, check_sklearn_objects, \
    check_xgboost_model
from modellens.trees import _checks_lightgbm


def _frame(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    return X, X.a - 2 * X.b + rng.normal(scale=0.1, size=n)


def _lgb_text(n_estimators=6):
    lgb = pytest.importorskip("lightgbm")
    X, y = _frame()
    return lgb.LGBMRegressor(n_estimators=n_estimators, num_leaves=6, verbose=-1,
                             min_child_samples=5).fit(X, y).booster_.model_to_string()


def _edit(text, k, key, edit):
    """``text`` with tree ``k``'s ``key`` values replaced by ``edit(values)``, sizes dropped."""
    lines = [line for line in text.split("\n") if not line.startswith("tree_sizes=")]
    start = lines.index(f"Tree={k}")
    i = next(j for j in range(start, len(lines)) if lines[j].startswith(key + "="))
    lines[i] = f"{key}=" + edit(lines[i].split("=", 1)[1])
    return "\n".join(lines)


@pytest.mark.parametrize("value", [
    "", "1", "1 2", "1  2", "1\t2", " 1 2 ", "1\xa02", "1\u20032 3", "1\x1c2", "a b\n c",
    "1 2  3\t\t4", "\u2028"])
def test_the_count_is_what_split_counts(value):
    assert _checks_lightgbm._count(value) == len(value.split())
    # the compiled count of many values at once (ASCII) counts the same, each on its own
    values = [value, "1 2", value, ""]
    counts = np.array([len(v.split()) for v in values])
    _checks_lightgbm._check_counts(values, [0, 1, 2, 3], counts, "k")
    for i in range(4):
        with pytest.raises(UnsafeModelError, match=f"tree {i}: 'k' holds {counts[i]} values "
                                                   f"for {counts[i] + 1}"):
            _checks_lightgbm._check_counts(values, [0, 1, 2, 3], counts + (np.arange(4) == i),
                                           "k")


@pytest.mark.parametrize("token", ["0.5-0.25", "1e", "0x10", "1_0", "nan?", "--1"])
def test_a_lightgbm_leaf_value_that_is_not_one_number_is_refused(token):
    # numpy's text reader would read "0.5-0.25" as two numbers: the count per tree holds
    text = _edit(_lgb_text(), 3, "leaf_value", lambda v: token + " " + v.split(" ", 1)[1])
    with pytest.raises(UnsafeModelError, match="leaf_value"):
        check_lightgbm_text(text)


@pytest.mark.parametrize("k", [0, 4])
def test_a_fault_in_any_lightgbm_tree_is_named_with_its_tree(k):
    text = _edit(_lgb_text(), k, "right_child", lambda v: " ".join(["0"] + v.split(" ")[1:]))
    with pytest.raises(UnsafeModelError, match=f"tree {k}.*cycle"):
        check_lightgbm_text(text)


def test_a_split_count_off_in_one_lightgbm_tree_is_refused():
    # the trees' values add up, but tree 1 holds one split feature too many, tree 2 one
    # too few: each tree's count is checked on its own
    text = _edit(_lgb_text(), 1, "split_feature", lambda v: v + " 0")
    text = _edit(text, 2, "split_feature", lambda v: v.rsplit(" ", 1)[0])
    with pytest.raises(UnsafeModelError, match="tree 1: 'split_feature' holds"):
        check_lightgbm_text(text)


def test_lightgbm_trees_are_checked_again_unless_lightgbm_wrote_the_lines_checked(
        tmp_path, monkeypatch):
    calls = []
    real = _checks_lightgbm._check_lgb_trees
    monkeypatch.setattr(_checks_lightgbm, "_check_lgb_trees",
                        lambda *a: calls.append(1) or real(*a))
    text = _lgb_text()
    (tmp_path / "own.txt").write_text(text)
    load_model_file(tmp_path / "own.txt")
    assert calls == []  # a plain text: one compiled scan checked it, LightGBM reads it as is
    # the header not plain (LightGBM's write-back is read) but the same trees: not checked
    # twice
    calls.clear()
    (tmp_path / "head.txt").write_text(text.replace("\nversion=v4\n", "\nversion=v4 \n", 1))
    load_model_file(tmp_path / "head.txt")
    assert len(calls) == 1
    calls.clear()
    # the same model with its thresholds written otherwise (not plain): LightGBM writes
    # them back its own way, and what it holds is checked again
    other = _edit(text, 0, "threshold", lambda v: " ".join(
        "+" + t if not t.startswith("-") else t for t in v.split(" ")))
    assert other != text
    (tmp_path / "other.txt").write_text(other)
    load_model_file(tmp_path / "other.txt")
    assert len(calls) == 2



def test_lightgbm_text_written_back_as_read_is_not_read_again(tmp_path, monkeypatch):
    # a text not plain (a line ending in a space) whose tree lines LightGBM writes back as
    # they were: only its header and tail are read again
    text = _lgb_text().replace("\nversion=v4\n", "\nversion=v4 \n", 1)
    assert "version=v4 " in text and not check_lightgbm_text(text).plain
    read = []
    real = _checks_lightgbm._parse
    monkeypatch.setattr(_checks_lightgbm, "_parse", lambda text: read.append(text) or real(text))
    (tmp_path / "own.txt").write_text(text)
    load_model_file(tmp_path / "own.txt")
    trees = text.index("Tree=0")
    assert len(read) == 2 and read[0] == text and len(read[1]) <= trees + 200


def _variants(text):
    """``text`` with lines added or changed around its trees (header, tail, the line ends)."""
    at = text.index("Tree=0")
    end = text.index("end of trees")
    head, trees, tail = text[:at], text[at:end], text[end:]
    yield text
    for line in [" Tree=9", "Tree=9", " end of trees", "end of trees", "version=v9", "",
                 "num_leaves=3", "\0", "max_feature_idx=1"]:
        yield head + line + "\n" + trees + tail
        yield head.replace("\n", "\n" + line + "\n", 1) + trees + tail
        yield head + trees + tail.replace("\n", "\n" + line + "\n", 1)
    yield head + trees + "end of trees\r\n" + tail[len("end of trees\n"):]
    yield head + trees + "end of treesX" + tail[len("end of trees"):]
    yield head + trees.replace("\n\n", "\n \n", 1) + tail
    yield head + trees[:-1] + tail
    yield text.replace("\n", "\r\n")


def test_checked_trees_are_reused_only_where_the_text_reads_as_them():
    # the oracle: the text read whole; a reuse must give its header, trees and tail exactly
    text = _lgb_text()
    checked = check_lightgbm_text(text)
    reused = 0
    for variant in _variants(text):
        try:
            got = _checks_lightgbm._reparse(variant, checked)
        except UnsafeModelError:  # its header refused: read whole, it is refused too
            with pytest.raises(UnsafeModelError):
                _checks_lightgbm._parse(variant)
            continue
        if got is None:
            continue
        reused += 1
        whole = _checks_lightgbm._parse(variant)
        assert (got.header, got.trees, got.tail) == (whole.header, whole.trees, whole.tail)
    assert reused >= 5  # the plain text, and changes to its header and tail


def _xgb_doc(n_estimators=5):
    xgb = pytest.importorskip("xgboost")
    X, y = _frame()
    model = xgb.XGBRegressor(n_estimators=n_estimators, max_depth=3).fit(X, y)
    return json.loads(model.get_booster().save_raw("json"))


@pytest.mark.parametrize("k", [0, 3])
def test_a_fault_in_any_xgboost_tree_is_named_with_its_tree(k):
    doc = _xgb_doc()
    tree = doc["learner"]["gradient_booster"]["model"]["trees"][k]
    tree["parents"][2] = 0 if tree["parents"][2] != 0 else 1
    with pytest.raises(UnsafeModelError, match=f"tree {k}, node 2: parent"):
        check_xgboost_model(doc)


def test_an_xgboost_model_of_no_trees_is_still_checked():
    doc = _xgb_doc()
    model = doc["learner"]["gradient_booster"]["model"]
    model["trees"], model["tree_info"] = [], []
    model["gbtree_model_param"]["num_trees"] = "0"
    model.pop("iteration_indptr", None)
    check_xgboost_model(doc)  # nothing to walk: no refusal


@pytest.mark.parametrize("field, value, words", [
    ("left_child", 10 ** 6, "outside"),
    # a tree's bound is its own estimator's features and every ensemble's above it
    ("feature", 3, "split feature 3 is outside")])
def test_a_fault_in_one_tree_of_a_forest_is_named_with_that_tree(field, value, words):
    from sklearn.ensemble import RandomForestRegressor

    X, y = _frame()
    forest = RandomForestRegressor(n_estimators=4, max_depth=3, random_state=0).fit(X, y)
    check_sklearn_objects(forest)
    state = forest.estimators_[2].tree_.__getstate__()
    nodes = state["nodes"].copy()
    nodes[field][0] = value
    state["nodes"] = nodes
    forest.estimators_[2].tree_.__setstate__(state)
    with pytest.raises(UnsafeModelError, match=rf"\[2\].*{words}"):
        check_sklearn_objects(forest)


def test_a_fault_in_one_hist_gradient_boosting_tree_is_named_with_that_tree():
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = _frame()
    model = HistGradientBoostingClassifier(max_iter=4, max_depth=3).fit(
        X, np.digitize(y, [0.0, 1.0]))
    check_sklearn_objects(model)
    nodes = model._predictors[3][1].nodes
    nodes["right"][0] = 0  # the root its own child
    with pytest.raises(UnsafeModelError, match=r"tree 3\.1.*cycle"):
        check_sklearn_objects(model)

@pytest.mark.parametrize("token", [
    "0", "-5", "+7", "1.5", ".5", "5.", "1e5", "1E-5", "-1.25e+3", "inf", "-Infinity", "INF",
    "nan", "-NaN", "2147483647", "123456789012345678", "1" + "0" * 30, "1e400", "-1e-400",
    "0.30000000000000004", "1.0000000180025095e-35", "-0.0"])
def test_the_scan_reads_a_number_as_python_does(token):
    out = np.empty(3)
    assert _checks_lightgbm._scan_numbers(np.frombuffer(f" {token}\t1 -2".encode(), np.uint8),
                                          out) == 3
    expect = float(token)
    if np.isnan(expect):
        assert np.isnan(out[0])
    else:  # integers exactly, other numbers to a few units of the last place
        exact = token.lstrip("+-").isdigit() and len(token.lstrip("+-")) <= 18
        assert out[0] == expect if exact else np.isclose(out[0], expect, rtol=1e-14, atol=0)
        assert np.signbit(out[0]) == np.signbit(expect) or expect == 0
    assert out[1:].tolist() == [1.0, -2.0]


@pytest.mark.parametrize("token", ["-", "+", ".", "e5", "1e", "1e+", "1.2.3", "0x10",
                                   "in", "infinit", "nana", "1-2", "--1", "1,5", "½"])
def test_the_scan_refuses_what_is_not_one_number(token):
    with pytest.raises(ValueError):
        float(token)  # the oracle: Python refuses it too (or reads it otherwise: below)
    out = np.empty(4)
    data = f"1 {token} 2".encode("utf-8")
    assert _checks_lightgbm._scan_numbers(np.frombuffer(data, np.uint8), out) == -3


def test_the_scan_refuses_more_numbers_than_counted():
    out = np.empty(2)
    assert _checks_lightgbm._scan_numbers(np.frombuffer(b"1 2 3", np.uint8), out) < 0


def test_the_scan_refuses_digits_grouped_by_underscores():
    # Python reads "1_0" as 10; LightGBM's reader stops at "_": the count would not hold
    out = np.empty(2)
    assert _checks_lightgbm._scan_numbers(np.frombuffer(b"1 1_0", np.uint8), out) == -3


def _same_json(a, b):
    """Equal documents, NaN equal to NaN (json reads NaN back as a float)."""
    if isinstance(a, float) and isinstance(b, float) and a != a:
        return b != b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            _same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same_json, a, b))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("extra", [None, float("nan"), float("inf"), 2 ** 70, "\ud800"])
def test_the_checked_xgboost_document_is_written_back_exactly(extra, monkeypatch):
    # orjson would write NaN and infinities as null and refuses huge integers and lone
    # surrogates: those documents are written by json, every number read back the same
    from modellens.files import _models

    doc = _xgb_doc(3)
    doc["learner"]["attributes"] = {"probe": extra} if extra is not None else {}
    doc["learner"]["gradient_booster"]["model"]["trees"][0]["split_conditions"][0] = 0.1 + 0.2
    out = _models._json_bytes(doc)
    assert _same_json(json.loads(out), doc)
    monkeypatch.setitem(__import__("sys").modules, "orjson", None)  # not installed
    assert _same_json(json.loads(_models._json_bytes(doc)), doc)


def test_lightgbm_text_written_once_is_its_model_text():
    # the second check reads LightGBM's text serialized once, every tree of it
    from modellens.trees import lightgbm_saved_text

    lgb = pytest.importorskip("lightgbm")
    X, y = _frame()
    booster = lgb.train({"objective": "regression", "verbose": -1, "num_leaves": 5},
                        lgb.Dataset(X, y), 12)
    booster.best_iteration = 4  # model_to_string() would stop there
    saved = lightgbm_saved_text(booster, 10)
    assert saved.count("\nTree=") + saved.startswith("Tree=") == 12
    assert booster.model_to_string(num_iteration=-1).startswith(saved.rstrip("\0"))


@pytest.mark.parametrize("spelling", ["plain", "escaped"])
def test_a_tampered_lightgbm_booster_in_a_skops_file_is_refused(tmp_path, spelling):
    # the schema is walked for boosters unless it cannot name one: "Booster" written
    # with a \u escape is still a Booster to skops, and still checked
    import zipfile

    from modellens.files import FileError

    lgb = pytest.importorskip("lightgbm")
    sio = pytest.importorskip("skops.io")
    X, y = _frame()
    sio.dump(lgb.LGBMRegressor(n_estimators=4, num_leaves=6, verbose=-1,
                               min_child_samples=5).fit(X, y), tmp_path / "ok.skops")
    with zipfile.ZipFile(tmp_path / "ok.skops") as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    schema = files["schema.json"].decode()
    text = _lgb_text()
    bad = _edit(text, 1, "left_child", lambda v: " ".join(
        str(~6) if int(t) < 0 else t for t in v.split(" ")))
    doc = json.loads(schema)
    stack = [doc]
    while stack:  # the booster's model text, replaced by the tampered one
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("__class__") == "Booster":
                node["content"]["content"]["_handle"]["content"] = json.dumps(bad)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    schema = json.dumps(doc)
    if spelling == "escaped":
        schema = schema.replace('Booster', '\\u0042ooster')  # in keys and values
        assert "Booster" not in schema
    files["schema.json"] = schema.encode()
    with zipfile.ZipFile(tmp_path / "bad.skops", "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    with pytest.raises(FileError, match="leaves"):
        load_model_file(tmp_path / "bad.skops")
