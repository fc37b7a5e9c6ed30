"""TreeSHAP: the array form against each library, and the values against shap and exact."""

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens import InvalidParameterError
from modellens.trees import tree_ensemble

shap = pytest.importorskip("shap")
xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")

from sklearn.ensemble import (ExtraTreesClassifier, ExtraTreesRegressor,  # noqa: E402
                              GradientBoostingClassifier, GradientBoostingRegressor,
                              HistGradientBoostingClassifier, HistGradientBoostingRegressor,
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.neighbors import KNeighborsRegressor  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: E402

N, D = 400, 5


def _data(seed=0, nan=False, classes=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, D))
    X[:, 3] = np.round(X[:, 3], 1)  # ties and values exactly on thresholds
    f = X[:, 0] + X[:, 1] * X[:, 2] + np.sin(3 * X[:, 3])
    if nan:
        X[rng.random(N) < 0.15, 1] = np.nan
        X[rng.random(N) < 0.1, 4] = np.nan
    if classes is None:
        return X, f + 0.1 * rng.normal(size=N)
    cuts = np.quantile(f, np.linspace(0, 1, classes + 1)[1:-1])
    return X, np.searchsorted(cuts, f)


def _raw(model, X):
    """The library's own raw output, (n, k)."""
    if isinstance(model, xgb.Booster):
        return np.asarray(model.predict(xgb.DMatrix(X), output_margin=True)).reshape(len(X), -1)
    if isinstance(model, lgb.Booster):
        return np.asarray(model.predict(X, raw_score=True)).reshape(len(X), -1)
    if type(model).__module__.startswith("xgboost"):
        return np.asarray(model.predict(X, output_margin=True)).reshape(len(X), -1)
    if type(model).__module__.startswith("lightgbm"):
        return np.asarray(model.predict(X, raw_score=True)).reshape(len(X), -1)
    if hasattr(model, "decision_function") and not isinstance(
            model, (RandomForestClassifier, ExtraTreesClassifier, DecisionTreeClassifier)):
        return np.asarray(model.decision_function(X)).reshape(len(X), -1)
    if hasattr(model, "predict_proba"):
        return model.predict_proba(X)
    return model.predict(X).reshape(len(X), -1)


def _fit(name, *, nan=False):
    """A small fitted model of each supported family; (model, X)."""
    kind, _, task = name.partition(":")
    classes = {"reg": None, "bin": 2, "multi": 3}[task]
    X, y = _data(nan=nan, classes=classes)
    reg = classes is None
    if kind == "tree":
        m = (DecisionTreeRegressor if reg else DecisionTreeClassifier)(max_depth=6,
                                                                     random_state=0)
    elif kind == "rf":
        m = (RandomForestRegressor if reg else RandomForestClassifier)(
            n_estimators=8, max_depth=6, random_state=0)
    elif kind == "et":
        m = (ExtraTreesRegressor if reg else ExtraTreesClassifier)(
            n_estimators=8, max_depth=6, random_state=0)
    elif kind == "gb":
        m = (GradientBoostingRegressor if reg else GradientBoostingClassifier)(
            n_estimators=15, max_depth=3, random_state=0)
    elif kind == "hgb":
        m = (HistGradientBoostingRegressor if reg else HistGradientBoostingClassifier)(
            max_iter=15, max_depth=4, random_state=0)
    elif kind in ("xgb", "xgbbooster"):
        m = (xgb.XGBRegressor if reg else xgb.XGBClassifier)(
            n_estimators=15, max_depth=4, learning_rate=0.3, random_state=0)
    elif kind in ("lgb", "lgbbooster", "lgbzero"):
        m = (lgb.LGBMRegressor if reg else lgb.LGBMClassifier)(
            n_estimators=15, num_leaves=12, verbose=-1, random_state=0,
            zero_as_missing=kind == "lgbzero")
    m.fit(X, y)
    if kind == "xgbbooster":
        m = m.get_booster()
    elif kind == "lgbbooster":
        m = m.booster_
    return m, X


FAMILIES = [f"{k}:{t}" for k in ("tree", "rf", "et", "gb", "hgb", "xgb", "lgb")
            for t in ("reg", "bin", "multi")] + ["xgbbooster:reg", "lgbbooster:bin",
                                                 "lgbzero:reg"]
NAN_OK = ("tree", "rf", "et", "hgb", "xgb", "xgbbooster", "lgb", "lgbbooster", "lgbzero")


