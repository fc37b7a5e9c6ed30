"""DALE vs ALE vs effector's RHALE on a small PyTorch MLP.

1. The efficiency experiment of the DALE paper (Gkolemis et al. 2022, the
   execution-time table on bike sharing), rebuilt: time to explain the first
   ``k`` features of a ``D = 100`` feature dataset (n = 50 000 rows, an MLP
   100 -> 256 -> 256 -> 1 with tanh), for ``k = 1..11`` and beyond up to 100.  DALE takes one gradient pass whatever ``k``; ALE
   evaluates ``2 n`` model rows per feature.  Target: DALE(k=100) <= 1.5 x
   DALE(k=1).
2. The same request side by side with effector's RHALE, both given the same
   Jacobian callable (torch autograd wrapped to numpy): fixed 20 bins
   (our quantile bins / effector's ``Fixed(20)``) and automatic bins (our
   ``bins="auto"`` / effector's default dynamic programming).  Target: at
   least 5x faster.  With the Jacobian callable both pay its pass, so that
   row bounds the speed-up by (effector's time / the pass alone).

Times are the best of ``--repeat`` runs, wall clock and CPU seconds of this
process (the steadier figure on a shared machine).

Run: ``python benchmarks/bench_dale.py`` (``--quick`` for a smaller run).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import modellens as ml

try:
    dale = ml.dale
except AttributeError:  # not exported yet
    from modellens.effects.dale import dale
try:
    ale = ml.ale
except AttributeError:
    try:
        from modellens.effects.ale import ale
    except ImportError:
        ale = None


def make_problem(n, d, hidden, seed=0):
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    # correlated features, as in real tabular data
    latent = rng.normal(size=(n, 5))
    X = latent @ rng.normal(size=(5, d)) / np.sqrt(5) + 0.5 * rng.normal(size=(n, d))
    net = torch.nn.Sequential(
        torch.nn.Linear(d, hidden), torch.nn.Tanh(),
        torch.nn.Linear(hidden, hidden), torch.nn.Tanh(),
        torch.nn.Linear(hidden, 1),
    ).eval()

    def predict(Z):
        with torch.no_grad():
            return net(torch.as_tensor(Z, dtype=torch.float32)).numpy().ravel().astype(np.float64)

    def jacobian(Z):
        x = torch.as_tensor(Z, dtype=torch.float32).requires_grad_(True)
        (g,) = torch.autograd.grad(net(x).sum(), x)
        return g.numpy().astype(np.float64)

    return X, net, predict, jacobian


def best_time(fn, repeat):
    """Least wall-clock and least CPU seconds over ``repeat`` runs.

    CPU time (all threads of this process) is the steadier figure on a shared
    machine, where other processes stretch the wall clock.
    """
    wall = cpu = np.inf
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
    return wall, cpu


def efficiency(X, net, ks, repeat, ale_max_k):
    print(f"\n== efficiency: n = {X.shape[0]}, D = {X.shape[1]}, torch MLP, time (s) to explain "
          "the first k features ==")
    print(f"{'k':>4} {'DALE wall':>10} {'DALE cpu':>9} {'ALE wall':>9} {'ALE cpu':>8} "
          f"{'ALE/DALE':>9}")
    dale_times = {}
    for k in ks:
        feats = list(range(k))
        wall, cpu = best_time(lambda: dale(net, X, features=feats, bins=20, progress=False),
                              repeat)
        dale_times[k] = (wall, cpu)
        a_wall = a_cpu = np.nan
        if ale is not None and k <= ale_max_k:
            a_wall, a_cpu = best_time(
                lambda: ale(net, X, features=feats, bins=20, progress=False), 1)
        print(f"{k:>4} {wall:10.3f} {cpu:9.3f} {a_wall:9.3f} {a_cpu:8.3f} {a_cpu / cpu:9.1f}")
    lo, hi = min(ks), max(ks)
    for i, label in ((0, "wall"), (1, "cpu")):
        ratio = dale_times[hi][i] / dale_times[lo][i]
        print(f"DALE {label} time k={hi} / k={lo}: {ratio:.2f} (target <= 1.5: "
              f"{'PASS' if ratio <= 1.5 else 'FAIL'})")


def versus_rhale(X, predict, jacobian, repeat):
    import effector
    from effector.axis_partitioning import DynamicProgramming, Fixed

    t_grad = best_time(lambda: jacobian(X), repeat)
    precomputed = jacobian(X)
    print(f"\n== versus effector RHALE: n = {X.shape[0]}, all {X.shape[1]} features, "
          "seconds as wall / cpu ==")
    print(f"one Jacobian pass alone: {t_grad[0]:.3f} / {t_grad[1]:.3f} s")
    print(f"{'gradient':>12} {'bins':>10} {'modellens':>14} {'effector':>14} "
          f"{'speed-up (cpu)':>15}")
    for given in ("callable", "precomputed"):
        # the same Jacobian callable for both, or the same precomputed Jacobian (effector's
        # data_effect=, our gradient= returning it): the second times the estimators alone
        ours_grad = jacobian if given == "callable" else (lambda Z: precomputed)
        theirs_grad = {"model_jac": jacobian} if given == "callable" else \
            {"data_effect": precomputed}
        for label, ours, theirs in (
            ("20 fixed", 20, Fixed(nof_bins=20)),
            ("auto / dp", "auto", DynamicProgramming()),
        ):
            # a precomputed Jacobian answers for all rows, so it is asked once (one chunk)
            chunk = X.shape[0] if given == "precomputed" else None
            t_ours = best_time(lambda: dale(predict, X, bins=ours, gradient=ours_grad,
                                            chunk_size=chunk), repeat)

            def run_effector():
                rhale = effector.RHALE(X, predict, nof_instances="all", **theirs_grad)
                rhale.fit("all", binning_method=theirs)

            t_theirs = best_time(run_effector, repeat)
            speedup = t_theirs[1] / t_ours[1]
            print(f"{given:>12} {label:>10} {t_ours[0]:6.3f} / {t_ours[1]:5.3f} "
                  f"{t_theirs[0]:6.3f} / {t_theirs[1]:5.3f} {speedup:8.1f}x"
                  f"  (target >= 5x: {'PASS' if speedup >= 5 else 'FAIL'})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50_000, help="rows")
    parser.add_argument("--hidden", type=int, default=256, help="width of the MLP's two layers")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--ale-max-k", type=int, default=100, help="largest k timed for ALE")
    parser.add_argument("--quick", action="store_true", help="n = 10000, ALE up to k = 11")
    args = parser.parse_args()
    if args.quick:
        args.n, args.ale_max_k = 10_000, 11
    import torch

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    X, net, predict, jacobian = make_problem(args.n, 100, args.hidden)
    ks = list(range(1, 12)) + [20, 50, 100]
    efficiency(X, net, ks, args.repeat, args.ale_max_k)
    versus_rhale(X, predict, jacobian, args.repeat)


if __name__ == "__main__":
    main()
