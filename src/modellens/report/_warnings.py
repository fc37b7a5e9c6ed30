"""Warnings recorded per report, also when several reports are built at once in threads.

``warnings.catch_warnings`` swaps the process's warning filters and handler
for as long as it runs: two reports built in two threads recorded each
other's warnings, and the one that finished first restored the handler under
the other.  Here one handler is installed while any report records
(reference-counted); it hands each warning to the innermost recording of the
thread that raised it, and to the handler that was there before when that
thread records nothing.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .._process import CountedHold
from .._validation import ModellensWarning

__all__ = ["recorded", "quiet"]

_local = threading.local()
_previous: Any = warnings.showwarning
_ALWAYS = ("always", None, ModellensWarning, None, 0)


def _route(message, category, filename, lineno, file=None, line=None):
    stack = getattr(_local, "stack", None)
    if stack:
        sink = stack[-1]
        if sink is None:  # quiet()
            return
        if issubclass(category, ModellensWarning):
            sink.append(warnings.WarningMessage(message, category, filename, lineno, file, line))
            return
    _previous(message, category, filename, lineno, file, line)


def _install() -> None:
    global _previous
    _previous = warnings.showwarning
    warnings.showwarning = _route
    # every report records all of its own warnings, also those an earlier one gave
    # (the default action shows a warning once per place)
    warnings.filterwarnings("always", category=ModellensWarning)


def _uninstall() -> None:
    if warnings.showwarning is _route:
        warnings.showwarning = _previous
    filters: list = warnings.filters  # type: ignore[assignment]
    if _ALWAYS in filters:
        filters.remove(_ALWAYS)


#: The handler installed while any report records (see the module's docstring).
_HOLD = CountedHold(_install, _uninstall)


@contextmanager
def _pushed(sink) -> Iterator[None]:
    stack = _local.__dict__.setdefault("stack", [])
    with _HOLD.held():
        stack.append(sink)
        try:
            yield
        finally:
            stack.pop()


@contextmanager
def recorded() -> Iterator[list]:
    """Record this thread's modellens warnings in the list yielded; others pass on as usual."""
    caught: list = []
    with _pushed(caught):
        yield caught


@contextmanager
def quiet() -> Iterator[None]:
    """Drop every warning this thread raises (for the report's own helper fits)."""
    with _pushed(None):
        yield
