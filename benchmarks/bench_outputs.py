"""Every output of a 3-class model against one output: what the output axis costs.

    PYTHONPATH=src python benchmarks/bench_outputs.py [n_rows] [--trees]

(On a shared machine set OMP_NUM_THREADS=1: the classifier's OpenMP threads
otherwise fight the other processes for the cores and the timings mean little.)

A multiclass model computes every class's probability in the same call, so
explaining all of them should cost about what one costs: the engine evaluates
the planned rows once and folds each column into its own output's reduction.
For a HistGradientBoosting classifier with three classes this prints, for
``pdp``, ``ale`` and ``interactions``, the best-of-three time of the
all-output call and of the single-output call (``target=``), interleaved in
one process, and their ratio (goal: at most 1.15).  It also times
scikit-learn's ``partial_dependence`` (which returns every class at once) on
the same rows and grid, with the numbers checked equal.

The attributions follow: ``shapley`` (exact, permutation, kernel on the
probabilities of every class; TreeSHAP on the margins) and ``lime``, all
outputs against ``target=1``; then shap's multi-output ``TreeExplainer`` and
``KernelExplainer`` against the all-output call on the same rows (TreeSHAP's
values checked equal to shap's), and LIME of every class against the ``lime``
package's ``labels=`` run of every class on the same rows (each draws a row's
samples once and fits a surrogate per class; the numbers differ by sampling,
not compared).

The tree rows (``tree_rows``) time the tree methods of 3-class boosters
(HistGradientBoosting, XGBoost, LightGBM) and a random forest on the same
data: TreeSHAP path-dependent, interventional (100 background rows) and with
interaction values, ``pdp(method="tree")`` and ``interactions(method="tree")``,
all outputs against ``target=1``, and path-dependent TreeSHAP against shap's
``TreeExplainer`` (every class; values checked equal).  Every class is one
traversal of the trees, but a booster grows one tree per class and round:
the all-output call walks k times the trees of a one-output call, so its
ratio stays near k (what the one traversal saves is the per-call work:
parsing, layouts, kernel launches).  A forest's leaves hold every class, so
its all-output call walks the same trees as one output and carries k values;
with a background its leaves' value tables hold the unit game once for every
class (each class scales what a row reads by its leaf value), so the
interventional ratio stays near 1 (1.82 before the shared tables, 1.15-1.33
after, best of 5 interleaved on a loaded 2-core machine: noisy).
Run only the tree rows with ``--trees``.
"""

import sys
import time

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.inspection import partial_dependence

import modellens as ml


def attribution_cases(model, X) -> dict:
    """``name -> (all outputs, one output)`` of the attribution methods on rows of ``X``."""
    rows, background = X[:20], X[-50:]
    proba = dict(background=background, response_method="predict_proba", random_state=0)
    return {
        "shapley exact (20 rows, m=50)": (
            lambda: ml.shapley(model, rows, algorithm="exact", **proba),
            lambda: ml.shapley(model, rows, algorithm="exact", target=1, **proba)),
        "shapley permutation (10)": (
            lambda: ml.shapley(model, rows, algorithm="permutation", n_permutations=10,
                               **proba),
            lambda: ml.shapley(model, rows, algorithm="permutation", n_permutations=10,
                               target=1, **proba)),
        "shapley kernel (200)": (
            lambda: ml.shapley(model, rows, algorithm="kernel", n_samples=200, **proba),
            lambda: ml.shapley(model, rows, algorithm="kernel", n_samples=200, target=1,
                               **proba)),
        "shapley tree (1000 rows)": (
            lambda: ml.shapley(model, X[:1000], algorithm="tree"),
            lambda: ml.shapley(model, X[:1000], algorithm="tree", target=1)),
        "lime (50 rows, 1000 samples)": (
            lambda: ml.lime(model, X[:50], training_data=X, num_samples=1000,
                            random_state=0),
            lambda: ml.lime(model, X[:50], training_data=X, num_samples=1000,
                            random_state=0, target=1)),
    }


