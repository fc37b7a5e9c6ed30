"""LIME for tables: recovery on linear models, reproducibility, the lime package as oracle."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.attribution._surrogate import fit_many, fit_outputs
from modellens.attribution.lime import TabularSampler, top_k_sets

COEF = np.array([3.0, -2.0, 1.0, 0.5])


@pytest.fixture(scope="module")
def train():
    return np.random.default_rng(0).normal(size=(1000, 4))


def linear(A):
    return np.asarray(A, dtype=float) @ COEF


def smooth(A):
    return np.tanh(np.asarray(A, dtype=float) @ COEF / 3)


# ------------------------------------------------------------ recovery on a linear model
def test_continuous_mode_recovers_coefficients(train):
    # z_j = (x_j - mean_j) / std_j, so the weight of a linear model is coef_j * std_j exactly
    # (up to the ridge penalty of 1 on 5000 samples)
    attr = ml.lime(linear, train[:5], training_data=train, discretize=None, random_state=0)
    expected = COEF * train.std(axis=0)
    assert attr.method == "lime" and attr.values.shape == (5, 4)
    np.testing.assert_allclose(attr.values, np.tile(expected, (5, 1)), rtol=0.02)
    assert (np.argsort(-np.abs(attr.values), axis=1) == np.argsort(-np.abs(COEF))).all()
    np.testing.assert_allclose(attr.score, 1.0, atol=1e-4)  # the ridge penalty costs a little
    np.testing.assert_allclose(attr.local_prediction, linear(train[:5]), atol=0.05)
    np.testing.assert_allclose(attr.prediction, linear(train[:5]))
    np.testing.assert_array_equal(attr.base_values, attr.intercept)


def test_quartile_mode_recovers_signs_and_order_up_to_discretisation(train):
    # an instance in the top quartile of every feature: "same bin" means "high", so each
    # weight is coef_j times (mean of the top bin - mean elsewhere), the same for every j
    edges = np.percentile(train, 75, axis=0)
    x = (edges + 1.0)[None]
    attr = ml.lime(linear, x, training_data=train, random_state=0, num_samples=20_000)
    w = attr.values[0]
    assert (np.sign(w) == np.sign(COEF)).all()
    assert list(np.argsort(-np.abs(w))) == list(np.argsort(-np.abs(COEF)))
    # E[y | z] is linear in z here, so the weight is coef_j times the gap between the mean
    # sample in the instance's bin and elsewhere (the sampler is checked against lime's below)
    X, Z = _sampler(train, "quartile").sample(x[0], 200_000, np.random.default_rng(1))
    gap = np.array([X[Z[:, j] == 1, j].mean() - X[Z[:, j] == 0, j].mean() for j in range(4)])
    np.testing.assert_allclose(w, COEF * gap, rtol=0.12)  # about 4 standard errors
    assert attr.surrogate.conditions[0][0].startswith("x0 >")


# ------------------------------------------------------------ reproducibility
def test_same_seed_same_numbers_different_seed_different_samples(train):
    a = ml.lime(smooth, train[:3], training_data=train, random_state=7, num_samples=500)
    b = ml.lime(smooth, train[:3], training_data=train, random_state=7, num_samples=500)
    c = ml.lime(smooth, train[:3], training_data=train, random_state=8, num_samples=500)
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.score, b.score)
    assert not np.array_equal(a.values, c.values)


def test_numbers_do_not_depend_on_chunks_or_threads(train):
    kw = dict(training_data=train, random_state=3, num_samples=700)
    a = ml.lime(smooth, train[:6], **kw)
    b = ml.lime(smooth, train[:6], chunk_size=333, **kw)
    c = ml.lime(smooth, train[:6], chunk_size=1000, n_jobs=2, **kw)
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.values, c.values)


def test_all_rows_go_through_the_model_in_few_large_calls(train):
    calls = []

    def f(A):
        calls.append(len(A))
        return smooth(A)

    ml.lime(f, train[:20], training_data=train, num_samples=500, random_state=0)
    # (the first: the one row that tells f's outputs, asked when it is wrapped)
    assert calls[0] == 1 and sum(calls[1:]) == 20 * 500
    assert len(calls) <= 3  # one stream, not a call per explained row


def test_caller_data_is_not_modified(train):
    X = train[:4].copy()
    t = train.copy()
    ml.lime(smooth, X, training_data=t, random_state=0, num_samples=200)
    np.testing.assert_array_equal(X, train[:4])
    np.testing.assert_array_equal(t, train)


# ------------------------------------------------------------ categorical through a Pipeline
def test_categorical_column_through_a_pipeline():
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(1)
    n = 600
    df = pd.DataFrame({"age": rng.normal(40, 10, n),
                       "colour": pd.Categorical(rng.choice(["red", "green", "blue"], n)),
                       "member": rng.random(n) < 0.5})
    y = ((df.colour == "red") * 3 + (df.age - 40) / 10 + rng.normal(0, 0.5, n) > 1).astype(int)
    pipe = make_pipeline(ColumnTransformer([("cat", OneHotEncoder(), ["colour"])],
                                           remainder="passthrough"),
                         LogisticRegression()).fit(df, y)
    rows = df.iloc[:8]
    attr = ml.lime(pipe, rows, training_data=df, random_state=0, num_samples=2000)
    assert attr.feature_names == ["age", "colour", "member"]
    assert attr.output == "P(y = 1)"
    j = attr.index_of("colour")
    red = (rows.colour == "red").to_numpy()
    assert red.any() and (~red).any()
    # "is red" keeps the probability up; "is green / blue" keeps it down
    assert (attr.values[red, j] > 0.1).all() and (attr.values[~red, j] < 0).all()
    assert attr.surrogate.conditions[int(np.flatnonzero(red)[0])][j] == "colour = red"
    assert list(attr.data[:, j]) == list(rows.colour)


def test_sampler_matches_lime_discretizer_statistics(train):
    from lime.discretize import DecileDiscretizer, QuartileDiscretizer

    for name, cls in (("quartile", QuartileDiscretizer), ("decile", DecileDiscretizer)):
        ours = _sampler(train, name)
        theirs = cls(train, [], [f"x{j}" for j in range(4)])
        for j in range(4):
            means, stds, lows, highs = ours.bin_stats[j]
            np.testing.assert_allclose(means, theirs.means[j])
            np.testing.assert_allclose(stds, theirs.stds[j])
            np.testing.assert_allclose(lows, theirs.mins[j])
            np.testing.assert_allclose(highs, theirs.maxs[j])
            np.testing.assert_array_equal(np.searchsorted(ours.edges[j], train[:, j]),
                                          theirs.discretize(train)[:, j])


def _sampler(train, discretize):
    from modellens.data import Dataset

    ds = Dataset.from_data(train)
    return TabularSampler(ds.values, ds.columns, discretize)


def test_binned_samples_stay_in_their_bins_with_training_frequencies(train):
    s = _sampler(train, "quartile")
    x0 = train[0]
    X, Z = s.sample(x0, 20000, np.random.default_rng(0))
    for j in range(4):
        bins = np.searchsorted(s.edges[j], X[1:, j])
        own = np.searchsorted(s.edges[j], x0[j])
        np.testing.assert_array_equal(Z[1:, j] == 1, bins == own)
        freq = np.bincount(bins, minlength=4) / bins.size
        np.testing.assert_allclose(freq, 0.25, atol=0.015)
        assert X[:, j].min() >= train[:, j].min() and X[:, j].max() <= train[:, j].max()
    np.testing.assert_array_equal(X[0], x0)


# ------------------------------------------------------------ surrogate pieces vs oracles
def _neighbourhood(seed=0, n=400, p=6):
    rng = np.random.default_rng(seed)
    Z = (rng.random((n, p)) < 0.5).astype(float)
    Z[0] = 1
    y = Z @ rng.normal(size=p) + 0.3 * Z[:, 0] * Z[:, 1] + rng.normal(0, 0.1, n)
    w = np.sqrt(np.exp(-((1 - Z).sum(axis=1) ** 2) / 2.0 ** 2))
    return Z, y, w


@pytest.mark.parametrize("selection, lime_name, k", [
    ("forward", "forward_selection", 3), ("highest_weights", "highest_weights", 3),
    ("lasso_path", "lasso_path", 3), ("none", "none", 6), ("auto", "auto", 3),
    ("auto", "auto", 6)])
def test_surrogate_equals_lime_base_on_the_same_samples(selection, lime_name, k):
    from lime.lime_base import LimeBase

    Z, y, w = _neighbourhood(seed=k)
    distances = np.sqrt(((Z - Z[0]) ** 2).sum(axis=1))
    kernel = lambda d: np.sqrt(np.exp(-d ** 2 / 2.0 ** 2))  # noqa: E731
    intercept, exp, score, local = LimeBase(kernel, random_state=0).explain_instance_with_data(
        Z, y[:, None], distances, 0, k, feature_selection=lime_name)
    (fit,) = fit_outputs(Z, y[:, None], kernel(distances), Z[0], k, selection)
    theirs = np.zeros(Z.shape[1])
    for j, v in exp:
        theirs[j] = v
    np.testing.assert_allclose(fit.coef, theirs, atol=1e-8)
    assert fit.intercept == pytest.approx(intercept, abs=1e-8)
    assert fit.score == pytest.approx(score, abs=1e-8)
    assert fit.local_prediction == pytest.approx(float(np.ravel(local)[0]), abs=1e-8)


def test_holdout_score_is_leave_one_out_refits():
    from sklearn.linear_model import Ridge
    from sklearn.metrics import r2_score

    Z, y, w = _neighbourhood(seed=4, n=60, p=4)
    loo = np.empty_like(y)
    for s in range(len(y)):
        keep = np.arange(len(y)) != s
        m = Ridge(alpha=1.0).fit(Z[keep], y[keep], sample_weight=w[keep])
        loo[s] = m.predict(Z[s:s + 1])[0]
    expected = r2_score(y, loo, sample_weight=w)
    (fit,) = fit_outputs(Z, y[:, None], w, Z[0], 4, "none")
    assert fit.score_holdout == pytest.approx(expected, abs=1e-10)
    assert fit.score_holdout < fit.score


@pytest.mark.parametrize("selection, k", [("none", 6), ("highest_weights", 3), ("forward", 2),
                                          ("lasso_path", 3)])
def test_neighbourhoods_fit_together_as_each_alone(selection, k):
    # the rows of a table are fit in one batched call: each row's fits are those it gets
    # alone, and the final fit is the weighted ridge of scikit-learn on its chosen columns
    from sklearn.linear_model import Ridge

    parts = [_neighbourhood(seed=s, n=300) for s in range(4)]
    Z = np.stack([Zb for Zb, _, _ in parts])
    w = np.stack([wb for _, _, wb in parts])
    Y = np.stack([np.column_stack([yb, Zb[:, 2] - 2 * yb]) for Zb, yb, _ in parts])
    many = fit_many(Z, Y, w, Z[:, 0], k, selection)
    for b in range(len(parts)):
        alone = fit_outputs(Z[b], Y[b], w[b], Z[b, 0], k, selection)
        for c in range(2):
            got, one = many[b][c], alone[c]
            np.testing.assert_array_equal(got.used, one.used)
            np.testing.assert_allclose(got.coef, one.coef, rtol=1e-12, atol=1e-12)
            for name in ("intercept", "score", "score_holdout", "local_prediction",
                         "shrinkage"):
                assert getattr(got, name) == pytest.approx(getattr(one, name), abs=1e-12)
            ridge = Ridge(alpha=1.0).fit(Z[b][:, got.used], Y[b, :, c], sample_weight=w[b])
            np.testing.assert_allclose(got.coef[got.used], ridge.coef_, atol=1e-9)
            assert got.intercept == pytest.approx(ridge.intercept_, abs=1e-9)


# ------------------------------------------------------------ the lime package as oracle
def _lime_runs(x, train, f, *, discretize, seeds, num_samples, kernel_width=None):
    from lime.lime_tabular import LimeTabularExplainer

    out = []
    for s in seeds:
        ex = LimeTabularExplainer(train, mode="regression", discretize_continuous=discretize
                                  is not None, discretizer=discretize or "quartile",
                                  feature_selection="none", kernel_width=kernel_width,
                                  random_state=s)
        e = ex.explain_instance(x, f, num_features=train.shape[1], num_samples=num_samples)
        w = np.zeros(train.shape[1])
        for j, v in e.local_exp[1]:  # regression mode: [1] holds the weights, [0] negated
            w[j] = v
        out.append(w)
    return np.array(out)


def _agree(ours, theirs, z=4.5):
    """Means within z standard errors, estimated from the repeated runs themselves."""
    se = np.sqrt(ours.var(axis=0, ddof=1) / len(ours) + theirs.var(axis=0, ddof=1) / len(theirs))
    return np.abs(ours.mean(axis=0) - theirs.mean(axis=0)) <= z * se + 1e-9


@pytest.mark.parametrize("discretize", [None, "quartile", "decile"])
def test_weights_match_lime_within_sampling_error(train, discretize):
    x = train[7]
    seeds = range(40)
    theirs = _lime_runs(x, train, smooth, discretize=discretize, seeds=seeds, num_samples=2000)
    ours = np.array([ml.lime(smooth, x[None], training_data=train, discretize=discretize,
                             feature_selection="none", num_samples=2000,
                             random_state=s).values[0] for s in seeds])
    assert _agree(ours, theirs).all(), (ours.mean(0), theirs.mean(0))
    # the spread over seeds is lime's too (same sampler, same estimator)
    ratio = ours.std(axis=0) / theirs.std(axis=0)
    assert ((ratio > 0.5) & (ratio < 2.0)).all(), ratio
    # the comparison has power: the tolerance is under a fifth of the largest weight, and
    # a changed setting (a kernel twice as wide; deciles for quartiles) is told apart
    se = np.sqrt(ours.var(axis=0, ddof=1) / 40 + theirs.var(axis=0, ddof=1) / 40)
    top = np.argmax(np.abs(theirs.mean(axis=0)))
    assert 4.5 * se[top] < 0.2 * np.abs(theirs.mean(axis=0)[top])
    changed = {"discretize": discretize, "kernel_width": 3.0} if discretize is None else \
        {"discretize": "decile" if discretize == "quartile" else "quartile"}
    other = np.array([ml.lime(smooth, x[None], training_data=train, feature_selection="none",
                              num_samples=2000, random_state=s, **changed).values[0]
                      for s in seeds])
    assert not _agree(other, theirs).all()


# ------------------------------------------------------------ trust figures
def test_stability_figures(train):
    attr = ml.lime(smooth, train[:4], training_data=train, random_state=0, num_samples=400,
                   stability=5)
    st = attr.surrogate.stability
    assert st["repeats"] == 5 and st["top_k"] == 3
    assert st["weight_std"].shape == (4, 4) and (st["weight_std"] > 0).all()
    assert ((st["top_k_overlap"] >= 0) & (st["top_k_overlap"] <= 1)).all()
    # asking for stability does not change the explanation: the first repeat is returned
    plain = ml.lime(smooth, train[:4], training_data=train, random_state=0, num_samples=400)
    np.testing.assert_array_equal(plain.values, attr.values)
    # a deterministic linear explanation is perfectly stable
    lin = ml.lime(linear, train[:4], training_data=train, discretize=None, random_state=0,
                  num_samples=400, stability=3)
    assert lin.surrogate.stability["same_top_k"].all()
    np.testing.assert_allclose(lin.surrogate.stability["top_k_overlap"], 1.0)


def test_top_k_sets():
    v = np.array([[0.1, -3.0, 2.0, 0.0], [1.0, 1.0, -1.0, 0.5]])
    np.testing.assert_array_equal(top_k_sets(v, 2), [[0, 1, 1, 0], [1, 1, 0, 0]])


def test_holdout_score_flags_a_poor_surrogate(train):
    # a model with a sharp interaction is not linear in the bins: low R^2, held out lower
    f = lambda A: np.sin(3 * A[:, 0]) * np.cos(3 * A[:, 1])  # noqa: E731
    attr = ml.lime(f, train[:5], training_data=train, random_state=0, num_samples=1000)
    good = ml.lime(linear, train[:5], training_data=train, random_state=0, discretize=None,
                   num_samples=1000)
    assert (attr.surrogate.score_holdout <= attr.score + 1e-12).all()
    assert attr.surrogate.score_holdout.max() < 0.5 < good.surrogate.score_holdout.min()


def test_width_sweep(train):
    sweep = ml.lime_width_sweep(smooth, train[:1], training_data=train, random_state=0,
                                num_samples=800, discretize=None)
    assert sweep.values.shape == (25, 4) and sweep.widths.shape == (25,)
    assert np.all(np.diff(sweep.widths) > 0)
    # the width sweep reuses one neighbourhood: its default width gives lime's answer
    at = ml.lime_width_sweep(smooth, train[:1], training_data=train, random_state=0,
                             num_samples=800, discretize=None, widths=[1.5])
    same = ml.lime(smooth, train[:1], training_data=train, random_state=0, num_samples=800,
                   discretize=None, feature_selection="none")
    np.testing.assert_allclose(at.values[0], same.values[0])
    # wide kernels converge to the global linear fit: weights settle
    np.testing.assert_allclose(sweep.values[-1], sweep.values[-2], rtol=0.05, atol=1e-3)
    ax = sweep.plot()
    assert ax.get_xscale() == "log"


# ------------------------------------------------------------ bad input
def test_bad_input_gets_clear_errors(train):
    with pytest.raises(ml.InvalidParameterError, match="num_features=5 is larger than the 4"):
        ml.lime(linear, train[:2], training_data=train, num_features=5)
    with pytest.raises(ml.InvalidParameterError, match="training_data is required"):
        ml.lime(linear, train[:2], training_data=None)
    bad = train[:2].copy()
    bad[0, 1] = np.nan
    # a missing value is explained as one (its own bin) when the model takes it; a model
    # that does not says so, naming the column
    with pytest.raises(ml.ModelError, match=r"NaN.*\['x1'\]"):
        ml.lime(linear, bad, training_data=train)
    with pytest.raises(ml.InvalidParameterError, match="discretize"):
        ml.lime(linear, train[:2], training_data=train, discretize="octile")
    with pytest.raises(ml.InvalidParameterError, match="feature_selection"):
        ml.lime(linear, train[:2], training_data=train, feature_selection="greedy")
    with pytest.raises(ml.InvalidParameterError, match="kernel_width"):
        ml.lime(linear, train[:2], training_data=train, kernel_width=-1)
    # a function of two outputs explains both (issue 28), no longer an error
    two = ml.lime(lambda A: np.column_stack([A[:, 0], A[:, 1]]), train[:2], training_data=train,
                  num_samples=50)
    assert two.values.shape == (2, train.shape[1], 2)
    with pytest.raises(ml.ModelError, match="returned shape"):
        ml.lime(lambda A: A[:-1, 0], train[:2], training_data=train, num_samples=50)


def test_defaults_fit_small_data(train):
    attr = ml.lime(linear, train[:2], training_data=train, num_samples=100, random_state=0)
    assert (attr.values != 0).sum(axis=1).max() <= 4


# ------------------------------------------------------------ results and plots
def test_result_round_trip_indexing_and_plots(train):
    attr = ml.lime(smooth, train[:6], training_data=train, random_state=0, num_samples=300)
    back = ml.Attributions.from_dict(json.loads(json.dumps(attr.to_dict())))
    np.testing.assert_array_equal(back.values, attr.values)
    np.testing.assert_array_equal(back.score, attr.score)
    sub = attr[2:4, ["x0", "x2"]]
    np.testing.assert_array_equal(sub.score, attr.score[2:4])
    np.testing.assert_array_equal(sub.intercept, attr.intercept[2:4])
    ax = attr.plot.weights(1)
    assert "R\u00b2" in ax.get_title()
    assert f"{attr.score[1]:.2f}" in ax.get_title()
    attr.plot.beeswarm()
    attr.plot.bar()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        attr.plot.waterfall(0)


# ------------------------------------------------------------ shared draws
def test_shared_sampling_costs_one_neighbourhood_and_keeps_each_explanation(train):
    calls = []

    def f(A):
        calls.append(len(A))
        return smooth(A)

    X = train[:12]
    shared = ml.lime(f, X, training_data=train, num_samples=800, random_state=2,
                     sampling="shared")
    # (the first: the one row that tells f's outputs, asked when it is wrapped)
    assert sum(calls[1:]) == 799 + 12 and shared.diagnostics["n_model_rows"] == 811
    # every row is fit on its own prediction in front of the same draws: alone, the same
    alone = ml.lime(smooth, X[[5]], training_data=train, num_samples=800, random_state=2,
                    sampling="shared")
    np.testing.assert_allclose(alone.values[0], shared.values[5], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(shared.prediction, smooth(X))
    lin = ml.lime(linear, X, training_data=train, discretize=None, sampling="shared",
                  random_state=0)
    np.testing.assert_allclose(lin.values, np.tile(COEF * train.std(axis=0), (12, 1)),
                               rtol=0.02)


def test_shared_sampling_has_the_per_row_distribution(train):
    # the same neighbourhood distribution: means over seeds agree within sampling error
    x = train[[3, 9]]
    kw = dict(training_data=train, num_samples=1000, feature_selection="none")
    own = np.array([ml.lime(smooth, x, random_state=s, **kw).values for s in range(30)])
    shared = np.array([ml.lime(smooth, x, random_state=100 + s, sampling="shared", **kw).values
                       for s in range(30)])
    se = np.sqrt(own.var(axis=0, ddof=1) / 30 + shared.var(axis=0, ddof=1) / 30)
    assert (np.abs(own.mean(axis=0) - shared.mean(axis=0)) <= 4.5 * se + 1e-9).all()
    with pytest.raises(ml.InvalidParameterError, match="sampling"):
        ml.lime(smooth, x, training_data=train, sampling="pooled")


def test_indexing_selects_the_trust_figures_of_the_rows(train):
    attr = ml.lime(smooth, train[:5], training_data=train, random_state=0, num_samples=300,
                   stability=3)
    sub = attr[[3, 1], ["x2", "x0"]]
    np.testing.assert_array_equal(sub.surrogate.score_holdout, attr.surrogate.score_holdout[[3, 1]])
    assert sub.surrogate.conditions == [[attr.surrogate.conditions[i][j] for j in (2, 0)]
                                       for i in (3, 1)]
    st, full = sub.surrogate.stability, attr.surrogate.stability
    np.testing.assert_array_equal(st["weight_std"], full["weight_std"][[3, 1]][:, [2, 0]])
    np.testing.assert_array_equal(st["same_top_k"], full["same_top_k"][[3, 1]])
    assert f"{attr.surrogate.score_holdout[3]:.2f}" in attr[3].plot.weights().get_title()


def test_one_series_row_of_a_frame(train):
    df = pd.DataFrame(train, columns=list("abcd"))
    f = lambda X: smooth(np.asarray(X))  # noqa: E731
    row = ml.lime(f, df.iloc[4], training_data=df, random_state=0, num_samples=300)
    frame = ml.lime(f, df.iloc[[4]], training_data=df, random_state=0, num_samples=300)
    np.testing.assert_array_equal(row.values, frame.values)
    assert row.feature_names == list("abcd")
