"""The number of outputs is learnt once, at the door, by one mechanism.

A model whose classes and ``target=`` do not tell its outputs (a function, a
torch module, a regressor that may return several) answers ONE row when it is
wrapped (:meth:`modellens.models.Model._probe`): the first data row, or for a
text or an image the whole input.  Every plan is then made for all the
outputs, and every chunk sized for them, before the first planned model row;
no exception travels through the engine and no answer is kept to be served
again.  The cost is that one row per request (one call), not counted in
``n_rows``: ``target=None`` now asks the model exactly what ``target="all"``
asks (which probed one row before this design as well), and every planned row
once.
"""

import pathlib

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
    """``call`` with target=None costs the model the calls of target="all", same numbers.

    Both probe one data row first (the door), then ask each planned row once.
    """
    told, known = Counting(), Counting()
    every = call(told, X, **kw)
    reference = call(known, X, target="all", **kw)
    assert told.seen[0] == known.seen[0] == 1  # the probe, before any planned chunk
    # (in threads the planned calls come in either order)
    assert sorted(told.seen[1:]) == sorted(known.seen[1:]), "a row of the plan was asked twice"
    if once is not None:
        assert sum(told.seen) == once + 1  # the planned rows, and the probe's one
    a, b = _values(every), _values(reference)
    assert a.keys() == b.keys()
    for key in a:
        assert np.shape(a[key])[-1] == 3
        np.testing.assert_allclose(a[key], b[key], rtol=0, atol=1e-12, err_msg=key)
    return every, told


def test_no_exception_travels_through_the_engine():
    # one mechanism: the probe when the model is wrapped; the exception the model raised on
    # its first answer, and the engine's retry around it, are gone
    src = pathlib.Path(ml.__file__).parent
    for path in sorted(src.rglob("*.py")):
        text = path.read_text()
        for name in ("OutputsFound", "outputs_from_answer", "settle_outputs", "undetermined"):
            assert name not in text, f"{path.relative_to(src)} still names {name}"
    from modellens import engine, models

    assert not hasattr(models, "OutputsFound") and not hasattr(engine, "outputs_from_answer")


def test_outputs_are_asked_once_before_any_plan_chunk(X, monkeypatch):
    # the door asks one row; the engine then runs ONE pass whose chunk sizers count the
    # three outputs of every row from the first chunk (a byte cap of 4 inputs + 3 answers)
    from modellens.engine import _run

    f = Counting()
    passes, widths = [], []
    evaluate, sizer = _run.evaluate, _run.ChunkSizer

    def spying_evaluate(model, segments, *args, **kw):
        passes.append(list(f.seen))  # what the model was asked before this pass
        return evaluate(model, segments, *args, **kw)

    class SpyingSizer(sizer):
        def __init__(self, width, *args, **kw):
            widths.append(width)
            super().__init__(width, *args, **kw)

    monkeypatch.setattr(_run, "evaluate", spying_evaluate)
    monkeypatch.setattr(_run, "ChunkSizer", SpyingSizer)
    effects = ml.pdp(f, X, [0, 2], grid=5, chunk_size=None)
    assert effects.outputs == ["f(x)[0]", "f(x)[1]", "f(x)[2]"]
    assert passes == [[1]], "the outputs must be known, by one row, before the one pass"
    assert widths and set(widths) == {X.shape[1] + 3}
    assert sum(f.seen) == 1 + len(X) * 10  # the probe, then 2 features x 5 points x 120 rows


def test_a_model_of_known_outputs_is_not_probed(X):
    # classes (or target= a column of a regressor's predict) tell the outputs: no probe
    from sklearn.linear_model import LogisticRegression

    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    clf = LogisticRegression().fit(X, y)
    rows = []

    class Spy:
        classes_ = clf.classes_

        def predict_proba(self, A):
            rows.append(len(A))
            return clf.predict_proba(A)

    ml.pdp(Spy(), X, [0], grid=4, chunk_size=1000)
    assert rows == [len(X) * 4]


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_effects_ask_each_row_once(X, n_jobs):
    # chunks of 100 rows: several chunks, and with n_jobs=2 two answer at once
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
    model = Counting()
    every = ml.dale(model, X, [0, 2], bins=5, gradient=grad, chunk_size=50)
    # the model told its three outputs by one row; the gradient was asked each row once
    assert model.seen == [1] and sum(seen) == len(X)
    assert every.outputs == ["f(x)[0]", "f(x)[1]", "f(x)[2]"]
    for c in range(3):
        single = ml.dale(_outputs, X, [0, 2], bins=5, target=c, chunk_size=50,
                         gradient=lambda A, c=c: grad(A)[..., c])
        for key in single:
            np.testing.assert_allclose(every[key].for_output(c).values, single[key].values,
                                       rtol=0, atol=1e-12)


def test_a_gradient_of_the_wrong_outputs_is_refused(X):
    # the outputs come from the model's answer: a gradient= callable of one output for a
    # model of three is an error naming the shape, not an explanation of one output
    with pytest.raises(ml.ModelError, match=r"expected \(50, 4, 3\)"):
        ml.dale(_outputs, X, [0], bins=4, chunk_size=50,
                gradient=lambda A: np.ones(np.shape(A)))


@pytest.mark.parametrize("algorithm, budget", [("exact", {}),
                                               ("permutation", dict(n_permutations=16)),
                                               ("kernel", dict(n_samples=40))])
def test_shapley_asks_each_row_once(X, algorithm, budget):
    every, told = _same_as_all(ml.shapley, X[:3], background=X[10:30], algorithm=algorithm,
                               random_state=1, chunk_size=200, **budget)
    assert every.diagnostics["n_model_rows"] == sum(told.seen) - 1  # (the probe: no method's)


def test_shapley_in_threads_asks_each_row_once(X):
    _same_as_all(ml.shapley, X[:4], background=X[10:30], algorithm="exact", chunk_size=150,
                 n_jobs=2)


def test_interactions_ask_each_row_once(X):
    every, told = _same_as_all(ml.interactions, X, features=[0, 1, 2], sample=60,
                               random_state=0, chunk_size=500)
    assert every.n_model_rows == sum(told.seen) - 1


def test_lime_asks_each_row_once(X):
    every, told = _same_as_all(ml.lime, X[:2], training_data=X, num_samples=300,
                               random_state=0, chunk_size=250)
    assert every.diagnostics["n_model_rows"] == sum(told.seen) - 1 == 600


def test_lime_text_probes_the_whole_text():
    # a text's coalition row is no input of predict_fn: the door asks the whole text
    text = "a great movie with a dull plot and fine acting"
    told = []

    def scores(texts):
        told.append(list(texts))
        return np.column_stack([[t.count("a") for t in texts], [len(t) for t in texts]])
    attr = ml.lime_text(scores, text, num_samples=300, chunk_size=100, random_state=0)
    assert told[0] == [text] and [len(t) for t in told[1:]] == [100, 100, 100]
    assert attr.values.shape[-1] == 2


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
    assert told.seen[0] == 1 and told.seen == known.seen
    assert every.outputs == reference.outputs == ["output[0]", "output[1]", "output[2]"]
    for key in reference:
        np.testing.assert_allclose(every[key].values, reference[key].values, rtol=0, atol=1e-12)
