"""Numbers on pictures read true: a probability of 0.99996 is not "1"."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

import modellens as ml


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_a_prediction_next_to_one_keeps_its_digits():
    X = np.array([[4.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    f = lambda A: 1 / (1 + np.exp(-2.5 * A[:, 0] - 0.1 * A[:, 1]))  # f([4, 0]) = 0.99995...
    attr = ml.shapley(f, X[:1], background=X[1:], algorithm="exact")
    pred = f(X[:1])[0]
    assert 0.9999 < pred < 1
    title = attr.plot.waterfall(0).get_title()
    assert "f(x) = 1," not in title and f"{pred:.5g}" in title
    texts = [t.get_text() for t in attr.plot.force(0).texts]
    assert f"f(x) = {pred:.5g}" in texts
