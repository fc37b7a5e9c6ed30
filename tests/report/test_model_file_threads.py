"""The LightGBM scan reads the trees in parallel threads where tree_sizes was proven (issue 40).

With a ``tree_sizes`` line of plain sizes that jump from the first tree to the
trees' end, the compiled scan reads each tree on its own from where the sizes
say it starts (``_checks_lightgbm_scan._trees_at``, numba threads, as many as
``n_jobs`` asks for); a tree whose piece is not exactly one tree and empty
lines sends the text to the full reading, as the scan of the trees in turn
does.  The oracle of each test is that reading in turn (the scan without the
sizes' path), or the full reading of the text: the threaded path gives the
same verdict and the same model, with any thread count.
"""

import numba
import numpy as np
import pytest

import modellens as ml
from modellens.files import FileError, _models, load_model
from modellens.trees import UnsafeModelError, check_lightgbm_text
from modellens.trees import _checks_lightgbm_scan as scan
from test_model_file_exact import _edit, _mutations

lgb = pytest.importorskip("lightgbm")


@pytest.fixture(scope="module")
def model_text():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 5))
    y = np.digitize(X[:, 0] - X[:, 1] + rng.normal(scale=0.3, size=400), [-1.0, 1.0])
    booster = lgb.train({"num_leaves": 6, "verbose": -1, "min_data_in_leaf": 5,
                         "objective": "multiclass", "num_class": 3},
                        lgb.Dataset(X, y), num_boost_round=4)
    return booster.model_to_string(), X


def _resized(text):
    """``text`` with its tree_sizes line rewritten to the trees as they now lie (so that the
    sizes' path reads the trees, whatever was planted in them)."""
    first = text.index("\nTree=") + 1
    end = text.rindex("\nend of trees") + 1
    starts = [first]
    at = text.find("\nTree=", first)
    while 0 <= at < end:
        starts.append(at + 1)
        at = text.find("\nTree=", at + 1)
    sizes = np.diff(starts + [end])
    line = next(x for x in text[:first].split("\n") if x.startswith("tree_sizes="))
    # the sizes do not depend on the header's length: the line may change it
    return text.replace(line, "tree_sizes=" + " ".join(map(str, sizes)), 1)


def _outcome(fn, *args):
    try:
        return fn(*args)
    except UnsafeModelError as exc:
        return exc


def _in_turn(monkeypatch, text):
    """The scan with the sizes' path off: the trees read one after another."""
    with monkeypatch.context() as m:
        m.setattr(scan, "_by_sizes", lambda *a: None)
        return _outcome(scan.scan_lightgbm_text, text.encode(), text)


def _spy(monkeypatch):
    calls = []
    real = scan._trees_at
    monkeypatch.setattr(scan, "_trees_at", lambda *a: calls.append(1) or real(*a))
    return calls


def test_its_own_text_is_read_by_the_sizes_as_in_turn(model_text, monkeypatch):
    text, _ = model_text
    calls = _spy(monkeypatch)
    fast = scan.scan_lightgbm_text(text.encode(), text)
    assert calls and fast is not None and fast.threads and fast.plain
    slow = _in_turn(monkeypatch, text)
    assert not slow.threads and slow._replace(threads=True) == fast


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_the_thread_count_changes_neither_the_verdict_nor_the_model(tmp_path, model_text,
                                                                      monkeypatch, n_jobs):
    text, X = model_text
    path = tmp_path / "m.txt"
    path.write_text(text)
    bad = tmp_path / "bad.txt"
    bad.write_text(_resized(_edit(text, 5, "left_child", lambda v: "9 " + v.split(" ", 1)[1])))
    own = lgb.Booster(model_str=text)
    threads, real = [], scan._trees_at
    monkeypatch.setattr(scan, "_trees_at",
                        lambda *a: threads.append(numba.get_num_threads()) or real(*a))
    with ml.config(n_jobs=n_jobs):
        model = load_model(path)
        with pytest.raises(FileError, match="tree 5, node 0: left child 9 is outside"):
            load_model(bad)
    # the scan runs on LightGBM's load threads, more where n_jobs asks (numba's own count
    # bounds it)
    want = max(n_jobs, _models._lightgbm_threads(lgb))
    assert threads == [min(want, numba.config.NUMBA_NUM_THREADS)] * 2
    assert model.model_to_string() == own.model_to_string()
    np.testing.assert_array_equal(model.predict(X), own.predict(X))


@pytest.mark.parametrize("where", ["middle", "last"])
@pytest.mark.parametrize("fault", ["a child outside its tree", "a feature outside",
                                   "a line twice", "two spaces", "a count off"])
