"""What the model-file checks cost next to the library's own load (issue 40's figure).

For each format (LightGBM text, XGBoost JSON, XGBoost UBJSON, a skops random
forest, and with ``--skops-kinds`` extra trees, gradient boosting and
HistGradientBoosting) it times, interleaved over ``--repeat`` rounds (library load,
``load_model``, ``load_model``, library load):

* the library's own load of the file (``lgb.Booster(model_file=)``, XGBoost's
  ``load_model``, ``skops.io.load``);
* ``modellens.load_model`` of the same file: the checks, then the library's load
  of what was checked.

and prints, per format, exactly the issue's figure::

    check cost / library load: <format>: 4.2% (wall, best of 10) | 4.0% (CPU)
        | 4.4% (paired median)

where the check cost is ``load_model`` minus the library's load (everything
modellens adds: reading and checking the file, handing it over): best wall
against best wall, best CPU (``time.process_time``, every thread of the
process) against best CPU, and the median of each round's difference over the
library's median wall time (a round's difference: the mean of its two of each).
On a shared machine the paired median moves least
(two loads that ran side by side share the machine's state); best-of needs a
quiet minute for both.  Then, per format, the net cost
when the first tree explanation follows: load + the first TreeSHAP of 200 rows,
with the checks and with the library's load alone (``--no-reuse`` skips it).

    python benchmarks/bench_tree_checks.py [--rounds 1000] [--depth 8] [--classes 3]
        [--leaves 255] [--rows 20000] [--repeat 5] [--only lightgbm,json,ubj,skops]
        [--skops-kinds rf,et,gb,hgb] [--no-reuse] [--folder DIR] [--stages]
"""

import argparse
import gc
import tempfile
import time
from pathlib import Path

import numpy as np


def interleaved(fns, repeat):
    """Each function's wall and CPU times over ``repeat`` rounds, each round the functions
    in order and then in reverse (A B B A: each runs once after itself and once after
    the other, so neither gains from the state the other leaves, such as memory it freed
    or filled); two times a function a round."""
    wall = [[] for _ in fns]
    cpu = [[] for _ in fns]
    for _ in range(repeat):
        for i in [*range(len(fns)), *reversed(range(len(fns)))]:
            gc.collect()  # (each starts from a collected heap, not the other's garbage)
            t, c = time.perf_counter(), time.process_time()
            fns[i]()
            wall[i].append(time.perf_counter() - t)
            cpu[i].append(time.process_time() - c)
    return np.array(wall), np.array(cpu)


def check_cost(wall, cpu):
    """The check cost of ``load_model`` (row 1) over the library's load (row 0): best wall,
    best CPU, and the median over rounds of each round's difference (the mean of its two
    of each) over the library's median: the figure a loaded machine moves least."""
    lib, ours = wall
    best = (ours.min() - lib.min()) / lib.min()
    best_cpu = (cpu[1].min() - cpu[0].min()) / cpu[0].min()
    rounds = (ours - lib).reshape(-1, 2).mean(axis=1)
    return best, best_cpu, np.median(rounds) / np.median(lib)


