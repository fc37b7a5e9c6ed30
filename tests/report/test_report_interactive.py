"""The interactive report in headless Chromium (network off): each control redraws the charts it
names with the numbers of the report's own results, without a console error, at 1280 and 390 px;
``interactive=False`` keeps the still page."""

import contextlib
import html
import json
import re

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from support import INJECTIONS, injection_frame, page_errors
from test_report_browser import _at_width

pytestmark = pytest.mark.browser

SMALL = dict(sample=150, n_explain=8, n_background=6, grid=5, shapley_budget=20_000)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from modellens.datasets import load_demo

    model, X, y = load_demo()
    rep = ml.report(model, X, y, **SMALL)
    return rep, rep.save(tmp_path_factory.mktemp("demo") / "demo.html")


@pytest.fixture(scope="module")
def iris(tmp_path_factory):
    """Three classes, no target: the effects hold every class."""
    from sklearn.datasets import load_iris
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = load_iris(return_X_y=True, as_frame=True)
    y = y.map(dict(enumerate(["setosa", "versicolor", "virginica"])))
    model = HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(X, y)
    rep = ml.report(model, X, y, **SMALL)
    return rep, rep.save(tmp_path_factory.mktemp("iris") / "iris.html")


def _change(browser, control, value):
    """Choose ``value`` in the control, as a user does (the select fires "change")."""
    browser.evaluate(
        f"(() => {{ const s = document.querySelector('[data-ml-control=\"{control}\"]');"
        f" s.value = {json.dumps(str(value))}; s.dispatchEvent(new Event('change'));"
        " return true; })()")


def _chart(browser, name):
    """What Plotly holds for a chart (its traces' x / y / z) and the chart's data-ml-* marks."""
    return browser.evaluate(
        f"(() => {{ const el = document.querySelector('[data-ml-chart=\"{name}\"]');"
        " return {marks: Object.fromEntries([...el.attributes].filter(a => "
        "a.name.startsWith('data-ml-')).map(a => [a.name.slice(8), a.value])),"
        " label: el.getAttribute('aria-label'),"
        " traces: (el.data || []).map(t => ({x: t.x, y: t.y, z: t.z, name: t.name}))}; })()")


def _trace(chart, name):
    """The trace of a chart (from :func:`_chart`) of that name."""
    (found,) = [t for t in chart["traces"] if t["name"] == name]
    return found


def _point(browser, name, trace, index):
    """Where point ``index`` of a chart's trace is on the screen (the chart scrolled into view)."""
    return browser.evaluate(
        f"(() => {{ const el = document.querySelector('[data-ml-chart=\"{name}\"]');"
        " el.scrollIntoView({block: 'center'});"
        f" const L = el._fullLayout, t = el.data[{trace}], r = el.getBoundingClientRect();"
        f" return [L.xaxis.d2p(t.x[{index}]) + L._size.l + r.left,"
        f" L.yaxis.d2p(t.y[{index}]) + L._size.t + r.top]; }})()")


def _close(a, b, rtol=1e-3):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=1e-6 * max(1, np.abs(b).max()))


@contextlib.contextmanager
def _explorer(path, tmp_path, width=1280):
    """The page open in Chromium, its explorer drawn; on leaving, no error may have occurred."""
    browser = _at_width(path, tmp_path, width)
    try:
        assert browser.evaluate(
            "document.documentElement.getAttribute('data-ml-ready')") == "true"
        yield browser
        _clean(browser)
    finally:
        browser.close()


def _clean(browser):
    dom = browser.evaluate("document.documentElement.outerHTML")
    assert page_errors(dom) == "" and browser.problems() == []


