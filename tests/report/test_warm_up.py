"""ml.warm_up, and the report's use of it: no process unless asked, no wait it does not need.

The compile-cost tests run in fresh processes on a numba cache of their own
(``NUMBA_CACHE_DIR``): warm_up fills it from empty, as right after installing.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens import InvalidParameterError

ROOT = pathlib.Path(ml.__file__).resolve().parents[1]


def _python(code, cache, timeout=600):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


#: Records the modellens kernels numba compiles from here on (numba's event API) in
#: ``compiled``.
LISTEN = """
    import warnings; warnings.simplefilter("ignore")
    from numba.core import event
    compiled = []

    class Listener(event.Listener):
        def on_start(self, e):
            pass

        def on_end(self, e):
            d = e.data.get("dispatcher") if isinstance(e.data, dict) else None
            if d is not None and d.py_func.__module__.startswith("modellens"):
                compiled.append(d.py_func.__qualname__)

    event.register("numba:compile", Listener())
"""

#: Runs the tree methods on a HistGradientBoosting model with a categorical feature,
#: XGBoost, LightGBM and a random forest classifier, and prints the modellens kernels
#: numba compiled meanwhile.
CHECK = LISTEN + """
    import numpy as np, pandas as pd
    import modellens as ml
    import lightgbm, xgboost
    from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestClassifier
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(400, 5)), columns=list("abcde"))
    X["e"] = pd.Categorical(np.where(X["e"] > 0, "u", "v"))
    y = X["a"] * X["b"] + (X["e"] == "u") + X["c"]
    Xn = X.assign(e=X["e"].cat.codes.astype(float))
    models = [(HistGradientBoostingRegressor(max_iter=20, categorical_features="from_dtype")
               .fit(X, y), X),
              (xgboost.XGBRegressor(n_estimators=10, max_depth=4).fit(Xn, y), Xn),
              (lightgbm.LGBMRegressor(n_estimators=10, verbose=-1).fit(Xn, y), Xn),
              (RandomForestClassifier(n_estimators=5, max_depth=6, random_state=0)
               .fit(Xn, y > 0), Xn)]
    del compiled[:]  # (fitting compiles nothing of ours; the calls below may)
    for model, data in models:
        ml.interactions(model, data.iloc[:300], sample=None, method="tree", progress=False)
        ml.shapley(model, data.iloc[:50], background=data.iloc[100:150], algorithm="tree",
                   progress=False)
        # the exact ICE curves, which ml.ale and ml.pdp read from the trees by default
        ml.ale(model, data.iloc[:300], ["a"], progress=False)
        ml.pdp(model, data.iloc[:300], ["b"], ice=True, progress=False)
    print(sorted(set(compiled)))
"""


#: Appended to CHECK in the process after warming: TreeSHAP with a background and without
#: (path-dependent, which warming left cold: it compiles here) and the H screen on two and
#: three rows of the demo model, then every modellens kernel that holds more than one type.
#: A literal 0 passed to a jitted leaf kernel typed it ``Literal[int](0)`` and compiled it
#: a second time (five kernels: about 1 s of a fresh install's first report); each kernel
#: is compiled (or loaded) once, for the one type every call gives it.
ONCE = """
    import sys
    from numba.core.registry import CPUDispatcher
    from modellens.datasets import load_demo
    m, X, y = load_demo()
    ml.shapley(m, X[:2], background=X[:2], algorithm="tree", progress=False)
    ml.shapley(m, X[:3], algorithm="tree", progress=False)
    ml.interactions(m, X[:3], sample=None, method="tree", progress=False)
    print({f"{name}.{key}": [str(s) for s in f.signatures]
           for name, module in list(sys.modules.items()) if name.startswith("modellens")
           for key, f in vars(module).items()
           if isinstance(f, CPUDispatcher) and f.py_func.__module__ == name
           and len(f.signatures) > 1})
