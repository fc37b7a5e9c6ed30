"""The report of a multiclass model: every class in the effects, one named class per attribution."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import confusion_matrix

import modellens as ml

SMALL = dict(n_explain=6, n_background=8, grid=5, shapley_budget=20_000, progress=False)
FEATURES = ["sepal_length", "sepal_width", "petal_length", "petal_width"]


def _iris_like(n=150, seed=0):
    """Three species as Gaussian clusters in four measurements (like Fisher's iris)."""
    rng = np.random.default_rng(seed)
    centres = np.array([[5.0, 3.4, 1.5, 0.25], [5.9, 2.8, 4.3, 1.3], [6.6, 3.0, 5.5, 2.0]])
    species = np.repeat(np.array(["setosa", "versicolor", "virginica"]), n // 3)
    X = pd.DataFrame(centres[np.repeat(np.arange(3), n // 3)]
                     + rng.normal(0, [0.4, 0.3, 0.5, 0.25], size=(n // 3 * 3, 4)),
                     columns=FEATURES)
    # fewer setosa rows, so one class has the highest mean probability
    keep = np.r_[np.arange(30), np.arange(n // 3, n // 3 * 3)]
    return X.iloc[keep].reset_index(drop=True), species[keep]


@pytest.fixture(scope="module")
def fitted():
    X, y = _iris_like()
    clf = HistGradientBoostingClassifier(max_iter=15, random_state=0).fit(X, y)
    rep = ml.report(clf, X, y, sample=len(X), **SMALL)
    return X, y, clf, rep


def test_effects_hold_every_class_equal_to_one_class_calls(fitted):
    X, _, clf, rep = fitted
    data = rep.sections["effects"].data
    for name in FEATURES:
        pd_all, ale_all = data["pdp"][name], data["ale"][name]
        assert pd_all.outputs == [f"P(y = {c})" for c in clf.classes_]
        assert np.shape(pd_all.values) == (5, 3)
        for k, c in enumerate(clf.classes_):
            one = ml.pdp(clf, X, [name], grid=5, ice=True, target=c, progress=False)[name]
            np.testing.assert_allclose(pd_all.for_output(k).values, one.values, atol=1e-12,
                                       rtol=0)
            np.testing.assert_allclose(pd_all.for_output(k).ice, one.ice, atol=1e-12, rtol=0)
            one_ale = ml.ale(clf, X, [name], bins=5, target=c, progress=False)[name]
            np.testing.assert_allclose(ale_all.for_output(c).values, one_ale.values,
                                       atol=1e-12, rtol=0)
    assert "one line per output" in " ".join(rep.sections["effects"].notes)


def test_confusion_matrix_is_scikit_learns(fitted):
    X, y, clf, rep = fitted
    q = rep.sections["quality"].data
    np.testing.assert_array_equal(q["confusion"], confusion_matrix(y, clf.predict(X)))
    assert q["metrics"]["overall_accuracy"] == np.mean(clf.predict(X) == y)


def test_shapley_and_lime_name_the_class_they_explain(fitted):
    X, _, clf, rep = fitted
    # the class of highest mean predicted probability
    chosen = clf.classes_[np.argmax(clf.predict_proba(X).mean(axis=0))]
    name = f"P(y = {chosen})"
    assert chosen != clf.classes_[0]  # not just the first class
    for key in ("shapley", "lime"):
        sec = rep.sections[key]
        assert name in sec.title
        assert any(name in note and "highest mean predicted probability" in note
                   for note in sec.notes)
        assert sec.data["attributions"].output == name
    # the values add up to that class's probability minus its mean over the background
    data = rep.sections["shapley"].data
    proba = clf.predict_proba(X)[:, list(clf.classes_).index(chosen)]
    np.testing.assert_allclose(
        np.asarray(data["attributions"].values).sum(axis=1),
        proba[data["explained_rows"]] - proba[data["background_rows"]].mean(), atol=1e-9)
    page = rep.to_html()
    assert f"Shapley values ({name})" in page.replace("&#x27;", "'")


def test_a_target_explains_that_class_alone():
    X, y = _iris_like()
    clf = LogisticRegression(max_iter=500).fit(X, y)
    rep = ml.report(clf, X, y, target="virginica", sections=["quality", "effects"], sample=len(X),
                    **SMALL)
    effect = rep.sections["effects"].data["pdp"]["petal_length"]
    assert np.ndim(effect.values) == 1 and effect.output == "P(y = virginica)"
    np.testing.assert_array_equal(rep.sections["quality"].data["confusion"],
                                  confusion_matrix(y, clf.predict(X)))


def test_a_binary_report_keeps_one_output():
    X, y = _iris_like()
    y = (y == "virginica").astype(int)
    clf = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, y)
    rep = ml.report(clf, X, y, sample=len(X), sections=["effects", "shapley"], **SMALL)
    effect = rep.sections["effects"].data["pdp"]["petal_length"]
    assert np.ndim(effect.values) == 1 and effect.output == "P(y = 1)"
    np.testing.assert_allclose(
        effect.values, ml.pdp(clf, X, ["petal_length"], grid=5, progress=False)[
            "petal_length"].values, atol=1e-12)
    assert rep.sections["shapley"].title == "Shapley values"
    assert not any("explain one output" in n for n in rep.sections["shapley"].notes)


def test_every_class_of_lime_interactions_and_regions_in_one_pass(fitted):
    """The sections of one picture hold every class (the explorer's class selector reads
    them): each class's LIME weights, H statistics and pair heatmaps are those of a call
    with that target; the regions are ml.regions of every class at once."""
    X, _, clf, rep = fitted
    lime = rep.sections["lime"].data
    inter = rep.sections["interaction"].data
    reg = rep.sections["regions"].data
    rows = X.iloc[lime["rows"]]
    every = inter["every_output"]
    screened = list(every["interactions"].overall.index)
    # the features' blocks came from the trees (exact ICE of the probabilities); below, each
    # class's statistics equal those of model rows alone
    assert every["interactions"].blocks_from_trees
    assert "each feature's partial dependence read exactly from the trees" in \
        " ".join(rep.sections["interaction"].notes)
    assert len(every["ranked"]) == len(clf.classes_)
    for k, c in enumerate(clf.classes_):
        one = ml.lime(clf, rows, training_data=X, random_state=0, target=c)
        np.testing.assert_allclose(lime["every_output"].for_output(k).values, one.values,
                                   atol=1e-12, rtol=0)
        h = ml.interactions(clf, X, screened, sample=every["interactions"].sample_size,
                            method="brute", random_state=0, target=c, progress=False)
        mine = every["interactions"].for_output(k).pairwise
        np.testing.assert_allclose(mine["h2"], h.pairwise["h2"], atol=1e-12, rtol=0)
        # the class's ranking: its pairs, a meaningful share first, then by size
        ranked = every["ranked"][k]
        assert {p: h2 for p, _, h2 in ranked} == pytest.approx(dict(zip(
            zip(h.pairwise["feature_1"], h.pairwise["feature_2"]), h.pairwise["h2"])))
        order = [(h2 < 0.01, -size) for _, size, h2 in ranked]
        assert order == sorted(order)
        for pair, effect in every["pair_effects"].items():
            single = ml.ale(clf, X, [pair], bins=5, target=c, progress=False)[pair]
            np.testing.assert_allclose(effect.for_output(k).values, single.values,
                                       atol=1e-12, rtol=0)
    # the section's single-class numbers are the explained class's part
    explained = rep.sections["shapley"].data["attributions"].output
    position = list(every["interactions"].outputs).index(explained)
    assert inter["ranked"] == every["ranked"][position]
    np.testing.assert_array_equal(lime["attributions"].values,
                                  lime["every_output"].for_output(position).values)
    # the pairs with a heatmap: each class's strongest among them
    assert {p for p, _, _ in (r[0] for r in every["ranked"])} <= set(every["pair_effects"])
    joint = ml.regions(clf, X, reg["features"], bins=5, random_state=0, progress=False)
    assert reg["regions"].outputs == joint.outputs == [f"P(y = {c})" for c in clf.classes_]
    for name in reg["features"]:
        mine, theirs = reg["regions"].effects(name), joint.effects(name)
        assert list(mine) == list(theirs)
        for region in mine:
            np.testing.assert_allclose(mine[region].values, theirs[region].values, atol=1e-12)
    assert any("every output of the 3 together" in n for n in rep.sections["regions"].notes)


def test_tree_rows_keep_the_page_bounded():
    """Many features and classes: the scatter rows stop at SCATTER_VALUES Shapley values."""
    from sklearn.ensemble import RandomForestClassifier

    from modellens.report._inputs import SCATTER_VALUES

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(1500, 40)), columns=[f"x{j}" for j in range(40)])
    y = np.digitize(X["x0"] + X["x1"], [-0.5, 0.5])
    clf = RandomForestClassifier(5, max_depth=3, random_state=0).fit(X, y)
    rep = ml.report(clf, X, sections=["shapley"], n_explain=6, n_background=4,
                    shapley_budget=1, progress=False)
    scatter = rep.sections["shapley"].data["scatter"]
    assert scatter.shape == (SCATTER_VALUES // (40 * 3), 40, 3)
    proba = clf.predict_proba(X)
    rows = rep.sections["shapley"].data["scatter_rows"]
    background = proba[rep.sections["shapley"].data["background_rows"]].mean(axis=0)
    np.testing.assert_allclose(np.asarray(scatter.values).sum(axis=1), proba[rows] - background,
                               atol=1e-9)


def test_a_one_column_y_of_a_model_with_several_outputs_is_not_scored_against_the_first():
    """A multi-output regressor and one y: which output y measures is unknown (the first was
    scored against it, R^2 -315 on linnerud's pulse); the page says so instead of a number,
    and with target= the right output is scored."""
    from sklearn.datasets import load_linnerud
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.metrics import r2_score

    X, Y = load_linnerud(return_X_y=True, as_frame=True)
    model = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, Y)
    with pytest.warns(ml.ModellensWarning, match="3 outputs.*not scored.*target="):
        rep = ml.report(model, X, Y["Pulse"], sections=["quality"])
    quality = rep.sections["quality"]
    assert quality.data["metrics"] == {} and "not scored" in " ".join(quality.notes)
    rep = ml.report(model, X, Y["Pulse"], target=2, sections=["quality"])
    expected = r2_score(Y["Pulse"], model.predict(X)[:, 2])
    assert rep.sections["quality"].data["metrics"]["r2"] == pytest.approx(expected, abs=1e-12)


def tree_rows(monkeypatch) -> list:
    """The rows of each TreeSHAP call of the report's Shapley section, as it runs."""
    from modellens.report._sections import shapley as section

    calls = []
    real = section.shapley

    def counting(model, X, **kw):
        if kw.get("algorithm") == "tree":
            calls.append(len(X))
        return real(model, X, **kw)

    monkeypatch.setattr(section, "shapley", counting)
    return calls


def test_treeshap_of_one_row_finds_the_trees_explain_another_scale(monkeypatch):
    """A boosted classifier's trees add up to log-odds, the page shows probabilities: one
    explained row's TreeSHAP finds that out (not every explained row's)."""
    calls = tree_rows(monkeypatch)
    X, y = _iris_like()
    clf = HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(X, y)
    # a budget below exact enumeration's: TreeSHAP is asked
    rep = ml.report(clf, X, y, sections=["shapley"], **{**SMALL, "shapley_budget": 1000})
    assert calls == [1]
    assert any("TreeSHAP would explain" in n for n in rep.sections["shapley"].notes)
    assert rep.sections["shapley"].data["attributions"].method != "shapley-tree"
