"""Results as a first-hour user handles them: for_output of a single output, InteractionPairs
saved as JSON."""

import json

import numpy as np
import pandas as pd
import pytest

import modellens as ml


@pytest.fixture(scope="module")
def iris():
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression

    X, y = load_iris(return_X_y=True, as_frame=True)
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    return LogisticRegression(max_iter=500).fit(X, labels), X


def _single_output_results(clf, X):
    """Every result type with for_output, asked for the one output "setosa"."""
    return [
        ml.pdp(clf, X, features=[0], target=["setosa"]),
        ml.pdp(clf, X, features=[0], target="setosa")[X.columns[0]],
        ml.ale(clf, X, features=[0], target=["setosa"]),
        ml.shapley(clf, X.iloc[:2], background=X.iloc[:30], target=["setosa"]),
        ml.lime(clf, X.iloc[:1], training_data=X, target=["setosa"], num_samples=300,
                random_state=0),
        ml.lime_width_sweep(clf, X.iloc[:1], training_data=X, target=["setosa"],
                            num_samples=300, random_state=0),
        ml.interactions(clf, X, target=["setosa"], sample=40, random_state=0),
        ml.regions(clf, X, features=[0], target=["setosa"]),
    ]


def test_for_output_of_its_own_single_output_is_the_result_itself(iris):
    clf, X = iris
    for result in _single_output_results(clf, X):
        for own in ("setosa", "P(y = setosa)", 0, -1, np.int64(0)):
            assert result.for_output(own) is result, (type(result).__name__, own)
        for other in ("virginica", "P(y = virginica)", 1, True):
            with pytest.raises(KeyError, match="has one output, 'P\\(y = setosa\\)'"):
                result.for_output(other)


def test_for_output_of_a_single_output_regressor_and_function():
    X = np.random.default_rng(0).normal(size=(80, 2))
    effects = ml.pdp(lambda A: A[:, 0] + A[:, 1], X, features=["x0"])
    assert effects.for_output("f(x)") is effects and effects.for_output(0) is effects
    with pytest.raises(KeyError, match="neither its name"):
        effects.for_output("x")
    attr = ml.shapley(lambda A: A[:, 0], X[:2], background=X)
    assert attr.for_output(0) is attr and attr.for_output("f(x)") is attr


def test_for_output_of_single_output_distributed_attributions():
    dd = pytest.importorskip("dask.dataframe")
    df = pd.DataFrame(np.random.default_rng(0).normal(size=(20, 2)), columns=["a", "b"])
    attr = ml.shapley(lambda D: np.asarray(D)[:, 0] * 2.0, dd.from_pandas(df, npartitions=2),
                      background=df)
    assert attr.outputs is None
    assert attr.for_output(0) is attr and attr.for_output(attr.output) is attr
    with pytest.raises(KeyError, match="has one output"):
        attr.for_output(1)


def test_interaction_pairs_survive_a_json_round_trip():
    X = np.random.default_rng(0).normal(size=(100, 4))

    def f(A):
        return A[:, 0] * A[:, 1] + np.sin(A[:, 2]) * A[:, 3]

    exact = ml.shapley(f, X[:10], background=X[:40], interactions=True).interaction_pairs()
    # sampled pairs carry standard errors (values with full float64 mantissas)
    sampled = ml.InteractionPairs(
        feature_1=exact.feature_1, feature_2=exact.feature_2, mean_abs=exact.mean_abs,
        mean=exact.mean, std=np.random.default_rng(1).random(len(exact)) / 3,
        output=exact.output, n_rows=exact.n_rows)
    assert exact.std is None
    for pairs in (exact, sampled):
        text = json.dumps(pairs.to_dict(), allow_nan=False)
        back = ml.InteractionPairs.from_dict(json.loads(text))
        assert type(back) is ml.InteractionPairs
        assert back.feature_1 == pairs.feature_1 and back.feature_2 == pairs.feature_2
        assert back.output == pairs.output and back.n_rows == pairs.n_rows
        for name in ("mean_abs", "mean", "std"):
            a, b = getattr(pairs, name), getattr(back, name)
            assert (a is None) == (b is None)
            if a is not None:
                assert b.dtype == a.dtype and b.tobytes() == a.tobytes()  # bit for bit
        pd.testing.assert_frame_equal(back.to_frame(), pairs.to_frame())
    with pytest.raises(ValueError, match="InteractionPairs.to_dict"):
        ml.InteractionPairs.from_dict({"type": "Interactions", "fields": {}})
