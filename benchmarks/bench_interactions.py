"""Benchmark of ml.interactions (Friedman-Popescu H statistics).

1. Brute force: all 45 pairs and 10 overall statistics of a 10-feature
   HistGradientBoosting model on 500 sampled rows, against the model-row
   limit: one ``predict`` call on as many rows as the request plans (goal
   <= 1.2x).
2. The tree method on a 500-tree GradientBoosting model, 30 features (435
   pairs and 30 overall statistics) on 5,000 rows (goal: under 60 s on 2
   cores), with shap's TreeExplainer interaction values of the same model
   on the same rows as a point of comparison for time.

Run: ``PYTHONPATH=src python benchmarks/bench_interactions.py [--quick] [--repeat N]``
(the brute-force case takes about 2 x 14 million HGB rows per repeat).
The first tree call compiles the numba kernels (cached on disk afterwards),
so the tree method is timed on its second call.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import modellens as ml


def data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = (X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) * X[:, 3] + X[:, 4] ** 2 + X[:, 5:].sum(1) * 0.2
         + 0.1 * rng.normal(size=n))
    return X, y


def brute_hgb(repeat=1):
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = data(5000, 10)
    model = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X, y)
    model.predict(X[:1000])  # warm up
    times, limits = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        h = ml.interactions(model, X, sample=500, random_state=0, method="brute",
                            progress=False)
        times.append(time.perf_counter() - t)
        rows = np.tile(X[:500], (h.n_model_rows // 500 + 1, 1))[:h.n_model_rows]
        t = time.perf_counter()
        model.predict(rows)
        limits.append(time.perf_counter() - t)
        del rows
    ours, limit = min(times), min(limits)
    print(f"brute force, HGB 10 features, 500 rows: {h.n_model_rows:,} model rows "
          f"(45 pairs + 10 overall); ours {ours:.2f} s, one predict call on as many rows "
          f"{limit:.2f} s: {ours / limit:.2f}x (goal <= 1.2x)")
    print(h.pairwise.head(5).to_string())


def tree_gbr(n=5000, d=30, trees=500, shap_rows=None):
    from sklearn.ensemble import GradientBoostingRegressor

    X, y = data(n, d)
    t = time.perf_counter()
    model = GradientBoostingRegressor(n_estimators=trees, max_depth=3, random_state=0).fit(X, y)
    print(f"(fit {trees}-tree GBR on {n} x {d}: {time.perf_counter() - t:.1f} s)")
    ml.interactions(model, X[:50], sample=None, method="tree", pairs=[(0, 1)])  # compile
    t = time.perf_counter()
    h = ml.interactions(model, X, sample=None, method="tree", random_state=0)
    ours = time.perf_counter() - t
    print(f"tree method, GBR {trees} trees, {d} features ({len(h.pairwise)} pairs + {d} "
          f"overall), {n} rows: {ours:.1f} s (goal < 60 s)")
    print(h.pairwise.head(5).to_string())
    try:
        import shap
    except ImportError:
        return
    rows = n if shap_rows is None else shap_rows
    explainer = shap.TreeExplainer(model)
    t = time.perf_counter()
    explainer.shap_interaction_values(X[:rows])
    peer = time.perf_counter() - t
    scaled = "" if rows == n else f" (on {rows} rows; x{n / rows:.0f} for {n}: {peer * n / rows:.0f} s)"
    print(f"shap TreeExplainer.shap_interaction_values: {peer:.1f} s{scaled}")


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    brute_hgb(repeat=int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv
              else 1)
    if quick:
        tree_gbr(n=1000, d=30, trees=100, shap_rows=200)
    else:
        tree_gbr(shap_rows=500)
