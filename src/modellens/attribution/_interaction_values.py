r"""SHAP interaction values of any game that offers coalition rows: exact, or sampled.

The SHAP interaction values of a row (Lundberg et al. 2020, the values
TreeSHAP returns with ``interactions=True``) are half the Shapley interaction
index (Grabisch & Roubens 1999) off the diagonal,

.. math:: \Phi_{ij} = \sum_{S \subseteq N \setminus \{i, j\}}
          \frac{|S|!\,(d - |S| - 2)!}{2\,(d - 1)!}\,\nabla_{ij}(S), \qquad
          \nabla_{ij}(S) = v(S \cup ij) - v(S \cup i) - v(S \cup j) + v(S),

and the main effects :math:`\Phi_{ii} = \phi_i - \sum_{j \ne i} \Phi_{ij}` on
it, so each row of the matrix sums to the Shapley value.

* :class:`ExactInteractions`: every coalition (the plan of
  :class:`~.exact.ExactEstimator`); the same worths give the values and the
  interactions.
* :class:`PairPermutationEstimator`: sampled.  The weights
  :math:`\frac{|S|!(d-|S|-2)!}{(d-1)!}` are the law of "the players before
  the pair" when the pair :math:`\{i, j\}` is merged into one player placed
  in a uniformly random order of the :math:`d - 1` players: so in a random
  order of all players, each pair of neighbours :math:`(\pi_k, \pi_{k+1})`
  gives one unbiased draw :math:`\nabla_{\pi_k\pi_{k+1}}(P_{k-1})` at the
  cost of one extra coalition :math:`P_{k-1} \cup \{\pi_{k+1}\}` besides the
  prefixes that the Shapley values read anyway.  Random orders leave some
  pairs without a draw; a *round* instead takes the :math:`d/2` Hamiltonian
  paths of Walecki's decomposition of the complete graph (every pair
  neighbours exactly once; each position holds :math:`d/2` pairs, so the
  pair's position is uniform), relabelled by one uniform random permutation,
  and each with its reverse (antithetic: the reverse's predecessors are the
  complement).  Every pair gets one draw per round, every order of the round
  is marginally uniform (so its marginal contributions give unbiased Shapley
  values), and rounds are independent: the standard errors are the spread of
  the per-round matrices, with ``rounds - 1`` degrees of freedom.  An odd
  number of players gets a null player (worth nothing, dropped from every
  coalition), which changes neither the Shapley values nor the interaction
  index (its two neighbouring weights add up to the weight of the smaller game).
"""

from __future__ import annotations

import warnings
from math import factorial

import numpy as np

from .._validation import InvalidParameterError, ModellensWarning, is_integer

from ._coalitions import bit_masks, exact_weights, unique_masks
from ._games import Estimate
from .exact import ExactEstimator
from .permutation import too_skewed

__all__ = ["ExactInteractions", "PairPermutationEstimator", "interaction_estimator",
           "interaction_matrix",
           "walecki_paths", "MIN_ROUNDS_FOR_STD", "DEFAULT_ROUNDS", "MIN_ROUNDS_MEDIA"]

#: Fewest rounds from which standard errors are reported (as permutation sampling's
#: MIN_ANTITHETIC_FOR_STD: with fewer, the spread is too often 0 or wild).
MIN_ROUNDS_FOR_STD = 5
#: Rounds per explained row of a table when no budget is given (``n_permutations`` =
#: rounds x d'); texts and images get :data:`MIN_ROUNDS_MEDIA`.
DEFAULT_ROUNDS = 10
#: Fewest rounds from which a text's or an image's interaction values get errors.  A
#: removal game's pair term is a rare spike (a pair of words moves the score in few
#: coalitions), and the rounds' spread misses it: on the tiny transformer of the tests
#: (exact values by enumeration, 20 seeds each) the intervals of the interaction values
#: covered 75% at 5 rounds and 87% at 10 on a 13-word text, 90% at 10, 94% at 20 and 95%
#: at 40 on a 15-word one.  From these rounds on the rule of
#: :data:`.permutation.SKEW_PAIRS` applies to the rounds' Shapley values (at 20 rounds it
#: withheld none of 20 runs on the 13-word text and 3 on the 15-word one, whose errors
#: given covered 93% and 94%; the rule on the pair terms themselves withheld every run up
#: to 40 rounds, where the intervals held).  Tables keep ``MIN_ROUNDS_FOR_STD``.
MIN_ROUNDS_MEDIA = 20


