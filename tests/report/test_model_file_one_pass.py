"""Every check of a LightGBM text's trees in one compiled pass over its bytes (issue 40).

Where the tree_sizes line proves where the trees start, the scan checks each
tree's layout, the grammar and count of its numbers and its nodes in one pass
(``_checks_lightgbm_pass._trees_at``, in numba's threads); a text it does not
pass is read again by the scan's reading of the trees' spans, which names the
fault.  The oracle of each test is that reading alone (the one pass switched
off), which ran before it, and the full reading (``check_lightgbm_text``): the
one pass never passes what they refuse, and never changes a verdict.
"""

import re

import numba
import numpy as np
import pytest

from modellens.trees import UnsafeModelError, check_lightgbm_text
from modellens.trees import _checks_lightgbm_scan as scan
from test_model_file_exact import (_edit, _lgb_cat_text, _lgb_multiclass_text, _lgb_text,
                                   _mutations)
from test_model_file_threads import _resized

lgb = pytest.importorskip("lightgbm")



def _cat_split_text():
    """A model whose trees split on a categorical feature (category sets, bitsets)."""
    import pandas as pd

    rng = np.random.default_rng(0)
    n = 600
    X = pd.DataFrame({"a": rng.normal(size=n),
                      "c": pd.Categorical(rng.integers(0, 8, size=n))})
    y = X.a + np.array([3.0, -2.0, 0.5, 4.0, -3.0, 1.0, -1.0, 2.5])[X.c.cat.codes]
    text = lgb.LGBMRegressor(n_estimators=4, num_leaves=6, verbose=-1, min_child_samples=5,
                             min_data_per_group=5, cat_smooth=1).fit(X, y) \
        .booster_.model_to_string()
    assert "num_cat=0\n" not in text.split("Tree=0\n", 1)[1][:40]
    return text


MAKERS = [_lgb_text, _lgb_cat_text, _lgb_multiclass_text, _cat_split_text]


def _one_pass(text, chunks=3):
    """The one pass's answer for ``text`` (its largest split feature, -1 none, -2 not
    passed), or None where the sizes give no trees' offsets."""
    data = text.encode()
    first = data.find(b"\nTree=") + 1
    end = data.rfind(b"\nend of trees") + 1
    sizes = next(x for x in text[:first].split("\n") if x.startswith("tree_sizes="))
    offsets = scan._by_sizes(sizes[len("tree_sizes="):], first, end)
    if offsets is None or offsets is False:
        return None
    return scan._trees_at(np.frombuffer(data, np.uint8), offsets, scan._NAMES, scan._LENGTHS,
                          max(1, min(chunks, len(offsets) - 1)))


def _outcome(fn, *args):
    try:
        return fn(*args)
    except UnsafeModelError as exc:
        return exc


def _scan(text):
    return _outcome(scan.scan_lightgbm_text, text.encode(), text)


def _without_one_pass(monkeypatch, text):
    """The scan as it read the trees before the one pass: their spans, then the checks."""
    with monkeypatch.context() as m:
        m.setattr(scan, "_trees_at", lambda *a: -2)
        return _scan(text)


def _same(a, b):
    return type(a) is type(b) and (a == b if isinstance(a, tuple) else str(a) == str(b))


def _largest_feature(text):
    """The largest split feature of the text's trees, read by Python."""
    values = [int(v) for line in text.split("\n") if line.startswith("split_feature=")
              for v in line.split("=", 1)[1].split()]
    return max(values, default=-1)


@pytest.mark.parametrize("make", MAKERS)
def test_its_own_texts_pass_in_one_pass_as_they_pass_without_it(make, monkeypatch):
    text = make()
    assert _one_pass(text) == _largest_feature(text) >= 0
    calls = []
    real = scan._spans_at
    monkeypatch.setattr(scan, "_spans_at", lambda *a: calls.append(1) or real(*a))
    fast = _scan(text)
    assert not calls  # passed: the spans are not read
    assert fast.plain and fast.threads and _same(fast, _without_one_pass(monkeypatch, text))
    assert fast.n_features == check_lightgbm_text(text).n_features


@pytest.mark.parametrize("make", MAKERS)
def test_the_threads_and_runs_change_nothing(make):
    text = make()
    n_trees = text.count("\nTree=")
    before = numba.get_num_threads()
    try:
        answers = set()
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            for chunks in (1, 2, 5, n_trees):
                answers.add(_one_pass(text, chunks))
                answers.add(_one_pass(_edit(text, n_trees - 1, "left_child",
                                            lambda v: "9 " + v.split(" ", 1)[1]), chunks))
    finally:
        numba.set_num_threads(before)
    assert answers == {_largest_feature(text), -2}


