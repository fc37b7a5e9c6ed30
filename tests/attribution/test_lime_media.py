"""LIME and Shapley values for texts (words) and images (superpixels)."""

import json

import numpy as np
import pytest

import modellens as ml
from modellens.attribution._masking import ImageInput, TextInput

from shapley_games import coalition_shapley

TEXT = "The plot is thin, but the acting is excellent and the music is lovely."


def keyword_classifier(texts):
    """Class scores (m, 2): class 1 is likely when 'excellent' is in the text."""
    p = np.array([0.9 if "excellent" in t.split() else 0.1 for t in texts])
    p = p + 0.05 * np.array(["lovely" in t for t in texts])
    return np.column_stack([1 - p, p])


# ------------------------------------------------------------ text representation
def test_text_input_bag_of_words():
    rep = TextInput("a b, a c!")
    assert rep.words == ["a", "b", "c"]
    assert rep.build([[True, True, True], [False, True, True], [True, False, False]]) == \
        ["a b, a c!", " b,  c!", "a , a !"]
    rep = TextInput("x-y z", tokenizer=lambda t: t.replace("-", " ").split())
    assert rep.words == ["x", "y", "z"]
    assert TextInput("x-y z", tokenizer=r"[\w-]+").words == ["x-y", "z"]


def test_text_keyword_ranks_first():
    attr = ml.lime_text(keyword_classifier, TEXT, target=1, random_state=0)
    assert attr.method == "lime" and attr.values.shape == (1, len(set(TEXT.replace(",", "")
                                                                          .replace(".", "")
                                                                          .split())))
    order = np.argsort(-attr.values[0])
    assert attr.feature_names[order[0]] == "excellent"
    assert attr.values[0, order[0]] == pytest.approx(0.8, abs=0.05)
    assert attr.feature_names[order[1]] == "lovely"
    assert attr.prediction[0] == pytest.approx(0.95)
    assert attr.output == "f(x)[1]"


def test_text_same_seed_same_numbers():
    a = ml.lime_text(keyword_classifier, TEXT, target=1, random_state=3, num_samples=500)
    b = ml.lime_text(keyword_classifier, TEXT, target=1, random_state=3, num_samples=500)
    c = ml.lime_text(keyword_classifier, TEXT, target=1, random_state=4, num_samples=500)
    np.testing.assert_array_equal(a.values, b.values)
    assert not np.array_equal(a.values, c.values)


def _lime_text_runs(text, f, seeds, num_samples):
    from lime.lime_text import LimeTextExplainer

    out = []
    for s in seeds:
        ex = LimeTextExplainer(feature_selection="none", random_state=s, bow=True,
                               split_expression=r"\W+")
        e = ex.explain_instance(text, f, labels=(1,), num_features=50, num_samples=num_samples)
        words = e.domain_mapper.indexed_string.inverse_vocab
        out.append({words[j]: v for j, v in e.local_exp[1]})
    return out


def test_text_weights_match_lime_within_sampling_error():
    def f(texts):  # smooth in the number of kept words, so every weight matters
        score = np.array([0.6 * ("excellent" in t) + 0.3 * ("lovely" in t) - 0.2 * ("thin" in t)
                          + 0.02 * len(t.split()) for t in texts])
        p = 1 / (1 + np.exp(-score))
        return np.column_stack([1 - p, p])

    seeds = range(25)
    theirs = _lime_text_runs(TEXT, f, seeds, 1000)
    ours = [ml.lime_text(f, TEXT, target=1, feature_selection="none", num_samples=1000,
                         random_state=s) for s in seeds]
    names = ours[0].feature_names
    assert sorted(names) == sorted(theirs[0])
    A = np.array([a.values[0] for a in ours])
    B = np.array([[t[w] for w in names] for t in theirs])
    se = np.sqrt(A.var(axis=0, ddof=1) / 25 + B.var(axis=0, ddof=1) / 25)
    assert (np.abs(A.mean(axis=0) - B.mean(axis=0)) <= 4.5 * se + 1e-9).all()
    # power: the tolerance is a small part of the largest weight
    top = np.argmax(np.abs(B.mean(axis=0)))
    assert 4.5 * se[top] < 0.15 * abs(B.mean(axis=0)[top])


