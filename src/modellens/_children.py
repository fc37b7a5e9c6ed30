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
opens a request and evaluates rows, and every call of the model through its
seam, :meth:`modellens.models.Model.predict`: the model's own pools start
then) and
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

from ._process import CountedHold

__all__ = ["safe_path"]

#: What was there before this process set the variable (read by _restore).
_state: dict = {"set_here": False, "previous": None}


def _set() -> None:
    previous = os.environ.get("PYTHONSAFEPATH")
    _state["previous"], _state["set_here"] = previous, not previous  # unset or empty
    if _state["set_here"]:  # (empty turns it off: set to 1 then)
        os.environ["PYTHONSAFEPATH"] = "1"


def _restore() -> None:
    if _state["set_here"]:
        _state["set_here"] = False
        if os.environ.get("PYTHONSAFEPATH") == "1":  # unless changed meanwhile
            if _state["previous"] is None:
                del os.environ["PYTHONSAFEPATH"]
            else:
                os.environ["PYTHONSAFEPATH"] = _state["previous"]


_HOLD = CountedHold(_set, _restore)


def safe_path():
    """``PYTHONSAFEPATH=1`` in ``os.environ`` while at least one caller is inside (thread-safe).

    A context manager, and a decorator: ``@safe_path()``.
    """
    return _HOLD.held()
