r"""Conditional Shapley games: :math:`v_i(S) = E[f(X) \mid X_S = x^{(i)}_S]`.

``ml.shapley(..., dependence=...)`` with ``"gaussian"``, ``"copula"``,
``"empirical"`` or ``"tree"`` estimates each worth by Monte Carlo: ``K``
(``n_draws``) rows that keep the explained row's values on :math:`S` and take
conditional draws of the other features (:mod:`._samplers`), averaged.  The
game is an :class:`~._games.InterventionalGame` whose coalition rows are
:class:`ConditionalRows` instead of background mixes, so every estimator
that plans coalitions (exact, permutation, KernelSHAP, groups, every output
of a multiclass model) runs on it unchanged and the engine streams the rows
of every coalition of every row through the model in large chunks.  The
empty coalition is the background's mean prediction and the full one
:math:`f(x)`, as in the marginal game.

Monte Carlo error.  The ``K`` draws of a query are split into ``B``
batches of consecutive draws (``B`` the largest divisor of ``K`` up to
``MC_BATCHES``); every segment keeps each batch's mean.  Since the samplers
use common random numbers, batch ``b`` of every coalition of a row is a
fixed function of the same independent draws, so the estimates
:math:`\hat\phi^{(b)}` computed from batch ``b``'s worths alone are
independent and identically distributed, and (every estimator being linear
in the worths) the estimate is their mean.  :class:`MonteCarloError` adds
their variance over batches divided by ``B`` to the estimator's own
sampling variance; the degrees of freedom are the smaller of the two
(``B - 1`` for ``"exact"``, a conservative choice).
"""

from __future__ import annotations

import copy

import numpy as np

from .._validation import InvalidParameterError
from ..engine import Segment
from ._causal import CausalSampler
from ._games import Estimate, InterventionalGame
from ._forest import ForestSampler, WeightedRows
from ._leaf_rows import CoalitionQueries, LeafRows, coalition_queries, set_queries
from ._samplers import (CopulaSampler, EmpiricalSampler, GaussianSampler, Sampler,
                        TreeSampler, refuse_categorical)

__all__ = ["DEPENDENCE", "CONDITIONAL", "DEFAULT_DRAWS", "MC_BATCHES", "ConditionalRows",
           "EstimatedGame", "ConditionalGame", "MonteCarloError", "conditional_game"]

#: ``dependence=`` values: the marginal game, the conditional estimators, the choice by MSEv.
CONDITIONAL = ("gaussian", "copula", "empirical", "tree", "forest", "surrogate")
DEPENDENCE = ("independent",) + CONDITIONAL + ("auto",)
#: Default conditional draws per (explained row, coalition).
DEFAULT_DRAWS = 200
#: Most batches the draws are split into for the Monte Carlo standard errors.
MC_BATCHES = 20


def batches_for(n_draws: int) -> int:
    """The largest divisor of ``n_draws`` up to ``MC_BATCHES``."""
    return max(b for b in range(1, min(MC_BATCHES, n_draws) + 1) if n_draws % b == 0)


class ConditionalRows(CoalitionQueries, Segment):
    """Query ``q`` (an explained row and a coalition) owns ``K`` rows: the row completed by
    ``K`` conditional draws.  ``result`` holds :math:`\\hat v_i(S)` per query and
    ``batches`` ``(Q, B)`` the means of its ``B`` batches of draws."""

    def __init__(self, sampler, foreground, masks, *, rows=None, n_batches=1):
        self.sampler = sampler
        set_queries(self, foreground, masks, rows)
        K = sampler.n_draws
        self.K, self.n_batches = K, n_batches
        self.n_rows, self.width, self.group = self.n_queries * K, foreground.shape[1], \
            K // n_batches
        self.batches = None

    def query(self, queries):
        """``(explained row, mask)`` of each query."""
        return coalition_queries(self, queries)

    def rows(self, start, stop):
        K = self.K
        first, last = start // K, (stop - 1) // K + 1
        fg, masks = self.query(np.arange(first, last))
        block = np.empty((last - first, K, self.width))
        uniq, inverse = np.unique(masks, axis=0, return_inverse=True)
        for u, mask in enumerate(uniq):
            at = np.flatnonzero(inverse.ravel() == u)
            block[at] = self.sampler.complete(self.foreground[fg[at]], mask)
        lo = start - first * K
        return block.reshape(-1, self.width)[lo: lo + stop - start]

    def fill(self, start, stop, out):
        out[...] = self.rows(start, stop)

    def _finish(self):
        if self.result is None:
            self._allocate()
        self.batches = self.result.reshape(self.n_queries, self.n_batches) / self.group
        self.result = self.batches.mean(axis=1)
        if self.on_finish is not None:
            self.on_finish(self)


