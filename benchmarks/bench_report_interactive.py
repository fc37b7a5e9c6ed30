"""The interactive report's file size and time to interactive, against effector's and
explainerdashboard's HTML exports of the same model.

Run ``PYTHONPATH=src python benchmarks/bench_report_interactive.py [--quick] [--rounds 3]
[--tools modellens,effector] [--shapes 10000x10,1000000x100]``.

For 10, 30 and 100 features on 10,000 and 1,000,000 rows (``--quick``: 10 features on
10,000 rows), a cheap model (a plain function: linear terms, one interaction, one
sine) is explained by ``ml.report`` at its defaults and the page written twice:
interactive (the default) and ``interactive=False``.  Each page is opened in
headless Chromium (Debian's ``chromium``, driven over its DevTools protocol with
the network off, as the browser tests do) ``--rounds`` times in fresh tabs:

- **interactive after**: milliseconds from navigation start until the explorer
  has drawn every chart and wired its controls (``window.modellensExplorer.ready``);
- **redraw**: milliseconds for a change of the feature selector to redraw its charts;
- **load event**: the page's load event, the number the other tools are given
  (their pages have no later "ready" moment).

The best of the rounds is printed.  ``effector.explain(X, model).to_html()``
(effector is in the bench extra) and explainerdashboard's ``save_html()`` (not a
dependency; measured only where it is installed) are run on the same model and
data where they run (explainerdashboard on the first 1,000 rows: its explainer keeps
every row it is given and its KernelSHAP costs minutes per thousand rows).  Their
pages have no selectors that redraw (effector: PNG pictures; explainerdashboard's
export has no server behind its selectors), so only their load event is timed.

Goal (issue 32): 100 features on 1,000,000 rows <= 10 MB, interactive <= 2 s.
Timings on a shared machine are noisy; re-run on an idle one.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests"), str(HERE.parent / "tests" / "report")]


def make_model(d):
    """A cheap model of ``d`` features: linear terms, x0 * x1 and sin(x2)."""
    w = np.linspace(1.0, 0.1, d)

    def f(Z):
        Z = np.asarray(Z, dtype=float)
        return Z @ w + 2 * Z[:, 0] * Z[:, 1] + np.sin(3 * Z[:, 2])
    return f


def make_data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, d)).astype(np.float32),
                     columns=[f"x{i}" for i in range(d)])
    return X


def open_times(path, rounds, *, redraw=False):
    """(interactive after, redraw, load event) in ms, best of ``rounds`` fresh tabs."""
    from support import chromium
    from test_report_browser import _DevTools

    exe = chromium()
    if exe is None:
        raise SystemExit("Chromium is not installed")
    best = [np.inf, np.inf, np.inf]
    with tempfile.TemporaryDirectory() as profile:
        browser = _DevTools(exe, profile)
        try:
            for _ in range(rounds):
                browser.open(Path(path), 1280, 900)
                load = browser.evaluate("performance.getEntriesByType('navigation')[0]"
                                        ".loadEventEnd")
                ready = browser.evaluate("window.modellensExplorer ? "
                                         "window.modellensExplorer.ready : null")
                change = None
                if redraw and ready is not None:
                    change = browser.evaluate(
                        "(() => { const s = document.querySelector('[data-ml-control=\"feature\"]');"
                        " const t0 = performance.now(); s.selectedIndex = 1;"
                        " s.dispatchEvent(new Event('change')); return performance.now() - t0; })()")
                problems = browser.problems()
                if problems:
                    print(f"  console / errors in {path.name}: {problems[:2]}")
                for k, v in enumerate((ready, change, load)):
                    if v is not None:
                        best[k] = min(best[k], float(v))
                browser.session = None  # the next round opens a fresh tab
                browser.events.clear()
        finally:
            browser.close()
    return [None if not np.isfinite(v) else v for v in best]


def run_modellens(X, model, y, out, rounds):
    import modellens as ml

    t0 = time.perf_counter()
    rep = ml.report(model, X, y, progress=False)
    build = time.perf_counter() - t0
    rows = []
    for interactive in (True, False):
        rep.interactive = interactive
        path = rep.save(out / f"modellens-{'interactive' if interactive else 'static'}.html")
        ready, redraw, load = open_times(path, rounds, redraw=interactive)
        rows.append(("modellens" + ("" if interactive else " --static"), build,
                     path.stat().st_size, ready, redraw, load))
    return rows


def run_effector(X, model, out, rounds):
    try:
        import effector
    except ImportError:
        return [("effector", None, None, None, None, "not installed")]
    try:
        t0 = time.perf_counter()
        rep = effector.explain(np.asarray(X, dtype=float), model, method="pdp")
        path = out / "effector.html"
        rep.to_html(str(path))
        build = time.perf_counter() - t0
    except Exception as exc:  # noqa: BLE001 - say why and go on
        return [("effector", None, None, None, None, f"failed: {type(exc).__name__}: {exc}"[:80])]
    _, _, load = open_times(path, rounds)
    return [("effector explain().to_html()", build, path.stat().st_size, None, None, load)]


def run_explainerdashboard(X, model, y, out, rounds):
    try:
        from explainerdashboard import ExplainerDashboard, RegressionExplainer
    except ImportError:
        return [("explainerdashboard", None, None, None, None, "not installed")]
    from sklearn.base import BaseEstimator, RegressorMixin

    class Wrapped(RegressorMixin, BaseEstimator):  # it wants an estimator
        def fit(self, X, y):
            return self

        def predict(self, X):
            return model(X)

    try:
        t0 = time.perf_counter()
        sample = X.iloc[:1000]  # its explainer keeps every row it is given
        explainer = RegressionExplainer(Wrapped().fit(sample, y[:1000]), sample, y[:1000])
        path = out / "explainerdashboard.html"
        ExplainerDashboard(explainer).save_html(str(path))
        build = time.perf_counter() - t0
    except Exception as exc:  # noqa: BLE001
        return [("explainerdashboard", None, None, None, None,
                 f"failed: {type(exc).__name__}: {exc}"[:80])]
    _, _, load = open_times(path, rounds)
    return [("explainerdashboard save_html()", build, path.stat().st_size, None, None, load)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 features on 10,000 rows only")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tools", default="modellens,effector,explainerdashboard",
                        help="comma-separated, of modellens, effector, explainerdashboard "
                             "(explainerdashboard pins its own numpy: run it from an "
                             "environment of its own, e.g. a venv with "
                             "--system-site-packages)")
    parser.add_argument("--shapes", default=None,
                        help="rows x features to run, e.g. 10000x10,1000000x100")
    args = parser.parse_args(argv)
    shapes = [(10_000, 10)] if args.quick else [
        (n, d) for n in (10_000, 1_000_000) for d in (10, 30, 100)]
    if args.shapes:
        shapes = [tuple(int(v) for v in shape.split("x")) for shape in args.shapes.split(",")]
    tools = set(args.tools.split(","))
    print("| rows | features | page | build s | size MB | interactive ms | redraw ms | "
          "load ms |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|")
    for n, d in shapes:
        X = make_data(n, d)
        model = make_model(d)
        y = model(X) + np.random.default_rng(1).normal(0, 0.1, n)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            rows = run_modellens(X, model, y, out, args.rounds) if "modellens" in tools else []
            if "effector" in tools:
                rows += run_effector(X, model, out, args.rounds)
            if "explainerdashboard" in tools:
                rows += run_explainerdashboard(X, model, y, out, args.rounds)
            for name, build, size, ready, redraw, load in rows:
                cells = [f"{n:,}", str(d), name,
                         "" if build is None else f"{build:.1f}",
                         "" if size is None else f"{size / 1e6:.2f}",
                         "" if ready is None else f"{ready:.0f}",
                         "" if redraw is None else f"{redraw:.0f}",
                         load if isinstance(load, str) else
                         ("" if load is None else f"{load:.0f}")]
                print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
