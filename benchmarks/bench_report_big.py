"""The report on a big table (issue 40's "1,000,000 rows x 500 features, a 1,000-level column").

Run ``PYTHONPATH=src nice -n 10 prlimit --as=$((24*2**30)) python benchmarks/bench_report_big.py
--rows 100000 --features 100 [--levels 1000] [--profile out.prof]``.

The data: ``rows`` x ``features`` columns (numeric, 2% missing) and one
categorical column of ``levels`` levels; a LightGBM regressor of 50 rounds,
the category read as a category.  Printed: the seconds of making the data,
fitting, building the report and writing it, the peak resident memory of
the process, the page's size, whether the file is whole, and what the page
says it sampled.  One run: the machine is shared, so say it was loaded.

``--write FOLDER`` instead writes the table as Parquet, a chunk at a time
(``big.parquet``: the features, the category and the target ``y``; memory of
one chunk), and a LightGBM model fit on its first chunk (``big_model.txt``),
for the command line on the whole file, with its default ``--max-rows``
sampling::

    nice -n 10 python benchmarks/bench_report_big.py --rows 1000000 --features 500 --write big
    nice -n 10 /usr/bin/time -v modellens report --data big/big.parquet \
        --model big/big_model.txt --target y --out big/report.html
"""

from __future__ import annotations

import argparse
import re
import resource
import time

import numpy as np
import pandas as pd


def big_frame(rows, features, levels, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(rows, features)).astype(np.float64)
    Z[rng.random(Z.shape) < 0.02] = np.nan
    X = pd.DataFrame(Z, columns=[f"x{i}" for i in range(features)])
    X["many"] = pd.Categorical.from_codes(rng.integers(0, levels, rows),
                                          [f"level {i}" for i in range(levels)])
    y = np.nan_to_num(Z[:, 0]) + np.nan_to_num(Z[:, 1]) * np.nan_to_num(Z[:, 2]) \
        + (X["many"].cat.codes.to_numpy() % 7) * 0.2 + rng.normal(0, 0.3, rows)
    return X, y


def write_parquet(folder, rows, features, levels, chunk=50_000):
    """The table in ``folder/big.parquet`` (chunks of ``chunk`` rows, each from its own seed)
    and a LightGBM model of its first chunk in ``folder/big_model.txt``."""
    from pathlib import Path

    import lightgbm
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    writer = None
    model = None
    for k, start in enumerate(range(0, rows, chunk)):
        X, y = big_frame(min(chunk, rows - start), features, levels, seed=k)
        if model is None:
            model = lightgbm.LGBMRegressor(n_estimators=50, num_leaves=15, verbose=-1,
                                           n_jobs=1).fit(X, y)
            model.booster_.save_model(folder / "big_model.txt")
        table = pa.Table.from_pandas(X.assign(y=y), preserve_index=False)
        if writer is None:
            writer = pq.ParquetWriter(folder / "big.parquet", table.schema)
        writer.write_table(table)
    writer.close()
    size = (folder / "big.parquet").stat().st_size / 2**30
    print(f"wrote {rows:,} rows x {features + 2} columns ({size:.2f} GB parquet) and the "
          f"model in {time.perf_counter() - t:.0f} s, peak {peak_gb():.2f} GB", flush=True)


def peak_gb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=100)
    parser.add_argument("--levels", type=int, default=1000)
    parser.add_argument("--out", default="big_report.html")
    parser.add_argument("--profile", default=None, help="write cProfile stats here")
    parser.add_argument("--write", default=None, metavar="FOLDER",
                        help="write the data as Parquet and a model file there, and stop")
    args = parser.parse_args()
    if args.write:
        return write_parquet(args.write, args.rows, args.features, args.levels)
    import lightgbm

    import modellens as ml

    t = time.perf_counter()
    X, y = big_frame(args.rows, args.features, args.levels)
    made = time.perf_counter() - t
    t = time.perf_counter()
    model = lightgbm.LGBMRegressor(n_estimators=50, num_leaves=15, verbose=-1,
                                   n_jobs=1).fit(X, y)
    fitted = time.perf_counter() - t
    print(f"data {made:.1f} s, fit {fitted:.1f} s, peak {peak_gb():.2f} GB", flush=True)
    profiler = None
    if args.profile:
        import cProfile
        profiler = cProfile.Profile()
        profiler.enable()
    t = time.perf_counter()
    report = ml.report(model, X, y, progress=False)
    built = time.perf_counter() - t
    t = time.perf_counter()
    path = report.save(args.out)
    saved = time.perf_counter() - t
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile)
    page = open(path, encoding="utf-8").read()
    whole = page.lower().startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    said = sorted(set(re.findall(r"[^.<>]{0,60}sampl[^.<>]{0,60}", page)))[:6]
    print(f"{args.rows:,} rows x {args.features + 1} features ({args.levels} levels): "
          f"report {built:.1f} s, save {saved:.1f} s, peak {peak_gb():.2f} GB, "
          f"page {len(page) / 2**20:.1f} MB, whole={whole}")
    for line in said:
        print("  says:", " ".join(line.split()))


if __name__ == "__main__":
    main()
