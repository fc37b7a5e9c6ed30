"""Sampled Shapley values at a budget: error per model evaluation, the stopping rule, coverage.

Issue 31.  On the same games, rows and seeds, for every estimator:

1. **Error against model evaluations**: ``||phi_hat - phi||^2 / ||phi||^2``
   (Musco & Witter's measure), the median over explained rows and seeds, at
   4d, 8d, 16d, 32d and 64d coalitions per row (a coalition is one value
   ``v(S)``, the mean prediction over the background rows; every estimator
   gets the same background, so the same game).  Contenders: modellens'
   KernelSHAP (the default sampling estimator; with its cross-fitted cubic
   proxy once each half of a row's sampled pairs holds d of them) and
   permutation sampling;
   shap's KernelExplainer (``l1_reg=False``: no feature selection, which would
   bias the values) and PermutationExplainer; every Shapley-value approximator
   of the installed shapiq (KernelSHAP, kADD-SHAP, UnbiasedKernelSHAP, SVARM,
   permutation, Owen and stratified sampling, SPEX and ProxySPEX with index
   "SV"; and its KernelSHAP with paired, size-uniform sampling: Leverage
   SHAP's sampling law).  SPEX and ProxySPEX take 10-20 s per row at 64d on
   12 features: ``--estimators`` picks a subset; a budget an approximator
   refuses is listed with its reason under "refusals".
2. **The stopping rule**: the coalitions ``tol=0.02`` used per row (KernelSHAP
   with its proxy pooled over ten folds) against the fixed budget that reaches
   the same median error.
3. **Coverage**: how often the 95% intervals of ``confidence_interval()``
   contain the exact values, per estimator and budget (NaN intervals, refused
   below the budget where errors can be estimated, are counted apart).

Games: a linear model with correlated features (additive: both estimators
are exact on it, a check), an MLP, a gradient-boosting model and a function
with strong 3- and 4-way interactions, each on 8 to 16 correlated features;
exact values by enumerating every coalition.  Run
``python benchmarks/bench_shapley_frontier.py [--quick] [--seeds 10] [--d 8 12 16]``;
``--quick`` is one small size in about a minute.  Numbers are medians of
random errors: they move a little from machine to machine only through
floating point, never through timing.
"""

from __future__ import annotations

import argparse
import time
import warnings
from itertools import product
from math import comb

import numpy as np
import pandas as pd

import modellens as ml

MULTIPLES = (4, 8, 16, 32, 64)


# ------------------------------------------------------------------ games
def correlated(n, d, rho, rng):
    cov = np.full((d, d), rho) + (1 - rho) * np.eye(d)
    return rng.multivariate_normal(np.zeros(d), cov, size=n)


def interacting(A):
    return (np.tanh(A @ np.linspace(1, 2, A.shape[1]) / 3) * 3 + A[:, 0] * A[:, 1] * A[:, 2]
            + np.maximum(A[:, 3:6].sum(axis=1), 0) ** 2 + np.sin(A[:, 6] * A[:, 7] * A[:, 1]))


def make_games(d, seed=0):
    """``{name: predict}`` and the data they are explained on."""
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.neural_network import MLPRegressor

    rng = np.random.default_rng(seed)
    X = correlated(3000, d, 0.6, rng)
    y = interacting(X) + 0.1 * rng.normal(size=len(X))
    beta = rng.normal(size=d)
    mlp = MLPRegressor(hidden_layer_sizes=(32, 32), max_iter=400, random_state=0)
    gbr = GradientBoostingRegressor(n_estimators=100, max_depth=4, random_state=0)
    games = {"linear": lambda A: A @ beta,
             "mlp": mlp.fit(X[:2000], y[:2000]).predict,
             "gbr": gbr.fit(X[:2000], y[:2000]).predict,
             "interactions": interacting}
    return games, X[2000:]


def value_function(f, x, bg):
    """``v(masks) -> (k,)``: the interventional game of row ``x`` (counts its coalitions)."""
    def v(masks):
        masks = np.atleast_2d(np.asarray(masks, dtype=bool))  # shapiq asks for one at times
        v.calls += len(masks)
        rows = np.where(masks[:, None, :], x, bg[None])
        return f(rows.reshape(-1, len(x))).reshape(len(masks), len(bg)).mean(axis=1)
    v.calls = 0
    return v


