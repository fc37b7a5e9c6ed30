import matplotlib

matplotlib.use("Agg")


#: Subjects whose tests are slow as a whole (clusters, whole reports, the command line):
#: the fast loop (``-m "not slow"``) leaves them out.
SLOW_SUBJECTS = {"dask", "report", "cli"}


def pytest_collection_modifyitems(config, items):
    import pytest

    for item in items:
        subject = item.path.parent.name
        if subject == "dask":
            item.add_marker(pytest.mark.dask)
        if subject in SLOW_SUBJECTS or item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.slow)
