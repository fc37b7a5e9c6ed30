"""The byte reads under the compiled UBJSON scan and node checks (issue 40).

A big-endian integer is read by one unaligned load and a byte swap (numba
compiled the shifted sum of four byte reads to four loads: the node checks of a
9 MB file cost 4 ms, now 2): checked here against :mod:`struct` at every
alignment, signs and widths, and the file read into an uninitialised bytearray
against the file's own bytes.  A fault the checks must find, read by these
reads, is planted in ``test_model_file_scan_trees``.
"""

import struct

import numpy as np
import pytest
from numba import njit

from modellens.files._read import _bytearray, read_all
from modellens.trees import _bytes as reads
from modellens.trees import _checks_xgboost_scan as scan

#: UBJSON's number markers and the struct format of each (``d``: a float32's bits unsigned).
_MARKERS = {"i": ">b", "U": ">B", "I": ">h", "l": ">i", "d": ">I", "L": ">q"}


@njit
def _reads(data, at):
    return reads._i16(data, at), reads._i32(data, at), reads._i64(data, at)


def _bytes(seed=0, n=64):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, size=n, dtype=np.uint8)
    data[:8] = [0x80, 0, 0, 0, 0, 0, 0, 0]  # the most negative of each width at offset 0
    data[8:16] = 0xFF  # -1 of each width at offset 8
    return data


def test_big_endian_reads_match_struct_at_every_alignment():
    data = _bytes()
    raw = data.tobytes()
    for at in range(len(data) - 8):
        expect = tuple(struct.unpack_from(fmt, raw, at)[0] for fmt in (">h", ">i", ">q"))
        assert _reads(data, at) == expect, at


@pytest.mark.parametrize("marker", list(_MARKERS))
def test_scan_int_reads_each_marker_as_struct(marker):
    data = _bytes(1)
    raw = data.tobytes()
    for at in range(len(data) - 8):
        assert scan._int(data, at, ord(marker)) == \
            struct.unpack_from(_MARKERS[marker], raw, at)[0], (marker, at)


def test_scan_int_of_another_marker_reads_nothing():
    assert scan._int(_bytes(), 0, ord("S")) == 0


def test_reads_take_only_a_contiguous_byte_array():
    # a strided view's bytes do not lie where one load reads them: refused when compiled
    with pytest.raises(Exception, match="(?i)typing|resolution|signature|No implementation"):
        _reads(_bytes()[::2], 0)


@pytest.mark.parametrize("size", [0, 1, 7, 4096, 100_003])
def test_read_all_is_the_files_bytes(tmp_path, size):
    path = tmp_path / "model.ubj"
    path.write_bytes(np.random.default_rng(size).integers(0, 256, size, np.uint8).tobytes())
    data = read_all(path)
    assert type(data) is bytearray and data == path.read_bytes()


def test_uninitialised_bytearray_is_a_bytearray_of_its_size():
    for size in (0, 1, 12345):
        out = _bytearray(size)
        assert type(out) is bytearray and len(out) == size
        out[:] = b"\x01" * size  # writable, every byte
        assert out == b"\x01" * size
