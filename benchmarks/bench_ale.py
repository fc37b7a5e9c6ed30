"""ALE for all 10 features of n = 10,000 rows, 20 bins: modellens vs PyALE vs effector.

Two models on the same correlated Gaussian data:

(a) a HistGradientBoostingRegressor, where the model's own time dominates: the
    figure of merit is our time through the model's rows over the model's own time
    on the very rows ALE planned, call by call (goal <= 1.05).  Beside it: the ratio
    over one ``predict`` call on the data rows stacked 2 * d times (as many rows,
    the earlier reference: the model itself runs about 3-4% slower on the points
    moved to their bin edges than on the data rows), and the default route, which
    reads a tree ensemble's ALE from its trees where that is cheaper;
(b) a cheap numpy function, where library overhead dominates (goal: at least
    2.5x faster than effector and 6x faster than PyALE).

PyALE runs one feature per call with ``include_CI=False`` (its confidence
intervals cost extra; modellens computes its band anyway), effector's ALE is
built and fit for all features (its bins are equal-width, ours are quantiles:
both evaluate 2 * n rows per feature).  Times are the best of several runs,
interleaved: wall-clock times by default, or with ``--cpu`` the process's CPU time
with every thread pool (OpenMP, BLAS) held to one thread, the measure for a busy
machine.  Run:  python benchmarks/bench_ale.py [--cpu] [--only a|b]
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import time
import warnings

import numpy as np
import pandas as pd

import modellens as ml


N, D, BINS = 10_000, 10, 20


def make_data(seed=0):
    rng = np.random.default_rng(seed)
    cov = 0.5 * np.ones((D, D)) + 0.5 * np.eye(D)
    X = rng.multivariate_normal(np.zeros(D), cov, size=N)
    y = X[:, 0] + np.sin(2 * X[:, 1]) + X[:, 2] * X[:, 3] + 0.5 * X[:, 4] ** 2 \
        + rng.normal(0, 0.1, N)
    return X, y


class Predictor:
    """``predict`` over a plain function, taking arrays or DataFrames (PyALE passes frames)."""

    def __init__(self, fn):
        self.fn = fn

    def predict(self, X):
        return self.fn(np.asarray(X, dtype=float))


def run_ours(fn, X):
    return ml.ale(fn, X, bins=BINS)


def run_ours_model_rows(fn, X):
    """ALE through the model's rows even where the trees would serve it (the overhead goal
    is about the engine's model rows, not the exact tree walk)."""
    from modellens.effects import _tree_ale

    kept, _tree_ale.MIN_MODEL_ROWS = _tree_ale.MIN_MODEL_ROWS, 10 ** 15
    try:
        return ml.ale(fn, X, bins=BINS)
    finally:
        _tree_ale.MIN_MODEL_ROWS = kept


def run_effector(fn, X):
    import effector
    from effector.axis_partitioning import Fixed

    explainer = effector.ALE(X, fn, nof_instances="all")
    explainer.fit("all", binning_method=Fixed(nof_bins=BINS))
    return explainer


def run_pyale(model, frame):
    from PyALE import ale as pyale

    # PyALE sets up its own INFO logging on import: one line per feature and call
    logging.getLogger("PyALE").setLevel(logging.WARNING)
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("PyALE"):
            logging.getLogger(name).setLevel(logging.WARNING)
    return [pyale(frame, model, [c], grid_size=BINS, include_CI=False, plot=False)
            for c in frame.columns]


CLOCK = time.perf_counter  # time.process_time with --cpu


def best_of(jobs, repeats):
    """Best time of each job, running the jobs interleaved ``repeats`` times."""
    best = {name: np.inf for name in jobs}
    for _ in range(repeats):
        for name, (job, times) in jobs.items():
            for _ in range(times):
                t0 = CLOCK()
                job()
                best[name] = min(best[name], CLOCK() - t0)
    return best


