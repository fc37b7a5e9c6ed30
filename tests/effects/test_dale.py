"""DALE: closed-form truths, an independent implementation, ALE, and the bins."""

import warnings

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens import ModelError


# ----------------------------------------------------------------- helpers
def paper_data(n, *, s=1.0, noise=0.5, seed=0):
    """The DALE paper's example: x1 ~ U(0, 10), x2 = x1 + noise, x3 ~ N(0, s^2)."""
    rng = np.random.default_rng(seed)
    x1 = rng.uniform(0, 10, n)
    return np.column_stack([x1, x1 + rng.normal(0, noise, n), rng.normal(0, s, n)])


def paper_model(c=0.0):
    """f = x1 x2 + x1 x3 + c (x1 - x2)^3; the last term is ~0 on the data, large off it."""
    def f(X):
        return X[:, 0] * X[:, 1] + X[:, 0] * X[:, 2] + c * (X[:, 0] - X[:, 1]) ** 3

    def grad(X):
        d = X[:, 0] - X[:, 1]
        return np.column_stack([X[:, 1] + X[:, 2] + 3 * c * d ** 2,
                                X[:, 0] - 3 * c * d ** 2, X[:, 0]])
    return f, grad


def centre_like_ale(curve, counts):
    """Centre values at the edges by the count-weighted mean of bin midpoints."""
    mid = (curve[:-1] + curve[1:]) / 2
    return curve - np.dot(counts, mid) / counts.sum()


class CountingModel:
    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, X):
        self.calls += 1
        return self.fn(X)


# ------------------------------------------------------------ paper example
@pytest.mark.parametrize("gradient", ["callable", "finite_differences"])
def test_paper_example_five_wide_bins_is_accurate(gradient):
    # the ALE of x1 is x1^2 / 2: E[df/dx1 | x1] = E[x2 + x3 | x1] = x1
    n, s, noise = 4000, 1.0, 0.5
    X = paper_data(n, s=s, noise=noise)
    f, grad = paper_model()
    eff = ml.dale(f, X, features="x0", bins=5,
                  gradient=grad if gradient == "callable" else "finite_differences")["x0"]
    edges = np.asarray(eff.grid)
    assert edges.size == 6 and edges[0] == X[:, 0].min() and edges[-1] == X[:, 0].max()
    assert eff.counts.sum() == n
    truth = centre_like_ale(edges ** 2 / 2, eff.counts)
    # noise of the curve: sum over <= 5 bins of width ~2 of var(x2 - x1 + x3) / n_k
    tol = 4 * np.sqrt(5 * 2.0 ** 2 * (s ** 2 + noise ** 2) / (n / 5))
    assert np.max(np.abs(eff.values - truth)) < tol
    assert np.ptp(truth) > 45  # the check is against a curve of range ~50


@pytest.mark.parametrize("bins", [5, 50])
def test_dale_stays_on_the_data_where_wide_ale_bins_leave_it(bins):
    # c (x1 - x2)^3 is ~0 on the data; ALE's bin-edge rows move x1 off x2 by up to a
    # bin width and pick up c w^3 / 2 per bin, DALE only sees the derivative on the data
    ale = ml.ale
    n, s, noise, c = 4000, 1.0, 0.5, 1.0
    X = paper_data(n, s=s, noise=noise, seed=1)
    f, grad = paper_model(c)
    d = ml.dale(f, X, features="x0", bins=bins, gradient=grad)["x0"]
    a = ale(f, X, features="x0", bins=bins)["x0"]
    np.testing.assert_array_equal(np.asarray(a.grid, dtype=float), d.grid)
    # truth: E[df/dx1 | x1] = x1 + 3 c noise^2
    truth = centre_like_ale(d.grid ** 2 / 2 + 3 * c * noise ** 2 * d.grid, d.counts)
    tol = 4 * np.sqrt(bins * (10 / bins) ** 2 * (s ** 2 + noise ** 2) / (n / bins)) + 0.1
    assert np.max(np.abs(d.values - truth)) < tol
    gap = np.max(np.abs(a.values - d.values))
    if bins == 50:
        # narrow bins: ALE's finite differences and DALE's derivatives agree (the
        # remaining difference is ALE's c w^3 / 2 per bin, w = 0.2, ~0.2 in total)
        assert gap < 0.3
    else:
        # wide bins: ALE is off by ~c w^3 / 2 = 4 per bin, accumulated over the range
        assert gap > 5
        assert np.max(np.abs(a.values - truth)) > 5


