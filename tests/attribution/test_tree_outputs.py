"""Every output of a tree model from one traversal of its trees (issue 28).

The tree methods (TreeSHAP path-dependent and interventional, its interaction
values, ``pdp(method="tree")``, ``interactions(method="tree")``) explain a
multiclass or multi-output ensemble in one pass: every output of the
all-output call must equal the single-output call with that ``target=``
(1e-12), TreeSHAP must equal shap's TreeExplainer class by class, the kernels
must run once whatever the number of outputs, and the three methods must pick
their outputs by one rule, the black-box methods'.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris
from sklearn.ensemble import (HistGradientBoostingClassifier, RandomForestClassifier,
                              RandomForestRegressor)

import modellens as ml
from modellens._validation import InvalidParameterError
from modellens.trees import kernels as K
from modellens.trees import tree_ensemble

TOL = dict(rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return X, y


def _fit(name, X, y):
    if name == "hgb":
        return HistGradientBoostingClassifier(max_iter=12, max_depth=3, random_state=0).fit(X, y)
    if name == "xgboost":
        xgb = pytest.importorskip("xgboost")
        return xgb.XGBClassifier(n_estimators=8, max_depth=3, objective="multi:softprob",
                                 random_state=0).fit(X, y)
    if name == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        return lgb.LGBMClassifier(n_estimators=8, num_leaves=7, objective="multiclass",
                                  verbose=-1).fit(X, y)
    if name == "forest":
        return RandomForestClassifier(n_estimators=6, max_depth=4, random_state=0).fit(X, y)
    # two regression outputs: a forest's leaves hold a value per output
    Y = np.c_[X[:, 0] * X[:, 1], X[:, 2] - X[:, 3]]
    return RandomForestRegressor(n_estimators=6, max_depth=4, random_state=0).fit(X, Y)


MODELS = ["hgb", "xgboost", "lightgbm", "forest", "regressor2"]
N_OUTPUTS = {"regressor2": 2}


def _same_attr(one, single, *, pairs=False):
    assert one.values.shape == single.values.shape
    np.testing.assert_allclose(one.values, single.values, **TOL)
    np.testing.assert_allclose(one.base_values, single.base_values, **TOL)
    np.testing.assert_allclose(one.prediction, single.prediction, **TOL)
    assert one.output == single.output
    if pairs:
        np.testing.assert_allclose(one.interactions, single.interactions, **TOL)


@pytest.mark.parametrize("name", MODELS)
def test_every_output_equals_its_single_output_call(iris, name):
    X, y = iris
    model = _fit(name, X, y)
    k = N_OUTPUTS.get(name, 3)
    rows, background = X[::29], X[::13]
    for kw in (dict(), dict(background=background)):
        every = ml.shapley(model, rows, algorithm="tree", interactions=True, **kw)
        assert every.values.shape == (len(rows), 4, k)
        assert every.interactions.shape == (len(rows), 4, 4, k)
        for c in range(k):
            single = ml.shapley(model, rows, algorithm="tree", interactions=True, target=c,
                                **kw)
            _same_attr(every.for_output(c), single, pairs=True)
        banzhaf = ml.shapley(model, rows, algorithm="tree", index="banzhaf", **kw)
        for c in range(k):
            _same_attr(banzhaf.for_output(c),
                       ml.shapley(model, rows, algorithm="tree", index="banzhaf", target=c,
                                  **kw))
    pd_every = ml.pdp(model, X, [0, (1, 2)], method="tree", grid=6)
    h_kw = dict(method="tree", sample=30, random_state=0, pairs=2)
    if name in ("hgb", "xgboost", "lightgbm"):  # the trees' raw output is the margin
        h_kw["response_method"] = "decision_function"
    # XGBClassifier has no decision_function: its margins' H statistics cannot be asked for
    h_every = ml.interactions(model, X, **h_kw) if name != "xgboost" else None
    for c in range(k):
        pd_one = ml.pdp(model, X, [0, (1, 2)], method="tree", grid=6, target=c)
        for feat in pd_one:
            np.testing.assert_allclose(pd_every[feat].for_output(c).values,
                                       pd_one[feat].values, **TOL)
            assert pd_every[feat].for_output(c).output == pd_one[feat].output
        if h_every is None:
            continue
        h_one = ml.interactions(model, X, target=c, **h_kw)
        part = h_every.for_output(c)
        pd.testing.assert_series_equal(part.overall, h_one.overall, **TOL)
        pd.testing.assert_frame_equal(part.pairwise, h_one.pairwise, **TOL)


def _shap_per_class(values, n, d, k):
    """shap's values as ``(n, d, k)`` (older shap returns a list per class)."""
    values = np.asarray(values)
    if values.shape[:2] == (n, d) and values.shape[-1] == k:
        return values
    return np.moveaxis(values, 0, -1)


