"""Per-column facts that every effect method's design step reads, in memory and out of core.

A method's design (PD's grid, ALE's bins or levels, DALE's bins, the M-plot's
neighbourhoods) is one function of these facts (see :mod:`._design`), never
of where the rows are.  Two providers give the same facts:

- :class:`MemoryFacts` reads a :class:`~modellens.data.Dataset`'s columns:
  exact quantiles, one compiled pass and selection per column (no sort);
- :class:`TableFacts` reads an out-of-core table (Dask data) in passes over
  its partitions: the same column summaries merged from the partitions, and
  Dask's approximate quantiles for a column of many distinct values (exact,
  from the counts, for one of few values).

The facts of one column: its summary (:class:`~modellens.engine.ColumnSummary`:
exact ends, the distinct values and their counts up to a limit), its
quantile bin edges, the codes of its observed levels and their order for
ALE.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from ..engine import ColumnSummary, count_quantile_edges, summarise_column
from ._categorical import level_order, level_orders_out_of_core
from .binning import check_bins, edges_of, quantile_ranks

__all__ = ["ColumnFacts", "MemoryFacts", "TableFacts", "facts_of"]


@dataclass(frozen=True)
class ColumnFacts:
    """One column's summary and, when asked (``n_bins``), its quantile bin edges."""

    summary: ColumnSummary
    edges: np.ndarray | None = None


class MemoryFacts:
    """The facts of a dataset in memory: exact, each column read once per question."""

    in_memory = True
    n_parts = 0

    def __init__(self, dataset):
        self.dataset = dataset

    def columns(self, columns, limit: int, *, n_bins: int | None = None) -> dict:
        """Each column's :class:`ColumnFacts`; with ``n_bins`` its type-1 quantile edges
        (:func:`~.binning.quantile_edges`: the same values, selected rather than sorted)."""
        ranks = None
        if n_bins is not None:
            check_bins(n_bins)
            ranks = partial(quantile_ranks, n_bins=n_bins)
        out = {}
        for j in columns:
            summary, at = summarise_column(self.dataset.values[:, j], limit, ranks)
            out[j] = ColumnFacts(summary, None if at is None else edges_of(summary.low, at))
        return out

    def observed_levels(self, j) -> np.ndarray:
        """The codes of the levels the column holds, sorted."""
        x = self.dataset.values[:, j]
        return np.unique(x[~np.isnan(x)])

    def level_orders(self, columns) -> dict:
        """Each categorical column's observed levels in ALE's order."""
        return {j: level_order(self.dataset, j) for j in columns}


class TableFacts:
    """The facts of an out-of-core table, each question one pass over its partitions."""

    in_memory = False

    def __init__(self, table):
        self.table = table
        self.n_parts = table.n_parts

    def columns(self, columns, limit: int, *, n_bins: int | None = None) -> dict:
        columns = list(columns)
        summaries = self.table.column_summaries(columns, limit) if columns else {}
        edges: dict = {}
        if n_bins is not None:
            many = [j for j in columns if summaries[j].values is None]
            if many:
                edges = dict(zip(many, self.table.quantile_edges(many, n_bins)[0]))
            # few distinct values: the exact edges of data in memory, from their counts
            for j in columns:
                if j not in edges:
                    edges[j] = count_quantile_edges(summaries[j], n_bins)
        return {j: ColumnFacts(summaries[j], edges.get(j)) for j in columns}

    def quantile_bins(self, columns, n_bins):
        """Approximate quantile edges of each column, and the quantile table ``(q, asked)``
        they came from (the M-plot reads its points there)."""
        return self.table.quantile_edges(list(columns), n_bins)

    def observed_levels(self, j) -> np.ndarray:
        return self.table.observed[j]

    def level_orders(self, columns) -> dict:
        return level_orders_out_of_core(self.table, list(columns)) if columns else {}


def facts_of(request) -> MemoryFacts | TableFacts:
    """The facts of a request's data: its table's when out of core, else its dataset's."""
    return TableFacts(request.table) if request.out_of_core else MemoryFacts(request.dataset)
