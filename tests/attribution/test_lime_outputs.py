"""LIME of every output from one sample (issue 28): tables, texts, images, the width sweep.

Every output of the all-output call must equal the single-output call with
that ``target=`` and the same seed (1e-12), while the samples are drawn and
answered once: all outputs cost the draws and the model rows of one.  The
``lime`` package explains each class of a classifier from one sample too
(``labels=``); it is the oracle of the per-class weights.
"""

import matplotlib
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import modellens as ml
from modellens.attribution.lime import TabularSampler

matplotlib.use("Agg")

CLASSES = ["setosa", "versicolor", "virginica"]
TOL = dict(rtol=0, atol=1e-12)


def _same_surrogate(one, single):
    for name in ("values", "base_values", "prediction", "intercept", "score",
                 "local_prediction"):
        np.testing.assert_allclose(getattr(one, name), getattr(single, name), **TOL,
                                   err_msg=name)
    np.testing.assert_allclose(one.surrogate.score_holdout, single.surrogate.score_holdout,
                               **TOL)
    assert one.output == single.output


@pytest.fixture
def count_draws(monkeypatch):
    """How many neighbourhoods the tabular sampler draws."""
    drawn = []
    original = TabularSampler.draw

    def draw(self, size, rng):
        drawn.append(size)
        return original(self, size, rng)

    monkeypatch.setattr(TabularSampler, "draw", draw)
    return drawn


@pytest.mark.parametrize("sampling", ["per_row", "shared"])
def test_every_output_is_drawn_and_answered_once(iris, hgb, count_draws, sampling):
    X, _ = iris
    rows = X.iloc[::30]
    kw = dict(training_data=X, num_samples=300, random_state=1, sampling=sampling)
    every = ml.lime(hgb, rows, **kw)
    drawn_every = list(count_draws)
    count_draws.clear()
    single = ml.lime(hgb, rows, target="virginica", **kw)
    assert every.values.shape == (len(rows), 4, 3)
    # the draws of one output, and its model rows: the k surrogates share the samples
    assert drawn_every == list(count_draws) == \
        ([300] * len(rows) if sampling == "per_row" else [299])
    assert every.diagnostics["n_model_rows"] == single.diagnostics["n_model_rows"] == \
        (len(rows) * 300 if sampling == "per_row" else len(rows) + 299)
    _same_surrogate(every.for_output("virginica"), single)


@pytest.mark.parametrize("selection, k", [("forward", 2), ("highest_weights", 2),
                                          ("lasso_path", 2), ("none", 4), ("auto", 3)])
def test_each_output_selects_its_own_features(iris, logistic, selection, k):
    # outputs that select different features are fit apart, the others in one solve: every
    # output must still be its single-output call
    X, _ = iris
    rows = X.iloc[[0, 60, 120, 75]]
    kw = dict(training_data=X, num_samples=400, random_state=2, num_features=k,
              feature_selection=selection, discretize=None)
    every = ml.lime(logistic, rows, **kw)
    chosen = every.values != 0
    assert (chosen.sum(axis=1) <= k).all()
    if k < 4:  # the test has teeth: some row's classes chose different features
        assert any(not (chosen[i] == chosen[i, :, :1]).all() for i in range(len(rows)))
    for c, label in enumerate(CLASSES):
        single = ml.lime(logistic, rows, target=label, **kw)
        _same_surrogate(every.for_output(label), single)
        _same_surrogate(every[..., c], single)