@pytest.mark.parametrize("name", MODELS)
def test_treeshap_of_every_class_equals_shap_per_class(iris, name):
    shap = pytest.importorskip("shap")
    X, y = iris
    model = _fit(name, X, y)
    k = N_OUTPUTS.get(name, 3)
    rows = X[::11]
    explainer = shap.TreeExplainer(model)
    ours = ml.shapley(model, rows, algorithm="tree", interactions=True)
    scale = np.ptp(ours.prediction)
    # float32 thresholds and leaf values of the libraries: 1e-6 of the scale
    expected = _shap_per_class(explainer.shap_values(rows), len(rows), 4, k)
    np.testing.assert_allclose(ours.values, expected, rtol=0, atol=1e-6 * scale)
    np.testing.assert_allclose(ours.base_values[0], np.ravel(explainer.expected_value),
                               rtol=0, atol=1e-6 * scale)
    pairs = np.asarray(explainer.shap_interaction_values(rows))
    if pairs.shape != (len(rows), 4, 4, k):
        pairs = np.moveaxis(pairs, 0, -1)
    np.testing.assert_allclose(ours.interactions, pairs, rtol=0, atol=1e-6 * scale)
    # interventional: the boosters' margins against shap's interventional explainer; a
    # forest's probabilities against the enumeration of every coalition (shap's
    # interventional values of a multi-output forest fail its own additivity check)
    background = X[::15]
    ours = ml.shapley(model, rows, algorithm="tree", background=background)
    if name in ("hgb", "xgboost", "lightgbm"):
        theirs = shap.TreeExplainer(model, data=background,
                                    feature_perturbation="interventional")
        expected = _shap_per_class(theirs.shap_values(rows), len(rows), 4, k)
    else:
        expected = ml.shapley(model, rows, algorithm="exact", background=background).values
    np.testing.assert_allclose(ours.values, expected, rtol=0, atol=1e-6 * scale)


