"""The library reads the model file itself where it provably reads it as the checks did (issue 40).

Writing the checked model back for its library to read cost more than the
library's own load (LightGBM's write-back alone 189% of its load).  A file is
now handed over as it is where both readers read it value for value:

* LightGBM: the layout LightGBM's loader reads line for line (no spaces around
  a line or an ``=``, no stray line among the trees, at most 22 lines a tree,
  header flags only LightGBM's own) and every integer it reads (``Atoi``: a
  sign, digits, then it stops) and every threshold written as both read them;
  otherwise LightGBM's write-back is checked as before.
* XGBoost JSON: strict JSON that orjson read, no key repeated, no escape but
  those XGBoost decodes as JSON does (it keeps \\u as written).
* UBJSON: only constructs XGBoost writes and its binary reader reads as
  modellens' reader does (no F, which some versions read as true; no C, H,
  float64, counted objects, or lengths but int64).

Each test plants a text the two readers read differently and finds it taken
the long way (and a tampered tree there refused); without the gate, the
planted files would be handed over as they are.
"""

import json

import numpy as np
import pandas as pd
import pytest

from modellens.files import FileError, load_model as load_model_file
from modellens.files import _models
from modellens.files._ubjson import Ubjson, typed_arrays, ubjson_bytes
from modellens.trees import _checks_lightgbm, check_lightgbm_text


