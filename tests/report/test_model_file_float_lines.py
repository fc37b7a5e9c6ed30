"""The one pass's check of a LightGBM tree's float lines by byte classes (issue 40).

``_checks_lightgbm_floats.float_line`` checks a float line in 64-byte SIMD
blocks: each byte a digit, space, sign, dot or exponent in a place it may
stand in a number, single spaces, and counts the words.  Oracles: a regular
expression of that language (and its word count), the scan without the one
pass (a planted fault's verdict), and LightGBM's own predictions (a word
LightGBM reads as its number prefix is explained as LightGBM reads it).
"""

import re

import numpy as np
import pytest

from modellens.trees import tree_ensemble
from modellens.trees._checks_lightgbm_floats import BLOCK, float_line
from test_model_file_exact import _edit, _frame, _lgb_multiclass_text, _lgb_text
from test_model_file_one_pass import (_cat_split_text, _largest_feature, _one_pass, _same, _scan,
                                      _without_one_pass)
from test_model_file_threads import _resized

#: the language the byte classes pass: words of a sign, digits, then any run of fractions and
#: exponents (``1.2.3`` too: LightGBM reads its longest number prefix), one space between
_WORD = r"-?[0-9]+(?:\.[0-9]+|[eE][-+]?[0-9]+)*"
_LINE = re.compile(rf"(?:{_WORD}(?: {_WORD})*)?")
_BIG = re.compile(r"[eE][-+]?[0-9]{3}")


def _checked(value: bytes, pad: int = 0):
    """``float_line`` of ``value`` as a tree line's value (``pad`` bytes of another line before
    it, so that the blocks start anywhere), then 200 bytes of other lines."""
    line = b"k" * pad + b"\nleaf_value=" + value + b"\nleaf_weight=1 2\n" + b"x" * 200
    buf = np.frombuffer(line, np.uint8)
    start = pad + len(b"\nleaf_value=")
    end, n, big = float_line(buf, start, np.empty(BLOCK, np.uint8))
    return (end - start, n, big) if end >= 0 else (end, 0, False)


def _expected(value: bytes):
    if _LINE.fullmatch(value.decode("latin-1")) is None:
        return -1, 0, False
    return len(value), len(value.split(b" ")) if value else 0, \
        _BIG.search(value.decode("latin-1")) is not None


def _random_line(rng):
    """Numbers LightGBM writes, or bytes of the number alphabet and a few others."""
    if rng.random() < 0.5:
        values = rng.normal(size=int(rng.integers(1, 30))) * 10.0 ** rng.integers(-120, 120)
        return " ".join(repr(float(v)) for v in values).encode()
    alphabet = np.frombuffer(b"0123456789.eE+- ", np.uint8)
    p = np.array([0.06] * 10 + [0.08, 0.05, 0.02, 0.03, 0.07, 0.15])
    return bytes(rng.choice(alphabet, int(rng.integers(0, 300)), p=p / p.sum()))


def test_a_float_line_passes_exactly_the_byte_class_language():
    rng = np.random.default_rng(5)
    for _ in range(3000):
        value = _random_line(rng)
        pad = int(rng.integers(0, 2 * BLOCK))
        if value:
            at = int(rng.integers(0, len(value)))
            odd = bytes([int(rng.choice(list(b"x%\t\r\0=,:+-.eE ")))])
            if rng.random() < 0.3:
                value = value[:at] + odd + value[at + 1:]
        assert _checked(value, pad) == _expected(value), (value, pad)


# every position a fault can take in the blocks: the first byte, the last, at each side of a
# block's end, in a block the line does not end in, in the block it ends in
_PLACES = [0, 1, BLOCK - 2, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK - 1, 2 * BLOCK, -2, -1]
_FAULTS = [b"x", b"%", b"\t", b"\0", b"\r", b"+", b".", b"e", b"-", b" ", b"n", b"="]
#: the float keys of a tree, and words of another grammar to plant first or last in them
_FLOAT_KEYS = ["leaf_value", "threshold", "leaf_weight", "split_gain", "internal_value",
               "internal_weight", "internal_count", "leaf_count", "shrinkage"]
_OTHER_WORDS = ["x", "1%1", "+1", "1.", ".5", "--1", "1 ", "nan"]


# One test per pad, each fault at each place in it (120 cases, a few milliseconds each): every
# case is checked and every failing one reported, as one test per case did, without the
# runner's cost per test (360 cases were more runner than check)
@pytest.mark.parametrize("pad", [0, 5, BLOCK - 1])
def test_a_fault_at_every_place_of_a_long_line_is_found(pad):
    words = [repr(float(v)).encode() for v in np.random.default_rng(1).normal(size=40) * 1e-3]
    value = b" ".join(words)
    assert len(value) > 3 * BLOCK and _checked(value, pad) == (len(value), 40, False)
    wrong = []
    for place in _PLACES:
        for fault in _FAULTS:
            at = place % len(value)
            planted = value[:at] + fault + value[at + 1:]
            got = _checked(planted, pad)
            # bytes of no number: refused wherever they stand
            if got != _expected(planted) or (fault not in b"+.e- " and got[0] != -1):
                wrong.append((place, fault, planted[at - 3:at + 3], got, _expected(planted)))
    assert not wrong, wrong


