import pytest


@pytest.fixture(scope="module")
def client():
    """Two worker processes on loopback, as ``ml.config(n_workers=2)`` starts them.

    One cluster per test module: a module that kills workers leaves the next
    module a fresh one (``test_dask.py`` keeps a cluster of its own).
    """
    pytest.importorskip("distributed")
    from modellens._config import local_client

    with local_client(2) as c:
        yield c


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
