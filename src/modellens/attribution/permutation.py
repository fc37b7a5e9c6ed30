r"""Monte Carlo Shapley values over random feature orders (Štrumbelj & Kononenko 2014).

For a random order :math:`\pi` of the features, feature :math:`j`'s marginal
contribution is :math:`v(P_j^\pi \cup \{j\}) - v(P_j^\pi)`, with
:math:`P_j^\pi` the features before :math:`j`; its mean over uniform orders is
:math:`\phi_j`.  Orders are drawn in antithetic pairs, :math:`\pi` and its
reverse, whose contributions are averaged before the mean is taken: the two
are negatively correlated, and one pair needs only the :math:`2(d-1)`
coalitions "first :math:`t` features of :math:`\pi`" and their complements.
Every order's contributions add up to :math:`v(N) - v(\emptyset)`, so the
estimate is efficient exactly.
"""

from __future__ import annotations

import numpy as np

from ._coalitions import unique_masks
from ._games import Estimate

__all__ = ["PermutationEstimator", "MIN_ANTITHETIC_FOR_STD"]

#: Fewest antithetic pairs from which standard errors are reported.  With fewer,
#: the pairs' contributions are often tied (they take few distinct values) and
#: their spread is itself too noisy for a t interval to hold: measured on a
#: 6-feature model with three-way interactions, t intervals from 2 pairs covered
#: 54% of the errors (45% of the errors had a standard error of 0), from 5 pairs
#: 88%; on 10 correlated features (an MLP, gradient boosting, a model with 3- and
#: 4-way interactions; 3,600 intervals each) 5 pairs covered 91-94%, 8 pairs
#: 94-96% (benchmarks/bench_shapley_frontier.py has the study).
MIN_ANTITHETIC_FOR_STD = 8


class PermutationEstimator:
    """Planned coalitions of antithetic permutation sampling, drawn per row.

    ``n_antithetic`` is the number of antithetic pairs of orders (an order and
    its reverse) per explained row; row ``i`` draws them from ``streams(i)``
    (:class:`~._streams.RowStreams`).  Works on any game that offers coalition rows.
    :meth:`grow` draws more pairs for some rows (the stopping rule of
    :mod:`._stopping`), continuing each row's stream, so a row's first pairs
    are those of a fixed budget.
    """

    def __init__(self, game, n_permutations: int, streams):
        n, d = game.n_explained, game.n_players
        self.n, self.d, self.game = n, d, game
        self._rngs = [streams(i) for i in range(n)]
        #: the reduced contributions of each row: a list of (pairs, d) arrays per row
        self._contrib: list[list[np.ndarray]] = [[] for _ in range(n)]
        self._pending: list = []
        self.pairs = np.zeros(n, dtype=np.int64)
        self.n_coalitions = np.zeros(n, dtype=np.int64)
        first = -(-int(n_permutations) // 2)
        self.n_antithetic = first
        self.segments = self.grow(np.arange(n), np.full(n, first))

    @property
    def dof(self) -> np.ndarray:
        """Degrees of freedom of each row's standard errors: its pairs - 1."""
        return self.pairs - 1.0

    @property
    def draws(self) -> np.ndarray:
        """Antithetic pairs drawn so far, per row (the stopping rule's unit)."""
        return self.pairs

    def draw_cap(self, max_evals: int) -> int:
        """Most pairs a row may draw within ``max_evals`` coalitions."""
        return max(1, int(max_evals) // (2 * (self.d - 1)))

    def _draw_orders(self, i: int, pairs: int):
        """``(orders, masks)`` of ``pairs`` new antithetic pairs of row ``i``: the orders
        (what :meth:`_absorb` reads) and the coalitions they need."""
        d = self.d
        order = np.argsort(self._rngs[i].random((pairs, d)), axis=1)
        position = np.argsort(order, axis=1)
        prefix = position[:, None, :] < np.arange(1, d)[None, :, None]  # (pairs, d-1, d)
        return order, np.concatenate([prefix, ~prefix], axis=1).reshape(-1, d)

    def grow(self, rows, more) -> list:
        """Draw ``more[k]`` pairs for each row ``rows[k]``: the segment of their coalitions."""
        blocks, counts, batch = [], [], []
        for i, p in zip(rows, more):
            order, masks = self._draw_orders(int(i), int(p))
            uniq, _, inverse = unique_masks(masks)
            blocks.append(uniq)
            counts.append(len(uniq))
            batch.append((int(i), order, inverse))
            self.pairs[i] += int(p)
            self.n_coalitions[i] += len(uniq)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        seg = self.game.coalition_rows(np.concatenate(blocks),
                                       rows=np.repeat(np.asarray(rows), counts))
        self._pending.append((seg, offsets, batch))
        return [seg]

    def _absorb(self, v0, fx):
        """Each evaluated batch's per-pair contributions, kept per row."""
        d = self.d
        for seg, offsets, batch in self._pending:
            for k, (i, order, inverse) in enumerate(batch):
                P = len(order)
                v = seg.result[offsets[k]: offsets[k + 1]][inverse].reshape(P, 2, d - 1)
                head = np.full((P, 1), v0)
                tail = np.full((P, 1), fx[i])
                forward = np.concatenate([head, v[:, 0], tail], axis=1)    # v(first t of pi)
                backward = np.concatenate([tail, v[:, 1], head], axis=1)   # v(all but first t)
                # feature pi_t joins after pi_1..pi_{t-1} (forward) or after pi_{t+1}..pi_d
                contrib = 0.5 * (np.diff(forward, axis=1) - np.diff(backward, axis=1))
                per_antithetic = np.empty((P, d))
                np.put_along_axis(per_antithetic, order, contrib, axis=1)
                self._contrib[i].append(per_antithetic)
        self._pending = []

    def estimate(self, game) -> Estimate:
        """Mean contribution over the pairs, with its standard error."""
        v0, fx = game.ends()
        self._absorb(v0, fx)
        n, d = self.n, self.d
        values = np.empty((n, d))
        std = np.full((n, d), np.nan)
        for i in range(n):
            per_antithetic = np.concatenate(self._contrib[i])
            P = len(per_antithetic)
            values[i] = per_antithetic.mean(axis=0)
            if P >= MIN_ANTITHETIC_FOR_STD:
                std[i] = per_antithetic.std(axis=0, ddof=1) / np.sqrt(P)
        return Estimate(values, std, v0, fx)
