"""``ml.importance`` against scikit-learn's ``permutation_importance`` and the model-row limit.

    PYTHONPATH=src python benchmarks/bench_importance.py [n_rows]

Permutation importance costs ``n (1 + d R)`` model rows (the data, then every
feature shuffled ``R`` times).  scikit-learn calls the model once per feature
and repeat on a permuted copy; modellens plans every copy as rows of one
engine stream.  Printed: the best of three interleaved runs of each, and the
model's own time for all those rows in one call (the floor), for a
HistGradientBoosting regressor (r2) and classifier (neg_log_loss); the
importances are checked equal.  Timings on a shared machine are noisy.
"""

import sys
import time

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.inspection import permutation_importance

import modellens as ml

N_REPEATS = 5


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main(n=10_000, d=10):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(n, d)), columns=[f"x{j}" for j in range(d)])
    signal = X.x0 + X.x1 * X.x2 + np.sin(X.x3)
    reg = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X, signal)
    clf = HistGradientBoostingClassifier(max_iter=100, random_state=0).fit(X, signal > 0)
    rows = pd.concat([X] * (1 + d * N_REPEATS), ignore_index=True)
    cases = [("HGB regressor, r2", reg, signal.to_numpy(), "r2", reg.predict),
             ("HGB classifier, neg_log_loss", clf, (signal > 0).to_numpy(), "neg_log_loss",
              clf.predict_proba)]
    print(f"n = {n:,} rows, d = {d}, n_repeats = {N_REPEATS}: "
          f"{len(rows):,} model rows per response column")
    for name, model, y, scoring, response in cases:
        best = {"modellens": np.inf, "sklearn": np.inf, "model rows": np.inf}
        for _ in range(3):  # interleaved, best of three
            t, ours = _timed(lambda: ml.importance(model, X, y, scoring=scoring,
                                                   n_repeats=N_REPEATS, random_state=0))
            best["modellens"] = min(best["modellens"], t)
            t, ref = _timed(lambda: permutation_importance(model, X, y, scoring=scoring,
                                                           n_repeats=N_REPEATS, random_state=0))
            best["sklearn"] = min(best["sklearn"], t)
            t, _ = _timed(lambda: response(rows))
            best["model rows"] = min(best["model rows"], t)
        assert np.allclose(ours.importances, ref.importances, rtol=0, atol=1e-12)
        print(f"{name:32s} modellens {best['modellens']:6.2f} s   sklearn {best['sklearn']:6.2f} s"
              f"   model rows {best['model rows']:6.2f} s   "
              f"(x{best['modellens'] / best['model rows']:.2f} of the model's own time)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
