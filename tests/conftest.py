import matplotlib

matplotlib.use("Agg")


#: Subjects whose tests are slow as a whole (clusters, whole reports, the command line):
#: the fast loop (``-m "not slow"``) leaves them out.
SLOW_SUBJECTS = {"dask", "report", "cli"}


def pytest_configure(config):
    # pytest-timeout (the test extra) registers ``timeout``; without it the marker is only
    # a label, and --strict-markers must not refuse it
    if not config.pluginmanager.hasplugin("timeout"):
        config.addinivalue_line("markers", "timeout(seconds): a test's own time limit "
                                           "(pytest-timeout)")


def pytest_collection_modifyitems(config, items):
    import pytest

    for item in items:
        subject = item.path.parent.name
        if subject == "dask":
            item.add_marker(pytest.mark.dask)
        if subject in SLOW_SUBJECTS or item.get_closest_marker("browser") \
                or item.get_closest_marker("study"):
            item.add_marker(pytest.mark.slow)