# ------------------------------------------------ an independent implementation
def straightforward_dale(x, g, edges, z):
    """Bin-by-bin loops over the definition (first bin closed)."""
    K = len(edges) - 1
    counts, means, stds, var_mean = np.zeros(K), np.zeros(K), np.zeros(K), np.zeros(K)
    for k in range(K):
        lo, hi = edges[k], edges[k + 1]
        inside = (x >= lo) & (x <= hi) if k == 0 else (x > lo) & (x <= hi)
        gk = g[inside]
        counts[k], means[k], stds[k] = gk.size, gk.mean(), gk.std()
        var_mean[k] = gk.var(ddof=1) / gk.size
    effects = means * np.diff(edges)
    raw = np.concatenate([[0.0], np.cumsum(effects)])
    values = centre_like_ale(raw, counts)
    # the centred curve is linear in the bin effects: find its coefficients by centring
    # the accumulation of each unit bin effect
    coef = np.column_stack([centre_like_ale(np.concatenate([[0.0], np.cumsum(np.eye(K)[j])]),
                                            counts) for j in range(K)])
    sd = np.sqrt(coef ** 2 @ (np.diff(edges) ** 2 * var_mean))
    return values, counts, stds, (values - z * sd, values + z * sd), means


def test_matches_straightforward_implementation():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(700, 3))
    X[:, 1] = rng.exponential(size=700)

    def f(Z):
        return np.sin(Z[:, 0]) * Z[:, 1] + Z[:, 2] ** 2 * Z[:, 0]

    def grad(Z):
        return np.column_stack([np.cos(Z[:, 0]) * Z[:, 1] + Z[:, 2] ** 2, np.sin(Z[:, 0]),
                                2 * Z[:, 2] * Z[:, 0]])

    edges = {"x0": np.linspace(X[:, 0].min(), X[:, 0].max(), 9), "x1": 7, "x2": 12}
    effects = ml.dale(f, X, bins=edges, gradient=grad, confidence=0.9)
    G = grad(X)
    z = 1.6448536269514722  # 90% two-sided normal quantile
    for j, name in enumerate(["x0", "x1", "x2"]):
        eff = effects[name]
        np.testing.assert_allclose(eff.local_effects, G[:, j], rtol=0, atol=0)
        values, counts, stds, band, means = straightforward_dale(X[:, j], G[:, j], eff.grid, z)
        if name == "x0":
            np.testing.assert_array_equal(eff.grid, edges["x0"])
        else:  # ALE's reference edges: the minimum and type-1 quantiles
            xs = np.sort(X[:, j])
            K = edges[name]
            order = np.ceil(700 * np.arange(1, K + 1) / K).astype(int) - 1
            ref = np.unique(np.r_[xs[0], xs[order]])
            np.testing.assert_array_equal(eff.grid, ref)
        np.testing.assert_array_equal(eff.counts, counts)
        np.testing.assert_allclose(eff.values, values, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(eff.std, stds, rtol=1e-12)
        np.testing.assert_allclose(eff.band.lower, band[0], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(eff.band.upper, band[1], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(eff.bins.mean_derivative, means, rtol=1e-12)
        assert eff.method == "dale" and eff.extra["gradient"] == "callable"


def test_confidence_band_covers_the_conditional_truth():
    # given the x1 values, the curve's target is the accumulation of (bin mean of x1) x width;
    # the 95% band of the centred curve should cover it about 95% of the time at every edge
    f, grad = paper_model()
    hits, total = 0, 0
    for seed in range(150):
        X = paper_data(300, s=2.0, noise=0.5, seed=100 + seed)
        eff = ml.dale(f, X, features="x0", bins=6, gradient=grad)["x0"]
        k = np.clip(np.searchsorted(eff.grid, X[:, 0], side="left") - 1, 0, 5)
        mean_x1 = np.bincount(k, weights=X[:, 0]) / np.bincount(k)
        target = centre_like_ale(np.r_[0, np.cumsum(mean_x1 * np.diff(eff.grid))], eff.counts)
        lo, hi = (eff.band.lower, eff.band.upper)
        hits += np.sum((lo <= target) & (target <= hi))
        total += target.size
    assert 0.92 < hits / total < 0.98


# ------------------------------------------------------------ one gradient pass
def test_gradient_callable_is_called_once_for_fifty_features():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 50))
    w = rng.normal(size=50)
    calls = []

    def grad(Z):
        calls.append(Z.shape)
        return np.tile(w, (Z.shape[0], 1)) * np.cos(Z)

    model = CountingModel(lambda Z: np.sin(Z) @ w)
    effects = ml.dale(model, X, gradient=grad, bins=10)
    assert calls == [(300, 50)]
    assert model.calls == 1  # one row, asked when it is wrapped: it tells its one output
    assert list(effects) == [f"x{j}" for j in range(50)]
    for j in (0, 17, 49):
        np.testing.assert_allclose(effects[f"x{j}"].local_effects, w[j] * np.cos(X[:, j]))


def test_rebin_makes_no_model_calls():
    X = paper_data(1000)
    f, _ = paper_model()
    model = CountingModel(f)
    effects = ml.dale(model, X, bins=20)  # finite differences: one engine pass
    calls = model.calls
    assert calls >= 1
    eff = effects["x0"]
    five = eff.rebin(5)
    auto = eff.rebin("auto")
    edges = eff.rebin(np.linspace(0, 10, 4))
    assert model.calls == calls
    assert len(five.grid) == 6 and isinstance(auto, type(eff)) and len(edges.grid) == 4
    np.testing.assert_array_equal(five.local_effects, eff.local_effects)
    # the same as asking for 5 bins in the first place
    again = ml.dale(f, X, features="x0", bins=5)["x0"]
    np.testing.assert_allclose(five.values, again.values, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(five.counts, again.counts)
    # a re-binned effect re-bins again, and keeps its options unless told otherwise
    assert five.rebin(20).band.level == 0.95
    np.testing.assert_allclose(five.rebin(20).values, eff.values, atol=1e-12)
    assert eff.rebin(5, confidence=0.5).band.upper[0] < five.band.upper[0]


# ------------------------------------------------------------------ auto bins
def test_auto_bins_wide_on_linear_half_narrow_on_curved_half():
    rng = np.random.default_rng(7)
    n = 3000
    X = np.column_stack([rng.uniform(-2, 2, n), rng.normal(0, 1, n)])

    def grad(Z):  # linear in x0 (slope 1, heterogeneity 0.5 x1) for x0 < 0, wavy above
        d0 = 1 + 0.5 * Z[:, 1] + np.where(Z[:, 0] > 0, 4 * np.sin(4 * Z[:, 0]), 0.0)
        return np.column_stack([d0, 0.5 * Z[:, 0]])

    eff = ml.dale(lambda Z: Z[:, 0], X, features="x0", bins="auto", gradient=grad)["x0"]
    edges = eff.grid
    width, mid = np.diff(edges), (edges[:-1] + edges[1:]) / 2
    left, right = width[edges[1:] <= 0.1], width[mid > 0]
    assert left.size <= 2 and left.max() >= 1.5
    assert right.size >= 6
    assert right.mean() < left.max() / 4
    assert eff.counts.min() >= 10
    x = X[:, 0]
    counts = [np.sum((x > lo) & (x <= hi)) for lo, hi in zip(edges[:-1], edges[1:])]
    counts[0] += np.sum(x == edges[0])
    np.testing.assert_array_equal(eff.counts, counts)
    # the curve follows the truth: x0 on the left, x0 + (1 - cos 4 x0) on the right
    truth = centre_like_ale(edges + np.where(edges > 0, 1 - np.cos(4 * edges), 0), eff.counts)
    assert np.max(np.abs(eff.values - truth)) < 0.15


def test_auto_bins_on_binary_discrete_tied_and_constant_features():
    rng = np.random.default_rng(8)
    n = 2000
    binary = rng.integers(0, 2, n).astype(float)
    discrete = rng.integers(0, 5, n).astype(float)
    tied = np.where(rng.random(n) < 0.7, 0.0, rng.uniform(0, 1, n))
    const = np.full(n, 3.0)
    other = rng.normal(size=n)
    X = np.column_stack([binary, discrete, tied, const, other])

    def grad(Z):
        return np.column_stack([2 + Z[:, 4], 0.5 * Z[:, 1] + Z[:, 4], 2 * Z[:, 2] + 0.1 * Z[:, 4],
                                np.ones(len(Z)), Z[:, 0]])

    effects = ml.dale(lambda Z: Z.sum(1), X, bins="auto", gradient=grad, min_points=25)
    b = effects["x0"]
    np.testing.assert_array_equal(b.grid, [0.0, 1.0])
    assert b.values[1] - b.values[0] == pytest.approx(np.mean(2 + other))
    d = effects["x1"]
    assert set(d.grid) <= {0.0, 1.0, 2.0, 3.0, 4.0} and {0.0, 4.0} <= set(d.grid)
    t = effects["x2"]
    assert np.all(np.diff(t.grid) > 0) and t.grid[0] == 0.0 and t.grid[-1] == tied.max()
    assert t.counts.min() >= 25 and t.counts[0] >= 0.7 * n - 100
    truth = centre_like_ale(t.grid ** 2, t.counts)
    assert np.max(np.abs(t.values - truth)) < 0.05
    c = effects["x3"]
    np.testing.assert_array_equal(c.grid, [3.0])
    np.testing.assert_array_equal(c.values, [0.0])
    assert c.counts.size == 0
    # more points per bin than the data holds: one bin
    one = ml.dale(lambda Z: Z.sum(1), X, features="x4", bins="auto", gradient=grad,
                  min_points=5000)["x4"]
    assert len(one.grid) == 2


# -------------------------------------------------------------- result and plot
def test_effect_fields_frame_and_plot():
    import matplotlib.pyplot as plt

    X = paper_data(500)
    f, grad = paper_model()
    effects = ml.dale(f, X, bins=8, gradient=grad)
    eff = effects["x0"]
    assert isinstance(eff, ml.Effect)
    assert eff.values.shape == eff.grid.shape and eff.std.shape == eff.counts.shape
    assert eff.kind == "numeric" and eff.output == "f(x)"
    lo, hi = (eff.band.lower, eff.band.upper)
    assert np.all(lo <= eff.values) and np.all(eff.values <= hi) and np.all(hi - lo > 0)
    frame = effects.to_frame()
    assert set(frame.columns) >= {"feature", "method", "grid", "value", "std", "count"}
    assert (frame["method"] == "dale").all()
    ax = eff.plot()
    assert len(ax.collections) >= 1  # the confidence band
    plt.close("all")
    axes = effects.plot()
    assert not isinstance(axes, plt.Figure)
    plt.close(axes.flat[0].figure)


def test_missing_values_and_non_finite_gradients_are_left_out_with_a_warning():
    X = paper_data(400)
    X[:10, 0] = np.nan
    f, grad = paper_model()
    with pytest.warns(UserWarning, match="missing value"):
        eff = ml.dale(f, X, features="x0", bins=4, gradient=grad)["x0"]
    assert eff.counts.sum() == 390 and eff.local_effects.size == 390
    # the derivative of x2 is x1, NaN where x1 is missing
    with pytest.warns(UserWarning, match="NaN or inf at 10 of 400"):
        eff = ml.dale(f, X, features="x2", bins=4, gradient=grad)["x2"]
    assert eff.counts.sum() == 390


def test_dataframe_with_categorical_column():
    rng = np.random.default_rng(9)
    n = 300
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(1, 2, n),
                       "c": pd.Categorical(rng.choice(["x", "y"], n))})

    def f(frame):
        return frame["a"] ** 2 + (frame["c"] == "x") * frame["b"]

    with pytest.warns(UserWarning, match="skips the categorical"):
        effects = ml.dale(f, df, bins=5)
    assert list(effects) == ["a", "b"]
    np.testing.assert_allclose(effects["a"].local_effects, 2 * df["a"], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(effects["b"].local_effects, (df["c"] == "x").astype(float),
                               atol=1e-9)
    with pytest.raises(ValueError, match="ml.ale"):
        ml.dale(f, df, features=["a", "c"])


def test_boolean_column_is_left_to_ale():
    # shifted booleans reach the model cast back to True / False, so a finite
    # difference would read 0 whatever the model does with the column
    rng = np.random.default_rng(10)
    df = pd.DataFrame({"flag": rng.random(200) > 0.5, "x": rng.normal(size=200)})

    def f(frame):
        return (3 * frame["flag"].astype(float) + frame["x"]).to_numpy()

    with pytest.warns(UserWarning, match="categorical or boolean feature"):
        effects = ml.dale(f, df)
    assert list(effects) == ["x"]
    with pytest.raises(ValueError, match="categorical or boolean"):
        ml.dale(f, df, features="flag")
    step = ml.ale(f, df, features="flag")["flag"]
    assert step.values[1] - step.values[0] == pytest.approx(3.0)


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize("kwargs, match", [
    ({"bins": "fine"}, "bins must be"),
    ({"bins": 0}, "positive int"),
    ({"bins": [0.0, 2.0, 1.0]}, "strictly increasing"),
    ({"bins": [1.0]}, "at least 2"),
    ({"gradient": "numerical"}, "gradient must be one of"),
    ({"min_points": 0}, "min_points"),
    ({"confidence": 95}, "confidence"),
    ({"fd_step": -1.0}, "fd_step"),
    ({"features": [("x0", "x1")]}, "pairs"),
    ({"features": "nope"}, "unknown feature"),
])
def test_bad_input_errors(kwargs, match):
    X = paper_data(50)
    f, _ = paper_model()
    with pytest.raises(ValueError, match=match):
        ml.dale(f, X, **kwargs)


def test_bad_gradient_callable_errors():
    X = paper_data(50)
    f, _ = paper_model()
    with pytest.raises(ModelError, match=r"expected \(50, 3\)"):
        ml.dale(f, X, gradient=lambda Z: np.ones((50, 2)))
    with pytest.raises(ModelError, match="raised ZeroDivisionError"):
        ml.dale(f, X, gradient=lambda Z: 1 / 0)
    with pytest.raises(ModelError, match="every row"):
        ml.dale(f, X, features="x0", gradient=lambda Z: np.full(Z.shape, np.nan))
    with pytest.raises(ValueError, match="rebin|bins must be"):
        ml.dale(f, X, features="x0", bins=3)["x0"].rebin("many")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ml.dale(f, X, features="x0", bins=3)  # clean input, no warning


def test_dale_summaries_hold_little_beside_the_local_effects():
    # the local effects (one per row and feature) are the result; the summaries of the
    # features read transposed copies of their columns, at most an eighth of the data at
    # a time: the peak stays well under twice the data (a copy of all ten columns at once
    # took it past 2x)
    import tracemalloc

    X = np.random.default_rng(0).normal(size=(100_000, 10))
    w = np.linspace(-1, 1, 10)
    model, gradient = (lambda A: A @ w), (lambda A: np.tile(w, (len(A), 1)))
    ml.dale(model, X[:500], gradient=gradient, progress=False)  # first-call set-up
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        effects = ml.dale(model, X, gradient=gradient, progress=False)
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    assert len(effects) == 10
    assert peak < 1.8 * X.nbytes
