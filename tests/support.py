"""Helpers shared by the report and command-line tests: injected names, the headless browser."""

import atexit
import base64
import html.parser
import json
import os
import re
import select
import shutil
import signal
import tempfile
import time

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


#: Headless Chromium without network, as every browser test runs it.
OFFLINE = ["--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
           "--disable-extensions", "--hide-scrollbars", "--disable-background-networking",
           "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9"]


class Chromium:
    """Headless Chromium driven over the DevTools protocol on a pipe (standard library only).

    One runs per test process (:func:`tab`, started at the first page and closed when the
    process ends); each page opens in a tab of its own browser context (as an incognito
    window: no cookies, storage or cache shared with another page), so a test sees only its
    own page and its events.  Launching Chromium costs about a second of CPU: the browser
    tests once launched it for every page they opened (twice for :func:`open_in_browser`).
    """

    def __init__(self, exe, profile):
        import fcntl  # (POSIX: imported here, so that this module loads on any system)

        to_browser, self._write = os.pipe()
        self._read, from_browser = os.pipe()
        # Chromium reads commands on fd 3 and answers on fd 4; the pipe ends are moved
        # above both first, so that placing one cannot close the other
        ends = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser, from_browser)]
        for fd in (to_browser, from_browser):
            os.close(fd)
        args = [exe, *OFFLINE, "--remote-debugging-pipe", f"--user-data-dir={profile}",
                "about:blank"]
        quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_WRONLY, 0) for fd in (1, 2)]
        self.pid = os.posix_spawn(exe, args, os.environ, file_actions=[
            (os.POSIX_SPAWN_DUP2, ends[0], 3), (os.POSIX_SPAWN_DUP2, ends[1], 4), *quiet])
        for fd in ends:
            os.close(fd)
        self._buffer, self._id, self.events, self.profile = b"", 0, [], profile

    def alive(self):
        try:
            return os.waitpid(self.pid, os.WNOHANG)[0] == 0
        except ChildProcessError:
            return False

    def next_message(self, timeout=120):
        while b"\0" not in self._buffer:
            if not select.select([self._read], [], [], timeout)[0]:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise EOFError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None):
        """Send one command (to a tab's ``session``, or the browser) and wait for its answer;
        the events read meanwhile are kept in ``events``."""
        self._id += 1
        message = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        while True:
            answer = self.next_message()
            if answer.get("id") == self._id:
                assert "error" not in answer, (method, answer["error"])
                return answer["result"]
            if "method" in answer:  # an event (answers to abandoned commands are dropped)
                self.events.append(answer)

    def close(self):
        try:
            self.call("Browser.close")
        except (EOFError, OSError, TimeoutError, AssertionError):
            pass
        for _ in range(300):
            if not self.alive():
                break
            time.sleep(0.1)
        else:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self._write)
        os.close(self._read)
        shutil.rmtree(self.profile, ignore_errors=True)


class Tab:
    """A page open in a fresh browser context of ``browser``, with its own events."""

    def __init__(self, browser):
        self.browser = browser
        self.context = browser.call("Target.createBrowserContext")["browserContextId"]
        self.target = browser.call("Target.createTarget", dict(
            url="about:blank", browserContextId=self.context))["targetId"]
        self.session = browser.call("Target.attachToTarget", dict(
            targetId=self.target, flatten=True))["sessionId"]

    @property
    def events(self):
        return [e for e in self.browser.events if e.get("sessionId") == self.session]

    def send(self, method, **params):
        return self.browser.call(method, params, self.session)

    def wait_for(self, method):
        while not any(e.get("method") == method for e in self.events):
            message = self.browser.next_message()
            if "method" in message:
                self.browser.events.append(message)

    def open(self, path, width, height, media="screen"):
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)
        self.send("Emulation.setEmulatedMedia", media=media)
        self.send("Page.navigate", url=path.resolve().as_uri())
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression):
        answer = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        assert "exceptionDetails" not in answer, answer["exceptionDetails"]
        return answer["result"]["value"]

    def screenshot(self, path):
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot",
                                                    format="png")["data"]))
        return path

    def problems(self):
        """Script errors, console messages and browser log entries (a blocked load, CSP)."""
        kinds = {"Runtime.exceptionThrown", "Runtime.consoleAPICalled", "Log.entryAdded"}
        return [e["params"] for e in self.events if e.get("method") in kinds]

    def close(self):
        """Close the tab and its context (the browser goes on serving the next page)."""
        browser = self.browser
        try:
            browser.call("Target.closeTarget", dict(targetId=self.target))
            browser.call("Target.disposeBrowserContext", dict(browserContextId=self.context))
        except (EOFError, OSError, TimeoutError, AssertionError):
            _stop_browser()  # a browser that fails to close a tab is not reused
        # its events, and the browser's own about it (attached, detached), are done with
        browser.events = [e for e in browser.events
                          if e.get("sessionId") not in (None, self.session)]