def _near_thresholds(ens, X, rng, count=600):
    """Rows whose split feature sits on, or a hair (1e-8, one ulp) from, a threshold."""
    inner = np.flatnonzero((ens.left >= 0) & (np.abs(ens.threshold) < 1e30))
    nodes = rng.choice(inner, size=min(count, inner.size), replace=False)
    rows = []
    for node in nodes:
        f, t = ens.feature[node], ens.threshold[node]
        t32 = np.float32(t)
        for v in (t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf), t + 1e-8, t - 1e-8,
                  float(t32), float(np.nextafter(t32, np.float32(np.inf))),
                  float(np.nextafter(t32, np.float32(-np.inf)))):
            row = X[rng.integers(len(X))].copy()
            row[f] = v
            rows.append(row)
    return np.array(rows)


@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("name", FAMILIES)
def test_array_form_predicts_as_the_library_near_every_threshold(name, nan):
    if nan and name.split(":")[0] not in NAN_OK:
        pytest.skip("the model does not accept missing values")
    model, X = _fit(name, nan=nan)
    ens = tree_ensemble(model)
    rng = np.random.default_rng(1)
    Z = np.vstack([X, _near_thresholds(ens, X, rng)])
    ours, theirs = ens.predict_raw(Z), _raw(model, Z)
    if ens.n_outputs == 2 and theirs.shape[1] == 2 and ens.link == "identity":
        pass
    assert ours.shape == theirs.shape
    # float32 libraries sum in float32; a misrouted row is off by a whole leaf value
    tol = 2e-6 if ens.library == "xgboost" else 1e-12
    scale = max(1.0, np.abs(theirs).max())
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=tol * scale)


def test_leaves_match_the_library_near_thresholds():
    """Routing itself, leaf by leaf, where the libraries expose it."""
    rng = np.random.default_rng(2)
    for name in ("rf:reg", "xgb:reg"):
        for nan in (False, True):
            model, X = _fit(name, nan=nan)
            ens = tree_ensemble(model)
            Z = np.vstack([X, _near_thresholds(ens, X, rng)])
            from modellens.trees import kernels
            ours = kernels.predict_leaves(ens.cast(Z), ens.nodes, ens.roots) - ens.roots[:-1]
            if name == "rf:reg":
                theirs = np.column_stack([e.apply(Z.astype(np.float32))
                                          for e in model.estimators_])
            else:
                theirs = model.get_booster().predict(xgb.DMatrix(Z), pred_leaf=True)
            np.testing.assert_array_equal(ours, theirs)


def _shap_path_dependent(model, X, k):
    explainer = shap.TreeExplainer(model)
    sv = np.asarray(explainer.shap_values(X))
    ev = np.atleast_1d(explainer.expected_value)
    if sv.ndim == 3:
        sv, ev = sv[:, :, k], ev[k]
    else:
        ev = ev[0]
    return sv, float(ev)


@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("name", FAMILIES)
def test_path_dependent_matches_shap_tree_explainer(name, nan):
    kind = name.split(":")[0]
    if nan and kind not in NAN_OK:
        pytest.skip("the model does not accept missing values")
    model, X = _fit(name, nan=nan)
    Xe = X[:60]
    multi = name.endswith("multi")
    ens = tree_ensemble(model)
    two_proba = ens.link == "identity" and ens.classes is not None
    k = 1 if (two_proba or multi) else 0
    target = 1 if multi else None
    attr = ml.shapley(model, Xe, algorithm="tree", target=target)
    assert attr.method == "shapley-tree" and attr.value_function == "tree_path_dependent"
    raw = _raw(model, Xe)[:, k]
    scale = np.ptp(_raw(model, X)[:, k]) or 1.0
    # additivity on every row, against the library's own raw output
    np.testing.assert_allclose(attr.values.sum(axis=1) + attr.base_values, raw,
                               rtol=0, atol=1e-6 * scale)
    np.testing.assert_allclose(attr.prediction, raw, rtol=0, atol=1e-6 * scale)
    if name == "gb:multi":
        # shap reads binary GradientBoostingClassifiers only: sum its values of each tree
        rate = model.learning_rate
        trees = model.estimators_[:, k]
        sv = rate * sum(shap.TreeExplainer(t).shap_values(Xe) for t in trees)
        ev = model._raw_predict_init(Xe[:1])[0, k] + rate * sum(
            float(np.atleast_1d(shap.TreeExplainer(t).expected_value)[0]) for t in trees)
    else:
        sv, ev = _shap_path_dependent(model, Xe, k)
    if sv.shape[1] == 2 * D:  # shap returns a column per class for binary forests
        sv = sv[:, k * D:(k + 1) * D]
    np.testing.assert_allclose(attr.values, sv, rtol=0, atol=1e-6 * scale)
    np.testing.assert_allclose(attr.base_values, ev, rtol=0, atol=1e-6 * scale)