@pytest.mark.parametrize("execution", [{}, dict(n_jobs=2, chunk_size=200)])
def test_every_output_of_a_function_equals_its_column(iris, execution):
    # a function tells its outputs only by answering: its first answer is kept, not asked
    # again, so every output costs the rows of one here too (in threads as well)
    X, _ = iris
    A = X.to_numpy()
    rows = []

    def two(B):
        rows.append(len(B))
        B = np.asarray(B, dtype=float)
        return np.c_[B[:, 0] * B[:, 1], np.sin(B[:, 2]) - B[:, 3]]

    kw = dict(training_data=A, num_samples=250, random_state=4, stability=3, **execution)
    every = ml.lime(two, A[:3], **kw)
    # (the first: one row that tells the function's outputs, no sample's row)
    assert rows[0] == 1 and sum(rows[1:]) == every.diagnostics["n_model_rows"] == 3 * 3 * 250
    assert every.outputs == ["f(x)[0]", "f(x)[1]"]
    for c in range(2):
        rows.clear()
        single = ml.lime(two, A[:3], target=c, **kw)
        assert sum(rows) == 1 + 3 * 3 * 250  # (one row tells the name of a function's column)
        _same_surrogate(every.for_output(c), single)
        np.testing.assert_allclose(every.for_output(c).surrogate.stability["weight_std"],
                                   single.surrogate.stability["weight_std"], **TOL)


def test_a_torch_module_of_two_outputs(iris):
    torch = pytest.importorskip("torch")
    A = iris[0].to_numpy()
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(),
                              torch.nn.Linear(8, 2)).double().eval()
    kw = dict(training_data=A, num_samples=200, random_state=0, discretize=None)
    every = ml.lime(net, A[:3], **kw)
    assert every.outputs == ["output[0]", "output[1]"]
    assert every.diagnostics["n_model_rows"] == 600
    for c in range(2):
        _same_surrogate(every.for_output(c), ml.lime(net, A[:3], target=c, **kw))


def test_a_function_whose_outputs_change_is_refused_with_them(iris):
    A = iris[0].to_numpy()
    calls = []

    def changing(B):
        calls.append(len(B))
        return B[:, :2] if len(calls) == 1 else B[:, :3]

    with pytest.raises(ml.ModelError, match=r"expected \(100, 2\).*\['f\(x\)\[0\]', "
                                            r"'f\(x\)\[1\]'\].*same outputs at every call"):
        ml.lime(changing, A[:3], training_data=A, num_samples=100, chunk_size=100,
                random_state=0)


def _scores(texts):
    """Three scores of a text: P(negative), P(positive) and a 'dull' detector."""
    p = np.array([0.9 if "great" in t.split() else 0.2 for t in texts])
    q = np.array([0.1 + 0.6 * ("dull" in t.split()) + 0.1 * ("plot" in t.split())
                  for t in texts])
    return np.column_stack([1 - p, p, q])


TEXT = "a great movie with a dull plot"


def test_lime_text_explains_every_column_from_one_sample():
    texts = []

    def scores(batch):
        texts.extend(batch)
        return _scores(batch)

    every = ml.lime_text(scores, TEXT, num_samples=400, random_state=0)
    # the whole text, which tells predict_fn's outputs, then the samples of one output
    assert texts[0] == TEXT and len(texts) - 1 == every.diagnostics["n_model_rows"] == 400
    assert every.values.shape == (1, 6, 3) and len(every.outputs) == 3
    words = every.feature_names
    for c in range(3):
        single = ml.lime_text(_scores, TEXT, num_samples=400, random_state=0, target=c)
        _same_surrogate(every.for_output(c), single)
    # each column's own word leads its explanation
    top = [words[int(np.argmax(np.abs(every.values[0, :, c])))] for c in range(3)]
    assert top == ["great", "great", "dull"]
    assert every.values[0, words.index("great"), 0] < 0 < every.values[0, words.index("great"), 1]


