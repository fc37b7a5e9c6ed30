"""How an :class:`~modellens.attribution.Attributions` is indexed: rows, features, an output.

``attr[rows]``, ``attr[rows, features]``, ``attr[rows, features, output]`` and
``attr[..., output]``; a mixin of the result class, kept apart from its fields,
its tables and its files.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import is_integer
from ._blocks import BLOCKS

# A mixin: its methods read the fields of the class it is part of, so ``self`` is typed
# Any (the checker takes no subclass as a mixin's self type).
__all__ = ["Indexing"]


class Indexing:
    """``attr[...]``: the rows, features and output of a result, as a result of the same type."""

    # ----------------------------------------------------------- indexing
    def __getitem__(self: Any, key) -> Any:  # an Attributions, as self
        if isinstance(key, tuple) and len(key) == 3 or (isinstance(key, tuple) and len(key) == 2
                                                         and key[0] is Ellipsis):
            # attr[rows, cols, output] / attr[..., output]: one output, then rows and features
            *rest, output = key
            one = self.for_output(output)
            if rest == [Ellipsis]:
                return one
            return one[tuple(rest)]
        rows, cols = key if isinstance(key, tuple) else (key, slice(None))
        rows = self._row_index(rows)
        cols = self._column_index(cols)
        interactions = None
        if self.interactions is not None:
            interactions = self.interactions[rows][:, cols][:, :, cols]
        return type(self)(
            values=self.values[rows][:, cols], base_values=self.base_values[rows],
            codes=self.codes[rows][:, cols], feature_names=[self.feature_names[j] for j in cols],
            method=self.method, output=self.output,
            prediction=None if self.prediction is None else np.asarray(self.prediction)[rows],
            columns=[self.columns[j] for j in cols],
            column_labels=None if self.column_labels is None
            else [self.column_labels[j] for j in cols],
            value_function=self.value_function, interactions=interactions,
            diagnostics=dict(self.diagnostics), outputs=self.outputs,
            output_labels=self.output_labels,
            row_labels=None if self.row_labels is None else self.row_labels[rows],
            **{name: None if getattr(self, name) is None else getattr(self, name).take(rows, cols)
               for name in BLOCKS})

    def _row_index(self: Any, rows) -> np.ndarray:
        n = len(self)
        if is_integer(rows):
            if not -n <= rows < n:
                raise IndexError(f"row {rows} is out of range for {n} explained rows.")
            return np.array([int(rows) % n])
        if isinstance(rows, slice):
            return np.arange(n)[rows]
        rows = np.asarray(rows)
        if rows.dtype == bool:
            if rows.shape != (n,):
                raise IndexError(f"a boolean row mask needs {n} entries, got {rows.shape}.")
            return np.flatnonzero(rows)
        if rows.dtype.kind not in "iu" or rows.ndim != 1:
            raise IndexError(f"rows are selected by an int, a slice, a boolean mask or a list of "
                             f"ints, got {rows!r}.")
        if rows.size and (rows.max() >= n or rows.min() < -n):
            raise IndexError(f"row positions must lie in [-{n}, {n}).")
        return rows % n

    def _column_index(self: Any, cols) -> list:
        d = len(self.feature_names)
        if isinstance(cols, slice):
            return list(range(d))[cols]
        if isinstance(cols, (str, int, np.integer)) and not isinstance(cols, bool):
            return [self.index_of(cols)]
        cols = list(np.asarray(cols, dtype=object).tolist()) if not isinstance(cols, list) \
            else cols
        if cols and all(isinstance(c, (bool, np.bool_)) for c in cols):
            if len(cols) != d:
                raise IndexError(f"a boolean feature mask needs {d} entries, got {len(cols)}.")
            return [j for j, keep in enumerate(cols) if keep]
        return [self.index_of(c) for c in cols]
