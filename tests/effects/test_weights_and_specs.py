"""sample_weight= for pdp and importance (equal to scikit-learn's), dict grid=/bins= entries
checked against the features asked for, and Dask ICE samples labelled by the index (issue #42)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
from sklearn.inspection import partial_dependence, permutation_importance

import modellens as ml
from modellens import InvalidParameterError, ModellensWarning

_rng = np.random.default_rng(3)
X = pd.DataFrame(_rng.normal(size=(160, 3)), columns=["a", "b", "c"])
Y = X["a"] ** 2 + X["b"] * X["c"]
W = _rng.uniform(0, 3, len(X))
W[:20] = 0.0  # rows that must not count at all
REG = GradientBoostingRegressor(n_estimators=25, max_depth=3, random_state=0).fit(X, Y)


@pytest.mark.parametrize("feature", ["a", "b"])
def test_weighted_pdp_equals_scikit_learns(feature):
    theirs = partial_dependence(REG, X, [feature], sample_weight=W, grid_resolution=12,
                                kind="average")
    ours = ml.pdp(REG, X, feature, grid=theirs["grid_values"][0], sample_weight=W)
    assert np.allclose(ours[feature].values, theirs["average"][0], rtol=0, atol=1e-12)
    # and the weights matter here: the unweighted curve is another one
    plain = ml.pdp(REG, X, feature, grid=theirs["grid_values"][0])
    assert np.abs(plain[feature].values - theirs["average"][0]).max() > 1e-3


def test_weighted_pdp_of_a_classifier_and_with_ice():
    y = (Y > Y.median()).astype(int)
    clf = GradientBoostingClassifier(n_estimators=15, random_state=0).fit(X, y)
    theirs = partial_dependence(clf, X, ["a"], sample_weight=W, grid_resolution=8,
                                response_method="predict_proba", kind="both")
    ours = ml.pdp(clf, X, "a", grid=theirs["grid_values"][0], sample_weight=W, ice=True)
    assert np.allclose(ours["a"].values, theirs["average"][0], atol=1e-12)
    assert np.allclose(ours["a"].ice, theirs["individual"][0], atol=1e-12)  # ICE unweighted


def test_weighted_importance_equals_scikit_learns():
    ours = ml.importance(REG, X, Y, sample_weight=W, n_repeats=4, random_state=0)
    theirs = permutation_importance(REG, X, Y, sample_weight=W, n_repeats=4, random_state=0)
    assert np.allclose(ours.importances, theirs.importances, rtol=0, atol=1e-12)
    plain = ml.importance(REG, X, Y, n_repeats=4, random_state=0)
    assert np.abs(plain.importances - theirs.importances).max() > 1e-4


@pytest.mark.parametrize("bad", [np.ones(5), -np.ones(len(X)), np.zeros(len(X)),
                                 np.full(len(X), np.nan)])
def test_bad_weights_are_errors(bad):
    with pytest.raises(InvalidParameterError, match="sample_weight"):
        ml.pdp(REG, X, "a", sample_weight=bad)
    with pytest.raises(InvalidParameterError, match="sample_weight"):
        ml.importance(REG, X, Y, sample_weight=bad)


def test_weights_with_the_tree_method_are_an_error():
    with pytest.raises(InvalidParameterError, match="method='brute'"):
        ml.pdp(REG, X, "a", method="tree", sample_weight=W)


def f(D):
    return np.asarray(D["a"], dtype=float) + np.asarray(D["b"], dtype=float)


@pytest.mark.parametrize("method,option", [(ml.pdp, "grid"), (ml.mplot, "grid"),
                                           (ml.ale, "bins"), (ml.dale, "bins")])
def test_a_misspelled_entry_is_an_error_and_an_unused_one_a_warning(method, option):
    with pytest.raises(InvalidParameterError, match="unknown feature 'aa'"):
        method(f, X, ["a"], **{option: {"aa": 5}})
    with pytest.warns(ModellensWarning, match=rf"{option}= has entries for \['b'\]"):
        method(f, X, ["a"], **{option: {"a": 5, "b": 5}})
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModellensWarning)
        method(f, X, ["a", "b"], **{option: {"a": 5, "b": 6}})  # every entry used


def test_a_features_entry_serves_the_pairs_it_is_part_of():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModellensWarning)
        ml.pdp(f, X, [("a", "b")], grid={"a": 4, "b": 5})
    with pytest.warns(ModellensWarning, match=r"\('a', 'c'\)"):
        ml.pdp(f, X, [("a", "b")], grid={("a", "c"): 4})


def test_dask_ice_samples_keep_the_index_labels():
    dd = pytest.importorskip("dask.dataframe")
    labelled = X.set_axis([f"r{i:03d}" for i in range(len(X))])
    table = dd.from_pandas(labelled, npartitions=4)
    effect = ml.pdp(f, table, "a", ice=True, sample=9, random_state=0, grid=4)["a"]
    whole = table.compute()
    assert list(effect.ice_labels) == list(whole.index[effect.ice_rows])
    in_memory = ml.pdp(f, whole, "a", ice=True, sample=9, random_state=0, grid=4)["a"]
    assert list(effect.ice_labels) == list(in_memory.ice_labels)
    # a default index: the labels are the positions, as in memory
    plain = ml.pdp(f, dd.from_pandas(X, npartitions=3), "a", ice=True, sample=5, grid=4)
    assert plain["a"].ice_labels is None