def test_lime_image_explains_every_column_from_one_sample():
    image = np.random.default_rng(0).random((16, 16, 3))
    labels = (np.arange(16)[:, None] // 8) * 2 + np.arange(16)[None, :] // 8

    def two(images):  # column 0 reads the top-left quarter, column 1 the bottom-right one
        return np.c_[images[:, :8, :8].std(axis=(1, 2, 3)), images[:, 8:, 8:].std(axis=(1, 2, 3))]

    every = ml.lime_image(two, image, segmentation=labels, num_samples=300, random_state=0)
    assert every.values.shape == (1, 4, 2)
    for c, region in enumerate(["0", "3"]):
        single = ml.lime_image(two, image, segmentation=labels, num_samples=300,
                               random_state=0, target=c)
        _same_surrogate(every.for_output(c), single)
        assert every.feature_names[int(np.argmax(every.values[0, :, c]))] == region


def test_lime_text_and_image_take_a_list_of_outputs():
    # as ml.lime does: one sample, the outputs the list names in its order, each one equal
    # to its target= call; the list is checked against the first answer, which is kept
    texts = []

    def scores(batch):
        texts.extend(batch)
        return _scores(batch)

    some = ml.lime_text(scores, TEXT, num_samples=400, random_state=0, target=[2, 0])
    assert texts[0] == TEXT and len(texts) - 1 == some.diagnostics["n_model_rows"] == 400
    assert some.values.shape == (1, 6, 2) and some.outputs == ["f(x)[2]", "f(x)[0]"]
    for c, column in enumerate([2, 0]):
        single = ml.lime_text(_scores, TEXT, num_samples=400, random_state=0, target=column)
        _same_surrogate(some.for_output(some.outputs[c]), single)
    # a list of one output is that output, as target= it
    one = ml.lime_text(_scores, TEXT, num_samples=400, random_state=0, target=[-1])
    _same_surrogate(one, ml.lime_text(_scores, TEXT, num_samples=400, random_state=0,
                                      target=2))
    assert one.values.shape == (1, 6)

    image = np.random.default_rng(1).random((16, 16, 3))
    labels = (np.arange(16)[:, None] // 8) * 2 + np.arange(16)[None, :] // 8

    def three(images):  # the top-left, bottom-right and top-right quarters
        return np.c_[images[:, :8, :8].std(axis=(1, 2, 3)),
                     images[:, 8:, 8:].std(axis=(1, 2, 3)),
                     images[:, :8, 8:].std(axis=(1, 2, 3))]

    some = ml.lime_image(three, image, segmentation=labels, num_samples=300, random_state=0,
                         target=[1, 2])
    assert some.values.shape == (1, 4, 2)
    for c, (column, region) in enumerate([(1, "3"), (2, "1")]):
        single = ml.lime_image(three, image, segmentation=labels, num_samples=300,
                               random_state=0, target=column)
        _same_surrogate(some.for_output(some.outputs[c]), single)
        assert some.feature_names[int(np.argmax(some.values[0, :, c]))] == region


def test_width_sweep_of_every_output(iris, logistic):
    X, _ = iris
    kw = dict(training_data=X, num_samples=300, random_state=0)
    sweep = ml.lime_width_sweep(logistic, X.iloc[[70]], **kw)
    assert sweep.values.shape == (25, 4, 3) and sweep.score.shape == (25, 3)
    assert len(sweep.outputs) == 3 and "WidthSweep(widths=25, features=4, outputs=3)" == \
        repr(sweep)
    for c, label in enumerate(CLASSES):
        single = ml.lime_width_sweep(logistic, X.iloc[[70]], target=label, **kw)
        one = sweep.for_output(label)
        for name in ("values", "score", "score_holdout"):
            np.testing.assert_allclose(getattr(one, name), getattr(single, name), **TOL)
        np.testing.assert_allclose(sweep.for_output(c).values, single.values, **TOL)
    with pytest.raises(ml.InvalidParameterError, match="output="):
        sweep.plot()
    ax = sweep.plot(output="setosa", max_display=2)
    assert len(ax.lines) == 4  # two features, the default width, the zero line
    with pytest.raises(KeyError, match="none of the outputs"):
        sweep.for_output("daisy")


def _lime_package_runs(model, train, x, seeds, num_samples):
    """The lime package's weights of every class of one row, ``(seeds, d, k)``."""
    from lime.lime_tabular import LimeTabularExplainer

    d = train.shape[1]
    out = []
    for s in seeds:
        ex = LimeTabularExplainer(train, mode="classification", feature_selection="none",
                                  random_state=s)
        e = ex.explain_instance(x, model.predict_proba, labels=(0, 1, 2), num_features=d,
                                num_samples=num_samples)
        w = np.zeros((d, 3))
        for c in range(3):
            for j, v in e.local_exp[c]:
                w[j, c] = v
        out.append(w)
    return np.array(out)


def test_every_class_matches_the_lime_package_within_sampling_error(iris):
    pytest.importorskip("lime")
    X, y = iris
    train = X.to_numpy()
    model = make_pipeline(StandardScaler(), LogisticRegression(C=0.3, max_iter=500)).fit(
        train, y)
    x = train[70]  # a versicolor near the others: every class moves
    seeds = range(30)
    theirs = _lime_package_runs(model, train, x, seeds, num_samples=1500)
    ours = np.array([ml.lime(model, x[None], training_data=train, num_samples=1500,
                             feature_selection="none", random_state=s).values[0]
                     for s in seeds])
    assert ours.shape == theirs.shape == (30, 4, 3)
    se = np.sqrt(ours.var(axis=0, ddof=1) / 30 + theirs.var(axis=0, ddof=1) / 30)
    gap = np.abs(ours.mean(axis=0) - theirs.mean(axis=0))
    assert (gap <= 4.5 * se + 1e-9).all(), (ours.mean(axis=0), theirs.mean(axis=0))
    # the comparison has power: each class's largest weight is known to under a third, and the
    # classes' weights differ by more than the tolerance (a class mix-up would show)
    mean = theirs.mean(axis=0)
    top = np.abs(mean).argmax(axis=0)
    assert (4.5 * se[top, range(3)] < 0.3 * np.abs(mean[top, range(3)])).all()
    for a, b in [(0, 1), (1, 2), (0, 2)]:
        assert (np.abs(ours.mean(axis=0)[:, a] - mean[:, b]) > 4.5 * se[:, b]).any()


def _greedy_by_refits(Z, y, w, k):
    """Forward selection as the lime package runs it: a weighted least-squares fit (with
    intercept) and its weighted R^2 for every candidate at every step."""
    from sklearn.linear_model import LinearRegression

    used = []
    for _ in range(k):
        scores = {}
        for j in range(Z.shape[1]):
            if j not in used:
                cols = used + [j]
                fit = LinearRegression().fit(Z[:, cols], y, sample_weight=w)
                scores[j] = fit.score(Z[:, cols], y, sample_weight=w)
        best = max(scores.values())
        # the first of the candidates within rounding of the best (the order of the loop)
        used.append(min(j for j, s in scores.items() if s >= best - 1e-9))
    return sorted(used)


def test_forward_selection_of_every_output_equals_refitting_each_candidate():
    from modellens.attribution._surrogate import _forward

    for seed in range(12):
        rng = np.random.default_rng(seed)
        S, p = 300, 7
        Z = (rng.random((S, p)) < 0.5).astype(float)
        Z[:, 5] = Z[:, 1]  # a copy: never worth adding after the original
        Z[:, 6] = 1.0  # constant: explains nothing
        Z[0] = 1
        w = np.sqrt(np.exp(-((1 - Z).sum(axis=1) ** 2) / 2.0 ** 2))
        Y = np.column_stack([Z[:, :5] @ rng.normal(size=5) + f * Z[:, 0] * Z[:, 2]
                             + rng.normal(0, 0.3, S) for f in (0.0, 2.0, -1.0)])
        Y[:, 2] *= 1e200  # R^2 does not depend on the scale, even where squares overflow
        chosen = _forward(Z, Y, w, 4)
        for c in range(3):
            assert list(chosen[c]) == _greedy_by_refits(Z, Y[:, c] / (1e200 if c == 2 else 1),
                                                        w, 4), (seed, c)
