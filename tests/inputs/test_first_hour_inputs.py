"""Inputs a first-hour user gives: LightGBM's renamed columns, arrays for a model fit on a
DataFrame, a function's named outputs, feature_names= with a DataFrame."""

import warnings

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens import InvalidParameterError, ModelError, ModellensWarning
from modellens.models import lightgbm_names


# ------------------------------------------------- LightGBM: spaces stored as "_"
def _lightgbm_pair():
    """The same LightGBM classifier fit on spaced column names and on underscored ones."""
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["mean radius", "b", "c d"])
    y = (X.iloc[:, 0] + X.iloc[:, 1] * X.iloc[:, 2] > 0).astype(int)
    under = X.set_axis(["mean_radius", "b", "c_d"], axis=1)
    spaced = lgb.LGBMClassifier(n_estimators=20, verbose=-1).fit(X, y)
    plain = lgb.LGBMClassifier(n_estimators=20, verbose=-1).fit(under, y)
    assert list(spaced.feature_names_in_) == ["mean_radius", "b", "c_d"]  # LightGBM's renaming
    return spaced, X, plain, under


def test_lightgbm_spaced_columns_take_the_tree_algorithms():
    spaced, X, plain, under = _lightgbm_pair()
    got = ml.shapley(spaced, X.iloc[:5], algorithm="tree")
    want = ml.shapley(plain, under.iloc[:5], algorithm="tree")
    assert got.feature_names == ["mean radius", "b", "c d"]  # the user's names
    np.testing.assert_allclose(got.values, want.values, rtol=0, atol=1e-12)
    effect = ml.pdp(spaced, X, features=["c d"], method="tree")["c d"]
    np.testing.assert_allclose(effect.values,
                               ml.pdp(plain, under, features=["c_d"], method="tree")["c_d"].values,
                               rtol=0, atol=1e-12)
    h = ml.interactions(spaced, X, method="tree", response_method="decision_function")
    h_plain = ml.interactions(plain, under, method="tree", response_method="decision_function")
    np.testing.assert_allclose(h.overall.to_numpy(), h_plain.overall.to_numpy(), rtol=0,
                               atol=1e-12)


def test_lightgbm_spaced_columns_auto_picks_treeshap_on_the_log_odds():
    spaced, X, plain, under = _lightgbm_pair()
    # (on lead it fell back to a model-agnostic algorithm on the decision values)
    got = ml.shapley(spaced, X.iloc[:5], background=X.iloc[:50],
                     response_method="decision_function")
    want = ml.shapley(plain, under.iloc[:5], background=under.iloc[:50],
                      response_method="decision_function")
    assert got.method == want.method == "shapley-tree"
    assert got.output == want.output == "log-odds(y = 1)"
    np.testing.assert_allclose(got.values, want.values, rtol=0, atol=1e-12)


def test_lightgbm_names_rule_is_lightgbm_only_and_one_column_per_name():
    class NotLightGBM:
        pass

    assert lightgbm_names(NotLightGBM(), ["a b", "c"], ["a_b", "c"]) == ["a b", "c"]
    lgbm = type("LGBMRegressor", (), {"__module__": "lightgbm.sklearn"})()
    assert lightgbm_names(lgbm, ["a b", "c"], ["a_b", "c"]) == ["a_b", "c"]
    # a stored name that is a column itself keeps it; the spaced column stays as it is
    assert lightgbm_names(lgbm, ["a b", "a_b"], ["a_b", "x"]) == ["a b", "a_b"]
    # each spaced column its own stored name
    assert lightgbm_names(lgbm, ["a b", "a_b "], ["a_b", "a_b_"]) == ["a_b", "a_b_"]
    # two columns read as the same stored name: neither is it (no guess)
    assert lightgbm_names(lgbm, ["a b", "a b"], ["a_b", "z"]) == ["a b", "a b"]


# ------------------------------------- an array for a model fit on a DataFrame
def test_array_for_a_pipeline_fit_on_named_columns_says_what_to_pass():
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    y = (X.a + X.b > 0).astype(int)
    pipe = make_pipeline(ColumnTransformer([("s", StandardScaler(), ["a", "b", "c"])]),
                         LogisticRegression()).fit(X, y)
    with pytest.raises(ModelError, match=r"fit on a DataFrame with columns \['a', 'b', 'c'\].*"
                                         r"pass X as a DataFrame with those columns \(X has as "
                                         r"many columns"):
        ml.pdp(pipe, X.to_numpy(), features=[0])
    with pytest.raises(ModelError, match=r"array X of 2 columns: pass X as a DataFrame with "
                                         r"those columns\. The model's error"):
        ml.pdp(pipe, X.to_numpy()[:, :2], features=[0])
    # the DataFrame works, and the array is not renamed behind the user's back
    assert ml.pdp(pipe, X, features=["a"])["a"].values.shape == (20,)


