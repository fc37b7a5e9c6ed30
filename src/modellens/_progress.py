"""Progress bars that end as one finished line: in a terminal, a log file and a saved notebook.

A bar opened while no other is open leaves its final state (``100%|...| n/n``)
on one line; a bar opened inside another one (a method inside the report, or
inside a user's own loop bar) clears itself when done, so a call leaves one
line, not one per step.

In a Jupyter kernel the bar is one output that is replaced in place
(``update_display_data``) instead of text written to stderr: a saved
notebook then holds the finished line only.  (tqdm's widget keeps, in the
file, the text form it had when first shown, a bar frozen at 0 %, and text
written to stderr keeps every state the bar went through.)
"""

from __future__ import annotations

import os
import sys

__all__ = ["progress_bar", "LOG_INTERVAL"]

#: Seconds between updates when the bar does not go to a terminal (a log file
#: would otherwise get an update per chunk).
LOG_INTERVAL = 30.0
#: Seconds between updates of a notebook's output.
_NOTEBOOK_INTERVAL = 0.5


def progress_bar(iterable=None, *, total=None, desc: str, unit: str = "it"):
    """A tqdm bar for this environment: see the module's docstring.

    Used as tqdm is: iterate over it, or ``update(n)`` and ``close()``.
    """
    from tqdm import tqdm

    options = {"total": total, "desc": desc, "unit": unit,
               # open bars of any tqdm class (tqdm keeps one registry for all)
               "leave": not getattr(tqdm, "_instances", None)}
    line = _NotebookLine.if_in_notebook()
    if line is not None:
        options.update(file=line, mininterval=_NOTEBOOK_INTERVAL, ncols=100, position=0)
    else:
        interval = 0.1 if getattr(sys.stderr, "isatty", lambda: False)() else LOG_INTERVAL
        options.update(mininterval=interval, maxinterval=max(10.0, interval))
    return tqdm(iterable, **options)


class _NotebookLine:
    """A file for tqdm whose every status write replaces one notebook output.

    tqdm writes each state as ``"\\r" + line + padding``; a bar that is not
    left writes blanks at the end, which here empties the output.  Other
    writes (the final newline, cursor moves between nested bars) carry no
    state and are ignored.  The output appears with the first state.
    """

    encoding = "utf-8"  # tqdm draws the bar with Unicode blocks

    def __init__(self, display):
        self._display = display
        self._handle = None

    @classmethod
    def if_in_notebook(cls):
        """A new line when running in a Jupyter kernel that shows display updates, else None."""
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
        if shell is None or type(shell).__name__ != "ZMQInteractiveShell":
            return None  # a terminal IPython, or plain Python
        if any(k == "QT_API" or k.startswith("SPYDER") for k in os.environ):
            return None  # qtconsole and Spyder consoles do not replace outputs
        from IPython.display import display

        return cls(display)

    def write(self, s: str) -> None:
        if "\r" not in s:
            return
        text = s.rsplit("\r", 1)[1].rstrip()
        bundle = {"text/plain": text}
        if self._handle is None:
            if not text:
                return
            self._handle = self._display(bundle, raw=True, display_id=True)
        else:
            self._handle.update(bundle, raw=True)

    def flush(self) -> None:
        pass