def test_binary_target_zero_negates_the_log_odds():
    model, X = _fit("gb:bin")
    pos = ml.shapley(model, X[:10], algorithm="tree")
    neg = ml.shapley(model, X[:10], algorithm="tree", target=0)
    np.testing.assert_allclose(neg.values, -pos.values)
    assert pos.output == "log-odds(y = 1)" and neg.output == "log-odds(y = 0)"


def test_multiclass_without_a_target_gives_every_class():
    # issue 28: target=None explains every class (values (n, d, k)), each as its target= call
    model, X = _fit("xgb:multi")
    every = ml.shapley(model, X[:5], algorithm="tree")
    k = len(model.classes_)
    assert every.values.shape == (5, X.shape[1], k) and every.base_values.shape == (5, k)
    for c in range(k):
        one = ml.shapley(model, X[:5], algorithm="tree", target=c)
        np.testing.assert_array_equal(every.for_output(c).values, one.values)


@pytest.mark.parametrize("name", ["gb:reg", "rf:reg", "xgb:bin", "lgb:reg", "hgb:multi",
                                  "tree:bin"])
def test_interventional_equals_exact_enumeration(name):
    model, X = _fit(name, nan=False)
    multi = name.endswith("multi")
    ens = tree_ensemble(model)
    target = 1 if multi else None
    Xe, B = X[:12], X[100:140]
    tree = ml.shapley(model, Xe, background=B, algorithm="tree", target=target)
    assert tree.value_function == "interventional"
    # the exact algorithm of the raw output: the model's own margin function
    k = 1 if (multi or (ens.link == "identity" and ens.classes is not None)) else 0
    exact = ml.shapley(lambda A: _raw(model, A)[:, k], Xe, background=B, algorithm="exact")
    scale = np.ptp(_raw(model, X)[:, k])
    tol = 1e-6 if ens.library == "xgboost" else 1e-12  # float32 sums in xgboost
    np.testing.assert_allclose(tree.values, exact.values, rtol=0, atol=tol * scale)
    np.testing.assert_allclose(tree.base_values, exact.base_values, rtol=0, atol=tol * scale)
    np.testing.assert_allclose(tree.values.sum(1) + tree.base_values, tree.prediction,
                               atol=1e-9 * scale)


def test_interventional_with_nan_and_many_rows_uses_tables_and_agrees():
    """Enough rows for the per-leaf tables; NaN in rows and background."""
    model, X = _fit("hgb:reg", nan=True)
    Xe, B = X[:300], X[300:330]
    tree = ml.shapley(model, Xe, background=B, algorithm="tree")
    exact = ml.shapley(model, Xe[:40], background=B, algorithm="exact")
    np.testing.assert_allclose(tree.values[:40], exact.values,
                               atol=1e-12 * np.ptp(model.predict(X)))


def test_interventional_agrees_with_shap_where_shap_agrees_with_exact():
    model, X = _fit("xgb:reg")
    Xe, B = X[:20], X[100:130]
    ours = ml.shapley(model, Xe, background=B, algorithm="tree")
    theirs = shap.TreeExplainer(model, B, feature_perturbation="interventional").shap_values(Xe)
    np.testing.assert_allclose(ours.values, theirs, atol=1e-5 * np.ptp(model.predict(X)))


