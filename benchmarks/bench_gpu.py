"""Model rows per second of the methods on a torch module, against its own forward pass.

A torch MLP (float32, ``--d`` features, two hidden layers of ``--hidden``
tanh units) is explained where it lives: on the GPU when
``torch.cuda.is_available()``, else on the CPU (the output says which).
For ``pdp``, ``ale``, ``dale``, ``shapley`` (kernel, permutation) and ``lime``
the script records the batches the engine sent to the module (a forward hook
counts their rows) and times, interleaved and best of ``--repeat``:

* the method end to end (planning rows on the host, the copy to the device,
  the module, folding the answers), in model rows per second;
* the module's own pass over batches of the same sizes already on the
  device: the forward pass under ``no_grad`` (for ``dale``: forward and
  backward, the gradient pass DALE makes).

The ratio is the share of the module's own speed the method keeps (goal: at
least 80% on a GPU).  When captum is installed (``pip install captum``: its
0.9 requires ``torch>=2.3`` and brings no torch of its own), its
``ShapleyValueSampling`` and ``KernelShap`` explain the same rows with the
same baseline (one reference row, the data mean, for both libraries) and the
same numbers of permutations / coalitions, in explained rows per second.

Timings on a shared machine are noisy.  Run: ``python benchmarks/bench_gpu.py``
(``--quick`` for small sizes).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import modellens as ml


def make_net(d, hidden, device, seed=0):
    import torch

    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(d, hidden), torch.nn.Tanh(),
        torch.nn.Linear(hidden, hidden), torch.nn.Tanh(),
        torch.nn.Linear(hidden, 1),
    ).to(device).eval()


def sync(device):
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


class Batches:
    """A forward hook that records the rows of every batch the module is called on."""

    def __init__(self, net):
        self.sizes: list[int] = []
        self._handle = net.register_forward_hook(self._hook)

    def _hook(self, module, inputs, output):
        self.sizes.append(int(inputs[0].shape[0]))

    def take(self):
        sizes, self.sizes = self.sizes, []
        return sizes

    def remove(self):
        self._handle.remove()


def own_pass(net, sizes, d, device, *, backward):
    """Seconds of the module's own pass over batches of ``sizes`` rows already on the device."""
    import torch

    xs = {m: torch.randn(m, d, device=device) for m in set(sizes)}
    sync(device)
    began = time.perf_counter()
    for m in sizes:
        if backward:
            x = xs[m].requires_grad_()
            (g,) = torch.autograd.grad(net(x).sum(), x)
        else:
            with torch.no_grad():
                net(xs[m])
    sync(device)
    return time.perf_counter() - began


def methods(X, background, sizes):
    explain = X[: sizes["explain"]]
    lime_rows = X[: sizes["lime_rows"]]
    return {
        "pdp": lambda net: ml.pdp(net, X, grid=sizes["grid"], progress=False),
        "ale": lambda net: ml.ale(net, X, bins=sizes["grid"], progress=False),
        "dale": lambda net: ml.dale(net, X, bins=sizes["grid"], progress=False),
        "shapley kernel": lambda net: ml.shapley(
            net, explain, background=background, algorithm="kernel",
            n_samples=sizes["coalitions"], random_state=0, progress=False),
        "shapley permutation": lambda net: ml.shapley(
            net, explain, background=background, algorithm="permutation",
            n_permutations=sizes["permutations"], random_state=0, progress=False),
        "lime": lambda net: ml.lime(net, lime_rows, training_data=X,
                                    num_samples=sizes["lime_samples"], random_state=0,
                                    progress=False),
    }


def bench_methods(net, X, background, sizes, device, repeat):
    hook = Batches(net)
    rows = []
    try:
        for name, run in methods(X, background, sizes).items():
            run(net)  # warm-up (and the batches the method sends)
            batches = hook.take()
            best_method = best_own = np.inf
            for _ in range(repeat):  # interleaved: both see the same machine state
                sync(device)
                began = time.perf_counter()
                run(net)
                sync(device)
                best_method = min(best_method, time.perf_counter() - began)
                hook.take()
                best_own = min(best_own, own_pass(net, batches, X.shape[1], device,
                                                  backward=name == "dale"))
                hook.take()
            total = sum(batches)
            rows.append((name, total, len(batches), total / best_method, total / best_own))
    finally:
        hook.remove()
    return rows


