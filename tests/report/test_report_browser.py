"""The page in headless Chromium: 1280 px and 390 px wide, and printed to PDF."""

import base64
import re

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from support import demo_page, page_errors, tab

pytestmark = pytest.mark.browser

SMALL = dict(sample=150, n_explain=6, n_background=6, grid=5, shapley_budget=20_000)


def _at_width(path, tmp_path, width, *, media="screen", height=1400):
    """``path`` in a new tab of the test process's headless Chromium (support.tab)."""
    return tab(path, width, height, media)


#: Where each table and each badge lies, in CSS pixels of the viewport.
_LAYOUT = r"""(() => {
  const box = el => { const r = el.getBoundingClientRect();
                      return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  return {
    viewport: document.documentElement.clientWidth,
    page: document.documentElement.scrollWidth,
    tables: [...document.querySelectorAll("table")].map(t => ({
      where: (t.closest("section") || t.closest("footer")).id, box: box(t),
      scrolls: t.parentElement.scrollWidth > t.parentElement.clientWidth + 1,
      rowDisplay: getComputedStyle(t.tBodies[0].rows[0]).display})),
    badges: [...document.querySelectorAll("td.badge")].map(b => ({
      where: b.closest("section").id, text: b.textContent, box: box(b),
      name: b.closest("tr").cells[0].textContent, nameBox: box(b.closest("tr").cells[0])})),
    images: [...document.images].map(box),
  };
})()"""


@pytest.fixture(scope="module")
def flagged_page(tmp_path_factory):
    """The demo with every section, and the features it flags "PD off the data"."""
    # (support.demo_page: shared with test_report_interactive.py in one process)
    r, path = demo_page(tmp_path_factory)
    flagged = [v["feature"] for v in r.sections["data"].data["features"] if v["warning"]]
    assert flagged, "the demo should flag features, else the badge checks below test nothing"
    return path, flagged


@pytest.fixture(scope="module")
def page(flagged_page):
    return flagged_page[0]


@pytest.mark.parametrize("width", [1280, 390])
def test_page_opens_cleanly_at_desktop_and_phone_width(page, tmp_path, width):
    import matplotlib.image

    browser = _at_width(page, tmp_path, width)
    try:
        dom = browser.evaluate("document.documentElement.outerHTML")
        shot = browser.screenshot(tmp_path / f"shot-{width}.png")
        viewport = browser.evaluate("document.documentElement.clientWidth")
        problems = browser.problems()
    finally:
        browser.close()
    assert page_errors(dom) == "" and problems == []
    assert viewport == width
    image = matplotlib.image.imread(shot)
    assert image.shape[1] == width
    assert image[..., :3].std() > 0.05  # not blank
    # pictures are shown at their CSS size (half their pixels) and never wider than the
    # screen: every <img> has a width and the page's CSS caps it at 100%
    widths = [int(w) for w in re.findall(r'<img [^>]*width="(\d+)"', dom)]
    assert widths and max(widths) < 900
    assert "max-width: 100%" in dom

def _pdf_pages(path, tmp_path, name):
    """The page printed to PDF (Chromium's default paper and margins, no header or
    footer): its number of pages."""
    page = tab(path, 1280)
    try:
        data = base64.b64decode(page.send("Page.printToPDF", displayHeaderFooter=False)["data"])
    finally:
        page.close()
    (tmp_path / f"{name}.pdf").write_bytes(data)
    count = len(re.findall(rb"/Type\s*/Page[^s]", data))
    assert count > 0
    return count


