"""TreeSHAP of a many-class booster: modellens against shap's TreeExplainer (issue 41).

The workload: a 7-class LightGBM, 200 rounds (1,400 trees), 41 features of
which 6 are pandas categoricals, with missing values, explained on 100 rows.
Path-dependent values, timed for modellens and shap in one process, interleaved (ours, shap, ours, shap, ...), best of ``--repeat``,
after one untimed call of each (numba's compile, shap's first use); shap's
explainer is built in each timed call (it reads the model each time), ours reuses
the trees it parsed on the first call.  Interventional values (100 background
rows) and interaction values are timed for modellens alone, with ``n_jobs=1``
against ``--threads``: shap's interventional TreeExplainer and its interaction
values refuse these categorical columns.  Then path-dependent values with
``n_jobs=1`` against ``--threads`` (and shap's time on the same rows for scale),
and the time of a first call on a freshly fitted model (the trees parsed)
against a later call on the same model (parsed trees reused: their state is
read through LightGBM's C API, not by serializing the model).

Last, per library (LightGBM, XGBoost, HistGradientBoosting: 7 classes, 100
rounds, the 35 numeric columns with their missing values), path-dependent,
interventional and path-dependent interaction values against shap on the same
rows (the largest difference) and timed: modellens with one thread and with
``--threads``, shap (``--no-libraries`` skips it; ``--pair-rows`` rows for the
interactions, shap's being slow).  shap's own additivity check is off: its
interventional values of a HistGradientBoosting model with missing values are
wrong (0.19 from the brute-force Shapley values of the raw margin on 8 features,
where modellens' are within 2e-15), and XGBoost's float32 margins leave both
within about 1e-7 of each other, not 1e-9.

Printed: seconds of each, the ratio shap / modellens (above 1: modellens is
faster) and the largest difference of the values.  On a machine shared with
other jobs the seconds are noisy: read the ratios.

Run: ``python benchmarks/bench_many_class_treeshap.py [--repeat 3] [--rows 100]
[--threads 2] [--pair-rows 20] [--no-libraries] [--threads-only]``
(``--threads-only``: the three n_jobs=1 / ``--threads`` comparisons alone).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import modellens as ml

N_CLASSES, N_FEATURES, N_CATEGORICAL = 7, 41, 6


def make_data(n, seed=0):
    """41 columns (the last 6 categorical, 5-12 levels), 5% missing, 7 classes."""
    rng = np.random.default_rng(seed)
    num = rng.normal(size=(n, N_FEATURES - N_CATEGORICAL))
    X = pd.DataFrame(num, columns=[f"x{j}" for j in range(num.shape[1])])
    score = num[:, :7] @ rng.normal(size=(7, N_CLASSES))
    for c in range(N_CATEGORICAL):
        levels = 5 + c
        codes = rng.integers(0, levels, n)
        X[f"c{c}"] = pd.Categorical.from_codes(codes, [f"l{v}" for v in range(levels)])
        score += rng.normal(size=(levels, N_CLASSES))[codes] * 0.7
    X = X.mask(rng.random(X.shape) < 0.05)  # missing values in every column
    y = np.argmax(score + rng.gumbel(size=score.shape), axis=1)
    return X, y


def fit(X, y, seed=0):
    import lightgbm as lgb
    return lgb.LGBMClassifier(n_estimators=200, num_leaves=31, learning_rate=0.05,
                              random_state=seed, verbose=-1).fit(X, y)


def best_interleaved(fns, repeat):
    """Best time of each function over ``repeat`` rounds, the functions taking turns."""
    times = [[] for _ in fns]
    outs = [None] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            outs[i] = fn()
            times[i].append(time.perf_counter() - t)
    return [min(t) for t in times], outs


def _shap_stack(values):
    """shap's answer as ``(n, d, k)`` (old shap: a list per class)."""
    if isinstance(values, list):
        return np.stack(values, axis=-1)
    return np.asarray(values)


def line(label, ours, theirs, diff, peer="shap"):
    print(f"{label:<52} modellens {ours:7.3f} s   {peer} {theirs:7.3f} s   "
          f"ratio {theirs / ours:5.2f}x   max |diff| {diff:.1e}", flush=True)

