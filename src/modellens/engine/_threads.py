"""OpenMP threads of a model call: one where more would wait on each other.

A model that predicts with OpenMP (scikit-learn's HistGradientBoosting,
LightGBM, XGBoost) opens one parallel region per tree or per batch of
trees, and every region ends at a barrier that waits for its slowest
thread.  When other processes hold the cores, a thread is often descheduled
for a whole time slice at each barrier: measured on a loaded two-core
machine, a HistGradientBoosting model of 200 trees predicted 2,000 rows 5x
slower, and 100,000 rows 3x slower, on two threads than on one.  Small
chunks pay the same barriers for little work even on an idle machine.  So a
chunk's call runs on one OpenMP thread when it is small or when the machine
has no core to spare; the answers do not depend on the thread count (each
row is predicted on its own).  A count the user lowered is never raised.
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import ExitStack, contextmanager, nullcontext

from .._process import usable_cores

__all__ = ["ROWS_PER_THREAD", "capped_call", "model_threads", "openmp_threads"]

#: Rows a chunk needs per OpenMP thread before a second thread is worth its barriers.
ROWS_PER_THREAD = 2_000

_LOCK = threading.Lock()
#: The threadpoolctl controller (finding the loaded libraries takes tens of
#: milliseconds) and the count of imported modules it was made at.
_CACHE: dict = {"controller": None, "modules": -1}


def model_threads(rows: int, *, cores: int | None = None,
                  load: float | None = None) -> int:
    """OpenMP threads for a model call on ``rows`` rows: at most one per
    ``ROWS_PER_THREAD`` rows, and one when the one-minute load average shows
    more runnable threads than cores beside this call (the others' threads
    would be descheduled at the barriers)."""
    cores = usable_cores() if cores is None else cores
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:  # no load average here: the rows alone decide
            load = 0.0
    if load >= cores + 1:
        return 1
    return max(1, min(cores, rows // ROWS_PER_THREAD))


def _controller():
    """The cached controller, made again once new modules were imported (a library
    loaded after it was made, e.g. the model's, would be missed)."""
    with _LOCK:
        if _CACHE["controller"] is None or _CACHE["modules"] != len(sys.modules):
            from threadpoolctl import ThreadpoolController

            _CACHE["modules"] = len(sys.modules)
            _CACHE["controller"] = ThreadpoolController().select(user_api="openmp")
        return _CACHE["controller"]


@contextmanager
def openmp_threads(threads: int):
    """OpenMP libraries capped at ``threads`` in the calling thread (OpenMP counts
    threads per calling thread), each restored after; none raised."""
    controller = _controller()
    capped = [lib for lib in controller.lib_controllers if lib.num_threads > threads]
    if not capped:
        yield
        return
    with ExitStack() as stack:
        for lib in capped:
            stack.enter_context(_limit(lib, threads))
        yield


@contextmanager
def _limit(lib, threads: int):
    before = lib.num_threads
    lib.set_num_threads(threads)
    try:
        yield
    finally:
        lib.set_num_threads(before)


def capped_call(rows: int):
    """The context a chunk of ``rows`` rows is evaluated in (see the module's note)."""
    threads = model_threads(rows)
    return nullcontext() if threads >= usable_cores() else openmp_threads(threads)
