"""Shapley games x estimators: every estimator on every game that offers rows, one background rule."""

import threading
import warnings

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

import modellens as ml
from modellens.attribution._background import DEFAULT_BACKGROUND
from modellens.data import sample_rows

WORDS = {"good": 0.5, "film": 0.1, "bad": -0.4, "plot": 0.2, "dull": -0.3}
PAIR = ("good", "plot")  # a two-word interaction worth PAIR_WORTH
PAIR_WORTH = 0.6
TEXT = "a good film, a bad plot, dull"


def _text_score(texts):
    out = []
    for t in texts:
        words = set(t.replace(",", " ").split())
        out.append(0.1 + sum(w for k, w in WORDS.items() if k in words)
                   + PAIR_WORTH * all(k in words for k in PAIR))
    return np.array(out)


def _closed_form(names):
    """Additive worths, the pair's interaction split equally between its two words."""
    phi = np.array([WORDS.get(k, 0.0) + (PAIR_WORTH / 2 if k in PAIR else 0.0) for k in names])
    return phi


@pytest.mark.parametrize("algorithm,budget", [
    ("exact", {}),
    # an antithetic pair puts each word of the pair first once: its split is exact
    ("permutation", {"n_permutations": 10}),
    # sampled in complementary pairs, the kernel fit of a game of pairwise interactions
    # is exact (only 40 of the 62 coalitions are evaluated)
    ("kernel", {"n_samples": 40}),
])
def test_every_estimator_on_the_text_game_gives_the_closed_form(algorithm, budget):
    attr = ml.shapley(_text_score, TEXT, algorithm=algorithm, random_state=0, **budget)
    assert attr.method == f"shapley-{algorithm}" and attr.value_function == "removal"
    np.testing.assert_allclose(attr.values[0], _closed_form(attr.feature_names), atol=1e-12)
    np.testing.assert_allclose(attr.base_values, [0.1])
    np.testing.assert_allclose(attr.base_values + attr.values.sum(axis=1), attr.prediction,
                               atol=1e-12)
    if algorithm == "exact":
        assert attr.sampling is None and attr.std is None
    else:
        assert attr.sampling.std.shape == (1, len(attr.feature_names))
        assert attr.media.kind == "text" and attr.media.text == TEXT


