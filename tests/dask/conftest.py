import pytest


#: The shared cluster while the tests of this folder run: (its context manager, client).
_SHARED: list = []


@pytest.fixture(scope="module")
def _cluster():
    """Two worker processes on loopback, as ``ml.config(n_workers=2)`` starts them: one
    cluster shared by the modules of tests/dask that one test process (xdist worker) runs
    in a row, closed when the process goes on to a file elsewhere
    (:func:`pytest_runtest_teardown`): a live ``local_client`` holds ``PYTHONSAFEPATH``
    (``modellens._children.safe_path``), which a later file's test of that hold saw.

    Starting and closing a cluster took 2-6 s a module; no module kills the shared one's
    workers (the tests that do take a cluster of their own: ``own_client``,
    ``fragile_client``), and :func:`client` checks that it is whole before each module.
    """
    pytest.importorskip("distributed")
    from modellens._config import local_client

    if not _SHARED:
        hold = local_client(2)
        _SHARED.append((hold, hold.__enter__()))
    return _SHARED[0][1]


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    """The shared cluster closes after the last test of tests/dask before another file's."""
    if _SHARED and (nextitem is None or nextitem.path.parent != item.path.parent):
        hold, _ = _SHARED.pop()
        hold.__exit__(None, None, None)


@pytest.fixture(scope="module")
def client(_cluster):
    """The shared cluster, both of its workers up (a nanny restarts a worker that died)."""
    _cluster.wait_for_workers(2, timeout=120)
    return _cluster


class RowCounter:
    """Counts the model rows a test's models are asked for, in a file.

    A file, not a list: the model may be copied (pickled) on its way to a
    partition.  ``classifier(clf)`` wraps a fitted classifier (its classes
    kept, so its outputs are known before it answers); ``note(rows)`` counts
    for a function of the test's own.
    """

    def __init__(self, path):
        self.path = path
        self.reset()

    def reset(self):
        self.path.write_text("")

    def note(self, rows):
        with open(self.path, "a") as fh:
            fh.write(f"{len(rows)}\n")

    @property
    def rows(self) -> int:
        return sum(int(v) for v in self.path.read_text().split())

    def classifier(self, clf):
        return _Counted(clf, self)


class _Counted:
    def __init__(self, clf, counter):
        self.clf, self.counter, self.classes_ = clf, counter, clf.classes_

    def predict_proba(self, D):
        self.counter.note(D)
        return self.clf.predict_proba(D)


@pytest.fixture
def row_counter(tmp_path):
    return RowCounter(tmp_path / "rows")


@pytest.fixture
def held_futures(monkeypatch):
    """The driver's window of futures, recorded: its length after every submission."""
    from collections import deque

    from modellens.engine import _dask

    held = []

    class Recorded(deque):
        def append(self, item):
            super().append(item)
            held.append(len(self))

    monkeypatch.setattr(_dask, "deque", Recorded)
    return held
