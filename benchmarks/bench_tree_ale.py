"""First-order ALE of a many-class booster from its trees against its model rows (issue 41).

The workload: the wide report's data and 7-class LightGBM (``bench_report_wide.py``:
41 columns, 6 categorical, missing values; ``--trees`` rounds), ALE of every feature
on ``--rows`` rows at 20 bins, every class's probability.  Timed in one process,
interleaved, best of ``--repeat`` after one untimed call of each (numba's compile):
``ml.ale`` with the trees standing in for the model rows (forced; what the default
rule of ``effects/_tree_ale.py`` picks is printed first) and with the trees held back
(the model rows), with the model rows counted and the largest difference of the curves.  Then the rule's
other side: one feature (``x0``, split on by most trees), where the rule keeps the
model rows, timed both ways (the trees forced) to show the choice.

Printed: seconds of each and the ratio model rows / trees (above 1: the trees are
faster).  On a machine shared with other jobs the seconds are noisy: read the ratios.

Run: ``python benchmarks/bench_tree_ale.py [--rows 1000] [--trees 200] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from bench_many_class_treeshap import best_interleaved
from bench_report_wide import models, wide_frame

import modellens as ml
from modellens.effects import _tree_ale


def run(model, X, features, how):
    """ALE of ``features``: ``how`` "default", "model rows" (trees held back) or "trees"."""
    keep = _tree_ale.MIN_MODEL_ROWS, _tree_ale._walk_rows
    if how == "model rows":
        _tree_ale.MIN_MODEL_ROWS = 10 ** 15
    elif how == "trees":
        _tree_ale.MIN_MODEL_ROWS, _tree_ale._walk_rows = 0, lambda n, ens, axes: 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the rows missing a value, said each call
            return ml.ale(model, X, features, bins=20, progress=False)
    finally:
        _tree_ale.MIN_MODEL_ROWS, _tree_ale._walk_rows = keep


def counted_rows(model, fn):
    rows = []
    own = model.predict_proba
    model.predict_proba = lambda Z, *a, **k: rows.append(len(Z)) or own(Z, *a, **k)
    try:
        fn()
    finally:
        del model.predict_proba
    return sum(rows)


def compare(label, model, X, features, fast, slow, repeat):
    run(model, X, features, fast), run(model, X, features, slow)  # compile, untimed
    (t_fast, t_slow), (a, b) = best_interleaved(
        [lambda: run(model, X, features, fast), lambda: run(model, X, features, slow)], repeat)
    diff = max(float(np.max(np.abs(a[k].values - b[k].values))) for k in a)
    how = {k: a[k].extra.get("evaluated", "model rows") for k in list(a)[:1]}
    rows = [counted_rows(model, lambda h=h: run(model, X, features, h)) for h in (fast, slow)]
    print(f"{label:<34} {fast} {t_fast:7.2f} s ({rows[0]:,} model rows, {next(iter(how.values()))})"
          f"   {slow} {t_slow:7.2f} s ({rows[1]:,} model rows)   ratio {t_slow / t_fast:5.2f}x"
          f"   max |diff| {diff:.1e}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    X, score = wide_frame(3000)
    model = models(X, score, args.trees)[7][0]
    Xs = X.iloc[:args.rows]
    print(f"7-class LightGBM, {model.booster_.num_trees()} trees, {X.shape[1]} features; ALE "
          f"on {len(Xs)} rows, 20 bins, every class; best of {args.repeat}, interleaved",
          flush=True)
    picked = next(iter(run(model, Xs, list(X.columns), "default").values())).extra
    print(f"every feature, the default rule: {picked.get('evaluated', 'model rows')}",
          flush=True)
    compare("every feature (trees vs model rows)", model, Xs, list(X.columns), "trees",
            "model rows", args.repeat)
    compare("one feature x0 (trees vs model rows)", model, Xs, ["x0"], "trees", "model rows",
            args.repeat)


if __name__ == "__main__":
    main()