def test_feature_control_redraws_pd_ale_and_dependence(demo, tmp_path):
    rep, path = demo
    effects = rep.sections["effects"].data
    attr = rep.sections["shapley"].data["attributions"]
    explained = rep.sections["shapley"].data["explained_rows"]
    with _explorer(path, tmp_path) as browser:
        controls = browser.evaluate(
            "[...document.querySelectorAll('[data-ml-control]')].map(e => "
            "[e.getAttribute('data-ml-control'), e.tagName])")
        assert {c for c, _ in controls} >= {"feature", "class", "row", "pair", "region"}
        for feature in effects["shown"][1:4]:  # the first is drawn at load: change away from it
            _change(browser, "feature", feature)
            pd_chart, ale_chart = _chart(browser, "pd"), _chart(browser, "ale")
            dep = _chart(browser, "dependence")
            assert pd_chart["marks"]["feature"] == ale_chart["marks"]["feature"] == feature
            assert feature in pd_chart["label"] and feature in ale_chart["label"]
            # the thick PD line is the last trace; the thin ones are the explained rows' ICE
            assert _close(pd_chart["traces"][-1]["y"], effects["pdp"][feature].values)
            assert _close(ale_chart["traces"][-1]["y"], effects["ale"][feature].values)
            band = effects["ale"][feature].band
            assert _close(ale_chart["traces"][0]["y"], band.upper)
            assert _close(ale_chart["traces"][1]["y"], band.lower)
            # the text alternative: the chart's numbers as a table, on request
            numbers = browser.evaluate(
                "(() => { const f = document.querySelector('[data-ml-chart=\"pd\"]').parentNode;"
                " f.querySelector('details').open = true;"
                " return [...f.querySelectorAll('.ml-numbers tbody tr')].map(r => "
                "Number(r.cells[1].textContent)); })()")
            assert _close(numbers, effects["pdp"][feature].values, rtol=1e-3)
            j = attr.feature_names.index(feature)
            assert dep["marks"]["feature"] == feature
            assert _close(_trace(dep, "explained rows")["y"], attr.values[:, j])
        # each ICE curve is the curve of an explained row of the sample: one trace, the
        # curves split by gaps, each point naming its row
        sample = np.asarray(effects["sample_rows"])
        ice = effects["pdp"][feature].ice
        curves = browser.evaluate(
            "(() => { const t = document.querySelector('[data-ml-chart=\"pd\"]').data[0];"
            " return [t.y, t.customdata]; })()")
        y, rows = np.array(curves[0], dtype=float), curves[1]
        starts = [0] + [i + 1 for i, r in enumerate(rows) if r is None][:-1]
        assert len(starts) == len(set(explained) & set(sample.tolist())) > 3
        for start in starts:
            row = rows[start]
            assert row in explained
            assert _close(y[start:start + ice.shape[1]], ice[np.searchsorted(sample, row)])
        chosen = _chart(browser, "pd")["traces"][1]  # the chosen row's curve, in red
        assert chosen["name"] == f"row {explained[0]}"
        # hovering a point of another row's curve shows that row and its Shapley values
        start = starts[-1]
        hovered = rows[start]
        assert hovered != explained[0]
        x, y_px = _point(browser, "pd", 0, start + 1)
        browser.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y_px)
        brushed = browser.evaluate("[document.getElementById('ml-brushed').getAttribute("
                                   "'data-ml-row'), document.getElementById('ml-brushed')"
                                   ".textContent]")
        assert brushed[0] == str(hovered) and f"row {hovered}:" in brushed[1]
        i = explained.index(hovered)
        shown = float(re.search(r"its Shapley value ([-+0-9.e]+);", brushed[1]).group(1))
        assert np.isclose(shown, attr.values[i, attr.feature_names.index(feature)], rtol=2e-3)


def test_row_control_and_clicks_choose_the_row_of_waterfall_and_lime(demo, tmp_path):
    rep, path = demo
    shap = rep.sections["shapley"].data
    attr, explained = shap["attributions"], shap["explained_rows"]
    lime = rep.sections["lime"].data
    with _explorer(path, tmp_path) as browser:
        for i in (len(explained) - 1, 1):
            _change(browser, "row", i)
            water = _chart(browser, "waterfall")
            assert water["marks"]["row"] == str(explained[i])
            # the bars add up to the row's Shapley values, whatever the "other features" bar
            assert np.isclose(sum(water["traces"][0]["x"]), attr.values[i].sum(), rtol=1e-3)
            assert _chart(browser, "lime")["marks"]["row"] == str(explained[i])
            values = browser.evaluate("document.querySelector('[data-ml-chart=\"row-values\"]')"
                                      ".getAttribute('data-ml-row')")
            assert values == str(explained[i])
        # a row LIME explained: its weights, as the section computed them
        k = 1
        _change(browser, "row", explained.index(lime["rows"][k]))
        bars = _chart(browser, "lime")["traces"][0]["x"]
        weights = lime["attributions"].values[k]
        assert _close(sorted(bars), sorted(w for w in weights if w != 0))
        # clicking a point of the dependence chart chooses its row
        target = 2
        dep = _chart(browser, "dependence")
        where = _point(browser, "dependence", dep["traces"].index(_trace(dep, "explained rows")),
                       target)
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            browser.send("Input.dispatchMouseEvent", type=kind, x=where[0], y=where[1],
                         button="left" if kind != "mouseMoved" else "none", clickCount=1)
        assert browser.evaluate(
            "document.querySelector('[data-ml-control=\"row\"]').value") == str(target)
        assert _chart(browser, "waterfall")["marks"]["row"] == str(explained[target])


