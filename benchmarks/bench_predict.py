"""``ml.predict`` against the model-row limit: the model's own call on the same rows.

    PYTHONPATH=src python benchmarks/bench_predict.py [n_rows]

The explained output of every row costs one model row per row, so the floor is
the model's own ``predict_proba`` / ``predict`` on ``X``.  Prints both times and
their ratio for a HistGradientBoosting classifier on a numeric frame, a Pipeline
with one-hot text columns, and a cheap callable (where library overhead shows
most).  There is no peer: shap, lime and PyALE do not give this output alone.
"""

import sys

import numpy as np
import pandas as pd
from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

import modellens as ml

from bench_pdp import best_of  # run from benchmarks/ or as a script: its folder is on the path


def main(n=1_000_000):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(n, 10)), columns=[f"x{j}" for j in range(10)])
    y = (X.x0 + X.x1 * X.x2 > 0).to_numpy()
    hgb = HistGradientBoostingClassifier(max_iter=50, random_state=0).fit(X[:50_000], y[:50_000])
    T = X.assign(colour=rng.choice(["red", "green", "blue"], n),
                 size=rng.choice(["S", "M", "L", "XL"], n))
    pipe = make_pipeline(make_column_transformer(
        (OneHotEncoder(), ["colour", "size"]), remainder="passthrough"),
        LogisticRegression(max_iter=200)).fit(T[:50_000], y[:50_000])
    w = rng.normal(size=10)
    cases = [("HGB classifier", hgb, X, lambda: hgb.predict_proba(X)[:, 1]),
             ("Pipeline, one-hot text", pipe, T, lambda: pipe.predict_proba(T)[:, 1]),
             ("callable X @ w", lambda A: A @ w, X.to_numpy(), lambda: X.to_numpy() @ w)]
    print(f"{n:,} rows")
    for name, model, data, own in cases:
        floor = best_of(own, 3)
        ours = best_of(lambda: ml.predict(model, data, progress=False), 3)
        np.testing.assert_allclose(ml.predict(model, data, progress=False), own(), atol=1e-12)
        print(f"{name:24s} model {floor:7.3f} s   ml.predict {ours:7.3f} s   "
              f"ratio {ours / floor:5.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