@pytest.fixture(scope="module")
def multiclass_text():
    """One fit of the multiclass model for the tests that plant words in it (LightGBM's fit
    is deterministic: a fit per case gave this same text)."""
    return _lgb_multiclass_text()


# One test per key, each word first and last in it (16 cases, every failing one reported)
@pytest.mark.parametrize("key", _FLOAT_KEYS)
def test_a_word_of_another_grammar_in_a_float_line_is_not_passed(monkeypatch, multiclass_text,
                                                                 key):
    text = multiclass_text
    k = text.count("\nTree=") // 2
    wrong = []
    for word in _OTHER_WORDS:
        for where in (0, -1):  # the first word, the last

            def edit(value, word=word, where=where):
                words = value.split(" ")
                words[where] = word
                return " ".join(words)

            planted = _resized(_edit(text, k, key, edit))
            verdict = _one_pass(planted)
            found = _scan(planted)
            # not passed; then named, or left to the full reading, exactly as without it
            if verdict != -2 or isinstance(found, tuple) or \
                    not _same(found, _without_one_pass(monkeypatch, planted)):
                wrong.append((word, where, verdict, str(found)))
    assert not wrong, wrong


def _categorical_split(text):
    """A tree with a categorical split, and that split's number in it."""
    for k in range(text.count("\nTree=")):
        block = text.split(f"Tree={k}\n", 1)[1].split("\n\n", 1)[0]
        kinds = dict(line.split("=", 1) for line in block.split("\n"))["decision_type"].split()
        cats = [j for j, kind in enumerate(kinds) if int(kind) & 1]
        if cats:
            return k, cats[0]
    raise AssertionError("no categorical split")


@pytest.mark.parametrize("word", ["0.0.1", "1e0e0", "0.5.0"])
def test_a_categorical_threshold_is_read_by_the_full_grammar(monkeypatch, word):
    # its value indexes the category sets: the byte classes alone would pass '0.0.1'
    text = _cat_split_text()
    k, j = _categorical_split(text)
    planted = _resized(_edit(text, k, "threshold", lambda v: " ".join(
        word if i == j else w for i, w in enumerate(v.split(" ")))))
    assert _one_pass(planted) == -2
    assert _same(_scan(planted), _without_one_pass(monkeypatch, planted))


@pytest.mark.parametrize("word", ["0e999", "1e300", "1E+300"])
def test_a_threshold_with_a_long_exponent_is_read_by_the_full_grammar(monkeypatch, word):
    # '0e999' reads as NaN on the old path (zero times an overflowing power): its verdict kept
    text = _lgb_text()
    planted = _resized(_edit(text, 1, "threshold", lambda v: word + " " + v.split(" ", 1)[1]))
    verdict = _one_pass(planted)
    assert verdict == (-2 if word == "0e999" else _largest_feature(planted))
    assert _same(_scan(planted), _without_one_pass(monkeypatch, planted))


def test_words_lightgbm_reads_as_a_prefix_are_explained_as_it_reads_them(tmp_path):
    # '1.5.7' passes the byte classes: LightGBM reads 1.5 (StringToArray's AtofPrecise), the
    # rest of '2e0e1' as the next value (StringToArrayFast's Atof); we explain with LightGBM's
    # rewrite of what it read, so the explanation is its predictions
    lgb = pytest.importorskip("lightgbm")
    from modellens.files import load_model

    text = _lgb_text()
    planted = _edit(text, 0, "leaf_value", lambda v: "1.5.7 " + v.split(" ", 1)[1])
    planted = _edit(planted, 1, "internal_value", lambda v: "2e0e1 " + v.split(" ", 1)[1])
    planted = _edit(planted, 2, "threshold", lambda v: "0.25.3 " + v.split(" ", 1)[1])
    planted = _resized(planted)
    assert _one_pass(planted) == _largest_feature(planted)
    path = tmp_path / "model.txt"
    path.write_text(planted)
    model = load_model(path)
    X, _ = _frame()
    raw = model.predict(X.to_numpy(), raw_score=True)
    ens = tree_ensemble(model)
    np.testing.assert_allclose(ens.predict_raw(ens.encode(X.to_numpy()))[:, 0], raw,
                               rtol=1e-9, atol=1e-12)
    # the planted words changed what LightGBM predicts: it read 1.5 and 0.25
    original = lgb.Booster(model_str=text).predict(X.to_numpy(), raw_score=True)
    assert not np.allclose(raw, original)
    assert "1.5 " in model.model_to_string().split("Tree=0\n", 1)[1].split("leaf_value=", 1)[1][:4]
