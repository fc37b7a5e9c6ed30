"""The report branches on typed errors and public results, not on messages or the model's
own methods (issue 28)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import modellens as ml

SMALL = dict(sample=150, n_explain=6, n_background=10, grid=5, progress=False)


def _data(seed=0, n=200):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    return X, X["a"] - 2 * X["b"] + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("call", [
    lambda m, X: ml.shapley(m, X.iloc[:2], background=X, algorithm="tree"),
    lambda m, X: ml.interactions(m, X, method="tree"),
    lambda m, X: ml.pdp(m, X, features="a", method="tree")])
def test_the_tree_methods_refuse_with_a_typed_error_and_its_reason(call):
    X, y = _data()
    linear = LinearRegression().fit(X, y)
    with pytest.raises(ml.NotATreeModelError) as caught:
        call(linear, X)
    assert caught.value.reason is None  # not a tree model at all
    assert isinstance(caught.value, ml.InvalidParameterError)
    piped = make_pipeline(StandardScaler(), HistGradientBoostingRegressor(max_iter=5)).fit(X, y)
    with pytest.raises(ml.NotATreeModelError) as caught:
        call(piped, X)
    assert "Pipeline" in caught.value.reason and "Supported" not in caught.value.reason
    piped_linear = make_pipeline(StandardScaler(), LinearRegression()).fit(X, y)
    with pytest.raises(ml.NotATreeModelError) as caught:
        call(piped_linear, X)
    assert caught.value.reason is None


def test_the_shapley_section_says_why_trees_cannot_serve_and_nothing_for_other_models():
    X, y = _data(1)
    piped = make_pipeline(StandardScaler(), HistGradientBoostingRegressor(max_iter=5)).fit(X, y)
    notes = ml.report(piped, X, sections=["shapley"], shapley_budget=100,
                      **SMALL).sections["shapley"].notes
    assert any(n.startswith("TreeSHAP does not apply to this model (a Pipeline: its "
                            "preprocessing") for n in notes), notes
    linear = LinearRegression().fit(X, y)
    notes = ml.report(linear, X, sections=["shapley"], shapley_budget=100,
                      **SMALL).sections["shapley"].notes
    assert not any("TreeSHAP" in n for n in notes), notes


class _NoPredict(LogisticRegression):
    """A classifier whose own predict must not be called: the report reads probabilities."""

    def predict(self, X):
        raise AssertionError("the report called the model's predict")


def test_the_multiclass_confusion_matrix_reads_the_public_predictions():
    from sklearn.metrics import confusion_matrix

    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(240, 3)), columns=["a", "b", "c"])
    y = np.array(["cat", "dog", "eel"])[np.digitize(X.a + X.c + 0.3 * rng.normal(size=240),
                                                    [-0.6, 0.6])]
    model = _NoPredict().fit(X, y)
    q = ml.report(model, X, y, target="dog", sections=["quality"],
                  **SMALL).sections["quality"].data
    labels = LogisticRegression.predict(model, X)  # scikit-learn's most probable class
    np.testing.assert_array_equal(q["confusion"], confusion_matrix(y, labels))
    assert q["metrics"]["overall_accuracy"] == np.mean(labels == y)
