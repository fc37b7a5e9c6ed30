"""ml.interactions by brute force: closed forms, a direct reference, the engine, bad input.

Closed forms on independent U(-1, 1) features (mean 0, variance 1/3, E[x^4] = 1/5).
For a model ``f = x_j * g(x_-j)`` the sample statistic has an exact form:
the block is ``M[i, k] = x_kj g_i``, so ``F_j(x_kj) = x_kj * mean(g)``,
``F_-j(x_i) = mean(x_j) * g_i`` and the residual of the overall statistic is
``c_i - mean(c)`` with ``c = (x_j - mean x_j)(g - mean g)``: hence
``H2_j = sum (c - c_bar)^2 / sum (f - f_bar)^2`` on the sample, to rounding.
"""

import json
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens import InvalidParameterError, ModellensWarning, ModelError


def uniform(n, d, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, size=(n, d))


def f_pair(A):
    return A[:, 0] * A[:, 1] + A[:, 2]


def f_triple(A):
    return A[:, 0] * A[:, 1] * A[:, 2]


def ss(x):
    """Sum of squares about the mean."""
    x = np.asarray(x, float)
    return float(np.sum((x - x.mean()) ** 2))


def by_pair(h):
    return {(r.feature_1, r.feature_2): r for r in h.pairwise.itertuples()}


# ---------------------------------------------------------------- closed forms
def test_product_plus_additive_term_closed_forms():
    """f = x0 x1 + x2 (x3 unused): population H2_01 = 1, H2_0 = H2_1 = 1/4, others 0.

    H2_0: e = x0 x1 (means 0), E e^2 = 1/9, Var f = 1/9 + 1/3, so 1/4.  The
    estimator's sampling SD is sqrt(Var(psi) / n) with psi = (c^2 - f^2 / 4) /
    Var f, Var(psi) = 0.0304 / (4/9)^2 = 0.154 (moments of the uniform), so
    0.0124 at n = 1000: the tolerance 0.05 is 4 SD.  H2_01: F_01 - F_0 - F_1 =
    x0 x1, its whole joint effect, so 1; on the sample it differs from 1 by
    the products of means (O(1/n)), exactly as the sample form below says.
    Every statistic of x2 and x3 is 0 in exact arithmetic, on any sample.
    """
    n = 1000
    X = uniform(n, 4)
    h = ml.interactions(f_pair, X, sample=None, random_state=0)
    x0, x1, x2 = X[:, 0], X[:, 1], X[:, 2]
    fx = f_pair(X)
    # the sample's exact statistics
    c = (x0 - x0.mean()) * (x1 - x1.mean())
    assert h.overall["x0"] == pytest.approx(ss(c) / ss(fx), rel=1e-10)
    assert h.overall["x1"] == pytest.approx(ss(c) / ss(fx), rel=1e-10)
    p = x0 * x1 - np.mean(x0 * x1)
    resid = p - (x0 - x0.mean()) * x1.mean() - (x1 - x1.mean()) * x0.mean()
    pairs = by_pair(h)
    assert pairs[("x0", "x1")].h2 == pytest.approx(np.sum(resid ** 2) / np.sum(p ** 2),
                                                   rel=1e-10)
    assert pairs[("x0", "x1")].h2_unnormalized == pytest.approx(np.sqrt(np.mean(resid ** 2)),
                                                                rel=1e-10)
    # the population values within the sampling tolerance
    assert abs(h.overall["x0"] - 0.25) < 0.05 and abs(h.overall["x1"] - 0.25) < 0.05
    assert abs(pairs[("x0", "x1")].h2 - 1) < 0.02
    assert abs(pairs[("x0", "x1")].h2_unnormalized - 1 / 3) < 0.03  # sqrt(E x0^2 x1^2)
    # exact zeros (float rounding only)
    assert h.overall["x2"] < 1e-20 and h.overall["x3"] < 1e-20
    for pair in [("x0", "x2"), ("x1", "x2"), ("x2", "x3"), ("x0", "x3"), ("x1", "x3")]:
        assert pairs[pair].h2 < 1e-20, pair
    assert list(h.pairwise.columns) == ["feature_1", "feature_2", "h2", "h2_unnormalized",
                                        "std"]
    assert h.pairwise["h2"].is_monotonic_decreasing
    assert (h.pairwise.iloc[0].feature_1, h.pairwise.iloc[0].feature_2) == ("x0", "x1")


