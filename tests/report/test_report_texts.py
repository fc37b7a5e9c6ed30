"""``ml.report`` of a text classifier on texts, and ``modellens report --text-column``.

Oracles: ``ml.shapley`` of each text with the call the page states (the numbers
on the page are its numbers), Shapley values of a planted AND model written
from the formula (two words share the score of the pair, every other word 0),
and the pooled tables recomputed here from those values.  The model is a plain
function of texts (cheap); the tiny transformer's report is in
``tests/attribution/test_text_transformer.py``.
"""

import pickle
import re

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.cli import main

#: the score of the second class is 0.9 when both words occur, 0.1 otherwise
PAIR = ("sunny", "beach")
TEXTS = ["we went to the sunny beach", "a sunny day in town", "the beach was cold",
         "sunny beach with friends today", "rain all day", "...", "we saw the beach"]


def planted(texts):
    p = np.array([0.9 if set(PAIR) <= set(re.findall(r"\w+", t)) else 0.1 for t in texts])
    return pd.DataFrame({"other": 1 - p, "sunny beach": p})


def _exact_planted(text, c):
    """Shapley values of the AND game from the formula: the pair shares 0.8, the rest 0."""
    words = list(dict.fromkeys(re.findall(r"\w+", text)))
    share = 0.4 if set(PAIR) <= set(words) else 0.0
    sign = 1.0 if c == 1 else -1.0
    return np.array([sign * share if w in PAIR else 0.0 for w in words])


@pytest.fixture(scope="module")
def rep():
    return ml.report(planted, TEXTS, n_explain=len(TEXTS), progress=False)


def test_values_are_shapleys_and_the_formulas(rep):
    attrs = rep.sections["texts"].data["attributions"]
    assert sorted(attrs) == [0, 1, 2, 3, 4, 6]  # "..." has no word: left out, said
    assert "5" in rep.sections["data"].tables[0].rows[-1][1].text
    for i, attr in attrs.items():
        assert rep.sections["texts"].data["calls"][i]["algorithm"] == "exact"
        own = ml.shapley(planted, TEXTS[i])
        np.testing.assert_allclose(attr.values, own.values, rtol=0, atol=1e-12)
        for c in (0, 1):
            np.testing.assert_allclose(attr.for_output(c).values[0], _exact_planted(TEXTS[i], c),
                                       atol=1e-12)


def test_pooled_words_and_pairs_name_the_planted_words_first(rep):
    words = rep.sections["words"].data["words"]
    # recomputed here: "sunny" is in 3 texts, 0.4 in two of them; "beach" in 4, 0.4 in two
    assert list(words)[:2] == ["sunny", "beach"]
    assert words["beach"][:2] == (4, pytest.approx(0.2, abs=1e-12))
    k, mean, err, signed = words["sunny"]
    assert k == 3 and mean == pytest.approx(0.8 / 3, abs=1e-12)
    assert err == pytest.approx(np.std([0.4, 0.4, 0.0], ddof=1) / np.sqrt(3), abs=1e-12)
    pairs = rep.sections["pairs"].data["pairs"]
    first = next(iter(pairs))
    assert first == ("beach", "sunny")
    # the pair's interaction: half of nabla = 0.8 weighted over S (all S give 0.8 here)
    assert pairs[first][1] == pytest.approx(0.4, abs=1e-12)
    assert all(v[1] < 1e-12 for key, v in pairs.items() if key != first)


def test_every_class_is_selectable_and_the_static_page_shows_each(rep):
    page = rep.to_html()
    options = re.findall(r'<option value="([^"]+)"', page)
    assert options == ["predicted", "0", "1"]
    blocks = re.findall(r'<div data-ml-text-output="(\d)"( data-ml-predicted="")?( hidden)?',
                        page)
    assert len(blocks) == 2 * 6
    # the predicted class is shown, the other hidden until chosen
    assert all((pred == "") == (hidden != "") for _, pred, hidden in blocks)
    static = ml.report(planted, TEXTS[:2], n_explain=2, interactive=False,
                       sections=["texts"], progress=False).to_html()
    assert "<select" not in static
    assert not re.search(r'data-ml-text-output="\d"( data-ml-predicted="")? hidden', static)
    assert static.count("class sunny beach") == 2 and static.count("(predicted)") == 2


