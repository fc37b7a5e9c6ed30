"""Strings from the data reach Plotly as text, never markup (issue 40).

Plotly reads pseudo-HTML in every label it draws (``<a href>`` becomes a live
link, ``<span style>`` is styled, ``<br>`` breaks the line).  The page below
plants a link, a styled span, a script and a line break in every string
position the explorer draws: feature names (axis titles, tick labels, the
pair heatmap's categories, hover templates), category levels (the
categorical PD / ALE axes, the dependence chart's level labels, LIME's
conditions), class labels (titles, legends), the region names, the "What changed"
part's drift bars and before / after curves.  In Chromium
the drawn charts hold no ``<a>`` element and no styled text, no script ran,
and the planted strings are there as text.
"""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder
from test_report_browser import _at_width

import modellens as ml

pytestmark = pytest.mark.browser

LINK = '<a href="https://evil.example/" target="_blank">Session expired: log in</a>'
SPAN = '<span style="font-size:90px">HUGE</span>'
SCRIPT = "<script>document.body.setAttribute('data-pwned', 1)</script>"
BREAK = "one<br>two"
#: the rest of the attack's strings: a comment opener, template strings, a line
#: separator, right-to-left and zero-width characters
ODD = "<!-- {{7*7}} ${7*7} \u2028 \u202eevil\u200b"


def _hostile_page(tmp_path):
    rng = np.random.default_rng(0)
    n = 240
    X = pd.DataFrame({LINK: rng.normal(size=n), SPAN: rng.normal(size=n),
                      "plain": rng.normal(size=n),
                      BREAK: pd.Categorical(rng.choice([LINK, SPAN, SCRIPT, ODD], size=n))})
    y = np.where(X[LINK] + (X[BREAK] == LINK) * 1.5 > 0.5, SPAN, LINK)
    encode = make_column_transformer((OneHotEncoder(handle_unknown="ignore"), [BREAK]),
                                     remainder="passthrough")
    model = make_pipeline(encode, RandomForestClassifier(n_estimators=20, max_depth=4,
                                                         random_state=0)).fit(X, y)
    # reference data (the "What changed" section and its explorer part draw the names too)
    ref = X.sample(n=n, replace=True, random_state=1).reset_index(drop=True)
    ref[LINK] += 0.7
    y_ref = np.where(ref[LINK] + (ref[BREAK] == LINK) * 1.5 > 0.5, SPAN, LINK)
    r = ml.report(model, X, y, sample=120, n_explain=4, n_background=10, grid=4,
                  shapley_budget=10_000, progress=False, title=SPAN + " report",
                  X_reference=ref, y_reference=y_ref)
    return r.save(tmp_path / "hostile.html")


#: What the drawn charts hold: links, styled text, the text of every label.
_PROBE = r"""(() => {
  const plots = [...document.querySelectorAll(".js-plotly-plot")];
  const text = plots.map(p => p.textContent).join("\n");
  return {
    plots: plots.length,
    links: plots.reduce((k, p) => k + p.querySelectorAll("a").length, 0),
    styled: plots.reduce((k, p) => k + [...p.querySelectorAll("tspan, text")].filter(
      t => /90px/.test(t.getAttribute("style") || "")).length, 0),
    text: text,
    pwned: document.body.hasAttribute("data-pwned"),
  };
})()"""


#: Every chart hovered at one point (``fx``, ``fy``: fractions of its plot area): what
#: its hover label then holds.  Plotly draws one hover per chart per 50 ms: one point of
#: every chart a call, the calls that far apart.
_HOVER = r"""((fx, fy) => [...document.querySelectorAll(".js-plotly-plot")].map(p => {
  const drag = p.querySelector(".nsewdrag");
  if (!drag) return null;
  const r = drag.getBoundingClientRect();
  drag.dispatchEvent(new MouseEvent("mousemove", {clientX: r.left + fx * r.width,
                                                  clientY: r.top + fy * r.height,
                                                  bubbles: true}));
  const layer = p.querySelector(".hoverlayer");
  return {text: layer.textContent, links: layer.querySelectorAll("a").length,
          styled: [...layer.querySelectorAll("tspan, text")].filter(
            t => /90px/.test(t.getAttribute("style") || "")).length};
}).filter(h => h && h.text))"""


def _hovered(browser):
    """What every chart's hover label shows at five points of its plot area."""
    import time

    out = []
    for fx, fy in ((0.5, 0.5), (0.2, 0.3), (0.8, 0.7), (0.1, 0.9), (0.9, 0.1)):
        out += browser.evaluate(f"{_HOVER}({fx}, {fy})")
        time.sleep(0.06)
    return out