def test_additive_model_gives_zero_everywhere():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": rng.normal(size=150), "b": rng.uniform(size=150),
                          "c": rng.choice(["u", "v", "w"], size=150),
                          "d": rng.integers(0, 2, size=150).astype(bool)})

    def additive(F):
        return (np.sin(F["a"]) + F["b"] ** 2 + F["c"].map({"u": 1.0, "v": -2.0, "w": 0.5})
                + 3.0 * F["d"]).to_numpy(float)

    h = ml.interactions(additive, frame, sample=None, random_state=0)
    assert len(h.pairwise) == 6
    assert np.all(h.overall.to_numpy() < 1e-20)
    assert np.all(h.pairwise["h2"].to_numpy() < 1e-20)
    assert np.all(h.pairwise["h2_unnormalized"].to_numpy() < 1e-12)
    assert np.all(h.overall_unnormalized.to_numpy() < 1e-12)


def test_three_way_product():
    """f = x0 x1 x2 (x3 unused).

    Every one-feature PD is x_j E[x_k x_l] = 0 and F_-j = E[x_j] x_k x_l = 0,
    so the overall residual is f itself: H2_j = 1 for j = 0, 1, 2, and 0 for
    x3.  Every pair's joint PD x_j x_k E[x_l] is 0 too: no pair carries any
    of the effect, which is purely three-way.  On a sample the pair's joint
    PD is x_j x_k mean(x_l), of root mean square about 1/sqrt(27 n), against
    sd(f) = 1/sqrt(27): the unnormalised statistic sees it as noise while the
    normalised one is a ratio of noise (anything in [0, ~2]).
    """
    n = 1000
    X = uniform(n, 4, seed=1)
    h = ml.interactions(f_triple, X, sample=None, random_state=0)
    fx = f_triple(X)
    for j in range(3):
        xj = X[:, j]
        g = np.prod(np.delete(X[:, :3], j, axis=1), axis=1)
        c = (xj - xj.mean()) * (g - g.mean())
        assert h.overall[f"x{j}"] == pytest.approx(ss(c) / ss(fx), rel=1e-10)
        assert abs(h.overall[f"x{j}"] - 1) < 0.02  # the gap is O(1/n)
    assert h.overall["x3"] < 1e-20
    pairs = by_pair(h)
    sd_f = np.sqrt(1 / 27)
    for j, k in [(0, 1), (0, 2), (1, 2)]:
        (l,) = {0, 1, 2} - {j, k}
        xj, xk, xl = X[:, j], X[:, k], X[:, l]
        joint = xj * xk * xl.mean()
        joint = joint - joint.mean()
        fj = xj * np.mean(xk * xl)
        fk = xk * np.mean(xj * xl)
        resid = joint - (fj - fj.mean()) - (fk - fk.mean())
        row = pairs[(f"x{j}", f"x{k}")]
        assert row.h2 == pytest.approx(np.sum(resid ** 2) / np.sum(joint ** 2), rel=1e-9)
        # O(n^-1/2) noise: 4 times its expected size 1/(3 sqrt n), far below sd(f)
        assert row.h2_unnormalized < 4 / (3 * np.sqrt(n)) < sd_f / 4
    for j in range(3):
        assert pairs[(f"x{j}", "x3")].h2 < 1e-20


# ------------------------------------------------------- a direct reference
def reference(predict, frame, features):
    """The definitions computed directly: one model call per block column."""
    n = len(frame)
    f = predict(frame)

    def block(cols):
        M = np.empty((n, n))
        for k in range(n):
            Z = frame.copy()
            for c in cols:
                Z[c] = pd.Series([frame[c].iloc[k]] * n, dtype=frame[c].dtype, index=Z.index)
            M[:, k] = predict(Z)
        return M

    def centre(x):
        return x - x.mean()

    single = {c: block([c]) for c in features}
    overall = {}
    for c, M in single.items():
        e = centre(f) - centre(M.mean(0)) - centre(M.mean(1))
        overall[c] = np.sum(e ** 2) / np.sum(centre(f) ** 2)
    pairs = {}
    for a in range(len(features)):
        for b in range(a + 1, len(features)):
            ca, cb = features[a], features[b]
            joint = centre(block([ca, cb]).mean(0))
            e = joint - centre(single[ca].mean(0)) - centre(single[cb].mean(0))
            pairs[(ca, cb)] = (np.sum(e ** 2) / np.sum(joint ** 2), np.sqrt(np.mean(e ** 2)))
    return overall, pairs