def _kernel_calls(monkeypatch, call):
    """Names of the tree kernels ``call`` runs, each call once (``K.sized`` and direct)."""
    seen = []
    sized = K.sized

    def spy_sized(kernel, rows, **kw):
        seen.append(kernel.__name__)
        return sized(kernel, rows, **kw)

    def spy(name, inner):
        def wrapper(*args, **kwargs):
            seen.append(name)
            return inner(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(K, "sized", spy_sized)
    for name in ("pd_recursion", "interaction_values"):
        monkeypatch.setattr(K, name, spy(name, getattr(K, name)))
    call()
    monkeypatch.undo()
    return seen


#: The kernels that send rows down the trees.
WALKS = {"pd_quadrature", "leaf_tables", "leaf_values", "background_counts", "background_masks",
         "interaction_values", "pd_recursion", "row_masks", "_count"}


@pytest.mark.parametrize("name", ["hgb", "forest"])
def test_every_output_is_one_traversal(iris, name, monkeypatch):
    """The kernels run as often for every class as for one (main ran them once per class)."""
    X, y = iris
    model = _fit(name, X, y)
    rows, background = X[:5], X[::10]
    h_kw = dict(method="tree", sample=20, random_state=0)
    if name == "hgb":
        h_kw["response_method"] = "decision_function"
    calls = {
        "path-dependent": lambda **kw: ml.shapley(model, rows, algorithm="tree",
                                                   interactions=True, **kw),
        "interventional": lambda **kw: ml.shapley(model, rows, algorithm="tree",
                                                   background=background, interactions=True,
                                                   **kw),
        "pdp": lambda **kw: ml.pdp(model, X, [0, 1], method="tree", grid=4, **kw),
        "interactions": lambda **kw: ml.interactions(model, X, **h_kw, **kw),
    }
    for what, call in calls.items():
        # the kernels that walk the trees (the H statistics' sums per output are not walks)
        every = [k for k in _kernel_calls(monkeypatch, call) if k in WALKS]
        one = [k for k in _kernel_calls(monkeypatch, lambda: call(target=1)) if k in WALKS]
        assert every, what
        assert sorted(every) == sorted(one), what


# ---------------------------------------------------------------------- one rule for outputs
def _outputs(result):
    """What a result says about its outputs: ``(outputs, labels)``."""
    first = result if not isinstance(result, ml.Effects) else next(iter(result.values()))
    return first.outputs, getattr(first, "output_labels", None)


def _answers(model, X, target):
    """Each method's outputs for ``target`` (or the error's type and first words)."""
    calls = {
        "pdp tree": lambda: ml.pdp(model, X, [0], method="tree", grid=3, target=target),
        "shapley tree": lambda: ml.shapley(model, X[:3], algorithm="tree", target=target),
        "interactions tree": lambda: ml.interactions(model, X, method="tree", sample=10,
                                                     random_state=0, target=target),
        "pdp brute": lambda: ml.pdp(model, X, [0], grid=3, target=target),
        "shapley exact": lambda: ml.shapley(model, X[:3], algorithm="exact",
                                            background=X[:5], target=target),
    }
    out = {}
    for name, call in calls.items():
        try:
            out[name] = _outputs(call())
        except InvalidParameterError as exc:
            out[name] = ("error", str(exc).split(";")[0])
    return out


@pytest.mark.parametrize("case", ["binary", "multiclass", "regressor", "regressor2"])
@pytest.mark.parametrize("target", [None, "all", [1], [0, 1], [], [1, 1]])
def test_tree_methods_pick_outputs_by_the_black_box_rule(iris, case, target):
    X, y = iris
    if case == "binary":
        model = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(
            X, y == 2)
        target = [True] if target == [1] else [False, True] if target == [0, 1] else \
            [True, True] if target == [1, 1] else target
    elif case == "multiclass":
        model = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    elif case == "regressor":
        model = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(
            X, X[:, 0] * X[:, 1])
    else:
        model = _fit("regressor2", X, y)
    answers = _answers(model, X, target)
    reference = answers["pdp brute"]
    for name, answer in answers.items():
        assert answer == reference, (name, answer, reference)


def test_both_classes_of_a_binary_booster_are_one_traversal_of_its_margin(iris):
    """A binary booster's one margin column gives both classes (the first negated)."""
    X, y = iris
    model = HistGradientBoostingClassifier(max_iter=8, max_depth=3, random_state=0).fit(
        X, np.where(y == 2, "yes", "no"))
    rows, background = X[::23], X[::17]
    for kw in (dict(), dict(background=background)):
        both = ml.shapley(model, rows, algorithm="tree", target="all", interactions=True, **kw)
        assert both.values.shape == (len(rows), 4, 2)
        for label in ("no", "yes"):
            _same_attr(both.for_output(label),
                       ml.shapley(model, rows, algorithm="tree", target=label,
                                  interactions=True, **kw), pairs=True)
        # the margin of "no" is minus that of "yes", value by value
        np.testing.assert_allclose(both.values[..., 0], -both.values[..., 1], **TOL)
    effects = ml.pdp(model, X, [1], method="tree", grid=5, target="all")
    np.testing.assert_allclose(effects["x1"].values[:, 0], -effects["x1"].values[:, 1], **TOL)
    one = ml.pdp(model, X, [1], method="tree", grid=5, target="no")["x1"]
    np.testing.assert_allclose(effects["x1"].for_output("no").values, one.values, **TOL)


def test_every_class_of_a_forest_through_the_sparse_background_path(iris, monkeypatch):
    """Leaves too deep for dense background counts (here: more than 2 features) pair the
    rows with the background's distinct masks; every class still equals its own call and
    the enumeration of the coalitions."""
    from modellens.attribution import tree as T
    X, y = iris
    model = _fit("forest", X, y)
    rows, background = X[::37], X[::9]
    monkeypatch.setattr(T, "DENSE_MAX_FEATURES", 2)
    paths = T.TreePaths(tree_ensemble(model))
    assert paths.plan(len(rows), len(background), game="interventional")["big"].any()
    every = ml.shapley(model, rows, algorithm="tree", background=background,
                       interactions=True)
    for c in range(3):
        _same_attr(every.for_output(c),
                   ml.shapley(model, rows, algorithm="tree", background=background,
                              interactions=True, target=c), pairs=True)
    exact = ml.shapley(model, rows, algorithm="exact", background=background)
    np.testing.assert_allclose(every.values, exact.values, rtol=0, atol=1e-12)


def test_every_class_of_a_forest_reads_one_shared_value_table(iris):
    """A forest's classes ride the same leaves: the interventional value tables hold the
    leaves' unit games once, whatever the number of classes (main held one table entry per
    class, k times the memory and lookups), and every leaf with a table (most of them, with
    this many rows; the merged sibling leaves too) still gives each class its own call's
    values and the exact enumeration's."""
    from modellens.attribution import tree as T
    X, y = iris
    model = _fit("forest", X, y)
    rows, background = np.repeat(X[::3], 4, axis=0), X[::7]
    ens = tree_ensemble(model)
    plans = [T.TreePaths(ens.select_outputs([(c, False) for c in cols])).plan(
        len(rows), len(background), game="interventional") for cols in ([0, 1], [0, 1, 2])]
    assert plans[0]["table_entries"] == plans[1]["table_entries"] > 0
    plan = plans[1]
    assert (plan["partner"] >= 0).any()  # merged siblings are read
    assert plan["leaf_lookups"] > 0.9 * len(rows) * (plan["tab_off"] != -2).sum()
    every = ml.shapley(model, rows, algorithm="tree", background=background)
    for c in range(3):
        _same_attr(every.for_output(c), ml.shapley(model, rows, algorithm="tree",
                                                   background=background, target=c))
    exact = ml.shapley(model, rows[::4], algorithm="exact", background=background)
    np.testing.assert_allclose(every.values[::4], exact.values, rtol=0, atol=1e-12)
