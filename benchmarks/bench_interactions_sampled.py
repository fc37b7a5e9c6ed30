"""Sampled Shapley interaction values: error against coalitions, modellens against shapiq.

On the same games (an interventional game of one explained row against a
background: an MLP on 8 correlated features, a gradient-boosting model on 10
features, a function with strong three- and four-way interactions on 8
features) and the same budgets of coalition evaluations, compares the
pairwise Shapley interaction index (SII, order 2) of

* modellens' ``ml.shapley(..., interactions=True, algorithm="permutation")``
  (rounds of Walecki paths of paired orders; its budget is whole rounds, and
  the coalitions it used are what every peer gets; a budget whose distinct
  coalitions reach 7/8 of all of them is enumerated, marked "exact");
* shapiq's ``PermutationSamplingSII``, ``SVARMIQ``, ``KernelSHAPIQ`` and
  ``InconsistentKernelSHAPIQ`` (index ``"SII"``, order 2, the same budget).

The error is the relative squared error of the pairs' indices,
``||sii_hat - sii||^2 / ||sii||^2`` (Musco & Witter's measure), against the
exact index (modellens' exact enumeration, checked against shapiq's
``ExactComputer`` in ``tests/attribution/test_shapley_interactions_groups.py``);
the tables give the median over seeds.  It also reports the coverage of
modellens' 95% t intervals over the pairs and seeds.

Run: ``python benchmarks/bench_interactions_sampled.py [--quick]``.
No timing: the budget is the model evaluations, the same for every estimator.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from scipy.stats import t

import modellens as ml


def _data(d, seed, n=2000):
    rng = np.random.default_rng(seed)
    cov = 0.5 ** np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
    return rng.multivariate_normal(np.zeros(d), cov, size=n)


def games(quick):
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.neural_network import MLPRegressor

    out = []
    X = _data(8, 0)
    y = X[:, 0] * X[:, 1] + np.tanh(X[:, 2] * X[:, 3]) + X[:, 4] * X[:, 5] * X[:, 6] + X[:, 7]
    mlp = MLPRegressor(hidden_layer_sizes=(32, 32), max_iter=300 if quick else 800,
                       random_state=0).fit(X, y)
    out.append(("mlp-8", mlp.predict, X))
    X = _data(10, 1)
    y = X[:, 0] * X[:, 1] + np.where(X[:, 2] > 0, X[:, 3], -X[:, 4]) + X[:, 5] * X[:, 6] \
        + X[:, 7] + X[:, 8] * X[:, 9]
    gbm = GradientBoostingRegressor(n_estimators=100, max_depth=4, random_state=0).fit(X, y)
    out.append(("gbm-10", gbm.predict, X))
    X = _data(8, 2)

    def strong(A):
        return (A[:, 0] * A[:, 1] * A[:, 2] * A[:, 3] + np.sin(A[:, 4] * A[:, 5]) * A[:, 6]
                + A[:, 7] ** 2 * A[:, 0])

    out.append(("strong-8", strong, X))
    return out


def _pairs(d):
    return [(i, j) for i in range(d) for j in range(i + 1, d)]


def _game(model, x, B):
    def v(coalitions):
        coalitions = np.atleast_2d(np.asarray(coalitions, dtype=bool))
        rows = np.where(coalitions[:, None, :], x[None, None, :], B[None, :, :])
        return model(rows.reshape(-1, len(x))).reshape(len(coalitions), -1).mean(axis=1)

    return v


def main(quick=False):
    import shapiq

    seeds = range(5 if quick else 20)
    n_rows = 2 if quick else 4
    m = 30
    rounds_list = [1, 2, 4] if quick else [1, 2, 4, 8, 16]
    peers = {
        "PermutationSamplingSII": lambda d, s: shapiq.PermutationSamplingSII(
            d, max_order=2, index="SII", random_state=s),
        "SVARMIQ": lambda d, s: shapiq.SVARMIQ(d, max_order=2, index="SII", random_state=s),
        "KernelSHAPIQ": lambda d, s: shapiq.KernelSHAPIQ(d, max_order=2, index="SII",
                                                         random_state=s),
        "InconsistentKernelSHAPIQ": lambda d, s: shapiq.InconsistentKernelSHAPIQ(
            d, max_order=2, index="SII", random_state=s),
    }
    for name, model, X in games(quick):
        d = X.shape[1]
        dp = d + d % 2
        B = X[1000:1000 + m]
        pairs = _pairs(d)
        iu = tuple(np.array(pairs).T)
        print(f"\n## {name}: d={d}, {n_rows} rows x {len(seeds)} seeds, background {m} rows")
        print("| rounds | coalitions | modellens | " + " | ".join(peers) + " | coverage |")
        print("|---" * (4 + len(peers)) + "|")
        exact = ml.shapley(model, X[:n_rows], background=B, algorithm="exact",
                           interactions=True)
        truth = 2 * exact.interactions[:, iu[0], iu[1]]          # the SII of each pair
        for rounds in rounds_list:
            errs = {k: [] for k in ["modellens", *peers]}
            hits, budgets, exhaustive = [], [], False
            for seed in seeds:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ours = ml.shapley(model, X[:n_rows], background=B, algorithm="permutation",
                                      interactions=True, n_permutations=rounds * dp,
                                      random_state=seed)
                if ours.sampling is None:
                    # the budget reached 7/8 of every coalition: modellens enumerates them
                    exhaustive = True
                est = 2 * ours.interactions[:, iu[0], iu[1]]
                for r in range(n_rows):
                    ref = truth[r]
                    errs["modellens"].append(np.sum((est[r] - ref) ** 2) / np.sum(ref ** 2))
                    # the coalitions modellens evaluated for this row, ends included
                    budget = int(ours.diagnostics["n_coalitions"][r]) + 2
                    budgets.append(budget)
                    game = _game(model, X[r], B)
                    for peer, make in peers.items():
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            iv = make(d, seed).approximate(budget, game)
                        got = np.array([iv[p] for p in pairs])
                        errs[peer].append(np.sum((got - ref) ** 2) / np.sum(ref ** 2))
                if rounds >= 5 and ours.sampling is not None:
                    std = 2 * ours.sampling.interactions_std[:, iu[0], iu[1]]
                    q = t.ppf(0.975, ours.sampling.dof)[:, None]
                    moving = std > 1e-9
                    hits.append((np.abs(est - truth) <= q * std)[moving])
            cov = f"{np.mean(np.concatenate(hits)):.3f}" if hits else "-"
            row = [f"{np.median(errs[k]):.2e}" for k in errs]
            what = f"{rounds} (exact)" if exhaustive else str(rounds)
            print(f"| {what} | {int(np.median(budgets))} | " + " | ".join(row) + f" | {cov} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer seeds and budgets")
    main(**vars(parser.parse_args()))
