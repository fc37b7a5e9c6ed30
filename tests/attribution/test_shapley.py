"""Shapley values: worked example, closed forms, axioms, convergence, errors, plots."""

import functools
from itertools import permutations
from math import factorial

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import modellens as ml
from shapley_games import game_shapley

ALGORITHMS = ["exact", "permutation", "kernel"]

# The 3-player game of the local-methods lecture: v({}) = 28, v({1}) = 32, ...
GAME = {(): 28, (1,): 32, (2,): 31, (3,): 30, (1, 2): 32, (1, 3): 33, (2, 3): 32, (1, 2, 3): 35}


def game_vector():
    v = np.zeros(8)
    for players, worth in GAME.items():
        v[sum(1 << (p - 1) for p in players)] = worth
    return v


def game_model(X):
    """f on 0/1 rows: the game's worth of the players whose feature is 1."""
    X = np.asarray(X, dtype=float)
    return game_vector()[(X @ np.array([1, 2, 4])).astype(int)]


def brute_force_shapley(f, x, background):
    """Shapley values by averaging marginal contributions over all d! orders."""
    d = len(x)

    def value(S):
        rows = np.array(background, dtype=float, copy=True)
        rows[:, list(S)] = x[list(S)]
        return f(rows).mean()

    phi = np.zeros(d)
    for order in permutations(range(d)):
        before = []
        for j in order:
            phi[j] += value(before + [j]) - value(before)
            before.append(j)
    return phi / factorial(d)


def nonlinear(X):
    X = np.asarray(X, dtype=float)
    return (np.sin(X[:, 0] * X[:, 1] + X[:, 5 % X.shape[1]]) + X[:, 2] * X[:, 3] * X[:, 4]
            + np.exp(X[:, 0] / 3) * X[:, -1])


@pytest.fixture
def data8():
    rng = np.random.default_rng(0)
    return rng.normal(size=(12, 8)), rng.normal(size=(15, 8))


# ---------------------------------------------------------------- worked example
def test_game_solver_gives_the_lecture_values():
    np.testing.assert_allclose(game_shapley(game_vector()), [3, 2, 2], rtol=0, atol=1e-12)


@pytest.mark.parametrize("algorithm,options", [("exact", {}), ("auto", {}),
                                               ("kernel", {"n_samples": 6})])
def test_game_through_the_model(algorithm, options):
    # one background row of zeros: v(S) = f(1_S) is exactly the game
    res = ml.shapley(game_model, np.ones((1, 3)), background=np.zeros((1, 3)),
                     algorithm=algorithm, **options)
    np.testing.assert_allclose(res.values[0], [3, 2, 2], rtol=0, atol=1e-12)
    assert res.base_values[0] == 28 and res.prediction[0] == 35
    assert res.method == ("shapley-kernel" if algorithm == "kernel" else "shapley-exact")


def test_permutation_sampling_converges_on_the_game():
    res = ml.shapley(game_model, np.ones((1, 3)), background=np.zeros((1, 3)),
                     algorithm="permutation", n_permutations=400, random_state=0)
    np.testing.assert_allclose(res.values[0], [3, 2, 2], atol=4 * res.std.max() + 1e-12)
    assert res.values[0].sum() == pytest.approx(7, abs=1e-12)


def test_exact_matches_brute_force_over_orders(data8):
    X, bg = data8[0][:3, :5], data8[1][:, :5]
    res = ml.shapley(nonlinear, X, background=bg, algorithm="exact")
    for i in range(3):
        np.testing.assert_allclose(res.values[i], brute_force_shapley(nonlinear, X[i], bg),
                                   atol=1e-12)


# ------------------------------------------------------------------- closed form
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_linear_model_closed_form(algorithm):
    rng = np.random.default_rng(1)
    X, bg = rng.normal(size=(10, 6)), rng.normal(2.0, 1.5, size=(25, 6))
    beta = np.array([1.5, -2.0, 0.0, 3.0, 0.25, -1.0])
    options = {"n_samples": 20} if algorithm == "kernel" else \
        {"n_permutations": 4} if algorithm == "permutation" else {}
    res = ml.shapley(lambda Z: Z @ beta + 4.0, X, background=bg, algorithm=algorithm,
                     random_state=0, **options)
    np.testing.assert_allclose(res.values, beta * (X - bg.mean(axis=0)), atol=1e-10)
    np.testing.assert_allclose(res.base_values, bg.mean(axis=0) @ beta + 4.0, atol=1e-12)


