"""A scikit-learn text pipeline is a model of every text method, as its bound method is.

The models' text-input adapter (``models._inputs.text_function``) resolves a
fitted estimator that reads texts to its ``predict_proba`` (else
``decision_function``, else ``predict``), so ``ml.shapley``, ``ml.lime_text``,
``ml.deletion_curves`` and the report of texts take the pipeline itself; the
values are those of the bound method, exactly.
"""

import numpy as np
import pytest

import modellens as ml

TEXT = "a good film with a bad plot and a good cast"


@pytest.fixture(scope="module")
def pipe():
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    texts = ["good film", "bad film", "good plot", "bad plot", "a good cast", "a bad cast",
             "dull film", "fine plot"] * 3
    labels = ["pos" if "good" in t or "fine" in t else "neg" for t in texts]
    return make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(texts, labels)


def _same(a, b):
    assert a.feature_names == b.feature_names
    assert a.outputs == b.outputs
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.base_values, b.base_values)


def test_shapley_of_a_text_pipeline_is_that_of_its_predict_proba(pipe):
    _same(ml.shapley(pipe, TEXT), ml.shapley(pipe.predict_proba, TEXT))
    assert len(ml.shapley(pipe, TEXT).outputs) == 2  # every class (named as the bound method's)
    # each text of a list alike
    for a, b in zip(ml.shapley(pipe, ["good film", TEXT], algorithm="kernel", n_samples=60,
                               random_state=0),
                    ml.shapley(pipe.predict_proba, ["good film", TEXT], algorithm="kernel",
                               n_samples=60, random_state=0)):
        _same(a, b)


def test_response_method_chooses_the_pipelines_output(pipe):
    _same(ml.shapley(pipe, TEXT, response_method="decision_function"),
          ml.shapley(pipe.decision_function, TEXT))
    with pytest.raises(ml.InvalidParameterError, match="own scores"):
        ml.shapley(pipe.predict_proba, TEXT, response_method="predict_proba")


def test_lime_text_and_deletion_curves_take_the_pipeline(pipe):
    _same(ml.lime_text(pipe, TEXT, num_samples=300, random_state=0),
          ml.lime_text(pipe.predict_proba, TEXT, num_samples=300, random_state=0))
    attr = ml.shapley(pipe, TEXT)
    ours = ml.deletion_curves(pipe, attr, output="P(y = pos)")
    bound = ml.deletion_curves(pipe.predict_proba, attr, output="P(y = pos)")
    assert ours.deletion_area == bound.deletion_area
    assert ours.insertion_area == bound.insertion_area


def test_a_model_that_is_no_text_classifier_is_refused_naming_it():
    with pytest.raises(ml.InvalidParameterError, match="not a text classifier"):
        ml.shapley(object(), TEXT)
    from sklearn.cluster import KMeans

    with pytest.raises(ml.InvalidParameterError, match="has no decision_function"):
        ml.shapley(KMeans(n_clusters=2), TEXT, response_method="decision_function")