def exact(f, x, bg):
    """Exact Shapley values of one row by all ``2**d`` coalitions."""
    d = len(x)
    masks = np.array(list(product([False, True], repeat=d)))
    v = value_function(f, x, bg)(masks)
    code = masks @ (1 << np.arange(d))
    worth = np.empty(2 ** d)
    worth[code] = v
    size = masks.sum(axis=1)
    phi = np.zeros(d)
    for j in range(d):
        out = ~masks[:, j]
        with_j = code[out] | (1 << j)
        w = 1.0 / (d * np.array([comb(d - 1, s) for s in size[out]]))
        phi[j] = np.sum(w * (worth[with_j] - worth[code[out]]))
    return phi


# ------------------------------------------------------------------ contenders
def ours(algorithm):
    def run(f, rows, bg, budget, seed):
        d = rows.shape[1]
        kw = dict(n_samples=max(2, budget - 2)) if algorithm == "kernel" else \
            dict(n_permutations=max(2, 2 * round((budget - 2) / (4 * (d - 1)))))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = ml.shapley(f, rows, background=bg, algorithm=algorithm, random_state=seed, **kw)
        lo, hi = a.confidence_interval(0.95)
        return a.values, (lo, hi), np.asarray(a.diagnostics["n_coalitions"]) + 2
    return run


def shap_kernel(f, rows, bg, budget, seed):
    import shap

    np.random.seed(seed)  # shap's KernelExplainer draws from numpy's global state
    explainer = shap.KernelExplainer(f, bg, silent=True)
    values = explainer.shap_values(rows, nsamples=budget, l1_reg=False, silent=True)
    return np.asarray(values), None, np.full(len(rows), budget)


def shap_permutation(f, rows, bg, budget, seed):
    import shap

    masker = shap.maskers.Independent(bg, max_samples=len(bg))
    explainer = shap.PermutationExplainer(f, masker, seed=seed)
    values = explainer(rows, max_evals=max(budget, 2 * rows.shape[1] + 1), silent=True).values
    return np.asarray(values), None, np.full(len(rows), budget)


def shapiq_approximator(kind, **options):
    def run(f, rows, bg, budget, seed):
        import shapiq.approximator as sa

        d = rows.shape[1]
        out = np.empty(rows.shape)
        for i, x in enumerate(rows):
            opts = dict(options)
            if opts.pop("leverage", False):  # Leverage SHAP's law: every size alike, paired
                w = np.ones(d + 1)
                w[0] = w[-1] = 1e4  # the ends are always in (shapiq's border trick)
                opts.update(pairing_trick=True, sampling_weights=w)
            approx = getattr(sa, kind)(n=d, random_state=seed + 1000 * i, **opts)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = approx.approximate(budget, value_function(f, x, bg))
            out[i] = [res[(j,)] for j in range(d)]
        return out, None, np.full(len(rows), budget)
    return run


CONTENDERS = {
    "modellens kernel": ours("kernel"),
    "modellens permutation": ours("permutation"),
    "shap KernelExplainer": shap_kernel,
    "shap PermutationExplainer": shap_permutation,
    "shapiq KernelSHAP": shapiq_approximator("KernelSHAP"),
    "shapiq KernelSHAP leverage": shapiq_approximator("KernelSHAP", leverage=True),
    "shapiq kADDSHAP": shapiq_approximator("kADDSHAP", max_order=2),
    "shapiq UnbiasedKernelSHAP": shapiq_approximator("UnbiasedKernelSHAP"),
    "shapiq SVARM": shapiq_approximator("SVARM"),
    "shapiq PermutationSamplingSV": shapiq_approximator("PermutationSamplingSV"),
    "shapiq OwenSamplingSV": shapiq_approximator("OwenSamplingSV"),
    "shapiq StratifiedSamplingSV": shapiq_approximator("StratifiedSamplingSV"),
    "shapiq SPEX": shapiq_approximator("SPEX", index="SV", max_order=1),
    "shapiq ProxySPEX": shapiq_approximator("ProxySPEX", index="SV", max_order=1),
}


def relative_error(values, phi):
    return np.sum((values - phi) ** 2, axis=1) / np.sum(phi ** 2, axis=1)


def frontier(games, data, d, n_rows, m, seeds, names):
    """Rows of (game, estimator, budget, median error, coverage, intervals)."""
    rows, bg = data[:n_rows], data[-m:]
    out = []
    for game, f in games.items():
        phi = np.array([exact(f, x, bg) for x in rows])
        for mult in MULTIPLES:
            budget = mult * d
            for name in names:
                errs, hits, checks, refused = [], 0, 0, 0
                try:
                    for seed in range(seeds):
                        values, ci, _ = CONTENDERS[name](f, rows, bg, budget, seed)
                        errs.append(relative_error(values, phi))
                        if ci is not None:
                            lo, hi = ci
                            ok = np.isfinite(lo)
                            slack = 1e-9 * (1 + np.abs(phi))
                            hits += int(((lo - slack <= phi) & (phi <= hi + slack))[ok].sum())
                            checks += int(ok.sum())
                            refused += int((~ok).sum())
                except Exception as exc:  # a peer that refuses a budget says why
                    out.append(dict(game=game, d=d, estimator=name, budget=f"{mult}d",
                                    error=np.nan, coverage=np.nan, note=str(exc)[:60]))
                    continue
                out.append(dict(game=game, d=d, estimator=name, budget=f"{mult}d",
                                error=float(np.median(np.concatenate(errs))),
                                coverage=hits / checks if checks else np.nan,
                                intervals=checks, refused=refused, note=""))
    return pd.DataFrame(out)


