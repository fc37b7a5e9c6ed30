import os
import pathlib
import shutil
import signal
import subprocess
import sys

if os.environ.get("PYTEST_XDIST_WORKER"):
    # Two workers on two cores: BLAS (OpenBLAS, numpy's and scipy's) and OpenMP
    # (scikit-learn's HistGradientBoosting, XGBoost, LightGBM, torch) run one thread in
    # each, as a process that shares its cores should.  Their default, a thread per core,
    # then waits on a thread that has no core: with the cores busy a symmetric
    # eigendecomposition of 80 x 80 cost 50 times the CPU (30 times the time), and a small
    # HistGradientBoosting fit over 40 times the time.  Set before numpy loads, and
    # inherited by the processes tests start (Dask's workers set the same); a count the
    # environment already sets is kept.  No test asserts BLAS's threads; the one that
    # asserts OpenMP's (tests/report/test_warm_up.py) sets them to the cores itself.
    # numba keeps a thread per core (its tests assert that).  ``-n 0`` keeps the defaults.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")

import matplotlib  # noqa: E402
import pytest  # noqa: E402

matplotlib.use("Agg")


#: Subjects whose tests are slow as a whole (clusters, whole reports, the command line):
#: the fast loop (``-m "not slow"``) leaves them out.
SLOW_SUBJECTS = {"dask", "report", "cli"}

#: Test files that run as one unit under pytest-xdist (``-n 2 --dist loadfile``, set in
#: pyproject.toml), named by that unit.  Every other file is a unit of its own: its tests
#: run in one worker, in file order, and its module fixtures are built once.
SHARED_UNITS = {
    # both run mypy with the repository's configuration, so on its one cache (.mypy_cache
    # in the repository root): one after the other, the second reads the package's types
    # from the cache the first wrote instead of checking the package again
    "tests/structure/test_typing.py": "mypy",
    "tests/structure/test_overloads.py": "mypy",
    # the three share the demo's page and the injection page, built once per test process
    # (tests/support.py demo_page, injected_page: a report and its PNGs, ~10-20 s of CPU
    # each) and one Chromium: one process runs them all
    "tests/report/test_report.py": "browser",
    "tests/report/test_report_browser.py": "browser",
    "tests/report/test_report_interactive.py": "browser",
}

#: Folders whose files run as one unit, named by that unit.  tests/dask: the files share one
#: cluster per test process while they run in a row (tests/dask/conftest.py), and it closes
#: when the process goes on to a file elsewhere; as units of their own they were spread
#: over both workers between other files, and each run of them started a cluster (two
#: worker processes that import the package: seconds of CPU each time).
SHARED_FOLDERS = {
    "tests/dask/": "dask",
}

#: The longest units, longest first: under xdist the workers start with them, so that no
#: long unit is left running alone at the end while the other worker idles.  Ranked by the
#: clean-clone CI run at 55c67e7 (its ``--durations=0``: worker-seconds of setup + call +
#: teardown per unit, out of 2,945), before session 22's changes; re-rank from a new one.
#: It orders, never selects: a file not named here keeps its collection order.  A new file
#: over ~30 s belongs here, at its rank.
#:
#: Except the first two: each worker starts with one (xdist hands the first unit to one
#: worker, the second to the other) that needs no kernel from the shared numba cache,
#: while the controller's child compiles them there (_warm_the_shared_cache): mypy, and
#: test_warm_up, whose children compile on caches of their own.
LONG_FIRST = [
    "mypy",  # 94 (ci15): test_overloads 57 + test_typing 37, on a clean clone's cold cache
    "tests/report/test_warm_up.py",  # ~100: processes on empty numba caches
    # ~350: test_report_interactive 237 + test_report_browser 81 + test_report 71, less
    # the two pages they now share (SHARED_UNITS)
    "browser",
    "dask",  # 317: every file of tests/dask (SHARED_FOLDERS), 130 + 110 + 55 s and the rest
    "tests/cli/test_working_directory.py",  # 173: cold processes, clusters, loky pools
    "tests/docs/test_docs.py",  # 163: the documentation build runs the gallery
    "tests/fuzz/test_fuzz_data.py",  # 129: one test, 40 inputs (11 reports) in one child
    "tests/report/test_model_file_safety.py",  # 114
    "tests/cli/test_cli.py",  # 114
    "tests/fuzz/test_fuzz_safety.py",  # 115 before its cases were forked
    "tests/cli/test_cli_multiclass_booster.py",  # 101
    "tests/inputs/test_polars.py",  # 60
    "tests/cli/test_demo.py",  # 46
    "tests/attribution/test_tree_serial.py",  # 40
    "tests/report/test_report_truth.py",  # 36
    "tests/cli/test_not_yet_tried.py",  # 36
    "tests/attribution/test_tree_quadrature.py",  # 33
    "tests/report/test_report_markup.py",  # 31
    "tests/attribution/test_text_transformer.py",  # 31
    "tests/plot/test_notebook.py",  # 28
    "tests/report/test_model_file_threads.py",  # 28
    "tests/cli/test_cli_outputs.py",  # 28
    "tests/report/test_warm_stamp.py",  # 25
    "tests/report/test_report_multiclass.py",  # 23
    "tests/fuzz/test_fuzz_runner.py",  # 23
    "tests/report/test_report_pages.py",  # 22
    "tests/cli/test_big_data_file.py",  # 21
    "tests/attribution/test_shapley_conditional.py",  # 20
]