def test_lecture_notes_worked_tree_example():
    """The worked tree of the lecture notes on local methods: x <= 100 splits on y then leaves 50 / 30, else on x: 20 / 10."""
    # y = 100 on the right keeps a split on y from tying with the root split on x
    X = np.array([[50, 50, 0]] * 2 + [[50, 150, 0]] * 2 + [[150, 100, 0]]
                 + [[250, 100, 0]] * 5, dtype=float)
    y = np.array([50, 50, 30, 30, 20, 10, 10, 10, 10, 10], dtype=float)
    tree = DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, y)
    t = tree.tree_
    # the tree of the example, built by fitting: root x <= 100, left on y, right on x
    assert (t.feature[0], t.threshold[0]) == (0, 100.0)
    assert t.feature[t.children_left[0]] == 1 and t.feature[t.children_right[0]] == 0
    assert sorted(t.weighted_n_node_samples[t.children_left == -1]) == [1, 2, 2, 5]
    attr = ml.shapley(tree, np.array([[150.0, 75.0, 200.0]]), algorithm="tree",
                      feature_names=["x", "y", "z"])
    assert attr.prediction[0] == 20
    np.testing.assert_allclose(attr.base_values, [23.0], atol=1e-12)
    np.testing.assert_allclose(attr.values[0], [-5.0, 2.0, 0.0], atol=1e-12)


@pytest.mark.parametrize("name", ["gb:reg", "xgb:bin", "rf:reg", "lgb:reg"])
def test_interactions_match_shap(name):
    model, X = _fit(name)
    Xe = X[:25]
    attr = ml.shapley(model, Xe, algorithm="tree", interactions=True)
    theirs = np.asarray(shap.TreeExplainer(model).shap_interaction_values(Xe))
    scale = np.ptp(_raw(model, X)[:, 0])
    assert attr.interactions.shape == (25, D, D)
    np.testing.assert_allclose(attr.interactions.sum(axis=2), attr.values, atol=1e-10 * scale)
    np.testing.assert_allclose(attr.interactions, attr.interactions.transpose(0, 2, 1),
                               atol=1e-12 * scale)
    np.testing.assert_allclose(attr.interactions, theirs, atol=1e-6 * scale)


def test_interactions_of_treeshap_and_of_any_model():
    model, X = _fit("gb:reg")
    # both tree games give them (the interventional one: tests/test_treeshap_background.py)
    attr = ml.shapley(model, X[:3], background=X[:10], algorithm="tree", interactions=True)
    assert attr.interactions.shape == (3, D, D)
    # any model too (tests/attribution/test_shapley_interactions_groups.py)
    other = ml.shapley(lambda A: A.sum(1), X[:3], background=X[:10], interactions=True)
    assert other.interactions.shape == (3, D, D)


def test_auto_picks_tree_for_tree_models_and_falls_back_otherwise():
    model, X = _fit("gb:reg")
    assert ml.shapley(model, X[:5]).method == "shapley-tree"
    pipe = make_pipeline(StandardScaler(), GradientBoostingRegressor(n_estimators=5)).fit(
        X, X[:, 0])
    assert ml.shapley(pipe, X[:5], background=X[:20]).method == "shapley-exact"
    with pytest.raises(InvalidParameterError, match="Pipeline is not a tree model"):
        ml.shapley(pipe, X[:5], algorithm="tree")
    knn = KNeighborsRegressor().fit(X, X[:, 0])
    assert ml.shapley(knn, X[:3], background=X[:20]).method == "shapley-exact"
    with pytest.raises(InvalidParameterError, match="Supported: scikit-learn"):
        ml.shapley(knn, X[:3], algorithm="tree")
    # a sampling budget means the model-agnostic algorithms
    assert ml.shapley(model, X[:3], background=X[:10], n_samples=20).method == "shapley-kernel"
    # a probability of a boosted classifier is not the trees' raw output
    clf, Xc = _fit("gb:bin")
    attr = ml.shapley(clf, Xc[:3], background=Xc[:10], response_method="predict_proba")
    assert attr.method == "shapley-exact"
    with pytest.raises(InvalidParameterError, match="raw output"):
        ml.shapley(clf, Xc[:3], algorithm="tree", response_method="predict_proba")


