"""Review of LIME, the report and the CLI: each test pins a bug found in review."""

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

