"""Partial dependence: modellens vs the model-row limit and the peer libraries.

PD for all 10 features, n = 10,000 rows, 20 grid points, on a
HistGradientBoostingRegressor.  The limit is one ``predict`` call on the
n * G * d = 2,000,000 rows that every brute-force PD needs; we print each
library's time divided by it.  Then the peak memory of a PD over n = 1,000,000
rows with the default chunking.

Run on an otherwise idle machine:  python benchmarks/bench_pdp.py
Peers come from the ``bench`` extra (``pip install ".[bench]"``).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor

import modellens as ml


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def make_problem(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X[:, 0] ** 2 + np.sin(X[:, 1]) + X[:, 2] * X[:, 3] + rng.normal(scale=0.1, size=n)
    model = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X, y)
    return model, X


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--grid", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--big-n", type=int, default=1_000_000)
    parser.add_argument("--skip-peers", action="store_true")
    args = parser.parse_args()
    d, G, n = 10, args.grid, args.n
    model, X = make_problem(n, d)
    grids = [np.linspace(X[:, j].min(), X[:, j].max(), G) for j in range(d)]

    # the limit: one predict over every row the PD needs
    stacked = np.concatenate([np.repeat(X[None], G, axis=0).reshape(-1, d) for _ in range(d)])
    for j in range(d):
        block = stacked[j * n * G:(j + 1) * n * G].reshape(G, n, d)
        block[:, :, j] = grids[j][:, None]
    t_model = best_of(lambda: model.predict(stacked), args.repeat)
    del stacked
    print(f"PD, all {d} features, n={n}, grid={G}, HistGradientBoostingRegressor")
    print(f"  one predict on the n*G*d = {n * G * d:,} rows it needs: {t_model:.3f} s")

    t_ours = best_of(lambda: ml.pdp(model, X, grid=G), args.repeat)
    print(f"  modellens pdp:                     {t_ours:.3f} s   ratio {t_ours / t_model:.2f}")
    ours = ml.pdp(model, X, grid=G)

    if not args.skip_peers:
        from sklearn.inspection import partial_dependence

        def sk():
            return [partial_dependence(model, X, [j], method="brute", grid_resolution=G,
                                       percentiles=(0, 1)) for j in range(d)]

        t_sk = best_of(sk, args.repeat)
        ref = sk()
        err = max(np.max(np.abs(ref[j]["average"][0] - ours[j].values)) for j in range(d))
        print(f"  sklearn partial_dependence brute:  {t_sk:.3f} s   ratio {t_sk / t_model:.2f}"
              f"   (max |difference| to ours {err:.1e})")
        try:
            import effector
        except ImportError:
            print("  effector not installed (pip install '.[bench]')")
        else:
            def eff():
                pdp = effector.PDP(X, model.predict, nof_instances="all")
                return [pdp.eval(j, grids[j], centering=False) for j in range(d)]

            t_eff = best_of(eff, args.repeat)
            e_out = eff()
            err = max(np.max(np.abs(e_out[j] - ours[j].values)) for j in range(d))
            print(f"  effector PDP:                      {t_eff:.3f} s   ratio {t_eff / t_model:.2f}"
                  f"   (max |difference| to ours {err:.1e})")
            print(f"  modellens speed-up: {t_sk / t_ours:.1f}x vs sklearn, "
                  f"{t_eff / t_ours:.1f}x vs effector")

    # memory: n = 1,000,000 rows, one feature, default chunking
    big_model, big_X = model, np.random.default_rng(1).normal(size=(args.big_n, d))
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    t0 = time.perf_counter()
    ml.pdp(big_model, big_X, features=[0], grid=G, progress=False)
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rows = args.big_n * G
    print(f"PD of one feature over n={args.big_n:,} rows ({rows:,} model rows), default chunks:")
    print(f"  {elapsed:.1f} s, peak traced memory above the data: {(peak - base) / 2**20:.0f} MiB "
          f"(the data itself: {big_X.nbytes / 2**20:.0f} MiB; all rows at once would be "
          f"{rows * d * 8 / 2**20:,.0f} MiB)")


if __name__ == "__main__":
    main()
