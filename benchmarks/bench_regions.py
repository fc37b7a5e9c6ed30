"""``ml.regions`` against effector's regional ALE / RHALE / PDP on effector's own benchmarks.

    PYTHONPATH=src python benchmarks/bench_regions.py [n_seeds] [n_rows]

Same data and model for both, per seed (``effector.benchmarks``' generators and
``effector.models``' closed-form functions, iid U(-1, 1)):

* **one split** (``ConditionalInteractionUniform``): ``f = -+x1^2 (sign of x2) + e^x3``;
  the regions of ``x1`` split on ``x2`` at 0.  Found: the first split is on ``x2``
  within one quantile step (0.1) of 0.
* **two levels** (``ConditionalInteraction4RegionsUniform``): ``x1``'s effect gated by
  ``x3`` (sign) then ``x2`` (power).  Found: the first split on ``x3`` near 0 and
  both sub-regions split on ``x2`` near 0.
* **additive** (``x1^2 + x2 + e^x3``, the one-split function without its gate): any
  split of ``x1`` is false.
* **hidden modifier** (``x1 * x4 + x2 + e^x3``, splits allowed on ``x2, x3`` only):
  ``x1``'s local effects differ, but by a feature that may not split: any split is
  false (a null where the heterogeneity is real, so a search can fool itself).

effector (0.6.0) runs ``ALE`` / ``RHALE`` (with the model's own Jacobian) / ``PDP``
with ``find_regions`` and its defaults; ml.regions runs ``effect="ale"`` /
``"dale"`` / ``"pdp"`` with its defaults (a split needs gain >= 10%, a
permutation p <= 0.05 over 100 permutations and a held-out gain >= 5%), and also with
``n_resamples=0`` (the split search alone, accepted on gain, as effector
does) to compare the search's time.  Times include each tool's model calls;
the median over seeds is printed.  Feature names are 1-based as in the
benchmarks' formulas (``x1`` is column 0).
"""

import sys
import time
import warnings

import numpy as np

import modellens as ml

STEP = 0.1  # one 5% quantile step of U(-1, 1)


def _cases():
    import effector

    one = effector.benchmarks.ConditionalInteractionUniform()
    four = effector.benchmarks.ConditionalInteraction4RegionsUniform()

    def additive(x):
        return x[:, 0] ** 2 + x[:, 1] + np.exp(x[:, 2])

    def additive_jac(x):
        return np.column_stack([2 * x[:, 0], np.ones(len(x)), np.exp(x[:, 2])])

    def hidden(x):
        return x[:, 0] * x[:, 3] + x[:, 1] + np.exp(x[:, 2])

    def hidden_jac(x):
        return np.column_stack([x[:, 3], np.ones(len(x)), np.exp(x[:, 2]), x[:, 0]])

    def data(dim):
        return lambda n, seed: effector.datasets.IndependentUniform(dim, -1, 1).generate_data(
            n, seed=seed)

    return [
        ("one split", one.generate_data, one.model.predict, one.model.jacobian, None,
         [(0, 1)]),
        ("two levels", four.generate_data, four.model.predict, four.model.jacobian, None,
         [(0, 2), (1, 1), (1, 1)]),
        ("additive", data(3), additive, additive_jac, None, []),
        ("hidden modifier", data(4), hidden, hidden_jac, [1, 2], []),
    ]


# ------------------------------------------------------------------ ours
def ours(method, X, f, splits, n_resamples):
    began = time.perf_counter()
    r = ml.regions(f, X, 0, effect=method, splits=splits, n_resamples=n_resamples,
                   random_state=0)
    took = time.perf_counter() - began
    found = []
    for node in r[0].nodes():
        if node.split is not None:
            col = int(node.split.feature[1:])  # "x2" -> column 2
            found.append((node.depth, col, node.split.threshold))
    return found, took


# ------------------------------------------------------------------ effector
def theirs(method, X, f, jac, splits):
    import effector

    began = time.perf_counter()
    if method == "ale":
        effect = effector.ALE(X, f, nof_instances="all")
    elif method == "dale":
        effect = effector.RHALE(X, f, jac, nof_instances="all")
    else:
        effect = effector.PDP(X, f, nof_instances="all")
    kwargs = {} if splits is None else {"candidate_conditioning_features": splits}
    part = effect.find_regions(0, **kwargs)
    took = time.perf_counter() - began
    found = []
    for region in part.regions:
        children = [r for r in part.regions if r.parent_idx == region.idx]
        if not children:
            continue
        (col, interval), = [(c, s) for c, s in children[0].rule._conditions.items()
                            if c not in region.rule._conditions
                            or s != region.rule._conditions[c]]
        t = interval.hi if np.isfinite(interval.hi) else interval.lo
        found.append((region.level, int(col), float(t)))
    return found, took


def _right(found, truth):
    """The true splits, in depth order, each within one quantile step of 0, and no other."""
    if len(found) != len(truth):
        return False
    for (depth, col, t), (want_depth, want_col) in zip(sorted(found), sorted(truth)):
        if depth != want_depth or col != want_col or abs(t) > STEP:
            return False
    return True


def main(n_seeds=100, n=1000):
    warnings.simplefilter("ignore")
    import effector

    print(f"effector {effector.__version__ if hasattr(effector, '__version__') else '0.6.0'}, "
          f"{n_seeds} seeds, {n} rows; share of seeds right (true splits only) or with any "
          "split (nulls); median seconds per feature")
    header = (f"{'function':16s} {'method':6s} {'tool':22s} {'right / false':>13s} "
              f"{'time s':>8s}  time / effector's")
    print(header)
    for name, gen, f, jac, splits, truth in _cases():
        for method in ("ale", "dale", "pdp"):
            rows = {"ml.regions": [], "ml.regions (no test)": [], "effector": []}
            for seed in range(n_seeds):
                X = gen(n, seed)
                for tool in rows:
                    if tool == "effector":
                        found, took = theirs(method, X, f, jac, splits)
                    else:
                        found, took = ours(method, X, f, splits,
                                           0 if tool.endswith("(no test)") else 100)
                    score = _right(found, truth) if truth else bool(found)
                    rows[tool].append((score, took))
            theirs_took = np.median([t for _, t in rows["effector"]])
            for tool, results in rows.items():
                share = np.mean([s for s, _ in results])
                took = np.median([t for _, t in results])
                what = "right" if truth else "false"
                ratio = "" if tool == "effector" else f"  {took / theirs_took:5.2f}x effector"
                print(f"{name:16s} {method:6s} {tool:22s} {what} {share:6.0%}  {took:8.3f}"
                      f"{ratio}", flush=True)


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    main(*args)
