"""Outputs are named by the model's own names wherever it has them (issue #42).

A text or image ``predict_fn`` returning a DataFrame names its outputs by its
columns, a classifier's bound ``predict_proba`` by its classes, and DALE with
a user's ``gradient=`` by the model's answer, as every other path does.
"""

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import modellens as ml

TEXTS = ["good movie", "bad movie", "great film", "awful film", "fine", "terrible plot",
         "good plot", "meh"] * 5
LABELS = ["pos", "neg", "pos", "neg", "mid", "neg", "pos", "mid"] * 5
PIPE = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(TEXTS, LABELS)


def test_a_bound_predict_proba_names_outputs_by_its_classes():
    words = ml.lime_text(PIPE.predict_proba, "good movie bad plot", num_samples=100,
                         random_state=0)
    assert words.outputs == [f"P(y = {c})" for c in PIPE.classes_]
    # the values are those of the columns, in the classes' order
    one = ml.lime_text(PIPE.predict_proba, "good movie bad plot", num_samples=100,
                       random_state=0, target=2)
    assert one.output == "P(y = pos)"
    assert np.allclose(words.for_output(2).values, one.values, rtol=0, atol=1e-12)


def test_a_text_predict_fn_returning_a_frame_names_outputs_by_its_columns():
    def predict_fn(texts):
        return pd.DataFrame(PIPE.predict_proba(texts), columns=["no", "maybe", "yes"])
    words = ml.lime_text(predict_fn, "good movie bad plot", num_samples=100, random_state=0)
    assert words.outputs == ["no", "maybe", "yes"]


def test_an_image_predict_fn_returning_a_frame_names_outputs_by_its_columns():
    image = np.random.default_rng(0).uniform(size=(8, 8, 3))
    segments = np.repeat(np.arange(4), 16).reshape(8, 8)

    def predict_fn(images):
        m = np.asarray(images).reshape(len(images), -1).mean(axis=1)
        return pd.DataFrame({"bright": m, "dark": 1 - m})
    pixels = ml.lime_image(predict_fn, image, segmentation=segments, num_samples=60,
                           random_state=0)
    assert pixels.outputs == ["bright", "dark"]


def test_dale_with_a_user_gradient_names_outputs_by_the_models_answer():
    X = pd.DataFrame(np.random.default_rng(0).normal(size=(100, 2)), columns=["a", "b"])

    def model(D):
        return pd.DataFrame({"up": 2 * D["a"].to_numpy(), "down": -D["b"].to_numpy()})

    def gradient(D):
        n = len(D)
        up = np.column_stack([np.full(n, 2.0), np.zeros(n)])
        down = np.column_stack([np.zeros(n), -np.ones(n)])
        return np.stack([up, down], axis=1)  # (n, outputs, features)

    with_gradient = ml.dale(model, X, gradient=gradient)
    assert with_gradient.outputs == ["up", "down"]
    assert with_gradient.outputs == ml.dale(model, X).outputs
    assert np.allclose(with_gradient.for_output("up")["a"].values[-1]
                       - with_gradient.for_output("up")["a"].values[0],
                       2 * (with_gradient["a"].grid[-1] - with_gradient["a"].grid[0]))