def against_shap(model, X):
    """The all-output call against shap's multi-output explainers on the same rows."""
    try:
        import shap
    except ImportError:
        print("shap is not installed: no comparison with shap")
        return
    rows = X[:1000]
    ours = ml.shapley(model, rows, algorithm="tree")
    theirs = np.asarray(shap.TreeExplainer(model).shap_values(rows))
    theirs = theirs if theirs.shape == ours.values.shape else np.moveaxis(theirs, 0, -1)
    np.testing.assert_allclose(ours.values, theirs, atol=1e-6)
    t_ours, t_shap = best_of_interleaved([
        lambda: ml.shapley(model, rows, algorithm="tree"),
        lambda: shap.TreeExplainer(model).shap_values(rows)])
    print(f"{'TreeSHAP, 1000 rows, 3 classes':30s} modellens   {t_ours:7.3f} s   shap       "
          f"{t_shap:7.3f} s   ratio {t_ours / t_shap:5.2f}", flush=True)
    few, background = X[:5], X[-50:]
    t_ours, t_shap = best_of_interleaved([
        lambda: ml.shapley(model, few, algorithm="kernel", n_samples=200,
                           background=background, random_state=0),
        lambda: shap.KernelExplainer(model.predict_proba, background, silent=True)
        .shap_values(few, nsamples=200, silent=True)], repeat=2)
    print(f"{'Kernel, 5 rows, 200 coalitions':30s} modellens   {t_ours:7.3f} s   shap       "
          f"{t_shap:7.3f} s   ratio {t_ours / t_shap:5.2f}", flush=True)


def against_lime(model, X, n_rows=5, num_samples=2000):
    """LIME of every class against the lime package's explain_instance(labels=every class)."""
    try:
        from lime.lime_tabular import LimeTabularExplainer
    except ImportError:
        print("lime is not installed: no comparison with the lime package")
        return
    rows, train, d = X[:n_rows], X[-2000:], X.shape[1]
    labels = tuple(range(len(model.classes_)))

    def theirs():
        ex = LimeTabularExplainer(train, mode="classification", feature_selection="none",
                                  random_state=0)
        for x in rows:
            ex.explain_instance(x, model.predict_proba, labels=labels, num_features=d,
                                num_samples=num_samples)

    def ours():
        ml.lime(model, rows, training_data=train, num_samples=num_samples,
                feature_selection="none", random_state=0)

    t_ours, t_lime = best_of_interleaved([ours, theirs])
    print(f"{f'LIME, {n_rows} rows, every class':30s} modellens   {t_ours:7.3f} s   lime       "
          f"{t_lime:7.3f} s   ratio {t_ours / t_lime:5.2f}", flush=True)


def best_of_interleaved(fns, repeat=3):
    """Best time of each callable, the callables taking turns (the machine's drift is shared)."""
    best = [np.inf] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best


def tree_models(X, y) -> dict:
    """The 3-class tree models of the tree rows (those whose library is installed)."""
    from sklearn.ensemble import RandomForestClassifier
    models = {"HistGradientBoosting (50 x 3 trees)":
              HistGradientBoostingClassifier(max_iter=50, random_state=0).fit(X, y)}
    try:
        import xgboost
        models["XGBoost (50 x 3 trees)"] = xgboost.XGBClassifier(
            n_estimators=50, max_depth=6, objective="multi:softprob", nthread=1).fit(X, y)
    except ImportError:
        print("xgboost is not installed: no XGBoost rows")
    try:
        import lightgbm
        models["LightGBM (50 x 3 trees)"] = lightgbm.LGBMClassifier(
            n_estimators=50, num_leaves=31, objective="multiclass", n_jobs=1,
            verbose=-1).fit(X, y)
    except ImportError:
        print("lightgbm is not installed: no LightGBM rows")
    models["RandomForest (50 trees, depth 8)"] = RandomForestClassifier(
        n_estimators=50, max_depth=8, random_state=0).fit(X, y)
    return models


