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


def test_a_categorical_beeswarm_has_no_low_high_scale():
    import pandas as pd
    from matplotlib.colors import to_hex

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"colour": pd.Categorical(rng.choice(["red", "green", "blue"], 40))})
    f = lambda df: (df["colour"] == "red").to_numpy(float)  # noqa: E731
    attr = ml.shapley(f, X, background=X, algorithm="exact")
    ax = attr.plot.beeswarm()
    # no colour bar reads "low" / "high" for levels without an order
    assert len(ax.figure.axes) == 1
    # one colour per level: the dots of a level share theirs
    colours = [to_hex(c) for c in ax.collections[0].get_facecolors()]
    levels = X["colour"].astype(str).to_numpy()
    for level in set(levels):
        assert len({c for c, lv in zip(colours, levels) if lv == level}) == 1
    assert len(set(colours)) == 3
