"""A file's bytes read into the buffer XGBoost is handed, a part at a time where each part
is wanted as it arrives (the checks of the trees in it, while it is in the cache)."""

from __future__ import annotations

import functools

__all__ = ["read_all", "READ_PART"]


def read_all(path, as_read=None) -> bytearray:
    """The file's bytes, read straight into the buffer XGBoost is handed (no copy);
    ``as_read(data, filled)`` called after each :data:`READ_PART` bytes read into it
    (``filled`` bytes so far), where given."""
    with open(path, "rb", buffering=0) as f:
        size = f.seek(0, 2)
        f.seek(0)
        data, got = _bytearray(size), 0
        with memoryview(data) as view:
            while got < size:
                part = f.readinto(view[got:got + READ_PART])
                if not part:  # a file cut short while read
                    break
                got += part
                if as_read is not None:
                    as_read(data, got)
        rest = f.read()  # a file that grew while read: all of it, as read_bytes would
    return data if got == size and not rest else bytearray(bytes(data[:got]) + rest)


#: Bytes read at a time where each part is handed on as it is read (a quarter of the
#: cache a core has to itself here: the part is read again while it is still there).
READ_PART = 1 << 18


def _bytearray(size: int) -> bytearray:
    """A bytearray of ``size`` bytes, not zeroed where CPython's C API allows it (its
    bytearray(size) writes every zero before the file's bytes are read over them: a
    third of a 9 MB file's read); the caller fills all of it or keeps what it filled.

    Kept after review (session 20): with bytearray(size) the load_model of a 9.2 MB
    UBJSON file cost 4-5 ms more CPU in two of three interleaved runs of fifteen (10%
    of XGBoost's own load, the whole of issue 40's allowance), the zeros written to
    fresh pages, whose faults cost wall time on a virtual machine beyond the CPU time
    charged.  PyByteArray_FromStringAndSize is public C API; no bytes given, CPython
    leaves the buffer as allocated, and anything else gets bytearray(size)."""
    new = _new_bytearray()
    out = None if new is None else new(None, size)
    return out if type(out) is bytearray and len(out) == size else bytearray(size)


@functools.cache
def _new_bytearray():
    """CPython's PyByteArray_FromStringAndSize (no bytes given: not zeroed), with its
    own prototype (ctypes.pythonapi's shared one left as it is); None elsewhere."""
    import ctypes

    try:
        return ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_char_p, ctypes.c_ssize_t)(
            ("PyByteArray_FromStringAndSize", ctypes.pythonapi))
    except (AttributeError, OSError):  # not CPython
        return None