"""


@pytest.fixture(scope="module")
def warmed(tmp_path_factory):
    """A numba cache that ``ml.warm_up`` filled in a fresh process, from empty: its folder,
    the methods that process warmed and the modellens kernels it compiled.  (One cold
    compile for the file: a second one cost its report test about 30 s of CPU.)"""
    cache = tmp_path_factory.mktemp("warmed")
    warmed = _python(textwrap.dedent(LISTEN) + "import modellens as ml\n"
                     "print(sorted(ml.warm_up(['effects', 'interactions', 'shapley', "
                     "'model_files'])))\n"
                     "print(sorted(set(compiled)))", cache)
    methods, compiled = warmed.strip().splitlines()[-2:]
    return cache, methods, compiled


def test_warm_up_compiles_every_kernel_the_reports_tree_methods_use(warmed):
    """After ml.warm_up in one process (on an empty cache), another process's tree H screen,
    TreeSHAP, ALE and PD with ICE of four kinds of tree models compile nothing (the design
    step of ALE and PD on 300 rows compiled its order statistics' kernels in the first
    report of a fresh install before ``"effects"`` warmed them): the tiny ensemble warm_up
    runs has the kernels' types of every model.  That process then runs the demo's calls
    and finds no kernel holding two types.

    (Each kernel the four models use was compiled once, by warm_up: a second type would
    have compiled in the checking process.  The calls run after the check, so they cannot
    fill a kernel warm_up left cold before it is checked.)"""
    cache, methods, compiled = warmed
    assert methods == "['effects', 'interactions', 'model_files', 'shapley']"
    assert compiled != "[]"  # the check sees compiles where there are some
    checked = _python(textwrap.dedent(CHECK) + textwrap.dedent(ONCE), cache)
    after, twice = checked.strip().splitlines()[-2:]
    assert after == "[]", f"compiled after warm_up: {after}"
    assert twice == "{}", f"compiled more than once: {twice}"


#: Writes model files of every format load_model checks (other models, sizes and
#: options than warm_up's own: multiclass, missing values, categorical splits, a forest
#: and a pipeline), loads each, and prints the modellens kernels numba compiled meanwhile.
CHECK_FILES = LISTEN + """
    import re, tempfile
    from pathlib import Path
    import numpy as np, pandas as pd
    import lightgbm, skops.io as sio, xgboost
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestRegressor
    from modellens.files import load_model
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(500, 4)), columns=list("abcd"))
    X["d"] = (X["d"] > 0).astype(float) + (X["d"] > 1)
    y = X["a"] - X["b"] + X["d"]
    klass = np.digitize(y, [-1.0, 1.0])
    Xn = X.mask(rng.random(X.shape) < 0.1)
    folder = Path(tempfile.mkdtemp())
    xgboost.XGBClassifier(n_estimators=5, max_depth=5).fit(Xn, klass).save_model(
        folder / "m.ubj")
    xgboost.XGBRegressor(n_estimators=5, max_depth=4).fit(Xn, y).save_model(folder / "m.json")
    text = lightgbm.LGBMClassifier(n_estimators=5, verbose=-1).fit(
        X.to_numpy(), klass, categorical_feature=[3]).booster_.model_to_string()
    (folder / "sizes.txt").write_text(text)
    (folder / "in_turn.txt").write_text(re.sub(r"(?m)^tree_sizes=.*\\n", "", text))
    sio.dump(RandomForestRegressor(n_estimators=3, max_depth=5).fit(X, y), folder / "f.skops")
    sio.dump(HistGradientBoostingClassifier(max_iter=5, categorical_features=[3]).fit(X, klass),
             folder / "h.skops")
    del compiled[:]
    for path in sorted(folder.iterdir()):
        load_model(path)
    print(sorted(set(compiled)))
"""


def test_warm_up_compiles_every_kernel_of_the_model_file_checks(warmed):
    """After ml.warm_up(["model_files"]) (on an empty cache, in the fixture's process),
    another process's load_model of XGBoost UBJSON and JSON, LightGBM text (its tree sizes
    read in threads, and without them in turn) and skops files of other models than warm_up's
    compiles nothing of ours: the first load of a large XGBoost file waited ~15 s for its
    checks' kernels in a fresh install.  (It fails with any of warm_up's files left out:
    each format's checks are kernels of their own.)"""
    cache = warmed[0]
    assert "scan_xgboost" in warmed[2] or "_scan" in warmed[2]  # compiled there, from empty
    after = _python(textwrap.dedent(CHECK_FILES), cache).strip().splitlines()[-1]
    assert after == "[]", f"compiled after warm_up: {after}"


