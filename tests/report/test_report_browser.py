"""The page in headless Chromium: 1280 px and 390 px wide, and printed to PDF."""

import re
import subprocess

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from support import chromium, open_in_browser, page_errors

pytestmark = pytest.mark.browser

SMALL = dict(sample=150, n_explain=6, n_background=6, grid=5, shapley_budget=20_000)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    from modellens.datasets import load_demo

    model, X, y = load_demo()
    path = tmp_path_factory.mktemp("page") / "demo.html"
    ml.report(model, X, y, **SMALL).save(path)
    return path


@pytest.mark.parametrize("width", [1280, 390])
def test_page_opens_cleanly_at_desktop_and_phone_width(page, tmp_path, width):
    import matplotlib.image

    dom, console, shot = open_in_browser(page, tmp_path, width=width, height=1400)
    assert page_errors(dom) == "" and console == []
    image = matplotlib.image.imread(shot)
    assert image.shape[1] == width
    assert image[..., :3].std() > 0.05  # not blank
    # pictures are shown at their CSS size (half their pixels) and never wider than the
    # screen: every <img> has a width and the page's CSS caps it at 100%
    widths = [int(w) for w in re.findall(r'<img [^>]*width="(\d+)"', dom)]
    assert widths and max(widths) < 900
    assert "max-width: 100%" in dom


def _pdf_pages(path, tmp_path, name):
    exe = chromium()
    if exe is None:
        pytest.skip("Chromium is not installed")
    pdf = tmp_path / f"{name}.pdf"
    subprocess.run([exe, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
                    f"--user-data-dir={tmp_path / ('profile-' + name)}", "--no-pdf-header-footer",
                    f"--print-to-pdf={pdf}", path.resolve().as_uri()],
                   capture_output=True, timeout=180)
    data = pdf.read_bytes()
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