def stopping(games, data, d, n_rows, m, seeds, tol=0.02):
    """Coalitions per row tol= used, against the fixed budget with the same median error."""
    rows, bg = data[:n_rows], data[-m:]
    out = []
    for game, f in games.items():
        if game == "linear":
            continue  # exact at any budget
        phi = np.array([exact(f, x, bg) for x in rows])
        errs, used = [], []
        for seed in range(seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                a = ml.shapley(f, rows, background=bg, algorithm="kernel", tol=tol,
                               max_evals=64 * d, random_state=seed)
            errs.append(relative_error(a.values, phi))
            used.append(np.asarray(a.diagnostics["n_coalitions"]) + 2)
        target = float(np.median(np.concatenate(errs)))
        # the smallest fixed budget (on a grid of 2d steps) whose median error is as small
        fixed = None
        for budget in range(4 * d, 129 * d, 2 * d):
            e = [relative_error(ours("kernel")(f, rows, bg, budget, s)[0], phi)
                 for s in range(seeds)]
            if np.median(np.concatenate(e)) <= target:
                fixed = budget
                break
        out.append(dict(game=game, d=d, tol=tol, error=target,
                        coalitions_mean=float(np.mean(used)),
                        coalitions_max=int(np.max(used)),
                        converged=float(np.mean([u < 64 * d for u in used])),
                        fixed_budget_same_error=fixed))
    return pd.DataFrame(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="d=8, 2 games, 3 seeds")
    parser.add_argument("--d", type=int, nargs="+", default=[8, 12, 16])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--rows", type=int, default=10, help="explained rows per game")
    parser.add_argument("--background", type=int, default=20)
    parser.add_argument("--estimators", nargs="+", default=list(CONTENDERS))
    args = parser.parse_args(argv)
    sizes, seeds, n_rows = args.d, args.seeds, args.rows
    keep = None
    if args.quick:
        sizes, seeds, n_rows, keep = [8], 3, 4, ("mlp", "interactions")
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
    tables, stops = [], []
    for d in sizes:
        t0 = time.perf_counter()
        games, data = make_games(d)
        if keep:
            games = {k: games[k] for k in keep}
        tables.append(frontier(games, data, d, n_rows, args.background, seeds, args.estimators))
        stops.append(stopping(games, data, d, n_rows, args.background, seeds))
        print(f"# d={d}: {time.perf_counter() - t0:.0f} s", flush=True)
    table = pd.concat(tables, ignore_index=True)
    print("\n## median ||phi_hat - phi||^2 / ||phi||^2 by coalitions per row\n")
    print(table.pivot_table(index=["d", "game", "estimator"], columns="budget", values="error",
                            sort=False).to_string(float_format=lambda x: f"{x:.2e}"))
    print("\n## coverage of the 95% intervals (modellens), by budget\n")
    cov = table[table.estimator.str.startswith("modellens")]
    print(cov.pivot_table(index=["estimator", "d", "game"], columns="budget",
                          values="coverage", sort=False).to_string(float_format="{:.3f}".format))
    print("\n## coverage per estimator and budget, all games and sizes pooled "
          "(refused: NaN intervals, where no standard error is given; a budget that\n"
          "## enumerates every coalition gives zero-width intervals around exact values)\n")
    pooled = cov.assign(hits=cov.coverage.fillna(0) * cov.intervals).groupby(
        ["estimator", "budget"], sort=False)[["hits", "intervals", "refused"]].sum()
    pooled["coverage"] = pooled.hits / pooled.intervals
    print(pooled[["coverage", "intervals", "refused"]].to_string(float_format="{:.3f}".format))
    print("\n## the stopping rule (KernelSHAP, tol=0.02) against a fixed budget\n")
    print(pd.concat(stops, ignore_index=True).to_string(float_format=lambda x: f"{x:.3g}"))
    notes = table[table.note != ""]
    if len(notes):
        print("\n## refusals\n")
        print(notes[["d", "game", "estimator", "budget", "note"]].to_string())


if __name__ == "__main__":
    main()
