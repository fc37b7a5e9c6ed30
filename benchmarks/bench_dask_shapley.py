"""TreeSHAP of every row of a Dask DataFrame, written to parquet on a LocalCluster.

Data: ``--rows`` (default 10,000,000) x 20 float64 features, generated *on the
workers* (``dd.from_map``: partition ``i`` is drawn from its own seed, so the
client never holds a row), ``--partition-rows`` rows a partition (default
100,000).  Model: XGBoost, 100 trees of depth 6, fit in this process on
20,000 rows of the same distribution.

Measured for 1 and 2 worker processes (one thread each, ``local_client``, the
cluster ``ml.config(n_workers=k)`` starts), after every worker has compiled
the tree kernels (numba) on a few rows:

* wall time of ``ml.shapley(model, ddf).to_parquet(dir)`` (path-dependent
  TreeSHAP, the default without background): each worker explains its
  partitions and writes their values; the speed-up is 1 worker / 2 workers
  (goal >= 1.8x);
* peak resident memory of this process (the client and, in a LocalCluster,
  the scheduler) during the job, and its growth over the start (goal: peak
  under 200 MB); sampled every 50 ms with psutil;
* peak resident memory of each worker process during the job (goal: under
  1 GB), for two data sizes at the same partition size, and for partitions
  four times larger: a worker holds a partition's rows and values whole
  (rows per partition x (20 inputs + 22 outputs) x 8 bytes) and explains
  them ``BLOCK_ROWS`` at a time, so its working memory follows the block, not
  the data size or the number of partitions.

The values written are checked against the in-memory call on the first
partition's rows.

Run:  python benchmarks/bench_dask_shapley.py                    (10,000,000 rows)
      python benchmarks/bench_dask_shapley.py --rows 1000000     (what fits a busy machine)
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import threading
import time

import numpy as np
import pandas as pd
import psutil

import modellens as ml
from modellens._config import local_client

D = 20
NAMES = [f"f{j}" for j in range(D)]
SEED = 20261124


def make_partition(i, rows, total):
    """Partition ``i``: rows ``i * rows ...`` drawn from their own seed (on a worker)."""
    lo = i * rows
    hi = min(lo + rows, total)
    rng = np.random.default_rng([SEED, i])
    return pd.DataFrame(rng.normal(size=(hi - lo, D)), columns=NAMES,
                        index=pd.RangeIndex(lo, hi, name="row"))


def target(X):
    X = np.asarray(X)
    return X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + 0.5 * X[:, 3] ** 2 + 0.1 * X[:, 4:].sum(axis=1)


def fit_model():
    import xgboost

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(20_000, D)), columns=NAMES)
    return xgboost.XGBRegressor(n_estimators=100, max_depth=6, n_jobs=1,
                                random_state=0).fit(X, target(X))


def dask_frame(rows, partition_rows):
    import dask.dataframe as dd

    n_parts = -(-rows // partition_rows)
    meta = make_partition(0, 0, 0)
    divisions = [i * partition_rows for i in range(n_parts)] + [rows - 1]
    return dd.from_map(make_partition, range(n_parts), args=(partition_rows, rows), meta=meta,
                       divisions=divisions, enforce_metadata=False)


class PeakRSS:
    """Peak resident memory of some processes, sampled on a thread."""

    def __init__(self, pids, every=0.05):
        self.procs = {pid: psutil.Process(pid) for pid in pids}
        self.peak = {pid: 0 for pid in pids}
        self.every, self._stop = every, threading.Event()

    def _loop(self):
        while not self._stop.is_set():
            for pid, proc in self.procs.items():
                try:
                    self.peak[pid] = max(self.peak[pid], proc.memory_info().rss)
                except psutil.Error:
                    pass
            time.sleep(self.every)

    def __enter__(self):
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def _warm(model):
    """On a worker: compile the tree kernels (numba) on a few rows, load the parquet writer."""
    ml.shapley(model, make_partition(0, 200, 200), n_jobs=1)
    import pyarrow.parquet  # noqa: F401 - what writing the values loads

    return os.getpid()


def _cpu(pid):
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


def run(n_workers, model, rows, partition_rows, out):
    with local_client(n_workers) as client:
        pids = list(client.run(_warm, model).values())
        ddf = dask_frame(rows, partition_rows)
        workers_start = [psutil.Process(p).memory_info().rss for p in pids]
        me = psutil.Process().memory_info().rss
        cpu = [_cpu(p) for p in pids]
        with PeakRSS([os.getpid()] + pids) as peaks:
            start = time.perf_counter()
            attr = ml.shapley(model, ddf, progress=False)
            attr.to_parquet(out)
            wall = time.perf_counter() - start
        cpu = [_cpu(p) - c for p, c in zip(pids, cpu)]
        return {"wall": wall, "cpu": cpu, "client_start": me,
                "client_peak": peaks.peak[os.getpid()],
                "workers_peak": [peaks.peak[p] for p in pids], "workers_start": workers_start,
                "method": attr.method,
                "npartitions": attr.npartitions}


def check(model, out, partition_rows, rows):
    import dask.dataframe as dd

    got = dd.read_parquet(out).partitions[0].compute()
    rows0 = make_partition(0, partition_rows, rows)
    memory = ml.shapley(model, rows0, n_jobs=1, progress=False)
    err = np.abs(got[NAMES].to_numpy() - memory.values).max()
    assert got.index.equals(rows0.index) and err < 1e-9, err
    return err


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--partition-rows", type=int, default=100_000)
    parser.add_argument("--workers", default="1,2", help="worker counts, e.g. 1,2")
    parser.add_argument("--memory-rows", type=int, default=None,
                        help="a second, smaller data size for the memory check "
                             "(default rows / 4, at least 2 partitions)")
    args = parser.parse_args()
    model = fit_model()
    base = tempfile.mkdtemp(prefix="bench_dask_shapley_")
    MB = 2**20
    print(f"TreeSHAP (path-dependent), XGBoost 100 trees depth 6, {D} features; "
          f"{args.rows:,} rows in partitions of {args.partition_rows:,}, generated on the "
          f"workers, written to parquet")
    try:
        walls, cpus, outs = {}, {}, []
        for k in [int(w) for w in args.workers.split(",")]:
            out = os.path.join(base, f"w{k}")
            r = run(k, model, args.rows, args.partition_rows, out)
            walls[k], cpus[k] = r["wall"], r["cpu"]
            outs.append(out)
            print(f"  {k} worker(s): {r['wall']:8.1f} s  ({args.rows / r['wall']:,.0f} rows/s, "
                  f"{r['npartitions']} partitions); worker CPU "
                  f"{', '.join(f'{c:.1f}' for c in r['cpu'])} s; client peak "
                  f"{r['client_peak'] / MB:.0f} MB (+{(r['client_peak'] - r['client_start']) / MB:.0f}"
                  f" MB over its start); worker peak {max(r['workers_peak']) / MB:.0f} MB "
                  f"(started at {max(r['workers_start']) / MB:.0f} MB: Python, Dask, numba, "
                  f"XGBoost, pyarrow)")
        if 1 in walls and 2 in walls:
            print(f"  2 workers over 1: {walls[1] / walls[2]:.2f}x wall (goal >= 1.8x); from "
                  f"the workers' CPU time (what an idle machine would give, the busiest worker "
                  f"setting the pace): {sum(cpus[1]) / max(cpus[2]):.2f}x")
        small = args.memory_rows or max(args.rows // 4, 2 * args.partition_rows)
        out = os.path.join(base, "small")
        r = run(2, model, small, args.partition_rows, out)
        print(f"  memory at {small:,} rows on 2 workers: worker peak "
              f"{max(r['workers_peak']) / MB:.0f} MB (started at "
              f"{max(r['workers_start']) / MB:.0f} MB), client peak {r['client_peak'] / MB:.0f} MB "
              f"(the same partition size: the worker peak should not depend on the rows)")
        shutil.rmtree(out)
        big = min(4 * args.partition_rows, small)
        r = run(2, model, small, big, out)
        print(f"  memory at {small:,} rows in partitions of {big:,} on 2 workers: worker peak "
              f"{max(r['workers_peak']) / MB:.0f} MB (started at "
              f"{max(r['workers_start']) / MB:.0f} MB): a partition's rows and values "
              f"({big * (2 * D + 2) * 8 / MB:.0f} MB) are held whole, the working memory "
              f"follows the block of {ml.attribution.distributed.BLOCK_ROWS:,} rows")
        for out in outs:
            err = check(model, out, args.partition_rows, args.rows)
            print(f"  {out}: the first partition equals the in-memory call (max |diff| "
                  f"{err:.1e})")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
