"""Prototype: which law over coalition sizes should KernelSHAP's sampled pairs follow?

Research script for the ``sizelaw`` lane (no change under src/).  modellens'
KernelSHAP (attribution/kernel.py) enumerates the border sizes chosen by
``split_sizes`` and samples the remaining sizes in complementary pairs, a size
``s`` with probability ``p(s)`` proportional to the Shapley kernel's size mass
``mu(s)``.  Here the sampled sizes follow another law ``q`` instead, and every
draw carries the importance weight ``r(s) = p(s) / q(s)``, so that the
expected weight of each coalition stays its Shapley-kernel weight (the
regression still targets the Shapley values) and the delta-method standard
errors of ``_standard_error`` see the weighted draws.  Laws:

- ``kernel``: ``q = p`` (today; ``r = 1``),
- ``uniform``: every sampled size alike (Leverage SHAP's law: the leverage
  scores of the kernel regression are equal within and across sizes),
- ``mix``: ``q = (p + uniform) / 2``,
- ``sqrt``: ``q`` proportional to ``sqrt(mu)``.

The estimators are patched in ``modellens.attribution.shapley`` (subclasses of
``KernelEstimator`` / ``ProxyKernelEstimator`` whose ``_p`` is the law and whose
fits weigh each draw by ``r``); everything else (enumeration, pairing, the
cross-fitted cubic proxy, the stopping rule) is unchanged.

Measured (seeded errors, not timings: load does not matter):

- ``leverage``: median ``||phi_hat - phi||^2 / ||phi||^2`` on the games of
  ``bench_leverage_protocol.py`` (xgboost, one baseline row, shap TreeSHAP's
  exact values) at ``m = 8d`` and ``10d``;
- ``frontier``: ``bench_shapley_frontier.py``'s d = 12 games (mlp, gbr,
  interactions; background of 20 rows) at 4d .. 64d.  Each explained row's
  game is enumerated once (2**12 coalitions) and served from a table, so the
  estimators see exactly the frontier benchmark's games at a fraction of the
  cost;
  it also prints the coverage of the 95% intervals per law and budget
  (every row, seed, game and feature pooled: 1,800 intervals each).

Variants: a law name followed by ``+plain`` (no cubic proxy), ``+noenum`` (no
enumerated border sizes) or ``+levenum`` (the uniform law's own enumeration
rule, ``_uniform_law_enumeration``).  ``proto_size_law.patch`` (next to this
script; against ``lead`` at c4d49d5: rmc's pooled proxy, null players) is the change to
src/ the results recommend (the uniform law with
importance weights, the enumeration rule unchanged); on the src this script was written
against (``lead`` at f621288, the proxy by halves) its ``--laws uniform``
gives the patched estimator's numbers exactly (values and standard errors).
Its ``LawProxyKernel`` re-implements that older ``_proxy.py`` estimate; on a
newer src, use ``+plain`` variants or the patch.

Run::

    python benchmarks/proto_size_law.py leverage --runs 30
    python benchmarks/proto_size_law.py frontier --seeds 5
    python benchmarks/proto_size_law.py leverage --runs 50 --datasets Correlated Independent \
        --multiples 8 10 20 --laws kernel uniform uniform+levenum uniform+plain+levenum
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd

import modellens as ml
import modellens.attribution.shapley  # noqa: F401  (the module; the package re-exports the function)
from modellens.attribution._games import Estimate
from modellens.attribution._proxy import MAX_PROXY_PAIRS, MIN_PAIRS_PER_FEATURE, \
    ProxyKernelEstimator, _CubicProxy
from modellens.attribution.kernel import KernelEstimator, constrained_fit

_shapley_module = sys.modules["modellens.attribution.shapley"]
_kernel_module = sys.modules["modellens.attribution.kernel"]
_split_sizes = _kernel_module.split_sizes

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

LAWS = ("kernel", "uniform", "mix", "sqrt")


def size_law(name, mu_sampled):
    """``q`` over the sampled sizes (symmetric, since ``mu`` and the sampled sizes are)."""
    p = mu_sampled / mu_sampled.sum()
    u = np.full(len(p), 1.0 / len(p))
    if name == "kernel":
        return p
    if name == "uniform":
        return u
    if name == "mix":
        return 0.5 * (p + u)
    if name == "sqrt":
        s = np.sqrt(mu_sampled)
        return s / s.sum()
    raise ValueError(name)


# ------------------------------------------------------------------ the patched estimators
class LawMixin:
    """``_p`` follows ``LAW``; ``_ratio(sizes)`` the importance weights ``p / q``."""

    LAW = "kernel"

    @property
    def _p(self):
        if not self.sampled_sizes:
            return None
        return size_law(self.LAW, self._mu[np.asarray(self.sampled_sizes) - 1])

    @_p.setter
    def _p(self, value):  # KernelEstimator.__init__ assigns the kernel's law: ignored
        pass

    def _ratio(self, sizes):
        sampled = np.asarray(self.sampled_sizes)
        mu = self._mu[sampled - 1]
        r = (mu / mu.sum()) / self._p
        lookup = np.zeros(self.d + 1)
        lookup[sampled] = r
        return lookup[np.asarray(sizes)]

    # kernel.py's estimate with every draw weighted by r(s)
    def _plain_estimate(self, game) -> Estimate:
        v0, fx = game.ends()
        self._absorb()
        n, d = self.n, self.d
        delta = fx - v0
        A0 = np.zeros((d, d))
        b0 = np.zeros((n, d))
        if self._enum is not None:
            Z = self.enum_masks.astype(np.float64)
            wZ = Z * self.enum_weights[:, None]
            A0 = wZ.T @ Z
            b0 = (self._enum.result.reshape(n, -1) - v0) @ wZ
        values = np.empty((n, d))
        std = np.zeros((n, d))
        from math import comb
        for i in range(n):
            A, b = A0, b0[i]
            sampled = len(self.pairs[i]) > 0
            if sampled:
                pairs = self.pairs[i]
                Z = np.concatenate([pairs, ~pairs]).astype(np.float64)
                yy = np.concatenate(self._y[i])
                y = np.concatenate([yy[:, 0], yy[:, 1]]) - v0
                counts, n_draws = self.counts[i], self.n_draws[i]
                rr = self._ratio(pairs.sum(axis=1))
                w = self.w_sampled * np.concatenate([counts * rr, counts * rr]) / (2.0 * n_draws)
                if len(pairs) >= self.capacity:
                    size = Z.sum(axis=1).astype(int)
                    w = self._mu[size - 1] / np.array([comb(self.d, k) for k in size])
                    sampled = False
                wZ = Z * w[:, None]
                A = A + wZ.T @ Z
                b = b + y @ wZ
            values[i], C = constrained_fit(A, b, delta[i])
            if sampled:
                std[i] = self._se(Z, y, values[i], counts, n_draws, C, rr)
        return Estimate(values, std, v0, fx)

    def _se(self, Z, y, phi, counts, n_draws, C, rr):
        """kernel.py's ``_standard_error`` with draw ``t``'s ``g_t`` scaled by ``r(s_t)``."""
        L = len(counts)
        pair = Z[:L] > 0
        canonical = np.where(pair[:, :1], ~pair, pair)
        if n_draws < 2 or len(np.unique(canonical, axis=0)) < len(phi):
            return np.full(len(phi), np.nan)
        r = y - Z @ phi
        scale = 0.5 * self.w_sampled * rr
        g = scale[:, None] * (Z[:L] * r[:L, None] + Z[L:] * r[L:, None])
        u = g @ C
        leverage = scale / n_draws * (
            np.einsum("ij,jk,ik->i", Z[:L], C, Z[:L]) + np.einsum("ij,jk,ik->i", Z[L:], C, Z[L:]))
        u = u / np.maximum(1.0 - leverage, 0.05)[:, None]
        dev = u - counts @ u / n_draws
        var = counts @ dev ** 2 / (n_draws - 1) / n_draws
        return np.sqrt(var)


class LawKernel(LawMixin, KernelEstimator):
    def estimate(self, game):
        return self._plain_estimate(game)


class LawProxyKernel(LawMixin, ProxyKernelEstimator):
    """_proxy.py's estimate with the proxy fit and the residual fits weighted by r(s)."""

    def estimate(self, game) -> Estimate:
        plain = self._plain_estimate(game)
        v0, fx = game.ends()
        n, d = self.n, self.d
        delta = fx - v0
        values = plain.values.copy()
        std = np.zeros_like(values) if plain.std is None else plain.std.copy()
        self.proxy_rows = np.zeros(n, dtype=bool)
        enum_y = np.zeros((n, 0))
        canon_e = None
        if self._enum is not None:
            enum_y = self._enum.result.reshape(n, -1) - v0
            Z = self.enum_masks
            canon_e = np.flatnonzero(~Z[:, 0])
            codes = {Z[k].tobytes(): k for k in range(len(Z))}
            comp_e = np.array([codes[(~Z[k]).tobytes()] for k in canon_e], dtype=np.int64)
        for i in range(n):
            L = len(self.pairs[i])
            if L >= self.capacity or L < 2 * MIN_PAIRS_PER_FEATURE * d:
                continue
            pairs, counts = self.pairs[i], self.counts[i]
            rr = self._ratio(pairs.sum(axis=1))
            yy = np.concatenate(self._y[i]) - v0
            half = np.arange(L) % 2
            parts = []
            for a in (0, 1):
                fit, use = half == a, half != a
                S, diff = pairs[fit], yy[fit, 0] - yy[fit, 1]
                w = self.w_sampled * counts[fit] * rr[fit] / (2.0 * counts[fit].sum())
                if canon_e is not None and len(canon_e):
                    S = np.concatenate([self.enum_masks[canon_e], S])
                    diff = np.concatenate([enum_y[i, canon_e] - enum_y[i, comp_e], diff])
                    w = np.concatenate([self.enum_weights[canon_e], w])
                keep = slice(None) if len(S) <= MAX_PROXY_PAIRS else np.concatenate(
                    [np.arange(len(S) - fit.sum(), len(S)),
                     np.arange(len(S) - fit.sum())])[:MAX_PROXY_PAIRS]
                S, diff, w = S[keep], diff[keep], w[keep]
                proxy = _CubicProxy(S, diff, w)
                parts.append(self._law_residual_fit(i, proxy, use, yy, enum_y, delta[i], rr))
            self.proxy_rows[i] = True
            values[i] = 0.5 * (parts[0][0] + parts[1][0])
            std[i] = 0.5 * np.sqrt(parts[0][1] ** 2 + parts[1][1] ** 2)
        return Estimate(values, std, v0, fx)

    def _law_residual_fit(self, i, proxy, use, yy, enum_y, delta, rr_all):
        d = self.d
        A = np.zeros((d, d))
        b = np.zeros(d)
        if self._enum is not None:
            Z = self.enum_masks.astype(np.float64)
            wZ = Z * self.enum_weights[:, None]
            A = wZ.T @ Z
            b = (enum_y[i] - proxy(self.enum_masks)) @ wZ
        pairs, counts, rr = self.pairs[i][use], self.counts[i][use], rr_all[use]
        n_draws = int(counts.sum())
        Zb = np.concatenate([pairs, ~pairs])
        Z = Zb.astype(np.float64)
        y = np.concatenate([yy[use, 0], yy[use, 1]]) - proxy(Zb)
        w = self.w_sampled * np.concatenate([counts * rr, counts * rr]) / (2.0 * n_draws)
        wZ = Z * w[:, None]
        A = A + wZ.T @ Z
        b = b + y @ wZ
        phi, C = constrained_fit(A, b, delta - proxy.total)
        se = self._se(Z, y, phi, counts, n_draws, C, rr)
        return phi + proxy.shapley, se