def test_pair_control_and_region_tree(demo, tmp_path):
    rep, path = demo
    inter = rep.sections["interaction"].data
    with _explorer(path, tmp_path) as browser:
        heat = _chart(browser, "interaction")
        assert heat["marks"]["pair"] == " x ".join(inter["pair"])
        other = [p for p, _, _ in inter["ranked"][1:3]]
        for a, b in other:
            _change(browser, "pair", f"{a}\u0000{b}")
            heat = _chart(browser, "interaction")
            assert heat["marks"]["pair"] == f"{a} x {b}"
            assert _close(np.asarray(heat["traces"][0]["z"], dtype=float).T,
                          inter["pair_effects"][(a, b)].values)
        # the regions: the tree's buttons highlight a node's region
        regions = rep.sections["regions"].data
        feature = regions["features"][0]
        _change(browser, "feature", feature)
        chart = _chart(browser, "regions")
        assert chart["marks"]["feature"] == feature
        # Plotly's labels are entity-escaped (its pseudo-HTML would read "<" as markup)
        assert {html.unescape(t["name"]) for t in chart["traces"]} == \
            set(regions["regions"].effects(feature))
        nodes = list(regions["regions"][feature].nodes())
        browser.evaluate("document.querySelectorAll('[data-ml-control=\"region\"]')[1].click(), true")
        assert _chart(browser, "regions")["marks"]["region"] == str(nodes[1].region)


def test_keyboard_changes_the_feature(demo, tmp_path):
    rep, path = demo
    shown = rep.sections["effects"].data["shown"]
    with _explorer(path, tmp_path) as browser:
        browser.evaluate("document.querySelector('[data-ml-control=\"feature\"]').focus(), true")
        for kind in ("rawKeyDown", "keyUp"):
            browser.send("Input.dispatchKeyEvent", type=kind, key="ArrowDown",
                         code="ArrowDown", windowsVirtualKeyCode=40)
        assert _chart(browser, "pd")["marks"]["feature"] == shown[1]


def test_class_control_redraws_effects_of_that_class(iris, tmp_path):
    """#28: the page of a multiclass model shows every class: the class selector picks it."""
    rep, path = iris
    effects = rep.sections["effects"].data
    outputs = effects["pdp"][effects["shown"][0]].outputs
    assert len(outputs) == 3
    shap = rep.sections["shapley"].data
    every = shap["every_output"]
    assert every.outputs == outputs
    with _explorer(path, tmp_path) as browser:
        options = browser.evaluate("[...document.querySelector('[data-ml-control=\"class\"]')"
                                   ".options].map(o => o.textContent)")
        assert options == outputs
        feature = effects["shown"][0]
        seen = []
        for k in (2, 0, 1):
            _change(browser, "class", k)
            pd_chart, ale_chart = _chart(browser, "pd"), _chart(browser, "ale")
            assert pd_chart["marks"]["class"] == ale_chart["marks"]["class"] == outputs[k]
            assert _close(pd_chart["traces"][-1]["y"],
                          effects["pdp"][feature].for_output(k).values)
            assert _close(ale_chart["traces"][-1]["y"],
                          effects["ale"][feature].for_output(k).values)
            seen.append(pd_chart["traces"][-1]["y"])
            # the Shapley charts follow too: the class's values from the same model rows
            water = _chart(browser, "waterfall")
            assert water["marks"]["class"] == outputs[k]
            row = int(water["marks"]["row"])
            i = shap["explained_rows"].index(row)
            assert np.isclose(sum(water["traces"][0]["x"]),
                              every.for_output(k).values[i].sum(), rtol=1e-3, atol=1e-6)
            dep = _chart(browser, "dependence")
            j = every.feature_names.index(feature)
            assert dep["marks"]["class"] == outputs[k]
            assert _close(dep["traces"][0]["y"], every.for_output(k).values[:, j])
            # LIME explains one class: the chart says so for the others
            lime_note = browser.evaluate(
                "document.querySelector('[data-ml-chart=\"lime\"]').parentNode"
                ".querySelector('.ml-note').textContent")
            assert ("only" in lime_note) == (outputs[k] != shap["attributions"].output)
        assert not _close(seen[0], seen[1])  # the classes' curves differ: the check can fail


