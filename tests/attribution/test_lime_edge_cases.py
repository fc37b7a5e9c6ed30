"""LIME at its edges: constant columns, unseen levels, image fills and colours, ridge penalties, errors that name training_data."""

import warnings

import numpy as np
import pytest

import modellens as ml


@pytest.fixture(scope="module")
def train():
    return np.random.default_rng(0).normal(size=(500, 3))


def test_lime_continuous_keeps_a_constant_column_constant(train):
    # a column that never varies in training_data has sigma = 0: its samples are the constant
    # (N(mu, 0)), so the model is never asked about values the data never takes and the
    # feature gets no weight; before, it was sampled with a standard deviation of 1
    t = train.copy()
    t[:, 1] = 5.0
    seen = []

    def f(A):
        seen.append(A[:, 1].copy())
        return A[:, 0] + A[:, 1]

    attr = ml.lime(f, t[:3], training_data=t, discretize=None, random_state=0,
                   num_samples=500)
    np.testing.assert_array_equal(np.concatenate(seen), 5.0)
    assert np.all(attr.values[:, 1] == 0)
    np.testing.assert_allclose(attr.values[:, 0], t[:, 0].std(), rtol=0.02)


def test_lime_warns_when_the_rows_level_never_occurs_in_training_data():
    # LIME draws levels with their training frequencies: a level absent from training_data is
    # never drawn, so "is this level" is 1 on the explained row alone and its weight is the
    # surrogate's residual there, not an effect; say so
    import pandas as pd

    rng = np.random.default_rng(0)
    train = pd.DataFrame({"a": rng.normal(size=200), "c": rng.choice(["x", "y"], 200)})
    row = pd.DataFrame({"a": [0.1], "c": ["w"]})

    def f(D):
        return D["a"].to_numpy() + (D["c"].to_numpy() == "y")

    with pytest.warns(ml.ModellensWarning, match=r"'c'.*'w'.*never occurs in training_data"):
        ml.lime(f, row, training_data=train, num_samples=200, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ml.ModellensWarning)
        ml.lime(f, train.iloc[:3], training_data=train, num_samples=200, random_state=0)


def test_lime_image_mean_fill_of_an_integer_image_is_rounded_not_truncated():
    # a superpixel of a uint8 image hidden with its mean colour: the mean 0.75 is 1, not 0
    # (truncation darkened every hidden superpixel by half a level on average)
    image = np.zeros((4, 4, 1), dtype=np.uint8)
    image[:2, :2, 0] = [[0, 1], [1, 1]]
    image[2:, :, 0] = 200
    labels = np.repeat([[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2], [2, 2, 2, 2]], 1, axis=0)
    seen = []

    def f(images):
        seen.append(images.copy())
        return images.astype(float).mean(axis=(1, 2, 3))

    ml.lime_image(f, image, segmentation=labels, num_samples=50, random_state=0)
    images = np.concatenate(seen)
    hidden = images[:, 0, 0, 0] != 0  # the top-left superpixel filled (its pixel 0,0 was 0)
    assert hidden.any()
    np.testing.assert_array_equal(images[hidden, :2, :2, 0], 1)


def test_lime_image_hide_color_of_the_wrong_length_is_a_clear_error():
    image = np.random.default_rng(0).random((8, 8, 3))
    labels = np.arange(64).reshape(8, 8) // 16
    with pytest.raises(ml.InvalidParameterError, match="hide_color"):
        ml.lime_image(lambda m: m.mean(axis=(1, 2, 3)), image, segmentation=labels,
                      hide_color=(1.0, 0.0), num_samples=20)
    # -1 on a uint8 image would wrap round to 255, a white fill instead of a black one
    with pytest.raises(ml.InvalidParameterError, match="does not fit the image's dtype uint8"):
        ml.lime_image(lambda m: m.mean(axis=(1, 2, 3)), (image * 255).astype(np.uint8),
                      segmentation=labels, hide_color=-1, num_samples=20)


def test_lime_errors_about_training_data_name_training_data():
    # lime has no "background" argument: its errors must name the one the user passed
    import pandas as pd

    X = pd.DataFrame(np.random.default_rng(0).normal(size=(50, 3)), columns=list("abc"))
    f = lambda D: np.asarray(D)[:, 0]  # noqa: E731
    with pytest.raises(ml.InvalidParameterError, match=r"^training_data columns"):
        ml.lime(f, X.iloc[:2], training_data=X.rename(columns={"c": "d"}), num_samples=50)
    with pytest.raises(ml.InvalidParameterError, match=r"^training_data has no rows"):
        ml.lime(f, X.iloc[:2], training_data=X.iloc[:0], num_samples=50)
    with pytest.raises(ml.InvalidParameterError, match=r"^training_data has 2 columns"):
        ml.lime(f, X.to_numpy()[:2].astype(object), training_data=X.to_numpy()[:, :2],
                num_samples=50)


def test_waterfall_refuses_continuous_lime_weights(train):
    # with discretize=None a LIME weight is a slope per standard deviation, not a part of the
    # prediction: stacking the slopes from the intercept ends nowhere near f(x)
    f = lambda A: A @ [2.0, -1.0, 0.5]  # noqa: E731
    attr = ml.lime(f, train[:2] + 3, training_data=train, discretize=None, random_state=0,
                   num_samples=300)
    assert abs(attr.intercept[0] + attr.values[0].sum() - attr.prediction[0]) > 1
    for draw in (attr.plot.waterfall, attr.plot.force):
        with pytest.raises(ml.InvalidParameterError, match=r"plot\.weights"):
            draw(0)
    attr.plot.weights(0)
    binned = ml.lime(f, train[:2], training_data=train, random_state=0, num_samples=300)
    binned.plot.waterfall(0)  # z0 = 1: the weights add up to the local prediction