@pytest.mark.parametrize("algorithm", ["permutation", "kernel"])
def test_linear_model_many_features(algorithm):
    rng = np.random.default_rng(2)
    X, bg = rng.normal(size=(4, 24)), rng.normal(size=(10, 24))
    beta = rng.normal(size=24)
    res = ml.shapley(lambda Z: Z @ beta, X, background=bg, algorithm=algorithm,
                     random_state=0, **({"n_samples": 100} if algorithm == "kernel" else {}))
    np.testing.assert_allclose(res.values, beta * (X - bg.mean(axis=0)), atol=1e-9)


# ------------------------------------------------------------------------ axioms
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_efficiency(algorithm, data8):
    X, bg = data8
    res = ml.shapley(nonlinear, X, background=bg, algorithm=algorithm, random_state=0,
                     **({"n_samples": 40} if algorithm == "kernel" else {}))
    np.testing.assert_allclose(res.base_values + res.values.sum(axis=1), nonlinear(X), atol=1e-10)
    np.testing.assert_allclose(res.base_values, nonlinear(bg).mean(), atol=1e-12)


@pytest.mark.parametrize("algorithm,options", [("exact", {}), ("kernel", {"n_samples": 62})])
def test_symmetry(algorithm, options):
    # f symmetric in x0, x1; the background's columns 0 and 1 are equal and so are the row's
    rng = np.random.default_rng(3)
    bg = rng.normal(size=(20, 6))
    bg[:, 1] = bg[:, 0]
    X = rng.normal(size=(5, 6))
    X[:, 1] = X[:, 0]

    def f(Z):
        return np.sin(Z[:, 0] + Z[:, 1]) * Z[:, 2] + Z[:, 0] * Z[:, 1] * Z[:, 3] + Z[:, 4] * Z[:, 5]

    res = ml.shapley(f, X, background=bg, algorithm=algorithm, **options)
    np.testing.assert_allclose(res.values[:, 0], res.values[:, 1], atol=1e-12)
    assert np.abs(res.values[:, 0]).min() > 1e-3  # not trivially zero


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_dummy_feature(algorithm, data8):
    X, bg = data8

    def f(Z):  # ignores x6
        return nonlinear(np.delete(Z, 6, axis=1))

    res = ml.shapley(f, X, background=bg, algorithm=algorithm, random_state=1,
                     **({"n_samples": 100} if algorithm == "kernel" else {}))
    if algorithm == "kernel":  # a regression fit: zero up to its sampling error
        assert np.all(np.abs(res.values[:, 6]) <= 4 * res.std[:, 6] + 1e-12)
        assert np.abs(res.values[:, 6]).max() < 0.05 * np.abs(res.values).max()
    else:
        np.testing.assert_allclose(res.values[:, 6], 0, atol=1e-12)


# ------------------------------------------------------------ sampling estimators
def _rmse(a, b):
    return float(np.sqrt(np.mean((a - b) ** 2)))


@pytest.mark.parametrize("algorithm,small,large", [("permutation", 4, 64), ("kernel", 30, 200)])
def test_sampling_converges_to_exact(algorithm, small, large, data8):
    X, bg = data8
    exact = ml.shapley(nonlinear, X, background=bg, algorithm="exact").values
    key = "n_permutations" if algorithm == "permutation" else "n_samples"
    errors = {}
    for budget in (small, large):
        errors[budget] = np.mean([
            _rmse(ml.shapley(nonlinear, X, background=bg, algorithm=algorithm,
                             random_state=seed, **{key: budget}).values, exact)
            for seed in range(4)])
    # error ~ 1 / sqrt(budget): 16x / 6.7x the budget should at least halve it
    assert errors[large] < errors[small] / 2
    assert errors[large] > 0


def test_kernel_with_a_full_budget_is_exact(data8):
    X, bg = data8
    exact = ml.shapley(nonlinear, X, background=bg, algorithm="exact")
    full = ml.shapley(nonlinear, X, background=bg, algorithm="kernel", n_samples=2 ** 8 - 2)
    np.testing.assert_allclose(full.values, exact.values, atol=1e-10)
    assert np.all(full.std == 0) and exact.std is None
    assert np.all(full.diagnostics["n_coalitions"] == 254)