def test_permutation_sampling_of_an_image_is_unbiased_against_exact():
    rng = np.random.default_rng(0)
    image = rng.random((12, 12, 3))
    labels = (np.arange(12)[:, None] // 4) * 3 + np.arange(12)[None, :] // 4  # 9 superpixels

    def score(images):  # a three-way interaction: sampling is not exact
        m = images.reshape(len(images), 3, 4, 3, 4, 3).mean(axis=(2, 4, 5))
        return m[:, 0, 0] * m[:, 1, 1] * m[:, 2, 2] + m[:, 0, 2]

    masker = ml.ImageMasker(segmentation=labels, hide_color=0)
    exact = ml.shapley(score, image, masker=masker, algorithm="exact")
    runs = np.array([ml.shapley(score, image, masker=masker, algorithm="permutation",
                                n_permutations=10, random_state=s).values[0]
                     for s in range(30)])
    assert np.allclose(runs.sum(axis=1), runs.sum(axis=1)[0])  # each run is efficient
    err = runs.mean(axis=0) - exact.values[0]
    se = runs.std(axis=0, ddof=1) / np.sqrt(len(runs))
    assert np.all(np.abs(err) <= 4.5 * se + 1e-12)
    assert se.max() > 0  # the game really is sampled
    # the sampling block of the image: budget and standard errors from the same estimator
    one = ml.shapley(score, image, masker=masker, algorithm="permutation", n_permutations=10,
                     random_state=0)
    assert one.sampling.n_permutations == 10 and one.sampling.n_permutations == 10
    assert one.segments.shape == (12, 12) and one.media.kind == "image"


def test_one_player_is_the_same_rule_for_tables_and_texts():
    table = ml.shapley(lambda A: A[:, 0] ** 2, np.array([[2.0]]), background=np.array([[1.0]]),
                       algorithm="kernel")
    text = ml.shapley(lambda T: np.array([3.0 if "good" in t else 1.0 for t in T]), "good",
                      algorithm="kernel")
    for attr, value in ((table, 3.0), (text, 2.0)):
        np.testing.assert_allclose(attr.values, [[value]])
        np.testing.assert_array_equal(attr.std, [[0.0]])
        np.testing.assert_array_equal(attr.sampling.dof, [np.inf])


def _classification_data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    return X, y


def test_auto_falling_back_from_trees_draws_the_background_once():
    # a boosted classifier on the probability scale: TreeSHAP cannot, 'auto' takes exact
    X, y = _classification_data()
    model = GradientBoostingClassifier(n_estimators=5, random_state=0).fit(X, y)
    auto = ml.shapley(model, X[:20], background=5, response_method="predict_proba",
                      random_state=4)
    exact = ml.shapley(model, X[:20], background=5, response_method="predict_proba",
                       algorithm="exact", random_state=4)
    assert auto.method == "shapley-exact" and "sample of 5 of the 20" in auto.diagnostics["background"]
    np.testing.assert_array_equal(auto.values, exact.values)
    np.testing.assert_array_equal(auto.base_values, exact.base_values)


def test_tree_and_exact_games_draw_the_same_background():
    X, y = _classification_data()
    model = GradientBoostingRegressor(n_estimators=8, max_depth=3, random_state=0).fit(X, y)
    tree = ml.shapley(model, X[:4], background=12, algorithm="tree", random_state=7)
    exact = ml.shapley(model, X[:4], background=12, algorithm="exact", random_state=7)
    rows = sample_rows(4, 12, np.random.default_rng(7))
    assert rows is None  # 12 > 4 rows: every explained row is the background
    assert tree.diagnostics["background"] == exact.diagnostics["background"] == "all 4 rows of X"
    np.testing.assert_allclose(tree.values, exact.values, atol=1e-12)
    drawn = sample_rows(80, 12, np.random.default_rng(7))
    tree = ml.shapley(model, X, background=12, algorithm="tree", random_state=7)
    given = ml.shapley(model, X, background=X[drawn], algorithm="tree")
    np.testing.assert_array_equal(tree.values, given.values)
    assert tree.diagnostics["n_background"] == 12


def test_default_background_warns_once_and_points_at_the_caller():
    X = np.random.default_rng(0).normal(size=(DEFAULT_BACKGROUND + 50, 3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ml.shapley(lambda A: A.sum(axis=1), X[:120], random_state=0)
    ours = [w for w in caught if issubclass(w.category, ml.ModellensWarning)]
    assert len(ours) == 1 and "random sample of 100 of the 120 rows" in str(ours[0].message)
    assert ours[0].filename == __file__


def test_texts_take_no_groups_and_trees_refuse_texts():
    # (interactions=True is taken for texts: tests/attribution/test_text_transformer.py)
    with pytest.raises(ml.InvalidParameterError, match="index or groups"):
        ml.shapley(_text_score, TEXT, groups={"g": [0]})
    with pytest.raises(ml.InvalidParameterError, match="tree"):
        ml.shapley(_text_score, TEXT, algorithm="tree")
    with pytest.raises(ml.InvalidParameterError, match="no background"):
        ml.shapley(_text_score, TEXT, background=np.zeros((1, 1)))


def test_tree_threads_do_not_leak_to_other_threads():
    numba = pytest.importorskip("numba")
    X, y = _classification_data()
    model = GradientBoostingRegressor(n_estimators=4, random_state=0).fit(X, y)
    before = numba.get_num_threads()
    seen = []

    def explain():
        ml.shapley(model, X[:5], algorithm="tree", n_jobs=1)
        seen.append(numba.get_num_threads())

    workers = [threading.Thread(target=explain) for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert seen == [before] * 3 and numba.get_num_threads() == before