def test_printed_pages_do_not_grow_with_flagged_features(tmp_path):
    """Eight features, none or seven of them flagged: the same number of printed pages."""
    rng = np.random.default_rng(0)
    n = 300
    base = rng.uniform(-2, 2, n)
    free = pd.DataFrame(rng.uniform(-2, 2, (n, 8)), columns=[f"f{i}" for i in range(8)])
    tied = pd.DataFrame({f"f{i}": base + rng.normal(0, 0.05, n) for i in range(7)}
                        | {"f7": rng.uniform(-2, 2, n)})

    def f(Z):
        Z = np.asarray(Z)
        return Z @ np.linspace(1, 2, 8)

    counts = []
    for name, X in (("free", free), ("tied", tied)):
        r = ml.report(f, X, sections=["data", "effects"], max_features=8, **SMALL)
        flagged = sum(bool(v["warning"]) for v in r.sections["data"].data["features"])
        assert flagged == (0 if name == "free" else 7)
        path = r.save(tmp_path / f"{name}.html")
        counts.append(_pdf_pages(path, tmp_path, name))
    assert counts[0] == counts[1], counts


def test_phone_width_shows_every_badge_beside_its_feature(flagged_page, tmp_path):
    """At 390 px nothing scrolls sideways, and each flagged feature's badge is on screen
    on the same line as its name; at 1280 px the tables stay tables."""
    import matplotlib.image

    path, flagged = flagged_page
    browser = _at_width(path, tmp_path, 390)
    try:
        layout = browser.evaluate(_LAYOUT)
        shot = browser.screenshot(tmp_path / "phone.png")
        problems = browser.problems()
    finally:
        browser.close()
    assert problems == []
    image = matplotlib.image.imread(shot)
    assert image.shape[1] == 390 and image[..., :3].std() > 0.05
    width = layout["viewport"]
    assert width == 390
    assert layout["page"] <= width
    for table in layout["tables"]:
        assert not table["scrolls"] and table["box"]["right"] <= width + 0.5, table
    for image_box in layout["images"]:
        assert image_box["right"] <= width + 0.5
    data_badges = [b for b in layout["badges"] if b["where"] == "data"]
    assert sorted(b["name"] for b in data_badges) == sorted(flagged)
    for badge in layout["badges"]:
        box, name = badge["box"], badge["nameBox"]
        assert 0 <= box["left"] and box["right"] <= width + 0.5, badge
        # beside the name: on its line, not at the bottom of a tall card
        assert box["top"] < name["bottom"] and name["top"] < box["bottom"], badge

    browser = _at_width(path, tmp_path, 1280)
    try:
        layout = browser.evaluate(_LAYOUT)
    finally:
        browser.close()
    assert all(t["rowDisplay"] == "table-row" and not t["scrolls"] for t in layout["tables"])


def test_printed_tables_fit_the_page(flagged_page, tmp_path):
    """Printed (A4 with Chromium's default 1 cm margins, 718 CSS px), no table is clipped:
    the data table's badge column is on paper."""
    path, _ = flagged_page
    browser = _at_width(path, tmp_path, 718, media="print")
    try:
        layout = browser.evaluate(_LAYOUT)
    finally:
        browser.close()
    for table in layout["tables"]:
        assert not table["scrolls"] and table["box"]["right"] <= 718.5, table
    assert layout["badges"] and all(b["box"]["right"] <= 718.5 for b in layout["badges"])


def test_phone_width_fits_a_multiclass_page(tmp_path):
    """Ten classes: long metric names, an eleven-column confusion matrix and the
    interaction runner-ups all fit 390 px, none scrolls sideways."""
    from sklearn.datasets import load_digits
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = load_digits(return_X_y=True, as_frame=True)
    X = X.iloc[:, 20:26]
    model = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, y)
    r = ml.report(model, X, y, target=0, sections=["data", "quality", "interaction"], **SMALL)
    assert r.sections["quality"].data["confusion"].shape == (10, 10)
    path = r.save(tmp_path / "digits.html")
    browser = _at_width(path, tmp_path, 390)
    try:
        layout = browser.evaluate(_LAYOUT)
        problems = browser.problems()
    finally:
        browser.close()
    assert problems == []
    assert layout["page"] <= 390
    assert {t["where"] for t in layout["tables"]} >= {"data", "quality", "interaction"}
    for table in layout["tables"]:
        assert not table["scrolls"] and table["box"]["right"] <= 390.5, table
