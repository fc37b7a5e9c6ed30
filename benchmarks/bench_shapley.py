"""Shapley values: modellens against shap on an MLP (10 features, 100 background rows).

Times, on the same model, background and 50 explained rows:

* exact: modellens vs shap's ExactExplainer vs the bare model on the 2**d x
  background rows that exact Shapley values need;
* KernelSHAP at 256 coalitions per row: error against the exact values and
  time, modellens vs shap's KernelExplainer (several seeds each);
* the budget modellens needs to match shap's error at 256, and the time ratio
  at equal error;
* the share of modellens' time spent inside the model.

Times are the best of several runs (seeds or repeats), so that a busy machine
disturbs them less; errors are means over the seeds.

Run: ``python benchmarks/bench_shapley.py [--quick]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.neural_network import MLPRegressor


try:
    from modellens import shapley
except ImportError:  # before the lead exports it
    from modellens.attribution import shapley

D = 10
SMALL_CHUNK = 16384


def make_data(seed=0, n=3000):
    """Correlated Gaussian features, a target with 2- and 3-way interactions."""
    rng = np.random.default_rng(seed)
    cov = 0.3 * np.ones((D, D)) + 0.7 * np.eye(D)
    X = rng.multivariate_normal(np.zeros(D), cov, size=n)
    y = (np.sin(X[:, 0] + X[:, 1] + X[:, 2]) + X[:, 3] * X[:, 4] * X[:, 5]
         + np.exp(0.5 * X[:, 6]) * X[:, 7] + X[:, 8] + 0.5 * X[:, 9] + 0.1 * rng.normal(size=n))
    return X, y, rng


class Timed:
    """The model's predict, with the seconds spent inside it."""

    def __init__(self, model):
        self.model, self.seconds, self.rows = model, 0.0, 0

    def __call__(self, X):
        t = time.perf_counter()
        out = self.model.predict(X)
        self.seconds += time.perf_counter() - t
        self.rows += len(X)
        return out


def rmse(a, b):
    return float(np.sqrt(np.mean((np.asarray(a) - np.asarray(b)) ** 2)))


def exact_rows(fg, bg):
    """Every (row, coalition, background row) of exact Shapley, as one matrix."""
    codes = np.arange(2 ** D)
    masks = ((codes[:, None] >> np.arange(D)) & 1).astype(bool)
    rows = np.where(masks[None, :, None, :], fg[:, None, None, :], bg[None, None])
    return rows.reshape(-1, D)


