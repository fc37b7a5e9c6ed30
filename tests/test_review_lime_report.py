"""Review of LIME, the report and the CLI: each test pins a bug found in review."""

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
