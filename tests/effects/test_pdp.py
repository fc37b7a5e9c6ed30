import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.inspection import partial_dependence
from sklearn.linear_model import LinearRegression, LogisticRegression

import modellens as ml


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] ** 2 + np.sin(2 * X[:, 1]) + X[:, 2] * X[:, 3] + 0.1 * rng.normal(size=300)
    model = HistGradientBoostingRegressor(max_iter=50, random_state=0).fit(X, y)
    return model, X


def test_pd_and_ice_equal_sklearn_brute(regression):
    model, X = regression
    grids = {0: np.linspace(-2, 2, 7), 2: np.array([-1.0, 0.0, 0.5, 3.0])}
    ours = ml.pdp(model, X, features=[0, 2], grid=grids, ice=True)
    for j, values in grids.items():
        ref = partial_dependence(model, X, [j], method="brute", kind="both",
                                 custom_values={j: values})
        eff = ours[f"x{j}"]
        np.testing.assert_allclose(eff.grid, values)
        np.testing.assert_allclose(eff.values, ref["average"][0], rtol=0, atol=1e-8)
        np.testing.assert_allclose(eff.ice, ref["individual"][0], rtol=0, atol=1e-8)


def test_2d_pd_equals_sklearn_brute(regression):
    model, X = regression
    g0, g3 = np.linspace(-1.5, 1.5, 5), np.linspace(-1, 1, 4)
    ours = ml.pdp(model, X, features=[(0, 3)], grid={(0, 3): (g0, g3)})
    ref = partial_dependence(model, X, [0, 3], method="brute", custom_values={0: g0, 3: g3})
    eff = ours[("x0", "x3")]
    assert eff.values.shape == (5, 4)
    np.testing.assert_allclose(eff.values, ref["average"][0], atol=1e-8)


def test_classifier_probability_matches_sklearn():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] + X[:, 1] ** 2 > 1).astype(int)
    clf = GradientBoostingClassifier(n_estimators=20, random_state=0).fit(X, y)
    grid = np.linspace(-2, 2, 6)
    ours = ml.pdp(clf, X, features=1, grid=grid)
    ref = partial_dependence(clf, X, [1], method="brute", response_method="predict_proba",
                             custom_values={1: grid})
    np.testing.assert_allclose(ours["x1"].values, ref["average"][0], atol=1e-8)
    assert ours["x1"].output == "P(y = 1)"


def test_mean_of_ice_is_pd_and_centering(regression):
    model, X = regression
    eff = ml.pdp(model, X, features=1, ice=True)["x1"]
    np.testing.assert_allclose(eff.ice.mean(axis=0), eff.values, atol=1e-12)
    c = ml.pdp(model, X, features=1, ice=True, center=True)["x1"]
    np.testing.assert_allclose(c.ice[:, 0], 0.0, atol=1e-12)
    assert c.values[0] == 0.0
    np.testing.assert_allclose(c.ice, eff.ice - eff.ice[:, [0]], atol=1e-12)
    np.testing.assert_allclose(c.values, eff.values - eff.values[0], atol=1e-12)


def test_linear_model_pd_slope_is_coefficient():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(500, 3))
    beta = np.array([1.5, -2.0, 0.3])
    lm = LinearRegression().fit(X, X @ beta + 4)
    effects = ml.pdp(lm, X)
    for j, b in enumerate(beta):
        e = effects[j]
        slope = np.polyfit(e.grid, e.values, 1)[0]
        assert slope == pytest.approx(b, rel=1e-9)
        # and the level: PD(x) = b x + mean of the other terms
        expected = b * e.grid + 4 + (X @ beta - X[:, j] * b).mean()
        np.testing.assert_allclose(e.values, expected, atol=1e-9)


def test_default_grid_is_even_over_range_or_distinct_values():
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.uniform(2, 5, 100), rng.integers(0, 3, 100)])
    effects = ml.pdp(lambda A: A.sum(axis=1), X, grid=10)
    np.testing.assert_allclose(effects["x0"].grid, np.linspace(X[:, 0].min(), X[:, 0].max(), 10))
    np.testing.assert_allclose(effects["x1"].grid, [0, 1, 2])


def test_sample_cuts_model_rows():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(1000, 2))
    calls = []

    def f(A):
        calls.append(len(A))
        return A[:, 0] * A[:, 1]

    eff = ml.pdp(f, X, features=0, grid=5, ice=True, sample=50, random_state=0)["x0"]
    # (the first: one row that tells a function's outputs, asked when it is wrapped)
    assert calls[0] == 1 and sum(calls[1:]) == 50 * 5
    assert eff.ice.shape == (50, 5)
    assert len(eff.ice_rows) == 50
    again = ml.pdp(f, X, features=0, grid=5, ice=True, sample=50, random_state=0)["x0"]
    np.testing.assert_array_equal(eff.ice_rows, again.ice_rows)
    np.testing.assert_array_equal(eff.ice, again.ice)
    # ICE of the sampled rows equals f at those rows
    rows = X[eff.ice_rows]
    np.testing.assert_allclose(eff.ice, np.outer(rows[:, 1], eff.grid), atol=1e-12)


