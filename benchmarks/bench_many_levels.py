"""Many levels: pairing a background / training table with X, and categorical ALE's cap.

A frame of ``L`` rows, a numeric column and a categorical one of ``L`` distinct
levels; a cheap model.  Times (best of ``--repeats``) of:

* ``encode_with(X[:3], X)``: the pairing every attribution with a
  background or training table does (it rebuilt the set of categories once
  per level: quadratic, 46 s for LIME at 10,000 levels);
* ``ml.lime`` on 3 rows with the table as training data;
* ``ml.shapley`` (permutation) on 3 rows with the table as background;
* ``ml.ale`` on the categorical column, which is refused above
  ``modellens.effects._categorical.MAX_LEVELS`` unordered levels (its level
  order needs (L, L) distance matrices) and should answer at once.

Run: ``python benchmarks/bench_many_levels.py [--levels 1000 10000 100000]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

import modellens as ml
from modellens.data import encode_with


def best(fn, repeats):
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return min(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--levels", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore")

    def f(A):
        return A["a"].to_numpy() + 1e-3 * A["c"].cat.codes.to_numpy()

    print(f"{'levels':>8} {'pairing s':>10} {'lime s':>8} {'shapley s':>10} {'ale s':>8}")
    for n_levels in args.levels:
        rng = np.random.default_rng(0)
        names = [f"l{i}" for i in range(n_levels)]
        X = pd.DataFrame({"a": rng.normal(size=n_levels),
                          "c": pd.Categorical(names, categories=names)})
        rows = X.iloc[:3]

        def refused():
            try:
                ml.ale(f, X, ["c"])
            except ml.InvalidParameterError:
                pass

        pairing = best(lambda: encode_with(rows, X), args.repeats)
        lime = best(lambda: ml.lime(f, rows, training_data=X, num_samples=500,
                                    random_state=0), args.repeats)
        shap = best(lambda: ml.shapley(f, rows, background=X, algorithm="permutation",
                                       n_permutations=4, random_state=0), args.repeats)
        ale = best(refused, args.repeats) if n_levels > 2_000 else float("nan")
        print(f"{n_levels:>8,} {pairing:>10.3f} {lime:>8.3f} {shap:>10.3f} {ale:>8.3f}")


if __name__ == "__main__":
    main()
