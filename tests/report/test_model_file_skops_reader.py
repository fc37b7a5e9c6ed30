"""skops reads its array files through ``_skops_ids._StoredReader`` (issue 40, session 23).

skops' nodes read each array file from their load context's ``src``; ``load_model``
hands them the archive behind a reader that reads a plainly stored file with one
``os.pread`` (``_stored_bytes``, a sixth of zipfile's cost) and leaves every other to
zipfile.  What zipfile refuses must still be refused: a file of a tree's leaf values
(read by skops alone, not by the id checks) changed behind its CRC, or under another
name in its local header than in the central directory.
"""

import functools
import io
import zipfile

import numpy as np
import pytest

from modellens.files import FileError, load_model
from modellens.files import _skops_ids

sio = pytest.importorskip("skops.io")


@functools.lru_cache(maxsize=None)
def _tree_file():
    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, X[:, 0])
    return sio.dumps(model), X, model.predict(X)


def _values_entry(data):
    """The name and the local header's offset of the array file of the tree's leaf values
    (float64, one row per node, one output, one class)."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    for info in archive.infolist():
        if info.filename.endswith(".npy"):
            array = np.load(io.BytesIO(archive.read(info.filename)))
            if array.dtype == np.float64 and array.ndim == 3:
                return info.filename, info.header_offset, info.file_size
    raise AssertionError("no value array")  # pragma: no cover


@pytest.fixture(params=["with its header", "alone"])
def read_alone(request, monkeypatch):
    """Each file read with its local header in one read, or (as a file of 64 kB or more
    is) apart from it: this tree's files are small, so the limit is moved."""
    if request.param == "alone":
        monkeypatch.setattr(_skops_ids, "_READ_ALONE", 0)
    return request.param


def test_skops_reads_the_array_files_through_the_fast_reader(tmp_path, monkeypatch,
                                                             read_alone):
    data, X, predicted = _tree_file()
    path = tmp_path / "tree.skops"
    path.write_bytes(data)
    asked = []
    real = _skops_ids._stored_bytes
    monkeypatch.setattr(_skops_ids, "_stored_bytes",
                        lambda archive, name: asked.append(name) or real(archive, name))
    np.testing.assert_array_equal(load_model(path).predict(X), predicted)
    assert _values_entry(data)[0] in asked  # (no id of this tree is repeated: skops' read)


@pytest.mark.parametrize("fault", ["bytes behind the CRC", "local name"])
def test_an_array_file_zipfile_refuses_is_refused(tmp_path, monkeypatch, fault, read_alone):
    data, _, _ = _tree_file()
    name, offset, size = _values_entry(data)
    changed = bytearray(data)
    if fault == "local name":  # the name the local header gives, one character changed
        start = offset + 30
        assert bytes(changed[start:start + len(name)]) == name.encode()
        changed[start] = ord("9") if changed[start] != ord("9") else ord("8")
    else:  # the last byte of the last leaf value (its sign and exponent), the CRC kept
        end = offset + 30 + len(name) + size - 1
        changed[end] ^= 0x01
    path = tmp_path / "bad.skops"
    path.write_bytes(bytes(changed))
    with zipfile.ZipFile(path) as archive, pytest.raises(zipfile.BadZipFile):
        archive.read(name)
    answers = {}
    real = _skops_ids._stored_bytes
    monkeypatch.setattr(_skops_ids, "_stored_bytes", lambda archive, asked: answers.setdefault(
        asked, real(archive, asked)))
    with pytest.raises(FileError, match="skops file"):
        load_model(path)
    assert name in answers and answers[name] is None  # the fast reader asked, and refused
