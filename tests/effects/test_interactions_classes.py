"""H statistics of a model of several outputs: one set of pairs for every output (the pair
rows do not grow with the outputs), and the features' blocks read exactly from a boosted
classifier's trees (its probabilities), equal to the model rows' statistics."""

import itertools

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.effects import interactions as inter_module

TOL = dict(atol=1e-10, rtol=0)


def three_ways(X):
    """Three outputs, each hanging on its own product of two features (so each output's
    strongest features differ), of sizes 3, 2 and 1, plus an additive term."""
    A = np.asarray(X, dtype=np.float64)
    return np.column_stack([3 * A[:, 0] * A[:, 1], 2 * A[:, 2] * A[:, 3],
                            A[:, 4] * A[:, 5]]) + 0.3 * A[:, 6:7]


def _frame(n=120, d=7, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(rng.uniform(-1, 1, (n, d)).round(1), columns=[f"x{j}" for j in range(d)])


def _pairs(result):
    return set(zip(result.pairwise["feature_1"], result.pairwise["feature_2"]))


def test_shared_pairs_are_one_set_for_every_output_and_cost_one_block_each():
    X, model = _frame(), three_ways
    kw = dict(sample=60, random_state=0, method="brute", progress=False)
    shared = ml.interactions(model, X, pairs=2, shared_pairs=True, **kw)
    own = ml.interactions(model, X, pairs=2, **kw)
    # the rule: the 2 features of the largest summed unnormalised overall statistic squared
    # (here the largest output's pair)
    total = sum(shared.for_output(c).overall_unnormalized ** 2 for c in range(3))
    top = sorted(total.sort_values(ascending=False).index[:2], key=list(X.columns).index)
    assert top == ["x0", "x1"]
    for c in range(3):
        assert _pairs(shared.for_output(c)) == {tuple(top)}
        # the overall statistics do not depend on the pairs chosen
        np.testing.assert_allclose(shared.for_output(c).overall, own.for_output(c).overall,
                                   **TOL)
    # each output alone picks its own pair: their union costs a block each
    assert len(set().union(*(_pairs(own.for_output(c)) for c in range(3)))) == 3
    listed = ml.interactions(model, X, pairs=[tuple(top)], **kw)
    assert shared.n_model_rows == listed.n_model_rows < own.n_model_rows
    for c in range(3):
        pd.testing.assert_frame_equal(shared.for_output(c).pairwise,
                                      listed.for_output(c).pairwise, check_exact=False,
                                      atol=1e-12, rtol=0)


def test_shared_pairs_of_one_output_are_its_own_top_pairs():
    X, model = _frame(), three_ways
    kw = dict(sample=60, random_state=0, method="brute", pairs=3, target=1, progress=False)
    a = ml.interactions(model, X, shared_pairs=True, **kw)
    b = ml.interactions(model, X, **kw)
    pd.testing.assert_frame_equal(a.pairwise, b.pairwise)


@pytest.fixture(scope="module")
def booster():
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(1)
    n = 400
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=["a", "b", "c", "d"])
    X.loc[rng.random(n) < 0.1, "a"] = np.nan
    X.loc[rng.random(n) < 0.1, "c"] = np.nan
    X["k"] = pd.Categorical(rng.choice(["p", "q", "r", "s", "t"], n))
    X.loc[rng.random(n) < 0.1, "k"] = np.nan
    score = np.nan_to_num(X["a"]) * X["b"] + X["k"].cat.codes * 0.4 + np.nan_to_num(X["c"])
    score = score.to_numpy()
    y = pd.qcut(score + rng.normal(0, 0.3, n), 4, labels=False)
    model = lgb.LGBMClassifier(n_estimators=15, num_leaves=7, min_child_samples=5,
                               random_state=0, verbose=-1).fit(X, y)
    return model, X