def tree_rows(X, y, n_rows=1000):
    """Every class against one class for the tree methods, and against shap's TreeExplainer."""
    rows, background = X[:n_rows], X[-100:]
    for label, model in tree_models(X, y).items():
        boosted = "RandomForest" not in label
        # the boosters' trees add up to margins: the H statistics of their raw output
        h_kw = dict(method="tree", sample=100, random_state=0,
                    response_method="decision_function" if boosted else "auto")
        cases = {
            f"tree path-dependent ({n_rows} rows)": lambda **kw: ml.shapley(
                model, rows, algorithm="tree", **kw),
            f"tree interventional ({n_rows} rows, m=100)": lambda **kw: ml.shapley(
                model, rows, algorithm="tree", background=background, **kw),
            "tree interactions=True (100 rows)": lambda **kw: ml.shapley(
                model, rows[:100], algorithm="tree", interactions=True, **kw),
            "pdp tree (8 features, 20 points)": lambda **kw: ml.pdp(
                model, X, grid=20, method="tree", **kw),
        }
        if hasattr(model, "decision_function") or not boosted:  # not XGBClassifier
            cases["interactions tree (sample 100)"] = lambda **kw: ml.interactions(
                model, X, **h_kw, **kw)
        print(label, flush=True)
        ml.shapley(model, rows[:5], algorithm="tree")  # numba's kernels loaded once
        for name, call in cases.items():
            t_all, t_one = best_of_interleaved([call, lambda: call(target=1)])
            print(f"  {name:40s} all outputs {t_all:7.3f} s   one output {t_one:7.3f} s   "
                  f"ratio {t_all / t_one:5.2f}", flush=True)
        try:
            import shap
        except ImportError:
            continue
        ours = ml.shapley(model, rows, algorithm="tree")
        theirs = np.asarray(shap.TreeExplainer(model).shap_values(rows))
        theirs = theirs if theirs.shape == ours.values.shape else np.moveaxis(theirs, 0, -1)
        np.testing.assert_allclose(ours.values, theirs, rtol=0,
                                   atol=1e-6 * np.ptp(ours.prediction))
        t_ours, t_shap = best_of_interleaved([
            lambda: ml.shapley(model, rows, algorithm="tree"),
            lambda: shap.TreeExplainer(model).shap_values(rows)])
        print(f"  {'TreeSHAP every class vs shap':40s} modellens   {t_ours:7.3f} s   shap       "
              f"{t_shap:7.3f} s   ratio {t_ours / t_shap:5.2f}", flush=True)


def main(n=10_000):
    X, y = data(n)
    model = HistGradientBoostingClassifier(max_iter=50, random_state=0).fit(X, y)
    grid = np.linspace(-2, 2, 20)
    cases = {
        "pdp (8 features, 20 points)": (
            lambda: ml.pdp(model, X, grid=20),
            lambda: ml.pdp(model, X, grid=20, target=1)),
        "ale (8 features, 20 bins)": (
            lambda: ml.ale(model, X, bins=20),
            lambda: ml.ale(model, X, bins=20, target=1)),
        "interactions (sample 100)": (
            lambda: ml.interactions(model, X, sample=100, random_state=0, method="brute"),
            lambda: ml.interactions(model, X, sample=100, random_state=0, method="brute",
                                    target=1)),
        **attribution_cases(model, X),
    }
    print(f"3-class HistGradientBoostingClassifier, {n:,} rows x 8 features (best of 3)",
          flush=True)
    for name, (every, one) in cases.items():
        t_all, t_one = best_of_interleaved([every, one])
        print(f"{name:30s} all outputs {t_all:7.3f} s   one output {t_one:7.3f} s   "
              f"ratio {t_all / t_one:5.2f}", flush=True)
    # scikit-learn's partial dependence of every class on the same rows and grid
    ours = ml.pdp(model, X, features=[0], grid={"x0": grid})["x0"]
    theirs = partial_dependence(model, X, [0], kind="average", custom_values={0: grid},
                                method="brute", response_method="predict_proba")
    np.testing.assert_allclose(ours.values.T, theirs["average"], rtol=0, atol=1e-10)
    t_ours, t_sk = best_of_interleaved([
        lambda: ml.pdp(model, X, features=[0], grid={"x0": grid}),
        lambda: partial_dependence(model, X, [0], kind="average", custom_values={0: grid},
                                   method="brute", response_method="predict_proba")])
    print(f"{'pdp of x0, every class':30s} modellens   {t_ours:7.3f} s   sklearn    "
          f"{t_sk:7.3f} s   ratio {t_ours / t_sk:5.2f}")
    against_shap(model, X)
    against_lime(model, X)
    tree_rows(X, y)


def data(n):
    """``n`` rows of 8 features and a 3-class label."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 8))
    y = np.digitize(X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n), [-0.5, 0.5])
    return X, y


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--trees"]
    n_rows = int(args[0]) if args else 10_000
    if "--trees" in sys.argv:
        X, y = data(n_rows)
        print(f"tree methods, 3 classes, {n_rows:,} rows x 8 features (best of 3)", flush=True)
        tree_rows(X, y, n_rows=min(1000, n_rows))
    else:
        main(n_rows)
