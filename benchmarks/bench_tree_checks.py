"""What the tree checks cost next to loading: a big random forest in skops, LightGBM and XGBoost.

(The XGBoost rows' "checks" include reading the document as ``load_model`` reads
it: JSON by orjson and a scan for repeated keys where orjson is installed,
UBJSON by modellens' bounded reader; the LightGBM row's, the first reading of
the text (``load_model`` also reads what LightGBM writes back); the depth
limit is one comparison per tree level of the walk the checks already make.)

Prints, best of ``--repeat`` interleaved runs (library load, checks, ours, library
load, ...), the time to load each file without the checks (skops' own load; the
libraries' loaders), the time of the checks alone (their share of the load) and
of modellens' ``load_model`` (checks and the library's load, against the
library's load alone), with the node count.  On a loaded machine read the
ratios.

    python benchmarks/bench_tree_checks.py [--trees 100] [--rows 20000] [--repeat 3]
"""

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


def best_interleaved(fns, repeat):
    """Best time of each function over ``repeat`` rounds, the functions taking turns."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - t)
    return [min(t) for t in times]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import lightgbm as lgb
    import skops.io as sio
    import xgboost as xgb
    from sklearn.ensemble import RandomForestRegressor

    from modellens.trees import (check_lightgbm_text, check_sklearn_objects,
                                               check_xgboost_model)
    from modellens.files import load_model as load_model_file
    from modellens.files._models import _decode_xgboost

    rng = np.random.default_rng(0)
    X = rng.normal(size=(args.rows, 10))
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + rng.normal(size=args.rows)
    folder = Path(tempfile.mkdtemp())
    forest = RandomForestRegressor(n_estimators=args.trees, random_state=0).fit(X, y)
    sio.dump(forest, folder / "rf.skops")
    nodes = sum(e.tree_.node_count for e in forest.estimators_)
    booster = lgb.train({"num_leaves": 255, "verbose": -1, "min_data_in_leaf": 5},
                        lgb.Dataset(X, y), num_boost_round=10 * args.trees)
    booster.save_model(folder / "m.txt")
    xmodel = xgb.XGBRegressor(n_estimators=10 * args.trees, max_depth=8).fit(X, y)
    xmodel.save_model(folder / "m.json")
    xmodel.save_model(folder / "m.ubj")
    ubj = (folder / "m.ubj").read_bytes()
    trusted = sio.get_untrusted_types(file=folder / "rf.skops")
    text = (folder / "m.txt").read_text()
    raw = (folder / "m.json").read_bytes()
    loaded = sio.load(folder / "rf.skops", trusted=trusted)
    rows = [
        (f"skops random forest, {args.trees} trees, {nodes:,} nodes",
         lambda: sio.load(folder / "rf.skops", trusted=trusted),
         lambda: check_sklearn_objects(loaded),
         lambda: load_model_file(folder / "rf.skops")),
        (f"LightGBM text, {booster.num_trees()} trees, {len(text) / 1e6:.1f} MB",
         lambda: lgb.Booster(model_file=str(folder / "m.txt")),
         lambda: check_lightgbm_text(text),
         lambda: load_model_file(folder / "m.txt")),
        (f"XGBoost JSON, {10 * args.trees} trees, {len(raw) / 1e6:.1f} MB",
         lambda: xgb.XGBRegressor().load_model(folder / "m.json"),
         lambda: check_xgboost_model(_decode_xgboost(raw, "")),
         lambda: load_model_file(folder / "m.json")),
        (f"XGBoost UBJSON, {10 * args.trees} trees, {len(ubj) / 1e6:.1f} MB",
         lambda: xgb.XGBRegressor().load_model(folder / "m.ubj"),
         lambda: check_xgboost_model(_decode_xgboost(ubj, "")),
         lambda: load_model_file(folder / "m.ubj")),
    ]
    for label, plain, checks, ours in rows:
        t = best_interleaved([plain, checks, ours], args.repeat)
        print(f"{label}: library load {t[0]:.3f} s, checks alone {t[1]:.3f} s "
              f"({t[1] / t[0]:.0%} of the load), load_model {t[2]:.3f} s "
              f"({t[2] / t[0]:.2f}x the library's load)", flush=True)
    t0 = time.perf_counter()
    _decode_xgboost(raw, "")
    print(f"  (of which reading XGBoost's JSON: {time.perf_counter() - t0:.3f} s)")


if __name__ == "__main__":
    main()