def _no_border_enumeration(d, budget):
    """split_sizes without the enumerated border sizes (unless the budget covers all)."""
    from math import comb

    enumerated, sampled, n_complementary = _split_sizes(d, budget)
    if not sampled:
        return enumerated, sampled, n_complementary
    sizes = list(range(1, d))
    capacity = sum(comb(d, s) for s in sizes) // 2
    return [], sizes, int(min(budget // 2, capacity))


def _uniform_law_enumeration(d, budget):
    """split_sizes with the enumeration rule of the uniform size law.

    With the pairs' sizes drawn uniformly from the ``k`` sampled sizes (each
    weighted ``p / q``), the squared error of the fit scales as ``k**2 / R``
    (``R`` coalitions left to sample) when the residual variance of a size
    grows as ``s (d - s)`` (the model under which the uniform law is the
    optimal one: the error is ``sum_s mu_s sigma_s**2 / q_s`` over ``R``,
    optimal at ``q_s ~ sqrt(mu_s) sigma_s``).  A border group is enumerated
    when that lowers ``k**2 / R``, smallest sizes first, as split_sizes does
    with ``W**2 / R`` for the kernel's law."""
    from math import comb

    groups = [(s,) if 2 * s == d else (s, d - s) for s in range(1, d // 2 + 1)]
    left, k = budget, d - 1
    enumerated = []
    for g, group in enumerate(groups):
        count = sum(comb(d, s) for s in group)
        rest = sum(comb(d, s) for h in groups[g:] for s in h)
        if left >= rest:
            enumerated += [s for h in groups[g:] for s in h]
            left -= rest
            break
        if count >= left or (k - len(group)) ** 2 / (left - count) > k ** 2 / left:
            break
        enumerated += group
        left -= count
        k -= len(group)
    sampled = [s for s in range(1, d) if s not in enumerated]
    if not sampled:
        return sorted(enumerated), [], 0
    capacity = sum(comb(d, s) for s in sampled) // 2
    return sorted(enumerated), sampled, int(min(left // 2, capacity))


@contextlib.contextmanager
def law(spec):
    """ml.shapley(..., algorithm="kernel") samples its pairs by the size law of ``spec``.

    ``spec`` is a law name (``LAWS``), optionally followed by ``+plain`` (no cubic
    proxy: plain KernelSHAP at every budget), ``+noenum`` (no enumerated border
    sizes: every size sampled) or ``+levenum`` (the enumeration rule of the uniform
    law, ``_uniform_law_enumeration``)."""
    name, *flags = spec.split("+")
    kernel = type(f"Kernel_{name}", (LawKernel,), {"LAW": name})
    proxy = kernel if "plain" in flags else type(f"Proxy_{name}", (LawProxyKernel,),
                                                  {"LAW": name})
    saved = _shapley_module.KernelEstimator, _shapley_module.ProxyKernelEstimator
    _shapley_module.KernelEstimator, _shapley_module.ProxyKernelEstimator = kernel, proxy
    if "noenum" in flags:
        _kernel_module.split_sizes = _no_border_enumeration
    if "levenum" in flags:
        _kernel_module.split_sizes = _uniform_law_enumeration
    try:
        yield
    finally:
        _shapley_module.KernelEstimator, _shapley_module.ProxyKernelEstimator = saved
        _kernel_module.split_sizes = _split_sizes


def rel_error(values, phi):
    values, phi = np.atleast_2d(values), np.atleast_2d(phi)
    return np.sum((values - phi) ** 2, axis=1) / np.sum(phi ** 2, axis=1)


# ------------------------------------------------------------------ (a) Leverage SHAP's games
def leverage(args):
    import xgboost as xgb
    import bench_leverage_protocol as blp

    out = []
    for name in args.datasets:
        t0 = time.perf_counter()
        X, y = blp.load_dataset(name)
        d = X.shape[1]
        model = xgb.XGBRegressor(n_estimators=100, max_depth=4)
        model.fit(X, y)
        for run in range(args.runs):
            seed = 100 * run
            baseline, x = blp.explained_point(X, seed)
            phi = blp.exact_values(model, baseline, x)
            for k in args.multiples:
                for lw in args.laws:
                    with law(lw), warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        a = ml.shapley(model.predict, x, background=baseline, algorithm="kernel",
                                       n_samples=k * d - 2, random_state=seed)
                    out.append(dict(dataset=name, d=d, m=f"{k}d", law=lw, run=run,
                                    error=float(rel_error(a.values.reshape(-1), phi)[0])))
        print(f"# {name}: {time.perf_counter() - t0:.0f} s", flush=True)
    table = pd.DataFrame(out)
    med = table.pivot_table(index=["dataset", "d", "m"], columns="law", values="error",
                            aggfunc="median", sort=False)[list(args.laws)]
    print(f"\n## median ||phi_hat - phi||^2 / ||phi||^2 over {args.runs} runs\n")
    print(med.to_string(float_format="{:.3g}".format))
    base = table[table.law == "kernel"].set_index(["dataset", "m", "run"]).error
    paired = table.assign(ratio=table.error.values / base.reindex(
        pd.MultiIndex.from_frame(table[["dataset", "m", "run"]])).values)
    print("\n## median per-run ratio law / kernel (paired, same rows and seeds)\n")
    print(paired.pivot_table(index=["dataset", "m"], columns="law", values="ratio",
                             aggfunc="median", sort=False)[list(args.laws)]
          .to_string(float_format="{:.3g}".format))
    return table


# ------------------------------------------------------------------ (b) the frontier's d = 12 games
def tabled_games(d, n_rows, n_background, names):
    """Each explained row's game, all 2**d coalitions, served by a lookup model.

    Row ``i`` is the point ``(i + 1, ..., i + 1)`` explained against the one
    background row ``0``: ``f`` reads the row index from the nonzero entries
    and the coalition from where they are, and returns the frontier game's
    ``v(S)`` (the mean over its 20 background rows)."""
    from itertools import product
    from math import comb
    from bench_shapley_frontier import make_games, value_function

    games, data = make_games(d)
    rows, bg = data[:n_rows], data[-n_background:]
    masks = np.array(list(product([False, True], repeat=d)))
    code = masks @ (1 << np.arange(d))
    size = masks.sum(axis=1)
    out = {}
    for name in names:
        f = games[name]
        table = np.empty((n_rows, 2 ** d))
        phi = np.zeros((n_rows, d))
        for i, x in enumerate(rows):
            table[i, code] = value_function(f, x, bg)(masks)
            for j in range(d):
                o = ~masks[:, j]
                w = 1.0 / (d * np.array([comb(d - 1, s) for s in size[o]]))
                phi[i, j] = np.sum(w * (table[i, code[o] | (1 << j)] - table[i, code[o]]))

        def lookup(A, table=table):
            A = np.asarray(A, dtype=float)
            idx = np.maximum(A.max(axis=1).astype(int) - 1, 0)
            return table[idx, (A > 0) @ (1 << np.arange(A.shape[1]))]
        points = np.repeat(np.arange(1, n_rows + 1, dtype=float)[:, None], d, axis=1)
        out[name] = (lookup, points, phi)
    return out


def frontier(args):
    games = tabled_games(args.d, args.rows, 20, args.games)
    out = []
    t0 = time.perf_counter()
    for name, (f, points, phi) in games.items():
        for k in args.budgets:
            for lw in args.laws:
                for seed in range(args.seeds):
                    with law(lw), warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        a = ml.shapley(f, points, background=np.zeros((1, args.d)),
                                       algorithm="kernel", n_samples=k * args.d - 2,
                                       random_state=seed)
                    lo, hi = a.confidence_interval(0.95)
                    inside = (lo <= phi) & (phi <= hi)
                    valid = np.isfinite(lo) & np.isfinite(hi)
                    out += [dict(game=name, budget=f"{k}d", law=lw, seed=seed, row=i, error=e,
                                 hits=int(inside[i][valid[i]].sum()), intervals=int(valid[i].sum()))
                            for i, e in enumerate(rel_error(a.values, phi))]
        print(f"# {name}: {time.perf_counter() - t0:.0f} s", flush=True)
    table = pd.DataFrame(out)
    print(f"\n## d = {args.d}: median ||phi_hat - phi||^2 / ||phi||^2 "
          f"({args.rows} rows x {args.seeds} seeds)\n")
    print(table.pivot_table(index=["game", "budget"], columns="law", values="error",
                            aggfunc="median", sort=False)[list(args.laws)]
          .to_string(float_format="{:.3g}".format))
    cov = table.groupby(["law", "budget"], sort=False)[["hits", "intervals"]].sum()
    cov["coverage"] = cov.hits / cov.intervals.replace(0, np.nan)
    print("\n## coverage of the 95% intervals, all games pooled\n")
    print(cov.unstack("budget")["coverage"][[f"{k}d" for k in args.budgets]]
          .to_string(float_format="{:.3f}".format))
    print(cov.unstack("budget")["intervals"][[f"{k}d" for k in args.budgets]].to_string())
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["leverage", "frontier"])
    parser.add_argument("--laws", nargs="+", default=list(LAWS),
                        help="law names, each optionally +plain and/or +noenum")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--datasets", nargs="+",
                        default=["Correlated", "Independent", "California", "Diabetes", "Adult"])
    parser.add_argument("--multiples", type=int, nargs="+", default=[8, 10])
    parser.add_argument("--d", type=int, default=12)
    parser.add_argument("--rows", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--games", nargs="+", default=["mlp", "gbr", "interactions"])
    parser.add_argument("--budgets", type=int, nargs="+", default=[4, 8, 16, 32, 64])
    parser.add_argument("--csv", help="write the per-run errors here")
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    pd.set_option("display.width", 200)
    with threadpool_limits(1):
        table = leverage(args) if args.what == "leverage" else frontier(args)
    if args.csv:
        table.to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
