"""The HTML report: sections hold the numbers they show, the page is safe and opens offline."""

import re
import subprocess
import sys
import zipfile

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import r2_score, roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder
from support import (
    _assert_inert,
    _parse,
    assert_opens_cleanly,
    injected_page,
    open_in_browser,
    page_errors,
)

import modellens as ml
from modellens.data import Dataset
from modellens.report import SECTIONS
from modellens.report._dependence import dependence

SMALL = dict(sample=150, n_explain=8, n_background=8, grid=5, shapley_budget=20_000)


def _frame(n=240, seed=0):
    """Numeric, categorical and string columns; x2 is x1 plus a little noise; x3 has NaN."""
    rng = np.random.default_rng(seed)
    x1 = rng.uniform(-2, 2, n)
    frame = pd.DataFrame({
        "x1": x1,
        "x2": x1 + rng.normal(0, 0.05, n),
        "x3": np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n)),
        "colour": pd.Categorical(rng.choice(["red", "green", "blue"], n)),
        "city": pd.Series(rng.choice(["Oslo", "Lima", "Pune"], n), dtype=object),
    })
    y = 2 * frame.x1 - frame.x2 + 1.5 * np.nan_to_num(frame.x3) \
        + (frame.colour == "red") * 2.0 + (frame.city == "Lima") * 1.0 + rng.normal(0, .1, n)
    return frame, y


def _pipeline():
    return make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), ["colour", "city"]),
            (SimpleImputer(), ["x1", "x2", "x3"])),
        Ridge(alpha=1e-3))


@pytest.fixture(scope="module")
def fitted():
    X, y = _frame()
    return _pipeline().fit(X, y), X, y


@pytest.fixture(scope="module")
def rep(fitted):
    model, X, y = fitted
    return ml.report(model, X, y, rows=[5, 17], random_state=3, **SMALL)


def test_sections_in_order(rep):
    expected = ["data", "quality", "effects", "interaction", "regions", "shapley",
                "conditional", "lime"]
    assert list(rep.sections) == expected
    # "changed" is on the page when the report is given reference data
    assert [s.key for s in SECTIONS] == expected[:2] + ["changed"] + expected[2:]
    assert all(s.seconds >= 0 for s in rep.sections.values())


def test_data_section_describes_every_column(rep, fitted):
    _, X, _ = fitted
    rows = {f["feature"]: f for f in rep.sections["data"].data["features"]}
    assert list(rows) == list(X.columns)
    assert rows["x3"]["missing"] == int(X.x3.isna().sum()) > 0
    assert rows["x1"]["missing"] == 0
    assert (rows["x1"]["kind"], rows["colour"]["kind"], rows["city"]["kind"]) == \
        ("numeric", "categorical", "categorical")
    assert rows["colour"]["distinct"] == 3 and rows["city"]["distinct"] == 3
    assert rows["x1"]["range"].startswith(f"{X.x1.min():.4g} to {X.x1.max():.4g}")
    # x1 and x2 are one feature twice: the others explain almost all of each, and PD of
    # either evaluates points off the data, which the page says beside them
    assert rows["x1"]["dependence"] > 0.9 and rows["x2"]["dependence"] > 0.9
    assert rows["x1"]["warning"] and rows["x2"]["warning"]
    assert rows["x3"]["dependence"] < 0.2 and not rows["x3"]["warning"]
    assert rows["colour"]["dependence"] < 0.3 and not rows["colour"]["warning"]


def test_dependence_of_a_categorical_feature_and_its_off_data_share():
    rng = np.random.default_rng(1)
    n = 600
    z = rng.uniform(0, 3, n)
    X = pd.DataFrame({"z": z, "level": pd.Categorical(np.array(["a", "b", "c"])[z.astype(int)]),
                      "noise": pd.Categorical(rng.choice(["p", "q"], n)),
                      "w": rng.normal(size=n)})
    ds = Dataset.from_data(X)
    grids = {1: np.array([0.0, 1.0, 2.0]), 2: np.array([0.0, 1.0]),
             3: np.linspace(X.w.min(), X.w.max(), 10)}
    out = dependence(ds, grids, random_state=0)
    # "level" is a function of z: perfectly predicted, and PD setting it to the other two
    # levels puts two thirds of its points where no data are
    assert out[1]["score"] > 0.95
    assert out[1]["off_data"] == pytest.approx(2 / 3, abs=0.05)
    # an independent coin and an independent normal: near 0 (chance level), nothing off
    # the data beyond the feature's own tails
    assert abs(out[2]["score"]) < 0.15 and out[2]["off_data"] < 0.05
    assert out[3]["score"] < 0.1 and out[3]["off_data"] < 0.1
    assert out[0]["score"] > 0.8  # z is pinned to a third of its range by its level


