"""ml.importance equals scikit-learn's permutation_importance (same seed, same scorer)."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.inspection import permutation_importance

import modellens as ml


def _regression(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=["a", "b", "c", "d"])
    y = 3 * X["a"] + X["b"] ** 2 - X["c"] + 0.3 * rng.normal(size=n)
    return X, y.to_numpy()


def _classification(n=200, seed=0, classes=2, labels=None):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=["a", "b", "c", "d"])
    score = 2 * X["a"] - X["b"] + 0.5 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    if labels is not None:
        y = np.asarray(labels)[y]
    return X, y


def _check(model, X, y, scoring, seed=3, n_repeats=4):
    ours = ml.importance(model, X, y, scoring=scoring, n_repeats=n_repeats, random_state=seed)
    ref = permutation_importance(model, X, y, scoring=scoring, n_repeats=n_repeats,
                                 random_state=seed)
    np.testing.assert_allclose(ours.importances, ref.importances, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.importances_mean, ref.importances_mean, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.importances_std, ref.importances_std, rtol=0, atol=1e-12)
    assert np.ptp(ours.importances_mean) > 0.01  # informative features stand out
    return ours


@pytest.mark.parametrize("scoring", [None, "r2", "neg_mean_squared_error",
                                     "neg_mean_absolute_error"])
def test_regressor_scores_equal_sklearn(scoring):
    from sklearn.ensemble import RandomForestRegressor

    X, y = _regression()
    model = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0).fit(X, y)
    _check(model, X, y, scoring)


@pytest.mark.parametrize("scoring", [None, "accuracy", "roc_auc", "neg_log_loss",
                                     "balanced_accuracy"])
@pytest.mark.parametrize("labels", [None, ["no", "yes"]])
def test_binary_classifier_scores_equal_sklearn(scoring, labels):
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = _classification(labels=labels)
    model = HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(X, y)
    _check(model, X, y, scoring)


@pytest.mark.parametrize("scoring", ["accuracy", "neg_log_loss", "roc_auc_ovr"])
def test_multiclass_classifier_scores_equal_sklearn(scoring):
    from sklearn.linear_model import LogisticRegression

    X, y = _classification(classes=3)
    model = LogisticRegression(max_iter=500).fit(X.to_numpy(), y)
    _check(model, X.to_numpy(), y, scoring)


@pytest.mark.parametrize("scoring", [None, "r2", "neg_mean_squared_error"])
def test_multi_output_regressor_scores_equal_sklearn(scoring):
    # review: a 2-D y (as scikit-learn scores a multi-output regressor) was refused
    from sklearn.ensemble import RandomForestRegressor

    X, y = _regression()
    Y = np.column_stack([y, X["d"] - 2 * X["b"]])
    model = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0).fit(X, Y)
    _check(model, X, Y, scoring)
    # a function answering (n, 2) is scored on both outputs too, as the estimator is
    ours = ml.importance(model.predict, X, Y, scoring=scoring, n_repeats=4, random_state=3)
    ref = permutation_importance(model, X, Y, scoring=scoring, n_repeats=4, random_state=3)
    np.testing.assert_allclose(ours.importances, ref.importances, rtol=0, atol=1e-12)
    with pytest.raises(ml.InvalidParameterError, match=r"2 outputs.*shape \(n, 2\)"):
        ml.importance(model, X, y)
    with pytest.raises(ml.InvalidParameterError, match="target= to score one"):
        ml.importance(model.predict, X, y)
    one = ml.importance(model.predict, X, Y[:, 1], target=1, n_repeats=2, random_state=0)
    assert np.argmax(one.importances_mean) == 1  # X["b"] drives the second output
    with pytest.raises(ml.InvalidParameterError, match="multi-label classifier"):
        from sklearn.ensemble import RandomForestClassifier

        labels = (Y > 0).astype(int)
        ml.importance(RandomForestClassifier(n_estimators=3).fit(X, labels), X, labels)


def test_decision_function_scorer_and_array_input():
    from sklearn.svm import LinearSVC

    X, y = _classification()
    model = LinearSVC().fit(X.to_numpy(), y)
    _check(model, X.to_numpy(), y, "roc_auc")  # reads decision_function


def test_every_permuted_copy_is_one_stream():
    from sklearn.linear_model import Ridge

    X, y = _regression(n=120)
    model = Ridge().fit(X, y)
    calls = []
    inner = model.predict
    model.predict = lambda A: (calls.append(len(A)), inner(A))[1]
    ml.importance(model, X, y, n_repeats=3, random_state=0, chunk_size=100_000)
    # the one row that tells a regressor's outputs (a multi-output one has several), then
    # the data rows (the baseline) and every copy of every feature in one chunk, once
    assert calls == [1, 120 * (1 + 4 * 3)]


@pytest.mark.parametrize("scoring", ["neg_log_loss", "roc_auc_ovr"])
def test_every_class_of_a_multiclass_response_is_one_pass(scoring):
    from sklearn.linear_model import LogisticRegression

    X, y = _classification(n=90, classes=3)
    model = LogisticRegression(max_iter=500).fit(X.to_numpy(), y)
    ref = permutation_importance(model, X.to_numpy(), y, scoring=scoring, n_repeats=2,
                                 random_state=1)
    calls = []
    inner = model.predict_proba
    model.predict_proba = lambda A: (calls.append(len(A)), inner(A))[1]
    ours = ml.importance(model, X.to_numpy(), y, scoring=scoring, n_repeats=2,
                         random_state=1, chunk_size=100_000)
    # three classes cost the rows of one: n (1 + d R), not once per class
    assert sum(calls) == 90 * (1 + 4 * 2)
    np.testing.assert_allclose(ours.importances, ref.importances, rtol=0, atol=1e-12)


def test_result_table_plot_and_round_trip():
    from sklearn.linear_model import Ridge

    X, y = _regression()
    imp = ml.importance(Ridge().fit(X, y), X, y, n_repeats=3, random_state=0)
    frame = imp.to_frame()
    assert list(frame.columns) == ["feature", "importances_mean", "importances_std"]
    assert frame["feature"].tolist() == ["a", "b", "c", "d"]
    assert imp.importances.shape == (4, 3)
    back = ml.Importance.from_dict(json.loads(json.dumps(imp.to_dict())))
    np.testing.assert_array_equal(back.importances, imp.importances)
    assert back.scoring == imp.scoring and back.baseline == imp.baseline
    ax = imp.plot()
    assert [t.get_text() for t in ax.get_yticklabels()][-1] == "a"


def test_callable_model_and_bad_input():
    X, y = _regression()
    f = lambda A: 3 * A[:, 0]  # noqa: E731
    imp = ml.importance(f, X.to_numpy(), y, random_state=0, n_repeats=2)
    assert imp.scoring == "r2" and np.argmax(imp.importances_mean) == 0
    with pytest.raises(ml.InvalidParameterError, match="one target per row of X"):
        ml.importance(f, X.to_numpy(), y[:10])
    with pytest.raises(ml.InvalidParameterError, match="n_repeats"):
        ml.importance(f, X.to_numpy(), y, n_repeats=0)
    with pytest.raises(ml.InvalidParameterError, match="scoring"):
        ml.importance(f, X.to_numpy(), y, scoring=["r2", "neg_mean_squared_error"])
