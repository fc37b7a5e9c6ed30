r"""KernelSHAP in each row's own game of the players that matter.

A null player of a row (a feature whose value equals every background row's,
:meth:`~._games.Game.null_players`) has Shapley value 0, and the other
players' values are those of the smaller game without it: the Shapley value
of player :math:`j` in :math:`v` equals its value in the game
:math:`v'(T) = v(T)` over the active players :math:`A` only, because
:math:`v(S) = v(S \cap A)` for every coalition.  Sampling coalitions of all
:math:`d` players for such a row wastes the budget: the sizes it draws are
sizes among :math:`d`, not among the :math:`k = |A|` players whose
membership changes the worth, and its border sizes enumerate coalitions that
differ only in null players.  So rows are grouped by their set of active
players and each group gets its own KernelSHAP (with the proxy) of its
:math:`k`-player game, at the same budget per row: a row whose ``2**k - 2``
coalitions fit in the budget is enumerated, exactly.

On a 24-feature game whose rows differ from a one-row background in 8
features (6k coalitions per row, 120 rows) the median error was 2.3x lower than
KernelSHAP over all 24 players.
"""

from __future__ import annotations

import numpy as np

from ._games import Estimate, Game
from ._proxy import ProxyKernelEstimator

__all__ = ["ActiveKernelEstimator"]


class _ActiveGame(Game):
    """Rows ``rows`` of ``game`` as a game of their ``active`` players only: a coalition
    of the active players is the one of ``game`` with every null player left out."""

    def __init__(self, game, rows: np.ndarray, active: np.ndarray):
        self.game, self.rows, self.active = game, rows, active
        self.n_explained, self.n_players = len(rows), int(active.sum())
        self.value_function = game.value_function

    def _embed(self, masks):
        full = np.zeros((len(masks), self.game.n_players), dtype=bool)
        full[:, self.active] = masks
        return full

    def coalition_rows(self, masks, rows=None):
        masks = np.asarray(masks, dtype=bool)
        if rows is None:  # every row of the group, in the order row-major as the game's
            rows = np.repeat(np.arange(self.n_explained), len(masks))
            masks = np.tile(masks, (self.n_explained, 1))
        return self.game.coalition_rows(self._embed(masks), rows=self.rows[np.asarray(rows)])

    def ends(self):
        v0, fx = self.game.ends()
        return v0, fx[self.rows]


class ActiveKernelEstimator:
    """KernelSHAP (with the proxy) per group of rows sharing their active players.

    Offers what the stopping rule and the result read from
    :class:`~._proxy.ProxyKernelEstimator`, per explained row of the whole game.
    """

    def __init__(self, game, n_samples: int, streams, *, null: np.ndarray,
                 pooled: bool = False):
        self.n, self.d = game.n_explained, game.n_players
        patterns, group = np.unique(~null, axis=0, return_inverse=True)
        #: each row's group, and its position among the group's rows
        self._group = np.asarray(group).reshape(-1)
        self._local = np.zeros(self.n, dtype=np.int64)
        #: (rows, active players, the estimator of their game): None for rows with fewer
        #: than two active players
        self.groups: list[tuple[np.ndarray, np.ndarray, ProxyKernelEstimator | None]] = []
        for g, active in enumerate(patterns):
            rows = np.flatnonzero(self._group == g)
            self._local[rows] = np.arange(len(rows))
            estimator = None
            if active.sum() >= 2:  # else nothing to sample: v(N) - v(empty) is the one value
                estimator = ProxyKernelEstimator(_ActiveGame(game, rows, active), n_samples,
                                                 _Streams(streams, rows), pooled=pooled)
            self.groups.append((rows, active, estimator))
        self.segments = [s for *_, e in self.groups if e is not None for s in e.segments]
        self.proxy_rows = np.zeros(self.n, dtype=bool)

    def _per_row(self, read, fill, dtype=np.float64) -> np.ndarray:
        out = np.full(self.n, fill, dtype=dtype)
        for rows, _, estimator in self.groups:
            if estimator is not None:
                out[rows] = read(estimator)
        return out

    @property
    def draws(self) -> np.ndarray:
        return self._per_row(lambda e: e.draws, 0, np.int64)

    @property
    def n_coalitions(self) -> np.ndarray:
        return self._per_row(lambda e: e.n_coalitions, 0, np.int64)

    @property
    def dof(self) -> np.ndarray:
        return self._per_row(lambda e: e.dof, np.inf)

    def draw_cap(self, max_evals: int) -> np.ndarray:
        return self._per_row(lambda e: e.draw_cap(max_evals), 0, np.int64)

    def grow(self, rows, more) -> list:
        rows, more = np.asarray(rows), np.asarray(more)
        segments: list = []
        for g, (_, _, estimator) in enumerate(self.groups):
            mine = self._group[rows] == g
            if estimator is not None and mine.any():
                segments += estimator.grow(self._local[rows[mine]], more[mine])
        return segments

    def estimate(self, game) -> Estimate:
        v0, fx = game.ends()
        values, std = np.zeros((self.n, self.d)), np.zeros((self.n, self.d))
        for rows, active, estimator in self.groups:
            if estimator is None:
                values[np.ix_(rows, active)] = (fx[rows] - v0)[:, None]
                continue
            part = estimator.estimate(estimator.game)
            values[np.ix_(rows, active)] = part.values
            if part.std is not None:
                std[np.ix_(rows, active)] = part.std
            self.proxy_rows[rows] = estimator.proxy_rows
        return Estimate(values, std, v0, fx)


class _Streams:
    """Row ``j`` of a group draws from the whole game's stream of its row ``rows[j]``."""

    def __init__(self, streams, rows):
        self.streams, self.rows = streams, rows

    def __call__(self, j):
        return self.streams(int(self.rows[j]))