@pytest.fixture(autouse=True)
def _close_figures():
    """Figures a test drew and left open are closed after it.  Left open, they added up in
    the worker: at 20, pyplot warns, and a later test's report printed that warning
    (``modellens: warning: More than 20 figures have been opened``) above its one error
    line (the idle run of session 15: two tests of tests/cli/test_not_yet_tried.py failed
    so, after the files scheduled before them on that worker).  A test's own figures
    still count toward the warning while it runs."""
    yield
    plt = sys.modules.get("matplotlib.pyplot")  # (never imported here for nothing)
    if plt is not None:
        plt.close("all")


def pytest_sessionfinish(session):
    """The process's headless Chromium (tests/support.py, one per test process) ends with
    the session: an xdist worker may leave without running ``atexit``."""
    support = sys.modules.get("support")
    if support is not None and hasattr(support, "_stop_browser"):
        support._stop_browser()


def pytest_configure(config):
    # pytest-timeout (the test extra) registers ``timeout``; without it the marker is only
    # a label, and --strict-markers must not refuse it
    if not config.pluginmanager.hasplugin("timeout"):
        config.addinivalue_line("markers", "timeout(seconds): a test's own time limit "
                                           "(pytest-timeout)")
    if not hasattr(config, "workerinput") and config.getoption("numprocesses", 0):
        _WARMING.append(_warm_the_shared_cache())


#: The xdist controller's warm-up child (see _warm_the_shared_cache), stopped at the end.
_WARMING: list = []

#: Compiles every kernel ``ml.warm_up`` knows that is not stamped warm for this code
#: (the model-file checks' included: test_model_file_safety compiled them in 64 s of
#: CPU), in numba's cache of the package the workers import: by ``warm_up``'s own
#: background child, a process of this one's group (killed with it).
_WARM_CHILD = """
import warnings; warnings.simplefilter("ignore")
import modellens as ml
warming = ml.warm_up(background=True)  # None: every method already warm for this code
if warming is not None:
    warming.wait()
"""


def _warm_the_shared_cache():
    """Under xdist, the controller compiles the kernels into the workers' shared numba
    cache in a child of its own, once, while the workers start with the units that use
    none (LONG_FIRST: mypy, and test_warm_up's children on caches of their own).  On a
    clean clone each worker, and each process the tests start (command-line children,
    Dask workers), compiled a kernel it met before any other had written it: the two
    workers often compiled the same ones at the same time.  Tests of an empty cache keep
    theirs (``NUMBA_CACHE_DIR`` in their children); a warm cache changes no number."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    try:
        return subprocess.Popen([sys.executable, "-c", _WARM_CHILD], env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:  # each kernel then compiles where it is first used, as before
        return None


def pytest_unconfigure(config):
    for child in _WARMING:
        if child is not None and child.poll() is None:
            try:  # warm_up's child with it: both in the group its session started
                os.killpg(child.pid, signal.SIGKILL)
            except OSError:
                child.kill()
            child.wait()


@pytest.fixture()
def kernels_without_stamps():
    """``copy(cache, methods)``: the kernels of ``ml.warm_up``'s ``methods`` (default:
    the report's, effects, interactions and shapley) from this process's numba cache,
    copied where a process with ``NUMBA_CACHE_DIR=cache`` reads them, and no warm-up
    stamp.  ``ml.warm_up`` decides on the stamps alone, so a report or a background
    warm-up on that cache still starts its compile child, which then loads the kernels
    instead of compiling them again (the cold demo's processes 38 s of CPU instead of
    72, the effects' child 5 instead of 18), for tests of that child and not of the
    compiling.  This process compiles them first if no test has."""
    import modellens as ml

    def copy(cache, methods=("effects", "interactions", "shapley")):
        from numba.core.caching import _CacheLocator
        from numba.core.registry import CPUDispatcher

        ml.warm_up(methods)
        folders = {f._cache._cache_path: f.py_func.__code__.co_filename
                   for name, module in list(sys.modules.items())
                   if name.startswith("modellens") for f in vars(module).values()
                   if isinstance(f, CPUDispatcher) and hasattr(f._cache, "_cache_path")}
        for folder, source in folders.items():
            into = pathlib.Path(cache) / _CacheLocator.get_suitable_cache_subpath(source)
            into.mkdir(parents=True, exist_ok=True)
            for path in pathlib.Path(folder).glob("*.nb[ic]"):
                shutil.copy2(path, into)
        # (the warm_up above stamps where NUMBA_CACHE_DIR points: a test may have set it)
        for stamp in pathlib.Path(cache).glob("modellens-warm-*"):
            stamp.unlink()
        return pathlib.Path(cache)

    return copy


def _unit(path):
    for folder, unit in SHARED_FOLDERS.items():
        if path.startswith(folder):
            return unit
    return SHARED_UNITS.get(path, path)


def pytest_collection_modifyitems(config, items):
    for item in items:
        subject = item.path.parent.name
        if subject == "dask":
            item.add_marker(pytest.mark.dask)
        if subject in SLOW_SUBJECTS or item.get_closest_marker("browser") \
                or item.get_closest_marker("study"):
            item.add_marker(pytest.mark.slow)
    if hasattr(config, "workerinput"):  # an xdist worker: the long units first (see above)
        rank = {unit: i for i, unit in enumerate(LONG_FIRST)}
        last = len(rank)
        # stable: the files' own order, and each file's tests in theirs, otherwise kept
        items.sort(key=lambda item: rank.get(_unit(item.nodeid.split("::", 1)[0]), last))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` with the units of SHARED_UNITS (any other mode: xdist's own)."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Units(LoadFileScheduling):
        def _split_scope(self, nodeid):
            return _unit(super()._split_scope(nodeid))

    # the units in collection order, which puts LONG_FIRST first (xdist would otherwise
    # order them by their number of tests, which says little about their time)
    config.option.loadscopereorder = False
    return Units(config, log)
