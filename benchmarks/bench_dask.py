"""ALE on a Dask LocalCluster: speed-up over workers, overhead per chunk, client memory.

Data: ``--rows`` (default 1,000,000) x 10 features of float64, seeded standard
normal.  ALE of all 10 features with 20 quantile bins plans 2 model rows per
point and feature: 20 million rows at the default.

Model: ``X @ w`` plus a pure-Python loop of a fixed number of iterations per
row, calibrated at start so that the loop costs about 1 ms per 1,000 rows on
this machine.  The loop holds the GIL, so threads (``n_jobs``) cannot run two
chunks at once and only processes can.  A fixed number of iterations (not a
timed spin) keeps the cost honest on a busy machine: two workers sharing one
core take twice as long, as a real model would.

Measured, each request once (``progress=False``):

* local: the engine in this process, one thread;
* ``ml.config(n_workers=1)`` and ``ml.config(n_workers=2)``: a LocalCluster of
  one / two worker processes (one thread each), started before the timing;
  the speed-up is 1 worker / 2 workers (goal: at least 1.8x);
* overhead per chunk: the same request with a model that costs nothing
  (``X @ w``) on 1 worker, with the default chunks and with chunks of 65,536
  rows: the extra time over the extra chunks (the scheduler's round trip,
  shipping the answers, folding them); and the fixed cost of a request (what
  is left over the local run: shipping the data and the model once);
* client memory during the 2-worker run: tracemalloc's peak above its start
  (numpy reports its buffers to it) and the growth of the process's peak
  resident set (``ru_maxrss``; an upper bound); for scale, the planned rows
  would take 20M x 10 x 8 bytes = 1.6 GB and their predictions 160 MB.  For
  comparison, the peak of the same request run in this process (with the
  free model): ALE's own planning (sorted copies for the quantiles, bin
  indices) and the 2n predictions of one feature that an ALE plan keeps
  until it reduces them (16 MiB).

The numbers must equal the local run's (checked, bit for bit).

Run:  python benchmarks/bench_dask.py                  (1,000,000 rows)
      python benchmarks/bench_dask.py --rows 100000    (quick check)
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc

import numpy as np

import modellens as ml
from modellens.engine import _dask

WIDTH = 10
#: Loop iterations per row, set by calibrate() to cost about 1 microsecond per row.
ITERATIONS_PER_ROW = 1.0
W = np.linspace(-1, 1, WIDTH)
#: Rows per chunk of the second timing of the overhead per chunk.
SMALL_CHUNK = 2**16


def gil_model(A):
    for _ in range(int(len(A) * ITERATIONS_PER_ROW)):
        pass
    return A @ W


def free_model(A):
    return A @ W


def calibrate(target_seconds_per_row=1e-6, rows=200_000):
    """Iterations per row that make ``gil_model`` cost ``target`` seconds per row here."""
    global ITERATIONS_PER_ROW
    A = np.zeros((rows, WIDTH))
    for _ in range(2):  # the second round corrects for the matrix product and call costs
        best = min(timed(lambda: gil_model(A))[1] for _ in range(3))
        ITERATIONS_PER_ROW *= target_seconds_per_row * rows / best
    return ITERATIONS_PER_ROW


def _max_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(fn):
    began = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - began


def traced_peak(fn):
    """tracemalloc's peak during ``fn()`` above its start, in bytes."""
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak - base


def same(a, b):
    return all(np.array_equal(a[k].values, b[k].values) for k in a)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    calibrate()
    X = np.random.default_rng(0).normal(size=(args.rows, WIDTH))
    planned = 2 * args.rows * WIDTH
    opts = dict(progress=False)
    print(f"ALE, {WIDTH} features, {args.rows:,} rows: {planned:,} model rows; "
          f"{ITERATIONS_PER_ROW:.1f} loop iterations per row")
    _, t_model = timed(lambda: gil_model(X[:100_000]))
    print(f"model cost: {t_model * 10:.2f} ms per 1,000 rows (goal about 1)")

    local, t_local = timed(lambda: ml.ale(gil_model, X, **opts))
    print(f"local, 1 thread:      {t_local:7.2f} s")
    free_local, t_free_local = timed(lambda: ml.ale(free_model, X, **opts))

    times = {}
    for k in (1, 2):
        with ml.config(n_workers=k):
            ml.ale(free_model, X[:5000], **opts)  # workers import modellens first
            remote, times[k] = timed(lambda: ml.ale(gil_model, X, **opts))
            assert same(local, remote), "cluster numbers differ from the local run"
            print(f"Dask, {k} worker(s):   {times[k]:7.2f} s   (equal to local: yes)")
            if k == 1:
                free_remote, t_free = timed(lambda: ml.ale(free_model, X, **opts))
                assert same(free_local, free_remote)
                with ml.config(chunk_size=SMALL_CHUNK):
                    _, t_free_small = timed(lambda: ml.ale(free_model, X, **opts))
            else:
                rss_before = _max_rss_mib()
                peak = traced_peak(lambda: ml.ale(gil_model, X, **opts))
                rss_growth = _max_rss_mib() - rss_before
    local_peak = traced_peak(lambda: ml.ale(free_model, X, **opts))
    chunk_rows = min(_dask.DASK_CHUNK_ROWS, ml.engine.DEFAULT_CHUNK_BYTES // (8 * WIDTH))
    n_chunks = -(-planned // chunk_rows)
    print(f"speed-up 2 workers / 1 worker: {times[1] / times[2]:.2f}x (goal >= 1.8x); "
          f"2 workers vs local: {t_local / times[2]:.2f}x")
    # a cost-free model on 1 worker at two chunk sizes: the time per extra chunk is the
    # overhead of a chunk; what is left over the local run is the request's fixed cost
    n_small = -(-planned // SMALL_CHUNK)
    per_chunk = (t_free_small - t_free) / (n_small - n_chunks)
    print(f"free model: local {t_free_local:.2f} s; 1 worker {t_free:.2f} s in {n_chunks} "
          f"chunks of {chunk_rows:,} rows, {t_free_small:.2f} s in {n_small} chunks of "
          f"{SMALL_CHUNK:,}")
    print(f"overhead per chunk: {per_chunk * 1e3:.1f} ms "
          f"({per_chunk * n_chunks / times[1]:.1%} of the 1-worker run at the default size); "
          f"fixed cost of a request (shipping data and model, first chunks): "
          f"{t_free - t_free_local - per_chunk * n_chunks:.2f} s")
    data_mib = X.nbytes / 2**20
    print(f"client memory, 2 workers: tracemalloc peak {peak / 2**20:.0f} MiB, "
          f"peak RSS growth {rss_growth:.0f} MiB; the same request run here: "
          f"{local_peak / 2**20:.0f} MiB (data {data_mib:.0f} MiB; one chunk of answers "
          f"{chunk_rows * 8 / 2**20:.0f} MiB; planned rows {planned * WIDTH * 8 / 2**30:.1f} "
          f"GiB)")


if __name__ == "__main__":
    main()
