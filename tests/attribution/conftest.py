"""Three-class models of the iris data, shared by the tests of every output at once."""

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

#: the iris classes, as labels (the tests name them)
IRIS_CLASSES = ["setosa", "versicolor", "virginica"]


@pytest.fixture(scope="module")
def iris():
    """The iris frame and its labels (strings)."""
    X, y = load_iris(return_X_y=True, as_frame=True)
    return X, np.asarray(IRIS_CLASSES, dtype=object)[y]


@pytest.fixture(scope="module")
def hgb(iris):
    X, y = iris
    return HistGradientBoostingClassifier(max_iter=15, max_depth=3, random_state=0).fit(X, y)


@pytest.fixture(scope="module")
def logistic(iris):
    X, y = iris
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(X, y)