def test_categorical_frames_and_unsupported_splits_are_refused_clearly():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=200),
                       "c": pd.Categorical(rng.choice(["u", "v", "w"], size=200))})
    y = df["a"] + (df["c"] == "u")
    model = HistGradientBoostingRegressor(max_iter=5, categorical_features="from_dtype").fit(df, y)
    # the tree partial dependence maps categories as TreeSHAP does
    assert ml.pdp(model, df, ["a"], method="tree")[0].method == "pdp"
    # a tree model that split on numbers, shown a categorical column: refused
    num = df.assign(c=df["c"].cat.codes.astype(float))
    gb = GradientBoostingRegressor(n_estimators=5).fit(num, y)
    with pytest.raises(InvalidParameterError, match="categorical"):
        ml.shapley(gb, df[:5], algorithm="tree")
    # auto now reads the categorical splits of HistGradientBoosting itself
    assert ml.shapley(model, df[:3], background=df[:10]).method == "shapley-tree"
    # LightGBM's categorical splits are read (tests/test_tree_categorical.py); linear trees
    # are refused
    lg = lgb.LGBMRegressor(n_estimators=5, verbose=-1, min_child_samples=5).fit(df, y)
    assert ml.shapley(lg, df[:5], algorithm="tree").method == "shapley-tree"
    X, yn = _data()
    lin = lgb.LGBMRegressor(n_estimators=3, linear_tree=True, verbose=-1).fit(X, yn)
    with pytest.raises(InvalidParameterError, match="linear trees"):
        ml.shapley(lin, X[:5], algorithm="tree")
    assert ml.shapley(lin, X[:3], background=X[:10]).method == "shapley-exact"


def test_frame_columns_must_be_the_models_order():
    X, y = _data()
    df = pd.DataFrame(X, columns=list("abcde"))
    model = GradientBoostingRegressor(n_estimators=5).fit(df, y)
    attr = ml.shapley(model, df[:5], algorithm="tree")
    assert attr.feature_names == list("abcde")
    with pytest.raises(InvalidParameterError, match="same order"):
        ml.shapley(model, df[list("edcba")][:5], algorithm="tree")


def test_n_jobs_does_not_change_the_numbers():
    model, X = _fit("rf:reg")
    one = ml.shapley(model, X, algorithm="tree", n_jobs=1)
    two = ml.shapley(model, X, algorithm="tree", n_jobs=2)
    np.testing.assert_array_equal(one.values, two.values)


def test_deep_trees_without_tables_agree_with_shap():
    """Depth 12: most leaves are computed per row (O(p^2)), not from tables."""
    X, y = _data()
    model = RandomForestRegressor(n_estimators=3, max_depth=12, random_state=0).fit(X, y)
    attr = ml.shapley(model, X[:30], algorithm="tree")
    sv = shap.TreeExplainer(model).shap_values(X[:30])
    np.testing.assert_allclose(attr.values, sv, atol=1e-6 * np.ptp(y))


@pytest.mark.parametrize("name", ["xgb:bin", "lgbzero:reg", "hgb:multi", "rf:reg", "et:bin"])
def test_quadrature_kernel_agrees_with_shap(name):
    """The path-dependent quadrature kernel (with NaN), its values and the same pass's
    interaction values, against shap and local accuracy."""
    from modellens.attribution.tree import TreePaths
    from modellens.trees import output_column
    model, X = _fit(name, nan=True)
    ens = tree_ensemble(model)
    col = output_column(ens, model, 1 if name.endswith("multi") else None)[0]
    paths = TreePaths(ens.select(col))
    Xc = np.ascontiguousarray(ens.cast(X))
    linear, inter = paths.path_dependent(Xc, pairs=True)
    raw = _raw(model, X)[:, 1 if ens.n_outputs > 1 else 0]
    scale = np.ptp(raw)
    np.testing.assert_allclose(paths.path_dependent(Xc)[0], linear, atol=1e-12 * scale)
    np.testing.assert_allclose(inter.sum(2), linear, atol=1e-12 * scale)
    np.testing.assert_allclose(linear.sum(1) + paths.expected_value(), raw, atol=1e-6 * scale)
    sv, _ = _shap_path_dependent(model, X, 1 if ens.n_outputs > 1 else 0)
    if sv.shape[1] == 2 * D:
        sv = sv[:, D:]
    np.testing.assert_allclose(linear, sv, atol=1e-6 * scale)


def test_tree_pd_equals_brute_pd_of_a_decision_tree_on_its_training_data():
    """On a full factorial design every feature is independent of the others within
    any box, so the covers' conditional fractions are the data's marginal ones and the
    weighted traversal equals the brute average over the training rows."""
    import itertools
    X = np.array(list(itertools.product(np.arange(7.0), np.arange(6.0), np.arange(5.0))))
    y = np.sin(X[:, 0]) * X[:, 1] + X[:, 2] ** 2 * (X[:, 0] > 3)
    tree = DecisionTreeRegressor(random_state=0).fit(X, y)
    feats = [0, 1, 2, (0, 2)]
    ours = ml.pdp(tree, X, feats, method="tree", grid=7)
    brute = ml.pdp(tree, X, feats, grid=7)
    for i in range(len(feats)):
        a, b = ours[i], brute[i]
        assert a.method == "pdp"
        np.testing.assert_allclose(a.values, b.values, atol=1e-12)
        np.testing.assert_array_equal(a.grid[0] if isinstance(a.grid, tuple) else a.grid,
                                      b.grid[0] if isinstance(b.grid, tuple) else b.grid)


