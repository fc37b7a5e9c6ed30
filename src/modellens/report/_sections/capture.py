"""The methods' warnings, recorded on a section's page: one notice for the rows left out for
missing values, none for levels the data section already names.

:func:`read_warning` is the one place the report reads what a warning of the
library says.  Until the library's warnings carry their facts as fields, it
reads them from the texts; when they do, only it changes.
"""

from __future__ import annotations

import contextlib
import re

from .._warnings import recorded


def capture_warnings(sec):
    """Record the methods' warnings on the section's page instead of the console.

    Each report records only the warnings of the thread building it (see
    :mod:`modellens.report._warnings`), so reports built at once in threads keep theirs
    apart.  Warnings other than modellens' own are shown as they were raised.
    """
    @contextlib.contextmanager
    def block():
        with recorded() as caught:
            try:
                yield
            finally:  # a method that fails part way keeps the warnings it gave first
                for w in caught:
                    kind, facts = read_warning(w)
                    if kind == "unknown levels":
                        continue  # the data section's input notes say it once
                    if kind == "missing values":
                        _left_out(sec, **facts)
                    elif str(w.message) not in sec.warnings:
                        sec.warnings.append(str(w.message))
    return block()


#: The texts :func:`read_warning` reads: the methods' warning about levels of the data the
#: model never saw (``models``), and about rows left out for missing values (``data``).
_UNKNOWN_LEVELS = re.compile(r"^column '.*' is categorical to the model, which knows the levels "
                             r".*, which the model reads as unknown levels")
_MISSING_ONE = re.compile(r"^(\d+) of (\d+) rows have a missing value in '(.+)'; they are left "
                          r"out of its (.+)\.$")


def read_warning(w) -> tuple:
    """``(kind, facts)`` of a recorded warning: what the report needs to know of it.

    ``kind`` is ``"unknown levels"`` (facts: none), ``"missing values"``
    (facts: ``feature``, ``missing`` and ``rows`` counts, ``use``: what the
    rows were left out of), or None for any other warning (shown as it is).
    """
    text = str(w.message)
    if _UNKNOWN_LEVELS.search(text):
        return "unknown levels", {}
    one = _MISSING_ONE.match(text)
    if one:
        return "missing values", {"feature": one.group(3), "missing": int(one.group(1)),
                                  "rows": int(one.group(2)), "use": one.group(4)}
    return None, {}


def _left_out(sec, *, feature, missing, rows, use):
    """One notice for the rows left out for missing values, not one box per feature and method.

    The facts gathered so far live on the section; the notice stands where the
    first of them was said, rewritten as more come.
    """
    facts = sec.left_out
    facts.setdefault("features", {}).setdefault(feature, (missing, rows))
    uses = facts.setdefault("uses", [])
    if use not in uses:
        uses.append(use)
    listed = ", ".join(f"'{name}' ({k:,} of {n:,} rows)"
                       for name, (k, n) in facts["features"].items())
    text = (f"Rows with a missing value are left out of what needs the feature's value "
            f"({', '.join(uses)}): {listed}.")
    said = facts.get("said")
    if said is not None and said in sec.warnings:
        sec.warnings[sec.warnings.index(said)] = text
    else:
        sec.warnings.append(text)
    facts["said"] = text
