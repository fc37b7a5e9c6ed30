"""The local attributions name one asked column of a function by its DataFrame's column."""

import numpy as np
import pandas as pd

import modellens as ml


def _named(Z):
    return pd.DataFrame({"p": Z[:, 0] * Z[:, 1], "q": 2 * Z[:, 2] + Z[:, 0]})


def _unnamed(Z):
    return np.column_stack([Z[:, 0] * Z[:, 1], 2 * Z[:, 2] + Z[:, 0]])


def test_shapley_and_lime_of_target_one_are_named_by_the_column():
    X = np.random.default_rng(0).normal(size=(100, 3))
    calls = [
        lambda f, t: ml.shapley(f, X[:3], background=X[:30], target=t),
        lambda f, t: ml.shapley(f, X[:3], background=X[:30], algorithm="permutation",
                                n_permutations=16, target=t, random_state=0),
        lambda f, t: ml.lime(f, X[:2], training_data=X, num_samples=200, target=t,
                             random_state=0),
    ]
    for call in calls:
        named, plain = call(_named, 1), call(_unnamed, 1)
        assert named.output == "q" and plain.output == "f(x)[1]"
        assert set(named.to_frame().columns) == set(plain.to_frame().columns)
        np.testing.assert_array_equal(named.values, plain.values)