def test_text_and_image_plots_do_not_highlight_rounding_noise():
    # a model that ignores the words gives weights of ~1e-32 (rounding): before, the colour
    # scale was the largest of them, so noise was drawn as strongly as a real effect
    import re

    attr = ml.lime_text(lambda t: np.full(len(t), 0.7), "a dull and long film",
                        random_state=0, num_samples=200)
    assert np.abs(attr.values).max() < 1e-12
    alphas = [float(a) for a in re.findall(r"rgba\(\d+,\d+,\d+,([\d.]+)\)",
                                           attr.plot.text_html())]
    assert alphas and max(alphas) == 0
    image = np.random.default_rng(0).random((8, 8, 3))
    labels = np.arange(64).reshape(8, 8) // 16
    flat = ml.lime_image(lambda m: np.full(len(m), 2.0), image, segmentation=labels,
                         random_state=0, num_samples=100)
    assert "top 0 up, blue: top 0 down" in flat.plot.image().get_title()


def test_lime_stability_default_top_k_fits_two_features(train):
    # the default stability_top_k (3) must not make stability= fail on data with 2 features
    f = lambda A: A[:, 0] - A[:, 1]  # noqa: E731
    attr = ml.lime(f, train[:2, :2], training_data=train[:, :2], stability=3, random_state=0,
                   num_samples=200)
    assert attr.surrogate.stability["top_k"] == 2
    with pytest.raises(ml.InvalidParameterError, match="stability_top_k=3"):
        ml.lime(f, train[:2, :2], training_data=train[:, :2], stability=3, stability_top_k=3,
                num_samples=200)


def test_lime_warns_when_the_ridge_penalty_swamps_the_kernel_weights(train):
    # a kernel so narrow (or a text so short) that the samples' total weight is below the
    # ridge penalty of 1 shrinks every weight toward 0: f = 1.1 * [word kept] got 0.14
    f = lambda t: np.array([1.1 * ("good" in s.split()) for s in t])  # noqa: E731
    with pytest.warns(ml.ModellensWarning, match="ridge penalty"):
        ml.lime_text(f, "good", random_state=0, num_samples=500)
    g = lambda A: A @ [1.0, 2.0, 3.0]  # noqa: E731
    with pytest.warns(ml.ModellensWarning, match="kernel_width"):
        ml.lime(g, train[:2], training_data=train, kernel_width=0.2, random_state=0,
                num_samples=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ml.ModellensWarning)
        ml.lime(g, train[:2], training_data=train, random_state=0, num_samples=2000)
        ml.lime(g, train[:2], training_data=train, discretize=None, random_state=0,
                num_samples=200)
        ml.lime_text(f, "a good film", random_state=0, num_samples=500)


def test_lime_series_row_with_an_extra_column_is_a_clear_error():
    # df.iloc[0] of a frame that still holds the target: a KeyError before
    import pandas as pd

    df = pd.DataFrame(np.random.default_rng(0).normal(size=(60, 3)), columns=list("abc"))
    with pytest.raises(ml.InvalidParameterError,
                       match=r"index \['a', 'b', 'c', 'y'\] is not the feature names"):
        ml.lime(lambda D: np.asarray(D)[:, 0], df.assign(y=1.0).iloc[0], training_data=df,
                num_samples=50)


@pytest.mark.filterwarnings("ignore::modellens.ModellensWarning")  # few superpixels
@pytest.mark.parametrize("method", ["slic", "quickshift"])
def test_rgba_image_is_segmented_on_its_colours_not_its_red_channel(method):
    pytest.importorskip("skimage")
    rng = np.random.default_rng(0)
    rgb = np.zeros((24, 24, 3))
    rgb[:, :, 0] = 0.5  # red is flat: the picture is in green and blue
    rgb[:12, :, 1] = 1.0
    rgb[:, 12:, 2] = 1.0
    rgb += 0.02 * rng.random(rgb.shape)
    rgba = np.concatenate([rgb, np.ones((24, 24, 1))], axis=2)
    f = lambda m: m[:, :12, :12, 1].mean(axis=(1, 2))  # noqa: E731
    a = ml.lime_image(f, rgba, segmentation=method, random_state=0, num_samples=20)
    b = ml.lime_image(f, rgb, segmentation=method, random_state=0, num_samples=20)
    np.testing.assert_array_equal(a.segments, b.segments)


@pytest.mark.parametrize("selection", ["forward", "none"])
def test_lime_of_huge_predictions_is_the_scaled_explanation(train, selection):
    # R^2 does not change with the scale of the predictions, and the ridge weights scale
    # with them; before, the sums of squares of predictions beyond ~1e154 overflowed:
    # every forward-selection score was NaN (an IndexError from no chosen feature) and
    # the reported scores were NaN.  A power of two scales exactly.
    scale = 2.0 ** 530  # about 3.5e159

    def f(A):
        return A[:, 0] + 0.3 * A[:, 1] + 0.1 * A[:, 2] ** 2

    kw = dict(training_data=train, feature_selection=selection, num_features=2,
              random_state=0, num_samples=400)
    plain = ml.lime(f, train[:3], **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow on the way
        huge = ml.lime(lambda A: scale * f(A), train[:3], **kw)
    np.testing.assert_allclose(huge.values / scale, plain.values, rtol=1e-12, atol=0)
    for name in ("score", "score_holdout"):
        got = getattr(huge.surrogate, name)
        assert np.isfinite(got).all(), name
        np.testing.assert_allclose(got, getattr(plain.surrogate, name), rtol=1e-12)
