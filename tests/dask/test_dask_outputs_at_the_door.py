"""On a cluster, a function of unknown outputs tells them once, at the door, on the client.

The model answers one row when it is wrapped (``Model._probe``), before it is
shipped: the workers receive a model that knows its outputs, every chunk is
planned for all of them, and each planned row is asked once.
"""

import numpy as np

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
    # 2 features x 4 points x 300 rows, and 2 rows x 200 samples, each asked once, after
    # the one row the door asked on the client (not a method's row: not in n_model_rows)
    assert asked == 2400 + 1
    assert row_counter.rows == 400 + 1 and lime.diagnostics["n_model_rows"] == 400
    reference = ml.pdp(_outputs, X, [0, 2], grid=4, target="all", chunk_size=100)
    assert every.outputs == reference.outputs == ["f(x)[0]", "f(x)[1]", "f(x)[2]"]
    for key in reference:
        np.testing.assert_array_equal(every[key].values, reference[key].values)
    here = ml.lime(_outputs, X[:2], training_data=X, num_samples=200, random_state=0)
    np.testing.assert_allclose(lime.values, here.values, rtol=0, atol=1e-12)