def model_only_time(model, rows, chunk_rows):
    """Seconds the model needs to predict ``rows`` in chunks of ``chunk_rows``."""
    t = time.perf_counter()
    for start in range(0, len(rows), chunk_rows):
        model.predict(rows[start:start + chunk_rows])
    return time.perf_counter() - t


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer seeds and budgets")
    args = parser.parse_args()
    seeds = range(2 if args.quick else 5)
    repeats = 1 if args.quick else 2

    X, y, rng = make_data()
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlp = MLPRegressor(max_iter=300, random_state=0).fit(X, y)
    print(f"MLPRegressor(hidden_layer_sizes=(100,)) fit in {time.perf_counter() - t:.1f} s, "
          f"R^2 = {mlp.score(X, y):.3f}")
    bg = X[rng.choice(len(X), 100, replace=False)]
    fg = X[rng.choice(len(X), 50, replace=False)]
    n_rows_exact = len(fg) * 2 ** D * len(bg)
    print(f"{D} features, {len(bg)} background rows, {len(fg)} explained rows; exact needs "
          f"{n_rows_exact:,} model rows\n")

    # ---------------------------------------------------------------- exact
    # The model's own time is its best over chunk sizes (sklearn's MLP is fastest on
    # cache-sized chunks); modellens runs with its tuned default and with a fixed size.
    all_rows = exact_rows(fg, bg)
    model_s = min(model_only_time(mlp, all_rows, c)
                  for c in (SMALL_CHUNK, 4 * SMALL_CHUNK, 16 * SMALL_CHUNK) for _ in range(repeats))
    del all_rows
    print("exact Shapley values")
    print(f"  the model alone, best chunking: {model_s:6.2f} s")
    exact = None
    model_best = model_s
    for label, chunk in (("default chunks", None), ("chunk_size=16384", SMALL_CHUNK)):
        ours_s = np.inf
        for _ in range(repeats):
            run = Timed(mlp)
            t = time.perf_counter()
            ours = shapley(run, fg, background=bg, algorithm="exact", chunk_size=chunk,
                           progress=False)
            if time.perf_counter() - t < ours_s:
                ours_s, timed = time.perf_counter() - t, run
        print(f"  {label:17s}: modellens {ours_s:6.2f} s = {ours_s / model_s:.2f}x the model "
              f"(model share {timed.seconds / ours_s:.0%})")
        exact = ours.values
    try:
        import shap
    except ImportError:
        shap = None
        print("  shap not installed: peer comparison skipped")
    if shap is not None:
        explainer = shap.explainers.Exact(mlp.predict,
                                          shap.maskers.Independent(bg, max_samples=len(bg)))
        explainer(fg[:1], silent=True)  # the first call compiles (numba); not timed
        shap_s = np.inf
        for _ in range(repeats):
            t = time.perf_counter()
            theirs = explainer(fg, silent=True)
            shap_s = min(shap_s, time.perf_counter() - t)
        print(f"  shap ExactExplainer: {shap_s:6.2f} s = {shap_s / model_best:.2f}x the model's "
              f"best time ({model_best:.2f} s); max |modellens - shap| = "
              f"{np.abs(theirs.values - exact).max():.1e}")

    # --------------------------------------------------------------- kernel
    budget = 256
    print(f"\nKernelSHAP, {budget} coalitions per row, {len(seeds)} seeds (RMSE against exact)")
    ours = {}
    for label, chunk in (("default chunks", None), ("chunk_size=16384", SMALL_CHUNK)):
        errs, times, shares = [], [], []
        for seed in seeds:
            timed = Timed(mlp)
            t = time.perf_counter()
            res = shapley(timed, fg, background=bg, algorithm="kernel", n_samples=budget,
                          random_state=seed, chunk_size=chunk, progress=False)
            times.append(time.perf_counter() - t)
            shares.append(timed.seconds / times[-1])
            errs.append(rmse(res.values, exact))
        ours[chunk] = (np.mean(errs), np.min(times))
        print(f"  modellens ({label:16s}): RMSE {np.mean(errs):.4f}  time {np.min(times):6.2f} s"
              f"  (model share {np.mean(shares):.0%})")
    if shap is None:
        return
    shap_err, shap_time = [], []
    for seed in seeds:
        np.random.seed(seed)
        explainer = shap.KernelExplainer(mlp.predict, bg)
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sv = explainer.shap_values(fg, nsamples=budget, silent=True)
        shap_time.append(time.perf_counter() - t)
        shap_err.append(rmse(sv, exact))
    shap_e, shap_t = np.mean(shap_err), np.min(shap_time)
    print(f"  shap KernelExplainer          : RMSE {shap_e:.4f}  time {shap_t:6.2f} s")
    print(f"  error ratio modellens/shap {ours[None][0] / shap_e:.2f}; speed-up at the same "
          f"budget {shap_t / ours[None][1]:.1f}x (default chunks), "
          f"{shap_t / ours[SMALL_CHUNK][1]:.1f}x (chunk_size=16384)")

    # smallest budget whose mean error matches shap's at 256
    budgets = [96, 128, 160, 192, 224, 256] if not args.quick else [128, 192, 256]
    print("\nmodellens kernel error by budget (chunk_size=16384)")
    match = None
    for b in budgets:
        errs, times = [], []
        for seed in seeds:
            t = time.perf_counter()
            res = shapley(mlp, fg, background=bg, algorithm="kernel", n_samples=b,
                          random_state=100 + seed, chunk_size=SMALL_CHUNK, progress=False)
            times.append(time.perf_counter() - t)
            errs.append(rmse(res.values, exact))
        print(f"  n_samples={b:4d}: RMSE {np.mean(errs):.4f}  time {np.min(times):6.2f} s")
        if match is None and np.mean(errs) <= shap_e:
            match = (b, np.min(times))
    if match is not None:
        print(f"  same error as shap at {budget}: n_samples={match[0]}, "
              f"{shap_t / match[1]:.1f}x less time")
    else:
        print("  no budget tried reached shap's error")


if __name__ == "__main__":
    main()
