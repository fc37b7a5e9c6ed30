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

from statistics import NormalDist

import numpy as np

from ._coalitions import unique_masks
from ._games import Estimate

__all__ = ["PermutationEstimator", "MIN_ANTITHETIC_FOR_STD", "SKEW_PAIRS", "skewness",
           "too_skewed", "hierarchy_orders"]

#: Fewest antithetic pairs from which standard errors are reported.  With fewer,
#: the pairs' contributions are often tied (they take few distinct values) and
#: their spread is itself too noisy for a t interval to hold: measured on a
#: 6-feature model with three-way interactions, t intervals from 2 pairs covered
#: 54% of the errors (45% of the errors had a standard error of 0), from 5 pairs
#: 88%; on 10 correlated features (an MLP, gradient boosting, a model with 3- and
#: 4-way interactions; 3,600 intervals each) 5 pairs covered 91-94%, 8 pairs
#: 94-96% (benchmarks/bench_shapley_frontier.py has the study).
MIN_ANTITHETIC_FOR_STD = 8

#: A text's or image's standard errors are withheld while some player's pair
#: contributions are too skewed for a normal interval of their mean: when its sample
#: skewness g is clearly not 0 (|g| > z sqrt(6 / P), z standard errors of a normal
#: sample's, z the normal quantile of 1 - 0.005 / d: a row of d unskewed players is
#: flagged 1% of the time; z = 3.2 for 8 players, 3.7 for 50) and the pairs P are
#: fewer than ``SKEW_PAIRS * g**2`` (a relaxed
#: form of Cochran's rule n > 25 g**2 for a mean's 95% interval).  A removal game
#: scores one masked input per coalition, and a masked text is out of the model's
#: data: a word may move the score only when it joins one of a few small coalitions
#: (the tiny transformer of the tests, as an earlier transformers release trained it:
#: "beach" alone scores 0.085, and each other
#: word's contribution is -0.04 in 3.5% of pairs, about 0 otherwise).  Pairs that
#: miss that rare contribution show a small spread, and their intervals missed the
#: exact value in half the runs at 16 pairs (coverage 0.50; 0.72 at 32, 0.91 at 64,
#: 0.94 at 128).  With the rule (200 seeds): no error at 16-64 pairs, errors in 27%
#: of the runs at 128 pairs (coverage 0.98), 97% at 256 (0.95), all at 512 (0.94);
#: on an 11-word text (100 seeds) 85% at 128 pairs (0.94), all at 256 and 512
#: (0.95); a smooth game of 8 words keeps its errors from 8 pairs on (coverage 0.95).
#: Tables average each coalition over background rows and keep the plain rule (their
#: studies cover at 8 pairs).
SKEW_PAIRS = 3.0


def skewness(x: np.ndarray) -> np.ndarray:
    """The adjusted sample skewness of each column of ``x`` ``(P, d)`` (0 where constant)."""
    P = len(x)
    dev = x - x.mean(axis=0)
    m2, m3 = (dev ** 2).mean(axis=0), (dev ** 3).mean(axis=0)
    scale = np.where(m2 > 1e-30 * np.maximum(np.abs(x).max(axis=0) ** 2, 1e-300), m2, np.inf)
    return np.sqrt(P * (P - 1)) / (P - 2) * m3 / scale ** 1.5


def too_skewed(terms: np.ndarray, n_terms: int | None = None):
    """``(column, skewness, draws it needs)`` of the most skewed column of ``terms`` ``(P, m)``
    (P independent draws of m means) when some column's skewness is too large for a normal
    interval from P draws (the rule of ``SKEW_PAIRS``), else None.

    ``n_terms``: how many means the row reports (the rule's multiplicity; default m).
    """
    P = len(terms)
    if P < 3:
        return None
    g = skewness(terms)
    z = NormalDist().inv_cdf(1 - 0.005 / max(n_terms or terms.shape[1], 1))
    bad = (np.abs(g) > z * np.sqrt(6 / P)) & (P < SKEW_PAIRS * g ** 2)
    if not bad.any():
        return None
    j = int(np.argmax(np.where(bad, np.abs(g), -1)))
    return j, float(g[j]), int(np.ceil(SKEW_PAIRS * g[j] ** 2))


def hierarchy_orders(rng, n_orders: int, groups: np.ndarray) -> np.ndarray:
    """``n_orders`` uniform orders ``(n_orders, d)`` that keep every group's players together.

    The groups in a uniformly random order, each group's players in a uniformly
    random order within it: the orders of Owen values (``._owen``).
    """
    m = int(groups.max()) + 1
    rank = np.argsort(np.argsort(rng.random((n_orders, m)), axis=1), axis=1)
    within = rng.random((n_orders, len(groups)))          # in [0, 1): below the next rank
    return np.argsort(rank[:, groups] + within, axis=1, kind="stable")


class PermutationEstimator:
    """Planned coalitions of antithetic permutation sampling, drawn per row.

    ``n_antithetic`` is the number of antithetic pairs of orders (an order and
    its reverse) per explained row; row ``i`` draws them from ``streams(i)``
    (:class:`~._streams.RowStreams`).  Works on any game that offers coalition rows.
    :meth:`grow` draws more pairs for some rows (the stopping rule of
    :mod:`._stopping`), continuing each row's stream, so a row's first pairs
    are those of a fixed budget.
    """

    def __init__(self, game, n_permutations: int, streams, *, groups=None, skew_check=False):
        n, d = game.n_explained, game.n_players
        self.n, self.d, self.game = n, d, game
        #: withhold a row's errors while its contributions are too skewed (``SKEW_PAIRS``)
        self.skew_check = skew_check
        #: the rows whose errors were withheld: row -> (player, skewness, pairs it needs)
        self.skewed: dict[int, tuple[int, float, int]] = {}
        #: the group of each player: orders keep each group together (Owen values, ._owen)
        self.groups = None if groups is None else np.asarray(groups, dtype=np.intp)
        if groups is not None:
            self.index = "owen"
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
        order = np.argsort(self._rngs[i].random((pairs, d)), axis=1) \
            if self.groups is None else hierarchy_orders(self._rngs[i], pairs, self.groups)
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
                self._check_skew(i, per_antithetic, std)
        return Estimate(values, std, v0, fx)

    def _check_skew(self, i, per_antithetic, std):
        """Withhold row ``i``'s errors while a player's contributions are too skewed."""
        self.skewed.pop(i, None)
        if not self.skew_check:
            return
        found = too_skewed(per_antithetic)
        if found is not None:
            self.skewed[i] = found
            std[i] = np.nan