def main():
    global CLOCK
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", action="store_true",
                        help="CPU time on one thread (a busy machine) instead of wall time")
    parser.add_argument("--only", choices=("a", "b"), help="one of the two models")
    args = parser.parse_args()
    held = contextlib.nullcontext()
    if args.cpu:
        # (the pools of a library are limited only once it is loaded: the models' first)
        import sklearn.ensemble  # noqa: F401
        from threadpoolctl import threadpool_limits

        CLOCK, held = time.process_time, threadpool_limits(1)
    with held:
        run(args)


def run(args):
    warnings.filterwarnings("ignore")
    X, y = make_data()
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(D)])
    stacked = np.tile(X, (2 * D, 1))  # as many rows as first-order ALE evaluates

    clock = "CPU time, one thread" if args.cpu else "wall time"
    print(f"ALE, all {D} features, n = {N}, {BINS} bins; best of 3 interleaved, {clock}\n")
    if args.only != "b":
        model_dominates(X, y, frame, stacked)
    if args.only != "a":
        overhead_dominates(X, frame, stacked)


def planned_rows(model, X):
    """The rows ALE through the model's rows hands ``model.predict``, call by call."""
    calls = []
    own = model.predict
    model.predict = lambda R: calls.append(np.array(R)) or own(R)
    try:
        run_ours_model_rows(model, X)
    finally:
        del model.predict
    return calls


def model_dominates(X, y, frame, stacked):
    """(a) the model dominates"""
    from sklearn.ensemble import HistGradientBoostingRegressor

    hgb = HistGradientBoostingRegressor(random_state=0).fit(X, y)
    planned = planned_rows(hgb, X)
    times = best_of({
        "predict(planned)": (lambda: [hgb.predict(R) for R in planned], 1),
        "predict(2nd rows)": (lambda: hgb.predict(stacked), 1),
        "modellens": (lambda: run_ours_model_rows(hgb, X), 1),
        "modellens (auto)": (lambda: run_ours(hgb, X), 1),
        "effector": (lambda: run_effector(hgb.predict, X), 1),
        "PyALE": (lambda: run_pyale(hgb, frame), 1),
    }, repeats=3)
    base = times["predict(planned)"]
    print("(a) HistGradientBoostingRegressor; predict(planned): the model alone on the rows "
          f"ALE planned ({sum(len(R) for R in planned):,} rows in {len(planned)} calls, the "
          "first the one row that tells the outputs); predict(2nd rows): one call on the data "
          "rows stacked 2d times")
    for name, t in times.items():
        print(f"    {name:<18} {t * 1e3:9.1f} ms   / predict(planned) = {t / base:5.2f}")
    print(f"    goal: modellens (model rows) / predict(planned) <= 1.05 -> "
          f"{times['modellens'] / base:.3f}; / predict(2nd rows): "
          f"{times['modellens'] / times['predict(2nd rows)']:.3f} (the model alone: "
          f"{base / times['predict(2nd rows)']:.3f}); with the default route (the trees where "
          f"they are cheaper) / predict(planned): {times['modellens (auto)'] / base:.3f}\n")


def overhead_dominates(X, frame, stacked):
    """(b) library overhead dominates"""
    weights = np.linspace(-1, 1, D)

    def cheap(A):
        A = np.asarray(A, dtype=float)
        return A @ weights + np.sin(A[:, 0])

    model = Predictor(cheap)
    times = best_of({
        "modellens": (lambda: run_ours(cheap, X), 3),
        "effector": (lambda: run_effector(cheap, X), 2),
        "PyALE": (lambda: run_pyale(model, frame), 1),
        "model(2nd rows)": (lambda: cheap(stacked), 3),
    }, repeats=3)
    ours = times["modellens"]
    print("(b) cheap numpy function")
    for name, t in times.items():
        print(f"    {name:<18} {t * 1e3:9.1f} ms   / modellens = {t / ours:6.2f}")
    print(f"    goals: effector / modellens >= 2.5 -> {times['effector'] / ours:.2f}; "
          f"PyALE / modellens >= 6 -> {times['PyALE'] / ours:.2f}")


if __name__ == "__main__":
    main()