def test_the_report_starts_no_process_unless_asked(warmed, tmp_path):
    """ml.report of a tree model with no method stamped warm starts no child process; with
    warm_up=True it starts exactly one, isolated (python -I), and the numbers are equal.

    The report decides on the stamps alone (``_warm._stamp``), so the kernels may lie in
    the cache already: a copy of the warmed one without its stamps (compiling them here
    again cost about 30 s of CPU and tested nothing more)."""
    cache = tmp_path / "numba"
    shutil.copytree(warmed[0], cache)
    for stamp in cache.glob("modellens-warm-*"):
        stamp.unlink()
    code = """
        import subprocess, warnings; warnings.simplefilter("ignore")
        import numpy as np, pandas as pd
        import modellens as ml
        from sklearn.ensemble import HistGradientBoostingRegressor
        started = []
        real = subprocess.Popen

        class Recorded(real):
            def __init__(self, args, *a, **k):
                started.append(list(args))
                super().__init__(args, *a, **k)

        rng = np.random.default_rng(0)
        X = pd.DataFrame(rng.normal(size=(300, 12)), columns=[f"x{i}" for i in range(12)])
        y = X["x0"] * X["x1"] + X["x2"]
        model = HistGradientBoostingRegressor(max_iter=20).fit(X, y)  # (loky runs lscpu)
        subprocess.Popen = Recorded
        small = dict(sections=["shapley"], n_explain=5, n_background=10, progress=False)
        plain = ml.report(model, X, **small)
        print(len(started))
        warmed = ml.report(model, X, warm_up=True, **small)
        print(len(started), started[-1][1] if started else None)
        a, b = (r.sections["shapley"].data["attributions"] for r in (plain, warmed))
        print(a.method, np.array_equal(a.values, b.values))
    """
    lines = _python(code, cache).split()
    assert lines == ["0", "1", "-I", "shapley-tree", "True"]


