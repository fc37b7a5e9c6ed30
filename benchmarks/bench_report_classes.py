"""Page size and build time of the interactive report: the demo and a 3-class forest.

Run ``PYTHONPATH=src python benchmarks/bench_report_classes.py [--vs /other/checkout]
[--rounds 3]``.

Two reports at their defaults, built in a fresh Python process per round (the
numba cache warm: one untimed round first), for this source tree and, with
``--vs``, another checkout's ``src`` (e.g. the main branch before the every-class
explorer), interleaved round by round, best of ``--rounds``:

- **demo**: ``modellens.datasets.load_demo()`` (a HistGradientBoostingRegressor
  on scikit-learn's 442 diabetes rows, 10 features): TreeSHAP, one output;
- **forest, 3 classes**: a RandomForestClassifier (100 trees) on scikit-learn's
  wine data (178 rows, 13 features, 3 classes), no target: every section
  explains every class, TreeSHAP on the probabilities.

Printed: wall seconds of ``ml.report`` (the still pictures included) and the CPU
seconds of its process (every thread; less sensitive to a loaded machine), bytes of
the page (``Report.to_html()``) and of its explorer document (the JSON the
charts are drawn from; the page is that plus plotly.js's 4.8 MB and the still
pictures).  Timings on a shared machine are noisy: compare the trees' numbers
from the same run only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
import modellens as ml
from modellens.report._interactive import explorer_payload, payload_json

def demo():
    from modellens.datasets import load_demo
    return load_demo()

def forest():
    from sklearn.datasets import load_wine
    from sklearn.ensemble import RandomForestClassifier
    X, y = load_wine(return_X_y=True, as_frame=True)
    y = y.map(dict(enumerate(["barolo", "grignolino", "barbera"])))
    return RandomForestClassifier(100, random_state=0).fit(X, y), X, y

out = {}
for name, make in (("demo", demo), ("forest, 3 classes", forest)):
    model, X, y = make()
    t0, c0 = time.perf_counter(), time.process_time()
    rep = ml.report(model, X, y, progress=False)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    out[name] = {"seconds": seconds, "cpu": cpu, "page": len(rep.to_html().encode("utf-8")),
                 "explorer": len(payload_json(explorer_payload(rep.sections)))}
print(json.dumps(out))
"""


def run(src: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src), MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          env=env)
    if done.returncode != 0:
        raise SystemExit(f"the reports of {src} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vs", type=Path, default=None,
                        help="another checkout whose src/ to compare with, interleaved")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    trees = {"this": Path(__file__).resolve().parents[1] / "src"}
    if args.vs is not None:
        trees["other"] = args.vs / "src"
    for src in trees.values():  # compile and cache the kernels: untimed
        run(src)
    best: dict = {}
    for r in range(args.rounds):
        for tree, src in trees.items():
            for case, found in run(src).items():
                key = (case, tree)
                print(f"  round {r + 1}, {tree}, {case}: {found['seconds']:.1f} s wall, "
                      f"{found['cpu']:.1f} s CPU", flush=True)
                if key not in best or found["seconds"] < best[key]["seconds"]:
                    best[key] = found
    print("| report | tree | build s (best) | its CPU s | page MB | explorer document kB |")
    print("|---|---|---:|---:|---:|---:|")
    for (case, tree), found in sorted(best.items()):
        print(f"| {case} | {tree} ({trees[tree]}) | {found['seconds']:.1f} | "
              f"{found['cpu']:.1f} | "
              f"{found['page'] / 1e6:.2f} | {found['explorer'] / 1e3:.0f} |")


if __name__ == "__main__":
    main()
