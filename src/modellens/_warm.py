"""``ml.warm_up``: compile the tree methods' numba kernels before they are needed.

The tree methods (``shapley(algorithm="tree")``, ``interactions(method="tree")``,
``pdp(method="tree")``) and the design step of every model's ``pdp`` and ``ale`` (its
columns' order statistics: grids and bins) run numba kernels that compile on their
first call in a fresh environment and are cached on disk for every later process.
Warming runs each asked method once on a tiny tree ensemble built here: the parsed
tree arrays have the same types whatever library the model comes from, so the
same compiled kernels serve every model, and warming needs to know nothing
about the kernels themselves.  The checks ``load_model`` runs on a model file are
kernels of each format's own: ``"model_files"`` writes a small file of each format
whose library is installed and loads it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from pathlib import Path
from typing import Any, Literal, overload

from ._kernel_cache import code_key
from ._process import usable_cores
from ._validation import InvalidParameterError

__all__ = ["warm_up", "Warming", "METHODS"]

#: What can be warmed, in the order a report needs them (then the model files' checks).
METHODS = ("effects", "interactions", "shapley", "shapley_path", "shapley_interactions", "pdp",
           "model_files")
#: What every model's methods run (the others are the tree methods' kernels).
_ANY_MODEL = ("effects",)
#: What no model's methods run: left out where ``model=`` is given.
_NO_MODEL = ("model_files",)


@overload
def warm_up(methods: str | Iterable[str] | None = None, *, model: Any = None,
            background: Literal[False] = False) -> dict[str, float]: ...


@overload
def warm_up(methods: str | Iterable[str] | None = None, *, model: Any = None,
            background: Literal[True]) -> Warming | None: ...


def warm_up(methods: str | Iterable[str] | None = None, *, model: Any = None,
            background: bool = False) -> dict[str, float] | Warming | None:
    """Compile the numba kernels of the tree methods now, so that their first call is fast.

    In a fresh environment the first ``ml.shapley(algorithm="tree")``,
    ``ml.interactions(method="tree")`` or ``ml.pdp(method="tree")``, and the
    first ``ml.pdp`` or ``ml.ale`` of any model on more than 256 rows, waits a
    few seconds while numba compiles its kernels; they are then cached on
    disk (numba's ``cache=True``, under ``NUMBA_CACHE_DIR`` when set) and
    load in milliseconds in every later process.  ``warm_up`` pays that cost
    at a moment of your choosing: at install time, in a notebook's first
    cell, or in the background while other work runs.  It runs each method
    once on a tiny tree ensemble of its own (the kernels are the same for
    every tree model the library reads), never on your model or data, and
    the numbers of later calls do not depend on it.

    The kernels of requests over fewer than about a thousand rows (such as
    the report's) are compiled; larger requests use threaded twins of the
    kernels, which compile on their first call, a small share of a request
    that size.

    Parameters
    ----------
    methods : str or list of str, optional
        Which kernels: ``"effects"`` (the design step of ``ml.pdp`` and
        ``ml.ale`` on any model: its columns' order statistics, for grids and
        bins; the report's effects and interaction sections), ``"shapley"`` (TreeSHAP with a background:
        interventional, as the report runs it), ``"shapley_path"`` (TreeSHAP
        without a background: path-dependent), ``"shapley_interactions"``
        (TreeSHAP interaction values, both games), ``"interactions"`` (the
        tree H statistics of :func:`interactions`), ``"pdp"`` (tree partial
        dependence), ``"model_files"`` (the checks :func:`load_model` runs on
        the XGBoost, LightGBM and skops files of the libraries installed: the
        first load of a large XGBoost file otherwise waits ~15 s while they
        compile).  Default: all of them.
    model : estimator, optional
        Warm only what this model's methods run: the tree methods' kernels
        only if it is a tree ensemble they read (``"effects"`` serves every
        model; ``"model_files"``, which no model's methods run, is left out).
        With nothing left to warm, return at once: ``{}``, or None with
        ``background=True``.
    background : bool, default=False
        Compile in a separate Python process and return at once with a
        :class:`Warming` handle.  The process runs in isolated mode
        (``python -I``: no working directory, ``PYTHONPATH`` or user site on
        its path) with this process's module path, so it imports what this
        process imports and nothing from the working directory.  Methods
        already warmed for this very code are left out (a stamp beside
        numba's cache, written once a method's run ends, names the numba and
        Python versions and the contents of every source file): with all of
        them warm, no process starts and None is returned.

    Returns
    -------
    dict or Warming or None
        Seconds each method took (``background=False``); a handle whose
        ``wait()`` returns True once the kernels are on disk
        (``background=True``).

    See Also
    --------
    shapley, interactions, pdp : The tree methods whose kernels are warmed.
    report : ``warm_up=True`` overlaps the compilation with the sections
        that need no kernels.

    Examples
    --------
    >>> import modellens as ml
    >>> seconds = ml.warm_up(["interactions"])
    >>> list(seconds)
    ['interactions']
    >>> ml.warm_up(["shapley"], model=lambda X: X.sum(axis=1))  # no trees: nothing to do
    {}
    """
    asked = _check_methods(methods)
    if not isinstance(background, bool):
        raise InvalidParameterError(f"background must be True or False, got {background!r}.")
    if model is not None:
        trees = _reads_trees(model)
        asked = [m for m in asked if m not in _NO_MODEL and (m in _ANY_MODEL or trees)]
    if background:  # a child costs seconds of imports: none for kernels already cached
        asked = [m for m in asked if not _stamp(m).exists()]
    if not asked:
        return None if background else {}
    if background:
        return Warming(asked)
    return {name: _run(name) for name in asked}


def _check_methods(methods) -> list:
    if methods is None:
        return list(METHODS)
    names = [methods] if isinstance(methods, str) else list(methods)
    unknown = [m for m in names if m not in METHODS]
    if unknown or not names:
        raise InvalidParameterError(f"methods must name some of {list(METHODS)}, got "
                                    f"{methods!r}.")
    return list(dict.fromkeys(names))


def _reads_trees(model) -> bool:
    """Whether the tree methods read this model (a Pipeline's trees see encoded columns)."""
    from .models import tree_ensemble_name

    return tree_ensemble_name(model) is not None and not hasattr(model, "steps")


def _tiny_ensemble():
    """A small decision tree with missing values: its parsed arrays have the types of every
    tree model's (a tree's fit is milliseconds, a boosted ensemble's starts OpenMP)."""
    import numpy as np
    import pandas as pd
    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(64, 3)), columns=["a", "b", "c"])
    y = X["a"] * X["b"] + (X["c"] > 0)
    X.loc[::7, "b"] = np.nan
    return DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y), X


def _run(name: str) -> float:
    """Run one method once on the tiny ensemble; its seconds."""
    import warnings

    import numpy as np

    from .attribution import shapley
    from .effects.ale import ale
    from .effects.interactions import interactions
    from .effects.pdp import pdp
    from .trees import compile_leaf_reader

    model, X = _tiny_ensemble()
    started = time.perf_counter()
    # the LightGBM cache's leaf reader: every tree method reads it on a LightGBM model
    compile_leaf_reader()
    quiet: dict = {"progress": False}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "shapley":
            shapley(model, X.iloc[:4], background=X.iloc[8:16], algorithm="tree", **quiet)
        elif name == "shapley_path":
            shapley(model, X.iloc[:4], algorithm="tree", **quiet)
        elif name == "shapley_interactions":
            shapley(model, X.iloc[:4], algorithm="tree", interactions=True, **quiet)
            shapley(model, X.iloc[:4], background=X.iloc[8:16], algorithm="tree",
                    interactions=True, **quiet)
        elif name == "effects":
            # rows past the quantile selection's short-column cut, so that its kernels
            # (ALE's bins of any model) compile too
            many = X.sample(320, replace=True, random_state=0) + np.linspace(0, 1e-3, 320)[:, None]
            ale(model, many, ["a"], **quiet)
        elif name == "interactions":
            interactions(model, X.iloc[:16], sample=None, method="tree", **quiet)
        elif name == "model_files":
            _load_each_format(model, X)
        else:
            pdp(model, X.iloc[:16], method="tree", grid=4, **quiet)
    seconds = time.perf_counter() - started
    _mark(name)
    return seconds


def _load_each_format(tree, X) -> None:
    """``load_model`` of a small model file of each format whose library is installed
    (skops, XGBoost JSON and UBJSON, LightGBM text with and without its tree sizes and
    with a categorical split: each of its checks' paths), written to a folder of its
    own: their checks' kernels compile as for any file (they depend on the format, not
    on the model)."""
    import importlib.util
    import tempfile

    from .files import load_model

    y = tree.predict(X)
    # the categorical column as the boosters' categorical splits read it (no NaN)
    coded = X.fillna(0).assign(c=(X["c"] > 0).astype(float))
    writers = {"skops": _skops_files, "xgboost": _xgboost_files, "lightgbm": _lightgbm_files}
    with tempfile.TemporaryDirectory(prefix="modellens-warm-") as folder:
        for library, write in writers.items():
            if importlib.util.find_spec(library) is not None:
                for path in write(Path(folder), tree, X, coded, y):
                    load_model(path)


def _skops_files(folder: Path, tree, X, coded, y) -> list[Path]:
    """scikit-learn's two kinds of tree in skops files: Tree, and TreePredictor with a
    categorical feature."""
    import skops.io as sio
    from sklearn.ensemble import HistGradientBoostingRegressor

    hist = HistGradientBoostingRegressor(max_iter=2, max_depth=3,
                                         categorical_features=[2]).fit(coded, y)
    for name, model in (("tree", tree), ("hist", hist)):
        sio.dump(model, folder / f"{name}.skops")
    return [folder / "tree.skops", folder / "hist.skops"]


def _xgboost_files(folder: Path, tree, X, coded, y) -> list[Path]:
    """One XGBoost booster saved as JSON and as UBJSON."""
    import xgboost

    booster = xgboost.XGBRegressor(n_estimators=2, max_depth=3, n_jobs=1).fit(X, y)
    paths = [folder / "xgboost.json", folder / "xgboost.ubj"]
    for path in paths:
        booster.save_model(path)
    return paths


def _lightgbm_files(folder: Path, tree, X, coded, y) -> list[Path]:
    """LightGBM model texts: as saved (the tree sizes read in threads), without the tree
    sizes (the trees read in turn), with a categorical split."""
    import re

    import lightgbm

    def text(**fit) -> str:
        booster = lightgbm.LGBMRegressor(n_estimators=2, num_leaves=4, min_child_samples=5,
                                         n_jobs=1, verbose=-1).fit(coded.to_numpy(), y, **fit)
        return booster.booster_.model_to_string()

    plain = text()
    texts = {"sizes": plain, "in_turn": re.sub(r"(?m)^tree_sizes=.*\n", "", plain),
             "categorical": text(categorical_feature=[2])}
    for name, body in texts.items():
        (folder / f"lightgbm_{name}.txt").write_text(body)
    return [folder / f"lightgbm_{name}.txt" for name in texts]


def _stamp(name: str) -> Path:
    """The file that says ``name``'s kernels are in numba's cache for this code: where numba
    caches them (``NUMBA_CACHE_DIR``, or the ``__pycache__`` beside the sources), so that
    a cache emptied by removing its folder takes its stamps with it."""
    folder = os.environ.get("NUMBA_CACHE_DIR") or Path(__file__).resolve().parent / "__pycache__"
    return Path(folder) / f"modellens-warm-{name}-{code_key()}"


def _mark(name: str) -> None:
    """Stamp ``name`` warm (and drop its stamps of other code); a folder that cannot be
    written keeps no stamp, and every background warm-up then starts its child."""
    stamp = _stamp(name)
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        for old in stamp.parent.glob(f"modellens-warm-{name}-*"):
            if old != stamp:
                old.unlink(missing_ok=True)
        stamp.touch()
    except OSError:
        pass


class Warming:
    """The handle of a background warm-up: a child process compiling the kernels.

    ``ml.warm_up(..., background=True)`` returns it; ``ml.report(...,
    warm_up=handle)`` waits for it before the sections that use the kernels.

    Attributes
    ----------
    methods : list of str
        What the child compiles, in order.
    process : subprocess.Popen or None
        The child (None when it could not be started: the methods then
        compile on their first call).

    Examples
    --------
    >>> import modellens as ml
    >>> warming = ml.warm_up(["interactions"], background=True)
    >>> warming is None or warming.wait()  # None: already warm for this code, no child
    True
    """

    def __init__(self, methods):
        self.methods = list(methods)
        self._ready = {m: threading.Event() for m in self.methods}
        self.process: subprocess.Popen | None = None
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-c", _child_code(self.methods)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                text=True)
        except OSError:  # no child: each method compiles on first use, as without warming
            for event in self._ready.values():
                event.set()
            return
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            event = self._ready.get(line.strip())
            if event is not None:
                event.set()
        self.process.wait()
        for event in self._ready.values():  # ended (or failed): nothing more to wait for
            event.set()

    def done(self) -> bool:
        """Whether the child has ended."""
        return self.process is None or self.process.poll() is not None

    def wait(self, methods: str | Iterable[str] | None = None, timeout: float = 300) -> bool:
        """Block until the kernels of ``methods`` (default: all) are compiled; True if they are.

        A child that is still compiling after ``timeout`` seconds is stopped
        (the methods then compile on their first call).
        """
        names = self.methods if methods is None else [
            m for m in ([methods] if isinstance(methods, str) else methods) if m in self._ready]
        deadline = time.monotonic() + timeout
        for name in names:
            if not self._ready[name].wait(max(0.0, deadline - time.monotonic())):
                self.stop()
                return False
        return self.process is not None and (self.process.poll() in (None, 0))

    def stop(self) -> None:
        """End the child now (kernels it compiled stay cached)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    @contextmanager
    def leave_a_core(self) -> Iterator[None]:
        """Run OpenMP models with one thread fewer than the cores while the child compiles.

        A model that calls OpenMP (HistGradientBoosting, XGBoost, LightGBM)
        would otherwise run a thread on the core the child holds; OpenMP's
        threads wait for the slowest one, so on 2 cores the demo's effects
        took 10.4 s instead of 2.1 s.  Each OpenMP runtime keeps its own
        count, and none is raised (a count the user lowered stays).  OpenMP
        counts threads per calling thread, so this reaches the model called
        in this thread (``n_jobs=1``), not the engine's worker threads.
        """
        if self.done():
            yield
            return
        from threadpoolctl import ThreadpoolController

        free = max(1, usable_cores() - 1)
        with ExitStack() as stack:
            controller = ThreadpoolController()
            for lib in controller.select(user_api="openmp").lib_controllers:
                if lib.num_threads > free:
                    stack.enter_context(
                        controller.select(filepath=lib.filepath).limit(limits=free))
            yield


def leave_a_core(warming: Warming | None):
    """``warming.leave_a_core()``, or nothing to do without a warming child."""
    return nullcontext() if warming is None else warming.leave_a_core()


def _child_code(methods) -> str:
    """The child's program: this process's path without the working directory, and
    modellens loaded from this very folder (not looked up on the path)."""
    here = Path(__file__).resolve().parent
    cwd = Path.cwd().resolve()
    paths = []
    for entry in sys.path:
        try:
            if entry and Path(entry).resolve() != cwd:
                paths.append(entry)
        except OSError:
            continue
    return (
        "import importlib.util, sys\n"
        f"sys.path[:] = {paths!r}\n"
        f"spec = importlib.util.spec_from_file_location('modellens', {str(here / '__init__.py')!r},"
        f" submodule_search_locations=[{str(here)!r}])\n"
        "ml = importlib.util.module_from_spec(spec)\n"
        "sys.modules['modellens'] = ml\n"
        "spec.loader.exec_module(ml)\n"
        "from modellens._warm import _run\n"
        f"for name in {list(methods)!r}:\n"
        "    try:\n"
        "        _run(name)\n"
        "    except Exception:  # the method then compiles on its first call\n"
        "        pass\n"
        "    print(name, flush=True)\n")