def _fit_library(name, X, y):
    """A 7-class booster of ``name`` on numeric columns (NaN kept), 100 rounds."""
    if name == "LightGBM":
        import lightgbm as lgb
        return lgb.LGBMClassifier(n_estimators=100, num_leaves=31, learning_rate=0.05,
                                  random_state=0, verbose=-1).fit(X, y)
    if name == "XGBoost":
        import xgboost as xgb
        return xgb.XGBClassifier(n_estimators=100, max_depth=6, learning_rate=0.05,
                                 random_state=0).fit(X, y)
    from sklearn.ensemble import HistGradientBoostingClassifier
    return HistGradientBoostingClassifier(max_iter=100, early_stopping=False,
                                          random_state=0).fit(X, y)


def libraries(args, n_threads):
    """Each library's 7-class booster on the numeric columns: ours against shap on the same
    rows (path-dependent, interventional, path-dependent interactions), and ours with one
    thread against ``n_threads``."""
    import shap

    X, y = make_data(3000)
    X = X.drop(columns=[f"c{c}" for c in range(N_CATEGORICAL)]).to_numpy()
    rows, bg, pair_rows = X[:args.rows], X[1000:1100], X[:args.pair_rows]
    print(f"\n7 classes, {X.shape[1]} numeric columns with missing values, 100 rounds; "
          f"{len(rows)} rows ({len(pair_rows)} for interactions), 100 background rows",
          flush=True)
    for name in ("LightGBM", "XGBoost", "HistGradientBoosting"):
        model = _fit_library(name, X, y)
        kinds = (
            ("path-dependent", rows,
             lambda j, r=rows: ml.shapley(model, r, algorithm="tree", target="all", n_jobs=j,
                                          progress=False).values,
             lambda r=rows: _shap_stack(shap.TreeExplainer(model).shap_values(
                 r, check_additivity=False))),
            ("interventional", rows,
             lambda j, r=rows: ml.shapley(model, r, algorithm="tree", background=bg,
                                          target="all", n_jobs=j, progress=False).values,
             lambda r=rows: _shap_stack(shap.TreeExplainer(
                 model, data=bg, feature_perturbation="interventional").shap_values(
                 r, check_additivity=False))),
            ("interactions (path-dependent)", pair_rows,
             lambda j, r=pair_rows: ml.shapley(model, r, algorithm="tree", interactions=True,
                                               target="all", n_jobs=j,
                                               progress=False).interactions,
             lambda r=pair_rows: _shap_stack(
                 shap.TreeExplainer(model).shap_interaction_values(r))),
        )
        for kind, _, ours, theirs in kinds:
            ours(n_threads), theirs()  # compile / first use, untimed
            (t1, t2, ts), (a, _, b) = best_interleaved(
                [lambda: ours(1), lambda: ours(n_threads), theirs], args.repeat)
            diff = np.abs(a - b).max() if a.shape == b.shape else float("nan")
            print(f"{name:<21} {kind:<30} modellens 1 thread {t1:7.3f} s, {n_threads} threads "
                  f"{t2:7.3f} s ({t1 / t2:4.2f}x)   shap {ts:7.3f} s (ratio {ts / t2:5.2f}x)   "
                  f"max |diff| {diff:.1e}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--pair-rows", type=int, default=20,
                        help="rows of the per-library interaction values (shap's are slow)")
    parser.add_argument("--no-libraries", action="store_true",
                        help="skip the per-library comparison on numeric columns")
    parser.add_argument("--threads-only", action="store_true",
                        help="only n_jobs=1 against --threads: interventional, interactions "
                             "and path-dependent values (no shap, no first call, no "
                             "libraries)")
    args = parser.parse_args(argv)
    import numba
    import shap

    X, y = make_data(3000)
    model = fit(X, y)
    rows, bg = X.iloc[:args.rows], X.iloc[1000:1100]
    n_threads = min(args.threads, numba.config.NUMBA_NUM_THREADS)
    print(f"7-class LightGBM, {model.booster_.num_trees()} trees, {X.shape[1]} features "
          f"({N_CATEGORICAL} categorical, missing values); {len(rows)} rows; "
          f"n_jobs={n_threads}; best of {args.repeat}, interleaved with shap", flush=True)

    def ours_path(n_jobs=n_threads):
        return ml.shapley(model, rows, algorithm="tree", target="all", n_jobs=n_jobs,
                          progress=False)

    def ours_bg(n_jobs=n_threads):
        return ml.shapley(model, rows, algorithm="tree", background=bg, target="all",
                          n_jobs=n_jobs, progress=False)

    def ours_pairs(n_jobs=n_threads):
        return ml.shapley(model, rows, algorithm="tree", interactions=True, target="all",
                          n_jobs=n_jobs, progress=False)

    path_explainer = shap.TreeExplainer(model)

    def shap_path():
        return _shap_stack(shap.TreeExplainer(model).shap_values(rows))

    # shap's interventional TreeExplainer refuses categorical splits: ours alone
    ours_bg()
    (t_bg1, t_bg), _ = best_interleaved([lambda: ours_bg(1), ours_bg], args.repeat)
    print(f"interventional, 100 background rows: modellens n_jobs=1 {t_bg1:.3f} s, "
          f"n_jobs={n_threads} {t_bg:.3f} s: {t_bg1 / t_bg:.2f}x (shap: refuses categorical "
          "splits with a background)", flush=True)
    # shap's interaction values refuse a frame of categorical columns: ours alone
    ours_pairs()
    (t_pairs1, t_pairs), _ = best_interleaved([lambda: ours_pairs(1), ours_pairs], args.repeat)
    print(f"interaction values (path-dependent): modellens n_jobs=1 {t_pairs1:.3f} s, "
          f"n_jobs={n_threads} {t_pairs:.3f} s: {t_pairs1 / t_pairs:.2f}x (shap: refuses the "
          "categorical columns)", flush=True)

    if args.threads_only:
        ours_path()
        (t1, t2), _ = best_interleaved([lambda: ours_path(1), ours_path], args.repeat)
        print(f"path-dependent: modellens n_jobs=1 {t1:.3f} s, n_jobs={n_threads} {t2:.3f} s: "
              f"{t1 / t2:.2f}x", flush=True)
        return

    def shap_reused():
        return _shap_stack(path_explainer.shap_values(rows))

    for label, ours, theirs in (("path-dependent (shap's explainer built per call)", ours_path,
                                 shap_path),
                                ("path-dependent (shap's explainer built once)", ours_path,
                                 shap_reused)):
        ours(), theirs()  # compile / first use, untimed
        (t_ours, t_shap), (a, b) = best_interleaved([ours, theirs], args.repeat)
        values = np.asarray(a.values)
        if values.ndim == b.ndim - 1:
            b = b.reshape(values.shape) if b.size == values.size else b
        diff = np.abs(values - b).max() if values.shape == b.shape else float("nan")
        line(label, t_ours, t_shap, diff)

    (t1, t2, ts), _ = best_interleaved(
        [lambda: ours_path(1), lambda: ours_path(n_threads), shap_path], args.repeat)
    print(f"path-dependent, n_jobs=1 {t1:.3f} s, n_jobs={n_threads} {t2:.3f} s: "
          f"{t1 / t2:.2f}x with {n_threads} threads (shap {ts:.3f} s: ratio {ts / t2:.2f}x)",
          flush=True)

    # a first call parses the trees; later calls on the same fitted model reuse them
    firsts, laters = [], []
    for seed in range(args.repeat):
        fresh = fit(X, y, seed=seed + 1)
        t = time.perf_counter()
        ml.shapley(fresh, rows[:2], algorithm="tree", target="all", progress=False)
        firsts.append(time.perf_counter() - t)
        t = time.perf_counter()
        ml.shapley(fresh, rows[:2], algorithm="tree", target="all", progress=False)
        laters.append(time.perf_counter() - t)
    print(f"2 rows: first call on a fresh model {min(firsts):.3f} s (parsing the trees), "
          f"a later call {min(laters):.3f} s", flush=True)
    if not args.no_libraries:
        libraries(args, n_threads)


if __name__ == "__main__":
    main()
