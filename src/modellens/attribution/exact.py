r"""Exact Shapley values: every coalition of every explained row, combined in closed form.

With all :math:`2^d` worths :math:`v(S)` of a game the Shapley values are the
linear map :math:`\phi = v\,W` of :func:`._coalitions.exact_weights`:

.. math:: \phi_j = \sum_{S \subseteq N \setminus \{j\}}
          \frac{|S|!\,(d - |S| - 1)!}{d!}\,\big(v(S \cup \{j\}) - v(S)\big).

The empty and full coalitions come from the game's end segments; the
``2**d - 2`` others are planned as one segment of coalition rows.
"""

from __future__ import annotations

import numpy as np

from ._coalitions import bit_masks, exact_weights
from ._games import Estimate

__all__ = ["ExactEstimator", "OnePlayer"]


class ExactEstimator:
    """All ``2**d - 2`` proper coalitions for every row of a game that offers rows."""

    dof = None

    def __init__(self, game):
        self.n, self.d = game.n_explained, game.n_players
        masks = bit_masks(np.arange(1, 2 ** self.d - 1), self.d)
        self._seg = game.coalition_rows(masks)
        self.segments = [self._seg]
        self.n_coalitions = np.full(self.n, 2 ** self.d - 2)

    def worths(self, game):
        """``(v, v0, fx)``: every row's worth of every coalition by bit mask ``(n, 2**d)``,
        the empty coalition's and the full one's (the game's ends)."""
        v0, fx = game.ends()
        v = np.empty((self.n, 2 ** self.d))
        v[:, 0] = v0
        v[:, -1] = fx
        v[:, 1:-1] = self._seg.result.reshape(self.n, -1)
        return v, v0, fx

    def estimate(self, game) -> Estimate:
        v, v0, fx = self.worths(game)
        return Estimate(v @ exact_weights(self.d), None, v0, fx)


class OnePlayer:
    r"""A game of one player, who owns the whole difference :math:`f(x) - v(\emptyset)`.

    Needs no coalition rows.  ``sampled``: the request asked for a sampling
    estimator, whose standard errors are then exactly 0 (``dof`` inf).
    """

    n_coalitions = 0
    segments = ()

    def __init__(self, game, *, sampled: bool):
        self.sampled = sampled
        self.dof = np.full(game.n_explained, np.inf) if sampled else None

    def estimate(self, game) -> Estimate:
        v0, fx = game.ends()
        values = (fx - v0)[:, None]
        return Estimate(values, np.zeros_like(values) if self.sampled else None, v0, fx)
