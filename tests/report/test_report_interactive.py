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
from support import DEMO_OPTIONS, INJECTIONS, demo_page, injected_page, page_errors
from test_report_browser import _at_width

pytestmark = pytest.mark.browser

SMALL = DEMO_OPTIONS


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo's report and page (support.demo_page: with SMALL's options, shared with
    test_report_browser.py when both run in one process)."""
    return demo_page(tmp_path_factory)


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


@pytest.fixture(scope="module")
def forest(tmp_path_factory):
    """Three classes, a random forest of 13 features: TreeSHAP (on the probabilities, the
    page's scale) explains every class, and more rows than n_explain."""
    from sklearn.datasets import load_wine
    from sklearn.ensemble import RandomForestClassifier

    X, y = load_wine(return_X_y=True, as_frame=True)
    y = y.map(dict(enumerate(["barolo", "grignolino", "barbera"])))
    model = RandomForestClassifier(30, max_depth=4, random_state=0).fit(X, y)
    rep = ml.report(model, X, y, **dict(SMALL, n_explain_tree=120))
    return model, X, rep, rep.save(tmp_path_factory.mktemp("forest") / "forest.html")


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
            # every chart of the page follows the class: no chart says it shows another
            notes = browser.evaluate("[...document.querySelectorAll('#explore .ml-note')]"
                                     ".map(e => e.textContent).join(' ')")
            assert "only" not in notes
        assert not _close(seen[0], seen[1])  # the classes' curves differ: the check can fail


def _lime_bars(browser):
    lime = _chart(browser, "lime")
    return lime["marks"], {html.unescape(n): w for n, w in zip(lime["traces"][0]["y"],
                                                                lime["traces"][0]["x"])}


def test_class_control_redraws_lime_interactions_regions_and_treeshap(forest, tmp_path):
    """Every chart of a class explains that class: LIME's weights, the H screen and the
    heatmaps, the regional curves and the TreeSHAP values, as the report's results hold
    them for that class."""
    _, _, rep, path = forest
    outputs = rep.sections["effects"].data["pdp"][rep.sections["effects"].data["shown"][0]].outputs
    shap, lime = rep.sections["shapley"].data, rep.sections["lime"].data
    inter, reg = rep.sections["interaction"].data, rep.sections["regions"].data
    assert shap["attributions"].method == "shapley-tree"
    scatter, explained = shap["scatter"], shap["explained_rows"]
    n = len(explained)
    regions = reg["regions"]
    feature = next(f for f in reg["features"] if not regions[f].is_leaf)
    seen = {"lime": [], "screen": [], "heat": [], "regions": [], "dependence": []}
    with _explorer(path, tmp_path) as browser:
        _change(browser, "row", explained.index(lime["rows"][0]))
        _change(browser, "feature", feature)
        for k in (2, 0, 1):
            _change(browser, "class", k)
            # LIME: the class's surrogate (the same samples as every other class's)
            marks, bars = _lime_bars(browser)
            assert marks["class"] == outputs[k]
            one = lime["every_output"].for_output(k)
            names = one.surrogate.conditions[0]
            expect = {str(c): w for c, w in zip(names, one.values[0]) if w != 0}
            assert bars.keys() == expect.keys()
            assert _close([bars[c] for c in expect], list(expect.values()))
            seen["lime"].append(sorted(bars.values()))
            # the H screen: the class's H^2 of each pair
            every = inter["every_output"]
            screen = _chart(browser, "pair-screen")
            assert screen["marks"]["class"] == outputs[k]
            names = [html.unescape(v) for v in screen["traces"][0]["x"]]
            z = screen["traces"][0]["z"]
            ranked = every["ranked"][k]
            assert len(ranked) > 3
            for (a, b), _, h2 in ranked:
                assert np.isclose(z[names.index(a)][names.index(b)], h2, rtol=1e-3)
            table = every["interactions"].for_output(k).pairwise
            assert sorted(h2 for _, _, h2 in ranked) == pytest.approx(
                sorted(table["h2"].dropna()), rel=1e-12)
            seen["screen"].append([h2 for _, _, h2 in sorted(ranked)])
            # the heatmap of the chosen pair: the class's second-order ALE
            heat = _chart(browser, "interaction")
            a, b = heat["marks"]["pair"].split(" x ")
            assert heat["marks"]["class"] == outputs[k]
            assert _close(np.asarray(heat["traces"][0]["z"], dtype=float).T,
                          every["pair_effects"][(a, b)].for_output(k).values)
            seen["heat"].append(heat["traces"][0]["z"])
            # the regions: the same tree, the class's curve in each region
            chart = _chart(browser, "regions")
            assert chart["marks"]["class"] == outputs[k] and chart["marks"]["feature"] == feature
            curves = {html.unescape(t["name"]): t["y"] for t in chart["traces"]}
            effects = regions.effects(feature)
            assert curves.keys() == {str(r) for r in effects}
            for region, e in effects.items():
                assert _close(curves[str(region)], e.for_output(k).values)
            seen["regions"].append(curves[str(next(iter(effects)))])
            # TreeSHAP: the waterfall and the dependence chart, explained and sampled rows
            water = _chart(browser, "waterfall")
            i = explained.index(int(water["marks"]["row"]))
            assert water["marks"]["class"] == outputs[k]
            assert np.isclose(sum(water["traces"][0]["x"]),
                              scatter.for_output(k).values[i].sum(), rtol=1e-3, atol=1e-6)
            dep = _chart(browser, "dependence")
            j = scatter.feature_names.index(feature)
            assert dep["marks"]["class"] == outputs[k]
            assert _close(_trace(dep, "explained rows")["y"],
                          scatter.for_output(k).values[:n, j])
            assert _close(_trace(dep, "sampled rows")["y"], scatter.for_output(k).values[n:, j])
            seen["dependence"].append(_trace(dep, "explained rows")["y"])
            notes = browser.evaluate("[...document.querySelectorAll('#explore .ml-note')]"
                                     ".map(e => e.textContent).join(' ')")
            assert "only" not in notes
    for name, drawn in seen.items():  # the classes differ: each check can fail
        assert not _close(drawn[0], drawn[1]), name


def test_tree_model_shows_more_rows_in_beeswarm_and_dependence(forest, tmp_path):
    """TreeSHAP's beeswarm and dependence charts: n_explain_tree rows (the explained ones
    first), each row's values adding up to its probability minus the background's mean."""
    model, X, rep, path = forest
    shap = rep.sections["shapley"].data
    scatter, rows = shap["scatter"], shap["scatter_rows"]
    explained = shap["explained_rows"]
    assert len(scatter) == len(rows) == 120 > len(explained)
    assert rows[:len(explained)] == list(explained) and len(set(rows)) == len(rows)
    assert set(rows) <= set(rep.sections["effects"].data["sample_rows"].tolist())
    # interventional TreeSHAP adds up to f(x) - mean f(background), for every class
    proba = model.predict_proba(X)
    background = proba[shap["background_rows"]].mean(axis=0)
    np.testing.assert_allclose(np.asarray(scatter.values).sum(axis=1),
                               proba[rows] - background, atol=1e-9)
    with _explorer(path, tmp_path) as browser:
        dep = _chart(browser, "dependence")
        assert len(_trace(dep, "sampled rows")["y"]) == len(rows) - len(explained)
        bees = _chart(browser, "beeswarm")
        drawn = {t["name"]: len(t["x"]) for t in bees["traces"]}
        d = len(scatter.feature_names)
        assert drawn == {"sampled rows": (len(rows) - len(explained)) * d,
                         "explained rows": len(explained) * d}
        assert "120 rows" in bees["label"]


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


def test_names_from_the_data_stay_text_in_the_charts(tmp_path_factory, tmp_path):
    # the page of support.injected_page (shared with test_report.py in one process)
    path = injected_page(tmp_path_factory)
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
    # 8 features (30 once): the payload's per-feature part is what does not grow, so fewer
    # features make a part that grows with the rows a larger share of it (a stricter
    # check), and each feature's curves and figures cost a report most of its time
    d = 8
    for n in (2_000, 20_000):
        X = pd.DataFrame(rng.normal(size=(n, d)), columns=[f"x{i}" for i in range(d)])
        rep = ml.report(lambda Z: np.asarray(Z, dtype=float) @ np.linspace(-1, 1, d), X,
                        sections=["effects", "shapley"], sample=300, n_explain=20,
                        n_background=5, grid=10, shapley_budget=1, max_features=d)
        sizes.append(len(payload_json(explorer_payload(rep.sections))))
    assert abs(sizes[1] - sizes[0]) < 0.05 * sizes[0], sizes


#: Every chart of the explorer: its name, its data-ml-* marks, its label and what it draws.
_EVERY_CHART = r"""[...document.querySelectorAll('#explore [data-ml-chart]')].map(el => ({
  name: el.getAttribute('data-ml-chart'),
  marks: Object.fromEntries([...el.attributes].filter(a => a.name.startsWith('data-ml-'))
                            .map(a => [a.name.slice(8), a.value])),
  label: el.getAttribute('aria-label') || '',
  caption: ((el.parentNode.querySelector('figcaption') || {}).textContent) || '',
  drawn: JSON.stringify((el.data || []).map(t => [t.x, t.y, t.z])),
  shown: JSON.stringify([el.layout || {}, (el.data || []).map(t => t.colorbar || {})])}))"""


@pytest.mark.parametrize("which", ["iris", "forest"])
def test_the_class_selector_moves_every_chart_of_one_class_and_each_names_it(
        which, iris, forest, tmp_path):
    """#42: end to end, every chart of the explorer that explains a class follows the
    class selector (its drawing changes), and says which class, in its marks and in the
    words read out for it; a chart that keeps its drawing explains no class."""
    rep, path = iris if which == "iris" else forest[2:]
    outputs = rep.sections["effects"].data["pdp"][rep.sections["effects"].data["shown"][0]].outputs
    with _explorer(path, tmp_path) as browser:
        seen = {}
        for k in (0, 1, 2):
            _change(browser, "class", k)
            for chart in browser.evaluate(_EVERY_CHART):
                seen.setdefault(chart["name"], []).append((k, chart))
    assert {"pd", "ale", "waterfall", "dependence", "lime"} <= seen.keys()
    for name, states in seen.items():
        of_a_class = ["class" in chart["marks"] for _, chart in states]
        if not any(of_a_class):
            # a chart of no class draws the same whatever the class
            assert len({chart["drawn"] for _, chart in states}) == 1, name
            continue
        assert all(of_a_class), name
        for k, chart in states:
            assert chart["marks"]["class"] == outputs[k], (name, k)
            assert outputs[k] in chart["label"], (name, chart["label"])
            # and on the screen: a title, an axis or a colour bar of the chart names it
            assert html.escape(outputs[k], quote=False) in chart["shown"], (name, k)
        assert len({chart["drawn"] for _, chart in states}) == 3, name  # each class its own
