"""A scaling figure past two cores: 1 and 2 workers measured, 8 and 64 projected from a small model.

The job is ``bench_dask.py``'s: ALE of 10 features with 20 quantile bins on
``--rows`` (default 300,000) rows of seeded normal data, 2 model rows per
point and feature (6 million at the default), the model a GIL-holding loop
calibrated to about 1 microsecond per row (so only processes run chunks at
once).  Every run here is a LocalCluster on loopback, one thread per worker,
and each request's numbers are checked equal (bit for bit) to the local run.

Measured
--------
* ``t1``, ``t2``: the request on 1 and 2 workers (a fresh block each, so the
  data are sent in the timing);
* ``t_free``: the same request with a model that costs nothing (``X @ w``) on
  1 worker, at the default chunks (``K`` chunks) and at chunks of 32,768 rows
  (``K_small``): the overhead of one chunk ``c = (t_free_small - t_free) /
  (K_small - K)`` (the scheduler's round trip, shipping the rows' description
  and the answers, folding them here);
* ``L``: the scheduler's cost per task seen from the client: 200 empty tasks
  submitted and gathered the way the executor does (a window of tasks in
  flight), total time / 200;
* ``bw``: loopback bandwidth client -> worker, from the time to send the data
  (``client.scatter``) to one worker;
* transfer sizes: ``D`` (the data and the model, sent once per worker),
  ``A`` (the answers: one float64 per model row for ALE, 8 bytes x model
  rows) and the skeleton of a request (from the block's record).

The model (stated assumptions)
------------------------------
::

    T(N) = F + N * D / bw + K * L + A / bw + ceil(K / N) * (W / K + c_w)

* ``F``: the client's serial part (planning, quantiles, the reduce), taken
  as ``t_free - D / bw - K * c``; it does not shrink with workers.
* ``N * D / bw``: the data go to every worker, one after the other from the
  client (Dask's scatter sends to one worker and the others copy it; taking
  it as serial is the pessimistic end).
* ``K * L + A / bw``: every chunk passes the scheduler and every answer
  comes back to the one client: serial.  (Dask pipelines them with the
  compute: adding them is the pessimistic end.)
* ``W = t1 - t_free``: the model's compute; split over chunks, and chunks
  over workers in whole rounds (``ceil(K / N)``): with fewer chunks than
  workers, workers idle.  ``c_w = max(c - L - A / (K bw), 0)``: the part of a
  chunk's overhead on the worker (building the rows), parallel.
* Workers are alike and never share a core (true past two workers only on a
  machine with that many cores); the network is loopback's ``bw``; a
  second column takes 10 Gbit/s (1.25 GB/s) instead, as between machines.
* Not modelled: stragglers, worker memory limits, the client's own CPU
  contending with local workers (it does with 2 workers on 2 cores here, so
  ``t2`` includes that).

The table prints the projection at the default chunk size (``K`` fixed by
the job) and with chunks cut so there are 4 per worker (``chunk_size =
rows / 4N``), which is what a user of 64 workers would set; the last column
is a later request of the same ``ml.config`` block, whose data are on the
workers already (``D`` = 0).

Run:  python benchmarks/bench_dask_scaling.py               (300,000 rows)
      python benchmarks/bench_dask_scaling.py --rows 50000  (quick check)
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_dask as base  # noqa: E402  (the same job and model)

import modellens as ml  # noqa: E402
from modellens import engine  # noqa: E402
from modellens._config import _current  # noqa: E402
from modellens.engine import _dask  # noqa: E402

# the workers import bench_dask afresh: its calibrated loop count must travel with the model
__import__("cloudpickle").register_pickle_by_value(base)

SMALL_CHUNK = 2**15
TEN_GBIT = 1.25e9


def _empty():
    return None


def scheduler_cost(client, n=200):
    """Seconds per task of empty tasks through the scheduler, a window in flight."""
    distributed = __import__("distributed")
    window = 2 * _dask.IN_FLIGHT_PER_THREAD * max(1, sum(client.nthreads().values()))
    began = time.perf_counter()
    pending = []
    for _ in range(n):
        pending.append(client.submit(_empty, pure=False))
        if len(pending) >= window:
            pending.pop(0).result()
    distributed.wait(pending)
    return (time.perf_counter() - began) / n


def bandwidth(client, X):
    began = time.perf_counter()
    future = client.scatter(X, direct=True)
    seconds = time.perf_counter() - began
    client.cancel([future])
    return X.nbytes / seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300_000)
    args = parser.parse_args()
    base.calibrate()
    X = np.random.default_rng(0).normal(size=(args.rows, base.WIDTH))
    planned = 2 * args.rows * base.WIDTH
    opts = dict(progress=False)
    print(f"ALE, {base.WIDTH} features, {args.rows:,} rows: {planned:,} model rows; "
          f"os.cpu_count() = {os.cpu_count()}")
    local, t_local = base.timed(lambda: ml.ale(base.gil_model, X, **opts))
    free_local, t_free_local = base.timed(lambda: ml.ale(base.free_model, X, **opts))
    print(f"local, 1 thread: {t_local:.2f} s; with the free model {t_free_local:.2f} s")
    times = {}
    for k in (1, 2):
        with ml.config(n_workers=k):
            ml.ale(base.free_model, X[:5000], **opts)  # workers import modellens first
        # a fresh block: the data are sent in the timing, as a user's first request
        with ml.config(n_workers=k):
            client = _current.get().client
            ml.ale(base.free_model, X[:5000] + 1, **opts)
            store = _current.get().store
            store.sent.clear()
            remote, times[k] = base.timed(lambda: ml.ale(base.gil_model, X, **opts))
            assert base.same(local, remote), "cluster numbers differ from the local run"
            sent = list(store.sent)
            if k == 1:
                free_remote, t_free = base.timed(lambda: ml.ale(base.free_model, X, **opts))
                assert base.same(free_local, free_remote)
                with ml.config(chunk_size=SMALL_CHUNK):
                    _, t_free_small = base.timed(lambda: ml.ale(base.free_model, X, **opts))
                L = scheduler_cost(client)
                bw = bandwidth(client, X)
        print(f"Dask, {k} worker(s): {times[k]:7.2f} s (equal to local: yes)")
    chunk_rows = min(_dask.DASK_CHUNK_ROWS, engine.DEFAULT_CHUNK_BYTES // (8 * base.WIDTH))
    K = -(-planned // chunk_rows)
    K_small = -(-planned // SMALL_CHUNK)
    c = max((t_free_small - t_free) / (K_small - K), 0.0)
    D = sum(n for token, n in sent if token != "skeleton")
    skeleton = sum(n for token, n in sent if token == "skeleton")
    A = 8 * planned
    W = max(times[1] - t_free, 0.0)
    F = max(t_free - D / bw - K * c, 0.0)
    c_w = max(c - L - A / (K * bw), 0.0)

    def T(N, chunks, net, data=D):
        return (F + N * data / net + chunks * L + A / net
                + math.ceil(chunks / N) * (W / chunks + c_w))

    print(f"\nmeasured: t1 {times[1]:.2f} s, t2 {times[2]:.2f} s, speed-up "
          f"{times[1] / times[2]:.2f}x; free model on 1 worker {t_free:.2f} s in {K} chunks "
          f"of {chunk_rows:,} rows, {t_free_small:.2f} s in {K_small} chunks of "
          f"{SMALL_CHUNK:,}")
    print(f"per-chunk overhead c = {c * 1e3:.1f} ms; scheduler cost per task L = "
          f"{L * 1e3:.2f} ms; loopback bandwidth {bw / 1e9:.2f} GB/s")
    print(f"transfers: data + model sent once per worker D = {D / 2**20:.1f} MiB; request "
          f"skeleton {skeleton / 2**10:.0f} KiB; answers A = {A / 2**20:.0f} MiB "
          f"({A / K / 2**20:.1f} MiB per chunk)")
    print(f"model: F = {F:.2f} s serial, W = {W:.2f} s compute, c_w = {c_w * 1e3:.1f} ms "
          f"per chunk on a worker")
    print(f"check: predicted T(1) {T(1, K, bw):.2f} s (measured {times[1]:.2f}), "
          f"T(2) {T(2, K, bw):.2f} s (measured {times[2]:.2f})")
    print(f"\n| workers | measured (s) | model, {K} chunks (s) | speed-up | model, 4 chunks per "
          "worker (s) | speed-up | the same at 10 Gbit/s (s) | speed-up | 10 Gbit/s, data "
          "already sent (s) | speed-up |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for N in (1, 2, 8, 64):
        k4 = 4 * N
        measured = f"{times[N]:.2f}" if N in times else "-"
        print(f"| {N} | {measured} | {T(N, K, bw):.2f} | {T(1, K, bw) / T(N, K, bw):.2f}x | "
              f"{T(N, k4, bw):.2f} | {T(1, 4, bw) / T(N, k4, bw):.2f}x | "
              f"{T(N, k4, TEN_GBIT):.2f} | {T(1, 4, TEN_GBIT) / T(N, k4, TEN_GBIT):.2f}x | "
              f"{T(N, k4, TEN_GBIT, 0):.2f} | "
              f"{T(1, 4, TEN_GBIT, 0) / T(N, k4, TEN_GBIT, 0):.2f}x |")

if __name__ == "__main__":
    main()