# ------------------------------------------------ a function's named outputs
def _named(Z):
    return pd.DataFrame({"p": Z[:, 0] * Z[:, 1], "q": 2 * Z[:, 2]})


def _unnamed(Z):
    return np.column_stack([Z[:, 0] * Z[:, 1], 2 * Z[:, 2]])


def _numbers(result):
    if isinstance(result, ml.Effects):
        return result["x0"].values
    if isinstance(result, ml.Interactions):
        return result.overall.to_numpy()
    return result.values


def test_a_function_returning_a_dataframe_names_its_outputs_in_every_method():
    X = np.random.default_rng(0).normal(size=(120, 3))
    calls = [
        lambda f: ml.pdp(f, X, features=["x0"]),
        lambda f: ml.ale(f, X, features=["x0"], bins=5),
        lambda f: ml.shapley(f, X[:3], background=X[:30], random_state=0),
        lambda f: ml.lime(f, X[:1], training_data=X, num_samples=300, random_state=0),
        lambda f: ml.interactions(f, X, sample=40, random_state=0),
        lambda f: ml.lime_width_sweep(f, X[:1], training_data=X, num_samples=300,
                                      random_state=0),
    ]
    for call in calls:
        named, unnamed = call(_named), call(_unnamed)
        assert unnamed.outputs == ["f(x)[0]", "f(x)[1]"]
        assert named.outputs == ["p", "q"], named
        # the same numbers: only the names change
        np.testing.assert_array_equal(_numbers(named.for_output("q")),
                                      _numbers(unnamed.for_output(1)))
    effects = ml.pdp(_named, X, features=["x0"])
    np.testing.assert_array_equal(effects.for_output("q")["x0"].values,
                                  ml.pdp(_unnamed, X, features=["x0"]).for_output(1)["x0"].values)
    assert effects.for_output("q")["x0"].output == "q"
    assert ml.pdp(_named, X, features=["x0"], target=[1, 0]).outputs == ["q", "p"]


def test_a_function_returning_a_named_series_names_its_output():
    X = np.random.default_rng(1).normal(size=(100, 3))

    def risk(Z):
        return pd.Series(Z[:, 0] + Z[:, 1] * Z[:, 2], name="risk")

    def plain(Z):
        return Z[:, 0] + Z[:, 1] * Z[:, 2]

    assert ml.pdp(risk, X, features=["x0"])["x0"].output == "risk"
    assert ml.ale(risk, X, features=["x0"])["x0"].output == "risk"
    assert ml.interactions(risk, X, sample=30, random_state=0).output == "risk"
    assert ml.lime(risk, X[:1], training_data=X, num_samples=200, random_state=0).output == "risk"
    for algorithm in ("exact", "permutation"):
        got = ml.shapley(risk, X[:4], background=X[:20], algorithm=algorithm, random_state=0)
        want = ml.shapley(plain, X[:4], background=X[:20], algorithm=algorithm, random_state=0)
        assert got.output == "risk" and want.output == "f(x)"
        np.testing.assert_array_equal(got.values, want.values)
        # the answer that told the name is kept: no row is asked twice
        assert got.diagnostics["n_model_rows"] == want.diagnostics["n_model_rows"]
    # an unnamed Series, and a DataFrame with default labels, name nothing
    assert ml.pdp(lambda Z: pd.Series(plain(Z)), X, features=["x0"])["x0"].output == "f(x)"
    assert ml.pdp(lambda Z: pd.DataFrame(_unnamed(Z)), X, features=["x0"]).outputs == \
        ["f(x)[0]", "f(x)[1]"]


# ----------------------------------------- feature_names= with a DataFrame
def test_feature_names_that_differ_from_a_dataframes_columns_are_refused():
    X = pd.DataFrame(np.random.default_rng(0).normal(size=(50, 2)), columns=["a", "b"])

    def f(D):
        return np.asarray(D)[:, 0]

    with pytest.raises(InvalidParameterError, match=r"feature_names=\['x', 'y'\] differs from "
                                                    r"the columns of the DataFrame X \['a', 'b'\]"):
        ml.pdp(f, X, features=[0], feature_names=["x", "y"])
    with pytest.raises(InvalidParameterError, match="feature_names="):
        ml.shapley(f, X.iloc[:2], background=X, feature_names=["b", "a"])
    # the same names are accepted
    assert list(ml.pdp(f, X, features=[0], feature_names=["a", "b"])) == ["a"]


# ------------------------------------------------------------- the wording
def test_one_antithetic_pair_is_singular():
    X = np.random.default_rng(0).normal(size=(20, 3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ml.shapley(lambda A: A.sum(axis=1), X[:2], background=X, algorithm="permutation",
                   n_permutations=2, random_state=0)
    said = [str(w.message) for w in caught if issubclass(w.category, ModellensWarning)]
    assert any("gives 1 antithetic pair per row" in s for s in said), said