def test_quality_matches_scikit_learn(rep, fitted):
    model, X, y = fitted
    metrics = rep.sections["quality"].data["metrics"]
    pred = model.predict(X)
    assert metrics["r2"] == pytest.approx(r2_score(y, pred), rel=1e-10)
    assert metrics["mae"] == pytest.approx(np.mean(np.abs(y - pred)), rel=1e-10)


def test_quality_of_a_classifier_has_auc_and_calibration():
    X, y = _frame(seed=2)
    labels = np.where(y > np.median(y), "high", "low")
    model = make_pipeline(_pipeline().steps[0][1], LogisticRegression()).fit(X, labels)
    r = ml.report(model, X, labels, sections=["quality"], **SMALL)
    q = r.sections["quality"].data
    proba = model.predict_proba(X)[:, list(model.classes_).index("low")]
    positive = labels == "low"
    assert q["task"] == "classification"
    assert q["metrics"]["auc"] == pytest.approx(roc_auc_score(positive, proba), rel=1e-10)
    assert q["metrics"]["accuracy"] == pytest.approx(np.mean((proba >= 0.5) == positive))
    cal = q["calibration"]
    assert np.all(np.diff(cal["mean_predicted"]) > 0)
    assert len(r.sections["quality"].figures) == 1


def test_effects_are_those_of_the_methods_on_the_stated_sample(rep, fitted):
    model, X, _ = fitted
    eff = rep.sections["effects"].data
    sample = X.iloc[np.sort(np.random.default_rng(3).choice(len(X), 150, replace=False))]
    direct = ml.pdp(model, sample, ["x3", "colour"], grid=5, ice=True)
    np.testing.assert_allclose(eff["pdp"]["x3"].values, direct["x3"].values, rtol=1e-12)
    np.testing.assert_allclose(eff["pdp"]["colour"].values, direct["colour"].values,
                               rtol=1e-12)
    ale = ml.ale(model, sample, ["x1"], bins=5)
    np.testing.assert_allclose(eff["ale"]["x1"].values, ale["x1"].values, rtol=1e-12)
    # order: standard deviation of the PD curve over the rows (each grid point / level
    # weighted by the rows nearest to it)
    imp = eff["importance"]

    def weighted_std(values, weights):
        mean = np.average(values, weights=weights)
        return np.sqrt(np.average((values - mean) ** 2, weights=weights))

    grid = np.asarray(direct["x3"].grid, dtype=float)
    x3 = sample["x3"].dropna().to_numpy()  # rows without a value weigh nothing
    nearest = np.abs(x3[:, None] - grid[None, :]).argmin(axis=1)
    assert imp["x3"] == pytest.approx(weighted_std(direct["x3"].values,
                                                   np.bincount(nearest, minlength=grid.size)))
    counts = sample["colour"].value_counts()
    assert imp["colour"] == pytest.approx(weighted_std(
        direct["colour"].values, [counts[g] for g in direct["colour"].grid]))
    assert eff["order"] == sorted(imp, key=lambda f: -imp[f])
    assert len(rep.sections["effects"].figure_groups) == 5
    # the dependence warning sits beside the feature's effects
    groups = {g.title.split(" (")[0]: g for g in rep.sections["effects"].figure_groups}
    assert groups["x1"].warnings and not groups["x3"].warnings


def test_interaction_picks_the_pair_whose_second_order_ale_varies_most():
    rng = np.random.default_rng(4)
    X = pd.DataFrame(rng.uniform(-1, 1, (300, 4)), columns=["a", "b", "c", "d"])

    def f(Z):
        Z = np.asarray(Z)
        return 3 * Z[:, 0] + 2 * Z[:, 1] + Z[:, 2] + 0.5 * Z[:, 3] + 4 * Z[:, 1] * Z[:, 3]

    r = ml.report(f, X, sections=["effects", "interaction"], **SMALL)
    data = r.sections["interaction"].data
    assert set(data["pair"]) == {"b", "d"}
    others = [s for p, s in data["strength"].items() if set(p) != {"b", "d"}]
    assert data["strength"][data["pair"]] > 10 * max(others)