@pytest.mark.parametrize("algorithm,options", [("permutation", {"n_permutations": 40}),
                                               ("kernel", {"n_samples": 80}),
                                               # a minute on a loaded machine: CI only
                                               pytest.param("kernel", {"n_samples": 160},
                                                            marks=pytest.mark.study)])
def test_standard_errors_cover_the_true_error(algorithm, options, data8):
    X, bg = data8
    exact = ml.shapley(nonlinear, X, background=bg, algorithm="exact").values
    covered, ratio = [], []
    for seed in range(25):
        res = ml.shapley(nonlinear, X, background=bg, algorithm=algorithm, random_state=seed,
                         **options)
        err = np.abs(res.values - exact)
        covered.append(err <= 2 * res.std + 1e-12)
        ratio.append(np.sqrt(np.mean(res.std ** 2)) / np.sqrt(np.mean(err ** 2)))
    share = np.mean(covered)
    assert 0.88 <= share <= 0.995, share
    # the standard error is the size of the error, neither a tenth nor ten times it
    assert 0.6 < np.mean(ratio) < 1.6


@pytest.mark.parametrize("algorithm", ["permutation", "kernel", "auto"])
def test_same_seed_same_numbers(algorithm):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(150, 12))  # background=None samples 100 of these rows

    def f(Z):
        return np.tanh(Z[:, 0] * Z[:, 1]) + Z[:, 2:5].prod(axis=1) + Z[:, 5:].sum(axis=1)

    run = lambda seed: ml.shapley(f, X[:5], background=X, algorithm=algorithm,  # noqa: E731
                                  random_state=seed,
                                  **({"n_samples": 60} if algorithm != "permutation" else {}))
    a, b, c = run(7), run(7), run(8)
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.std, b.std)
    assert not np.array_equal(a.values, c.values)
    with pytest.warns(UserWarning, match="random sample of 100 of the 150 rows"):
        d1 = ml.shapley(f, X, algorithm="kernel", n_samples=30, random_state=3)
    with pytest.warns(UserWarning):
        d2 = ml.shapley(f, X, algorithm="kernel", n_samples=30, random_state=3)
    np.testing.assert_array_equal(d1.values, d2.values)
    assert d1.diagnostics["n_background"] == 100 and "100 of the 150" in d1.diagnostics["background"]


# ------------------------------------------------------------------ cost in rows
class Counter:
    def __init__(self, f):
        self.f, self.rows = f, 0

    def __call__(self, X):
        self.rows += len(X)
        return self.f(X)


def test_model_rows_are_not_wasted(data8):
    X, bg = data8
    n, d, m = X.shape[0], X.shape[1], bg.shape[0]
    model = Counter(nonlinear)
    res = ml.shapley(model, X, background=bg, algorithm="exact")
    # empty coalition once (m rows), full one as f(x) (one row each), the rest m rows each;
    # and first the one row that tells the function's outputs (no method's row)
    assert model.rows - 1 == n * (2 ** d - 2) * m + m + n == res.diagnostics["n_model_rows"]

    model = Counter(nonlinear)
    res = ml.shapley(model, X, background=bg, algorithm="permutation", n_permutations=30,
                     random_state=0)
    coalitions = res.diagnostics["n_coalitions"]
    assert np.all(coalitions <= 15 * 2 * (d - 1)) and np.all(coalitions < 2 ** d - 2)
    assert model.rows - 1 == coalitions.sum() * m + m + n

    model = Counter(nonlinear)
    res = ml.shapley(model, X, background=bg, algorithm="kernel", n_samples=100, random_state=0)
    assert np.all(res.diagnostics["n_coalitions"] == 100)
    assert model.rows - 1 == 100 * n * m + m + n