def _fault_edits():
    """Faults the one pass finds in a tree of six leaves (five splits), by name."""
    first = lambda new: lambda v: new + " " + v.split(" ", 1)[1]  # noqa: E731
    return {
        "a child outside its tree": ("right_child", first("7")),
        "a leaf outside its tree": ("left_child", first("-9")),
        "the root a child": ("left_child", first("0")),
        "a negative feature": ("split_feature", first("-1")),
        "a decision type of no missing rule": ("decision_type", first("12")),
        "a decision type of five bits": ("decision_type", first("16")),
        "a count off": ("left_child", lambda v: v.rsplit(" ", 1)[0]),
        "a line twice": ("leaf_count", lambda v: v + "\nleaf_count=" + v),
        "two spaces": ("threshold", lambda v: v.replace(" ", "  ", 1)),
        "a word LightGBM cannot read": ("internal_weight", first("1%1")),
        "a NaN threshold": ("threshold", first("0e999")),
        "a linear tree": ("shrinkage", lambda v: v + "\nis_linear=1"),
        "no leaves": ("num_leaves", lambda v: "0"),
        "a leaf value too many": ("leaf_value", lambda v: v + " 1"),
    }


@pytest.mark.parametrize("where", ["first", "middle", "last"])
@pytest.mark.parametrize("fault", list(_fault_edits()))
def test_a_fault_in_the_first_a_middle_or_the_last_tree_is_not_passed(monkeypatch, where,
                                                                      fault):
    text = _lgb_multiclass_text()
    n = text.count("\nTree=")
    k = {"first": 0, "middle": n // 2, "last": n - 1}[where]
    planted = _resized(_edit(text, k, *_fault_edits()[fault]))
    assert _one_pass(planted) == -2
    found = _scan(planted)
    # named, or left to the full reading, exactly as without the one pass
    assert not isinstance(found, tuple) and _same(found, _without_one_pass(monkeypatch, planted))
    full = _outcome(check_lightgbm_text, planted)
    if fault != "a word LightGBM cannot read":  # counted only there: LightGBM reads it
        assert isinstance(full, UnsafeModelError) or not full.plain  # without the sizes


@pytest.mark.parametrize("where", ["first", "last"])
def test_a_feature_outside_the_header_is_refused_after_the_pass(monkeypatch, where):
    # the pass reads no header: it gives the largest feature, checked against its count
    text = _lgb_text()
    k = 0 if where == "first" else text.count("\nTree=") - 1
    planted = _resized(_edit(text, k, "split_feature", lambda v: "3 " + v.split(" ", 1)[1]))
    assert _one_pass(planted) == 3
    found = _scan(planted)
    assert isinstance(found, UnsafeModelError) and "split feature 3 is outside" in str(found)
    assert _same(found, _without_one_pass(monkeypatch, planted))


def _categorical_tree(text):
    lines = text.split("\n")
    return next(int(line[5:]) for i, line in enumerate(lines) if line.startswith("Tree=")
                and any(x.startswith("num_cat=") and x != "num_cat=0" for x in lines[i:i + 4]))


@pytest.mark.parametrize("key, edit", [
    ("cat_boundaries", lambda v: "1 " + v.split(" ", 1)[1]),  # not from 0
    ("cat_boundaries", lambda v: v.rsplit(" ", 1)[0] + " 0"),  # decreasing
    ("cat_threshold", lambda v: "4294967296 " + v.split(" ", 1)[1]),  # not a 32-bit word
    ("cat_threshold", lambda v: v + " 1"),  # a word too many
    ("num_cat", lambda v: str(int(v) + 1)),  # a boundary short
])
def test_a_tampered_category_set_is_not_passed(monkeypatch, key, edit):
    text = _cat_split_text()
    planted = _resized(_edit(text, _categorical_tree(text), key, edit))
    assert _one_pass(planted) == -2
    found = _scan(planted)
    assert not isinstance(found, tuple) and _same(found, _without_one_pass(monkeypatch, planted))


def test_a_categorical_split_naming_no_category_set_is_not_passed(monkeypatch):
    text = _cat_split_text()
    k = _categorical_tree(text)
    block = text.split(f"Tree={k}\n", 1)[1].split("\n\n", 1)[0]
    kinds = dict(line.split("=", 1) for line in block.split("\n"))["decision_type"].split()
    j = next(i for i, kind in enumerate(kinds) if int(kind) & 1)
    for bad in ("1.5", "-1", "9"):
        planted = _resized(_edit(text, k, "threshold", lambda v: " ".join(
            bad if i == j else w for i, w in enumerate(v.split()))))
        assert _one_pass(planted) == -2
        found = _scan(planted)
        assert isinstance(found, UnsafeModelError) and "names no category set" in str(found)
        assert _same(found, _without_one_pass(monkeypatch, planted))


@pytest.mark.parametrize("make", [_lgb_text, _cat_split_text])
def test_the_one_pass_never_changes_the_scans_verdict(make, monkeypatch):
    # the oracle: the scan without the one pass; what the pass passes, it passes as well
    rng = np.random.default_rng(17)
    passed = declined = 0
    real, answers = scan._trees_at, []
    for variant in _mutations(make(), rng, 200):
        variant = _resized(variant)
        answers.clear()
        with monkeypatch.context() as m:
            m.setattr(scan, "_trees_at", lambda *a: answers.append(real(*a)) or answers[-1])
            fast = _scan(variant)
        slow = _without_one_pass(monkeypatch, variant)
        assert _same(fast, slow), variant
        if answers and answers[0] >= -1:
            passed += 1
            # passed, or refused for its header (which the pass does not read)
            assert slow is not None and (slow.plain and slow.threads if isinstance(
                slow, tuple) else not re.search(r"tree \d|node", str(slow))), (variant, slow)
        else:
            declined += 1
    assert passed > 10 and declined > 10  # both drawn