def test_the_report_waits_only_for_the_kernels_it_uses(monkeypatch, tmp_path):
    """Exact Shapley values within the budget need no TreeSHAP kernels: the report then
    waits for the effects' and the interaction screen's kernels only, and runs the sections that need no
    kernels before those that do."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    waited, order = [], []
    # no stamp of warm kernels where this test looks: the handle's child is started
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(ml.Warming, "wait",
                        lambda self, methods=None, timeout=300: waited.append(methods))
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    model = HistGradientBoostingRegressor(max_iter=10).fit(X, X["a"] * X["b"])
    warming = ml.warm_up(["interactions", "shapley"], background=True)
    try:
        rep = ml.report(model, X, X["a"] * X["b"], warm_up=warming, n_explain=4,
                        n_background=5, progress=False, log=order.append)
    finally:
        warming.stop()
    assert rep.sections["shapley"].data["attributions"].method == "shapley-exact"
    keys = [line.split(":")[0] for line in order[1:] if not line.startswith("total")]
    # (the handle compiles no "effects": waiting for it returns at once)
    assert waited == [("effects",), ("effects", "interactions")]
    # every section that needs no compiled kernel runs first; the interaction screen last
    # (the effects, which others read, keep their place)
    assert keys[0] == "data" and keys[-1] == "interaction"
    assert set(keys) == {"data", "quality", "effects", "regions", "shapley", "conditional",
                         "lime", "interaction"}


def test_warm_up_checks_its_options_and_skips_tree_kernels_of_models_without_trees():
    with pytest.raises(InvalidParameterError, match="methods must name some of"):
        ml.warm_up(["treeshap"])
    with pytest.raises(InvalidParameterError, match="background"):
        ml.warm_up(background="yes")
    assert ml.warm_up(["interactions", "shapley"], model=lambda A: A[:, 0]) == {}
    assert ml.warm_up(["pdp"], model=lambda A: A[:, 0], background=True) is None
    # the design step of pdp and ale runs for every model: warmed for a function too
    assert list(ml.warm_up(model=lambda A: A[:, 0])) == ["effects"]
    with pytest.raises(InvalidParameterError, match="warm_up must be"):
        ml.report(lambda A: A[:, 0], np.zeros((10, 2)), warm_up="background")


def test_the_background_child_leaves_the_working_directory_off_its_path(tmp_path,
                                                                         monkeypatch):
    from modellens._warm import _child_code

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", str(tmp_path), "."] + sys.path)
    code = _child_code(["pdp"])
    assert "-I" not in code  # the flag is on the command line, the path in the program
    path_line = next(line for line in code.splitlines() if line.startswith("sys.path[:]"))
    kept = eval(path_line.split("=", 1)[1])  # noqa: S307 - our own literal
    assert kept == [p for p in sys.path[3:] if p and pathlib.Path(p).resolve() != tmp_path]


def _sleeping_warming():
    """A Warming whose child holds a core (sleeps) until stopped."""
    warming = object.__new__(ml.Warming)
    warming.process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    return warming


def test_the_model_leaves_the_compiling_child_its_core():
    """While the kernels compile in a child, an OpenMP model (HistGradientBoosting) runs one
    thread fewer: its threads wait for the slowest, so a thread sharing the child's core
    made the fresh demo's effects 10.4 s instead of 2.1 s on 2 cores."""
    from sklearn.ensemble import HistGradientBoostingRegressor  # noqa: F401 (loads OpenMP)
    from threadpoolctl import threadpool_info, threadpool_limits

    cores = len(os.sched_getaffinity(0))
    if cores < 2:
        pytest.skip("one core: nothing to leave")

    def openmp_threads():  # per OpenMP runtime: torch and scikit-learn may load their own
        return {i["filepath"]: i["num_threads"] for i in threadpool_info()
                if i["user_api"] == "openmp"}

    # OpenMP's default, a thread per core (the test workers run it on one thread, see
    # tests/conftest.py): the situation the child's core is left in
    with threadpool_limits(limits=cores, user_api="openmp"):
        before = openmp_threads()
        assert before and all(n == cores for n in before.values()), before
        warming = _sleeping_warming()
        try:
            with warming.leave_a_core():
                inside = openmp_threads()
            assert openmp_threads() == before
        finally:
            warming.stop()
        # every runtime below the cores the child leaves, none raised above its own count
        assert inside == {lib: min(n, cores - 1) for lib, n in before.items()}
        assert any(n == cores - 1 < before[lib] for lib, n in inside.items())
        with warming.leave_a_core():  # a finished child holds no core
            assert openmp_threads() == before


def test_leaving_a_core_never_raises_a_count_the_user_lowered(monkeypatch):
    """Two OpenMP runtimes (scikit-learn's and torch's) at 2 and 1 threads on 8 cores: the
    limit is per runtime, so the one at 1 stays at 1 (one limit for all raised it to 2)."""
    torch = pytest.importorskip("torch")
    from sklearn.ensemble import HistGradientBoostingRegressor  # noqa: F401 (loads OpenMP)
    from threadpoolctl import threadpool_info, threadpool_limits

    def openmp_threads():
        return {i["filepath"]: i["num_threads"] for i in threadpool_info()
                if i["user_api"] == "openmp"}

    kept = torch.get_num_threads()
    warming = _sleeping_warming()
    try:
        with threadpool_limits(limits=2, user_api="openmp"):
            torch.set_num_threads(1)
            before = openmp_threads()
            if len(before) < 2:
                pytest.skip("torch and scikit-learn share one OpenMP runtime here")
            monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))
            with warming.leave_a_core():
                assert openmp_threads() == before  # 7 free cores: nothing to lower or raise
    finally:
        torch.set_num_threads(kept)
        warming.stop()