@pytest.mark.parametrize("cls", [GradientBoostingRegressor, GradientBoostingClassifier,
                                 HistGradientBoostingRegressor])
def test_tree_pd_equals_sklearn_recursion(cls):
    from sklearn.inspection import partial_dependence
    X, y = _data(classes=None if cls is not GradientBoostingClassifier else 2)
    model = cls(random_state=0).fit(X, y)
    sk = partial_dependence(model, X, [0], method="recursion", grid_resolution=9)
    ours = ml.pdp(model, X, [0], method="tree", grid={0: sk["grid_values"][0]})
    # scikit-learn leaves the boosting's initial prediction out (documented); we add it
    offset = model._baseline_prediction[0, 0] if cls is HistGradientBoostingRegressor \
        else model._raw_predict_init(X[:1])[0, 0]
    np.testing.assert_allclose(ours[0].values, sk["average"][0] + offset, atol=1e-10)
    sk2 = partial_dependence(model, X, [(1, 3)], method="recursion", grid_resolution=5)
    ours2 = ml.pdp(model, X, [(1, 3)], method="tree",
                   grid={(1, 3): tuple(sk2["grid_values"])})
    np.testing.assert_allclose(ours2[0].values, sk2["average"][0] + offset, atol=1e-10)


def test_tree_pd_refuses_what_it_cannot_do():
    model, X = _fit("gb:reg")
    with pytest.raises(InvalidParameterError, match="ICE"):
        ml.pdp(model, X, [0], method="tree", ice=True)
    with pytest.raises(InvalidParameterError, match="Supported"):
        ml.pdp(KNeighborsRegressor().fit(X, X[:, 0]), X, [0], method="tree")
    with pytest.raises(InvalidParameterError, match="method"):
        ml.pdp(model, X, [0], method="recursion")


def test_dependence_plot_colours_by_the_strongest_interaction():
    from modellens.plot.attributions import interaction_partner
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4))
    # x0 interacts with x3 only; x1 is correlated with x0's values but does not interact
    X[:, 1] = X[:, 0] + 0.3 * rng.normal(size=600)
    y = X[:, 0] * X[:, 3] + X[:, 1] + 0.5 * X[:, 2]
    model = GradientBoostingRegressor(n_estimators=60, max_depth=3, random_state=0).fit(X, y)
    attr = ml.shapley(model, X[:200], algorithm="tree", interactions=True)
    strength = np.abs(attr.interactions[:, 0, :]).mean(axis=0)
    strength[0] = 0
    assert interaction_partner(attr, "x0") == int(np.argmax(strength)) == 3
    ax = attr.plot.dependence("x0")
    assert ax.get_figure() is not None


def test_xgboost_custom_missing_is_refused():
    X, y = _data()
    model = xgb.XGBRegressor(n_estimators=5, missing=0.0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="missing=0.0"):
        ml.shapley(model, X[:5], algorithm="tree")


@pytest.mark.parametrize("make", [
    lambda: xgb.XGBRFRegressor(n_estimators=6, max_depth=3, random_state=0),
    lambda: xgb.XGBRegressor(booster="dart", n_estimators=8, rate_drop=0.3, random_state=0),
    lambda: xgb.XGBRegressor(objective="count:poisson", n_estimators=8),
    lambda: lgb.LGBMRegressor(boosting_type="rf", bagging_freq=1, bagging_fraction=0.7,
                              n_estimators=6, verbose=-1),
], ids=["xgb-rf", "xgb-dart", "xgb-poisson", "lgb-rf"])
def test_other_boosting_modes_read_as_the_library_predicts(make):
    X, y = _data()
    model = make()
    poisson = "poisson" in str(model.get_params().get("objective"))
    model.fit(X, np.exp(y / 3) if poisson else y)
    ens = tree_ensemble(model)
    if type(model).__module__.startswith("xgboost"):
        raw = model.predict(X, output_margin=True)
    else:  # LightGBM's raw_score of a random forest is the sum; predict averages
        raw = model.predict(X)
    np.testing.assert_allclose(ens.predict_raw(X)[:, 0], raw, atol=2e-6 * np.ptp(raw))
    attr = ml.shapley(model, X[:20], algorithm="tree")
    np.testing.assert_allclose(attr.values.sum(1) + attr.base_values, raw[:20],
                               atol=2e-6 * np.ptp(raw))


