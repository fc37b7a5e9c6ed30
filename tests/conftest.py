import os

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
}

#: The longest units, longest first: under xdist the workers start with them, so that no
#: long unit is left running alone at the end while the other worker idles.  Ranked by
#: what they run (the documentation build, mypy, the Monte Carlo studies, clusters, a
#: browser) and a partial timing on a busy machine; re-rank from ``--durations`` of an
#: idle run.  It orders, never selects: a file not named here keeps its collection order.
#: A new file over ~20 s of CPU belongs here, at its rank.
LONG_FIRST = [
    "tests/docs/test_docs.py",  # the documentation build runs the gallery
    "tests/attribution/test_shapley_conditional.py",
    "mypy",
    "tests/cli/test_working_directory.py",  # cold processes, clusters, loky pools
    "tests/report/test_warm_up.py",  # three processes on empty numba caches
    "tests/attribution/test_tree_serial.py",
    "tests/dask/test_dask_cluster.py",
    "tests/dask/test_dask.py",
    "tests/fuzz/test_fuzz_data.py",
    "tests/plot/test_notebook.py",
    "tests/effects/test_interactions.py",
    "tests/fuzz/test_fuzz_safety.py",
    "tests/report/test_report_browser.py",
    "tests/attribution/test_shapley.py",
]


def pytest_configure(config):
    # pytest-timeout (the test extra) registers ``timeout``; without it the marker is only
    # a label, and --strict-markers must not refuse it
    if not config.pluginmanager.hasplugin("timeout"):
        config.addinivalue_line("markers", "timeout(seconds): a test's own time limit "
                                           "(pytest-timeout)")


def _unit(path):
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
