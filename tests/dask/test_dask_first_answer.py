"""On a cluster, a function that tells its outputs by answering is asked each row once.

The first chunks answer on the workers; their answers come back to the
client, which keeps them and serves them when the pass that plans every
output asks the same rows again (``engine.outputs_from_answer``).
"""

import numpy as np
import pytest

import modellens as ml


def _outputs(A):
    return np.column_stack([A[:, 0] * A[:, 1], np.sin(A[:, 2]), A[:, 0] - A[:, 2] ** 2])


def test_a_function_is_asked_each_row_once_on_a_cluster(client, row_counter):
    X = np.random.default_rng(3).normal(size=(300, 3))

    def f(A):
        row_counter.note(A)
        return _outputs(A)

    with ml.config(client=client, chunk_size=100):
        every = ml.pdp(f, X, [0, 2], grid=4)
        asked = row_counter.rows
        row_counter.reset()
        lime = ml.lime(f, X[:2], training_data=X, num_samples=200, random_state=0)
    # 2 features x 4 points x 300 rows, and 2 rows x 200 samples: each asked once, though
    # several chunks were on the workers when the first answer told the outputs
    assert asked == 2400
    assert row_counter.rows == 400 == lime.diagnostics["n_model_rows"]
    reference = ml.pdp(_outputs, X, [0, 2], grid=4, target="all", chunk_size=100)
    assert every.outputs == reference.outputs == ["f(x)[0]", "f(x)[1]", "f(x)[2]"]
    for key in reference:
        np.testing.assert_array_equal(every[key].values, reference[key].values)
    here = ml.lime(_outputs, X[:2], training_data=X, num_samples=200, random_state=0)
    np.testing.assert_allclose(lime.values, here.values, rtol=0, atol=1e-12)
