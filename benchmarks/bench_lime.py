"""LIME for tables: modellens against the lime package on a random forest.

A RandomForestClassifier (100 trees) on 10 features; 100 explained rows with
lime's defaults (5,000 samples, quartile bins, kernel width 0.75 sqrt(d),
``feature_selection="auto"``, i.e. highest weights for 10 features):

* time of ``ml.lime`` on all rows vs one ``explain_instance`` per row;
* the forest's own time on the rows ``ml.lime`` planned (the floor at equal
  settings), and the model's share of each method's time;
* top-3 stability over 10 seeds on 20 rows: the fraction of rows whose three
  largest weights are the same set for every seed, lime at 5,000 samples and
  modellens at decreasing budgets, with each row's own draws
  (``sampling="per_row"``, lime's scheme) and with draws shared by the rows
  (``sampling="shared"``: the same distribution per row, one set of model
  rows for all); the time per row of the cheapest budget whose stability
  matches lime's.

Times are the best of ``--repeats`` runs, so that a busy machine disturbs them
less.  Run: ``python benchmarks/bench_lime.py [--quick]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

import modellens as ml

D = 10


class Timed:
    """``predict_proba`` with the seconds spent inside it (and, optionally, the rows)."""

    def __init__(self, model, keep=False):
        self.model, self.seconds, self.keep, self.rows = model, 0.0, keep, []
        self.classes_ = model.classes_

    def predict_proba(self, X):
        began = time.perf_counter()
        out = self.model.predict_proba(X)
        self.seconds += time.perf_counter() - began
        if self.keep:
            self.rows.append(np.array(X))
        return out


def lime_rows(explainer, forest, rows, *, num_samples, seed):
    """One explain_instance per row; returns weights (n, d) and (total s, model s)."""
    timed = Timed(forest)
    explainer.random_state = np.random.RandomState(seed)
    if explainer.discretizer is not None:
        explainer.discretizer.random_state = explainer.random_state
    out = np.zeros((len(rows), D))
    began = time.perf_counter()
    for i, x in enumerate(rows):
        e = explainer.explain_instance(x, timed.predict_proba, num_features=D,
                                       num_samples=num_samples)
        for j, v in e.local_exp[1]:
            out[i, j] = v
    return out, time.perf_counter() - began, timed.seconds


def top3_stability(weights):
    """``weights`` (seeds, n, d): fraction of rows whose top-3 set is the same for every seed."""
    tops = np.sort(np.argsort(-np.abs(weights), axis=2)[:, :, :3], axis=2)
    return float((tops == tops[:1]).all(axis=(0, 2)).mean())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer rows and seeds")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    from lime.lime_tabular import LimeTabularExplainer

    n_rows, n_stab, n_seeds = (20, 8, 5) if args.quick else (100, 20, 10)
    X, y = make_classification(n_samples=3000, n_features=D, n_informative=6, random_state=0)
    train, rows = X[:2000], X[2000:2000 + n_rows]
    forest = RandomForestClassifier(n_estimators=100, random_state=0).fit(train, y[:2000])
    explainer = LimeTabularExplainer(train, mode="classification", random_state=0)

    # ---------------------------------------------------------- equal settings
    t_lime = t_lime_model = np.inf
    for r in range(args.repeats):
        _, total, inside = lime_rows(explainer, forest, rows, num_samples=5000, seed=r)
        if total < t_lime:
            t_lime, t_lime_model = total, inside
    t_ours = t_ours_model = np.inf
    planned = None
    for r in range(args.repeats):
        timed = Timed(forest, keep=planned is None)
        began = time.perf_counter()
        ml.lime(timed, rows, training_data=train, num_samples=5000, random_state=r)
        total = time.perf_counter() - began
        if planned is None:
            planned = timed.rows
        if total < t_ours:
            t_ours, t_ours_model = total, timed.seconds
    t_model = np.inf
    for _ in range(args.repeats):
        began = time.perf_counter()
        for chunk in planned:
            forest.predict_proba(chunk)
        t_model = min(t_model, time.perf_counter() - began)
    n_model_rows = sum(len(c) for c in planned)

    print(f"LIME, {n_rows} rows of a 10-feature RandomForestClassifier (100 trees), "
          f"5000 samples each ({n_model_rows:,} model rows), best of {args.repeats}")
    print(f"  lime package : {t_lime:7.2f} s  ({1e3 * t_lime / n_rows:5.1f} ms/row; "
          f"model {100 * t_lime_model / t_lime:4.1f}% of it)")
    print(f"  modellens    : {t_ours:7.2f} s  ({1e3 * t_ours / n_rows:5.1f} ms/row; "
          f"model {100 * t_ours_model / t_ours:4.1f}% of it, in {len(planned)} calls)")
    print(f"  model alone on the same rows: {t_model:7.2f} s")
    print(f"  speed-up over lime: {t_lime / t_ours:5.2f}x (goal >= 3x; at most "
          f"{t_lime / t_model:4.2f}x with no library time at all: lime's time over the model "
          f"alone on our rows); modellens / model alone: {t_ours / t_model:5.2f}x "
          f"(goal <= 1.2x)")

    # ---------------------------------------------------------- stability at matched level
    stab_rows = rows[:n_stab]
    began = time.perf_counter()
    theirs = np.array([lime_rows(explainer, forest, stab_rows, num_samples=5000, seed=100 + s)[0]
                       for s in range(n_seeds)])
    t_lime_row = (time.perf_counter() - began) / (n_seeds * n_stab)
    lime_stab = top3_stability(theirs)
    print(f"\nTop-3 stability over {n_seeds} seeds on {n_stab} rows "
          f"(fraction of rows whose top-3 set never changes)")
    print(f"  lime package, 5000 samples: {lime_stab:4.2f}  ({1e3 * t_lime_row:5.1f} ms/row/seed)")
    for sampling in ("per_row", "shared"):
        best = None
        for budget in (5000, 2000, 1000, 500):
            began = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                attr = ml.lime(forest, stab_rows, training_data=train, num_samples=budget,
                               random_state=0, stability=n_seeds, sampling=sampling)
            t_row = (time.perf_counter() - began) / (n_seeds * n_stab)
            stab = float(attr.surrogate.stability["same_top_k"].mean())
            print(f"  modellens, sampling={sampling!r:9}, {budget:4d} samples: {stab:4.2f}  "
                  f"({1e3 * t_row:5.1f} ms/row/seed)")
            if stab >= lime_stab:
                best = (budget, t_row)
        if best is None:
            print(f"  {sampling}: no budget tried matches lime's stability")
        else:
            print(f"  {sampling}: at matched stability ({best[0]} samples) "
                  f"{t_lime_row / best[1]:5.2f}x less time than lime (goal >= 5x)")


if __name__ == "__main__":
    main()
