"""A model that tells its outputs by answering is asked each row once.

A function (or a torch module) asked with ``target=None`` tells how many
outputs it has only with its first answer.  That answer is kept and served
when the pass that plans every output asks the same rows again, so every
method costs the model the rows of a model whose outputs were known, with
the same numbers.  The reference is the same request with ``target="all"``,
whose outputs are known before the run: its model is probed on one data row
first (``seen[0] == 1``), then asked exactly the calls of the plan.
"""

import numpy as np
import pytest

import modellens as ml

W = np.array([[1.0, -0.5, 0.2], [0.3, 0.8, -1.0], [-0.7, 0.1, 0.4], [0.2, 0.0, 0.9]])


def _outputs(A):
    """Three smooth outputs of four features (not linear: the methods see curvature)."""
    A = np.asarray(A, dtype=float)
    return np.column_stack([np.tanh(A @ W[:, 0]), A[:, 0] * A[:, 1] + A[:, 2],
                            np.sin(A @ W[:, 2]) + A[:, 3] ** 2])


class Counting:
    """A function of three outputs that records the rows of every call."""

    def __init__(self):
        self.seen = []

    def __call__(self, A):
        self.seen.append(len(A))
        return _outputs(A)


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(0).normal(size=(120, 4))


def _values(result):
    """Every array of numbers a result holds, by name (effects, attributions, scores)."""
    if isinstance(result, ml.Attributions):
        out = {"values": result.values, "base": np.asarray(result.base_values)}
        if result.std is not None:
            out["std"] = result.std
        return out
    if isinstance(result, ml.Interactions):
        return {"overall": np.asarray(result.overall, dtype=float),
                "unnormalized": np.asarray(result.overall_unnormalized, dtype=float)}
    if hasattr(result, "importances"):  # Importance
        return {"importances": np.asarray(result.importances)}
    return {str(key): result[key].values for key in result}


def _same_as_all(call, X, *, once=None, **kw):
    """``call`` with target=None costs the model the calls of target="all", same numbers."""
    told, known = Counting(), Counting()
    every = call(told, X, **kw)
    reference = call(known, X, target="all", **kw)
    assert known.seen[0] == 1  # the probe of target="all" (not one of the plan's rows)
    # (in threads the calls come in either order)
    assert sorted(told.seen) == sorted(known.seen[1:]), "a row of the plan was asked twice"
    if once is not None:
        assert sum(told.seen) == once
    a, b = _values(every), _values(reference)
    assert a.keys() == b.keys()
    for key in a:
        assert np.shape(a[key])[-1] == 3
        np.testing.assert_allclose(a[key], b[key], rtol=0, atol=1e-12, err_msg=key)
    return every, told


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_effects_ask_each_row_once(X, n_jobs):
    # chunks of 100 rows: several chunks, and with n_jobs=2 two answer at once (both kept)
    kw = dict(chunk_size=100, n_jobs=n_jobs)
    _same_as_all(ml.pdp, X, features=[0, 2], grid=6, ice=True,
                 once=len(X) * 12, **kw)  # 2 features, 6 points, every row
    _same_as_all(ml.ale, X, features=[0, 3], bins=5, **kw)
    _same_as_all(ml.mplot, X, features=[1], grid=5, **kw)
    # DALE's finite differences ask the model through predict
    _same_as_all(ml.dale, X, features=[0, 1], bins=5, gradient="finite_differences", **kw)


def test_dale_gradient_callable_is_asked_each_row_once(X):
    seen = []

    def grad(A):  # (m, d, 3): each output's gradient, by central differences of _outputs
        seen.append(len(A))
        h, out = 1e-6, np.empty(A.shape + (3,))
        for j in range(A.shape[1]):
            up, down = A.copy(), A.copy()
            up[:, j] += h
            down[:, j] -= h
            out[:, j] = (_outputs(up) - _outputs(down)) / (2 * h)
        return out
    every = ml.dale(_outputs, X, [0, 2], bins=5, gradient=grad, chunk_size=50)
    told, seen[:] = list(seen), []
    assert sum(told) == len(X)  # the first chunk's gradient is kept, not asked again
    for c in range(3):
        single = ml.dale(_outputs, X, [0, 2], bins=5, target=c, chunk_size=50,
                         gradient=lambda A, c=c: grad(A)[..., c])
        for key in single:
            np.testing.assert_allclose(every[key].for_output(c).values, single[key].values,
                                       rtol=0, atol=1e-12)


@pytest.mark.parametrize("algorithm, budget", [("exact", {}),
                                               ("permutation", dict(n_permutations=16)),
                                               ("kernel", dict(n_samples=40))])