def interaction_matrix(v, phi) -> np.ndarray:
    r"""SHAP interaction values of games given by all their coalition worths.

    Parameters
    ----------
    v : ndarray of shape (n, 2**d)
        ``v[:, S]`` is the worth of the coalition with bit code ``S``.
    phi : ndarray of shape (n, d)
        The games' Shapley values (the diagonal completes each row to them).

    Returns
    -------
    ndarray of shape (n, d, d)
    """
    n, d = phi.shape
    out = np.zeros((n, d, d))
    if d < 2:
        out[:, 0, 0] = phi[:, 0]
        return out
    codes = np.arange(2 ** d)
    masks = bit_masks(codes, d)
    size = masks.sum(axis=1)
    w_size = np.array([factorial(s) * factorial(d - s - 2) / (2.0 * factorial(d - 1))
                       for s in range(d - 1)])
    for i in range(d):
        for j in range(i + 1, d):
            S = codes[~masks[:, i] & ~masks[:, j]]
            bi, bj = 1 << i, 1 << j
            nabla = v[:, S | bi | bj] - v[:, S | bi] - v[:, S | bj] + v[:, S]
            out[:, i, j] = out[:, j, i] = nabla @ w_size[size[S]]
    idx = np.arange(d)
    out[:, idx, idx] = phi - out.sum(axis=2)
    return out


class ExactInteractions(ExactEstimator):
    """Every coalition of every row: exact Shapley values and SHAP interaction values."""

    def estimate(self, game) -> Estimate:
        v, v0, fx = self.worths(game)
        values = v @ exact_weights(self.d)
        return Estimate(values, None, v0, fx, interaction_matrix(v, values))


