"""First-order ALE of tree ensembles from their trees (issue 41): the model rows' curves.

The oracle is ALE on model rows: each point moved to its bin's edges (the levels
beside its own) and the model's own ``predict_proba`` / ``predict`` on the copies.
The trees' curves, bins and bands must equal it to 1e-9 (XGBoost 1e-6: it sums its
leaves in float32) for LightGBM, XGBoost and scikit-learn models with missing values
and categorical splits, in probability over several classes, and must say which path
ran.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestRegressor

import modellens as ml
from modellens.effects import _tree_ale
from modellens.effects._tree_ale import EVALUATED_BY_TREES


@pytest.fixture
def trees_always(monkeypatch):
    # small data: the trees serve whatever the model rows and the walk's cost
    monkeypatch.setattr(_tree_ale, "MIN_MODEL_ROWS", 0)
    monkeypatch.setattr(_tree_ale, "_walk_rows", lambda n, ens, axes: 0)


def _frame(n=160, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(-2, 2, n),
                      "c": pd.Categorical(rng.choice(["p", "q", "r", "s"], n)),
                      "d": rng.integers(0, 4, n).astype(float)})
    X.loc[rng.random(n) < 0.15, "a"] = np.nan
    X.loc[rng.random(n) < 0.1, "b"] = 0.0  # zeros: LightGBM's zero-as-missing routing
    score = np.nan_to_num(X.a.to_numpy()) + X.b * X.d + (X.c.cat.codes.to_numpy() % 2)
    return X, score


def _model_rows(monkeypatch, fn):
    with monkeypatch.context() as m:
        m.setattr(_tree_ale, "MIN_MODEL_ROWS", 10 ** 12)
        return fn()


def _check(monkeypatch, model, X, atol=1e-9, **kw):
    """The trees' ALE of every feature against the model rows', every output asked."""
    features = ["a", "b", "c", "d"]
    with pytest.warns(UserWarning, match="missing value"):  # the rows missing "a"
        trees = ml.ale(model, X, features, bins=6, progress=False, **kw)
    with pytest.warns(UserWarning, match="missing value"):
        ref = _model_rows(monkeypatch,
                          lambda: ml.ale(model, X, features, bins=6, progress=False, **kw))
    assert list(trees) == list(ref) and len(trees) > 0
    labels = trees.outputs or [None]
    assert labels == (ref.outputs or [None])
    for key, label in [(key, label) for key in ref for label in labels]:
        ours, theirs = trees[key], ref[key]
        if label is not None:
            ours, theirs = ours.for_output(label), theirs.for_output(label)
        assert ours.extra["evaluated"] == EVALUATED_BY_TREES, ours.extra
        assert "evaluated" not in theirs.extra
        assert np.ptp(theirs.values) > 1e-3  # a curve that moves: the check has teeth
        for field in ("values", "std"):
            np.testing.assert_allclose(getattr(ours, field), getattr(theirs, field),
                                       rtol=0, atol=atol, err_msg=f"{key} {field}")
        np.testing.assert_allclose(ours.band.lower, theirs.band.lower, rtol=0, atol=atol)
        np.testing.assert_array_equal(ours.counts, theirs.counts)
    return trees


_LGB_CATEGORIES = dict(min_data_per_group=5, cat_smooth=1.0, cat_l2=1.0)


def test_lightgbm_multiclass_with_missing_values_zeros_and_categories(monkeypatch,
                                                                      trees_always):
    lgb = pytest.importorskip("lightgbm")
    X, score = _frame()
    y = pd.qcut(score, 3, labels=False)
    model = lgb.LGBMClassifier(n_estimators=12, num_leaves=7, min_child_samples=5,
                               zero_as_missing=True, verbose=-1, random_state=0,
                               **_LGB_CATEGORIES).fit(X, y)
    effects = _check(monkeypatch, model, X)
    assert len(effects.outputs) == 3  # every class's probability, from one walk


def test_xgboost_multiclass_with_missing_values_and_categories(monkeypatch, trees_always):
    xgb = pytest.importorskip("xgboost")
    X, score = _frame(seed=2)
    y = pd.qcut(score, 3, labels=False)
    model = xgb.XGBClassifier(n_estimators=8, max_depth=3, enable_categorical=True,
                              tree_method="hist").fit(X, y)
    # XGBoost sums its leaves and applies the softmax in float32
    _check(monkeypatch, model, X, atol=1e-6)


def test_scikit_learn_boosting_with_categories_and_a_forest(monkeypatch, trees_always):
    X, score = _frame(seed=3)
    y = pd.qcut(score, 3, labels=["lo", "mid", "hi"]).astype(str)
    hgb = HistGradientBoostingClassifier(max_iter=8, categorical_features="from_dtype",
                                         random_state=0).fit(X, y)
    _check(monkeypatch, hgb, X)
    reg = RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0).fit(
        X.assign(c=X.c.cat.codes.astype(float)), score)
    _check(monkeypatch, reg, X.assign(c=X.c.cat.codes.astype(float)))


def test_the_trees_evaluate_no_model_rows_and_pairs_keep_theirs(trees_always):
    lgb = pytest.importorskip("lightgbm")
    from modellens.trees import RESPONSE_CHECK_ROWS as CHECK_ROWS

    X, score = _frame(seed=4)
    X = X.assign(a=X.a.fillna(0.0))
    model = lgb.LGBMClassifier(n_estimators=5, num_leaves=4, verbose=-1,
                               **_LGB_CATEGORIES).fit(X, (score > 0).astype(int))
    rows = []
    own = model.predict_proba
    model.predict_proba = lambda Z, *a, **k: rows.append(len(Z)) or own(Z, *a, **k)
    ml.ale(model, X, ["a", "b"], bins=5, progress=False)
    assert sum(rows) == CHECK_ROWS  # the check on a few data rows, no model row
    rows.clear()
    pair = ml.ale(model, X, [("a", "b")], bins=4, progress=False)[("a", "b")]
    assert sum(rows) > CHECK_ROWS + len(X)  # the pair's four corners: model rows
    assert "evaluated" not in pair.extra


def test_a_link_the_reader_does_not_model_is_refused_with_the_reason(trees_always):
    lgb = pytest.importorskip("lightgbm")
    X, score = _frame(seed=5)
    X = X.assign(a=X.a.fillna(0.0))
    model = lgb.LGBMClassifier(n_estimators=6, num_leaves=5, sigmoid=3.0, verbose=-1,
                               random_state=0, **_LGB_CATEGORIES).fit(
        X, (score > np.median(score)).astype(int))
    effect = ml.ale(model, X, ["b"], bins=4, progress=False)["b"]
    assert effect.extra["evaluated"] == "model rows"
    assert "differ from the model's" in effect.extra["trees_refused"]


def test_the_rule_keeps_model_rows_where_they_are_cheaper(monkeypatch):
    lgb = pytest.importorskip("lightgbm")
    monkeypatch.setattr(_tree_ale, "MIN_MODEL_ROWS", 0)
    X, score = _frame(seed=6)
    X = X.assign(a=X.a.fillna(0.0))
    y = (score > 0).astype(int)
    # every tree splits on "b": 2 model rows a point, against a walk of one path per tree
    # and two more below its first split on "b": the model rows
    alone = lgb.LGBMClassifier(n_estimators=6, num_leaves=8, verbose=-1,
                               random_state=0).fit(X[["b"]], X.b > 0)
    assert "evaluated" not in ml.ale(alone, X[["b"]], ["b"], bins=4,
                                     progress=False)["b"].extra
    # three features, trees of two splits: at most 5 paths a point against about 6.5 model
    # rows (2 per binned feature, 1.5 for the 4 levels of "d" and the data's own rows)
    X = X.drop(columns="c")
    model = lgb.LGBMClassifier(n_estimators=6, num_leaves=3, verbose=-1,
                               random_state=0).fit(X, y)
    many = ml.ale(model, X, ["a", "b", "d"], bins=4, progress=False)
    assert many["a"].extra["evaluated"] == EVALUATED_BY_TREES, many["a"].extra
    # few model rows (the default threshold): no walk, no compile
    monkeypatch.setattr(_tree_ale, "MIN_MODEL_ROWS", 10 ** 9)
    assert "evaluated" not in ml.ale(model, X, ["a", "b", "d"], bins=4,
                                     progress=False)["a"].extra


def test_rows_walked_in_blocks_give_the_model_rows_curves(monkeypatch, trees_always):
    """One walk of the trees in blocks of a few rows: ALE's grids (one per row) and PD's
    (one for every row) each cut to the block's rows, the last block short."""
    from modellens.effects import _tree_ice

    # ALE: 4 features x 2 edges x 3 classes per row -> 7 rows a block; PD: 1 row a block
    monkeypatch.setattr(_tree_ice, "BLOCK_BYTES", 8 * 4 * 2 * 3 * 7)
    monkeypatch.setattr(_tree_ice, "MIN_GRID_ROWS", 0)
    X, score = _frame(seed=7)
    y = pd.qcut(score, 3, labels=["lo", "mid", "hi"]).astype(str)
    hgb = HistGradientBoostingClassifier(max_iter=6, categorical_features="from_dtype",
                                         random_state=0).fit(X, y)
    _check(monkeypatch, hgb, X)
    trees = ml.pdp(hgb, X, ["b", "c"], grid=5, ice=True, progress=False)
    monkeypatch.setattr(_tree_ice, "MIN_GRID_ROWS", 10 ** 12)
    ref = ml.pdp(hgb, X, ["b", "c"], grid=5, ice=True, progress=False)
    for label in ref.outputs:
        for name in ("b", "c"):
            ours, theirs = trees.for_output(label)[name], ref.for_output(label)[name]
            assert ours.extra["evaluated"] == _tree_ice.EVALUATED_BY_TREES
            assert "evaluated" not in theirs.extra or theirs.extra["evaluated"] != \
                _tree_ice.EVALUATED_BY_TREES
            np.testing.assert_allclose(ours.ice, theirs.ice, rtol=0, atol=1e-9)