def test_text_html_escapes_and_highlights():
    text = 'Excellent <script>alert("x")</script> & more'
    f = lambda T: np.array([float("Excellent" in t) for t in T])  # noqa: E731
    attr = ml.lime_text(f, text, random_state=0, num_samples=300)
    page = attr.plot.text_html()
    assert "<script>" not in page and "&lt;" in page and "&amp;" in page
    assert page.count("<span") == len(attr.media.spans)
    assert "Excellent</span>" in page
    ax = attr.plot.text()
    assert ax.texts and "R\u00b2" in ax.get_title()


# ------------------------------------------------------------ images
def _grid_labels(h=32, w=32, block=8):
    return (np.arange(h)[:, None] // block) * (w // block) + np.arange(w)[None, :] // block


@pytest.fixture(scope="module")
def texture():
    return np.random.default_rng(0).random((32, 32, 3))


def region_model(images):
    """Keys on the top-left 16 x 16 region: its pixel spread (hidden = mean colour = flat)."""
    return images[:, :16, :16].std(axis=(1, 2, 3))


def test_image_region_ranks_its_superpixels_first(texture):
    labels = _grid_labels()
    attr = ml.lime_image(region_model, texture, segmentation=labels, random_state=0,
                         num_features=16)
    assert attr.segments.shape == (32, 32)
    assert attr.feature_names == [str(i) for i in range(16)]
    top4 = {attr.feature_names[j] for j in np.argsort(-attr.values[0])[:4]}
    assert top4 == {"0", "1", "4", "5"}  # the superpixels inside the region
    others = np.delete(attr.values[0], [0, 1, 4, 5])
    assert np.abs(others).max() < 0.2 * attr.values[0, [0, 1, 4, 5]].min()


def test_image_hide_color_and_fill(texture):
    labels = _grid_labels()
    rep = ImageInput(texture, labels, None)
    out = rep.build(np.array([[True] * 16, [False] + [True] * 15]))
    np.testing.assert_array_equal(out[0], texture)
    np.testing.assert_allclose(out[1][:8, :8], np.broadcast_to(texture[:8, :8].mean(axis=(0, 1)),
                                                               (8, 8, 3)))
    np.testing.assert_array_equal(out[1][8:], texture[8:])
    rep0 = ImageInput(texture, labels, hide_color=0)
    assert (rep0.build(np.zeros((1, 16), bool)) == 0).all()


@pytest.mark.parametrize("method", ["slic", "quickshift"])
def test_image_segmentation_by_scikit_image(texture, method):
    pytest.importorskip("skimage")
    img = np.zeros((32, 32, 3))
    img[:16, :16] = [1.0, 0.2, 0.2]
    img += 0.05 * texture
    attr = ml.lime_image(region_model, img, segmentation=method, random_state=0,
                         num_samples=300)
    assert attr.segments.shape == (32, 32) and attr.segments.max() + 1 == attr.shape[1]
    ax = attr.plot.image()
    assert ax.images


def test_image_matches_lime_within_sampling_error(texture):
    from lime.lime_image import LimeImageExplainer

    labels = _grid_labels(block=16)  # 4 superpixels

    def f(images):
        s = images[:, :16, :16].std(axis=(1, 2, 3)) + 0.5 * images[:, 16:, 16:].std(axis=(1, 2, 3))
        return np.column_stack([1 - s, s])

    seeds = range(25)
    theirs = []
    for s in seeds:
        e = LimeImageExplainer(feature_selection="none", random_state=s).explain_instance(
            texture, f, labels=(1,), top_labels=None, hide_color=None, num_features=4,
            num_samples=300, segmentation_fn=lambda img: labels,
            random_seed=s)
        w = np.zeros(4)
        for j, v in e.local_exp[1]:
            w[j] = v
        theirs.append(w)
    B = np.array(theirs)
    A = np.array([ml.lime_image(f, texture, segmentation=labels, target=1, num_features=4,
                                feature_selection="none", num_samples=300,
                                random_state=s).values[0] for s in seeds])
    se = np.sqrt(A.var(axis=0, ddof=1) / 25 + B.var(axis=0, ddof=1) / 25)
    assert (np.abs(A.mean(axis=0) - B.mean(axis=0)) <= 4.5 * se + 1e-9).all()
    assert A.mean(axis=0)[0] > A.mean(axis=0)[3] > 0.01


# ------------------------------------------------------------ Shapley through the same masking
def test_shapley_text_exact_closed_form():
    # f = [w1] + 2 [w2][w3]: phi_w1 = 1, phi_w2 = phi_w3 = 1, others 0
    f = lambda T: np.array([("alpha" in t.split()) + 2.0 * ("beta" in t.split()) *  # noqa: E731
                            ("gamma" in t.split()) for t in T])
    attr = ml.shapley(f, "alpha beta gamma delta")
    assert attr.method == "shapley-exact"
    np.testing.assert_allclose(attr.values[0], [1, 1, 1, 0], atol=1e-12)
    assert attr.base_values[0] == 0 and attr.prediction[0] == 3


def test_shapley_text_exact_equals_brute_force_and_kernel_is_efficient():
    words = TEXT.replace(",", "").replace(".", "").split()
    rep = TextInput(TEXT)
    p = rep.n_features

    def f(T):
        return np.array([np.tanh(0.7 * ("excellent" in t) + 0.4 * ("lovely" in t) * ("music" in t)
                                 - 0.3 * ("thin" in t) + 0.05 * len(t.split())) for t in T])

    def v(S):
        return f(rep.build(np.isin(np.arange(p), list(S))[None]))[0]

    small = " ".join(dict.fromkeys(words[:6]))
    rep = TextInput(small)
    p = rep.n_features
    exact = ml.shapley(f, small, algorithm="exact")
    np.testing.assert_allclose(exact.values[0], coalition_shapley(v, p), atol=1e-12)
    kern = ml.shapley(f, TEXT, masker="text", algorithm="kernel", n_samples=300,
                      random_state=0)
    assert kern.method == "shapley-kernel"
    np.testing.assert_allclose(kern.values.sum() + kern.base_values[0], kern.prediction[0],
                               atol=1e-10)
    assert kern.std is not None and kern.std.shape == kern.values.shape
    # a budget covering every coalition gives the exact values
    full = ml.shapley(f, small, algorithm="kernel", n_samples=2 ** p - 2)
    np.testing.assert_allclose(full.values, exact.values, atol=1e-10)


def test_shapley_image_efficiency_and_exact(texture):
    labels = _grid_labels()
    masker = ml.ImageMasker(segmentation=labels)
    kern = ml.shapley(region_model, texture, masker=masker, n_samples=400, random_state=0)
    assert kern.method == "shapley-kernel" and kern.segments.shape == (32, 32)
    np.testing.assert_allclose(kern.values.sum() + kern.base_values[0], kern.prediction[0],
                               atol=1e-10)
    top4 = set(np.argsort(-kern.values[0])[:4].tolist())
    assert top4 == {0, 1, 4, 5}
    small = _grid_labels(block=16)
    ex = ml.shapley(region_model, texture, masker=ml.ImageMasker(segmentation=small))
    assert ex.method == "shapley-exact"
    rep = ImageInput(texture, small)
    v = lambda S: region_model(rep.build(np.isin(np.arange(4), list(S))[None]))[0]  # noqa: E731
    np.testing.assert_allclose(ex.values[0], coalition_shapley(v, 4), atol=1e-12)


# ------------------------------------------------------------ bad input
def test_bad_media_input_gets_clear_errors(texture):
    with pytest.raises(ml.InvalidParameterError, match="no words"):
        ml.lime_text(keyword_classifier, " ... !! ", target=1)
    with pytest.raises(ml.InvalidParameterError, match="must be a str"):
        ml.lime_text(keyword_classifier, ["a list"], target=1)
    with pytest.raises(ml.InvalidParameterError, match="num_features=20 is larger than the"):
        ml.lime_text(keyword_classifier, TEXT, target=1, num_features=20)
    with pytest.raises(ml.InvalidParameterError, match="shape \\(height, width, channels\\)"):
        ml.lime_image(region_model, np.zeros((2, 8, 8, 3)), segmentation=np.zeros((8, 8), int))
    with pytest.raises(ml.InvalidParameterError, match="shape"):
        ml.lime_image(region_model, np.zeros(10))
    with pytest.raises(ml.InvalidParameterError, match="integer labels of shape \\(32, 32\\)"):
        ml.lime_image(region_model, texture, segmentation=np.zeros((8, 8), int))
    with pytest.raises(ml.ModelError, match="returned shape"):
        ml.lime_text(lambda T: np.zeros(len(T) + 1), TEXT, num_samples=50)
    # (m, k) scores without target= are every output, a list of columns those columns
    # (test_lime_outputs.py); the columns are checked against the first answer
    with pytest.raises(ml.InvalidParameterError, match="target=5 is out of range: the model "
                                                       "returns 2 outputs"):
        ml.lime_text(keyword_classifier, TEXT, num_samples=50, target=[0, 5])
    with pytest.raises(ml.InvalidParameterError, match="selects output columns, but the model "
                                                       "returns one output per row"):
        ml.lime_image(region_model, texture, segmentation=_grid_labels(), num_samples=20,
                      target=[0, 1])
    with pytest.raises(ml.InvalidParameterError, match="index of the output column"):
        ml.lime_text(keyword_classifier, TEXT, num_samples=50, target=[0, "x"])
    with pytest.raises(ml.ModelError, match="out of range"):
        ml.lime_text(keyword_classifier, TEXT, target=5, num_samples=50)
    with pytest.raises(ml.ModelError, match="NaN"):
        ml.lime_image(lambda X: np.full(len(X), np.nan), texture,
                      segmentation=_grid_labels(), num_samples=20)
    with pytest.raises(ml.ModelError, match="raised ValueError"):
        ml.lime_text(lambda T: int("x"), TEXT, num_samples=20)
    with pytest.raises(ml.InvalidParameterError, match="masker"):
        ml.shapley(region_model, texture, masker="audio")
    # permutation sampling now runs on texts (tests/test_attribution_games.py); trees do not
    with pytest.raises(ml.InvalidParameterError, match="tree"):
        ml.shapley(keyword_classifier, TEXT, target=1, algorithm="tree")


def test_missing_scikit_image_names_the_extra(texture, monkeypatch):
    import builtins

    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name.startswith("skimage"):
            raise ImportError("No module named 'skimage'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(ImportError, match=r"modellens\[image\]"):
        ml.lime_image(region_model, texture, segmentation="slic")
    # a label array needs no scikit-image
    ml.lime_image(region_model, texture, segmentation=_grid_labels(), num_samples=20)


# ------------------------------------------------------------ results
def test_media_results_round_trip_and_index(texture):
    attr = ml.lime_image(region_model, texture, segmentation=_grid_labels(), random_state=0,
                         num_samples=200)
    back = ml.Attributions.from_dict(json.loads(json.dumps(attr.to_dict())))
    np.testing.assert_array_equal(back.segments, attr.segments)
    np.testing.assert_array_equal(back.values, attr.values)
    np.testing.assert_array_equal(attr[0].segments, attr.segments)
    assert attr[:, ["0", "5"]].values.shape == (1, 2)
    ax = attr.plot.weights()
    assert "R\u00b2" in ax.get_title()
    with pytest.raises(ml.InvalidParameterError, match="no text"):
        attr.plot.text_html()
    t = ml.lime_text(keyword_classifier, TEXT, target=1, num_samples=200, random_state=0)
    with pytest.raises(ml.InvalidParameterError, match="no segments"):
        t.plot.image()
    back = ml.Attributions.from_dict(json.loads(json.dumps(t.to_dict())))
    assert back.plot.text_html() == t.plot.text_html()


def test_images_go_through_the_model_in_memory_capped_chunks(texture):
    from modellens.models import InputModel

    seen = []

    def f(images):
        seen.append(len(images))
        return region_model(images)

    ml.lime_image(f, texture, segmentation=_grid_labels(), num_samples=1000, random_state=0)
    # (the first: the whole image, which tells f's outputs)
    assert seen[0] == 1 and sum(seen[1:]) == 1000 and len(seen) <= 3
    assert InputModel(f, ["a"], bytes_per_input=2**24).max_chunk_rows == 4


@pytest.mark.parametrize("func", [ml.lime, ml.lime_text, ml.lime_image],
                         ids=lambda f: f.__name__)
def test_public_functions_document_references_and_run_their_examples(func):
    import doctest

    doc = func.__doc__
    assert "Examples\n" in doc and "References\n" in doc
    # lime's overloads: an Attributions, or for Dask data a DistributedAttributions
    assert func.__annotations__.get("return") in ("Attributions",
                                                  "Attributions | DistributedAttributions")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in doctest.DocTestFinder().find(func, func.__name__, globs={}):
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted >= 2
