"""ml.interactions(method="tree") equals the brute force on the same sample.

The brute force evaluates the model on the n x n blocks; the tree method reads
the same partial dependences from the leaves.  Both reduce the same group
sums, so every statistic (and its jackknife standard error) must agree to
float rounding.  The brute force is run on the trees' own float64 sum of
leaves (``TreeEnsemble.predict_raw``), which reads every row exactly as the
library does (tested in test_treeshap.py): XGBoost's own predict adds its
leaves in float32, which would hide a real difference below 1e-7; against the
library's predict the test allows float32 rounding only.
"""

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens import InvalidParameterError
from modellens.trees import DATA_CHECK_ROWS, tree_ensemble


def data(n=400, d=5, seed=0, nan=False):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = X[:, 0] * X[:, 1] + np.sin(3 * X[:, 2]) * X[:, 3] + X[:, 4] + 0.1 * rng.normal(size=n)
    if nan:
        X[rng.random(size=X.shape) < 0.05] = np.nan
    return X, y


def assert_same(a, b, scale, tol=1e-10):
    """Every statistic of ``a`` and ``b`` equal to ``tol`` (h2 is a ratio: scale 1)."""
    key = ["feature_1", "feature_2"]
    pa = a.pairwise.sort_values(key).reset_index(drop=True)
    pb = b.pairwise.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(pa[key], pb[key])
    np.testing.assert_allclose(pa.h2, pb.h2, rtol=0, atol=tol)
    np.testing.assert_allclose(pa["std"], pb["std"], rtol=0, atol=tol)
    np.testing.assert_allclose(pa.h2_unnormalized, pb.h2_unnormalized, rtol=0,
                               atol=tol * scale)
    np.testing.assert_allclose(a.overall, b.overall, rtol=0, atol=tol)
    np.testing.assert_allclose(a.overall_std, b.overall_std, rtol=0, atol=tol)
    np.testing.assert_allclose(a.overall_unnormalized, b.overall_unnormalized, rtol=0,
                               atol=tol * scale)
    np.testing.assert_array_equal(a.rows, b.rows)


def check(model, X, *, sample=150, library_tol=1e-10, raw=None, **kw):
    ens = tree_ensemble(model)
    raw = raw or (lambda A: ens.predict_raw(A)[:, 0])
    tree = ml.interactions(model, X, sample=sample, random_state=3, method="tree", **kw)
    # (the model rows of the check that the trees answer as the model does, no others)
    assert tree.method == "tree" and tree.n_model_rows == min(tree.sample_size, DATA_CHECK_ROWS)
    raw_h = ml.interactions(raw, X, sample=sample, random_state=3, method="brute",
                            progress=False)
    scale = float(np.nanstd(raw(X)))
    assert_same(tree, raw_h, scale)
    # and against the model's own predictions (XGBoost: float32 sums)
    own = ml.interactions(model, X, sample=sample, random_state=3, method="brute",
                          progress=False, **kw)
    assert_same(tree, own, scale, tol=library_tol)
    # a real structure was found, not all zeros
    assert tree.pairwise.h2.max() > 0.05
    return tree


def test_gradient_boosting():
    from sklearn.ensemble import GradientBoostingRegressor

    X, y = data()
    model = GradientBoostingRegressor(n_estimators=60, max_depth=4, random_state=0).fit(X, y)
    h = check(model, X)
    top = h.pairwise.iloc[:2]
    assert {frozenset(p) for p in zip(top.feature_1, top.feature_2)} == {
        frozenset(("x0", "x1")), frozenset(("x2", "x3"))}


def test_random_forest():
    from sklearn.ensemble import RandomForestRegressor

    X, y = data(seed=1)
    model = RandomForestRegressor(n_estimators=25, max_depth=7, random_state=0).fit(X, y)
    check(model, X)


def test_random_forest_classifier_probability():
    from sklearn.ensemble import RandomForestClassifier

    X, y = data(seed=2)
    model = RandomForestClassifier(n_estimators=20, max_depth=6, random_state=0).fit(X, y > 0)
    h = check(model, X)
    assert h.output == "P(y = True)"


def test_xgboost_with_missing_values():
    xgb = pytest.importorskip("xgboost")
    X, y = data(seed=4, nan=True)
    model = xgb.XGBRegressor(n_estimators=40, max_depth=4, learning_rate=0.3).fit(X, y)
    check(model, X, library_tol=1e-5)


def test_lightgbm_with_missing_values():
    lgb = pytest.importorskip("lightgbm")
    X, y = data(seed=5, nan=True)
    model = lgb.LGBMRegressor(n_estimators=40, num_leaves=15, min_child_samples=5,
                              verbose=-1).fit(X, y)
    check(model, X)


def test_boosted_classifier_on_its_log_odds():
    from sklearn.ensemble import GradientBoostingClassifier

    X, y = data(seed=6)
    model = GradientBoostingClassifier(n_estimators=30, max_depth=3, random_state=0).fit(X, y > 0)
    check(model, X, response_method="decision_function")
    # "auto" explains the probability, which is not the trees' output: brute force
    auto = ml.interactions(model, X, sample=40, random_state=0)
    assert auto.method == "brute" and auto.output == "P(y = True)"
    with pytest.raises(InvalidParameterError, match="decision_function"):
        ml.interactions(model, X, sample=40, method="tree")


