"""Files written whole or not at all, and never over the files they were made from.

A file written in place is truncated first: a write that fails part-way (a
full disk, a quota, a file-size limit, an interrupt) leaves neither the old
file nor a complete new one.  Every file the library and the command line
write goes to a temporary file in the same folder (the same file system, so
the move is one ``rename``) and is moved over the target only once it is
complete; on failure the temporary file is removed and the target is
untouched.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable
from contextlib import suppress
from os import PathLike
from pathlib import Path

__all__ = ["write_atomic", "same_file"]


def write_atomic(path: str | PathLike[str], write: Callable[[str], object]) -> Path:
    """Call ``write(temporary_name)``, then move the temporary file onto ``path``.

    ``write`` writes the whole file to the name it is given (a fresh, empty
    file in the folder of ``path``).  A symbolic link at ``path`` is written
    through (its target is replaced), as ``open(path, "w")`` would.  The new
    file gets the permissions of the file it replaces, or those a new file
    gets under the process's umask.

    Returns
    -------
    Path
        ``path``, as given.
    """
    path = Path(path)
    target = Path(os.path.realpath(path))
    # the part file's name is capped: a target name near the file system's limit (255
    # bytes) plus the prefix and suffix would be refused once the whole file is made
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:64]}.", suffix=".part",
                               dir=target.parent)
    try:
        os.close(fd)
        write(tmp)
        with open(tmp, "rb+") as fh:  # on disk before it replaces the old file
            os.fsync(fh.fileno())
        try:
            mode = os.stat(target).st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def same_file(path: str | PathLike[str], others: Iterable[str | PathLike[str]]):
    """The first of ``others`` that is the file ``path`` names (same device and inode), or None.

    Links (symbolic or hard) to one file are the same file; a ``path`` that
    does not exist is no other file.
    """
    try:
        st = os.stat(path)
    except OSError:
        return None
    for other in others:
        with suppress(OSError):
            o = os.stat(other)
            if (o.st_dev, o.st_ino) == (st.st_dev, st.st_ino):
                return other
    return None


def _umask() -> int:
    """The process's umask, read without changing it where the system allows."""
    with suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    mask = os.umask(0o022)  # elsewhere: set and restore at once
    os.umask(mask)
    return mask
