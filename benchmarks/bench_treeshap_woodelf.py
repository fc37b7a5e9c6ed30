"""TreeSHAP at data scale: modellens, woodelf and shap side by side in one run.

XGBoost regressors on 20 features (``n_jobs`` = all cores, the threads every
library gets):

1. 100 trees of depth 6, path-dependent, 20,000 rows;
2. the same model, interventional, 2,000 rows against 100, 1,000, 10,000 and
   100,000 background rows;
3. 500 trees of depth 8, path-dependent, 20,000 rows.

Each line prints the best of ``--repeat`` runs after one warm-up call (the
numba kernels compile once, then load from the cache), the ratio woodelf /
modellens (goal: at least 1.5), shap's time where it runs in reasonable time
(its interventional cost is n x m), and the largest difference of the values
from woodelf's and shap's.  Run: ``python benchmarks/bench_treeshap_woodelf.py
[--quick]``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd

import modellens as ml

D = 20


def make_data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    y = (np.sin(X[:, 0] + X[:, 1]) + X[:, 2] * X[:, 3] + np.exp(0.5 * X[:, 4])
         + X[:, 5:].sum(axis=1) * 0.3 + 0.1 * rng.normal(size=n))
    return pd.DataFrame(X, columns=[f"x{j}" for j in range(D)]), y


def best(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rows")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--shap-max-pairs", type=float, default=2e7,
                        help="skip shap's interventional runs above rows x background")
    args = parser.parse_args()
    import numba
    import shap
    import xgboost as xgb
    from woodelf import WoodelfExplainer

    threads = os.cpu_count()
    scale = 10 if args.quick else 1
    n_pd, n_iv = 20_000 // scale, 2_000 // scale
    X, y = make_data(max(120_000, n_pd))
    print("shap's 500x8 time is for 2,000 rows only; its interventional runs stop at "
          f"{args.shap_max_pairs:.0e} row x background pairs", flush=True)
    print(f"{threads} cores; numba threads {numba.get_num_threads()}; XGBoost n_jobs {threads}; "
          f"woodelf (NumPy) and shap on the same machine")
    print(f"{'workload':<52}{'modellens':>11}{'woodelf':>10}{'ratio':>8}{'shap':>10}"
          f"{'|diff| woodelf':>16}{'|diff| shap':>13}", flush=True)

    def row(label, ours_fn, woodelf_fn, shap_fn=None, shap_rows=None):
        # warm-up on a few rows: numba compiles or loads its kernels, woodelf parses the model
        ours_fn(X.iloc[:50])
        woodelf_fn(X.iloc[:50])
        t_ours, ours = best(ours_fn, args.repeat)
        t_w, theirs = best(woodelf_fn, args.repeat)
        d_w = np.abs(ours - np.asarray(theirs)).max()
        t_s, d_s = float("nan"), float("nan")
        if shap_fn is not None:
            t_s, sv = best(shap_fn, 1)
            d_s = np.abs(ours[:shap_rows] - np.asarray(sv)).max()
        print(f"{label:<52}{t_ours:10.2f}s{t_w:9.2f}s{t_w / t_ours:7.2f}x{t_s:9.2f}s"
              f"{d_w:16.1e}{d_s:13.1e}", flush=True)

    def fit(trees, depth):
        return xgb.XGBRegressor(n_estimators=trees, max_depth=depth, n_jobs=threads,
                                random_state=0).fit(X.iloc[:20_000], y[:20_000])

    model = fit(100, 6)
    Xe = X.iloc[:n_pd]
    w_pd = WoodelfExplainer(model)
    row(f"XGB 100x6 path-dependent, {n_pd:,} rows",
        lambda R=Xe: ml.shapley(model, R, algorithm="tree").values,
        lambda R=Xe: w_pd.shap_values(R, verbose=False),
        lambda: shap.TreeExplainer(model).shap_values(Xe))

    Xi = X.iloc[:n_iv]
    for m in (100, 1_000, 10_000, 100_000):
        B = X.iloc[-m:]
        explainer = WoodelfExplainer(model, B, feature_perturbation="interventional")
        shap_fn = None
        if n_iv * m <= args.shap_max_pairs:
            shap_fn = lambda B=B: shap.TreeExplainer(  # noqa: E731
                model, B, feature_perturbation="interventional").shap_values(
                    Xi, check_additivity=False)
        row(f"XGB 100x6 interventional, {n_iv:,} rows, {m:,} background",
            lambda R=Xi, B=B: ml.shapley(model, R, background=B, algorithm="tree").values,
            lambda R=Xi, e=explainer: e.shap_values(R, verbose=False), shap_fn)

    deep = fit(500, 8)
    w_deep = WoodelfExplainer(deep)
    row(f"XGB 500x8 path-dependent, {n_pd:,} rows",
        lambda R=Xe: ml.shapley(deep, R, algorithm="tree").values,
        lambda R=Xe: w_deep.shap_values(R, verbose=False),
        # shap is slow here: it explains the first 2,000 rows only (time and diff on those)
        lambda: shap.TreeExplainer(deep).shap_values(Xe.iloc[:2000]), shap_rows=2000)


if __name__ == "__main__":
    main()