def test_shapley_rows_default_to_highest_lowest_and_median_prediction(fitted):
    model, X, y = fitted
    r = ml.report(model, X, sections=["shapley"], random_state=1, **SMALL)
    data = r.sections["shapley"].data
    attr = data["attributions"]
    np.testing.assert_allclose(attr.base_values + attr.values.sum(axis=1), attr.prediction,
                               atol=1e-8)
    order = np.argsort(attr.prediction)
    explained = r.sections["shapley"].data["rows"]
    pred = model.predict(X.iloc[explained])
    assert pred[0] == pytest.approx(attr.prediction[order[-1]])
    assert pred[1] == pytest.approx(attr.prediction[order[0]])
    # each of the three rows: its waterfall and its ceteris-paribus curves
    (group,) = [g for g in r.sections["shapley"].figure_groups if g.title.startswith("Rows")]
    assert len(group.figures) == 2 * 3


def test_user_rows_are_explained_first(rep):
    data = rep.sections["shapley"].data
    assert data["rows"] == [5, 17]
    assert [c for c in (f.caption for f in rep.sections["shapley"].figures) if c] == \
        ["row 5", "row 17"]


def test_waterfall_titles_name_the_row_of_the_data(monkeypatch, fitted):
    import matplotlib.figure

    titles = []
    keep = matplotlib.figure.Figure.savefig

    def spy(fig, *args, **kwargs):
        titles.extend(ax.get_title() for ax in fig.axes)
        return keep(fig, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", spy)
    model, X, _ = fitted
    rep = ml.report(model, X, sections=["shapley"], rows=[40, 7], **SMALL)
    # the pictures are drawn when the page needs them: here, one after another
    [f.png for f in rep.sections["shapley"].figures]
    rows = [t.split(":")[0] for t in titles if t.startswith("row ")]
    assert rows == ["row 40", "row 7"]


def test_same_seed_same_numbers(fitted):
    model, X, _ = fitted
    a = ml.report(model, X, sections=["shapley"], random_state=7, **SMALL)
    b = ml.report(model, X, sections=["shapley"], random_state=7, **SMALL)
    np.testing.assert_array_equal(a.sections["shapley"].data["attributions"].values,
                                  b.sections["shapley"].data["attributions"].values)


def test_bad_options_are_refused(fitted):
    model, X, y = fitted
    with pytest.raises(ml.InvalidParameterError, match="one value per row"):
        ml.report(model, X, y[:10])
    with pytest.raises(ml.InvalidParameterError, match="row positions"):
        ml.report(model, X, rows=[len(X)])
    with pytest.raises(ml.InvalidParameterError, match="sample"):
        ml.report(model, X, sample=0)
    with pytest.raises(ml.InvalidParameterError, match="unknown sections"):
        ml.report(model, X, sections=["nope"])


def test_lime_section_is_lime_on_the_waterfall_rows(fitted):
    """The section holds what ``ml.lime`` gives for those rows against the stated sample."""
    import modellens
    from modellens.report._inputs import take_rows

    model, X, y = fitted
    X = X.assign(x3=X.x3.fillna(0.0))  # LIME's sampler needs complete training data
    r = ml.report(model, X, sections=["shapley", "lime"], rows=[3, 11], random_state=4, **SMALL)
    assert list(r.sections) == ["shapley", "lime"]
    sec = r.sections["lime"]
    assert sec.data["rows"] == r.sections["shapley"].data["rows"][:len(sec.data["rows"])]
    rows = sec.data["rows"]
    assert rows[:2] == [3, 11]
    # training statistics from the report's stated sample of rows
    assert len(sec.data["training_rows"]) == SMALL["sample"]
    direct = modellens.lime(model, take_rows(X, rows), random_state=4,
                            training_data=take_rows(X, sec.data["training_rows"]))
    np.testing.assert_array_equal(sec.data["attributions"].values, direct.values)
    np.testing.assert_array_equal(sec.data["score"], direct.score)
    assert len(sec.figure_groups[0].figures) == len(rows)


def test_lime_section_says_why_when_lime_cannot_run(fitted):
    model, X, _ = fitted
    # a few missing values are drawn as the data have them (x3: 10%); a column with no
    # value at all gives LIME nothing to sample from
    r = ml.report(model, X, sections=["lime"], rows=[3], **SMALL)
    assert r.sections["lime"].figure_groups
    r = ml.report(model, X.assign(x3=np.nan), sections=["lime"], rows=[3], **SMALL)
    sec = r.sections["lime"]
    assert sec.figure_groups == [] and "LIME was not run" in sec.warnings[0]
    assert "only missing values" in sec.warnings[0]


def test_page_is_self_contained_and_navigable(rep, tmp_path):
    path = rep.save(tmp_path / "r.html")
    text = path.read_text(encoding="utf-8")
    page = _parse(text)
    ids = {a.get("id") for _, a in page.elements}
    links = [a["href"] for t, a in page.elements if t == "a"]
    assert set(links) == {f"#{k}" for k in rep.sections} | {"#run", "#explore"}
    assert {k for k in rep.sections} <= ids
    imgs = [a["src"] for t, a in page.elements if t == "img"]
    assert len(imgs) == sum(len(s.figures) for s in rep.sections.values()) > 10
    assert all(src.startswith("data:image/png;base64,") for src in imgs)
    # nothing is fetched: no other src / href than anchors and data URIs, no link tags
    for tag, attrs in page.elements:
        assert tag != "link"
        for key in ("src", "href"):
            if key in attrs:
                assert attrs[key].startswith(("#", "data:"))
    assert "@media print" in text
    footer = " ".join(page.text)
    for needle in ("random_state (seed)", "sample for effects and dependence", "time: effects",
                   "shapley-", ml.__version__):
        assert needle in footer
    # the explorer's plotly.js is a few MB of its own; the rest is bounded as before
    from plotly.offline import get_plotlyjs

    assert get_plotlyjs() in text and len(text) - len(get_plotlyjs()) < 3_000_000


def test_repr_html_is_the_page_in_a_sandboxed_frame(rep):
    out = rep._repr_html_()
    assert out.startswith("<iframe srcdoc=\"") and 'sandbox="allow-scripts"' in out
    assert "<script" not in out.split('srcdoc="', 1)[1].split('"', 1)[0]  # escaped inside


@pytest.fixture(scope="module")
def injected(tmp_path_factory):
    """The page of a report on names and labels that try to run code (support.injected_page:
    built once, read as text by one test and opened in Chromium by another; each built its
    own, and test_report_interactive.py shares it when it runs in the same process)."""
    return injected_page(tmp_path_factory)


def test_names_and_labels_from_the_data_are_escaped(injected):
    _assert_inert(injected.read_text(encoding="utf-8"))


@pytest.mark.browser
def test_browser_opens_the_saved_report_offline_without_errors(rep, tmp_path):
    path = rep.save(tmp_path / "report.html")
    dom = assert_opens_cleanly(path, tmp_path)
    assert "Shapley values" in dom and "What was run" in dom


@pytest.mark.browser
def test_browser_check_sees_script_errors(rep, tmp_path):
    """The check can fail: a broken script in the page is reported, in the DOM and console."""
    text = rep.to_html()
    nonce = re.search(r"script-src 'nonce-([^']+)'", text).group(1)
    broken = f'<script nonce="{nonce}">notDefinedAnywhere();</script>'
    text = text.replace("</main>", broken + "</main>")
    path = tmp_path / "broken.html"
    path.write_text(text, encoding="utf-8")
    dom, console, _ = open_in_browser(path, tmp_path)
    assert "notDefinedAnywhere" in page_errors(dom)
    assert any("notDefinedAnywhere" in line for line in console)


@pytest.mark.browser
def test_browser_runs_none_of_the_injected_code(injected, tmp_path):
    assert_opens_cleanly(injected, tmp_path)


def test_templates_ship_in_the_wheel(tmp_path):
    """A non-editable install has the templates: they are package data of the wheel."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "--no-build-isolation", "-q", "-w", str(tmp_path), str(root)],
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0 and "No module named" in done.stderr:
        pytest.skip(f"cannot build a wheel here: {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = tmp_path.glob("modellens-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "modellens/report/templates/report.html" in names
    assert "modellens/__main__.py" in names


def test_tree_shap_is_tried_first_and_a_refusal_falls_back(monkeypatch):
    """Tree ensembles get interventional TreeSHAP (equal to exact enumeration on the same
    background); a model TreeSHAP refuses gets the model-agnostic values and a note."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    from modellens.report._inputs import take_rows

    X, y = _frame()
    numeric = X[["x1", "x3"]]
    # exact values that fit the budget are taken for trees too (no compiled kernels): a
    # budget of one row leaves TreeSHAP
    TREE = {**SMALL, "shapley_budget": 1}
    model = HistGradientBoostingRegressor(max_iter=10).fit(numeric, y)
    small = ml.report(model, numeric, sections=["shapley"], **SMALL).sections["shapley"]
    assert small.data["attributions"].method == "shapley-exact"
    r = ml.report(model, numeric, sections=["shapley"], **TREE)
    sec = r.sections["shapley"]
    attr = sec.data["attributions"]
    assert attr.method == "shapley-tree" and attr.value_function == "interventional"
    exact = ml.shapley(model, numeric.iloc[list(sec.data["explained_rows"])],
                       background=take_rows(numeric, sec.data["background_rows"]),
                       algorithm="exact")
    np.testing.assert_allclose(attr.values, exact.values, atol=1e-9)
    np.testing.assert_allclose(attr.base_values, exact.base_values, atol=1e-9)

    with_levels = X[["x1", "colour"]]
    model = HistGradientBoostingRegressor(max_iter=10, categorical_features="from_dtype")
    model.fit(with_levels, y)
    # HistGradientBoosting's categorical splits are read by TreeSHAP too
    sec = ml.report(model, with_levels, sections=["shapley"], **TREE).sections["shapley"]
    attr = sec.data["attributions"]
    assert attr.method == "shapley-tree"
    exact = ml.shapley(model, with_levels.iloc[list(sec.data["explained_rows"])],
                       background=take_rows(with_levels, sec.data["background_rows"]),
                       algorithm="exact")
    np.testing.assert_allclose(attr.values, exact.values, atol=1e-9)
    # LightGBM's linear trees are not read: the report falls back and says why
    lgb = pytest.importorskip("lightgbm")
    model = lgb.LGBMRegressor(n_estimators=10, min_child_samples=5, linear_tree=True,
                              verbose=-1)
    model.fit(numeric, y)
    sec = ml.report(model, numeric, sections=["shapley"], **TREE).sections["shapley"]
    assert any("TreeSHAP does not apply" in n and "linear trees" in n for n in sec.notes)
    assert sec.data["attributions"].method == "shapley-permutation"


def test_tree_model_explains_more_rows_in_the_scatter_charts():
    """TreeSHAP is cheap: the bar, beeswarm and dependence of a tree ensemble read
    ``n_explain_tree`` rows (the explained ones first, the rest of the sample in a random
    order), each equal to exact enumeration on the same background."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    from modellens.report._inputs import take_rows

    X, y = _frame()
    numeric = X[["x1", "x3"]]
    model = HistGradientBoostingRegressor(max_iter=10).fit(numeric, y)
    TREE = {**SMALL, "shapley_budget": 1}
    r = ml.report(model, numeric, sections=["shapley"], n_explain_tree=100, **TREE)
    sec = r.sections["shapley"]
    rows, explained = sec.data["scatter_rows"], list(sec.data["explained_rows"])
    assert len(rows) == len(set(rows)) == 100 and rows[:len(explained)] == explained
    assert set(rows) <= set(range(len(X)))
    exact = ml.shapley(model, numeric.iloc[rows],
                       background=take_rows(numeric, sec.data["background_rows"]),
                       algorithm="exact")
    np.testing.assert_allclose(sec.data["scatter"].values, exact.values, atol=1e-9)
    # the importance the section ranks by is that of all 100 rows
    assert sec.data["importance"] == pytest.approx(
        dict(zip(exact.feature_names, np.abs(exact.values).mean(axis=0))), rel=1e-9)
    assert r.settings["rows in the Shapley bar, beeswarm and dependence (TreeSHAP)"] == "100"
    assert any("show 100 rows" in n for n in sec.notes)
    # never fewer than the explained rows; a model TreeSHAP does not read has none
    few = ml.report(model, numeric, sections=["shapley"], n_explain_tree=2, **TREE)
    assert few.sections["shapley"].data["scatter_rows"] == list(
        few.sections["shapley"].data["explained_rows"])
    linear = ml.report(Ridge().fit(numeric.fillna(0), y), numeric.fillna(0),
                       sections=["shapley"], **TREE).sections["shapley"]
    assert linear.data["scatter"] is None
    with pytest.raises(ml.InvalidParameterError, match="n_explain_tree"):
        ml.report(model, numeric, n_explain_tree=0)
