"""``ml.shapley(..., dependence=)``: validation, the Monte Carlo wrapper, diagnostics.

The seams between :func:`~.shapley.shapley` and the conditional games of
:mod:`._conditional`, kept here so the dispatcher changes by a few lines.
"""

from __future__ import annotations

import numpy as np

from .._validation import InvalidParameterError, check_choice
from ..data import is_integer
from ..engine import DataRows, Plan, run_outputs
from ._conditional import (DEFAULT_DRAWS, DEPENDENCE, ConditionalGame, MonteCarloError,
                           conditional_game)
from ._causal import check_causal
from ._cond_surrogate import Surrogate, SurrogateGame
from ._msev import game_msev, msev

__all__ = ["check_dependence", "with_monte_carlo_error", "conditional_diagnostics",
           "choose_dependence", "dependence_game", "law_rng"]

#: The place, among the row streams' shared draws, of a conditional game's fitted law
#: (its common random numbers, the trees' seeds, dependence="auto"'s folds).
LAW_STREAM = 2 ** 40 + 43


def law_rng(streams) -> np.random.Generator:
    """The generator of a conditional game's law: a function of the request's seed only, so
    every Dask partition (rows at any position) fits and draws the same law."""
    return np.random.default_rng(streams.shared_seed(LAW_STREAM))


def check_dependence(dependence, n_draws, *, algorithm, masker, interactions, stop=False,
                     causal_order=None, confounding=None, asymmetric=False):
    """``(approach, n_draws, causal)`` of a valid request (``causal`` a
    :class:`._causal.CausalSpec` or None); a clear error otherwise.

    ``stop`` (a stopping rule is asked) is accepted with every game: the rule watches
    the standard errors, which for a conditional game count the Monte Carlo error of
    every worth (:class:`._conditional.MonteCarloError`), so it stops only when the
    coalition sampling and the draws are both precise enough."""
    check_choice(dependence, "dependence", DEPENDENCE)
    causal = check_causal(causal_order, confounding, asymmetric, approach=dependence,
                          algorithm=algorithm)
    if dependence == "independent":
        if n_draws is not None:
            raise InvalidParameterError(
                "n_draws is the number of conditional draws per coalition of a conditional "
                "game (dependence='gaussian', 'copula', 'empirical', 'tree', 'forest'); the "
                "independent game averages over the background rows and takes none.")
        return ("independent", None, None)
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
    if n_draws is None:
        n_draws = DEFAULT_DRAWS
    if not is_integer(n_draws) or n_draws < 1:
        raise InvalidParameterError(f"n_draws must be an integer >= 1 (conditional draws per "
                                    f"coalition and explained row), got {n_draws!r}.")
    return (dependence, int(n_draws), causal)


def dependence_game(model, dataset, n, background, note, approach, *, n_draws, rng,
                    causal=None):
    """The conditional game of ``dependence=approach``: a sampler's, or the surrogate's;
    ``causal`` (resolved): causal draws and / or the asymmetric estimator."""
    if approach != "surrogate":
        return conditional_game(model, dataset, n, background, note, approach,
                                n_draws=n_draws, rng=rng, causal=causal)
    if background.shape[0] < 2:
        raise InvalidParameterError(
            "dependence='surrogate' learns from the background, which has "
            f"{background.shape[0]} row; pass the training data as background=.")
    try:
        rng = rng.spawn(1)[0]
    except (AttributeError, TypeError, ValueError):
        rng = np.random.default_rng(rng.integers(2 ** 63))
    categorical = np.array([c.is_categorical for c in dataset.columns])
    game = SurrogateGame(model, dataset, n, background, note,
                         Surrogate(model, background, categorical, rng))
    game.follow(causal)  # (asymmetric only: check_causal refuses its causal draws)
    return game


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


#: ``dependence="auto"``: approaches compared, folds, held-out rows per fold, coalitions
#: and draws per coalition of the comparison.
AUTO_APPROACHES = ("gaussian", "copula", "empirical", "tree", "forest")
AUTO_FOLDS, AUTO_ROWS, AUTO_COALITIONS, AUTO_DRAWS = 2, 50, 20, 50


class _HeldOut(Plan):
    """The predictions at held-out rows and a game's worths of coalitions of them."""

    def __init__(self, game, masks, rows):
        self.segments = [DataRows(game.foreground), game.coalition_rows(masks, rows)]
        self.masks, self.rows = masks, rows

    def reduce(self):
        fx, seg = self.segments
        return msev(self.rows, self.masks, seg.result, fx.result)[0]


def choose_dependence(model, dataset, background, rng, note, options=None):
    """The approach of lowest cross-validated MSEv, and each approach's MSEv.

    The background is split in ``AUTO_FOLDS`` folds; each fold's first
    ``AUTO_ROWS`` rows are explained by a game fitted on the other folds, on
    ``AUTO_COALITIONS`` coalitions drawn uniformly by size (the same for
    every approach), ``AUTO_DRAWS`` draws each; the scores are summed over folds.
    """
    from types import SimpleNamespace

    m, d = background.shape
    categorical = any(c.is_categorical for c in dataset.columns) or \
        bool(np.isnan(background).any())
    approaches = [a for a in AUTO_APPROACHES
                  if not (categorical and a in ("gaussian", "copula"))]
    fold = rng.permutation(m) % AUTO_FOLDS
    sizes = rng.integers(1, d, size=AUTO_COALITIONS)
    masks = np.argsort(np.argsort(rng.random((AUTO_COALITIONS, d)), axis=1), axis=1) \
        < sizes[:, None]
    scores = dict.fromkeys(approaches, 0.0)
    for k in range(AUTO_FOLDS):
        test = background[fold == k][:AUTO_ROWS]
        train = background[fold != k]
        held = SimpleNamespace(values=test, n_features=d, columns=dataset.columns,
                               feature_names=dataset.feature_names, is_frame=False,
                               column_labels=None)
        q = len(test)
        rows = np.repeat(np.arange(q), AUTO_COALITIONS)
        tiled = np.tile(masks, (q, 1))
        for approach in approaches:
            game = conditional_game(model, held, q, train, note, approach,
                                    n_draws=AUTO_DRAWS, rng=rng)
            per_output = run_outputs(model, lambda one: [_HeldOut(game.with_model(one),
                                                                  tiled, rows)],
                                     options, desc=f"dependence='auto' ({approach})")
            scores[approach] += float(sum(r[0] for r in per_output))
    best = min(scores, key=lambda a: scores[a])
    return best, {a: s / AUTO_FOLDS for a, s in scores.items()}