def _data(rows, classes, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, 20))
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + X[:, 3:8].sum(axis=1) + rng.normal(size=rows)
    if classes > 1:
        y = np.digitize(y, np.quantile(y, np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y


def _loaded(model, path):
    model.load_model(path)  # XGBoost's wrappers return None here
    return model


def _files(args, folder):
    """The model files: {format: (label, path, library load)}."""
    X, y = _data(args.rows, args.classes)
    out = {}
    only = set(args.only.split(","))
    tag = f"{args.rounds}-{args.depth}-{args.leaves}-{args.classes}-{args.rows}"
    if "lightgbm" in only:
        import lightgbm as lgb
        path = folder / f"m-{tag}.txt"
        if path.exists():  # --folder: a file this script wrote with these arguments
            booster = lgb.Booster(model_file=str(path))
        else:
            params = {"num_leaves": args.leaves, "verbose": -1, "min_data_in_leaf": 5,
                      "learning_rate": 0.05}
            if args.classes > 1:
                params.update(objective="multiclass", num_class=args.classes)
            booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=args.rounds)
            booster.save_model(path)
        out["LightGBM text"] = (f"{booster.num_trees()} trees, {path.stat().st_size / 1e6:.1f} MB",
                                path, lambda p=path: lgb.Booster(model_file=str(p)), X)
    if only & {"json", "ubj"}:
        import xgboost as xgb
        wrapper = xgb.XGBClassifier if args.classes > 1 else xgb.XGBRegressor
        paths = {ext: folder / f"m-{tag}.{ext}" for ext in ("json", "ubj")}
        if all(p.exists() for p in paths.values()):  # --folder: files written with these args
            model = _loaded(wrapper(), paths["ubj"])
        else:
            model = wrapper(n_estimators=args.rounds, max_depth=args.depth, learning_rate=0.05,
                            tree_method="hist").fit(X, y)
            for path in paths.values():
                model.save_model(path)
        n_trees = model.get_booster().num_boosted_rounds() * max(1, args.classes)
        for ext, name in (("json", "XGBoost JSON"), ("ubj", "XGBoost UBJSON")):
            if ext in only:
                path = paths[ext]
                out[name] = (f"{n_trees} trees, {path.stat().st_size / 1e6:.1f} MB", path,
                             lambda p=path, w=wrapper: _loaded(w(), p), X)
    if "skops" in only:
        for kind in args.skops_kinds.split(","):
            out.update(_skops_file(kind, args, X, y, folder, tag))
    return out


#: The scikit-learn models of ``--skops-kinds``: their names, and how each is fitted.
_SKOPS_KINDS = {"rf": "random forest", "et": "extra trees", "gb": "gradient boosting",
                "hgb": "hist gradient boosting"}


def _skops_file(kind, args, X, y, folder, tag):
    """A skops file of one scikit-learn kind: {name: (label, path, library load, X)}.

    Forests grow ``rounds // 10`` unbounded trees, gradient boosting ``rounds`` trees
    of depth 3, HistGradientBoosting ``rounds`` trees of its default 31 leaves (255
    took over half an hour to fit on a loaded machine); all regressors of the first
    10 columns.
    """
    import skops.io as sio
    from sklearn import ensemble

    n = max(10, args.rounds // 10)
    path = folder / f"{kind}-{tag}.skops"
    if not path.exists():
        model = {"rf": lambda: ensemble.RandomForestRegressor(n_estimators=n, random_state=0,
                                                                n_jobs=1),
                 "et": lambda: ensemble.ExtraTreesRegressor(n_estimators=n, random_state=0,
                                                            n_jobs=1),
                 "gb": lambda: ensemble.GradientBoostingRegressor(n_estimators=args.rounds,
                                                                  max_depth=3, random_state=0),
                 "hgb": lambda: ensemble.HistGradientBoostingRegressor(
                     max_iter=args.rounds, early_stopping=False, random_state=0)}[kind]()
        sio.dump(model.fit(X[:, :10], y), path)
    trusted = sio.get_untrusted_types(file=path)
    model = sio.load(path, trusted=trusted)
    if kind == "hgb":
        trees = [p.nodes for per in model._predictors for p in per]
        count, nodes = len(trees), sum(len(t) for t in trees)
    else:
        trees = np.ravel(model.estimators_)
        count, nodes = len(trees), sum(e.tree_.node_count for e in trees)
    return {f"skops {_SKOPS_KINDS[kind]}": (
        f"{count} trees, {nodes:,} nodes, {path.stat().st_size / 1e6:.1f} MB", path,
        lambda p=path: sio.load(p, trusted=trusted), X[:, :10])}


def _skops_stages(path, repeat):
    """CPU time of each stage of ``load_model`` of a skops file (best of ``repeat``, taking
    turns with ``skops.io.load``), as a share of skops' own load (``--stages``)."""
    import dataclasses
    import json
    import zipfile

    import skops.io as sio

    from modellens.files import _skops_ids
    from modellens.trees import check_sklearn_objects

    get_tree, read_schema = _skops_ids.skops_private()
    trusted = sio.get_untrusted_types(file=path)
    clock = time.process_time
    best: dict = {}

    def keep(name, start):
        best[name] = min(best.get(name, float("inf")), clock() - start)

    for _ in range(repeat):
        start = clock()
        sio.load(path, trusted=trusted)
        keep("skops.io.load", start)
        with zipfile.ZipFile(path) as archive:
            start = clock()
            json.loads(archive.read("schema.json"))
            keep("schema read + plain json parse (skops' own)", start)
            start = clock()
            schema, context, walked = _skops_ids.read_skops_schema(archive, read_schema)
            keep("schema read + parse with the ids' hook", start)
            start = clock()
            _skops_ids.check_skops_ids(schema, archive, walked=walked)
            keep("check_skops_ids", start)
            start = clock()
            tree = get_tree(schema, context, trusted=None)
            keep("get_tree (reads the array files)", start)
            plain = dataclasses.replace(context, src=archive, memo={})
            start = clock()
            get_tree(schema, plain, trusted=None)
            keep("get_tree, the files read by zipfile (skops' own)", start)
            start = clock()
            tree.get_unsafe_set()
            keep("get_unsafe_set", start)
            start = clock()
            model = tree.construct()
            keep("construct", start)
        start = clock()
        check_sklearn_objects(model)
        keep("check_sklearn_objects", start)
    lib = best["skops.io.load"]
    for name, seconds in best.items():
        print(f"  {name}: {seconds * 1e3:.1f} ms CPU ({seconds / lib:.1%})", flush=True)


def _net(path, X, library_load, repeat):
    """load + first TreeSHAP: with the checks, and with the library's load alone."""
    import modellens as ml
    from modellens.files import load_model

    rows = X[:200]
    wall, _ = interleaved(
        [lambda: ml.shapley(load_model(path), rows, algorithm="tree"),
         lambda: ml.shapley(library_load(), rows, algorithm="tree")], repeat)
    return wall.min(axis=1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--leaves", type=int, default=255)
    parser.add_argument("--classes", type=int, default=3)
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="lightgbm,json,ubj,skops")
    parser.add_argument("--skops-kinds", default="rf",
                        help=f"the scikit-learn models of 'skops', of {','.join(_SKOPS_KINDS)}")
    parser.add_argument("--folder", help="keep the model files here, and reuse those "
                        "written with the same arguments (default: a new temporary folder)")
    parser.add_argument("--reuse", action=argparse.BooleanOptionalAction, default=True,
                        help="also the net cost with the first TreeSHAP (default: yes)")
    parser.add_argument("--stages", action="store_true",
                        help="also the CPU time of each stage of load_model of a skops file")
    args = parser.parse_args()
    from modellens.files import load_model

    folder = Path(args.folder or tempfile.mkdtemp())
    folder.mkdir(parents=True, exist_ok=True)
    files = _files(args, folder)
    for name, (label, path, library_load, X) in files.items():
        load_model(path)  # compiled kernels and imports warm, as for every later file
        wall, cpu = interleaved([library_load, lambda p=path: load_model(p)], args.repeat)
        (lib, ours), (lib_cpu, ours_cpu) = wall.min(axis=1), cpu.min(axis=1)
        print(f"{name} ({label}): library load {lib:.3f} s ({lib_cpu:.3f} s CPU), "
              f"load_model {ours:.3f} s ({ours_cpu:.3f} s CPU)", flush=True)
        best, best_cpu, paired = check_cost(wall, cpu)
        print(f"check cost / library load: {name}: {best:.1%} (wall, best of {2 * args.repeat}) "
              f"| {best_cpu:.1%} (CPU) | {paired:.1%} (paired median)", flush=True)
        if args.stages and path.suffix == ".skops":
            _skops_stages(path, args.repeat)
        if args.reuse:
            with_checks, plain = _net(path, X, library_load, args.repeat)
            print(f"  net, with the first TreeSHAP of 200 rows: {with_checks:.3f} s against "
                  f"{plain:.3f} s ({(with_checks - plain) / plain:.1%})", flush=True)


if __name__ == "__main__":
    main()
