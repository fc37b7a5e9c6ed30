r"""Owen values of a text over a hierarchy: words within sentences (``players="hierarchy"``).

The players (the distinct words) are partitioned into groups (the sentences;
a word that recurs belongs to the sentence of its first occurrence, and all its
occurrences are masked together, the masking rule of every method).  Owen's
value (Owen 1977) of word :math:`i` of sentence :math:`k` is its mean
marginal contribution over the orders that keep each sentence's words
together (the sentences in a uniformly random order, the words of each in a
uniformly random order within it):

.. math:: \phi_i = \sum_{R \subseteq M \setminus \{k\}} \frac{|R|!\,(m - |R| - 1)!}{m!}
          \sum_{T \subseteq G_k \setminus \{i\}} \frac{|T|!\,(s_k - |T| - 1)!}{s_k!}
          \big(v(Q_R \cup T \cup \{i\}) - v(Q_R \cup T)\big)

with :math:`m` sentences, :math:`G_k` the :math:`s_k` words of sentence
:math:`k` and :math:`Q_R` the words of the sentences in :math:`R`.  The values
add up to :math:`v(N) - v(\emptyset)`, each sentence's words add up to the
sentence's Shapley value in the game of sentences, and one sentence (or one
word per sentence) gives the Shapley values.

*Exact*: the coalitions :math:`Q_R \cup T` only, at most
:math:`\sum_k 2^{m - 1 + s_k}` of them instead of :math:`2^d` (4 sentences of
8 words: 8,192 instead of :math:`2^{32}`).  *Sampled*: permutation sampling
(:class:`~.permutation.PermutationEstimator`) over such orders, drawn in
antithetic pairs (an order's reverse keeps the sentences together too),
:math:`2(d - 1)` coalitions an order: a budget that grows with the number of
words, with standard errors and ``tol=`` as for Shapley values.
"""

from __future__ import annotations

import warnings
from math import factorial

import numpy as np

from .._validation import InvalidParameterError, ModellensWarning
from ._coalitions import bit_masks, unique_masks
from ._games import Estimate
from ._shapley_setup import DEFAULT_PERMUTATIONS
from .permutation import MIN_ANTITHETIC_FOR_STD, PermutationEstimator

__all__ = ["OwenExactEstimator", "owen_estimator", "owen_coalitions", "MAX_OWEN_COALITIONS"]

#: Most coalitions exact Owen values enumerate (``algorithm="exact"``); ``"auto"``
#: enumerates while they are within the sampling budget.
MAX_OWEN_COALITIONS = 2 ** 15



def owen_coalitions(groups: np.ndarray) -> int:
    """How many coalitions exact Owen values enumerate (before duplicates are merged)."""
    sizes = np.bincount(groups)
    return int(sum(2 ** (len(sizes) - 1 + int(s)) for s in sizes))


def _weights(n: int) -> np.ndarray:
    """``w[s] = s! (n - s - 1)! / n!``, the Shapley weight of a coalition of ``s`` of ``n``."""
    return np.array([factorial(s) * factorial(n - s - 1) / factorial(n) for s in range(n)])


def owen_weights(groups: np.ndarray) -> tuple:
    """The coalitions of exact Owen values and their weights: ``phi = v(masks) @ W``.

    Returns ``(masks, W)``, distinct boolean masks ``(c, d)`` (the empty and
    the full coalition among them) and ``W`` of shape ``(c, d)``.
    """
    groups = np.asarray(groups, dtype=np.intp)
    d, m = len(groups), int(groups.max()) + 1
    members = [np.flatnonzero(groups == k) for k in range(m)]
    w_groups = _weights(m)
    blocks, parts = [], []
    for k, own in enumerate(members):
        others = [g for g in range(m) if g != k]
        s = len(own)
        R = bit_masks(np.arange(2 ** (m - 1)), m - 1)     # which other sentences are in
        T = bit_masks(np.arange(2 ** s), s)               # which words of sentence k
        masks = np.zeros((len(R), len(T), d), dtype=bool)
        for b, g in enumerate(others):
            masks[:, :, members[g]] = R[:, b, None, None]
        masks[:, :, own] = T[None, :, :]
        W = np.zeros((len(R), len(T), d))
        wR = w_groups[R.sum(axis=1)][:, None]             # (2^(m-1), 1)
        w_own = _weights(s)
        size = T.sum(axis=1)
        for a, i in enumerate(own):
            without = np.flatnonzero(~T[:, a])
            weight = wR * w_own[size[without]][None, :]     # (2^(m-1), |without|)
            W[:, without | (1 << a), i] += weight           # v(Q_R + T + i)
            W[:, without, i] -= weight                      # v(Q_R + T)
        blocks.append(masks.reshape(-1, d))
        parts.append(W.reshape(-1, d))
    masks, W = np.concatenate(blocks), np.concatenate(parts)
    uniq, _, inverse = unique_masks(masks)
    merged = np.zeros((len(uniq), d))
    np.add.at(merged, inverse, W)
    return uniq, merged


