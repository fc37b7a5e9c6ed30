"""The engine's protocol: plans, the rows they share, and what it needs of a model.

A :class:`Plan` is one method's request: the segments holding the model rows
it needs, the :class:`SharedRows` it reads besides them (rows that several
plans of a run need, such as the predictions at the data), and a
:meth:`Plan.reduce` step that turns the folded answers into a result.

A plan that can also :meth:`~Plan.summarise` the answers of a subset of rows
and :meth:`~Plan.merge` such summaries gets an out-of-core and a cluster form
for free: each partition of the data runs the same plan class on its own
rows and the client merges the summaries in partition order (see
:mod:`modellens.engine._out_of_core`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Protocol, runtime_checkable

import numpy as np

from .segments import DataRows, Segment

__all__ = ["Plan", "SharedRows", "DataPredictions", "ModelLike", "share_rows"]


@runtime_checkable
class ModelLike(Protocol):
    """What the engine needs of a model: answers, a chunk cap, and a count of rows.

    :class:`modellens.models.Model` implements it; so can any object that a
    segment's :meth:`~.segments.Segment.answer` calls.
    """

    @property
    def max_chunk_rows(self) -> int | None:
        """Most rows of one call (None: only the engine's byte cap)."""

    def predict(self, rows: np.ndarray) -> np.ndarray:
        """Predictions ``(m,)`` at encoded ``rows`` ``(m, d)``."""

    def gradient(self, rows: np.ndarray, *, backend: str, function=None) -> np.ndarray:
        """Gradient ``(m, d)`` of the explained output at encoded ``rows``."""

    def account(self, calls: int, rows: int) -> None:
        """Count ``calls`` model calls over ``rows`` rows made elsewhere (a Dask worker)."""


class Plan(ABC):
    """The model rows of one request and how their answers become its result.

    Every instance starts with empty ``segments`` and ``shared_rows`` (set
    per instance, before ``__init__`` runs, so a subclass that assigns
    ``self.segments`` itself needs no ``super().__init__()``).

    Attributes
    ----------
    segments : list of Segment
        The plan's own rows; empty for a plan that needs no model rows.
    shared_rows : list of SharedRows
        Rows the plan reads that other plans of the same run may read too.
        The engine merges equal requests (same :meth:`SharedRows.key`),
        evaluates them once and *before* every plan's own segments, so a
        segment's ``on_finish`` may read them.
    """

    segments: list[Segment]
    shared_rows: list[SharedRows]

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        self.segments = []
        self.shared_rows = []
        return self

    @abstractmethod
    def reduce(self):
        """The result, once every segment has been evaluated and folded."""

    # ---------------------------------------------------------- out of core
    def summarise(self):
        """A mergeable summary of the answers of this plan's rows (a subset of the data).

        Plans without one have no out-of-core form.
        """
        raise NotImplementedError(f"{type(self).__name__} has no out-of-core form: it does "
                                  "not summarise the answers of a subset of rows.")

    def merge(self, summaries: list):
        """One summary from those of consecutive subsets of rows, in their order."""
        raise NotImplementedError(f"{type(self).__name__} cannot merge summaries.")

    def finish(self, summary):
        """The result from the (merged) summary of every row."""
        raise NotImplementedError(f"{type(self).__name__} has no out-of-core form.")


class SharedRows(ABC):
    """Model rows that several plans of one run may read, declared by each of them.

    Requests with equal :meth:`key` are merged into one group: the engine
    builds the group's segments once (:meth:`build`), evaluates them before
    the plans' own segments, and binds every request of the group to them.
    """

    @abstractmethod
    def key(self):
        """Requests with equal keys are served by the same rows."""

    @classmethod
    @abstractmethod
    def build(cls, requests: list) -> list:
        """The segments serving every request of a group; binds each request to them."""


class DataPredictions(SharedRows):
    """The predictions at (some of) the rows of a data matrix.

    Parameters
    ----------
    data : ndarray of shape (n, d)
        Encoded rows; requests on the same array share one pass.
    rows : int ndarray, optional
        The row positions the plan reads (default: all).  The pass evaluates
        the union of every request's rows, so a row that no plan needs (one
        the model may not be able to predict) is never evaluated.
    """

    def __init__(self, data: np.ndarray, rows=None):
        self.data = data
        self.rows = None if rows is None else np.asarray(rows, dtype=np.intp)
        # bound by build(), before any plan reads the predictions
        self._segment: DataRows | None = None
        self._positions: np.ndarray | None = None

    def key(self):
        return ("data predictions", id(self.data))

    @classmethod
    def build(cls, requests):
        data = requests[0].data
        n = data.shape[0]
        if any(r.rows is None for r in requests):
            positions = None
        else:
            positions = np.unique(np.concatenate([r.rows for r in requests]))
            if positions.size == n:
                positions = None
        segment = DataRows(data, rows=positions)
        for r in requests:
            r._segment, r._positions = segment, positions
        return [segment]

    def at(self, rows=None) -> np.ndarray:
        """The predictions at the data rows ``rows`` (positions; default: every row)."""
        assert self._segment is not None, "read before the engine built the shared rows"
        result, positions = self._segment.result, self._positions
        if rows is None:
            return result if positions is None else result[np.searchsorted(
                positions, np.arange(self.data.shape[0]))]
        if positions is None:
            return result[rows]
        return result[np.searchsorted(positions, rows)]


def share_rows(plans) -> list[Segment]:
    """Merge the plans' shared-row requests by key and build their segments (in first-seen order)."""
    groups: dict = {}
    for plan in plans:
        for request in plan.shared_rows:
            groups.setdefault((type(request), request.key()), []).append(request)
    segments = []
    for (kind, _), requests in groups.items():
        segments += kind.build(requests)
    return segments
