"""Out-of-core data: any summarising plan run on the partitions of a Dask collection.

The rows never come to the client.  A method decides its design (bin edges,
grids, level orders) from what a pass over the whole table tells: Dask's
approximate quantiles, the minimum and maximum, the levels of text columns,
and any statistics a plan of no model rows gathers (:meth:`OutOfCore.map`).
Then every partition, on the worker where it lies, is encoded with the
table's schema and runs *the same plan classes an in-memory call runs* on its
own rows (the engine, chunk by chunk), each plan summarising its answers
(:meth:`~._plan.Plan.summarise`: counts, means and sums of squared
deviations per bin or grid point); the client merges the summaries in
partition order (:meth:`~._plan.Plan.merge`, the pairwise update of Chan,
Golub & LeVeque) and finishes each plan.  A method written as plans that
summarise gets this form, and the cluster form, with no code of its own.

Quantile tolerance
------------------
Quantiles come from ``dask.dataframe``'s approximate quantiles, asked at
``QUANTILE_STEPS + 1`` evenly spaced probabilities and at those a method
asks: each partition's quantiles are exact, and merging them interpolates the
combined CDF between them, so a quantile's share of the data below it is
within about ``1 / QUANTILE_STEPS`` (0.1%) of its probability (tested with
shuffled and with sorted partitions).  Results built on such edges agree
with those of the same data in memory within what moving each edge by that
share of the data changes; with the same edges they agree to float rounding.

Warnings
--------
Partitions emit no warnings: plans count what they would warn about (rows
without a value, values outside the edges) into their summaries, and the
client warns once, from the merged counts.  Nothing here touches the
process-wide warning filters (``warnings.catch_warnings`` is not safe where
partitions run in threads of one process).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._config import Options
from .._validation import InvalidParameterError
from ..data import Dataset, Column
from ._dask import resolve_client
from ._dask_tables import (compute_on, first_rows, import_dask, is_dask_input, map_partitions,
                           partition_offsets, partition_options, row_partitions)
from ._design import DISTINCT_LIMIT, merge_summaries, summarise_values
from ._run import summarise, summarise_outputs

__all__ = ["is_dask_input", "OutOfCore", "QUANTILE_STEPS"]

#: Evenly spaced probabilities (besides those asked) at which quantiles are merged.
QUANTILE_STEPS = 1000
#: Rows read from the first partition to learn the columns' names and dtypes.
_HEAD_ROWS = 1000


class OutOfCore:
    """The partitions of a Dask input, the schema of the whole table, and the driver.

    Parameters
    ----------
    X : dask DataFrame, Series or 2-D array
    feature_names : list of str, optional
        Names of an array's columns.
    options : Options
        ``client`` runs the partitions there (the model is sent once); without
        one, Dask's default scheduler runs them.

    Attributes
    ----------
    schema : Dataset
        The first rows, encoded with the levels of the whole table (text
        columns' levels are read in one pass; a categorical dtype's own).
    frame : dask DataFrame
        The table (an array's columns named as the schema).
    n_parts : int
    """

    def __init__(self, X, feature_names, options: Options):
        dask, dd = import_dask()
        import dask.array as da

        self.client = None if options.client is None else resolve_client(options.client)
        self.store = options.store
        self.local = partition_options(options)
        self.parts, X = row_partitions(X)
        frame = None if isinstance(X, da.Array) else X
        self.has_index = frame is not None  # an array's rows have positions only
        # the first rows of the first partition only (X.head warns when it is short)
        head = first_rows(self.parts, _HEAD_ROWS)
        schema = Dataset.from_data(head, feature_names=feature_names)
        if frame is None:
            frame = dd.from_dask_array(X, columns=schema.feature_names)
        self.frame = frame
        self.n_parts = len(self.parts)
        self.schema = self._whole_levels(schema, head)
        self.names = self.schema.feature_names
        self._offsets: np.ndarray | None = None

    def _whole_levels(self, schema, head):
        """The schema with every categorical column's levels read from the whole table.

        Sets ``observed``: the codes of the levels present in the table, by column.
        """
        self.observed = {}
        text = [j for j, c in enumerate(schema.columns) if c.is_categorical]
        if not text:
            return schema
        dask, _ = import_dask()
        # each partition's distinct values, gathered here (a shuffle is not needed for a
        # few levels, and Dask's would need a distributed scheduler)
        per_part = self.compute(*[dask.delayed(_distinct)(part, text) for part in self.parts])
        per_part = per_part if self.n_parts > 1 else (per_part,)
        columns = list(schema.columns)
        for c, j in enumerate(text):
            col = columns[j]
            present = list(dict.fromkeys(v for part in per_part for v in part[c][0]))
            markers = [m for part in per_part for m in part[c][1]]
            dtype = col.dtype
            if isinstance(dtype, pd.CategoricalDtype):  # its own categories come first
                known = set(col.levels.tolist())
                levels = list(col.levels) + sorted((v for v in present if v not in known),
                                                   key=str)
                if len(levels) > len(col.levels):  # categories the first rows did not know
                    dtype = pd.CategoricalDtype(levels, ordered=col.ordered)
            else:
                try:
                    levels = sorted(present)
                except TypeError:  # mixed types: first-seen order
                    levels = present
            level_array = np.asarray(levels, dtype=object)
            columns[j] = Column(col.name, col.kind, level_array, col.ordered, dtype,
                                markers[0] if markers else col.missing)
            lookup = {v: i for i, v in enumerate(level_array.tolist())}
            self.observed[j] = np.sort(np.array([lookup[v] for v in present], dtype=float))
        whole = Dataset(np.empty((0, len(columns))), columns, schema.is_frame,
                        schema.column_labels)
        return Dataset.from_data(head, like=whole)

    def adopt(self, schema):
        """Take ``schema`` (the model's levels: numeric columns made categorical) as the table's.

        The newly categorical columns' ``observed`` codes are read from the
        whole table (their distinct values, partition by partition).
        """
        new = [j for j, c in enumerate(schema.columns)
               if c.is_categorical and j not in self.observed]
        if new:
            dask, _ = import_dask()
            per_part = self.compute(*[dask.delayed(_distinct)(part, new) for part in self.parts])
            per_part = per_part if self.n_parts > 1 else (per_part,)
            for c, j in enumerate(new):
                index = pd.Index(np.asarray(schema.columns[j].levels, dtype=np.float64))
                present = np.unique([float(v) for part in per_part for v in part[c][0]])
                codes = index.get_indexer(pd.Index(present))
                self.observed[j] = np.sort(codes[codes >= 0].astype(float))
        self.schema = schema

    # ----------------------------------------------------------- whole-table facts
    def compute(self, *collections):
        """Dask collections computed on the client's cluster (or Dask's default scheduler)."""
        out = compute_on(self.client, *collections)
        return out[0] if len(collections) == 1 else out

    def quantiles(self, columns, probs):
        """Approximate quantiles ``(len(asked), len(columns))`` of the non-missing values.

        ``asked`` (returned too) holds ``probs`` and ``QUANTILE_STEPS + 1`` evenly
        spaced probabilities; the ends are the exact minimum and maximum.
        """
        probs = np.union1d(np.linspace(0, 1, QUANTILE_STEPS + 1), probs)
        # as numbers: numpy cannot interpolate between booleans
        frame = self.frame[[self.frame.columns[j] for j in columns]].astype(np.float64)
        q, low, high = self.compute(frame.quantile(probs), frame.min(), frame.max())
        empty = [self.names[j] for j, v in zip(columns, np.asarray(low, dtype=np.float64))
                 if np.isnan(v)]
        if empty:
            raise InvalidParameterError(f"feature {empty[0]!r} has no non-missing values; "
                                        "its bins or grid need data in it.")
        # a copy: the quantiles of one column come as a read-only view (copy-on-write)
        q = np.array(q, dtype=np.float64).reshape(probs.size, len(columns))
        # the merged quantiles can miss the ends (partitions of disjoint ranges): exact ones
        q[0], q[-1] = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
        return q, probs

    def column_summaries(self, columns, limit: int = DISTINCT_LIMIT) -> dict:
        """Each column's :class:`~._design.ColumnSummary` over the whole table (one pass).

        The same summary the in-memory design step reads of the same rows: exact
        ends, and the distinct values with their counts when there are at most
        ``limit``.
        """
        parts = self.map(None, _column_summaries, list(columns), int(limit))
        out = {j: merge_summaries([part[c] for part in parts]) for c, j in enumerate(columns)}
        empty = [self.names[j] for j in columns if np.isnan(out[j].low)]
        if empty:
            raise InvalidParameterError(f"feature {empty[0]!r} has no non-missing values; "
                                        "its bins or grid need data in it.")
        return out

    def quantile_edges(self, columns, n_bins):
        """Approximate quantile edges ``k / K`` per column (ties collapsed), ends exact.

        Also returns the quantile table ``(q, asked)`` they came from.
        """
        probs = np.arange(n_bins + 1) / n_bins
        q, asked = self.quantiles(columns, probs)
        rows = np.searchsorted(asked, probs)
        return [np.unique(q[rows, c]) for c in range(len(columns))], (q, asked)

    def offsets(self) -> np.ndarray:
        """Row offset of every partition, and the total, ``(n_parts + 1,)`` (one pass)."""
        if self._offsets is None:
            self._offsets = partition_offsets(self.client, self.parts)
        return self._offsets

    def row_labels(self, rows: np.ndarray) -> np.ndarray | None:
        """The index labels of the rows at table positions ``rows`` (sorted; one pass).

        None for an array, or a table whose index holds the positions
        ``0 .. n - 1`` (as :func:`~modellens.data.row_labels` says for a frame).
        """
        if not self.has_index:
            return None
        dask, _ = import_dask()
        offsets = self.offsets()
        cuts = np.searchsorted(rows, offsets)
        per_part = self.compute(*[dask.delayed(_labels_at)(part, rows[lo:hi] - offsets[p])
                                  for p, (part, lo, hi) in
                                  enumerate(zip(self.parts, cuts[:-1], cuts[1:]))])
        per_part = per_part if self.n_parts > 1 else (per_part,)
        labels = np.concatenate([np.asarray(part) for part in per_part])
        if labels.dtype.kind in "iu" and np.array_equal(labels, rows):
            return None  # the labels are the positions
        return labels

    # ------------------------------------------------------------------ driver
    def map(self, model, fn, *args) -> list:
        """``fn(values, model, index, *args)`` on every encoded partition, in partition order.

        The one Dask driver's :func:`~._dask_tables.map_partitions`: a partition whose
        call fails raises its error with a note naming the partition and its
        rows; a worker lost for good raises ``ModelError``.
        """
        return map_partitions(self.parts, fn, *args, schema=self.schema, model=model,
                              client=self.client, store=self.store, offsets=self.offsets)

    def run(self, model, plans_for, *, desc: str = "modellens") -> list:
        """Each plan's result: ``plans_for(values, index, model)`` run on every partition, merged.

        ``plans_for`` builds a request's plans on the encoded rows of one
        partition (``index`` its position, ``model`` the copy that answers
        there); on the client it is called once on no rows (``index=None``) to
        merge the partitions' summaries and finish.  It travels to the workers:
        it must hold the design only (not the request, whose client does not
        pickle).
        """
        parts = self.map(model, _summarise_partition, plans_for, desc, self.local)
        plans = plans_for(np.empty((0, len(self.schema.columns))), None, model)
        return [plan.finish(plan.merge([part[i] for part in parts]))
                for i, plan in enumerate(plans)]

    def run_outputs(self, model, plans_for, *, desc: str = "modellens") -> list:
        """Each output's results (see :meth:`run`), every output in one pass over the partitions.

        Every partition evaluates its rows once for all the outputs of
        ``model``, which learnt them when it was wrapped, here on the client
        (:meth:`~modellens.models.Model._probe`): every partition plans them
        all, a partition of no rows included.
        """
        parts = self.map(model, _summarise_outputs_partition, plans_for, desc, self.local)
        k = model.n_outputs
        views = [model] if k == 1 else [model.view(c) for c in range(k)]
        out = []
        for c, view in enumerate(views):
            plans = plans_for(np.empty((0, len(self.schema.columns))), None, view)
            out.append([plan.finish(plan.merge([part[c][i] for part in parts]))
                        for i, plan in enumerate(plans)])
        return out


def _labels_at(part, positions):
    """A partition's index labels at ``positions`` (its own row positions)."""
    return part.index[positions]


def _distinct(part, columns):
    """The distinct non-missing values of some columns of one partition (by position).

    With each column's first missing value, an empty list where it has none.
    """
    if not hasattr(part, "iloc"):
        part = pd.DataFrame(part)
    out = []
    for j in columns:
        series = part.iloc[:, j].astype(object)
        missing = series.isna()
        # and the first missing value as the user wrote it (None, NaN, pd.NA), if any
        out.append((pd.unique(series[~missing]).tolist(), series[missing].iloc[:1].tolist()))
    return out


def _column_summaries(values, model, index, columns, limit):
    """One partition's summaries of some columns (encoded values, NaN missing)."""
    out = []
    for j in columns:
        x = values[:, j]
        out.append(summarise_values(x[~np.isnan(x)], limit))
    return out


def _summarise_outputs_partition(values, model, index, plans_for, desc, options):
    return summarise_outputs(model, lambda one: plans_for(values, index, one), options,
                             desc=f"{desc} (partition)")


def _summarise_partition(values, model, index, plans_for, desc, options):
    return summarise(model, plans_for(values, index, model), options,
                     desc=f"{desc} (partition)")
