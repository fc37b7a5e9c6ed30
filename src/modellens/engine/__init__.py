"""One engine for every method: plan rows, evaluate them in chunks, reduce.

A method describes the model rows a request needs as :class:`Plan` objects,
each holding segments (every feature, every grid value, every coalition) and a
reduce step; :func:`run` streams all their rows through the model in large
chunks capped in bytes, each segment folding the answers of its own rows as
they arrive, so a partial dependence over a million rows never holds more than
a few chunks.

Rows that several plans read (the predictions at the data) are
:class:`SharedRows`, declared by each plan and evaluated once, first.  A plan
that can also summarise the answers of a subset of rows and merge summaries
runs out of core unchanged: :func:`open_request` (the front door of every
public method) routes Dask data to :class:`OutOfCore`, which runs the plans on
every partition and merges in partition order, or, for answers of one row per
row (local attributions, predictions), hands the partitions to the method,
which maps them lazily.  Both, and the engine's chunks on a cluster, run on
the one Dask driver (``_dask``: ``evaluate_on_client``, ``map_partitions``,
``map_rows``).  The engine needs of a model only what :class:`ModelLike`
names.
"""

from .._kernel_cache import keep_kernels_fresh

keep_kernels_fresh()  # before any kernel module: their caches are keyed on the whole package

from ._dask_tables import compute_on, import_dask, map_rows, partition_offsets, take_rows
from ._design import (DISTINCT_LIMIT, ColumnSummary, count_quantile_edges, feature_sample,
                      few_values, grid_points, summarise_values)
from ._front import Request, open_request
from ._out_of_core import OutOfCore, is_dask_input
from ._plan import DataPredictions, ModelLike, Plan, SharedRows
from ._binned import bin_column, grouped_moments
from ._select import summarise_column
from ._run import (PROGRESS_MIN_ROWS, evaluate, run, run_outputs,
                   summarise, summarise_outputs)
from ._tuner import ALIGN_ROWS, DEFAULT_CHUNK_BYTES, DEFAULT_CHUNK_ROWS, ChunkSizer
from .segments import DataRows, GradientRows, GridRows, Segment, ShiftedRows, compact_index

__all__ = ["open_request", "Request", "OutOfCore", "is_dask_input", "Plan", "SharedRows", "DataPredictions", "ModelLike", "run", "run_outputs", "summarise", "summarise_outputs", "evaluate",
           "Segment", "DataRows", "GridRows", "GradientRows", "ShiftedRows", "ChunkSizer", "compact_index", "ALIGN_ROWS", "DEFAULT_CHUNK_BYTES",
           "DEFAULT_CHUNK_ROWS", "PROGRESS_MIN_ROWS", "ColumnSummary", "DISTINCT_LIMIT",
           "summarise_values", "summarise_column", "bin_column", "grouped_moments", "grid_points", "few_values", "count_quantile_edges",
           # the Dask driver's row maps (predictions, local attributions) and samples
           "compute_on", "import_dask", "map_rows", "partition_offsets", "take_rows",
           "feature_sample"]
