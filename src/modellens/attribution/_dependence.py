"""``ml.shapley(..., dependence=)``: validation, the Monte Carlo wrapper, diagnostics.

The seams between :func:`~.shapley.shapley` and the conditional games of
:mod:`._conditional`, kept here so the dispatcher changes by a few lines.
"""

from __future__ import annotations

from .._validation import InvalidParameterError, check_choice
from ..data import is_integer
from ._conditional import (DEFAULT_DRAWS, DEPENDENCE, ConditionalGame, MonteCarloError)
from ._msev import game_msev

__all__ = ["check_dependence", "with_monte_carlo_error", "conditional_diagnostics"]


def check_dependence(dependence, n_draws, *, algorithm, masker, interactions, stop):
    """``(approach, n_draws)`` of a valid request; a clear error otherwise."""
    check_choice(dependence, "dependence", DEPENDENCE)
    if dependence == "independent":
        if n_draws is not None:
            raise InvalidParameterError(
                "n_draws is the number of conditional draws per coalition of a conditional "
                "game (dependence='gaussian', 'copula', 'empirical', 'tree'); the independent "
                "game averages over the background rows and takes none.")
        return ("independent", None)
    what = f"dependence={dependence!r} (a conditional game)"
    if masker is not None:
        raise InvalidParameterError(f"{what} is for tables; texts and images take none.")
    if algorithm == "tree":
        raise InvalidParameterError(
            f"{what} is estimated on coalition rows; TreeSHAP (algorithm='tree') computes the "
            "independent (interventional) or path-dependent game only. Use algorithm='exact', "
            "'permutation', 'kernel' or 'auto'.")
    if interactions:
        raise InvalidParameterError(f"{what} gives no interaction values yet; drop "
                                    "interactions=True or use dependence='independent'.")
    if stop:
        raise InvalidParameterError(
            f"{what} does not take tol= / tol_abs= yet: the stopping rule would watch the "
            "coalition sampling error and miss the Monte Carlo error of v(S). Give the budget "
            "(n_samples= / n_permutations=) instead; the standard errors count both.")
    if n_draws is None:
        n_draws = DEFAULT_DRAWS
    if not is_integer(n_draws) or n_draws < 1:
        raise InvalidParameterError(f"n_draws must be an integer >= 1 (conditional draws per "
                                    f"coalition and explained row), got {n_draws!r}.")
    return (dependence, int(n_draws))


def _conditional(game):
    base = getattr(game, "inner", game)
    return base if isinstance(base, ConditionalGame) else None


def with_monte_carlo_error(estimator, game):
    """The estimator, wrapped to count the Monte Carlo error when the game is conditional."""
    if _conditional(game) is None or not getattr(estimator, "segments", ()):
        return estimator
    return MonteCarloError(estimator, game)


def conditional_diagnostics(game, predictions) -> dict:
    """MSEv of a table game's coalitions, and a conditional sampler's own diagnostics."""
    extra = game_msev(game, predictions)
    extra.update(getattr(getattr(game, "inner", game), "sampler_diagnostics", {}))
    return extra