def test_chunks_that_cut_background_groups_give_the_same_values(data8):
    X, bg = data8  # 15 background rows: chunks of 37 rows cut through the groups
    whole = ml.shapley(nonlinear, X, background=bg, algorithm="kernel", n_samples=50,
                       random_state=0)
    cut = ml.shapley(nonlinear, X, background=bg, algorithm="kernel", n_samples=50,
                     random_state=0, chunk_size=37, n_jobs=2)
    np.testing.assert_allclose(cut.values, whole.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(cut.std, whole.std, rtol=0, atol=1e-12)


def test_one_feature_and_feature_names():
    X = np.array([[1.0], [3.0]])
    res = ml.shapley(lambda Z: Z[:, 0] ** 2, X, background=np.array([[0.0], [2.0]]),
                     algorithm="permutation", feature_names=["only"])
    np.testing.assert_allclose(res.values[:, 0], [1 - 2, 9 - 2])
    assert res.feature_names == ["only"]


def test_auto_choice():
    rng = np.random.default_rng(5)
    bg = rng.normal(size=(5, 12))
    small = ml.shapley(lambda Z: Z.sum(axis=1), rng.normal(size=(2, 4)), background=bg[:, :4])
    large = ml.shapley(lambda Z: Z.sum(axis=1), rng.normal(size=(2, 12)), background=bg,
                       random_state=0)
    assert small.method == "shapley-exact" and small.std is None
    assert large.method == "shapley-kernel" and large.std.shape == (2, 12)
    budget = ml.shapley(lambda Z: Z.sum(axis=1), rng.normal(size=(2, 12)), background=bg,
                        n_samples=2 ** 12)
    assert budget.method == "shapley-exact"


# ------------------------------------------------------------------ peer library
def test_matches_shap_kernel_explainer(data8):
    # shap's ExactExplainer compiles for ~15 s on first use; the benchmark compares with it.
    # KernelExplainer with a budget that enumerates every coalition is exact too.
    shap = pytest.importorskip("shap")
    X, bg = data8[0][:4], data8[1]
    ours = ml.shapley(nonlinear, X, background=bg, algorithm="exact")
    kernel = shap.KernelExplainer(nonlinear, bg)
    theirs = kernel.shap_values(X, nsamples=2 ** 8 - 2, silent=True)
    np.testing.assert_allclose(ours.values, theirs, atol=1e-8)
    np.testing.assert_allclose(ours.base_values, kernel.expected_value, atol=1e-12)


# ------------------------------------------------------------------- pandas input
def test_dataframe_with_categorical_and_string_columns():
    from sklearn.compose import make_column_transformer
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(6)
    n = 200
    frame = pd.DataFrame({
        "size": rng.normal(size=n),
        "colour": pd.Series(rng.choice(["red", "green", "blue"], n), dtype="string"),
        "grade": pd.Categorical(rng.choice(["a", "b", "c"], n), categories=["c", "b", "a"],
                                ordered=True),
        "age": rng.integers(18, 80, n),
    })
    y = (frame["size"] * (frame["colour"] == "red").astype(float) + (frame["grade"] == "a")
         + frame["age"] / 50)
    model = make_pipeline(
        make_column_transformer((OneHotEncoder(), ["colour", "grade"]), remainder="passthrough"),
        GradientBoostingRegressor(n_estimators=30, random_state=0)).fit(frame, y)
    X, bg = frame.iloc[:3], frame.iloc[100:130]
    before_X, before_bg = X.copy(), bg.copy()
    res = ml.shapley(model, X, background=bg, algorithm="exact")

    @functools.cache
    def value(i, S):
        rows = bg.copy()
        for c in S:
            rows[c] = pd.Series([X.iloc[i][c]] * len(rows), index=rows.index, dtype=frame[c].dtype)
        return model.predict(rows).mean()

    names = list(frame.columns)
    for i in range(3):
        phi = dict.fromkeys(names, 0.0)
        for order in permutations(names):
            for k, c in enumerate(order):
                phi[c] += value(i, frozenset(order[:k + 1])) - value(i, frozenset(order[:k]))
        np.testing.assert_allclose(res.values[i], [phi[c] / 24 for c in names], atol=1e-10)
    np.testing.assert_allclose(res.prediction, model.predict(X), atol=1e-12)
    assert res.kinds == ["numeric", "categorical", "categorical", "numeric"]
    assert res.data[0, 1] == X.iloc[0]["colour"] and res.data[0, 2] == X.iloc[0]["grade"]
    pd.testing.assert_frame_equal(X, before_X)
    pd.testing.assert_frame_equal(bg, before_bg)
    kern = ml.shapley(model, X, background=bg, algorithm="kernel", n_samples=14)
    np.testing.assert_allclose(kern.values, res.values, atol=1e-10)


def test_classifier_probability():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 4))
    y = np.where(X[:, 0] + X[:, 1] * X[:, 2] > 0, "yes", "no")
    clf = LogisticRegression().fit(X, y)
    res = ml.shapley(clf, X[:5], background=X[100:140], algorithm="exact")
    proba = clf.predict_proba(X[:5])[:, list(clf.classes_).index("yes")]
    np.testing.assert_allclose(res.base_values + res.values.sum(axis=1), proba, atol=1e-12)
    assert res.output == "P(y = yes)"
    other = ml.shapley(clf, X[:5], background=X[100:140], algorithm="exact", target="no")
    np.testing.assert_allclose(other.values, -res.values, atol=1e-12)