def test_hist_gradient_boosting_with_a_categorical_column():
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(7)
    n = 400
    frame = pd.DataFrame({"a": rng.uniform(-1, 1, n),
                          "c": pd.Categorical(rng.choice(["p", "q", "r", "s"], n)),
                          "b": rng.uniform(-1, 1, n)})
    y = frame.a * frame.c.map({"p": 1.0, "q": -1.0, "r": 0.0, "s": 2.0}).astype(float) + frame.b
    model = HistGradientBoostingRegressor(max_iter=40, categorical_features="from_dtype",
                                          random_state=0).fit(frame, y)
    # the model's own float64 raw output reads the categories itself
    h = check(model, frame, raw=lambda F: model._raw_predict(F)[:, 0])
    assert (h.pairwise.iloc[0].feature_1, h.pairwise.iloc[0].feature_2) == ("a", "c")


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_native_categorical_splits_of_xgboost_and_lightgbm(library):
    rng = np.random.default_rng(8)
    n = 400
    frame = pd.DataFrame({"a": rng.uniform(-1, 1, n),
                          "c": pd.Categorical(rng.choice(["p", "q", "r", "s"], n)),
                          "b": rng.uniform(-1, 1, n)})
    y = frame.a * frame.c.map({"p": 1.0, "q": -1.0, "r": 0.0, "s": 2.0}).astype(float) + frame.b
    if library == "xgboost":
        xgb = pytest.importorskip("xgboost")
        model = xgb.XGBRegressor(n_estimators=30, max_depth=4, enable_categorical=True,
                                 tree_method="hist", random_state=0).fit(frame, y)
    else:
        lgb = pytest.importorskip("lightgbm")
        model = lgb.LGBMRegressor(n_estimators=30, num_leaves=15, min_child_samples=5,
                                  verbose=-1).fit(frame, y)
    tree = ml.interactions(model, frame, sample=150, random_state=3, method="tree")
    # (the model rows of the check that the trees answer as the model does, no others)
    assert tree.method == "tree" and tree.n_model_rows == min(tree.sample_size, DATA_CHECK_ROWS)
    # against the library's own predictions, which read the categories themselves
    # (XGBoost sums its leaves in float32: rounding of that size is allowed)
    brute = ml.interactions(model, frame, sample=150, random_state=3, method="brute",
                            progress=False)
    assert_same(tree, brute, float(np.std(model.predict(frame))), tol=1e-6)
    assert {tree.pairwise.iloc[0].feature_1, tree.pairwise.iloc[0].feature_2} == {"a", "c"}


def test_auto_picks_the_tree_method_and_pipelines_fall_back():
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = data(n=200)
    model = GradientBoostingRegressor(n_estimators=10, random_state=0).fit(X, y)
    assert ml.interactions(model, X, sample=30, random_state=0).method == "tree"
    pipe = make_pipeline(StandardScaler(), GradientBoostingRegressor(n_estimators=10)).fit(X, y)
    assert ml.interactions(pipe, X, sample=30, random_state=0).method == "brute"
    with pytest.raises(InvalidParameterError, match="Pipeline"):
        ml.interactions(pipe, X, sample=30, method="tree")


def test_pairs_among_the_strongest_and_in_batches(monkeypatch):
    from sklearn.ensemble import GradientBoostingRegressor

    from modellens.effects import _interactions_tree

    X, y = data(n=300, d=6, seed=8)
    model = GradientBoostingRegressor(n_estimators=30, max_depth=4, random_state=0).fit(X, y)
    whole = ml.interactions(model, X, sample=100, random_state=0, method="tree")
    # one pair per batch: the same numbers
    monkeypatch.setattr(_interactions_tree, "PAIR_BYTES", 1)
    monkeypatch.setattr(_interactions_tree, "MASK_BYTES", 8 * 50 * 100)  # several row blocks
    pieces = ml.interactions(model, X, sample=100, random_state=0, method="tree")
    pd.testing.assert_frame_equal(whole.pairwise, pieces.pairwise, check_exact=True)
    top = ml.interactions(model, X, sample=100, random_state=0, method="tree", pairs=3)
    brute = ml.interactions(model, X, sample=100, random_state=0, method="brute", pairs=3,
                            progress=False)
    assert_same(top, brute, float(np.std(model.predict(X))))
    assert len(top.pairwise) == 3


def test_a_pair_of_unused_features_gets_zero_not_rounding_noise():
    from sklearn.ensemble import GradientBoostingRegressor

    rng = np.random.default_rng(9)
    X = rng.uniform(-1, 1, size=(300, 4))
    y = X[:, 0] * X[:, 1] + 1e3
    train = X.copy()
    train[:, 2:] = 0.0  # constant in training: x2 and x3 are never split on
    model = GradientBoostingRegressor(n_estimators=20, random_state=0).fit(train, y)
    assert not np.isin([2, 3], tree_ensemble(model).feature[tree_ensemble(model).left >= 0]).any()
    for method in ("tree", "brute"):
        h = ml.interactions(model, X, sample=80, random_state=0, method=method, progress=False)
        row = h.pairwise.set_index(["feature_1", "feature_2"]).loc[("x2", "x3")]
        # brute force sees rounding noise (1e-13 at a prediction of 1e3) in the flat joint
        # partial dependence; its ratio would be anything in [0, 2]
        assert (row.h2, row.h2_unnormalized, row["std"]) == (0.0, 0.0, 0.0), method
        assert h.overall["x2"] < 1e-20 and h.overall["x3"] < 1e-20
        assert h.pairwise.iloc[0][["feature_1", "feature_2"]].tolist() == ["x0", "x1"]
