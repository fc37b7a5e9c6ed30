r"""The stopping rule of the sampling Shapley estimators: draw until the errors are small.

``ml.shapley(..., tol=, tol_abs=, max_evals=)`` runs a sampling estimator
(permutation sampling, KernelSHAP) in rounds.  After each round every row's
standard errors :math:`\hat\sigma_{ij}` are read, and row :math:`i` is done
when

.. math:: \max_j \hat\sigma_{ij} \le \mathrm{tol}\,\big(\max_j \hat\phi_{ij}
          - \min_j \hat\phi_{ij}\big)
          \quad\text{or}\quad \max_j \hat\sigma_{ij} \le \mathrm{tol\_abs}

(the first is the convergence criterion of R's shapr, Olsen et al.).  The rows
not done draw more, all of them in one engine pass per round, the others stop
paying: since an error falls as :math:`1/\sqrt{T}` in the draws :math:`T`, a
row asks for about :math:`T\,(\hat\sigma / \text{target})^2` draws in all,
at least a quarter more than it has and at most twice as many (the error
estimate of a few draws is itself noisy), and never past the cap of
``max_evals`` coalitions.  Rows that reach the cap undone are named in a
warning with the error they achieved.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from .._validation import InvalidParameterError, ModellensWarning
from ..engine import Plan

__all__ = ["StoppingRule", "GrowPlan", "check_stopping", "run_until_converged"]

#: Most rows a warning lists by number.
_LISTED = 10


@dataclass(frozen=True)
class StoppingRule:
    """When a row's sampled values are good enough, and the most it may spend.

    Attributes
    ----------
    tol : float or None
        Relative: the largest standard error below ``tol`` times the spread of
        the row's values.
    tol_abs : float or None
        Absolute: the largest standard error below ``tol_abs``.
    max_evals : int or None
        Most coalitions per explained row (None: the default of the algorithm).
    """

    tol: float | None
    tol_abs: float | None
    max_evals: int | None

    def targets(self, values: np.ndarray) -> np.ndarray:
        """The standard error each row must reach, ``(n,)`` (the looser of the two)."""
        spread = values.max(axis=1) - values.min(axis=1)
        rel = np.zeros(len(values)) if self.tol is None else self.tol * spread
        return np.maximum(rel, 0.0 if self.tol_abs is None else self.tol_abs)

    def achieved(self, std: np.ndarray) -> np.ndarray:
        """Each row's largest standard error, ``(n,)`` (NaN: too few draws for one)."""
        missing = np.isnan(std)
        return np.where(missing.any(axis=1), np.nan, np.where(missing, 0.0, std).max(axis=1))


def check_stopping(tol, tol_abs, max_evals) -> StoppingRule | None:
    """The stopping rule of ``tol`` / ``tol_abs`` / ``max_evals`` (None when none is asked)."""
    for name, value in (("tol", tol), ("tol_abs", tol_abs)):
        if value is not None and (isinstance(value, bool) or not isinstance(
                value, (int, float, np.integer, np.floating)) or not value > 0
                or not math.isfinite(value)):
            unit = "relative to the spread of a row's values" if name == "tol" \
                else "in units of the output"
            raise InvalidParameterError(
                f"{name} must be a positive number (a standard error {unit}), got "
                f"{value!r}; e.g. {name}={0.02 if name == 'tol' else 0.01}.")
    if max_evals is not None:
        if isinstance(max_evals, bool) or not isinstance(max_evals, (int, np.integer)) \
                or max_evals < 2:
            raise InvalidParameterError(
                f"max_evals must be an integer >= 2 (most coalitions per explained row), "
                f"got {max_evals!r}.")
        if tol is None and tol_abs is None:
            raise InvalidParameterError(
                "max_evals caps the stopping rule: give tol= (relative) or tol_abs= "
                "(absolute) too, or set the fixed budget with n_samples= / n_permutations=.")
    if tol is None and tol_abs is None:
        return None
    return StoppingRule(None if tol is None else float(tol),
                        None if tol_abs is None else float(tol_abs),
                        None if max_evals is None else int(max_evals))


class GrowPlan(Plan):
    """One more round of an estimator: the coalitions of ``more`` draws of ``rows``.

    Its reduction is the estimate of every row from all draws so far (the
    game's end coalitions were evaluated in the first round).
    """

    def __init__(self, game, estimator, rows, more):
        self.game, self.estimator = game, estimator
        self.segments = estimator.grow(rows, more)

    def reduce(self):
        return self.estimator.estimate(self.game)


def _next_draws(have: np.ndarray, err: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Draws each row should have in all: enough for its target if errors fall as 1/sqrt(T)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(target > 0, (err / target) ** 2, np.inf)
    want = np.ceil(1.1 * have * np.where(np.isnan(ratio), np.inf, ratio))
    low, high = have + np.maximum(1, have // 4), 2 * have
    want = np.where(np.isfinite(want), want, high)
    return np.clip(want, low, high).astype(np.int64)


def run_until_converged(rule: StoppingRule, estimators: list, estimates: list, run_round,
                        *, stacklevel: int):
    """Draw more for the rows not done until every row is done or capped.

    Parameters
    ----------
    rule : StoppingRule
    estimators : list
        One sampling estimator per output, grown alike (they share the rows' streams).
    estimates : list of Estimate
        Each output's estimate after the first round.
    run_round : callable ``(rows, more) -> list of Estimate``
        Grows every estimator by ``more`` draws of ``rows`` and evaluates them
        (one engine pass for all rows and outputs).

    Returns
    -------
    estimates : list of Estimate
    converged : bool ndarray of shape (n,)
    """
    lead = estimators[0]
    cap = lead.draw_cap(rule.max_evals)
    while True:
        err = np.max([rule.achieved(e.std) for e in estimates], axis=0)
        target = np.min([rule.targets(e.values) for e in estimates], axis=0)
        done = err <= target  # NaN (too few draws for an error) is not done
        have = lead.draws
        more = np.minimum(_next_draws(have, err, target), cap) - have
        rows = np.flatnonzero(~done & (more > 0))
        if not len(rows):
            break
        estimates = run_round(rows, more[rows])
    if not done.all():
        undone = np.flatnonzero(~done)
        listed = ", ".join(
            f"{i} (too few coalitions for a standard error)" if np.isnan(err[i]) else
            f"{i} (standard error {err[i]:.3g} > {target[i]:.3g})" for i in undone[:_LISTED])
        more_rows = f" and {len(undone) - _LISTED} more" if len(undone) > _LISTED else ""
        warnings.warn(
            f"{len(undone)} of {len(done)} explained rows did not reach the tolerance within "
            f"max_evals={rule.max_evals} coalitions per row: rows "
            f"{listed}{more_rows}. Their values are kept with these standard errors "
            f"(attr.sampling.converged is False for them); raise max_evals= or loosen tol=.",
            ModellensWarning, stacklevel=stacklevel)
    return estimates, done
