"""Facts and holds of this process: the cores it may run on, a change held while in use.

A leaf: the engine's thread counts, the warm-up's OpenMP cap and the report's
picture processes read :func:`usable_cores`; the safe import path of child
processes (``_children.py``) and the report's warning recorder
(``report/_warnings.py``) change process-wide state only while someone uses
it, through one :class:`CountedHold`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["usable_cores", "CountedHold"]


def usable_cores(*, unknown: int | None = None) -> int:
    """The cores this process may run on: its CPU affinity where the system tells it.

    Elsewhere ``os.cpu_count()``, or ``unknown`` when given (a caller that
    starts processes only where it knows the cores).
    """
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return (os.cpu_count() or 1) if unknown is None else unknown


class CountedHold:
    """A process-wide change made while at least one caller is inside (thread-safe).

    ``enter()`` runs when the first caller comes in and ``leave()`` when the
    last one goes out, under one lock; callers nest and overlap in any
    threads.  :meth:`held` is a context manager (and a decorator).
    """

    def __init__(self, enter: Callable[[], None], leave: Callable[[], None]):
        self._enter, self._leave = enter, leave
        self._lock = threading.Lock()
        self._users = 0

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._lock:
            if self._users == 0:
                self._enter()
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0:
                    self._leave()