def mixed_frame(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "num": rng.normal(size=n),
        "color": pd.Categorical(rng.choice(["red", "green", "blue"], size=n)),
        "text": rng.choice(["a", "b"], size=n).astype(object),
        "flag": rng.integers(0, 2, size=n).astype(bool),
        "small": rng.integers(0, 3, size=n).astype(float),
    })


def test_categorical_string_boolean_features_through_a_pipeline_match_the_definitions():
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    frame = mixed_frame()
    rng = np.random.default_rng(1)
    y = (frame["num"] * (frame["color"] == "red") + frame["flag"] * (frame["text"] == "a")
         + frame["small"] + 0.1 * rng.normal(size=len(frame))).to_numpy(float)
    pipe = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(), ["color", "text"])],
                          remainder="passthrough"),
        GradientBoostingRegressor(n_estimators=30, max_depth=3, random_state=0)).fit(frame, y)
    before = frame.copy()
    h = ml.interactions(pipe, frame, sample=None, random_state=0)
    pd.testing.assert_frame_equal(frame, before)  # the caller's data untouched
    assert h.method == "brute"
    overall, pairs = reference(pipe.predict, frame, list(frame.columns))
    for c, v in overall.items():
        assert h.overall[c] == pytest.approx(v, rel=1e-9, abs=1e-14)
    got = by_pair(h)
    for key, (h2, unnorm) in pairs.items():
        assert got[key].h2 == pytest.approx(h2, rel=1e-9, abs=1e-14)
        assert got[key].h2_unnormalized == pytest.approx(unnorm, rel=1e-9, abs=1e-14)
    # the boolean and categorical blocks used one column per level
    n = len(frame)
    levels = [frame[c].nunique() for c in frame.columns]
    pair_levels = [len(frame[[a, b]].drop_duplicates()) for i, a in enumerate(frame.columns)
                   for b in frame.columns[i + 1:]]
    assert h.n_model_rows == n + n * sum(levels) + n * sum(pair_levels)


def test_a_classifier_explains_its_probability():
    from sklearn.linear_model import LogisticRegression

    X = uniform(300, 3, seed=2)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    clf = LogisticRegression().fit(X, y)
    h = ml.interactions(clf, X, sample=None, random_state=0)
    assert h.output == "P(y = 1)"
    # a logistic model interacts on the probability scale only through the link
    assert 0 < h.overall["x0"] < 0.2
    hd = ml.interactions(clf, X, sample=None, random_state=0,
                         response_method="decision_function")
    assert np.all(hd.overall.to_numpy() < 1e-20)  # linear on the log-odds scale


# ------------------------------------------------------------- the engine
def test_same_numbers_whatever_the_chunks_and_threads():
    X = uniform(400, 4, seed=5)
    X[:, 3] = np.round(X[:, 3] * 2)  # a discrete feature: fewer columns per block

    def f(A):
        return np.sin(A[:, 0] * A[:, 1]) + A[:, 2] * A[:, 3] + A[:, 0]

    ref = ml.interactions(f, X, sample=300, random_state=7)
    for options in [dict(chunk_size=777), dict(chunk_size=300), dict(chunk_size=100_000),
                    dict(n_jobs=2, chunk_size=5000)]:
        h = ml.interactions(f, X, sample=300, random_state=7, **options)
        pd.testing.assert_series_equal(h.overall, ref.overall, check_exact=True)
        pd.testing.assert_series_equal(h.overall_std, ref.overall_std, check_exact=True)
        pd.testing.assert_frame_equal(h.pairwise, ref.pairwise, check_exact=True)
    np.testing.assert_array_equal(ref.rows, ml.interactions(f, X, sample=300,
                                                            random_state=7).rows)


def test_one_batched_plan_with_shared_feature_blocks():
    calls = []

    def f(A):
        calls.append(len(A))
        return A[:, 0] * A[:, 1] + A[:, 2]

    X = uniform(100, 3, seed=1)
    h = ml.interactions(f, X, sample=50, random_state=0, chunk_size=10**6)
    # the one row that tells f's outputs (asked when it is wrapped; no method's row), then f
    # at the rows, 3 feature blocks, 3 pair blocks: 50 + 6 * 50 * 50 rows in one call
    assert calls == [1, 50 + 6 * 2500] and h.n_model_rows == 15_050