_BROWSER: list = []  # this process's Chromium, once started


def _stop_browser():
    while _BROWSER:
        _BROWSER.pop().close()


atexit.register(_stop_browser)


def tab(path, width, height=1400, media="screen"):
    """``path`` open in a new tab of this process's headless Chromium, ``width`` CSS px wide
    (the viewport itself: headless Chromium keeps a window at least 500 px wide, so
    ``--window-size`` cannot test a phone).  Close it with ``.close()``."""
    exe = chromium()
    if exe is None:
        pytest.skip("Chromium is not installed (.ci/run installs Debian's chromium package)")
    if _BROWSER and not _BROWSER[0].alive():
        _BROWSER.clear()
    if not _BROWSER:
        _BROWSER.append(Chromium(exe, tempfile.mkdtemp(prefix="modellens-chromium-")))
    page = Tab(_BROWSER[0])
    try:
        page.open(path, width, height, media)
    except BaseException:
        page.close()
        raise
    return page


def open_in_browser(path, tmp_path, *, width=1280, height=1600):
    """Load ``path`` in headless Chromium without network: (DOM, problems, screenshot), the
    problems (script errors, console messages, log entries) as JSON lines."""
    page = tab(path, width, height)
    try:
        dom = page.evaluate("document.documentElement.outerHTML")
        shot = page.screenshot(tmp_path / f"shot-{width}.png")
        console = [json.dumps(p) for p in page.problems()]
    finally:
        page.close()
    return dom, console, shot


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


#: The demo's report with every section, as the browser tests build it: few rows, a small
#: grid and budget (the pages' layout and controls do not depend on their number).
DEMO_OPTIONS = dict(sample=150, n_explain=8, n_background=6, grid=5, shapley_budget=20_000)
_DEMO: list = []  # this process's demo report and its saved page, once built
_INJECTED: list = []  # this process's page of the injection frame, once built


def demo_page(tmp_path_factory):
    """The demo's report (:data:`DEMO_OPTIONS`) and its page saved under a folder of
    ``tmp_path_factory``: built once per test process, for the tests of
    tests/report/test_report_browser.py and test_report_interactive.py, which read the
    page and never change it (each file built its own, ~18 s of CPU: a report's numbers
    and its 43 pictures)."""
    if not _DEMO:
        import modellens as ml
        from modellens.datasets import load_demo

        model, X, y = load_demo()
        rep = ml.report(model, X, y, **DEMO_OPTIONS)
        _DEMO.append((rep, rep.save(tmp_path_factory.mktemp("demo") / "demo.html")))
    return _DEMO[0]


def injected_page(tmp_path_factory):
    """The saved page of a report (every section, :data:`DEMO_OPTIONS`) of a model fitted on
    :func:`injection_frame`, whose names and labels try to run code: built once per test
    process, for tests/report/test_report.py (the page as text, and in Chromium) and
    test_report_interactive.py (the explorer's charts), which read it and never change it."""
    if not _INJECTED:
        import modellens as ml
        from sklearn.compose import make_column_transformer
        from sklearn.linear_model import Ridge
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import OneHotEncoder

        X, y = injection_frame()
        model = make_pipeline(make_column_transformer((OneHotEncoder(), ["label"]),
                                                      remainder="passthrough"), Ridge()).fit(X, y)
        rep = ml.report(model, X, y, **DEMO_OPTIONS)
        _INJECTED.append(rep.save(tmp_path_factory.mktemp("injected") / "r.html"))
    return _INJECTED[0]
