"""Helpers shared by the report and command-line tests: injected names, the headless browser."""

import html.parser
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

INJECTIONS = ["<script>document.body.setAttribute('data-pwned', 'script')</script>",
              "\"><img src=x onerror=\"document.body.setAttribute('data-pwned', 'img')\">"]


class _Page(html.parser.HTMLParser):
    """Every element with its attributes, scripts' text, and the visible text."""

    def __init__(self):
        super().__init__()
        self.elements, self.scripts, self.text, self._in_script = [], [], [], False

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        (self.scripts if self._in_script else self.text).append(data)


def _parse(text):
    page = _Page()
    page.feed(text)
    return page


def injection_frame(n=120, seed=0):
    """Columns and a category label that try to run code in the page."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({INJECTIONS[0]: rng.normal(size=n), INJECTIONS[1]: rng.normal(size=n),
                      "label": rng.choice(["ok", "<b onmouseover=alert(1)>x</b>"], n)})
    y = X.iloc[:, 0] - X.iloc[:, 1] + (X.label == "ok")
    return X, y


def _assert_inert(text):
    """No script but the page's own, no event handler, no element the data named."""
    page = _parse(text)
    nonce = re.search(r"script-src 'nonce-([^']+)'", text).group(1)
    scripts = [a for t, a in page.elements if t == "script"]
    # the page's own: its error box, and with the explorer plotly.js, the explorer's data
    # (JSON, not run) and its script
    explorer = [{"nonce": nonce}, {"nonce": nonce, "type": "application/json", "id": "ml-data"},
                {"nonce": nonce}]
    assert scripts in ([{"nonce": nonce}], [{"nonce": nonce}] + explorer)
    for tag, attrs in page.elements:
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)
        assert tag != "b"
        if tag == "img":
            assert attrs["src"].startswith("data:image/png;base64,")
    visible = "".join(page.text)
    assert INJECTIONS[0] in visible and INJECTIONS[1] in visible  # shown, as text


def chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def open_in_browser(path, tmp_path, *, width=1280, height=1600):
    """Load ``path`` in headless Chromium without network: (DOM, console lines, screenshot)."""
    exe = chromium()
    if exe is None:
        pytest.skip("Chromium is not installed (.ci/run installs Debian's chromium package)")
    offline = ["--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
               "--disable-extensions", "--hide-scrollbars", "--disable-background-networking",
               "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
               f"--user-data-dir={tmp_path / 'profile'}"]
    url = path.resolve().as_uri()
    dom = subprocess.run([exe, *offline, "--enable-logging=stderr", "--v=0", "--dump-dom", url],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    shot = tmp_path / f"shot-{width}.png"
    subprocess.run([exe, *offline, f"--window-size={width},{height}", f"--screenshot={shot}", url],
                   capture_output=True, text=True, timeout=120)
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    return dom.stdout, console, shot


def page_errors(dom):
    match = re.search(r'<pre id="page-errors"[^>]*>(.*?)</pre>', dom, re.S)
    assert match is not None, "the page's error box is missing from the DOM"
    return match.group(1).strip()


def assert_opens_cleanly(path, tmp_path):
    import matplotlib.image

    dom, console, shot = open_in_browser(path, tmp_path)
    assert page_errors(dom) == ""
    assert console == []
    assert re.search(r"<body[^>]*data-pwned", dom) is None
    image = matplotlib.image.imread(shot)
    assert image.shape[0] >= 1000 and image.shape[1] >= 1200
    assert image[..., :3].std() > 0.05  # not one flat colour
    # the top left holds the contents column, the top right the page: both drawn
    assert image[:400, :200, :3].std() > 0.01 and image[:400, 300:, :3].std() > 0.05
    return dom