# ---------------------------------------------------------------------- HGB categories
def _hgb_frame(seed=0, n=400):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n),
                      "c1": pd.Categorical(rng.choice(list("pqrst"), n)),
                      "b": rng.normal(size=n),
                      "c2": pd.Categorical(rng.choice(["u", "v", "w"], n))})
    effect = X["c1"].map({"p": 1.0, "q": -1.0, "r": 2.0, "s": 0.0, "t": 0.5}).astype(float)
    y = X["a"] + effect + (X["c2"] == "v") * X["b"] + 0.1 * rng.normal(size=n)
    # rows to explain: an unseen category, missing categories and a missing number
    T = X.copy()
    T["c1"] = T["c1"].cat.add_categories(["zz"])
    T.loc[0, "c1"] = "zz"
    T.loc[1, "c2"] = np.nan
    T.loc[2, "a"] = np.nan
    T.loc[3, "c1"] = np.nan
    return X, y, T


def _hgb_models():
    X, y, T = _hgb_frame()
    kw = dict(max_iter=25, categorical_features="from_dtype", random_state=0)
    reg = HistGradientBoostingRegressor(**kw).fit(X, y)
    clf = HistGradientBoostingClassifier(**kw).fit(X, (y > y.median()).astype(int))
    return X, T, reg, clf


def test_hgb_categorical_array_form_predicts_as_sklearn():
    from modellens.data import Dataset
    X, T, reg, clf = _hgb_models()
    assert np.any([np.any(p.nodes["is_categorical"]) for it in reg._predictors for p in it])
    codes = Dataset.from_data(T)
    for model in (reg, clf):
        ens = tree_ensemble(model)
        assert sorted(ens.categories) == [1, 3]
        raw = ens.predict_raw(ens.encode(codes.values, codes.columns))
        np.testing.assert_allclose(raw, model._raw_predict(T), rtol=0, atol=1e-12)
    ours = tree_ensemble(reg).predict_raw(
        tree_ensemble(reg).encode(codes.values, codes.columns))[:, 0]
    np.testing.assert_allclose(ours, reg.predict(T), rtol=0, atol=1e-12)
    ens = tree_ensemble(clf)
    ours = ens.predict_raw(ens.encode(codes.values, codes.columns))[:, 0]
    np.testing.assert_allclose(ours, clf.decision_function(T), rtol=0, atol=1e-12)