# ---------------------------------------------------------------------- errors
def test_bad_input_errors(data8):
    X, bg = data8
    f = nonlinear
    with pytest.raises(ValueError, match="algorithm must be one of"):
        ml.shapley(f, X, background=bg, algorithm="tree-ish")
    with pytest.raises(ValueError, match="n_samples must be an integer >= 2"):
        ml.shapley(f, X, background=bg, algorithm="kernel", n_samples=1)
    with pytest.raises(ValueError, match="n_samples must be an integer"):
        ml.shapley(f, X, background=bg, algorithm="kernel", n_samples=10.5)
    with pytest.raises(ValueError, match="does not use it"):
        ml.shapley(f, X, background=bg, algorithm="exact", n_samples=100)
    with pytest.raises(ValueError, match="does not use it"):
        ml.shapley(f, X, background=bg, algorithm="kernel", n_permutations=10)
    with pytest.raises(ValueError, match="n_permutations must be an integer >= 2"):
        ml.shapley(f, X, background=bg, algorithm="permutation", n_permutations=1)
    wide = np.zeros((2, 16))
    with pytest.raises(ValueError, match="algorithm='kernel'"):
        ml.shapley(lambda Z: Z.sum(axis=1), wide, background=wide, algorithm="exact")
    with pytest.raises(ValueError, match="columns"):
        ml.shapley(f, X, background=bg[:, :5])
    with pytest.raises(ValueError, match="single row"):
        ml.shapley(f, X[:1])
    with pytest.raises(ValueError, match="positive"):
        ml.shapley(f, X, background=0)
    with pytest.raises(TypeError, match="background must be rows"):
        ml.shapley(f, X, background=2.5)
    # a function of two outputs explains both (issue 28); one that changes its width fails
    assert ml.shapley(lambda Z: Z[:, :2], X, background=bg).values.shape[2] == 2
    widths = iter([2] + [3] * 1000)
    with pytest.raises(ml.ModelError, match="same outputs"):
        ml.shapley(lambda Z: Z[:, :next(widths)], X, background=bg)
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["x", "y", "x"]})
    with pytest.raises(TypeError, match="DataFrame"):
        ml.shapley(lambda Z: np.zeros(len(Z)), frame, background=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="do not match the columns"):
        ml.shapley(lambda Z: np.zeros(len(Z)), frame,
                   background=pd.DataFrame({"a": [1.0], "c": ["x"]}))


def test_caller_arrays_unchanged(data8):
    X, bg = data8
    X0, bg0 = X.copy(), bg.copy()
    for algorithm in ALGORITHMS:
        ml.shapley(nonlinear, X, background=bg, algorithm=algorithm, random_state=0)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(bg, bg0)


# ------------------------------------------------------------------ result, plots
def test_to_frame(data8):
    X, bg = data8
    res = ml.shapley(nonlinear, X[:3], background=bg, algorithm="permutation", random_state=0)
    frame = res.to_frame()
    assert len(frame) == 3 * 8
    np.testing.assert_allclose(frame["value"].to_numpy(), res.values.ravel())
    np.testing.assert_allclose(frame["std"].to_numpy(), res.std.ravel())
    assert list(frame["feature"][:8]) == res.feature_names
    np.testing.assert_allclose(frame.groupby("row")["value"].sum() + frame.groupby("row")[
        "base_value"].first(), nonlinear(X[:3]), atol=1e-10)