class EstimatedGame(InterventionalGame):
    """A table game whose worths some fitted estimate of the data's law gives (a sampler, a
    surrogate), shared by the games of every output of the model."""

    value_function = "conditional"
    #: a resolved :class:`._causal.CausalSpec` (asymmetric: the estimator enumerates the
    #: coalitions consistent with its order), or None
    causal = None

    def follow(self, causal):
        """Record the causal request (its draws are the sampler's business)."""
        self.causal = causal
        if causal is not None:
            names = self.subject.feature_names
            self.diagnostics.update(
                causal_order=[[names[j] for j in c] for c in causal.components],
                confounding=None if causal.confounding is None else list(causal.confounding),
                asymmetric=causal.asymmetric)

    def with_model(self, model):
        """The same game (same fitted law, same draws) of another output's model."""
        game = copy.copy(self)
        game.model, game.made = model, []
        game.subject = self.subject._replace(output=model.output_name)
        return game

    def coalition_rows(self, masks, rows=None):
        seg = self._segment(masks, rows)
        self.made.append(seg)
        return seg

    def _segment(self, masks, rows):  # pragma: no cover - abstract
        raise NotImplementedError

    def null_players(self):
        # a feature equal in the row and every background row may still inform the draws
        # of the others (a degenerate law): none are declared null
        return np.zeros((self.n_explained, self.n_players), dtype=bool)


class ConditionalGame(EstimatedGame):
    """A table whose absent features are drawn given the present ones (see the module)."""

    def __init__(self, model, dataset, n, background, note, sampler, approach):
        super().__init__(model, dataset, n, background, note)
        self.sampler, self.approach = sampler, approach
        self.n_batches = batches_for(sampler.n_draws)
        self.rows_per_coalition = sampler.n_draws
        self.diagnostics = {**self.diagnostics, "dependence": approach,
                            "n_draws": sampler.n_draws}

    def _segment(self, masks, rows):
        # a tree's leaves are evaluated whole (no draws' error, fewer rows: ._leaf_rows)
        cls = WeightedRows if isinstance(self.sampler, ForestSampler) else \
            LeafRows if isinstance(self.sampler, TreeSampler) else ConditionalRows
        return cls(self.sampler, self.foreground, masks, rows=rows, n_batches=self.n_batches)

    def rows_spent(self):
        """Model rows of each explained row's coalitions so far when they vary by query (a
        tree's whole leaves, :mod:`._leaf_rows`); None when each costs ``n_draws`` rows."""
        segs = [s for s in self.made if isinstance(s, LeafRows)]
        if not segs:
            return None
        return sum(s.rows_per_explained(self.n_explained) for s in segs)

    @property
    def sampler_diagnostics(self) -> dict:
        return self.sampler.diagnostics