def test_planted_markup_is_drawn_as_text_in_every_chart(tmp_path):
    page = _hostile_page(tmp_path)
    browser = _at_width(page, tmp_path, 1280, height=2400)
    try:
        seen = [browser.evaluate(_PROBE)]
        hovers = _hovered(browser)
        # every feature and every class: each chart redrawn with each hostile name
        for step in ("feature", "class", "changed-feature"):
            options = browser.evaluate(
                f"[...document.querySelector('[data-ml-control=\"{step}\"]')?.options || []]"
                ".map(o => o.value)")
            for value in options:
                browser.evaluate(
                    f"(() => {{ const s = document.querySelector('[data-ml-control=\"{step}\"]');"
                    f" s.value = {json.dumps(value)}; s.dispatchEvent(new Event('change'));"
                    " return true; })()")
                seen.append(browser.evaluate(_PROBE))
                hovers += _hovered(browser)
        # the "What changed" part drew the hostile names (drift bars, before / after axis)
        changed = browser.evaluate(
            "['drift', 'before-after'].map(n => document.querySelector("
            "`[data-ml-chart=\"${n}\"]`).textContent)")
        problems = browser.problems()
    finally:
        browser.close()
    assert LINK in changed[0] and SPAN in changed[0]
    assert seen[0]["plots"] >= 5
    for probe in seen:
        assert probe["links"] == 0, "a label became a link"
        assert probe["styled"] == 0, "a label was drawn styled"
        assert not probe["pwned"]
    # the hover labels (drawn on the hover only) hold the names as text too
    assert len(hovers) > 50
    assert not [h for h in hovers if h["links"] or h["styled"]], "a hover label held markup"
    hovered = "\n".join(h["text"] for h in hovers)
    for payload in (LINK, SPAN):
        assert payload in hovered, payload
    text = "\n".join(p["text"] for p in seen) + "\n" + hovered
    # the planted strings are there, as text (Plotly's own line breaks aside), and as
    # themselves: escaped twice, a label would show "&lt;" (none of them holds a "&")
    for payload in (LINK, SPAN, SCRIPT):
        assert payload in text, payload
    assert "&lt;" not in text and "&amp;" not in text
    assert "<br>" in text
    assert "<!-- {{7*7}} ${7*7}" in text and "\u202eevil\u200b" in text
    assert not [p for p in problems if "Content Security Policy" in json.dumps(p)]


def test_planted_markup_in_texts_and_class_labels_is_text(tmp_path):
    """A report of texts: the texts, their words and the class labels hold markup; the page
    shows them as text (no link, no styled text, no script ran), and the class selector
    shows each class's blocks."""
    texts = [f"sunny {LINK} beach {SCRIPT}", f"{SPAN} rain {BREAK} beach", f"{ODD} sunny"]

    def model(batch):
        p = np.array([0.9 if "beach" in t and "sunny" in t else 0.2 for t in batch])
        return pd.DataFrame({LINK: 1 - p, SPAN: p})

    rep = ml.report(model, texts, n_explain=3, progress=False, title=SPAN + " texts")
    page = rep.save(tmp_path / "texts.html")
    browser = _at_width(page, tmp_path, 1280)
    probe = r"""(() => ({
      links: [...document.querySelectorAll("a")].filter(a => /evil/.test(a.href)).length,
      styled: [...document.querySelectorAll("[style]")].filter(
        e => /90px/.test(e.getAttribute("style"))).length,
      pwned: document.body.hasAttribute("data-pwned"),
      text: document.querySelector("main").textContent,
      options: [...document.querySelectorAll('[data-ml-control="text-class"] option')].map(
        o => o.textContent),
      shown: [...document.querySelectorAll("[data-ml-text-output]")].filter(
        b => !b.hidden).map(b => b.getAttribute("data-ml-text-output")),
    }))()"""
    try:
        seen = [browser.evaluate(probe)]
        for value in ("0", "1", "predicted"):
            browser.evaluate(
                "(() => { const s = document.querySelector('[data-ml-control=\"text-class\"]');"
                f" s.value = {json.dumps(value)}; s.dispatchEvent(new Event('change'));"
                " return true; })()")
            seen.append(browser.evaluate(probe))
        problems = browser.problems()
    finally:
        browser.close()
    for p in seen:
        assert p["links"] == 0 and p["styled"] == 0 and not p["pwned"]
    assert seen[0]["options"] == ["each text's predicted class", LINK, SPAN]
    assert seen[1]["shown"] == ["0"] * 3 and seen[2]["shown"] == ["1"] * 3
    assert seen[3]["shown"] == seen[0]["shown"] and sorted(seen[0]["shown"]) == ["0", "0", "1"]
    text = seen[0]["text"]
    for payload in (LINK, SPAN, SCRIPT, BREAK, ODD):
        assert payload in text, payload
    assert not [p for p in problems if "Content Security Policy" in json.dumps(p)]