class OwenExactEstimator:
    """Exact Owen values of a one-input game (a text) over the groups of its players."""

    dof = None
    index = "owen"

    def __init__(self, game, groups):
        masks, self._W = owen_weights(groups)
        size = masks.sum(axis=1)
        self._empty = int(np.flatnonzero(size == 0)[0])
        self._full = int(np.flatnonzero(size == masks.shape[1])[0])
        self._inner = np.flatnonzero((size > 0) & (size < masks.shape[1]))
        self._seg = game.coalition_rows(masks[self._inner])
        self.segments = [self._seg]
        self.n_coalitions = np.full(game.n_explained, len(self._inner))

    def estimate(self, game) -> Estimate:
        v0, fx = game.ends()
        v = np.empty(self._W.shape[0])
        v[self._empty], v[self._full] = v0, fx[0]
        v[self._inner] = np.asarray(self._seg.result, dtype=np.float64).reshape(-1)
        return Estimate((v @ self._W)[None, :], None, v0, fx)



def owen_estimator(game, algorithm, n_samples, n_permutations, streams, *, interactions,
                   stop, stacklevel):
    """The estimator of Owen values when ``game``'s players form a hierarchy, else None.

    Returns ``(estimator, algorithm, budget)`` as ``_estimator_choice.choose_estimator`` does.
    """
    groups = getattr(getattr(game, "rep", None), "hierarchy", None)
    if groups is None or game.n_players < 2:
        return None
    if interactions or algorithm == "kernel" or n_samples is not None:
        raise InvalidParameterError(
            "players='hierarchy' gives Owen values, by exact enumeration over the hierarchy "
            "or by permutation sampling of the orders that keep each sentence's words "
            "together: interactions=True, algorithm='kernel' and n_samples= do not apply; use "
            "algorithm='auto', 'exact' or 'permutation' (budget n_permutations=).")
    count = owen_coalitions(groups)
    if n_permutations is not None and algorithm != "permutation":
        raise InvalidParameterError(
            "n_permutations is the budget of algorithm='permutation'; "
            f"algorithm={algorithm!r} does not use it.")
    if algorithm == "auto":
        budget = 2 * (game.n_players - 1) * (n_permutations or DEFAULT_PERMUTATIONS)
        algorithm = "exact" if count <= max(budget, 2048) else "permutation"
    if algorithm == "exact":
        if count > MAX_OWEN_COALITIONS:
            raise InvalidParameterError(
                f"exact Owen values of this text enumerate {count:,} coalitions (more than "
                f"{MAX_OWEN_COALITIONS:,}): use algorithm='permutation' (budget "
                f"n_permutations=, or tol=), whose cost grows with the number of words.")
        return OwenExactEstimator(game, groups), "exact", None
    budget = int(n_permutations or DEFAULT_PERMUTATIONS)
    estimator = PermutationEstimator(game, budget, streams, groups=groups, skew_check=True)
    if estimator.n_antithetic < MIN_ANTITHETIC_FOR_STD and stop is None:
        warnings.warn(
            f"n_permutations={budget} gives {estimator.n_antithetic} antithetic pairs, too "
            f"few to estimate standard errors (std is NaN); use at least "
            f"{2 * MIN_ANTITHETIC_FOR_STD} permutations for them.", ModellensWarning,
            stacklevel=stacklevel)
    return estimator, "permutation", budget
