r"""The tree approach's worths from whole leaves: each background row of a leaf, once.

:class:`~._samplers.TreeSampler` estimates the law of :math:`X_{\bar S}` given
:math:`X_S = x_S` by the background rows in the leaf of :math:`x_S`, each with
weight :math:`1 / n_\ell`.  Drawing ``K`` of them with replacement estimates
the leaf's mean of :math:`f` with a Monte Carlo error and ``K`` model rows;
evaluating each of the :math:`n_\ell` rows once gives that mean exactly (the
expectation the draws estimate, conditioned on the draws' multiplicities:
Rao-Blackwell), with :math:`n_\ell` model rows.  So a query (an explained row
and a coalition) whose leaf holds at most ``n_draws`` rows is evaluated on its
leaf's rows, with no Monte Carlo error; a larger leaf is sampled ``n_draws``
times with the sampler's common uniforms, in batches, exactly as
:class:`~._conditional.ConditionalRows` does.  On R shapr's bike workload
(585 background rows, leaves of 24 to 47 rows) every query is a whole leaf:
a fifth of the model rows of 200 draws, and the draws' error gone from MSEv.

:class:`LeafRows` lays its queries out one after another, ``n_q`` rows each
(``min(n_leaf, K)``), keeping per query only where its leaf starts in the
fitted tree's sorted background and how many rows it has; a chunk's rows are
built from that layout (one ``np.where`` of the explained rows and the
background rows), and its predictions folded into per-query sums by pieces
cut at the same places whatever the chunk sizes.
"""

from __future__ import annotations

import numpy as np

from ..engine import ALIGN_ROWS, Segment
from ._samplers import TreeSampler

__all__ = ["LeafRows", "CoalitionQueries", "coalition_queries", "set_queries"]


def set_queries(seg, foreground, masks, rows):
    """A coalition segment's queries: every mask for every explained row (``rows`` None:
    ``k`` masks) or one mask per query (``rows`` its explained row)."""
    seg.foreground, seg.masks = foreground, np.asarray(masks, dtype=bool)
    if rows is None:
        seg.k, seg.query_rows = seg.masks.shape[0], None
        seg.n_queries = foreground.shape[0] * seg.k
    else:
        seg.query_rows = np.asarray(rows, dtype=np.intp)
        seg.n_queries = seg.masks.shape[0]


def coalition_queries(seg, queries):
    """``(explained row, mask)`` of queries of a coalition segment: with its masks for every
    row (``query_rows`` None, ``k`` masks) or one mask per query."""
    if seg.query_rows is None:
        fg, which = np.divmod(queries, seg.k)
        return fg, seg.masks[which]
    return seg.query_rows[queries], seg.masks[queries]


class CoalitionQueries:
    """What :func:`set_queries` gives a coalition segment (declared for the type checker)."""

    foreground: np.ndarray
    masks: np.ndarray
    query_rows: np.ndarray | None
    k: int
    n_queries: int


