"""The methods' warnings, recorded on a section's page: one notice for the rows left out for
missing values, none for levels the data section already names."""

from __future__ import annotations

import re

from .._warnings import recorded


def capture_warnings(sec):
    """Record the methods' warnings on the section's page instead of the console.

    Each report records only the warnings of the thread building it (see
    :mod:`modellens.report._warnings`), so reports built at once in threads keep theirs
    apart.  Warnings other than modellens' own are shown as they were raised.
    """
    import contextlib

    @contextlib.contextmanager
    def block():
        with recorded() as caught:
            try:
                yield
            finally:  # a method that fails part way keeps the warnings it gave first
                for w in caught:
                    text = str(w.message)
                    if _UNKNOWN_LEVELS.search(text):
                        continue  # the data section's input notes say it once
                    if text not in sec.warnings:
                        sec.warnings.append(text)
                _merge_missing(sec)
    return block()


#: The methods' warning about levels of the data the model never saw (the data section's
#: input notes, from ``check_frame``, say it for the whole report).
_UNKNOWN_LEVELS = re.compile(r"^column '.*' is categorical to the model, which knows the levels "
                             r".*, which the model reads as unknown levels")


_MISSING_ONE = re.compile(r"^(\d+) of (\d+) rows have a missing value in '(.+)'; they are left "
                          r"out of its (.+)\.$")


_MISSING_ALL = re.compile(r"^Rows with a missing value are left out of what needs the "
                          r"feature's value \((.+)\): (.+)\.$")


_MISSING_ITEM = re.compile(r"'(.+?)' \((\d+) of (\d+) rows\)")


def _merge_missing(sec):
    """One notice for the rows left out for missing values, not one box per feature and method."""
    found: dict = {}
    uses: list = []
    first = None
    kept = []
    for text in sec.warnings:
        one, merged = _MISSING_ONE.match(text), _MISSING_ALL.match(text)
        if not (one or merged):
            kept.append(text)
            continue
        first = len(kept) if first is None else first
        if one:
            items = [(one.group(3), one.group(1), one.group(2))]
            what = [one.group(4)]
        else:
            assert merged is not None  # one of the two matched
            items = _MISSING_ITEM.findall(merged.group(2))
            what = merged.group(1).split(", ")
        for name, k, n in items:
            found.setdefault(name, (int(k), int(n)))
        uses.extend(u for u in what if u not in uses)
    if first is None:
        return
    listed = ", ".join(f"'{name}' ({k:,} of {n:,} rows)" for name, (k, n) in found.items())
    kept.insert(first, f"Rows with a missing value are left out of what needs the feature's "
                       f"value ({', '.join(uses)}): {listed}.")
    sec.warnings[:] = kept