def bench_captum(net, X, background, sizes, device, repeat):
    try:
        from captum.attr import KernelShap, ShapleyValueSampling
    except ImportError:
        return None
    import torch

    explain = X[: sizes["explain"]]
    x = torch.tensor(explain, dtype=torch.float32, device=device)
    base = torch.tensor(background, dtype=torch.float32, device=device)
    d = X.shape[1]
    cases = {
        "captum ShapleyValueSampling": lambda: ShapleyValueSampling(net).attribute(
            x, baselines=base, target=0, n_samples=sizes["permutations"],
            perturbations_per_eval=max(1, min(d + 1, 4096))),
        "captum KernelShap": lambda: KernelShap(net).attribute(
            x, baselines=base, target=0, n_samples=sizes["coalitions"],
            perturbations_per_eval=sizes["coalitions"]),
    }
    ours = methods(X, background, sizes)
    # captum warns that KernelShap fits one model per explained row: that is the comparison
    warnings.filterwarnings("ignore", message="You are providing multiple inputs",
                            category=UserWarning)
    out = []
    for name, run in cases.items():
        mine = ours["shapley permutation" if "Sampling" in name else "shapley kernel"]
        hook = Batches(net)
        try:  # warm-up, counting the model rows each side asks for
            run()
            theirs_rows = sum(hook.take())
            mine(net)
            ours_rows = sum(hook.take())
        finally:
            hook.remove()
        best_theirs = best_ours = np.inf
        for _ in range(repeat):
            sync(device)
            began = time.perf_counter()
            run()
            sync(device)
            best_theirs = min(best_theirs, time.perf_counter() - began)
            began = time.perf_counter()
            mine(net)
            sync(device)
            best_ours = min(best_ours, time.perf_counter() - began)
        n = explain.shape[0]
        out.append((name, n / best_theirs, n / best_ours, theirs_rows, ours_rows))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000, help="data rows")
    parser.add_argument("--d", type=int, default=20, help="features")
    parser.add_argument("--hidden", type=int, default=256, help="units per hidden layer")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    args = parser.parse_args(argv)
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if args.quick:
        args.n, args.d, args.hidden = 1_000, 6, 64
        sizes = dict(grid=10, explain=20, coalitions=128, permutations=10, lime_rows=10,
                     lime_samples=500)
    else:
        sizes = dict(grid=20, explain=200, coalitions=512, permutations=20, lime_rows=100,
                     lime_samples=2000)
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else \
        f"the CPU (no GPU available; {torch.get_num_threads()} torch threads)"
    print(f"torch {torch.__version__} on {where}: MLP {args.d}-{args.hidden}-{args.hidden}-1 "
          f"float32, n={args.n:,}, best of {args.repeat}")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(args.n, args.d))
    background = X.mean(axis=0, keepdims=True)
    net = make_net(args.d, args.hidden, device)

    print(f"\n{'method':<22}{'model rows':>12}{'batches':>9}{'rows/s':>14}"
          f"{'own rows/s':>14}{'share':>8}")
    for name, total, batches, rate, own in bench_methods(net, X, background, sizes, device,
                                                          args.repeat):
        print(f"{name:<22}{total:>12,}{batches:>9,}{rate:>14,.0f}{own:>14,.0f}"
              f"{rate / own:>8.0%}")
    print("own rows/s: the module's forward pass (dale: forward + backward) on batches of "
          "the same sizes already on the device.")

    captum = bench_captum(net, X, background, sizes, device, args.repeat)
    if captum is None:
        print("\ncaptum is not installed: `pip install captum` adds its ShapleyValueSampling "
              "and KernelShap to this comparison.")
    else:
        print(f"\n{'same rows, same baseline':<30}{'captum rows/s':>15}{'modellens rows/s':>18}"
              f"{'model rows (captum / ours)':>30}")
        for name, theirs, ours, theirs_rows, ours_rows in captum:
            print(f"{name:<30}{theirs:>15,.1f}{ours:>18,.1f}"
                  f"{f'{theirs_rows:,} / {ours_rows:,}':>30}")
        print("rows/s: explained rows per second (a mean-row baseline for both; "
              f"{sizes['permutations']} permutations, {sizes['coalitions']} coalitions).")


if __name__ == "__main__":
    main()
