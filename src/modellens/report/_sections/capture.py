"""The methods' warnings, recorded on a section's page: one notice for the rows left out for
missing values, none for levels the data section already names.

The report reads the library's warnings by their type and fields
(:class:`~modellens.MissingValuesWarning`, :class:`~modellens.UnknownLevelsWarning`),
never by their texts.
"""

from __future__ import annotations

import contextlib

from ..._validation import MissingValuesWarning, UnknownLevelsWarning
from .._warnings import recorded


def capture_warnings(sec):
    """Record the methods' warnings on the section's page instead of the console.

    Each report records only the warnings of the thread building it (see
    :mod:`modellens.report._warnings`), so reports built at once in threads keep theirs
    apart.  Warnings other than modellens' own are shown as they were raised.  The
    warnings read here are read by their fields (``MissingValuesWarning``,
    ``UnknownLevelsWarning``), never by their texts.
    """
    @contextlib.contextmanager
    def block():
        with recorded() as caught:
            try:
                yield
            finally:  # a method that fails part way keeps the warnings it gave first
                for w in caught:
                    message = w.message
                    if isinstance(message, UnknownLevelsWarning):
                        continue  # the data section's input notes say it once
                    if isinstance(message, MissingValuesWarning):
                        _note_missing(sec, message)
                        continue
                    text = str(message)
                    if text not in sec.warnings:
                        sec.warnings.append(text)
    return block()


def _note_missing(sec, w):
    """One notice for the rows left out for missing values, not one box per feature and method.

    The notice takes the place of the section's first such warning and is rewritten as
    more come (the features' counts, and what the rows were left out of).
    """
    seen = sec.left_out
    if not seen:
        seen.update(found={}, uses=[], notice=None)
    seen["found"].setdefault(w.column, (w.n_missing, w.n_rows))
    if w.used_for not in seen["uses"]:
        seen["uses"].append(w.used_for)
    listed = ", ".join(f"'{name}' ({k:,} of {n:,} rows)" for name, (k, n) in seen["found"].items())
    notice = (f"Rows with a missing value are left out of what needs the feature's value "
              f"({', '.join(seen['uses'])}): {listed}.")
    if seen["notice"] in sec.warnings:
        sec.warnings[sec.warnings.index(seen["notice"])] = notice
    else:
        sec.warnings.append(notice)
    seen["notice"] = notice