def test_pairs_among_the_k_strongest_and_a_list():
    X = uniform(200, 5, seed=4)

    def f(A):
        return A[:, 0] * A[:, 1] + 0.5 * A[:, 2] * A[:, 3] + A[:, 4]

    full = ml.interactions(f, X, sample=None, random_state=0)
    top = ml.interactions(f, X, sample=None, random_state=0, pairs=3)
    strongest = list(full.overall.sort_values(ascending=False).index[:3])
    assert {frozenset(p) for p in zip(top.pairwise.feature_1, top.pairwise.feature_2)} \
        == {frozenset(p) for p in [(strongest[0], strongest[1]), (strongest[0], strongest[2]),
                                   (strongest[1], strongest[2])]}
    merged = top.pairwise.merge(full.pairwise, on=["feature_1", "feature_2"])
    np.testing.assert_array_equal(merged.h2_x, merged.h2_y)
    listed = ml.interactions(f, X, sample=None, random_state=0, pairs=[("x3", "x2"), (0, 4)])
    assert set(zip(listed.pairwise.feature_1, listed.pairwise.feature_2)) == {("x2", "x3"),
                                                                              ("x0", "x4")}
    none = ml.interactions(f, X, sample=None, random_state=0, pairs=[])
    assert len(none.pairwise) == 0 and len(none.overall) == 5
    pd.testing.assert_series_equal(none.overall, full.overall, check_exact=True)


def test_cost_guard_warns_with_the_planned_rows_and_cheaper_choices(monkeypatch):
    from modellens.effects import interactions as module

    monkeypatch.setattr(module, "COST_WARN_ROWS", 100_000)
    X = uniform(300, 8)
    # f at 100 rows, 8 feature blocks and 28 pair blocks of 100 x 100 rows each
    assert 100 + 8 * 100 * 100 + 28 * 100 * 100 == 360_100
    with pytest.warns(ModellensWarning, match=r"plans 360,100 model rows.*pairs=5.*sample="):
        ml.interactions(lambda A: A[:, 0], X, sample=100, pairs=None, random_state=0,
                        features=list(range(8)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ml.interactions(lambda A: A[:, 0], X, sample=20, random_state=0)


def test_smoke_runs_on_a_threaded_dask_client_with_the_same_numbers():
    """The fast loop's version of the process cluster below: a client in this process."""
    distributed = pytest.importorskip("distributed")
    X = uniform(300, 3, seed=2)
    ref = ml.interactions(f_pair, X, sample=120, random_state=0, chunk_size=1000)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2,
                            dashboard_address=None) as client, \
            ml.config(client=client, chunk_size=1000):
        h = ml.interactions(f_pair, X, sample=120, random_state=0)
    pd.testing.assert_frame_equal(h.pairwise, ref.pairwise, check_exact=True)
    pd.testing.assert_series_equal(h.overall, ref.overall, check_exact=True)


@pytest.mark.slow  # a process cluster (CI runs it, the fast loop does not)
def test_runs_on_a_dask_client_with_the_same_numbers():
    distributed = pytest.importorskip("distributed")
    cloudpickle = pytest.importorskip("cloudpickle")
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    X = uniform(300, 3, seed=2)
    ref = ml.interactions(f_pair, X, sample=120, random_state=0, chunk_size=1000)
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                       dashboard_address=None, host="127.0.0.1")
    try:
        with distributed.Client(cluster) as client, ml.config(client=client, chunk_size=1000):
            h = ml.interactions(f_pair, X, sample=120, random_state=0)
    finally:
        cluster.close()
    pd.testing.assert_frame_equal(h.pairwise, ref.pairwise, check_exact=True)
    pd.testing.assert_series_equal(h.overall, ref.overall, check_exact=True)