def test_plots_return_axes(data8):
    X, bg = data8
    res = ml.shapley(nonlinear, X, background=bg, algorithm="exact")
    for draw in (lambda ax: res.plot.waterfall(0, ax=ax, max_display=4),
                 lambda ax: res.plot.force(1, ax=ax),
                 lambda ax: res.plot.beeswarm(ax=ax, max_display=5),
                 lambda ax: res.plot.bar(ax=ax),
                 lambda ax: res.plot.dependence("x0", ax=ax),
                 lambda ax: res.plot.dependence(2, color=None, ax=ax)):
        fig, ax = plt.subplots()
        assert draw(ax) is ax
        plt.close(fig)
    assert res.plot() is not None
    with pytest.raises(ValueError, match="row must be"):
        res.plot.waterfall(99)
    with pytest.raises(ValueError, match="unknown feature"):
        res.plot.dependence("nope")
    plt.close("all")


def test_waterfall_bars_add_up_to_the_prediction(data8):
    X, bg = data8
    res = ml.shapley(nonlinear, X, background=bg, algorithm="exact")
    ax = res.plot.waterfall(2, max_display=4)
    widths = [p.get_width() for p in ax.patches]
    assert len(widths) == 4  # three features and "5 other features"
    assert sum(widths) == pytest.approx(res.prediction[2] - res.base_values[2], abs=1e-10)
    plt.close("all")


def test_dependence_colours_by_the_interacting_feature():
    from modellens.plot.attributions import interaction_partner

    rng = np.random.default_rng(8)
    X = rng.uniform(-1, 1, size=(300, 5))
    res = ml.shapley(lambda Z: Z[:, 0] * Z[:, 3] + Z[:, 1] + 0.5 * Z[:, 2] ** 2, X,
                     background=X[:40], algorithm="exact")
    assert interaction_partner(res, "x0") == 3
    assert interaction_partner(res, "x3") == 0
    ax = res.plot.dependence("x0")
    assert ax.figure.axes[-1].get_ylabel() == "x3"  # the colour bar names the partner
    plt.close("all")


def test_categorical_plots():
    frame = pd.DataFrame({"a": np.linspace(0, 1, 30), "b": ["u", "v", "w"] * 10})

    def f(Z):
        return Z["a"].to_numpy() * (Z["b"] == "v").to_numpy() + (Z["b"] == "w").to_numpy()

    res = ml.shapley(f, frame, background=frame)
    ax = res.plot.dependence("b")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["u", "v", "w"]
    res.plot.beeswarm()
    res.plot.waterfall(1)
    plt.close("all")



def test_kernel_standard_error_unknown_with_fewer_pairs_than_features():
    # 4 sampled pairs for 6 features: the fit can pass through every sampled value,
    # so the residuals cannot tell the error, and the standard error is NaN, not 0
    rng = np.random.default_rng(11)
    d = 6
    X, B = rng.normal(size=(3, d)), rng.normal(size=(8, d))
    f = lambda A: A[:, 0] * A[:, 1] * A[:, 2] + A[:, 3] * A[:, 4] ** 2  # noqa: E731
    res = ml.shapley(f, X, background=B, algorithm="kernel", n_samples=8, random_state=0)
    assert np.isnan(res.std).all()
    np.testing.assert_allclose(res.values.sum(axis=1) + res.base_values, f(X), atol=1e-10)
    more = ml.shapley(f, X, background=B, algorithm="kernel", n_samples=40, random_state=0)
    assert np.isfinite(more.std).all()


def test_background_frame_with_other_category_dtype_reaches_model_as_x_dtype():
    rng = np.random.default_rng(12)
    dtype = pd.CategoricalDtype(["lo", "mid", "hi"], ordered=True)
    X = pd.DataFrame({"c": pd.Categorical(rng.choice(["lo", "mid", "hi"], 20), dtype=dtype),
                      "x": rng.normal(size=20)})
    bg = X.iloc[:8].copy()
    bg["c"] = bg["c"].astype(object)
    seen = []

    def f(frame):
        seen.append(frame["c"].dtype)
        return frame["c"].cat.codes.to_numpy() * 1.0 + frame["x"].to_numpy()

    res = ml.shapley(f, X.iloc[:3], background=bg)
    assert all(d == dtype for d in seen)
    codes = X["c"].cat.codes.to_numpy()[:3]
    np.testing.assert_allclose(res.values[:, 0], codes - bg["c"].map({"lo": 0, "mid": 1, "hi": 2})
                               .astype(float).mean(), atol=1e-12)
    bad = bg.copy()
    bad.loc[bad.index[0], "c"] = "huge"
    with pytest.raises(ValueError, match=r"levels \['huge'\] that are not categories"):
        ml.shapley(f, X.iloc[:3], background=bad)
