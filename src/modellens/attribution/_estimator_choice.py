"""Which estimator answers a Shapley game: TreeSHAP, Owen, interactions, exact, kernel or
permutation sampling, with the warnings a budget too small for errors earns."""

from __future__ import annotations

import warnings

from .._validation import ModellensWarning
from ._active import ActiveKernelEstimator
from ._causal import AsymmetricEstimator, AsymmetricPermutations
from ._games import RemovalGame, TreeGame
from ._groups import GroupGame
from ._interaction_values import interaction_estimator
from ._owen import owen_estimator
from ._proxy import ProxyKernelEstimator
from ._shapley_setup import (MAX_EXACT_FEATURES, _choose_algorithm, _first_round, _with_cap,
                             default_kernel_samples, kernel_samples_for_std)
from .exact import ExactEstimator, OnePlayer
from .permutation import MIN_ANTITHETIC_FOR_STD, PermutationEstimator

__all__ = ["choose_estimator"]


def choose_estimator(game, algorithm, n_samples, n_permutations, streams, *, interactions,
               n_threads, index, stacklevel, stop=None):
    """The estimator of a game: ``(estimator, algorithm, budget)``.

    With a stopping rule ``stop`` the budget is the first round's (see
    :func:`_first_round`) and ``"auto"`` weighs exact enumeration against the cap.
    """
    grouped = isinstance(game, GroupGame)
    if isinstance(game.inner if grouped else game, TreeGame):
        # imported here: the tree kernels load numba, which only tree models need
        from .tree import TreeEstimator

        return (TreeEstimator(game.inner if grouped else game, interactions=interactions,
                              n_threads=n_threads, index=index,
                              players=game.players.player_of if grouped else None),
                "tree", None)
    if (owen := owen_estimator(game, algorithm, n_samples, n_permutations, streams, stop=stop,
                               interactions=interactions, stacklevel=stacklevel + 1)):
        return owen  # players="hierarchy": Owen values
    d = game.n_players
    if interactions:
        return interaction_estimator(
            game, algorithm, n_samples, n_permutations, streams, max_exact=MAX_EXACT_FEATURES,
            auto_exact=d <= MAX_EXACT_FEATURES and 2 ** d - 2 <= default_kernel_samples(d),
            stacklevel=stacklevel + 1, skew_check=isinstance(game, RemovalGame))
    if stop is not None:
        n_samples, n_permutations = _first_round(algorithm, d, n_samples, n_permutations,
                                                 _with_cap(stop, d).max_evals)
    if getattr(getattr(game, "causal", None), "asymmetric", False):
        return _asymmetric_estimator(game, algorithm, n_permutations, streams)
    algorithm, budget = _choose_algorithm(algorithm, d, n_samples, n_permutations,
                                          cap=None if stop is None else
                                          _with_cap(stop, d).max_evals)
    if d == 1:
        return OnePlayer(game, sampled=algorithm != "exact"), algorithm, budget
    if algorithm == "exact":
        return ExactEstimator(game), algorithm, budget
    if algorithm == "kernel":
        # under a stopping rule the proxy's errors must come from every draw (halves' errors
        # under-covered there, 82-91%: stopping picks rounds whose error looked low)
        null = game.null_players()
        kernel: ActiveKernelEstimator | ProxyKernelEstimator
        if null.any():  # some rows' games are smaller: KernelSHAP in each of them
            kernel = ActiveKernelEstimator(game, budget, streams, null=null,
                                           pooled=stop is not None)
        else:
            kernel = ProxyKernelEstimator(game, budget, streams, pooled=stop is not None)
        pairs = kernel.draws
        players = (~null).sum(axis=1)
        short = (0 < pairs) & (pairs < players)
        if stop is None and short.any():
            k = int(players[short].max())
            which = f"{d} features" if k == d else \
                f"{k} features (those that differ from the background's values)"
            warnings.warn(
                f"n_samples={budget} leaves {pairs[short].min()} sampled pairs of coalitions "
                f"per row for {which}, too few to estimate standard errors (std is NaN: the fit "
                f"passes through every sampled value); use n_samples >= "
                f"{kernel_samples_for_std(k, budget)} for them, or tol= to stop when the errors "
                "are small enough.", ModellensWarning, stacklevel=stacklevel)
        return kernel, algorithm, budget
    estimator = PermutationEstimator(game, budget, streams,
                                     skew_check=isinstance(game, RemovalGame))
    if estimator.n_antithetic < MIN_ANTITHETIC_FOR_STD and stop is None:
        warnings.warn(
            f"n_permutations={budget} gives {estimator.n_antithetic} antithetic pair"
            f"{'' if estimator.n_antithetic == 1 else 's'} per "
            f"row, too few to estimate standard errors (std is NaN); use at least "
            f"{2 * MIN_ANTITHETIC_FOR_STD} permutations for them.", ModellensWarning,
            stacklevel=stacklevel)
    return estimator, algorithm, budget


def _asymmetric_estimator(game, algorithm, n_permutations, streams):
    """``(estimator, algorithm, budget)`` of asymmetric values: the consistent coalitions
    enumerated (``"exact"``; ``"auto"`` while every component is small enough), or the
    consistent orders sampled (``"permutation"``; ``"auto"`` for a larger component)."""
    comps = game.causal.components
    if algorithm == "auto":
        algorithm = "exact" if max(len(c) for c in comps) <= MAX_EXACT_FEATURES \
            else "permutation"
    if algorithm == "exact":
        return AsymmetricEstimator(game, comps), "exact", None
    _, budget = _choose_algorithm("permutation", game.n_players, None, n_permutations)
    return AsymmetricPermutations(game, budget, streams, comps), "permutation", budget