# ------------------------------------------------------------- the result
def test_result_round_trips_through_json_and_draws(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    h = ml.interactions(f_pair, uniform(120, 4), sample=80, random_state=0)
    back = ml.Interactions.from_dict(json.loads(json.dumps(h.to_dict(), allow_nan=False)))
    pd.testing.assert_series_equal(back.overall, h.overall)
    pd.testing.assert_series_equal(back.overall_std, h.overall_std)
    pd.testing.assert_frame_equal(back.pairwise, h.pairwise)
    np.testing.assert_array_equal(back.rows, h.rows)
    assert (back.sample_size, back.method, back.output, back.n_groups) == (80, "brute", "f(x)",
                                                                          20)
    frame = h.to_frame()
    assert len(frame) == 4 + 6 and set(frame.statistic) == {"overall", "pairwise"}
    assert "Interactions(method='brute'" in repr(h) and "('x0', 'x1')" in repr(h)
    axes = h.plot()
    assert len(axes) == 2 and [t.get_text() for t in axes[0].get_yticklabels()]
    fig, ax = plt.subplots()
    assert h.plot(ax=ax) is ax
    fig2, pair = plt.subplots(1, 2)
    assert tuple(h.plot(ax=pair)) == tuple(pair)
    plt.close("all")
    with pytest.raises(InvalidParameterError):
        ml.Interactions.from_dict({"type": "Effects"})


# ------------------------------------------------------------- bad input
def test_bad_input_gets_clear_errors():
    X = uniform(50, 3)
    f = f_pair
    with pytest.raises(InvalidParameterError, match="at least two features; X has one"):
        ml.interactions(lambda A: A[:, 0], X[:, :1])
    with pytest.raises(InvalidParameterError, match="names one feature"):
        ml.interactions(f, X, features=["x1"])
    with pytest.raises(InvalidParameterError, match="twice"):
        ml.interactions(f, X, pairs=[("x1", "x1")])
    with pytest.raises(InvalidParameterError, match="more than once"):
        ml.interactions(f, X, pairs=[("x1", "x2"), ("x2", "x1")])
    with pytest.raises(InvalidParameterError, match="nope"):
        ml.interactions(f, X, features=["x0", "nope"])
    with pytest.raises(InvalidParameterError, match="nope"):
        ml.interactions(f, X, pairs=[("x0", "nope")])
    with pytest.raises(InvalidParameterError, match="not among features"):
        ml.interactions(f, X, features=["x0", "x1"], pairs=[("x0", "x2")])
    with pytest.raises(InvalidParameterError, match="sample"):
        ml.interactions(f, X, sample=1)
    with pytest.raises(InvalidParameterError, match="sample"):
        ml.interactions(f, X, sample=0.5)
    with pytest.raises(InvalidParameterError, match="pairs=4"):
        ml.interactions(f, X, pairs=4)
    with pytest.raises(InvalidParameterError, match="pairs must be"):
        ml.interactions(f, X, pairs="x0")
    with pytest.raises(InvalidParameterError, match="a pair"):
        ml.interactions(f, X, pairs=[("x0",)])
    with pytest.raises(InvalidParameterError, match="method"):
        ml.interactions(f, X, method="exact")
    with pytest.raises(InvalidParameterError, match="at least 2 rows"):
        ml.interactions(f, X[:1])
    with pytest.raises(InvalidParameterError, match="random_state"):
        ml.interactions(f, X, random_state="x")
    with pytest.raises(InvalidParameterError, match="tree"):
        ml.interactions(f, X, method="tree")

    def sometimes_nan(A):
        out = A[:, 0] * A[:, 1]
        out[A[:, 2] > 0.9] = np.nan
        return out

    with pytest.raises(ModelError, match="NaN"):
        ml.interactions(sometimes_nan, uniform(200, 3), sample=None)


def test_a_sample_larger_than_the_data_uses_every_row():
    # sample is a cap (the default 500 on a small table is no mistake): no warning, no note
    X = uniform(30, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        h = ml.interactions(f_pair, X, sample=500, random_state=0)
    assert h.sample_size == 30 and sorted(h.rows.tolist()) == list(range(30))
    assert not h.notes
    same = ml.interactions(f_pair, X, sample=None, random_state=0)
    pd.testing.assert_frame_equal(h.pairwise, same.pairwise, check_exact=True)


def test_docstring_documents_references_and_runs_its_examples():
    import doctest

    doc = ml.interactions.__doc__
    assert "Examples\n" in doc and "References\n" in doc and ">>>" in doc
    assert doc.splitlines()[0].endswith((".", "?"))  # one sentence, or the question it answers
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in doctest.DocTestFinder().find(ml.interactions, "interactions", globs={}):
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted >= 3


def test_row_sums_in_waves_equal_unbuffered_adds_bit_for_bit():
    # the block's row sums add rows of answers into their groups' rows in entry order;
    # the vectorised waves must give np.add.at's floating-point sums exactly
    from modellens.effects._hstat import _add_in_order

    rng = np.random.default_rng(0)
    for trial in range(100):
        G, n, E = int(rng.integers(1, 25)), int(rng.integers(1, 40)), int(rng.integers(0, 80))
        start = rng.normal(size=(G, n)) * 10.0 ** rng.integers(-5, 5)
        index = rng.integers(0, G, E)
        values = rng.normal(size=(E, n)) * 10.0 ** rng.integers(-8, 8, size=(E, 1))
        expected, got = start.copy(), start.copy()
        for e in range(E):  # the sequential definition
            expected[index[e]] = expected[index[e]] + values[e]
        _add_in_order(got, index, values)
        np.testing.assert_array_equal(got, expected, err_msg=f"trial {trial}")