def _hgb_brute_path_dependent(model, T, rows):
    """Path-dependent Shapley values by enumerating coalitions, from sklearn's own nodes.

    The game's value of S is each tree's cover-weighted expectation when
    splits on features outside S send the row down both sides in proportion
    to the training counts; the rows go through sklearn's preprocessor and
    its categorical rule (bitset left, known category right, else missing).
    """
    from itertools import combinations
    from math import factorial
    Xt = model._preprocessor.transform(T)
    is_cat = np.asarray(model.is_categorical_, bool)
    perm = np.concatenate([np.flatnonzero(is_cat), np.flatnonzero(~is_cat)])
    known, fmap = model._bin_mapper.make_known_categories_bitsets()

    def bit(words, k):
        return bool((int(words[k // 32]) >> (k % 32)) & 1)

    def left_of(pred, node, x):
        v = x[node["feature_idx"]]
        if np.isnan(v):
            return bool(node["missing_go_to_left"])
        if not node["is_categorical"]:
            return v <= node["num_threshold"]
        k = int(v)
        if bit(pred.raw_left_cat_bitsets[node["bitset_idx"]], k):
            return True
        if bit(known[fmap[node["feature_idx"]]], k):
            return False
        return bool(node["missing_go_to_left"])

    def expect(pred, i, x, S):
        node = pred.nodes[i]
        if node["is_leaf"]:
            return float(node["value"])
        if perm[node["feature_idx"]] in S:
            nxt = node["left"] if left_of(pred, node, x) else node["right"]
            return expect(pred, nxt, x, S)
        nl, nr = pred.nodes[node["left"]], pred.nodes[node["right"]]
        return (nl["count"] * expect(pred, node["left"], x, S)
                + nr["count"] * expect(pred, node["right"], x, S)) / node["count"]

    d = T.shape[1]
    base = float(np.ravel(model._baseline_prediction)[0])
    out = np.zeros((len(rows), d))
    for r, i in enumerate(rows):
        x = Xt[i]
        v = {}
        for size in range(d + 1):
            for S in combinations(range(d), size):
                v[S] = base + sum(expect(p[0], 0, x, set(S)) for p in model._predictors)
        for j in range(d):
            for S in v:
                if j in S:
                    continue
                w = factorial(len(S)) * factorial(d - len(S) - 1) / factorial(d)
                out[r, j] += w * (v[tuple(sorted(S + (j,)))] - v[S])
    return out, v[()]


@pytest.mark.parametrize("which", ["reg", "clf"])
def test_hgb_categorical_path_dependent_equals_brute_force(which):
    X, T, reg, clf = _hgb_models()
    model = reg if which == "reg" else clf
    rows = [0, 1, 2, 3, 4, 5]
    # the trees' raw output (a classifier's log-odds); "auto" explains the probability
    attr = ml.shapley(model, T.iloc[rows], algorithm="tree")
    assert attr.method == "shapley-tree"
    assert attr.value_function == "tree_path_dependent"
    want, base = _hgb_brute_path_dependent(model, T, rows)
    np.testing.assert_allclose(attr.values, want, rtol=0, atol=1e-10)
    np.testing.assert_allclose(attr.base_values, base, rtol=0, atol=1e-10)
    raw = model._raw_predict(T.iloc[rows])[:, 0]
    np.testing.assert_allclose(attr.values.sum(1) + attr.base_values, raw, rtol=0, atol=1e-10)
    # the result keeps modellens' own codes of the rows, not the model's
    from modellens.data import Dataset
    np.testing.assert_array_equal(attr.codes, Dataset.from_data(T.iloc[rows]).values)


@pytest.mark.parametrize("which", ["reg", "clf"])
def test_hgb_categorical_interventional_equals_exact(which):
    X, T, reg, clf = _hgb_models()
    model = reg if which == "reg" else clf
    fg, bg = T.iloc[:25], T.iloc[100:140]
    tree = ml.shapley(model, fg, background=bg, algorithm="tree")
    exact = ml.shapley(model, fg, background=bg, algorithm="exact",
                       response_method="auto" if which == "reg" else "decision_function")
    assert tree.method == "shapley-tree" and exact.method == "shapley-exact"
    np.testing.assert_allclose(tree.values, exact.values, rtol=0, atol=1e-10)
    raw = model._raw_predict(fg)[:, 0]
    np.testing.assert_allclose(tree.values.sum(1) + tree.base_values, raw, rtol=0, atol=1e-10)


@pytest.mark.parametrize("spec", ["mask", "indices"])
def test_hgb_categorical_numeric_codes(spec):
    rng = np.random.default_rng(1)
    n = 500
    X = np.column_stack([rng.normal(size=n), rng.integers(0, 6, n) * 2.0, rng.normal(size=n),
                         rng.integers(0, 4, n) + 10.0])
    y = X[:, 0] + np.isin(X[:, 1], [2, 6, 8]) + (X[:, 3] == 11) * X[:, 2]
    cats = [False, True, False, True] if spec == "mask" else [1, 3]
    model = HistGradientBoostingRegressor(max_iter=20, categorical_features=cats,
                                          random_state=0).fit(X, y)
    T = X[:40].copy()
    T[0, 1], T[1, 3], T[2, 1], T[3, 1] = 5.0, np.nan, -2.0, 300.0  # unseen, NaN, <0, >255
    ens = tree_ensemble(model)
    raw = ens.predict_raw(ens.encode(T))[:, 0]
    np.testing.assert_allclose(raw, model._raw_predict(T)[:, 0], rtol=0, atol=1e-12)
    tree = ml.shapley(model, T[:15], background=T[20:40])
    exact = ml.shapley(model, T[:15], background=T[20:40], algorithm="exact")
    assert tree.method == "shapley-tree"
    np.testing.assert_allclose(tree.values, exact.values, rtol=0, atol=1e-10)
    pd_ = ml.shapley(model, T[:15])
    np.testing.assert_allclose(pd_.values.sum(1) + pd_.base_values, raw[:15], rtol=0,
                               atol=1e-10)
