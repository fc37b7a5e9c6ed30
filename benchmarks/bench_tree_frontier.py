"""Path-dependent TreeSHAP at depth: modellens (quadrature) against XGBoost, LightGBM,
shap and woodelf on the same rows.

Workloads (issue 33):

1. XGBoost, 200 rounds of depth 8, 50 features, 5,000 rows: values and
   interaction values against XGBoost's own ``pred_contribs`` /
   ``pred_interactions`` (goal: keep the lead), shap's TreeExplainer and woodelf;
2. random forests of depth 12 and 16 (100 trees, 20 features): values against
   shap (goal: at least 10x shap on two threads against its one) and woodelf
   (up to ``--woodelf-depth``, default 16: all);
3. LightGBM with 255 leaves (100 rounds, 50 features): values and interaction
   values against LightGBM's ``pred_contrib``, shap and woodelf.

Every library that can use threads gets ``--threads`` (default 2): numba's
threads for modellens, ``nthread`` / ``num_threads`` for XGBoost and LightGBM;
shap's TreeExplainer and woodelf run as they come (shap's C++ TreeSHAP on
one thread).  Each workload is timed interleaved (one call of every
contender per round), best of ``--repeat`` (3) rounds after a warm-up call on a
few rows (numba loads or compiles its kernels, woodelf parses the model).
Contenders too slow for the full rows (the interaction values of XGBoost,
shap and woodelf, ``--slow-rows``) run on the first rows only and their time is scaled
to the full rows (marked ``~``).  Each line prints the times, ours / theirs
as a speed-up, and the largest difference of the values.  Run:
``python benchmarks/bench_tree_frontier.py [--quick] [--threads 2]``.

**Why woodelf differs by about 1e-5 on the forests while shap agrees to
1e-13.**  woodelf stores each leaf's path weights (its "s-vectors": the
cover frequencies and the Shapley-weighted replacement values,
``base_p2s``, ``lts_recursive_p2s``, ``simple_woodelf``) as float32 arrays,
so every leaf's contribution carries a relative error near 6e-8; summed
over the leaves of 100 depth-12 trees on values of size 2 it reaches 1e-5
(1.6e-5 seen on the full workload, 5.4e-6 measured with 20 trees).  It is not a
routing difference (woodelf on rows already cast to float32, as
scikit-learn compares them, differs by the same 5.4e-6) nor an
approximation of woodelf's algorithm: with those arrays made float64
woodelf agrees with modellens to 1.2e-13 and with shap to 1e-14, and the
same holds with a background (6.1e-8 in float32, below 1e-14 in float64).
modellens equals the brute-force enumeration of the coalitions on a
depth-12 forest (tests/attribution/test_tree_quadrature.py), so ours is
the right one.  The reproduction is
``tests/attribution/test_treeshap_woodelf.py::test_woodelf_differs_by_its_float32_weights_only``
(woodelf's modules read ``np.float32`` as float64 there).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import modellens as ml


def make_data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (np.sin(X[:, 0] + X[:, 1]) + X[:, 2] * X[:, 3] + np.exp(0.5 * X[:, 4])
         + X[:, 5:].sum(axis=1) * 0.3 + 0.1 * rng.normal(size=n))
    return pd.DataFrame(X, columns=[f"x{j}" for j in range(d)]), y


def interleaved(contenders, repeat):
    """Best time of each contender over ``repeat`` rounds, one call of each per round."""
    times = {name: [] for name in contenders}
    outs = {}
    for _ in range(repeat):
        for name, (fn, _scale) in contenders.items():
            t = time.perf_counter()
            outs[name] = fn()
            times[name].append(time.perf_counter() - t)
    return {name: min(ts) * contenders[name][1] for name, ts in times.items()}, outs


def report(label, contenders, repeat, ours="modellens"):
    """Time a workload and print one line per contender against ours."""
    best, outs = interleaved(contenders, repeat)
    ref = np.asarray(outs[ours])
    print(f"{label}", flush=True)
    for name, t in best.items():
        scaled = "~" if contenders[name][1] != 1 else " "
        other = np.asarray(outs[name])
        k = min(len(other), len(ref))
        diff = np.abs(other[:k] - ref[:k]).max() if other.shape[1:] == ref.shape[1:] else np.nan
        speed = t / best[ours]
        print(f"    {name:<34}{scaled}{t:9.3f} s   modellens is {speed:6.2f}x faster"
              f"   max |diff| {diff:.1e}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a fifth of the rows and trees")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--slow-rows", type=int, default=100,
                        help="rows for the interaction values of XGBoost, shap and woodelf "
                             "(their times are scaled to the full rows)")
    parser.add_argument("--woodelf-depth", type=int, default=16,
                        help="deepest random forest woodelf explains")
    parser.add_argument("--only", default="", help="comma-separated workloads: xgb,rf12,rf16,lgb")
    args = parser.parse_args()
    import lightgbm as lgb
    import numba
    import shap
    import xgboost as xgb
    from sklearn.ensemble import RandomForestRegressor
    from woodelf import WoodelfExplainer

    numba.set_num_threads(args.threads)
    div = 5 if args.quick else 1
    rows, n_slow = 5_000 // div, min(args.slow_rows, 5_000 // div)
    only = set(filter(None, args.only.split(",")))
    print(f"{rows:,} rows; {args.threads} threads for modellens, XGBoost and LightGBM; shap "
          f"and woodelf as they come; best of {args.repeat}, interleaved; "
          f"~: timed on {n_slow} rows and scaled", flush=True)

    def ours(model, R, interactions=False):
        # n_jobs is the kernels' thread count (numba.set_num_threads alone no longer sets it)
        attr = ml.shapley(model, R, algorithm="tree", interactions=interactions,
                          n_jobs=args.threads)
        return attr.interactions if interactions else attr.values

    def warm(*fns):
        for fn in fns:
            fn()

    if not only or "xgb" in only:
        X, y = make_data(20_000, 50)
        model = xgb.XGBRegressor(n_estimators=200 // div, max_depth=8, n_jobs=args.threads,
                                 random_state=0).fit(X, y)
        booster = model.get_booster()
        booster.set_param({"nthread": args.threads})
        R, S = X.iloc[:rows], X.iloc[:n_slow]
        dm, dms = xgb.DMatrix(R), xgb.DMatrix(S)
        explainer, wood = shap.TreeExplainer(model), WoodelfExplainer(model)
        warm(lambda: ours(model, R.iloc[:20]), lambda: ours(model, R.iloc[:20], True),
             lambda: wood.shap_values(R.iloc[:20], verbose=False))
        report(f"XGBoost {200 // div} rounds, depth 8, 50 features: values", {
            "modellens": (lambda: ours(model, R), 1),
            "XGBoost pred_contribs": (lambda: booster.predict(dm, pred_contribs=True)[:, :-1], 1),
            "shap TreeExplainer": (lambda: explainer.shap_values(R), 1),
            "woodelf": (lambda: wood.shap_values(R, verbose=False), 1),
        }, args.repeat)
        report(f"XGBoost {200 // div} rounds, depth 8, 50 features: interaction values", {
            "modellens": (lambda: ours(model, R, True), 1),
            # XGBoost's interactions run TreeSHAP twice per feature: 50 features, ~100x its values
            "XGBoost pred_interactions": (
                lambda: booster.predict(dms, pred_interactions=True)[:, :-1, :-1],
                rows / n_slow),
            "shap TreeExplainer": (lambda: explainer.shap_interaction_values(S),
                                   rows / n_slow),
            "woodelf": (lambda: wood.shap_interaction_values(S, verbose=False),
                        rows / n_slow),
        }, args.repeat)

    for depth in (12, 16):
        if only and f"rf{depth}" not in only:
            continue
        X, y = make_data(20_000, 20)
        model = RandomForestRegressor(n_estimators=100 // div, max_depth=depth, max_features=0.5,
                                      n_jobs=args.threads, random_state=0).fit(X, y)
        R = X.iloc[:rows]
        explainer = shap.TreeExplainer(model)
        contenders = {"modellens": (lambda: ours(model, R), 1),
                      "shap TreeExplainer": (lambda: explainer.shap_values(R), 1)}
        warm(lambda: ours(model, R.iloc[:20]))
        if depth <= args.woodelf_depth:
            # --woodelf-depth leaves woodelf out of deeper forests when time is short
            wood = WoodelfExplainer(model)
            warm(lambda: wood.shap_values(R.iloc[:20], verbose=False))
            contenders["woodelf"] = (lambda: wood.shap_values(R, verbose=False), 1)
        report(f"random forest {100 // div} trees, depth {depth}, 20 features: values",
               contenders, args.repeat)

    if not only or "lgb" in only:
        X, y = make_data(20_000, 50)
        model = lgb.LGBMRegressor(n_estimators=100 // div, num_leaves=255, verbose=-1,
                                  n_jobs=args.threads, random_state=0).fit(X, y)
        R, S = X.iloc[:rows], X.iloc[:n_slow]
        explainer, wood = shap.TreeExplainer(model), WoodelfExplainer(model)
        warm(lambda: ours(model, R.iloc[:20]), lambda: ours(model, R.iloc[:20], True),
             lambda: wood.shap_values(R.iloc[:20], verbose=False))
        report(f"LightGBM {100 // div} rounds, 255 leaves, 50 features: values", {
            "modellens": (lambda: ours(model, R), 1),
            "LightGBM pred_contrib": (
                lambda: model.predict(R, pred_contrib=True, num_threads=args.threads)[:, :-1],
                1),
            "shap TreeExplainer": (lambda: explainer.shap_values(R), 1),
            "woodelf": (lambda: wood.shap_values(R, verbose=False), 1),
        }, args.repeat)
        report(f"LightGBM {100 // div} rounds, 255 leaves, 50 features: interaction values", {
            "modellens": (lambda: ours(model, R, True), 1),
            "shap TreeExplainer": (lambda: explainer.shap_interaction_values(S),
                                   rows / n_slow),
            "woodelf": (lambda: wood.shap_interaction_values(S, verbose=False),
                        rows / n_slow),
        }, args.repeat)


if __name__ == "__main__":
    main()