def test_chunking_does_not_change_numbers(regression):
    model, X = regression
    a = ml.pdp(model, X, ice=True)
    b = ml.pdp(model, X, ice=True, chunk_size=77, n_jobs=2)
    for k in a:
        np.testing.assert_allclose(a[k].ice, b[k].ice, atol=1e-12)
        np.testing.assert_allclose(a[k].values, b[k].values, atol=1e-12)


def test_one_model_pass_for_all_features():
    X = np.random.default_rng(5).normal(size=(100, 6))
    calls = []

    def f(A):
        calls.append(len(A))
        return A.sum(axis=1)

    ml.pdp(f, X, grid=10, chunk_size=10**6)
    assert calls == [1, 100 * 10 * 6]  # (the one row that tells a function's outputs)


def test_seed_example_pd_versus_mplot():
    # the lecture's example: y = -x1 + 2 x2 + eps with cor(x1, x2) = 0.9
    rng = np.random.default_rng(6)
    n = 5000
    cov = [[1, 0.9], [0.9, 1]]
    X = rng.multivariate_normal([0, 0], cov, size=n)
    y = -X[:, 0] + 2 * X[:, 1] + rng.normal(size=n)
    lm = LinearRegression().fit(X, y)
    pd_eff = ml.pdp(lm, X, features=0)["x0"]
    m_eff = ml.mplot(lm, X, features=0)["x0"]
    pd_slope = np.polyfit(pd_eff.grid, pd_eff.values, 1)[0]
    m_slope = np.polyfit(m_eff.grid, m_eff.values, 1, w=np.sqrt(m_eff.counts))[0]
    assert pd_slope == pytest.approx(-1, abs=0.05)
    assert m_slope == pytest.approx(0.8, abs=0.1)


def test_categorical_feature_one_point_per_level():
    X = pd.DataFrame({"color": pd.Categorical(["red", "blue", "red", "green"] * 25),
                      "size": np.arange(100.0)})
    effect = {"red": 1.0, "blue": 2.0, "green": 5.0}

    def f(df):
        return df["color"].map(effect).astype(float).to_numpy() + 0.01 * df["size"].to_numpy()

    eff = ml.pdp(f, X, features="color", ice=True)["color"]
    assert list(eff.grid) == ["blue", "green", "red"]
    np.testing.assert_allclose(eff.values, [2.0 + 0.495, 5.0 + 0.495, 1.0 + 0.495])
    assert eff.kind == "categorical"
    assert eff.ice.shape == (100, 3)


def test_effects_mapping_and_frames(regression):
    model, X = regression
    effects = ml.pdp(model, X, features=["x0", ("x1", "x2")], grid=5)
    assert list(effects) == ["x0", ("x1", "x2")]
    assert effects[0] is effects["x0"]
    with pytest.raises(KeyError):
        effects["nope"]
    frame = effects.to_frame()
    assert set(frame.columns) >= {"feature", "method", "grid", "grid2", "value"}
    assert (frame["method"] == "pdp").all()
    assert len(frame) == 5 + 25
    with pytest.raises(TypeError):
        effects["x0"] = None


def test_logistic_pipeline_target_selection():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(150, 2))
    y = np.where(X[:, 0] > 0.5, "high", np.where(X[:, 0] < -0.5, "low", "mid"))
    clf = LogisticRegression().fit(X, y)
    every = ml.pdp(clf, X, features=0)["x0"]  # every class
    assert every.outputs == ["P(y = high)", "P(y = low)", "P(y = mid)"]
    np.testing.assert_allclose(every.values.sum(axis=1), 1, atol=1e-12)
    by_label = ml.pdp(clf, X, features=0, target="low")["x0"]
    by_index = ml.pdp(clf, X, features=0, target=list(clf.classes_).index("low"))["x0"]
    np.testing.assert_allclose(by_label.values, by_index.values)
    np.testing.assert_array_equal(every.for_output("low").values, by_label.values)
    assert by_label.values[0] > by_label.values[-1]  # P(low) falls with x0
    with pytest.raises(ValueError, match="not one of the model's classes"):
        ml.pdp(clf, X, target="medium")


def test_large_n_is_streamed_in_bounded_chunks(capsys):
    import tracemalloc

    n, d = 1_000_000, 10
    X = np.random.default_rng(8).normal(size=(n, d))
    sizes = []

    def f(A):
        sizes.append(len(A))
        return A[:, 0] + A[:, 1]

    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    eff = ml.pdp(f, X, features=0, grid=5, chunk_size=100_000, progress=True)["x0"]
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # (the first: one row that tells a function's outputs, asked when it is wrapped)
    assert sizes[0] == 1 and max(sizes) == 100_000 and sum(sizes[1:]) == 5 * n
    # a few 8 MB chunks, never the 400 MB of all planned rows
    assert peak - base < 60 * 2**20
    np.testing.assert_allclose(eff.values, eff.grid + X[:, 1].mean(), atol=1e-9)
    assert "rows" in capsys.readouterr().err  # the tqdm bar
