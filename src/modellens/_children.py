"""The processes started while the library works import nothing from the working directory.

Python puts the working directory first on ``sys.path`` of an interpreter
started as ``python -c ...`` or ``python -m ...``, and that is how most
helper processes start: Dask's workers and nannies, multiprocessing's
resource tracker, joblib's loky workers and loky's resource tracker (started
by a model whose ``predict`` runs ``n_jobs=2``: ``BaggingRegressor``,
``MultiOutputRegressor``).  A ``pickle.py`` or ``joblib.py`` lying in the
folder the user works in then ran in each of them.  ``PYTHONSAFEPATH=1``
(Python 3.11+, the same as ``-P``) keeps that folder off, and is inherited
by every child of a child.

:func:`safe_path` sets it in this process's environment while the library
runs (the command line for its whole run; the library's engine while it
opens a request and evaluates rows: the model's own pools start then) and
takes it back when the last user leaves, unless someone changed it
meanwhile.  A variable already set (to anything but empty, which turns it
off) is left as it is.  The interpreter the user started is not touched: a
loky worker still gets its parent's ``sys.path`` once started, so a model
class the user's own process imports from its folder still unpickles there.

The library's other children need nothing from here: the compile child is
started with ``-I`` (see ``_warm.py``) and the report's picture processes
are forked (they import through this process's own path).
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager

__all__ = ["safe_path"]

_lock = threading.Lock()
_users = 0
_set_here = False
_previous: str | None = None


@contextmanager
def safe_path():
    """``PYTHONSAFEPATH=1`` in ``os.environ`` while at least one caller is inside (thread-safe)."""
    global _users, _set_here, _previous
    with _lock:
        if _users == 0:
            _previous = os.environ.get("PYTHONSAFEPATH")
            _set_here = not _previous  # unset or empty (empty turns it off)
            if _set_here:
                os.environ["PYTHONSAFEPATH"] = "1"
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0 and _set_here:
                _set_here = False
                if os.environ.get("PYTHONSAFEPATH") == "1":  # unless changed meanwhile
                    if _previous is None:
                        del os.environ["PYTHONSAFEPATH"]
                    else:
                        os.environ["PYTHONSAFEPATH"] = _previous
