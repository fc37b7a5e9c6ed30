"""Games with known Shapley values for the sampling tests: brute-force enumeration.

``exact_values`` enumerates every coalition of every explained row with its own
loop (no modellens code), so the sampling estimators are checked against an
oracle that shares nothing with them.
"""

from itertools import product
from math import comb

import numpy as np


def exact_values(f, X, background):
    """Interventional Shapley values of ``f`` for the rows ``X`` by all ``2**d`` coalitions.

    ``phi_j = sum_{S not containing j} |S|! (d-|S|-1)! / d! (v(S + j) - v(S))``
    with ``v(S) = mean_b f(x_S, z_b)``.
    """
    X, background = np.asarray(X, float), np.asarray(background, float)
    n, d = X.shape
    m = len(background)
    masks = np.array(list(product([False, True], repeat=d)))          # (2**d, d)
    v = np.empty((n, len(masks)))
    for i in range(n):  # one explained row at a time: 2**d * m model rows
        rows = np.where(masks[:, None, :], X[i], background[None])
        v[i] = f(rows.reshape(-1, d)).reshape(len(masks), m).mean(axis=1)
    code = {tuple(mask): k for k, mask in enumerate(masks)}
    phi = np.zeros((n, d))
    for k, mask in enumerate(masks):
        s = int(mask.sum())
        for j in np.flatnonzero(~mask):
            with_j = mask.copy()
            with_j[j] = True
            weight = 1.0 / (d * comb(d - 1, s))
            phi[:, j] += weight * (v[:, code[tuple(with_j)]] - v[:, k])
    return phi


def correlated_normal(n, d, rho, rng):
    """Rows of a normal law whose features all correlate ``rho``."""
    cov = np.full((d, d), rho) + (1 - rho) * np.eye(d)
    return rng.multivariate_normal(np.zeros(d), cov, size=n)


def interacting(A):
    """A model with two- to four-way interactions and a saturating additive part."""
    return (np.tanh(A @ np.linspace(1, 2, A.shape[1]) / 3) * 3 + A[:, 0] * A[:, 1] * A[:, 2]
            + np.maximum(A[:, 3:6].sum(axis=1), 0) ** 2 + np.sin(A[:, 6] * A[:, 7] * A[:, 1]))


def game_shapley(v):
    """Shapley values of games given whole: ``v[..., S]`` (shape ``(..., 2**d)``) is the
    worth of the coalition with bit code ``S`` (player ``j`` is bit ``j``); ``(..., d)``.

    Its own loop over the coalitions (no modellens code): the oracle of the estimators that
    take a game's values.
    """
    v = np.asarray(v, dtype=float)
    d = int(round(np.log2(v.shape[-1])))
    assert v.shape[-1] == 2 ** d and d >= 1, v.shape
    phi = np.zeros(v.shape[:-1] + (d,))
    for code in range(2 ** d):
        size = bin(code).count("1")
        for j in range(d):
            if not code >> j & 1:
                weight = 1.0 / (d * comb(d - 1, size))
                phi[..., j] += weight * (v[..., code | 1 << j] - v[..., code])
    return phi


def owen_by_orders(sentences, worth):
    """Owen values by walking every order that keeps each group's players together.

    ``sentences``: the groups, lists of players; ``worth(frozenset) -> float or array``.
    Returns the mean marginal contribution of each player (in the groups' order) over
    the ``m! * prod(s_k!)`` orders, and that number of orders.
    """
    from itertools import permutations

    words = [w for s in sentences for w in s]
    cache = {}

    def v(kept):
        key = frozenset(kept)
        if key not in cache:
            cache[key] = np.asarray(worth(key), dtype=float)
        return cache[key]

    total, count = 0.0, 0
    for outer in permutations(sentences):
        for inner in product(*[permutations(s) for s in outer]):
            order = [w for s in inner for w in s]
            gains = [v(order[:t + 1]) - v(order[:t]) for t in range(len(order))]
            total = total + np.array([gains[order.index(w)] for w in words])
            count += 1
    return total / count, count


def coalition_shapley(worth, p):
    """Shapley values of ``worth(S)`` (``S`` a sorted list of the players 0..p-1), ``(p,)``.

    The game is tabulated over every coalition and handed to :func:`game_shapley`.
    """
    v = [worth([j for j in range(p) if code >> j & 1]) for code in range(2 ** p)]
    return game_shapley(np.array(v, dtype=float))