def test_the_features_blocks_from_the_trees_equal_the_model_rows(booster, monkeypatch):
    """A booster's probabilities: the trees give each feature's block exactly (NaN and
    category routing included), so the statistics equal brute force's and only f, the
    pairs and the trees' check rows are model rows."""
    model, X = booster
    monkeypatch.setattr(inter_module, "TREE_SINGLES_ROWS", 0)
    kw = dict(sample=50, random_state=0, pairs=3, shared_pairs=True, progress=False)
    fast = ml.interactions(model, X, method="auto", **kw)
    slow = ml.interactions(model, X, method="brute", **kw)
    assert inter_module.TREE_SINGLES_NOTE in fast.notes
    assert inter_module.TREE_SINGLES_NOTE not in slow.notes
    # the route is a field too, on every output and through a JSON round trip
    assert fast.blocks_from_trees and not slow.blocks_from_trees
    assert all(fast.for_output(c).blocks_from_trees for c in range(4))
    import json

    assert ml.Interactions.from_dict(json.loads(json.dumps(fast.to_dict()))).blocks_from_trees
    for c in range(4):
        a, b = fast.for_output(c), slow.for_output(c)
        for field in ("overall", "overall_unnormalized", "overall_std"):
            np.testing.assert_allclose(getattr(a, field), getattr(b, field), **TOL)
        pd.testing.assert_frame_equal(a.pairwise, b.pairwise, check_exact=False, **TOL)
    # the rows saved are exactly the features' blocks: n x (distinct values) each, NaN one
    base = X.iloc[fast.rows]
    n = len(base)
    singles = sum(n * base[c].nunique(dropna=False) for c in X.columns)
    from modellens.trees import RESPONSE_CHECK_ROWS as CHECK_ROWS

    assert fast.n_model_rows == slow.n_model_rows - singles + min(CHECK_ROWS, n)


def test_few_grid_rows_stay_on_model_rows(booster):
    model, X = booster
    few = ml.interactions(model, X, sample=20, random_state=0, method="auto",
                          response_method="predict_proba", progress=False)
    assert 20 * sum(X.iloc[few.rows][c].nunique(dropna=False) for c in X.columns) \
        < inter_module.TREE_SINGLES_ROWS
    assert inter_module.TREE_SINGLES_NOTE not in few.notes and not few.blocks_from_trees


def test_pairs_of_outputs_rule():
    from modellens.effects._hstat import pairs_of_outputs

    feats = [0, 1, 2, 3]
    # output 0 interacts through 0 and 1, output 1 (ten times larger) through 2 and 3
    a = {0: (0.9, 0.3, 0), 1: (0.8, 0.2, 0), 2: (0.1, 0.1, 0), 3: (0.0, 0.0, 0)}
    b = {0: (0.1, 0.5, 0), 1: (0.0, 0.0, 0), 2: (0.5, 3.0, 0), 3: (0.4, 2.0, 0)}
    assert pairs_of_outputs([a, b], feats, ("top", 2)) == [[(0, 1)], [(2, 3)]]
    # summed squares: 0 -> 0.34, 1 -> 0.04, 2 -> 9.01, 3 -> 4.0
    assert pairs_of_outputs([a, b], feats, ("shared", 2)) == [[(2, 3)], [(2, 3)]]
    assert pairs_of_outputs([a, b], feats, ("shared", 3)) == [[(0, 2), (0, 3), (2, 3)]] * 2
    assert pairs_of_outputs([a], feats, ("shared", 2)) == [[(0, 1)]]
    every = list(itertools.combinations(feats, 2))
    assert pairs_of_outputs([a, b], feats, ("list", every)) == [every, every]


def test_shared_pairs_from_the_trees_are_brute_forces():
    """The tree method (a booster's margins) chooses the shared pairs by the same rule."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    X = _frame(n=200)
    y = three_ways(X).argmax(axis=1)
    clf = HistGradientBoostingClassifier(max_iter=10, max_depth=3, random_state=0).fit(X, y)
    kw = dict(sample=50, random_state=0, pairs=2, shared_pairs=True,
              response_method="decision_function", progress=False)
    tree = ml.interactions(clf, X, method="tree", **kw)
    brute = ml.interactions(clf, X, method="brute", **kw)
    assert tree.method == "tree" and brute.method == "brute"
    chosen = _pairs(brute.for_output(0))
    for c in range(3):
        a, b = tree.for_output(c), brute.for_output(c)
        assert _pairs(a) == _pairs(b) == chosen
        np.testing.assert_allclose(a.overall, b.overall, atol=1e-9, rtol=0)
        pd.testing.assert_frame_equal(a.pairwise, b.pairwise, check_exact=False, atol=1e-9,
                                      rtol=0)