def test_deletion_curves_are_those_of_ml_deletion_curves(rep):
    curves = rep.sections["faithfulness"].data["curves"]
    attrs = rep.sections["texts"].data["attributions"]
    for i, c in curves.items():
        own = ml.deletion_curves(planted, attrs[i])
        np.testing.assert_array_equal(c.deletion, own.deletion)
        np.testing.assert_array_equal(c.insertion, own.insertion)


def test_a_long_text_is_sampled_within_its_share_and_errors_shown():
    long = " ".join(f"w{k}" for k in range(14)) + " sunny beach"
    r = ml.report(planted, [long, "sunny beach"], n_explain=2, shapley_budget=600,
                  sections=["texts", "pairs"], progress=False)
    call = r.sections["texts"].data["calls"][0]
    assert call == {"n_samples": 300, "random_state": 0}  # 600 / 2 texts
    own = ml.shapley(planted, long, **call)
    np.testing.assert_array_equal(r.sections["texts"].data["attributions"][0].values, own.values)
    assert "KernelSHAP, 300 coalitions" in r.to_html()
    assert r.sections["pairs"].data["texts"] == [1]  # only the exact text has pairs


def test_bad_inputs_are_refused_before_any_model_call():
    calls = []

    def model(texts):
        calls.append(len(texts))
        return planted(texts)

    for kwargs, match in [(dict(grid=10), "does not use grid"),
                          (dict(sections=["effects"]), "not sections of a report of texts"),
                          (dict(rows=[9]), "text positions from 0 to 1")]:
        with pytest.raises(ml.InvalidParameterError, match=match):
            ml.report(model, ["a b", "c d"], progress=False, **kwargs)
    with pytest.raises(ml.InvalidParameterError, match="drop y"):
        ml.report(model, ["a b", "c d"], [0, 1], progress=False)
    with pytest.raises(ml.InvalidParameterError, match="missing"):
        ml.report(model, pd.Series(["a b", None]), progress=False)
    assert calls == []


def _sklearn_text_model():
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    texts = ["good film", "bad film", "good plot", "bad plot", "a good cast", "a bad cast"] * 3
    labels = ["pos" if "good" in t else "neg" for t in texts]
    return make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(texts, labels)


def test_cli_reports_the_column_of_texts(tmp_path, capsys):
    model = _sklearn_text_model()
    with open(tmp_path / "model.pkl", "wb") as fh:
        pickle.dump(model, fh)
    frame = pd.DataFrame({"id": [1, 2, 3], "review": ["a good film", "bad plot", "good cast"]})
    frame.to_csv(tmp_path / "reviews.csv", index=False)
    out = tmp_path / "texts.html"
    base = ["report", "--data", str(tmp_path / "reviews.csv"), "--model",
            str(tmp_path / "model.pkl"), "--trust-model-file", "--out", str(out)]
    # the one column of strings is found by itself (a text vectorizer's pipeline)
    assert main(base + ["--class", "pos"]) == 0
    page = out.read_text(encoding="utf-8")
    assert "Texts highlighted by attribution" in page and "id" in page
    assert main(base + ["--text-column", "reviw"]) == 1
    assert "no column 'reviw'" in capsys.readouterr().err
    assert main(base + ["--target", "id"]) == 1
    assert "options of a table's report" in capsys.readouterr().err


def test_cli_help_states_the_text_column_and_the_budget(capsys):
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--text-column COLUMN" in text and "300,000 masked texts" in text


def test_the_methods_warnings_are_on_the_page_naming_the_text():
    def warns(texts):
        import warnings

        warnings.warn("scored <b>in a hurry</b>", ml.ModellensWarning)
        return planted(texts)

    r = ml.report(warns, ["a sunny beach", "rain"], n_explain=2, sections=["texts"],
                  progress=False)
    # once per text, its position said, as text
    assert r.sections["texts"].warnings == ["text 0: scored <b>in a hurry</b>",
                                            "text 1: scored <b>in a hurry</b>"]
    assert "text 0: scored &lt;b&gt;in a hurry&lt;/b&gt;" in r.to_html()
