"""Brute-force ``ml.interactions`` against the model-row limit.

The limit is the model's own time to predict exactly the rows the request
plans, in the same chunk sizes, on rows of the same shape: whatever we spend
above it is library overhead (building the planned rows, the group sums, the
statistics).  For each model -- a cheap linear function ``X @ w``, a
HistGradientBoosting regressor and a 3-class HistGradientBoosting classifier
(every class's statistics, one pass) -- at d = 10 (every pair) and d = 30
(the screen ``pairs=5``), 500 sampled rows, the request and the model's own
predictions on the recorded chunk sizes (on the largest chunk of rows the
request planned, recorded in the first timed call and replayed) are timed interleaved, best of
``--repeat`` (3), and the ratio printed (goal: <= 1.15x on HGB).

Peers that compute Friedman-Popescu H statistics in Python (none is a
dependency; the known ones are R's ``hstats`` / ``iml``) are timed when
installed: ``sklearn_gbmi``, ``pyhstats``.

Run: ``PYTHONPATH=src python benchmarks/bench_interactions_limit.py [--quick] [--repeat N]
[--only cheap,hgb,clf] [--d 10,30]``  (``--quick``: 200 sampled rows).
"""

from __future__ import annotations

import argparse
import importlib.util
import time
import warnings

import numpy as np

import modellens as ml


def data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) * X[:, 3] + X[:, 4] ** 2 + X[:, 5:].sum(1) * 0.2
    return X, y + 0.1 * rng.normal(size=n)


class Recorder:
    """The model's response method, recording the rows of each call."""

    def __init__(self, fn):
        self.fn, self.sizes, self.largest = fn, [], None

    def __call__(self, rows):
        self.sizes.append(len(rows))
        if self.largest is None or len(rows) > len(self.largest):
            self.largest = np.array(rows)  # planned rows, replayed for the model's own time
        return self.fn(rows)


def models(d, which):
    X, y = data(5000, d)
    if "cheap" in which:
        w = np.random.default_rng(1).normal(size=d)
        yield "cheap X @ w", (lambda A: A @ w), "call", X
    if "hgb" in which:
        from sklearn.ensemble import HistGradientBoostingRegressor

        yield "HGB regressor", HistGradientBoostingRegressor(
            max_iter=100, random_state=0).fit(X, y), "predict", X
    if "clf" in which:
        from sklearn.ensemble import HistGradientBoostingClassifier

        yield "HGB 3-class", HistGradientBoostingClassifier(
            max_iter=100, random_state=0).fit(X, np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))), \
            "predict_proba", X


def bench(name, model, method, X, *, sample, pairs, repeat):
    own = model if method == "call" else getattr(model, method)
    rec = Recorder(own)
    target = rec if method == "call" else model
    if method != "call":
        setattr(model, method, rec)  # an instance attribute: the estimator is unchanged
    kw = dict(sample=sample, pairs=pairs, random_state=0, method="brute", progress=False,
              n_jobs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cost warning of the big requests
        ml.interactions(target, X[:60], sample=30, method="brute", progress=False)  # warm up
        ours, limit = [], []
        for _ in range(repeat):
            rec.sizes, rec.largest = [], None
            t = time.perf_counter()
            h = ml.interactions(target, X, **kw)
            ours.append(time.perf_counter() - t)
            sizes, rows = list(rec.sizes), rec.largest  # rows the request planned
            t = time.perf_counter()
            for m in sizes:
                own(rows[:m])
            limit.append(time.perf_counter() - t)
    if method != "call":
        delattr(model, method)
    a, b = min(ours), min(limit)
    assert sum(sizes) == h.n_model_rows  # every planned row was timed on the model too
    print(f"{name:14s} d={X.shape[1]:2d} pairs={pairs!s:4s}: {sum(sizes):>11,} model rows in "
          f"{len(sizes):4d} calls; ours {a:7.2f} s, the model's own {b:7.2f} s: {a / b:5.2f}x",
          flush=True)
    return h


def peers():
    found = [p for p in ("sklearn_gbmi", "pyhstats") if importlib.util.find_spec(p)]
    print("peers computing H statistics installed: " + (", ".join(found) if found else
          "none (sklearn_gbmi / pyhstats not installed; R's hstats is not callable here)"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="cheap,hgb,clf")
    ap.add_argument("--d", default="10,30")
    args = ap.parse_args()
    sample = 200 if args.quick else 500
    print(f"ml.interactions(method='brute'), sample={sample}, n_jobs=1, best of {args.repeat} "
          "interleaved with the model's own predict on the same chunk sizes")
    for d in map(int, args.d.split(",")):
        for name, model, method, X in models(d, args.only.split(",")):
            bench(name, model, method, X, sample=sample, pairs=None if d <= 10 else 5,
                  repeat=args.repeat)
    peers()


if __name__ == "__main__":
    main()