def test_shapley_asks_each_row_once(X, algorithm, budget):
    every, told = _same_as_all(ml.shapley, X[:3], background=X[10:30], algorithm=algorithm,
                               random_state=1, chunk_size=200, **budget)
    assert every.diagnostics["n_model_rows"] == sum(told.seen)


def test_shapley_in_threads_asks_each_row_once(X):
    _same_as_all(ml.shapley, X[:4], background=X[10:30], algorithm="exact", chunk_size=150,
                 n_jobs=2)


def test_interactions_ask_each_row_once(X):
    # (ml.importance explains one output of a function: it never learns them by answering)
    every, told = _same_as_all(ml.interactions, X, features=[0, 1, 2], sample=60,
                               random_state=0, chunk_size=500)
    assert every.n_model_rows == sum(told.seen)


def test_lime_asks_each_row_once(X):
    every, told = _same_as_all(ml.lime, X[:2], training_data=X, num_samples=300,
                               random_state=0, chunk_size=250)
    assert every.diagnostics["n_model_rows"] == sum(told.seen) == 600


def test_lime_text_keeps_its_first_answer():
    text = "a great movie with a dull plot and fine acting"
    told = []

    def scores(texts):
        told.append(len(texts))
        return np.column_stack([[t.count("a") for t in texts], [len(t) for t in texts]])
    ml.lime_text(scores, text, num_samples=300, chunk_size=100, random_state=0)
    assert told == [100, 100, 100]


def test_a_model_that_writes_into_its_rows_is_served_its_own_answer(X):
    # the kept rows are those asked, copied before the call: a model that scribbles on
    # its input is still served the answer of the rows the plan asked
    seen = []

    def scribbles(A):
        seen.append(len(A))
        out = _outputs(A)
        A[:] = 0.0
        return out
    every = ml.pdp(scribbles, X, [0], grid=4, chunk_size=100)
    assert sum(seen) == len(X) * 4
    reference = ml.pdp(_outputs, X, [0], grid=4, chunk_size=100, target="all")
    np.testing.assert_allclose(every["x0"].values, reference["x0"].values, rtol=0, atol=1e-12)


torch = pytest.importorskip("torch")


class _Net(torch.nn.Module):
    """A small network of three outputs that records the rows of every forward pass."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.layers = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(),
                                          torch.nn.Linear(8, 3)).double()
        self.seen = []

    def forward(self, x):
        self.seen.append(int(x.shape[0]))
        return self.layers(x)


@pytest.mark.parametrize("method, kw", [
    (ml.pdp, dict(features=[0, 1], grid=5)),
    (ml.ale, dict(features=[2], bins=4)),
    (ml.dale, dict(features=[0, 3], bins=4)),  # autograd: the gradient path
])
def test_torch_module_is_asked_each_row_once(X, method, kw):
    told, known = _Net(), _Net()
    every = method(told, X, chunk_size=100, **kw)
    reference = method(known, X, chunk_size=100, target="all", **kw)
    assert known.seen[0] == 1 and told.seen == known.seen[1:]
    assert every.outputs == reference.outputs == ["output[0]", "output[1]", "output[2]"]
    for key in reference:
        np.testing.assert_allclose(every[key].values, reference[key].values, rtol=0, atol=1e-12)


def test_kept_answers_serve_equal_rows_cut_anywhere():
    # the pass that plans every output may cut its chunks elsewhere (its byte cap counts
    # the k answers of a row): a kept block serves its leading rows and keeps the rest,
    # rows with NaN included, and only rows equal to the kept ones
    from modellens.data import Dataset
    from modellens.models import Model, OutputsFound

    rows = np.random.default_rng(1).normal(size=(100, 4))
    rows[5, 2] = np.nan
    model = Counting()
    seam = Model(lambda A: np.nan_to_num(model(A)), Dataset.from_data(rows), several=True)
    with pytest.raises(OutputsFound) as found:
        seam.predict(rows)
    assert found.value.width == 3 and model.seen == [100]
    seam.settle_outputs(found.value.width, answers=found.value.answers)
    expected = np.nan_to_num(_outputs(rows))
    np.testing.assert_array_equal(seam.predict(rows[:30]), expected[:30])
    assert model.seen == [100]  # served
    other = rows[30:130] + 1.0  # not the kept rows: asked
    np.testing.assert_array_equal(seam.predict(other), np.nan_to_num(_outputs(other)))
    assert model.seen == [100, 70]
    more = np.vstack([rows[30:], rows[:20] * 2])  # 70 kept rows, then 20 new ones
    np.testing.assert_array_equal(seam.predict(more), np.nan_to_num(_outputs(more)))
    assert model.seen == [100, 70, 20] and seam.n_rows == 190
    seam.forget_answers()
    seam.predict(rows[:10])
    assert model.seen == [100, 70, 20, 10]