def _frame(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    return X, X.a - 2 * X.b + rng.normal(scale=0.1, size=n)


def _lgb_text(**params):
    lgb = pytest.importorskip("lightgbm")
    X, y = _frame()
    return lgb.LGBMRegressor(n_estimators=5, num_leaves=6, verbose=-1, min_child_samples=5,
                             **params).fit(X, y).booster_.model_to_string()


def _lgb_cat_text():
    lgb = pytest.importorskip("lightgbm")
    X, y = _frame()
    X = X.assign(c=pd.Categorical(np.arange(len(X)) % 5))
    return lgb.LGBMRegressor(n_estimators=4, num_leaves=6, verbose=-1, min_child_samples=5,
                             min_data_per_group=5, cat_smooth=1
                             ).fit(X, y).booster_.model_to_string()


def _lgb_multiclass_text():
    lgb = pytest.importorskip("lightgbm")
    X, y = _frame()
    return lgb.LGBMClassifier(n_estimators=3, num_leaves=6, verbose=-1, min_child_samples=5).fit(
        X, np.digitize(y, [-1.0, 1.0])).booster_.model_to_string()


def _edit(text, k, key, edit):
    """``text`` with tree ``k``'s ``key`` line's value replaced by ``edit(value)``."""
    lines = text.split("\n")
    start = lines.index(f"Tree={k}")
    i = next(j for j in range(start, len(lines)) if lines[j].startswith(key + "="))
    lines[i] = f"{key}=" + edit(lines[i].split("=", 1)[1])
    return "\n".join(lines)


def _no_sizes(text):
    return "\n".join(line for line in text.split("\n") if not line.startswith("tree_sizes="))


def _spy_write_back(monkeypatch):
    calls = []
    real = _models.lightgbm_saved_text
    monkeypatch.setattr(_models, "lightgbm_saved_text", lambda *a: calls.append(1) or real(*a))
    return calls


@pytest.mark.parametrize("make", [_lgb_text, _lgb_cat_text, _lgb_multiclass_text])
def test_lightgbm_own_files_are_handed_over_without_the_write_back(tmp_path, monkeypatch, make):
    text = make()
    assert check_lightgbm_text(text).plain
    calls = _spy_write_back(monkeypatch)
    (tmp_path / "m.txt").write_text(text)
    booster = load_model_file(tmp_path / "m.txt")
    assert calls == []
    # what LightGBM read is the file: it writes back the very trees
    assert booster.model_to_string().split("end of trees")[0].split("Tree=0", 1)[1] == \
        text.split("end of trees")[0].split("Tree=0", 1)[1]


def _shifted_child(text):
    """Tree 0's first non-negative left child ``c`` written ``c0e-1``: Python's grammar reads
    ``c``, LightGBM's ``Atoi`` reads ``10 c``, outside the tree."""
    def edit(value):
        tokens = value.split(" ")
        i = next(j for j, t in enumerate(tokens) if int(t) > 0)
        tokens[i] += "0e-1"
        return " ".join(tokens)
    return _edit(text, 0, "left_child", edit)


def _variants(text):
    """Texts LightGBM reads otherwise than a reader that strips lines and reads Python's
    numbers: each with what it changes."""
    head, trees = text.split("Tree=0\n", 1)
    yield "a child as 10e-1", _shifted_child(text)
    yield "a child with a plus", _edit(text, 1, "right_child", lambda v: "+" + v)
    yield "a tab between children", _edit(text, 1, "left_child", lambda v: v.replace(" ", "\t", 1))
    yield "two spaces between features", _edit(text, 2, "split_feature",
                                                lambda v: v.replace(" ", "  ", 1))
    yield "a threshold inf", _edit(text, 0, "threshold", lambda v: "inf " + v.split(" ", 1)[1])
    yield "a threshold .5", _edit(text, 1, "threshold", lambda v: ".5 " + v.split(" ", 1)[1])
    yield "num_leaves +6", _edit(text, 0, "num_leaves", lambda v: "+" + v)
    yield "num_cat 0_0", _edit(text, 0, "num_cat", lambda v: "0_0")
    yield "a space after a key", text.replace("split_gain=", "split_gain =", 1)
    yield "a line ending in a space", text.replace("\nshrinkage=", " \nshrinkage=", 1)
    yield "a blank line of spaces in a tree", text.replace("\nshrinkage=", "\n  \nshrinkage=", 1)
    yield "a stray line between trees", text.replace("\nTree=1\n", "\nversion=v9\n\nTree=1\n", 1)
    yield "a header key without =", head + "max_feature_idx\n" + "Tree=0\n" + trees
    yield "a tab in the header", head.replace("feature_names=a b", "feature_names=a\tb", 1) \
        + "Tree=0\n" + trees
    yield "a max_feature_idx of +2", head.replace("max_feature_idx=2", "max_feature_idx=+2") \
        + "Tree=0\n" + trees
    yield "\\r\\n line ends", text.replace("\n", "\r\n")
    lines = text.split("\n")
    at = lines.index("Tree=1")
    yield "a tree of 23 lines", "\n".join(lines[:at + 1] + [f"x{j}=0" for j in range(8)]
                                          + lines[at + 1:])


def test_texts_the_two_readers_read_otherwise_are_not_plain():
    text = _no_sizes(_lgb_text())
    assert check_lightgbm_text(text).plain
    seen = 0
    for name, variant in _variants(text):
        assert variant != text, name
        try:
            checked = check_lightgbm_text(variant)
        except Exception:  # noqa: BLE001 - refused outright: no reading to compare
            continue
        seen += 1
        assert not checked.plain, name
    assert seen >= 12


def test_a_child_lightgbm_reads_outside_its_tree_is_refused_through_the_write_back(
        tmp_path, monkeypatch):
    # the checks read child c, LightGBM 10 c (outside the tree): only the write-back sees it
    text = _no_sizes(_lgb_text())
    bad = _shifted_child(text)
    assert not check_lightgbm_text(bad).plain
    calls = _spy_write_back(monkeypatch)
    (tmp_path / "bad.txt").write_text(bad)
    with pytest.raises(FileError, match="outside"):
        load_model_file(tmp_path / "bad.txt")
    assert calls == [1]


def test_a_child_lightgbm_reads_outside_its_tree_in_a_skops_file_is_refused(tmp_path):
    # skops hands LightGBM the booster's text as stored: a text that is not plain is checked
    # through LightGBM's own reading of it, as a .txt file is
    import zipfile

    lgb = pytest.importorskip("lightgbm")
    sio = pytest.importorskip("skops.io")
    X, y = _frame()
    sio.dump(lgb.LGBMRegressor(n_estimators=5, num_leaves=6, verbose=-1,
                               min_child_samples=5).fit(X, y), tmp_path / "ok.skops")
    with zipfile.ZipFile(tmp_path / "ok.skops") as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    doc = json.loads(files["schema.json"])
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("__class__") == "Booster":
                handle = node["content"]["content"]["_handle"]
                text = _no_sizes(json.loads(handle["content"]))
                handle["content"] = json.dumps(_shifted_child(text))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    files["schema.json"] = json.dumps(doc).encode()
    with zipfile.ZipFile(tmp_path / "bad.skops", "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    assert load_model_file(tmp_path / "ok.skops").predict(X[:3]).shape == (3,)
    with pytest.raises(FileError, match="outside"):
        load_model_file(tmp_path / "bad.skops")


@pytest.mark.parametrize("ints", [True, False])
def test_plain_tokens_are_what_the_reference_grammar_says(ints):
    import re

    grammar = re.compile(r"-?[0-9]{1,9}" if ints else r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
    rng = np.random.default_rng(3)
    alphabet = list("0123456789-+.eE x\tn") + ["12", "0.5", "1e5", "1234567890", "  "]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet, size=int(rng.integers(0, 8))))
        tokens = text.split(" ")
        expect = all(grammar.fullmatch(t) for t in tokens) if text else True
        got = _checks_lightgbm._plain_tokens(np.frombuffer(text.encode(), np.uint8), ints)
        assert got == expect, repr(text)


# ---------------------------------------------------------------------- XGBoost
xgb = pytest.importorskip("xgboost")


def _xgb_models():
    X, y = _frame()
    Xc = X.assign(c=pd.Categorical(np.arange(len(X)) % 4))
    yield "gbtree", xgb.XGBRegressor(n_estimators=4, max_depth=3).fit(X, y)
    yield "categorical", xgb.XGBRegressor(n_estimators=3, max_depth=3, enable_categorical=True,
                                          tree_method="hist").fit(Xc, y)
    yield "vector leaves", xgb.XGBRegressor(
        n_estimators=3, max_depth=2, tree_method="hist", multi_strategy="multi_output_tree"
    ).fit(X, np.c_[y, -y])
    yield "dart", xgb.XGBRegressor(n_estimators=3, max_depth=2, booster="dart").fit(X, y)
    yield "classifier", xgb.XGBClassifier(n_estimators=3, max_depth=2).fit(X, y > 0)


def _spy_xgboost(monkeypatch):
    given = []
    original = xgb.Booster.load_model

    def spy(self, fname):
        given.append(bytes(fname) if isinstance(fname, (bytes, bytearray)) else fname)
        return original(self, fname)

    monkeypatch.setattr(xgb.Booster, "load_model", spy)
    return given


def test_xgboost_own_files_are_handed_over_as_they_are(tmp_path, monkeypatch):
    given = _spy_xgboost(monkeypatch)
    for name, model in _xgb_models():
        for ext in ("json", "ubj"):
            path = tmp_path / f"{name}.{ext}"
            model.save_model(path)
            data = path.read_bytes()
            doc, exact = _models._read_xgboost(data)
            assert exact, (name, ext)
            given.clear()
            load_model_file(path)
            # a JSON file goes over as UBJSON, its node arrays typed as XGBoost types them
            # (tests/report/test_model_file_xgb_typed.py), where that reads the same
            typed = typed_arrays(doc, data) if ext == "json" else None
            assert ext == "ubj" or (typed is None) == (name == "categorical"), name
            assert given == [data if typed is None else ubjson_bytes(typed)], (name, ext)


def _ubj(doc_bytes_edit):
    X, y = _frame()
    model = xgb.XGBRegressor(n_estimators=2, max_depth=2).fit(X, y)
    data = bytes(model.get_booster().save_raw("ubj"))
    return data, doc_bytes_edit(data)


def _key(name):
    raw = name.encode()
    return b"L" + len(raw).to_bytes(8, "big") + raw


@pytest.mark.parametrize("name, edit", [
    # a false: XGBoost's binary reader takes F for true
    ("false", lambda d: d[:1] + _key("probe") + b"F" + d[1:]),
    ("int8 length", lambda d: d[:1] + b"i\x05probe" + b"T" + d[1:]),
    ("float64", lambda d: d[:1] + _key("probe") + b"D" + np.array([1.5], ">f8").tobytes() + d[1:]),
    ("char", lambda d: d[:1] + _key("probe") + b"Cx" + d[1:]),
    ("counted object", lambda d: d[:1] + _key("probe") + b"{#L" + (0).to_bytes(8, "big") + d[1:]),
    ("a typed array counted in int32", lambda d: d[:1] + _key("probe") + b"[$l#l"
     + (1).to_bytes(4, "big") * 2 + d[1:]),
])
def test_ubjson_written_otherwise_is_written_back_before_xgboost_reads_it(tmp_path, monkeypatch,
                                                                           name, edit):
    _, data = _ubj(edit)
    reader = Ubjson(data)
    doc = reader.document()
    assert not reader.canonical, name
    given = _spy_xgboost(monkeypatch)
    (tmp_path / "m.ubj").write_bytes(data)
    try:
        load_model_file(tmp_path / "m.ubj")
    except FileError:
        pass  # XGBoost refused what it was given: still not the file itself
    assert given and all(g != data for g in given), name
    written = ubjson_bytes(doc)
    assert given[0] in (written, _models._json_bytes(doc)), name


@pytest.mark.parametrize("name, edit", [
    ("an escaped key", lambda t: t.replace('{"learner"', '{"\\u0070robe":1,"learner"', 1)),
    ("a \\u escape in a value",
     lambda t: t.replace('{"learner"', '{"probe":"\\u0041","learner"', 1)),
    ("leading spaces", lambda t: "  " + t),
])
def test_json_that_readers_could_decode_otherwise_is_written_back(tmp_path, monkeypatch, name,
                                                                  edit):
    pytest.importorskip("orjson")
    X, y = _frame()
    text = bytes(xgb.XGBRegressor(n_estimators=2, max_depth=2).fit(X, y).get_booster()
                 .save_raw("json")).decode()
    data = edit(text).encode()
    doc, exact = _models._read_xgboost(data)
    assert not exact, name
    given = _spy_xgboost(monkeypatch)
    (tmp_path / "m.json").write_bytes(data)
    load_model_file(tmp_path / "m.json")
    assert given == [_models._json_bytes(doc)], name


def test_a_repeated_key_spelled_with_an_escape_is_still_refused(tmp_path):
    # "\u006ceft_children" is left_children once decoded: two readers could keep either
    X, y = _frame()
    doc = json.loads(bytes(xgb.XGBRegressor(n_estimators=2, max_depth=2).fit(X, y)
                           .get_booster().save_raw("json")))
    text = json.dumps(doc).replace('"left_children": [', '"\\u006ceft_children": [0], '
                                                        '"left_children": [', 1)
    (tmp_path / "m.json").write_text(text)
    with pytest.raises(FileError, match="appears twice"):
        load_model_file(tmp_path / "m.json")


# ---------------------------------------------------- the compiled scan of plain texts
def _scan(text):
    from modellens.trees._checks_lightgbm_scan import scan_lightgbm_text

    return scan_lightgbm_text(text.encode(), text)


def _outcome(fn, text):
    try:
        return fn(text)
    except Exception as exc:  # noqa: BLE001 - the refusal is the outcome compared
        return exc


@pytest.mark.parametrize("make", [_lgb_text, _lgb_cat_text, _lgb_multiclass_text])
def test_the_scan_checks_plain_texts_as_the_full_reading_does(make):
    text = make()
    fast, slow = _scan(text), check_lightgbm_text(text)
    assert fast is not None and fast.plain and fast.n_features == slow.n_features
    for name, variant in _variants(_no_sizes(text)):
        # not plain: left to the full reading (and LightGBM's write-back)
        assert not isinstance(_outcome(_scan, variant), tuple), name


def _mutations(text, rng, n):
    lines = text.split("\n")
    junk = ["-1", "99999", "1e1", "+3", "nan", "0x1", "", "1 2", "\t1", "a", "2147483648",
            "-0", "1.5", "00", "=", " "]
    tree_lines = [i for i, line in enumerate(lines) if "=" in line and not line.startswith(
        ("Tree=", "tree_sizes", "feature", "version", "objective", "[", "pandas"))]
    for _ in range(n):
        out = list(lines)
        i = int(rng.choice(tree_lines))
        key, value = out[i].split("=", 1)
        tokens = value.split(" ")
        kind = int(rng.integers(0, 5))
        if kind == 0:
            tokens[int(rng.integers(0, len(tokens)))] = str(rng.choice(junk))
            out[i] = key + "=" + " ".join(tokens)
        elif kind == 1:
            out[i] = key + "=" + " ".join(tokens[:-1])
        elif kind == 2:
            out.insert(i, out[i])
        elif kind == 3:
            del out[i]
        else:
            j = int(rng.integers(0, len(tokens)))
            tokens[j] = str(int(tokens[j]) + int(rng.choice([-2, -1, 1, 7]))) \
                if tokens[j].lstrip("-").isdigit() else tokens[j]
            out[i] = key + "=" + " ".join(tokens)
        yield "\n".join(out)


@pytest.mark.parametrize("make", [_lgb_text, _lgb_cat_text])
def test_the_scan_never_accepts_what_the_full_reading_refuses(make):
    # the oracle: the full reading; the scan passes a text only where it passes it too
    rng = np.random.default_rng(11)
    text = _no_sizes(make())
    accepted = refused = 0
    for variant in _mutations(text, rng, 150):
        fast, slow = _outcome(_scan, variant), _outcome(check_lightgbm_text, variant)
        if isinstance(fast, tuple):
            accepted += 1
            assert not isinstance(slow, Exception), (variant, slow)
            assert slow.plain and slow.n_features == fast.n_features
        elif isinstance(fast, Exception):  # found by the same node checks
            refused += 1
            assert isinstance(slow, Exception), (variant, fast)
    assert accepted > 10 and refused > 5  # both drawn


def test_the_compiled_walk_passes_exactly_what_the_level_walk_passes(monkeypatch):
    # the oracle: check_trees' vectorised level walk, which the compiled pass precedes
    from modellens.trees import UnsafeModelError, _checks

    walk = _checks._walk
    monkeypatch.setattr(_checks, "_walk", lambda *a: False)  # check_trees: the level walk
    monkeypatch.setattr(_checks, "MAX_TREE_DEPTH", 3)
    rng = np.random.default_rng(4)
    passed = 0
    for _ in range(600):
        sizes = rng.integers(1, 9, size=int(rng.integers(1, 4)))
        n = int(sizes.sum())
        left = np.where(rng.random(n) < 0.4, -1, rng.integers(-1, 9, size=n))
        right = np.where((left == -1) & (rng.random(n) < 0.95), -1, rng.integers(-1, 9, size=n))
        live = rng.random(n) < 0.95
        depth = np.zeros(len(sizes), np.int64)
        fast = walk(left, right, sizes, live.astype(np.uint8), 3, depth)
        try:
            slow = _checks.check_trees(left, right, sizes, live=live)
        except UnsafeModelError:
            assert not fast, (left, right, sizes, live)
            continue
        assert fast and np.array_equal(depth, slow), (left, right, sizes, live)
        passed += 1
    assert passed > 5  # valid trees drawn too


@pytest.mark.parametrize("tamper", ["repeat", "unsorted"])
def test_xgboost_numeric_categories_that_repeat_or_do_not_sort_are_refused(tmp_path, tamper):
    # XGBoost maps a value to its code by binary search through sorted_idx: with a level
    # recorded twice (the long fuzz run's m01239) or an order that does not sort them its
    # predictions and the trees' reading here disagree, so such a file is refused
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=300),
                      "n": pd.Categorical(rng.choice([3, -1, 10, 7, 200], 300))})
    y = (X.a + 2 * (X.n == 10)).to_numpy()
    model = xgb.XGBRegressor(n_estimators=4, enable_categorical=True, tree_method="hist",
                             max_cat_to_onehot=1).fit(X, y)
    model.save_model(tmp_path / "ok.json")
    doc = json.loads((tmp_path / "ok.json").read_text())
    cats = doc["learner"]["gradient_booster"]["model"].get("cats")
    if cats is None:
        pytest.skip("this XGBoost does not store its categories (3.1+ does)")
    values = cats["enc"][1]["values"]
    assert len(values) == 5 and sorted(values) == [-1, 3, 7, 10, 200]
    if tamper == "repeat":
        values[2] = values[1]
    else:
        lo = cats["feature_segments"][1]
        order = cats["sorted_idx"]
        order[lo], order[lo + 1] = order[lo + 1], order[lo]
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    assert np.array_equal(load_model_file(tmp_path / "ok.json").predict(X), model.predict(X))
    with pytest.raises(FileError, match="categories repeat a level or their sorted"):
        load_model_file(tmp_path / "bad.json")
