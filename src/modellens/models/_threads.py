"""The threads of the compiled (numba) kernels: set per call, in the calling thread only."""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager, nullcontext

__all__ = ["kernel_threads"]

# re-entrant: an engine run sets the threads around its reductions, and an estimator
# inside it may set them again
_WORKQUEUE_LOCK = threading.RLock()


@contextmanager
def kernel_threads(n_threads: int):
    """Run numba's parallel kernels on ``n_threads`` threads, with no effect outside the calling thread.

    ``n_threads`` is a count (``_config.n_threads`` of ``n_jobs``).  numba's
    thread count is thread-local (``numba.set_num_threads`` sets it for the
    calling thread only, and its parallel regions read it there), so setting
    and restoring it here cannot change the threads of a call made at the
    same time from another thread.  numba's ``workqueue`` threading layer,
    its fallback where neither OpenMP nor TBB is installed, cannot run two
    parallel regions at once: there the calls take turns on a lock.  Nothing
    is done when numba was never imported (no kernel can run).
    """
    numba = sys.modules.get("numba")
    if numba is None:
        yield
        return
    lock = _WORKQUEUE_LOCK if _layer(numba) == "workqueue" else nullcontext()
    with lock:
        before = numba.get_num_threads()
        numba.set_num_threads(max(1, min(int(n_threads), numba.config.NUMBA_NUM_THREADS)))
        try:
            yield
        finally:
            numba.set_num_threads(before)


def _layer(numba):
    """numba's threading layer; ``"workqueue"`` until one has been chosen (the safe guess)."""
    try:
        return numba.threading_layer()
    except ValueError:  # no parallel region has run yet
        return "workqueue"
