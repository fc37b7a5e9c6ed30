"""``n_jobs`` has one meaning everywhere, scikit-learn's: None is 1 (unless ``ml.config``
says otherwise), -1 every core, -2 all but one; the tree kernels' threads included."""

import os

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingRegressor

import modellens as ml
from modellens._config import n_threads, resolve_options

numba = pytest.importorskip("numba")


def test_the_count_of_n_jobs_is_scikit_learns():
    cores = os.cpu_count() or 1
    assert n_threads(None) == 1 and n_threads(1) == 1 and n_threads(3) == 3
    assert n_threads(-1) == cores and n_threads(-2) == max(1, cores - 1)
    assert n_threads(-cores - 5) == 1
    assert resolve_options().threads == 1
    with ml.config(n_jobs=-1):
        assert resolve_options().threads == cores
        assert resolve_options(n_jobs=2).threads == 2  # the call's keyword wins


@pytest.fixture(scope="module")
def tree():
    X = np.random.default_rng(0).normal(size=(80, 3))
    return X, GradientBoostingRegressor(n_estimators=3, max_depth=2,
                                        random_state=0).fit(X, X[:, 0] * X[:, 1])


def _threads_seen(monkeypatch, module, name, call):
    """numba's thread count when ``module.name`` (a kernel entry) runs during ``call``."""
    inner, seen = getattr(module, name), []

    def spy(*args, **kwargs):
        seen.append(numba.get_num_threads())
        return inner(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    call()
    monkeypatch.setattr(module, name, inner)
    assert seen, f"{name} did not run"
    return set(seen)


def test_the_tree_kernels_take_the_threads_n_jobs_asks_for(tree, monkeypatch):
    from modellens.attribution import tree as treeshap
    from modellens.effects import _interactions_tree
    from modellens.trees import kernels as _tree_kernels

    X, model = tree
    most = numba.config.NUMBA_NUM_THREADS
    every = min(os.cpu_count() or 1, most)
    entries = {
        "shapley": (treeshap, "tree_values",
                    lambda **kw: ml.shapley(model, X[:5], algorithm="tree", **kw)),
        "pdp": (_tree_kernels, "pd_recursion",
                lambda **kw: ml.pdp(model, X, [0], method="tree", **kw)),
        "interactions": (_interactions_tree, "tree_statistics",
                         lambda **kw: ml.interactions(model, X, method="tree", sample=20,
                                                      random_state=0, **kw)),
    }
    for name, (module, entry, call) in entries.items():
        assert _threads_seen(monkeypatch, module, entry, lambda: call()) == {1}, name
        assert _threads_seen(monkeypatch, module, entry, lambda: call(n_jobs=-1)) == {every}, \
            name
        if most >= 2:
            assert _threads_seen(monkeypatch, module, entry,
                                 lambda: call(n_jobs=2)) == {2}, name
            with ml.config(n_jobs=2):
                assert _threads_seen(monkeypatch, module, entry, call) == {2}, name