def test_a_fault_planted_in_a_middle_or_the_last_tree_is_refused_by_the_sizes_path(
        model_text, monkeypatch, where, fault):
    text, _ = model_text
    k = text.count("\nTree=") - 1 if where == "last" else text.count("\nTree=") // 2
    edits = {
        "a child outside its tree": ("right_child", lambda v: "7 " + v.split(" ", 1)[1]),
        "a feature outside": ("split_feature", lambda v: "5 " + v.split(" ", 1)[1]),
        "a line twice": ("leaf_count", lambda v: v + "\nleaf_count=" + v),
        "two spaces": ("threshold", lambda v: v.replace(" ", "  ", 1)),
        "a count off": ("left_child", lambda v: v.rsplit(" ", 1)[0]),
    }
    planted = _resized(_edit(text, k, *edits[fault]))
    calls = _spy(monkeypatch)
    found = _outcome(scan.scan_lightgbm_text, planted.encode(), planted)
    assert calls  # the sizes fit: the trees were read by them
    assert not isinstance(found, tuple)  # refused there, or left to the full reading
    full = _outcome(check_lightgbm_text, planted)
    if fault == "two spaces":  # read alike by Python's split, not by LightGBM's: not plain
        assert found is None and not full.plain
    else:
        assert isinstance(full, UnsafeModelError)
    assert type(_in_turn(monkeypatch, planted)) is type(found)


def _variants(text, rng, n):
    """The full reading's mutations (a value, a count, a line repeated or dropped), and an
    empty line planted in a tree (which ends it there)."""
    yield from _mutations(text, rng, n)
    lines = text.split("\n")
    inside = [i for i, line in enumerate(lines) if "=" in line and i > lines.index("Tree=0")
              and not line.startswith(("Tree=", "[", "end of"))]
    for i in rng.choice(inside, size=n // 4):
        yield "\n".join(lines[:i] + [""] + lines[i:])


def test_the_sizes_path_gives_the_verdict_of_the_reading_in_turn(model_text, monkeypatch):
    # the oracle: the same scan reading the trees one after another, and the full reading
    text, _ = model_text
    rng = np.random.default_rng(21)
    accepted = declined = 0
    for variant in _variants(text, rng, 120):
        variant = _resized(variant)
        fast, slow = _outcome(scan.scan_lightgbm_text, variant.encode(), variant), \
            _in_turn(monkeypatch, variant)
        full = _outcome(check_lightgbm_text, variant)
        if isinstance(fast, tuple):
            accepted += 1
            assert fast == slow._replace(threads=True) and not isinstance(full, Exception)
        else:
            declined += 1
            assert type(fast) is type(slow) and str(fast) == str(slow), variant
    assert accepted > 10 and declined > 10  # both drawn


def test_sizes_that_wrap_around_to_the_trees_end_are_refused_unread(model_text, monkeypatch):
    # 15 digits a size pass the plain grammar; their int64 sum wraps past 2**63: sizes
    # summing to the trees' length plus 2**64 jump to the trees' end, and on the way to
    # offsets outside the text, which the threads would read
    text, _ = model_text
    first = text.index("\nTree=") + 1
    length = text.rindex("\nend of trees") + 1 - first
    total = 2 ** 64 + length
    big = 999_999_999_999_999
    sizes = [big] * (total // big) + [total % big]
    assert all(0 < s <= big for s in sizes)
    line = next(x for x in text.split("\n") if x.startswith("tree_sizes="))
    planted = text.replace(line, "tree_sizes=" + " ".join(map(str, sizes)), 1)
    calls = _spy(monkeypatch)
    assert scan.scan_lightgbm_text(planted.encode(), planted) is None
    assert not calls


@pytest.mark.parametrize("key", ["internal_weight", "split_gain", "leaf_count", "shrinkage"])
def test_a_word_lightgbm_cannot_read_in_a_counted_value_is_not_read_in_its_threads(
        tmp_path, model_text, key):
    # the fuzz run's m01529 (seed 5): 'internal_weight=200 1%1 99 ...' passed the checks with
    # tree_sizes kept; LightGBM's parallel reading stopped the process (terminate), also
    # at one OpenMP thread.  Such a text goes without the sizes: LightGBM raises.  In a
    # child process, which the abort would end
    import subprocess
    import sys

    text, _ = model_text
    k = text.count("\nTree=") - 1
    path = tmp_path / "m.txt"
    path.write_text(_resized(_edit(text, k, key, lambda v: v.replace(v.split(" ")[0], "1%1", 1))))
    data = path.read_bytes()
    assert not scan.check_lightgbm_file(data, data.decode()).threads
    code = ("from modellens.files import FileError, load_model\n"
            f"try:\n    load_model({str(path)!r})\nexcept FileError as exc:\n"
            "    print('refused:', exc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-500:]  # no abort
    # an array of floats is read word by word: '%1' raises; a count (Atoi) and the one
    # shrinkage (Atof) stop at the '%', and LightGBM loads the text
    assert ("refused:" in done.stdout) is (key in ("internal_weight", "split_gain"))
