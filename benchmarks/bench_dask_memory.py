"""Peak memory of a Dask worker during an out-of-core request: it follows the chunk size.

Job: PD of 2 features on a 10-grid (20 model rows per data row) of a Dask
DataFrame generated on the workers (``dd.from_map``: each partition
``--part-rows`` rows x 10 float64 columns made from its own seed, so no data
leave the client), the model ``X @ w`` (numpy).  The table sweeps the number
of partitions (so the data size, at a fixed partition size) and the chunk
size (``ml.config(chunk_size=...)``, which the partitions' engines use).

Each configuration gets a fresh 2-worker LocalCluster, since a process's
peak resident set (``ru_maxrss``) only grows.  Per worker: the peak RSS
after a warm-up request on a small frame (imports, the model) and after the
job; the growth is what the job cost that worker at its worst moment.  The
client's peak RSS growth over the job is shown too.

What a worker holds at once: one partition (``part_rows x 10 x 8`` bytes) and
its encoded copy, the rows of one chunk (``chunk x 10 x 8`` bytes) and their
answers, the plans' summaries (a few numbers per grid point).  Nothing grows
with the number of partitions: Dask runs one partition per worker thread
and drops it when its summary is made.

Run:  python benchmarks/bench_dask_memory.py
      python benchmarks/bench_dask_memory.py --part-rows 50000 --parts 4 16   (quick)
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import pandas as pd

import modellens as ml
from modellens._config import local_client

WIDTH = 10
W = np.linspace(-1, 1, WIDTH)


def model(A):
    return np.asarray(A, dtype=np.float64) @ W


def make_partition(i, rows):
    rng = np.random.default_rng(i)
    return pd.DataFrame(rng.normal(size=(rows, WIDTH)),
                        columns=[f"x{j}" for j in range(WIDTH)])


def _peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker_peaks(client):
    return client.run(_peak_rss_mib)


def measure(n_parts, part_rows, chunk):
    import dask.dataframe as dd

    with local_client(2) as client, ml.config(client=client, chunk_size=chunk,
                                              progress=False):
        small = dd.from_map(make_partition, range(2), rows=1000)
        ml.pdp(model, small, features=["x0", "x1"], grid=10)  # warm-up: imports, model
        before = worker_peaks(client)
        client_before = _peak_rss_mib()
        X = dd.from_map(make_partition, range(n_parts), rows=part_rows)
        began = time.perf_counter()
        ml.pdp(model, X, features=["x0", "x1"], grid=10)
        seconds = time.perf_counter() - began
        after = worker_peaks(client)
        client_growth = _peak_rss_mib() - client_before
    growth = [after[w] - before[w] for w in after]
    return max(growth), max(after.values()), client_growth, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part-rows", type=int, default=200_000)
    parser.add_argument("--parts", type=int, nargs="+", default=[4, 16])
    parser.add_argument("--chunks", type=int, nargs="+", default=[2**13, 2**18])
    args = parser.parse_args()
    part_mib = args.part_rows * WIDTH * 8 / 2**20
    print(f"PD, 2 features x 10 grid points, partitions of {args.part_rows:,} rows "
          f"({part_mib:.0f} MiB each), 2 workers")
    print("| partitions | data (MiB) | chunk rows | chunk (MiB) | worker peak growth (MiB) | "
          "worker peak RSS (MiB) | client peak growth (MiB) | time (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for chunk in args.chunks:
        for n_parts in args.parts:
            growth, peak, client_growth, seconds = measure(n_parts, args.part_rows, chunk)
            print(f"| {n_parts} | {n_parts * part_mib:.0f} | {chunk:,} | "
                  f"{chunk * WIDTH * 8 / 2**20:.1f} | {growth:.0f} | {peak:.0f} | "
                  f"{client_growth:.0f} | {seconds:.1f} |", flush=True)


if __name__ == "__main__":
    main()
