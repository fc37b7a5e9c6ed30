"""Owen values of a text over words within sentences (``players="hierarchy"``).

Oracles written here: Owen values by brute force, the mean marginal contribution
over every order that keeps each sentence's words together (enumerated with
itertools, not the coalition formula the code uses); the Shapley values of the
same words when the text is one sentence; the Shapley values of the sentences
(``players="sentence"``), which each sentence's Owen values add up to.
"""

import math
import re

import numpy as np
import pytest

import modellens as ml
from shapley_games import owen_by_orders

TEXT = "the day was sunny. we saw beach! cold rain came"            # 4 + 3 + 3 words
REPEAT = "the day was sunny. we saw the beach! cold rain came"     # "the" recurs


def _worth(words) -> float:
    """A score with interactions inside and across sentences, of the set of words present."""
    w = set(words)
    return (1.0 * ({"sunny", "beach"} <= w) + 0.6 * ({"cold", "rain"} <= w) * ("sunny" not in w)
            + 0.3 * len(w & {"day", "we", "saw"}) ** 2 / 9 + 0.2 * ("the" in w) * ("came" in w)
            + 0.05 * len(w))


def score(texts):
    return np.array([_worth(re.findall(r"\w+", t)) for t in texts])


def _groups(text):
    """Each distinct word and its sentence (that of its first occurrence)."""
    words, sentence = [], []
    for k, s in enumerate(re.findall(r"[^.!?]+[.!?]*", text)):
        for w in re.findall(r"\w+", s):
            if w not in words:
                words.append(w)
                sentence.append(k)
    return words, np.unique(sentence, return_inverse=True)[1]


def _owen_by_orders(text):
    """The words, their Owen values over the text's sentences, and the orders walked."""
    words, groups = _groups(text)
    sentences = [[w for w, g in zip(words, groups) if g == k] for k in range(groups.max() + 1)]
    values, count = owen_by_orders(sentences, _worth)
    return words, values, count


@pytest.mark.parametrize("text", [TEXT, REPEAT])
def test_exact_owen_values_equal_the_mean_over_hierarchical_orders(text):
    words, expected, n_orders = _owen_by_orders(text)
    assert n_orders == math.factorial(3) * 24 * 6 * 6  # 3 sentences, of 4, 3 and 3 words
    attr = ml.shapley(score, text, players="hierarchy")
    assert attr.method == "owen-exact" and attr.feature_names == words
    np.testing.assert_allclose(attr.values[0], expected, rtol=0, atol=1e-12)
    assert attr.diagnostics["sentence_of_word"] == list(_groups(text)[1])
    curves = ml.deletion_curves(score, attr)  # Owen values order the words like any values
    assert curves.players[0] == words[int(np.argmax(expected))]
    # fewer coalitions than the 2^d of Shapley values
    assert attr.diagnostics["n_coalitions"] < 2 ** len(words) - 2
    # and the Owen values are not the Shapley values here (the hierarchy matters)
    shap = ml.shapley(score, text, algorithm="exact")
    assert np.abs(shap.values - attr.values).max() > 0.01


def test_each_sentence_adds_up_to_its_shapley_value_in_the_game_of_sentences():
    owen = ml.shapley(score, TEXT, players="hierarchy").values[0]
    groups = np.array(ml.shapley(score, TEXT, players="hierarchy")
                      .diagnostics["sentence_of_word"])
    sentences = ml.shapley(score, TEXT, players="sentence").values[0]
    np.testing.assert_allclose([owen[groups == k].sum() for k in range(3)], sentences,
                               rtol=0, atol=1e-12)


def test_one_sentence_gives_the_shapley_values():
    text = "cold rain came and we saw the sunny beach"
    owen = ml.shapley(score, text, players="hierarchy", algorithm="exact")
    shap = ml.shapley(score, text, algorithm="exact")
    assert owen.method == "owen-exact"
    np.testing.assert_allclose(owen.values, shap.values, rtol=0, atol=1e-12)


def test_sampled_owen_values_with_errors_and_a_budget_linear_in_the_words():
    _, expected, _ = _owen_by_orders(TEXT)
    attr = ml.shapley(score, TEXT, players="hierarchy", algorithm="permutation",
                      n_permutations=400, random_state=0)
    assert attr.method == "owen-permutation" and np.isfinite(attr.std).all()
    assert np.all(np.abs(attr.values[0] - expected) <= 4.5 * attr.std[0] + 1e-12)
    assert attr.std[0].max() > 1e-3  # (some words' contributions do vary over the orders)
    np.testing.assert_allclose(attr.values[0].sum(), attr.prediction[0] - attr.base_values[0])
    # a long text: the default is sampling, 2 (d - 1) coalitions an order at most
    rng = np.random.default_rng(0)
    vocab = ["sunny", "beach", "cold", "rain", "day", "we", "saw", "came"] + \
        [f"w{i}" for i in range(52)]
    long = ". ".join(" ".join(rng.permutation(vocab)[:12]) for _ in range(6)) + "."
    attr = ml.shapley(score, long, players="hierarchy", random_state=0)  # 20 orders
    d = len(attr.feature_names)
    assert attr.method == "owen-permutation" and d > 40
    assert attr.diagnostics["n_coalitions"] <= 20 * (d - 1)


def test_owen_values_refuse_what_does_not_apply():
    with pytest.raises(ml.InvalidParameterError, match="Owen"):
        ml.shapley(score, TEXT, players="hierarchy", algorithm="kernel")
    with pytest.raises(ml.InvalidParameterError, match="Owen"):
        ml.shapley(score, TEXT, players="hierarchy", interactions=True)
    with pytest.raises(ml.InvalidParameterError, match="Owen"):
        ml.lime_text(score, TEXT, players="hierarchy")
