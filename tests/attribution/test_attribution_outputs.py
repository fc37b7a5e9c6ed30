"""Every output of a model explained at once by ml.shapley and ml.lime (issue 28).

Each output of the all-output call must equal the single-output call with
that ``target=`` (the same seed: the row streams do not depend on the output),
TreeSHAP of multiclass boosters must equal their own per-class contributions,
and the result's output axis must survive selection, tables, JSON and shap.
"""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression

import modellens as ml
from modellens._validation import InvalidParameterError

CLASSES = ["setosa", "versicolor", "virginica"]
TOL = dict(rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def regressor2(iris):
    X, _ = iris
    Y = np.c_[X.iloc[:, 0] * X.iloc[:, 1], X.iloc[:, 2] - X.iloc[:, 3]]
    return LinearRegression().fit(X, Y)


def two_columns(A):
    A = np.asarray(A, dtype=float)
    return np.c_[A[:, 0] * A[:, 1], np.sin(A[:, 2]) + A[:, 3]]


SHAPLEY_KW = {"exact": dict(algorithm="exact"),
              "permutation": dict(algorithm="permutation", n_permutations=10),
              "kernel": dict(algorithm="kernel", n_samples=10)}


def _same(one, single):
    """One output of the all-output call against the single-output call."""
    assert one.values.shape == single.values.shape
    np.testing.assert_allclose(one.values, single.values, **TOL)
    np.testing.assert_allclose(one.base_values, single.base_values, **TOL)
    np.testing.assert_allclose(one.prediction, single.prediction, **TOL)
    if single.std is not None:
        np.testing.assert_allclose(one.std, single.std, **TOL)
    assert one.output == single.output


def _models(iris, hgb, logistic, regressor2):
    X, _ = iris
    return [("hgb", hgb, CLASSES, dict(response_method="predict_proba")),
            ("logistic", logistic, CLASSES, {}),
            ("regressor2", regressor2, [0, 1], {}),
            ("function", two_columns, [0, 1], {})]


@pytest.mark.parametrize("algorithm", list(SHAPLEY_KW))
def test_every_output_of_shapley_equals_its_single_output_call(iris, hgb, logistic, regressor2,
                                                                algorithm):
    X, _ = iris
    rows, background = X.iloc[::37], X.iloc[::11]
    for name, model, labels, extra in _models(iris, hgb, logistic, regressor2):
        kw = dict(background=background, random_state=3, **SHAPLEY_KW[algorithm], **extra)
        every = ml.shapley(model, rows, **kw)
        k = len(labels)
        assert every.values.shape == (len(rows), 4, k), name
        assert every.base_values.shape == (len(rows), k), name
        assert len(every.outputs) == k
        if every.std is not None:
            assert every.std.shape == (len(rows), 4, k)
        for c, label in enumerate(labels):
            single = ml.shapley(model, rows, target=label, **kw)
            _same(every.for_output(label), single)
            _same(every[..., c], single)
            _same(every.for_output(every.outputs[c]), single)
        # the values add up per output
        np.testing.assert_allclose(every.base_values + every.values.sum(axis=1),
                                   every.prediction, atol=1e-9 if algorithm != "permutation"
                                   else 1e-9)


@pytest.mark.parametrize("sampling", ["per_row", "shared"])
def test_every_output_of_lime_is_fit_on_the_same_samples(iris, hgb, logistic, regressor2,
                                                         sampling):
    X, _ = iris
    rows = X.iloc[::50]
    for name, model, labels, extra in _models(iris, hgb, logistic, regressor2):
        kw = dict(training_data=X, random_state=5, num_samples=200, sampling=sampling, **extra)
        every = ml.lime(model, rows, **kw)
        assert every.values.shape == (len(rows), 4, len(labels)), name
        assert every.score.shape == (len(rows), len(labels))
        for label in labels:
            single = ml.lime(model, rows, target=label, **kw)
            one = every.for_output(label)
            _same(one, single)
            np.testing.assert_allclose(one.score, single.score, **TOL)
            np.testing.assert_allclose(one.intercept, single.intercept, **TOL)


def test_lime_stability_is_kept_per_output(iris, logistic):
    X, _ = iris
    kw = dict(training_data=X, random_state=0, num_samples=150, stability=3)
    every = ml.lime(logistic, X.iloc[:2], **kw)
    single = ml.lime(logistic, X.iloc[:2], target="virginica", **kw)
    np.testing.assert_allclose(every.for_output("virginica").surrogate.stability["weight_std"],
                               single.surrogate.stability["weight_std"], **TOL)


def test_treeshap_of_a_multiclass_hgb_equals_shap_per_class(iris, hgb):
    shap = pytest.importorskip("shap")
    X, _ = iris
    rows = X.iloc[::13]
    every = ml.shapley(hgb, rows, algorithm="tree")  # the margins, every class
    assert every.method == "shapley-tree"
    assert every.values.shape == (len(rows), 4, 3)
    expected = np.asarray(shap.TreeExplainer(hgb).shap_values(rows))
    expected = expected if expected.shape == (len(rows), 4, 3) else np.moveaxis(expected, 0, -1)
    np.testing.assert_allclose(every.values, expected, atol=1e-6)
    for label in CLASSES:
        _same(every.for_output(label), ml.shapley(hgb, rows, algorithm="tree", target=label))


def test_treeshap_of_multiclass_xgboost_and_lightgbm_equals_their_contributions(iris):
    xgb = pytest.importorskip("xgboost")
    lgb = pytest.importorskip("lightgbm")
    X, y = iris
    codes = pd.Series(y).map({c: i for i, c in enumerate(CLASSES)}).to_numpy()
    X = X.to_numpy()  # LightGBM renames columns with spaces
    rows = X[::17]
    booster = xgb.XGBClassifier(n_estimators=8, max_depth=3).fit(X, codes)
    every = ml.shapley(booster, rows, algorithm="tree")
    contribs = booster.get_booster().predict(xgb.DMatrix(rows), pred_contribs=True)  # (n, k, d+1)
    np.testing.assert_allclose(every.values, np.moveaxis(contribs[:, :, :-1], 1, 2), atol=1e-5)
    np.testing.assert_allclose(every.base_values, contribs[:, :, -1], atol=1e-5)
    gbm = lgb.LGBMClassifier(n_estimators=8, num_leaves=7, verbose=-1).fit(X, codes)
    every = ml.shapley(gbm, rows, algorithm="tree")
    contribs = gbm.predict(rows, pred_contrib=True).reshape(len(rows), 3, 5)
    np.testing.assert_allclose(every.values, np.moveaxis(contribs[:, :, :-1], 1, 2), atol=1e-9)
    np.testing.assert_allclose(every.base_values, contribs[:, :, -1], atol=1e-9)


def test_binary_models_keep_their_shapes_and_all_gives_both_classes(iris):
    X, y = iris
    model = LogisticRegression(max_iter=500).fit(X, y == "virginica")
    kw = dict(background=X.iloc[::15], algorithm="exact")
    one = ml.shapley(model, X.iloc[:3], **kw)
    assert one.values.shape == (3, 4) and one.outputs is None
    both = ml.shapley(model, X.iloc[:3], target="all", **kw)
    assert both.values.shape == (3, 4, 2)
    _same(both.for_output(True), one)
    _same(both.for_output(False), ml.shapley(model, X.iloc[:3], target=False, **kw))
    # probabilities of both classes: their values are opposite
    np.testing.assert_allclose(both.values[..., 0], -both.values[..., 1], atol=1e-12)


def test_a_list_of_targets_gives_those_outputs_in_that_order(iris, logistic, hgb):
    X, _ = iris
    kw = dict(background=X.iloc[::15], algorithm="exact")
    two = ml.shapley(logistic, X.iloc[:3], target=["virginica", "setosa"], **kw)
    assert two.outputs == ["P(y = virginica)", "P(y = setosa)"]
    _same(two[..., "setosa"], ml.shapley(logistic, X.iloc[:3], target="setosa", **kw))
    trees = ml.shapley(hgb, X.iloc[:3], algorithm="tree", target=["virginica", "setosa"])
    assert trees.values.shape == (3, 4, 2)
    _same(trees.for_output("setosa"),
          ml.shapley(hgb, X.iloc[:3], algorithm="tree", target="setosa"))


@pytest.mark.parametrize("algorithm", ["exact", "tree"])
def test_bad_targets_are_errors_naming_the_problem(iris, hgb, algorithm):
    X, _ = iris
    with pytest.raises(InvalidParameterError, match="twice"):
        ml.shapley(hgb, X.iloc[:3], algorithm=algorithm, background=X.iloc[:10],
                   target=["setosa", "setosa"])
    with pytest.raises(InvalidParameterError, match="tulip"):
        ml.shapley(hgb, X.iloc[:3], algorithm=algorithm, background=X.iloc[:10],
                   target=["setosa", "tulip"])
    with pytest.raises(InvalidParameterError, match="empty"):
        ml.shapley(hgb, X.iloc[:3], algorithm=algorithm, background=X.iloc[:10], target=[])


def test_selecting_an_unknown_output_names_the_outputs(iris, logistic):
    X, _ = iris
    attr = ml.shapley(logistic, X.iloc[:2], background=X.iloc[::15])
    with pytest.raises(KeyError, match="P\\(y = setosa\\)"):
        attr.for_output("tulip")
    single = attr.for_output(0)
    assert single.for_output(0) is single  # its own output: itself
    with pytest.raises(KeyError, match="one output"):
        single.for_output(1)


def test_tables_json_and_shap_carry_the_output_axis(iris, logistic):
    X, _ = iris
    attr = ml.shapley(logistic, X.iloc[:3], background=X.iloc[::15], algorithm="permutation",
                      n_permutations=10, random_state=0)
    frame = attr.to_frame()
    assert len(frame) == 3 * 4 * 3
    assert list(frame["output"].unique()) == attr.outputs
    part = frame[frame["output"] == "P(y = versicolor)"].drop(columns="output")
    pd.testing.assert_frame_equal(part.reset_index(drop=True),
                                  attr.for_output("versicolor").to_frame())
    back = ml.Attributions.from_dict(json.loads(json.dumps(attr.to_dict())))
    assert back.outputs == attr.outputs and back.output_labels == attr.output_labels
    np.testing.assert_array_equal(back.values, attr.values)
    np.testing.assert_array_equal(back.std, attr.std)
    _same(back.for_output("virginica"), attr.for_output("virginica"))
    pytest.importorskip("shap")
    explanation = attr.to_shap()
    assert explanation.values.shape == (3, 4, 3)
    assert np.shape(explanation.base_values) == (3, 3)
    # rows and features of a multi-output result keep the axis
    assert attr[:2, ["sepal length (cm)"]].values.shape == (2, 1, 3)
    assert attr[1, :, "setosa"].values.shape == (1, 4)


def test_plots_of_one_output_ask_which_and_the_bar_plot_stacks_them(iris, logistic):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, _ = iris
    attr = ml.shapley(logistic, X.iloc[:20], background=X.iloc[::15])
    for name in ("waterfall", "force", "beeswarm"):
        with pytest.raises(InvalidParameterError, match="P\\(y = setosa\\)"):
            getattr(attr.plot, name)()
        getattr(attr.plot, name)(output="setosa")
    with pytest.raises(InvalidParameterError, match="output="):
        attr.plot.dependence(0)
    attr.plot.dependence(0, output=2)
    ax = attr.plot.bar()
    # one segment per (feature, output), stacked to each feature's total
    assert len(ax.patches) == 4 * 3
    widths = np.array([p.get_width() for p in ax.patches]).reshape(3, 4)
    np.testing.assert_allclose(np.sort(widths.sum(axis=0)),
                               np.sort(attr.mean_abs().sum(axis=1)), rtol=1e-12)
    plt.close("all")


def test_the_interactions_plot_of_several_outputs_names_itself(iris, logistic):
    # review: attr.plot.interactions() without output= said "interaction_pairs() shows one
    # output", a call the user did not make
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, _ = iris
    attr = ml.shapley(logistic, X.iloc[:5], background=X.iloc[::15], interactions=True)
    with pytest.raises(InvalidParameterError, match=r"the interactions plot shows one output.*"
                                                    r"P\(y = setosa\)"):
        attr.plot.interactions()
    ax = attr.plot.interactions(output="setosa")
    assert len(ax.patches) == 6  # every pair of the four features
    plt.close("all")