def walecki_paths(n: int) -> np.ndarray:
    """Walecki's ``n / 2`` Hamiltonian paths of the complete graph on ``n`` (even) vertices.

    Path ``k`` is ``k, k+1, k-1, k+2, k-2, ...`` (mod ``n``); every pair of
    vertices are neighbours on exactly one path.

    Returns
    -------
    int ndarray of shape (n // 2, n)
    """
    t = np.arange(n)
    step = (t + 1) // 2
    offset = np.where(t % 2 == 1, step, -step)
    return (np.arange(n // 2)[:, None] + offset[None, :]) % n


class PairPermutationEstimator:
    """Sampled Shapley values and SHAP interaction values in rounds of paired orders.

    Row ``i`` draws its ``rounds`` relabellings from ``streams(i)``
    (:class:`~._streams.RowStreams`).  Works on any game that offers coalition
    rows.  See the module docstring for the estimator.
    """

    def __init__(self, game, rounds: int, streams, *, skew_check: bool = False):
        n, d = game.n_explained, game.n_players
        self.n, self.d, self.rounds = n, d, int(rounds)
        #: withhold a row's errors while its rounds' values are too skewed (``SKEW_PAIRS``)
        self.skew_check = skew_check
        #: the rows whose errors were withheld: row -> (player, skewness, rounds it needs);
        #: player -1 (skewness NaN): fewer rounds than ``MIN_ROUNDS_MEDIA``
        self.skewed: dict[int, tuple[int, float, int]] = {}
        dp = d + d % 2  # an odd game gets a null player, d
        self.d_padded = dp
        template = walecki_paths(dp)
        template = np.concatenate([template, template[:, ::-1]])  # each path and its reverse
        pos = np.arange(dp)
        # 0-based: prefix t (t = 0..dp) holds positions < t; skip k (k = 1..dp-1) holds the
        # positions < k-1 and position k: the players before the pair (k-1, k), plus its second
        prefix = np.arange(dp + 1)[:, None] > pos[None, :]                          # (dp+1, dp)
        k = np.arange(1, dp)[:, None]
        skip = (pos[None, :] < k - 1) | (pos[None, :] == k)                         # (dp-1, dp)
        by_position = np.concatenate([prefix, skip])                                # (2dp, dp)
        self.n_masks = by_position.shape[0]
        self.orders, self.inverse = [], []
        self.offsets = np.zeros(n + 1, dtype=np.int64)
        blocks, kinds = [], []
        for i in range(n):
            rng = streams(i)
            labels = np.argsort(rng.random((self.rounds, dp)), axis=1)
            orders = labels[:, template]                              # (R, dp, dp): players
            # mask over players of each (round, order, coalition): player orders[r, o, p]
            # is in it when position p is
            masks = np.zeros((self.rounds, dp, self.n_masks, dp), dtype=bool)
            r_idx, o_idx = np.meshgrid(np.arange(self.rounds), np.arange(dp), indexing="ij")
            masks[r_idx[..., None, None], o_idx[..., None, None],
                  np.arange(self.n_masks)[None, None, :, None],
                  orders[:, :, None, :]] = by_position[None, None, :, :]
            masks = masks[..., :d].reshape(-1, d)
            uniq, _, inverse = unique_masks(masks)
            size = uniq.sum(axis=1)
            kinds.append(np.where(size == 0, 0, np.where(size == d, 2, 1)))
            proper = (size > 0) & (size < d)
            self.orders.append(orders)
            self.inverse.append((inverse, uniq.shape[0], kinds[-1]))
            blocks.append(uniq[proper])
            self.offsets[i + 1] = self.offsets[i] + int(proper.sum())
        rows = np.repeat(np.arange(n), np.diff(self.offsets))
        self._seg = game.coalition_rows(np.concatenate(blocks), rows=rows)
        self.segments = [self._seg]
        self.n_coalitions = np.diff(self.offsets)
        self.dof = np.full(n, float(self.rounds - 1))
        #: orders per row are ``2 * n_antithetic`` (each path and its reverse)
        self.n_antithetic = self.rounds * dp // 2

    def estimate(self, game) -> Estimate:
        """Means over the rounds, and their standard errors."""
        v0, fx = game.ends()
        n, d, dp, R = self.n, self.d, self.d_padded, self.rounds
        values = np.empty((n, d))
        inter = np.empty((n, d, d))
        std = np.full((n, d), np.nan)
        inter_std = np.full((n, d, d), np.nan)
        idx = np.arange(d)
        for i in range(n):
            inverse, n_unique, kind = self.inverse[i]
            worth = np.empty(n_unique)
            worth[kind == 0], worth[kind == 2] = v0, fx[i]
            worth[kind == 1] = self._seg.result[self.offsets[i]: self.offsets[i + 1]]
            w = worth[inverse].reshape(R, dp, self.n_masks)
            F, G = w[..., : dp + 1], w[..., dp + 1:]                   # prefixes, skips
            contrib = np.diff(F, axis=-1)                              # (R, dp, dp) by position
            nabla = F[..., 2:] - G - F[..., 1:-1] + F[..., :-2]        # (R, dp, dp-1)
            orders = self.orders[i]
            per_order = np.empty((R, dp, dp))
            np.put_along_axis(per_order, orders, contrib, axis=2)
            phi = per_order.mean(axis=1)[:, :d]                        # (R, d)
            # each pair is neighbours once per path and once in its reverse: average the two
            first, second = orders[..., :-1], orders[..., 1:]
            sii = np.zeros((R, dp, dp))
            r_idx = np.arange(R)[:, None, None]
            np.add.at(sii, (r_idx, first, second), nabla)
            sii = sii + sii.transpose(0, 2, 1)
            M = 0.25 * sii[:, :d, :d]                                  # (2 draws) / 2
            M[:, idx, idx] = phi - M.sum(axis=2)
            values[i] = phi.mean(axis=0)
            inter[i] = M.mean(axis=0)
            if R >= MIN_ROUNDS_FOR_STD and not self._too_skewed(i, phi, M):
                std[i] = phi.std(axis=0, ddof=1) / np.sqrt(R)
                inter_std[i] = M.std(axis=0, ddof=1) / np.sqrt(R)
        return Estimate(values, std, v0, fx, inter, inter_std)

    def _too_skewed(self, i, phi, M) -> bool:
        """Whether row ``i``'s errors are withheld (texts and images only): fewer rounds
        than ``MIN_ROUNDS_MEDIA``, or some value's rounds too skewed for a normal interval
        of their mean."""
        self.skewed.pop(i, None)
        if not self.skew_check:
            return False
        if self.rounds < MIN_ROUNDS_MEDIA:  # too few rounds to measure a pair's spikes
            self.skewed[i] = (-1, float("nan"), MIN_ROUNDS_MEDIA)
            return True
        found = too_skewed(phi)
        if found is not None:
            self.skewed[i] = found
        return found is not None


def interaction_estimator(game, algorithm, n_samples, n_permutations, streams, *,
                          max_exact: int, auto_exact: bool, stacklevel: int,
                          skew_check: bool = False):
    """The estimator of ``interactions=True`` on a game that offers rows.

    ``"auto"`` enumerates while the exact plan is what ``"auto"`` would take
    for the values alone (``auto_exact``) and samples pairs of neighbours
    beyond.  A sampling budget whose distinct coalitions reach 7/8 of all
    ``2**d - 2`` enumerates them instead (``"exact"``).  Returns
    ``(estimator, algorithm, budget)`` as
    :func:`~._estimator_choice.choose_estimator` does (the budget: feature orders per row).
    """
    d = game.n_players
    if algorithm == "kernel" or n_samples is not None:
        raise InvalidParameterError(
            "interactions=True is computed by algorithm='exact' (every coalition) or "
            "'permutation' (sampled, with standard errors; budget n_permutations=); KernelSHAP's "
            "regression gives no interaction values. Drop n_samples= and use one of those.")
    if algorithm == "auto":
        algorithm = "exact" if auto_exact else "permutation"
    if algorithm == "exact":
        if d > max_exact:
            raise InvalidParameterError(
                f"algorithm='exact' evaluates all 2**d coalitions: with d={d} players that is "
                f"{2 ** d:,} coalitions per explained row, too many. Use "
                f"algorithm='permutation' (budget n_permutations=) for sampled interaction "
                f"values with standard errors; 'exact' takes at most {max_exact} players.")
        return ExactInteractions(game), "exact", None
    dp = d + d % 2
    if n_permutations is None:
        # texts and images: enough rounds by default that their errors can be given
        rounds = MIN_ROUNDS_MEDIA if skew_check else DEFAULT_ROUNDS
    else:
        if not is_integer(n_permutations) or n_permutations < 2:
            raise InvalidParameterError(
                f"n_permutations must be an integer >= 2, got {n_permutations!r}.")
        rounds = -(-int(n_permutations) // dp)
    estimator = PairPermutationEstimator(game, rounds, streams, skew_check=skew_check)
    every = 2 ** d - 2
    if d <= max_exact and estimator.n_coalitions.max(initial=0) >= every - every // 8:
        # the rounds' distinct coalitions are nearly all of them: enumerating every one
        # costs at most 8/7 as much and has no error
        return ExactInteractions(game), "exact", None
    if rounds < MIN_ROUNDS_FOR_STD:
        warnings.warn(
            f"n_permutations={n_permutations} gives {rounds} rounds of {dp} feature orders per "
            f"row with interactions=True, too few to estimate standard errors (std is NaN); "
            f"use at least {MIN_ROUNDS_FOR_STD * dp} permutations for them.", ModellensWarning,
            stacklevel=stacklevel)
    return estimator, "permutation", rounds * dp
