"""Peak memory of ALE, DALE and PD on a large dataset, against the data's own size.

Data: ``--rows`` (default 1,000,000) x 10 features of float64 (76 MiB at the
default), seeded standard normal.  Model: a cheap numpy function

    f(X) = X @ w + 0.5 * sin(X[:, 0]),   w = linspace(-1, 1, 10),

so that the library's own buffers, not the model, make the memory.  DALE is
given the exact analytic gradient (``gradient=``, a callable returning the
(n, 10) matrix ``w + 0.5 cos(x_0) e_0``); ALE and PD call ``f``.  Every method
runs at its default settings (all 10 features, 20 bins / grid points,
automatic chunking), ``progress=False``.

Each method is measured in fresh subprocesses, so that one method's peak does
not mix with another's:

* resident memory: the growth of the process's peak resident set during the
  call, ``VmHWM`` after the call minus ``VmRSS`` just before it, the
  high-water mark reset first by writing "5" to ``/proc/self/clear_refs``.
  Where that is not permitted, a thread samples ``VmRSS`` every millisecond
  during the call and the largest sample counts ("sampled", a lower bound
  that misses only peaks shorter than a millisecond).  (``ru_maxrss`` is no
  fallback: it keeps the peak of making the data before the call, about one
  data size more than the call's own.)  The wall time comes from this run;
* tracemalloc's peak during the call above its start (numpy reports its
  buffers to tracemalloc), in a second subprocess, because tracing slows the
  call and its own records take resident memory.

Before the measured call each subprocess runs the method once on 2,000 rows,
so that lazy imports and first-call set-up are not counted.

Goals (issue #41): the peak growth of ALE and PD at most 1x the data size,
of DALE at most 2x (its result keeps every local effect: 1x by itself).

Run:  python benchmarks/bench_memory.py                 (1,000,000 rows)
      python benchmarks/bench_memory.py --rows 100000   (quick check)
      python benchmarks/bench_memory.py --methods ale,dale
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import threading
import time
import tracemalloc

import numpy as np

D = 10
WEIGHTS = np.linspace(-1.0, 1.0, D)
METHODS = ("ale", "dale", "pdp")
GOAL = {"ale": 1.0, "dale": 2.0, "pdp": 1.0}  # peak growth / data size
MIB = 2 ** 20


def model(X):
    X = np.asarray(X, dtype=float)
    return X @ WEIGHTS + 0.5 * np.sin(X[:, 0])


def gradient(X):
    """The exact gradient of ``model``: (n, d)."""
    X = np.asarray(X, dtype=float)
    g = np.empty(X.shape)
    g[:] = WEIGHTS
    g[:, 0] += 0.5 * np.cos(X[:, 0])
    return g


def check_gradient():
    X = np.random.default_rng(1).normal(size=(5, D))
    h = 1e-6
    fd = np.stack([(model(X + h * e) - model(X - h * e)) / (2 * h) for e in np.eye(D)], axis=1)
    err = np.max(np.abs(fd - gradient(X)))
    if err > 1e-6:
        raise AssertionError(f"analytic gradient off by {err:.2e}")


def make_data(rows, seed=0):
    return np.random.default_rng(seed).normal(size=(rows, D))


def call(method, X):
    import modellens as ml

    if method == "ale":
        return ml.ale(model, X, progress=False)
    if method == "dale":
        return ml.dale(model, X, gradient=gradient, progress=False)
    if method == "pdp":
        return ml.pdp(model, X, progress=False)
    raise ValueError(method)


# ---------------------------------------------------------------- the subprocess
class RssSampler:
    """The largest ``VmRSS`` seen every millisecond until :meth:`stop` (KiB)."""

    def __init__(self):
        self.peak = status_kib("VmRSS")
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._done.wait(0.001):
            self.peak = max(self.peak, status_kib("VmRSS"))

    def stop(self):
        self._done.set()
        self._thread.join()
        return self.peak


def status_kib(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def reset_hwm():
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return status_kib("VmHWM") <= status_kib("VmRSS") + 4  # did it take?


def child(method, mode, rows):
    X = make_data(rows)
    call(method, X[:2000].copy())  # imports and first-call set-up, not counted
    gc.collect()
    out = {"method": method, "mode": mode, "data_bytes": X.nbytes}
    if mode == "rss":
        exact = reset_hwm()
        rss0 = status_kib("VmRSS")
        sampler = None if exact else RssSampler()
        t0 = time.perf_counter()
        result = call(method, X)
        out["seconds"] = time.perf_counter() - t0
        if exact:
            peak = status_kib("VmHWM")
            out["how"] = "VmHWM"
        else:
            peak = max(sampler.stop(), status_kib("VmRSS"))
            out["how"] = "sampled"
        out["rss_before"] = rss0 * 1024
        out["growth"] = (peak - rss0) * 1024
    else:
        tracemalloc.start()
        base, _ = tracemalloc.get_traced_memory()
        t0 = time.perf_counter()
        result = call(method, X)
        out["seconds"] = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out["growth"] = peak - base
    del result
    print("RESULT " + json.dumps(out), flush=True)


# ---------------------------------------------------------------- the parent
def measure(method, mode, rows):
    proc = subprocess.run(
        [sys.executable, __file__, "--child", method, "--mode", mode, "--rows", str(rows)],
        capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"{method}/{mode} subprocess failed (rc {proc.returncode}):\n"
                       f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the data")
    parser.add_argument("--methods", default=",".join(METHODS),
                        help=f"comma-separated subset of {','.join(METHODS)}")
    parser.add_argument("--child", choices=METHODS, help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=("rss", "trace"), default="rss", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.mode, args.rows)
        return
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = set(methods) - set(METHODS)
    if unknown:
        parser.error(f"unknown methods {sorted(unknown)}")
    check_gradient()

    data_bytes = args.rows * D * 8
    print(f"peak memory: {args.rows:,} rows x {D} features float64 = "
          f"{data_bytes / MIB:.1f} MiB of data; cheap numpy model, default settings, "
          "each method in fresh subprocesses\n")
    head = (f"{'method':<7} {'time s':>8} {'peak growth MiB':>16} {'/ data':>7} "
            f"{'tracemalloc MiB':>16} {'/ data':>7}  {'measured by':<12} goal")
    print(head)
    print("-" * len(head))
    verdicts = []
    for method in methods:
        rss = measure(method, "rss", args.rows)
        tm = measure(method, "trace", args.rows)
        ratio, tm_ratio = rss["growth"] / data_bytes, tm["growth"] / data_bytes
        goal = ""
        if method in GOAL:
            ok = ratio <= GOAL[method]
            goal = f"<= {GOAL[method]:g}x: {'PASS' if ok else 'FAIL'}"
            verdicts.append((method, ok))
        print(f"{method:<7} {rss['seconds']:8.2f} {rss['growth'] / MIB:16.1f} {ratio:7.2f} "
              f"{tm['growth'] / MIB:16.1f} {tm_ratio:7.2f}  {rss['how']:<12} {goal}", flush=True)
    if verdicts:
        print("\ngoals (peak growth: ALE and PD within 1x the data, DALE within 2x): "
              + ", ".join(f"{m} {'PASS' if ok else 'FAIL'}" for m, ok in verdicts))


if __name__ == "__main__":
    main()
