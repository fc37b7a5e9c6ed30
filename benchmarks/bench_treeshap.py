"""TreeSHAP: modellens against shap's TreeExplainer and XGBoost's own ``pred_contribs``.

Explaining 10,000 rows (10 features) of:

1. a scikit-learn GradientBoostingRegressor, 200 trees of depth 6, path-dependent,
   against shap's TreeExplainer (goal: at least 3x faster);
2. an XGBoost regressor, 200 trees of depth 6, against ``pred_contribs=True``
   on the same threads (goal: at least as fast, aim 1.5x);
3. a RandomForestRegressor of depth 12 (where O(L D^2) bites), against shap;
4. interventional values with 100 background rows on model 1, against shap's
   interventional TreeExplainer (fewer rows: shap is slow there).

Each line prints both times (best of ``--repeat`` runs, after one warm-up call
that compiles the numba kernels), the ratio, and the largest difference of
the values.  Run: ``python benchmarks/bench_treeshap.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import modellens as ml

D = 10


def make_data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    y = (np.sin(X[:, 0] + X[:, 1]) + X[:, 2] * X[:, 3] + np.exp(0.5 * X[:, 4])
         + X[:, 5:].sum(axis=1) * 0.3 + 0.1 * rng.normal(size=n))
    return X, y


def best(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def line(label, ours, theirs, peer, diff):
    print(f"{label:<46} modellens {ours:7.2f} s   {peer} {theirs:7.2f} s   "
          f"ratio {theirs / ours:5.1f}x   max |diff| {diff:.1e}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rows and trees")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    import shap
    import xgboost as xgb
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor

    n, trees = (2000, 50) if args.quick else (10_000, 200)
    X, y = make_data(20_000)
    Xe = X[:n]
    threads = os.cpu_count()
    print(f"{n} rows, {D} features, {threads} cores; numba threads: "
          f"{__import__('numba').get_num_threads()}")

    # 1. GradientBoostingRegressor, path-dependent
    gbr = GradientBoostingRegressor(n_estimators=trees, max_depth=6, random_state=0).fit(X, y)
    ml.shapley(gbr, Xe[:10], algorithm="tree")  # compile
    t_ours, ours = best(lambda: ml.shapley(gbr, Xe, algorithm="tree"), args.repeat)
    explainer = shap.TreeExplainer(gbr)
    t_shap, theirs = best(lambda: explainer.shap_values(Xe), 1)
    line(f"GBR {trees} trees depth 6, path-dependent", t_ours, t_shap, "shap",
         np.abs(ours.values - theirs).max())

    # 2. XGBoost, path-dependent, against pred_contribs on the same threads
    model = xgb.XGBRegressor(n_estimators=trees, max_depth=6, n_jobs=threads,
                             random_state=0).fit(X, y)
    booster = model.get_booster()
    dm = xgb.DMatrix(Xe, nthread=threads)
    ml.shapley(model, Xe[:10], algorithm="tree")
    t_ours, ours = best(lambda: ml.shapley(model, Xe, algorithm="tree"), args.repeat)
    t_xgb, contribs = best(lambda: booster.predict(dm, pred_contribs=True), args.repeat)
    line(f"XGBoost {trees} trees depth 6, path-dependent", t_ours, t_xgb, "pred_contribs",
         np.abs(ours.values - contribs[:, :-1]).max())

    # 3. RandomForest depth 12
    rf = RandomForestRegressor(n_estimators=trees // 2, max_depth=12, random_state=0,
                               n_jobs=threads).fit(X, y)
    n_rf = n // 5
    ml.shapley(rf, Xe[:10], algorithm="tree")
    t_ours, ours = best(lambda: ml.shapley(rf, Xe[:n_rf], algorithm="tree"), args.repeat)
    explainer = shap.TreeExplainer(rf)
    t_shap, theirs = best(lambda: explainer.shap_values(Xe[:n_rf]), 1)
    line(f"RF {trees // 2} trees depth 12, {n_rf} rows", t_ours, t_shap, "shap",
         np.abs(ours.values - theirs).max())

    # 4. interventional, 100 background rows, on the GBR
    B = X[-100:]
    n_iv = n // 10
    ml.shapley(gbr, Xe[:10], background=B, algorithm="tree")
    t_ours, ours = best(lambda: ml.shapley(gbr, Xe[:n_iv], background=B, algorithm="tree"),
                        args.repeat)
    explainer = shap.TreeExplainer(gbr, B, feature_perturbation="interventional")
    t_shap, theirs = best(lambda: explainer.shap_values(Xe[:n_iv], check_additivity=False), 1)
    line(f"GBR interventional, 100 background, {n_iv} rows", t_ours, t_shap, "shap",
         np.abs(ours.values - theirs).max())


if __name__ == "__main__":
    main()