def test_phone_width_fits_the_explorer(demo, tmp_path):
    _, path = demo
    with _explorer(path, tmp_path, width=390) as browser:
        layout = browser.evaluate(
            "(() => ({page: document.documentElement.scrollWidth, boxes: [...document"
            ".querySelectorAll('[data-ml-chart], [data-ml-control]')].filter(e => "
            "e.offsetParent !== null).map(e => [e.getAttribute('data-ml-chart') || "
            "e.getAttribute('data-ml-control'), e.getBoundingClientRect().right])}))()")
    assert layout["page"] <= 390
    assert len(layout["boxes"]) > 10
    for name, right in layout["boxes"]:
        assert right <= 390.5, name


def test_names_from_the_data_stay_text_in_the_charts(tmp_path):
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    X, y = injection_frame()
    model = make_pipeline(make_column_transformer((OneHotEncoder(), ["label"]),
                                                  remainder="passthrough"), Ridge()).fit(X, y)
    path = ml.report(model, X, y, **SMALL).save(tmp_path / "r.html")
    with _explorer(path, tmp_path) as browser:
        _change(browser, "feature", INJECTIONS[1])
        found = browser.evaluate(
            "(() => ({pwned: document.body.hasAttribute('data-pwned'),"
            " bold: document.querySelectorAll('b').length,"
            " text: document.querySelector('[data-ml-chart=\"pd\"]').textContent}))()")
    assert not found["pwned"] and found["bold"] == 0
    assert INJECTIONS[1] in found["text"]  # the name is drawn, as text


def test_static_page_has_no_explorer(demo, tmp_path):
    rep, _ = demo
    model_free = ml.report(lambda Z: np.asarray(Z, dtype=float) @ [1.0, -2.0],
                           pd.DataFrame(np.random.default_rng(0).normal(size=(60, 2)),
                                        columns=["a", "b"]), interactive=False,
                           sections=["effects", "shapley"], **SMALL)
    text = model_free.to_html()
    assert "data-ml-control" not in text and "Plotly" not in text
    assert text.count("<script") == 1
    path = tmp_path / "static.html"
    path.write_text(text, encoding="utf-8")
    browser = _at_width(path, tmp_path, 390)
    try:
        _clean(browser)
        assert browser.evaluate("document.documentElement.scrollWidth") <= 390
        assert browser.evaluate("document.images.length") == len(model_free.sections[
            "effects"].figures) + len(model_free.sections["shapley"].figures) > 0
    finally:
        browser.close()
    with pytest.raises(ml.InvalidParameterError, match="interactive must be"):
        ml.report(lambda Z: Z[:, 0], np.zeros((5, 2)), interactive="yes")
    # the still pictures are on the interactive page too, and printing hides the explorer
    page = rep.to_html()
    assert page.count("<img ") == sum(len(s.figures) for s in rep.sections.values())
    # printed, the explorer is left out and the still pictures are shown
    _, path = demo
    browser = _at_width(path, tmp_path, 718, media="print")
    try:
        shown = browser.evaluate(
            "[getComputedStyle(document.getElementById('explore')).display,"
            " [...document.images].filter(i => i.getBoundingClientRect().width > 0).length]")
    finally:
        browser.close()
    assert shown == ["none", page.count("<img ")]


def test_payload_does_not_grow_with_the_rows():
    """The page holds results: ten times the rows, the same explorer document size."""
    from modellens.report._interactive import explorer_payload, payload_json

    rng = np.random.default_rng(0)
    sizes = []
    for n in (2_000, 20_000):
        X = pd.DataFrame(rng.normal(size=(n, 30)), columns=[f"x{i}" for i in range(30)])
        rep = ml.report(lambda Z: np.asarray(Z, dtype=float) @ np.linspace(-1, 1, 30), X,
                        sections=["effects", "shapley"], sample=300, n_explain=20,
                        n_background=5, grid=10, shapley_budget=1, max_features=30)
        sizes.append(len(payload_json(explorer_payload(rep.sections))))
    assert abs(sizes[1] - sizes[0]) < 0.05 * sizes[0], sizes
