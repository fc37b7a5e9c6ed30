"""``sample`` of ml.interactions is a cap: fewer rows than it are all used, quietly."""

import warnings

import numpy as np

import modellens as ml


def test_fewer_rows_than_sample_uses_all_without_a_warning():
    X = np.random.default_rng(0).uniform(-1, 1, size=(60, 3))
    f = lambda A: A[:, 0] * A[:, 1] + A[:, 2]  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        capped = ml.interactions(f, X, sample=500, random_state=0)
    whole = ml.interactions(f, X, sample=None, random_state=0)
    assert capped.sample_size == 60
    assert capped.pairwise.equals(whole.pairwise)