class MonteCarloError:
    """An estimator of a conditional game whose standard errors count the Monte Carlo error.

    Delegates everything to ``inner``; :meth:`estimate` also estimates from
    each batch of draws alone (a copy of ``inner`` per batch, sharing the
    game and the segments) and adds the batches' variance / ``B``.
    """

    def __init__(self, inner, game):
        self.inner, self.game = inner, game
        #: the last estimate found no draws' error (every query a whole leaf: ._leaf_rows)
        self.exact_worths = False

    def __getattr__(self, name):
        return getattr(self.__dict__["inner"], name)

    @property
    def dof(self):
        B = self.game.n_batches
        inner = self.inner.dof
        if self.exact_worths:
            return inner
        if inner is None:
            return np.full(self.game.n_explained, B - 1.0)
        return np.minimum(np.asarray(inner, dtype=float), B - 1.0)

    def estimate(self, game) -> Estimate:
        base = getattr(game, "inner", game)
        segs = [s for s in base.made if s.batches is not None]
        self.exact_worths = all(getattr(s, "monte_carlo_free", False) for s in segs)
        if self.exact_worths:  # the worths have no draws' error: the estimator's own errors
            return self.inner.estimate(game)
        B = base.n_batches
        shared = {id(game): game, id(base): base, **{id(s): s for s in segs}}
        copies = [_batch_copy(self.inner, shared) for _ in range(B)] if B > 1 else []
        est = self.inner.estimate(game)
        if not copies:
            std = np.full_like(est.values, np.nan)
            return est._replace(std=std)
        means = [s.result for s in segs]
        per_batch = []
        try:
            for b, inner in enumerate(copies):
                for s in segs:
                    s.result = s.batches[:, b]
                per_batch.append(inner.estimate(game).values)
        finally:
            for s, mean in zip(segs, means):
                s.result = mean
        mc_var = np.var(np.stack(per_batch), axis=0, ddof=1) / B
        sampling = 0.0 if est.std is None else est.std ** 2  # NaN (no estimate) stays NaN
        return est._replace(std=np.sqrt(sampling + mc_var))


def _batch_copy(inner, shared):
    """A copy of an estimator to estimate from one batch: its lists and caches its own (an
    estimate appends the segments' worths to per-row lists), its arrays shared (never
    written in place: a deep copy of them per batch cost a third of a 40-coalition run);
    values only (its own standard errors are not used)."""
    memo = dict(shared)
    stack = list(vars(inner).values())
    while stack:
        item = stack.pop()
        if isinstance(item, np.ndarray):
            memo[id(item)] = item
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    twin = copy.deepcopy(inner, memo)
    twin.values_only = True
    return twin


def conditional_game(model, dataset, n, background, note, approach, *, n_draws, rng,
                     causal=None):
    """The game of ``dependence=approach`` on the encoded background (a sampler's; the
    surrogate's is :func:`._dependence.dependence_game`'s); ``causal``: a resolved
    :class:`._causal.CausalSpec` (its draws follow the causal chain when it has
    ``confounding``)."""
    if background.shape[0] < 2:
        raise InvalidParameterError(
            f"dependence={approach!r} estimates the law of the features from the background, "
            f"which has {background.shape[0]} row; pass the training data as background=.")
    categorical = np.array([c.is_categorical for c in dataset.columns])
    # a child stream: the caller's generator goes on as in the independent game, so the
    # sampled coalitions of a seed are the same for every dependence= (MSEv compares them)
    try:
        rng = rng.spawn(1)[0]
    except (AttributeError, TypeError, ValueError):  # a generator without a seed sequence
        rng = np.random.default_rng(rng.integers(2 ** 63))
    sampler: Sampler
    if approach in ("gaussian", "copula"):
        refuse_categorical(dataset, np.vstack([background, dataset.values[:n]]), approach)
        cls = GaussianSampler if approach == "gaussian" else CopulaSampler
        sampler = cls(background, n_draws, rng)
    elif approach == "empirical":
        sampler = EmpiricalSampler(background, n_draws, rng, categorical=categorical)
    else:
        grown = ForestSampler if approach == "forest" else TreeSampler
        sampler = grown(background, n_draws, rng, categorical=categorical,
                        seed=rng.integers(2 ** 31))
    drawn: Sampler | CausalSampler = sampler
    if causal is not None and causal.confounding is not None:
        drawn = CausalSampler(sampler, causal, int(rng.integers(2 ** 63)))
    game = ConditionalGame(model, dataset, n, background, note, drawn, approach)
    game.follow(causal)
    return game
