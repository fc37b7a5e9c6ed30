"""Every output at once: a multi-output call equals the single-output calls, one per output."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_iris
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import modellens as ml

TOL = dict(rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True, as_frame=True)
    X.columns = ["sl", "sw", "pl", "pw"]
    return X, y


@pytest.fixture(scope="module")
def hgb(iris):
    X, y = iris
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    return HistGradientBoostingClassifier(max_iter=15, random_state=0).fit(X, labels)


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    n = 240
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(-1, 1, n),
                      "c": pd.Categorical(rng.choice(["u", "v", "w"], n))})
    score = np.column_stack([X.a, X.b - X.a, (X.c == "w") * 1.5])
    y = np.array(["lo", "mid", "hi"])[np.argmax(score + rng.normal(0, .5, (n, 3)), axis=1)]
    return X, y


@pytest.fixture(scope="module")
def logreg(frame):
    X, y = frame
    pre = ColumnTransformer([("num", StandardScaler(), ["a", "b"]),
                             ("cat", OneHotEncoder(), ["c"])])
    return make_pipeline(pre, LogisticRegression(max_iter=1000)).fit(X, y)


@pytest.fixture(scope="module")
def forest(iris):
    X, y = iris
    Y = np.column_stack([X.pl * X.pw, X.sl - X.sw])
    return RandomForestRegressor(n_estimators=8, max_depth=4, random_state=0).fit(X, Y)


@pytest.fixture(scope="module")
def net():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(),
                               torch.nn.Linear(8, 2)).double().eval()


def _check_effects(every, one_by_one, labels):
    assert len(every.outputs) == len(labels)
    for c, (label, single) in enumerate(zip(labels, one_by_one)):
        assert single.outputs is None
        for key, s in single.items():
            e = every[key]
            assert e.values.shape == np.shape(s.values) + (len(labels),)
            for chosen in (e.for_output(c), e.for_output(label), e.for_output(s.output)):
                assert chosen.output == s.output and chosen.outputs is None
                np.testing.assert_allclose(chosen.values, s.values, **TOL)
                for name in ("ice", "std"):
                    a, b = getattr(chosen, name), getattr(s, name)
                    assert (a is None) == (b is None)
                    if a is not None:
                        np.testing.assert_allclose(a, b, **TOL)
                if s.band is not None:
                    np.testing.assert_allclose(chosen.band.lower, s.band.lower, **TOL)
                    np.testing.assert_allclose(chosen.band.upper, s.band.upper, **TOL)
                if s.bins is not None:
                    np.testing.assert_allclose(chosen.bins.std, s.bins.std, **TOL)
                    np.testing.assert_array_equal(chosen.bins.counts, s.bins.counts)
            # per-output columns: the c-th of every per-output field
            np.testing.assert_allclose(e.values[..., c], s.values, **TOL)
            if s.ice is not None:
                np.testing.assert_allclose(e.ice[..., c], s.ice, **TOL)
        single_frame = single.to_frame()
        part = every.for_output(label).to_frame()
        pd.testing.assert_frame_equal(part, single_frame)


def _each(fn, model, X, labels, **kw):
    every = fn(model, X, **kw)
    _check_effects(every, [fn(model, X, target=t, **kw) for t in labels], labels)
    return every


CLASSES = ["setosa", "versicolor", "virginica"]


def test_hgb_every_class_equals_each_class(iris, hgb):
    X, _ = iris
    every = _each(ml.pdp, hgb, X, CLASSES, features=["sl", "pw", ("pl", "pw")], grid=5,
                  ice=True)
    assert every.outputs == [f"P(y = {c})" for c in CLASSES]
    assert every["sl"].ice.shape == (150, 5, 3)
    assert every[("pl", "pw")].values.shape == (5, 5, 3)
    _each(ml.pdp, hgb, X, CLASSES, features=["sl"], grid=4, sample=40, random_state=3,
          ice=True, center=True)
    _each(ml.mplot, hgb, X, CLASSES, features=["sl", "pl"], grid=5)
    _each(ml.ale, hgb, X, CLASSES, features=["sl", ("sl", "pw")], bins=5)
    # probabilities of every class sum to 1: their PD curves too
    np.testing.assert_allclose(every["sl"].values.sum(axis=-1), 1, atol=1e-12)


def test_logistic_pipeline_every_class(frame, logreg):
    X, _ = frame
    labels = list(logreg.classes_)
    every = _each(ml.pdp, logreg, X, labels, grid=4, ice=True)
    assert every["c"].kind == "categorical"
    _each(ml.ale, logreg, X, labels, features=["a", "c", ("a", "b")], bins=4)
    _each(ml.mplot, logreg, X, labels, features=["a", "b"], grid=4)
    _each(ml.dale, logreg, X, labels, features=["a", "b"], bins=5)
    # a list of classes gives those, in the order given
    two = ml.pdp(logreg, X, ["a"], grid=3, target=["mid", "hi"])
    assert two.outputs == ["P(y = mid)", "P(y = hi)"]
    np.testing.assert_allclose(two["a"].values[:, 1],
                               ml.pdp(logreg, X, ["a"], grid=3, target="hi")["a"].values, **TOL)


def test_two_output_regressor_and_torch(iris, forest, net):
    X, _ = iris
    every = _each(ml.pdp, forest, X, [0, 1], features=["sl", "pl"], grid=4, ice=True)
    assert every.outputs == ["prediction[0]", "prediction[1]"]
    _each(ml.ale, forest, X, [0, 1], features=["pl", ("sl", "pl")], bins=4)
    _each(ml.mplot, forest, X, [0, 1], features=["sw"], grid=4)
    Z = np.random.default_rng(1).normal(size=(200, 3))
    every = _each(ml.dale, net, Z, [0, 1], bins=5)
    assert every.outputs == ["output[0]", "output[1]"]
    _each(ml.pdp, net, Z, [0, 1], grid=5, ice=True)
    _each(ml.ale, net, Z, [0, 1], features=["x0", ("x0", "x2")], bins=5)
    # the finite differences of the same network (a function on arrays)
    torch = pytest.importorskip("torch")

    def f(A):
        with torch.no_grad():
            return net(torch.tensor(np.array(A))).numpy()
    _each(ml.dale, f, Z, [0, 1], bins=5, gradient="finite_differences")


def test_dale_gradient_callable_per_output():
    X = np.random.default_rng(2).uniform(-1, 1, size=(300, 2))
    f = lambda A: np.column_stack([A[:, 0] ** 2, A[:, 0] * A[:, 1]])  # noqa: E731

    def grad(A):  # (m, d, k): each output's gradient
        return np.stack([np.column_stack([2 * A[:, 0], 0 * A[:, 0]]),
                         np.column_stack([A[:, 1], A[:, 0]])], axis=-1)
    every = ml.dale(f, X, bins=5, gradient=grad)
    for c in range(2):
        single = ml.dale(f, X, bins=5, target=c, gradient=lambda A, c=c: grad(A)[..., c])
        for key in single:
            np.testing.assert_allclose(every[key].for_output(c).values, single[key].values,
                                       **TOL)
    # x0 ** 2 has the slope 2 x0: the curve is x0 ** 2 up to a constant (bin-mean slopes)
    e = every["x0"].for_output(0)
    assert np.ptp(e.values - e.grid ** 2) < 0.05
    # the model's own answer tells its outputs (two): a gradient of one of them is that
    # output's target=, and refused for all of them (it was taken for one output, f(x))
    assert ml.dale(f, X, bins=5, target=1, gradient=lambda A: grad(A)[..., 1]).outputs is None
    with pytest.raises(ml.ModelError, match=r"expected \(300, 2, 2\)"):
        ml.dale(f, X, bins=5, gradient=lambda A: grad(A)[..., 1])
    answers = []

    def shifty(A):  # two outputs' gradients first, then one
        answers.append(1)
        return grad(A) if len(answers) == 1 else grad(A)[..., 0]
    with pytest.raises(ml.ModelError, match=r"expected \(100, 2, 2\)"):
        ml.dale(f, X, bins=5, gradient=shifty, chunk_size=100)


def test_interactions_every_output(iris, hgb, forest):
    X, _ = iris
    for model, labels in ((hgb, CLASSES), (forest, [0, 1])):
        for pairs in (None, 2):
            every = ml.interactions(model, X, sample=40, random_state=0, pairs=pairs,
                                    method="brute")
            assert list(every.overall.columns) == every.outputs
            assert every.pairwise.columns[0] == "output"
            for c, label in enumerate(labels):
                single = ml.interactions(model, X, sample=40, random_state=0, pairs=pairs,
                                         method="brute", target=label)
                part = every.for_output(label)
                assert part is every.for_output(c)
                pd.testing.assert_series_equal(part.overall, single.overall, **TOL)
                pd.testing.assert_series_equal(part.overall_std, single.overall_std, **TOL)
                pd.testing.assert_frame_equal(part.pairwise, single.pairwise, **TOL)
                np.testing.assert_allclose(every.overall[single.output], single.overall, **TOL)
            back = ml.Interactions.from_dict(json.loads(json.dumps(every.to_dict())))
            pd.testing.assert_frame_equal(back.pairwise, every.pairwise)
            pd.testing.assert_frame_equal(back.overall, every.overall)
            frame = every.to_frame()
            assert list(frame.columns[:2]) == ["statistic", "output"]
            assert set(frame["output"]) == set(every.outputs)


def test_predict_every_output(iris, hgb, forest, frame, logreg):
    X, _ = iris
    p = ml.predict(hgb, X)
    assert isinstance(p, pd.DataFrame) and list(p.columns) == [f"P(y = {c})" for c in CLASSES]
    np.testing.assert_allclose(p.to_numpy(), hgb.predict_proba(X), **TOL)
    for c in CLASSES:
        pd.testing.assert_series_equal(p[f"P(y = {c})"], ml.predict(hgb, X, target=c))
    np.testing.assert_allclose(ml.predict(forest, X).to_numpy(), forest.predict(X), **TOL)
    Xf, _ = frame
    np.testing.assert_allclose(ml.predict(logreg, Xf).to_numpy(), logreg.predict_proba(Xf),
                               **TOL)
    # a binary classifier keeps its positive class; target="all" gives both
    binary = LogisticRegression().fit(X, (X.sl > 5.8).astype(int))
    assert isinstance(ml.predict(binary, X), pd.Series)
    both = ml.predict(binary, X, target="all")
    np.testing.assert_allclose(both.to_numpy(), binary.predict_proba(X), **TOL)
    effects = ml.pdp(binary, X, ["sl"], grid=3, target="all")
    assert effects.outputs == ["P(y = 0)", "P(y = 1)"]
    np.testing.assert_allclose(effects["sl"].values.sum(axis=1), 1, atol=1e-12)
    assert ml.pdp(binary, X, ["sl"], grid=3)["sl"].values.shape == (3,)


class _Counting:
    """A three-class model that notes the rows of every call."""

    classes_ = np.array(["a", "b", "c"])

    def __init__(self):
        self.seen = []

    def fit(self, X, y):
        return self

    def predict_proba(self, A):
        self.seen.append(len(A))
        z = np.column_stack([A[:, 0] * A[:, 1], A[:, 2], -A[:, 3]])
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


def test_all_outputs_cost_the_rows_of_one(iris):
    X = iris[0].to_numpy()
    model = _Counting()
    ml.pdp(model, X, [0, 3], grid=5, ice=True, chunk_size=500)
    ml.ale(model, X, [0], bins=4, chunk_size=500)
    every, model.seen = model.seen, []
    ml.pdp(model, X, [0, 3], grid=5, ice=True, chunk_size=500, target="b")
    ml.ale(model, X, [0], bins=4, chunk_size=500, target="b")
    assert every == model.seen == [500, 500, 500, 300]
    # a function tells its outputs by answering one row when it is wrapped: then no chunk
    # is asked twice
    seen = []

    def f(A):
        seen.append(len(A))
        return model.predict_proba(A)
    ml.pdp(f, X, [0, 3], grid=5, ice=True, chunk_size=500)
    assert seen == [1, 500, 500, 500]
    seen.clear()
    ml.pdp(lambda A: f(A)[:, 1], X, [0, 3], grid=5, ice=True, chunk_size=500)
    assert seen == [1, 500, 500, 500]


def test_bad_outputs(iris, hgb):
    X, _ = iris
    with pytest.raises(ValueError, match=r"'daisy' is not one of the model's classes"):
        ml.pdp(hgb, X, ["sl"], target=["setosa", "daisy"])
    with pytest.raises(ValueError, match="names an output twice"):
        ml.pdp(hgb, X, ["sl"], target=["setosa", "setosa"])
    with pytest.raises(ValueError, match="names an output twice"):
        ml.pdp(hgb, X, ["sl"], target=["setosa", 0])
    calls = []

    def shifty(A):  # two outputs at first, three afterwards
        calls.append(1)
        return np.zeros((len(A), 2 if len(calls) == 1 else 3))
    with pytest.raises(ml.ModelError, match=r"outputs \['f\(x\)\[0\]', 'f\(x\)\[1\]'\].*same "
                                            "outputs at every call"):
        ml.pdp(shifty, X.to_numpy(), [0], grid=3, chunk_size=100)  # (the first: the probe)
    calls.clear()

    def narrows(A):  # one output at first, two afterwards
        calls.append(1)
        return np.zeros(len(A)) if len(calls) == 1 else np.zeros((len(A), 2))
    with pytest.raises(ml.ModelError, match=r"shape \(100, 2\) for 100 rows; expected \(100,\)"):
        ml.pdp(narrows, X.to_numpy(), [0], grid=3, chunk_size=100)
    with pytest.raises(ValueError, match="out of range"):
        ml.pdp(lambda A: A[:, :2], X.to_numpy(), [0], target=[0, 5])
    with pytest.raises(KeyError, match="none of the outputs"):
        ml.pdp(hgb, X, ["sl"], grid=3)["sl"].for_output("daisy")


def test_frames_and_dicts_carry_the_axis(iris, hgb):
    X, _ = iris
    every = ml.ale(hgb, X, ["sl", ("sl", "pw")], bins=4)
    frame = every.to_frame()
    assert list(frame.columns[:3]) == ["feature", "method", "output"]
    assert frame.groupby("output").size().to_dict() == {
        f"P(y = {c})": len(every.for_output(c).to_frame()) for c in CLASSES}
    back = ml.Effects.from_dict(json.loads(json.dumps(every.to_dict())))
    assert back.outputs == every.outputs
    for key in every:
        np.testing.assert_array_equal(back[key].values, every[key].values)
        assert back[key].for_output("virginica").output == "P(y = virginica)"
    pd.testing.assert_frame_equal(back.to_frame(), frame)
    # one output: the frame and the dict are those of a single-output model
    single = ml.ale(hgb, X, ["sl"], bins=4, target="setosa")
    assert "output" not in single.to_frame().columns
    assert "outputs" not in single["sl"].to_dict()["fields"]
    dale = ml.dale(lambda A: np.column_stack([A[:, 0] ** 2, A[:, 1]]), X.to_numpy(), bins=4)
    rebinned = dale["x0"].rebin(3)
    assert rebinned.outputs == dale.outputs and rebinned.values.shape == (4, 2)
    np.testing.assert_allclose(rebinned.for_output(0).values,
                               dale["x0"].for_output(0).rebin(3).values, **TOL)


def test_plot_one_line_per_output(iris, hgb):
    import matplotlib
    matplotlib.use("Agg")
    X, _ = iris
    every = ml.pdp(hgb, X, ["sl", ("sl", "pw")], grid=4)
    ax = every["sl"].plot()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[:3] == every.outputs
    ax = every["sl"].plot(output="virginica")
    np.testing.assert_allclose(ax.lines[0].get_ydata(), every["sl"].values[:, 2])
    with pytest.raises(ValueError, match="output="):
        every[("sl", "pw")].plot()
    every[("sl", "pw")].plot(output=1)
    every.plot(output=0)
    every.for_output(0).plot()


def test_dask_data_every_output():
    da = pytest.importorskip("dask.array")
    X = np.random.default_rng(4).normal(size=(240, 3))
    f = lambda A: np.column_stack([A[:, 0] * A[:, 1], np.sin(A[:, 2])])  # noqa: E731
    D = da.from_array(X, chunks=(80, 3))
    for fn, kw in ((ml.pdp, dict(grid=4)), (ml.ale, dict(bins=4)), (ml.mplot, dict(grid=4))):
        _each(fn, f, D, [0, 1], **kw)
        # and the out-of-core numbers are those of the data in memory, per output
        in_memory = fn(f, X, **kw)
        if fn is ml.pdp:
            np.testing.assert_allclose(fn(f, D, **kw)["x0"].values, in_memory["x0"].values,
                                       rtol=0, atol=1e-12)
    predictions = ml.predict(f, D).compute()
    np.testing.assert_allclose(predictions.to_numpy(), f(X), **TOL)


def test_dask_client_every_output_equals_in_memory():
    distributed = pytest.importorskip("dask.distributed")
    X = np.random.default_rng(6).normal(size=(200, 3))
    f = lambda A: np.column_stack([A[:, 0] * A[:, 1], np.sin(A[:, 2])])  # noqa: E731
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1) as client:
        with ml.config(client=client, chunk_size=150):
            pdp, ale = ml.pdp(f, X, grid=5, ice=True), ml.ale(f, X, bins=4)
    assert pdp.outputs == ale.outputs == ["f(x)[0]", "f(x)[1]"]
    for here, there in ((ml.pdp(f, X, grid=5, ice=True), pdp), (ml.ale(f, X, bins=4), ale)):
        for key in here:
            np.testing.assert_array_equal(there[key].values, here[key].values)
