"""Cost of reading a polars DataFrame / pyarrow Table: the one conversion against the method.

    PYTHONPATH=src python benchmarks/bench_polars_input.py [n_rows]

Prints the seconds of ``data.as_pandas`` on a frame of numeric, string,
Categorical and Enum columns with nulls, and of ``ml.ale`` on the pandas and
the polars frame (a cheap model, so the conversion's share is an upper bound).
"""

import sys

import numpy as np
import polars as pl

import modellens as ml
from modellens.data import as_pandas

from bench_pdp import best_of  # run from benchmarks/ or as a script: its folder is on the path


def frame(n, seed=0):
    rng = np.random.default_rng(seed)
    cols = {f"x{j}": rng.normal(size=n) for j in range(8)}
    cols["s"] = rng.choice(["a", "b", "c", "d"], size=n)
    cols["c"] = rng.choice(["red", "green", "blue"], size=n)
    cols["e"] = rng.choice(["low", "mid", "high"], size=n)
    P = pl.DataFrame(cols).with_columns(
        pl.col("c").cast(pl.Categorical), pl.col("e").cast(pl.Enum(["low", "mid", "high"])),
        pl.when(pl.int_range(n) % 50 == 0).then(None).otherwise(pl.col("x0")).alias("x0"))
    return P


def model(D):
    return D["x1"].to_numpy() * 2 + D["x2"].to_numpy() ** 2


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    P = frame(n)
    X = as_pandas(P)
    print(f"{n} rows x {P.width} columns")
    print(f"as_pandas(polars):   {best_of(lambda: as_pandas(P), 3):.3f} s")
    print(f"as_pandas(pyarrow):  {best_of(lambda: as_pandas(P.to_arrow()), 3):.3f} s")
    kw = dict(features=["x1", "x2"], bins=20, progress=False)
    print(f"ml.ale on pandas:    {best_of(lambda: ml.ale(model, X, **kw), 3):.3f} s")
    print(f"ml.ale on polars:    {best_of(lambda: ml.ale(model, P, **kw), 3):.3f} s")
