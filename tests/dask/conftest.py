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