class LeafRows(CoalitionQueries, Segment):
    """Queries of a tree sampler's game, each evaluated on its leaf (see the module).

    ``result`` holds :math:`\\hat v_i(S)` per query and ``batches`` ``(Q, B)`` the
    means of its batches of draws (all equal to the leaf's mean for a whole leaf).
    """

    batches: np.ndarray | None

    def __init__(self, sampler: TreeSampler, foreground, masks, *, rows=None, n_batches=1):
        self.sampler = sampler
        set_queries(self, foreground, masks, rows)
        self.K, self.n_batches = sampler.n_draws, n_batches
        self.width, self.group = foreground.shape[1], 1
        self.batches = None
        self._lay_out()

    def query(self, queries):
        """``(explained row, mask)`` of each query."""
        return coalition_queries(self, queries)

    def _lay_out(self):
        """Each query's leaf: where it starts in ``self._order`` and its rows."""
        fg, masks = self.foreground, self.masks
        if self.query_rows is None:  # every mask for every row: (n, k) in query order
            uniq, inverse, explained = masks, np.arange(self.k), None
        else:
            uniq, inverse = np.unique(masks, axis=0, return_inverse=True)
            inverse, explained = inverse.ravel(), self.query_rows
        m = self.sampler.m
        orders, first = [], np.empty(self.n_queries, dtype=np.int64)
        span = np.empty(self.n_queries, dtype=np.int64)
        for u, mask in enumerate(uniq):
            order, start, count = self.sampler.leaf_spans(
                fg if explained is None else fg[explained[inverse == u]], mask)
            orders.append(order)
            # queries i * k + u, or those of mask u
            at = slice(u, None, self.k) if explained is None else np.flatnonzero(inverse == u)
            first[at], span[at] = start + u * m, count
        self._order = np.concatenate(orders) if orders else np.zeros(0, dtype=np.intp)
        self._first, self._span = first, span
        self._whole = span <= self.K
        per = np.where(self._whole, span, self.K)
        self._offsets = np.concatenate([[0], np.cumsum(per)])
        self.n_rows = int(self._offsets[-1])

    def _locate(self, start, stop):
        """Query and position within it of rows ``start:stop``."""
        idx = np.arange(start, stop)
        q = np.searchsorted(self._offsets, idx, side="right") - 1
        return q, idx - self._offsets[q]

    def fill(self, start, stop, out):
        q, pos = self._locate(start, stop)
        span = self._span[q]
        u = self.sampler.u[np.minimum(pos, self.K - 1)]
        pick = np.where(self._whole[q], pos,
                        np.minimum((u * span).astype(np.int64), span - 1))
        drawn = self.sampler.background[self._order[self._first[q] + pick]]
        fg, masks = self.query(q)
        np.copyto(out, np.where(masks, self.foreground[fg], drawn))

    def _allocate(self):
        self.result = np.zeros(self.n_queries * (self.n_batches + 1))

    def _pieces(self, start, stop):
        """Query, column and weight of rows ``start:stop``: column B holds a whole leaf's
        mean (every batch's), columns 0..B-1 the batches' means of sampled draws."""
        B = self.n_batches
        q, pos = self._locate(start, stop)
        whole = self._whole[q]
        return q, np.where(whole, B, pos // (self.K // B)), \
            np.where(whole, 1.0 / self._span[q], B / self.K)

    def _store(self, start, stop, preds):
        q, col, weight = self._pieces(start, stop)
        entry = q * (self.n_batches + 1) + col
        # pieces cut where the entry changes and at the engine's aligned chunk ends: the
        # same pieces, and sums, whatever the chunk sizes
        cuts = np.union1d(np.flatnonzero(np.diff(entry)) + 1,
                          np.arange(-(-start // ALIGN_ROWS) * ALIGN_ROWS, stop, ALIGN_ROWS)
                          - start)
        cuts = np.union1d([0], cuts[(cuts > 0) & (cuts < stop - start)])
        np.add.at(self.result, entry[cuts], np.add.reduceat(weight * preds, cuts))

    def _finish(self):
        if self.result is None:
            self._allocate()
        B = self.n_batches
        acc = self.result.reshape(self.n_queries, B + 1)
        batches = acc[:, :B] + acc[:, B:]
        self.batches = batches
        self.result = np.where(self._whole, acc[:, B], batches.mean(axis=1))
        if self.on_finish is not None:
            self.on_finish(self)

    def rows_per_explained(self, n: int) -> np.ndarray:
        """Model rows of this segment's queries, per explained row ``(n,)``."""
        fg = np.arange(self.n_queries) // self.k if self.query_rows is None \
            else self.query_rows
        return np.bincount(fg, weights=np.diff(self._offsets), minlength=n).astype(np.int64)

    @property
    def monte_carlo_free(self) -> bool:
        """Whether every query was a whole leaf (its batches all equal: no draws' error)."""
        return bool(self._whole.all())
