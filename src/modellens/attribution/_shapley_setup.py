"""The setup of a Shapley request: its game, its algorithm and budget, and the checks.

What :func:`modellens.shapley` decides before any coalition is drawn: the game
(the background by the one rule of ``._background``, TreeSHAP's game for a tree
ensemble, groups of features as players), the algorithm ``"auto"`` picks and its
default budgets, whether a stopping rule applies, and the warning for a request
that plans very many model rows.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np

from .._validation import InvalidParameterError, ModellensWarning
from ..data import is_integer
from ..models import tree_ensemble_name
from ._background import choose_background
from ._blocks import SamplingBlock
from ._causal import resolve_causal
from ._conditional import MonteCarloError
from ._dependence import choose_dependence, conditional_diagnostics, dependence_game, law_rng
from ._streams import RowStreams
from ._games import InterventionalGame, RemovalGame, TreeGame, tree_ensemble_for
from ._groups import GroupGame, check_groups
from ._stopping import StoppingRule
from ._text import text_game
from .exact import OnePlayer
from .kernel import split_sizes
from .result import Attributions, build

__all__ = ["MAX_EXACT_FEATURES", "DEFAULT_PERMUTATIONS", "FIRST_ROUND_PER_FEATURE",
           "default_kernel_samples", "kernel_samples_for_std", "COSTLY_ROWS",
           "SUGGESTED_BACKGROUND"]


#: Largest number of features ``algorithm="exact"`` accepts (2**15 coalitions per row).
MAX_EXACT_FEATURES = 15


#: Default permutations (antithetic pairs count twice) of ``algorithm="permutation"``.
DEFAULT_PERMUTATIONS = 20


#: KernelSHAP's first round under a stopping rule: this many coalitions per feature.
FIRST_ROUND_PER_FEATURE = 8


def default_kernel_samples(d: int) -> int:
    """KernelSHAP's default budget of coalitions per explained row: ``2 d + 2048``."""
    return 2 * d + 2048


def kernel_samples_for_std(d: int, start: int = 2) -> int:
    """The smallest KernelSHAP budget from ``start`` on that samples the ``d`` pairs
    standard errors need (or enumerates everything)."""
    budget = start
    while budget < 2 ** d:
        _, sampled, pairs = split_sizes(d, budget)
        if not sampled or pairs >= d:
            return budget
        budget += 1
    return budget


def _with_cap(stop: StoppingRule, d: int) -> StoppingRule:
    """The rule with its cap: ``max_evals``, by default KernelSHAP's default budget."""
    if stop.max_evals is not None:
        return stop
    return replace(stop, max_evals=default_kernel_samples(d))


def _first_round(algorithm, d, n_samples, n_permutations, cap):
    """The first round's budget under a stopping rule: the one given, else a small one.

    KernelSHAP starts from ``8 d`` coalitions (its enumerated sizes are chosen
    for this budget), permutation sampling from ``DEFAULT_PERMUTATIONS`` orders.
    """
    if algorithm in ("auto", "kernel") and n_samples is None:
        n_samples = max(2, min(cap, FIRST_ROUND_PER_FEATURE * d))
    if algorithm == "permutation" and n_permutations is None:
        n_permutations = DEFAULT_PERMUTATIONS
    return n_samples, n_permutations


def _check_stop_applies(stop: StoppingRule | None, algorithm: str,
                        interactions: bool) -> StoppingRule | None:
    """Refuse a stopping rule where nothing samples: one rule for every exact algorithm.

    ``"auto"`` keeps it (it samples, or enumerates only when that is cheaper
    than the cap: an exact answer meets any tolerance).
    """
    if stop is None:
        return None
    what = ("tol= / tol_abs= (and max_evals=, their cap) stop the sampling algorithms "
            "('permutation', 'kernel', and 'auto' when it samples) once each row's standard "
            "errors are small enough; ")
    if interactions:
        raise InvalidParameterError(
            what + "interactions=True draws its own rounds and has no stopping rule yet: drop "
            "them and give n_permutations= (rounds of every pair), or algorithm='exact'.")
    if algorithm in ("exact", "tree"):
        exact = "TreeSHAP (algorithm='tree') is exact" if algorithm == "tree" else \
            "algorithm='exact' enumerates every coalition"
        raise InvalidParameterError(
            what + f"{exact} and needs no tolerance: drop them, or pick algorithm="
            "'permutation' or 'kernel' to sample.")
    return stop


def _game(request, *, masker, background, algorithm, target, response_method, feature_names,
          interactions, index, budget_given, random_state, rng, draw_background, stacklevel,
          groups=None, dependence=None, hf_tokenizer=None, players=None, streams=None):
    """The game of a request, with its background chosen by the one rule of ``._background``.

    A conditional game keeps the row streams (``streams``, or drawn from ``rng`` right
    after the background, where the independent game draws them) as ``game.streams``:
    its fitted law is seeded by their shared seed, the same in every Dask partition."""
    model, X = request.raw_model, request.X
    if request.dataset is None:
        # one text or image: its words / superpixels are the players
        if background is not None or feature_names is not None or index != "shapley" \
                or groups is not None:
            raise InvalidParameterError("a text or image takes no background, feature_names, "
                                        "index or groups.")
        if algorithm == "tree":
            raise InvalidParameterError("algorithm='tree' is for tree ensembles; texts and "
                                        "images take algorithm='exact', 'permutation', "
                                        "'kernel' or 'auto'.")
        return text_game(model, X, masker=masker, target=target,
                         response_method=response_method, hf_tokenizer=hf_tokenizer,
                         players=players, random_state=random_state)
    if hf_tokenizer is not None or players is not None:
        raise InvalidParameterError("hf_tokenizer= and players= are for texts (X a str or a "
                                    "list of str); a table's players are its columns (groups=).")
    dataset, n, rows = request.dataset, request.n_explained, request.reference
    players = None if groups is None else check_groups(groups, dataset.feature_names,
                                                       dataset.column_labels)
    ens = None
    conditional = dependence is not None and dependence[0] != "independent"
    if algorithm == "tree" or (algorithm == "auto" and not budget_given and groups is None
                               and not conditional and tree_ensemble_name(model) is not None):
        # (the check's model rows are the request's: a fallback on the model counts them)
        checked = tree_ensemble_for(model, dataset, X, strict=algorithm == "tree",
                                    response_method=response_method, request=request, n=n,
                                    stacklevel=stacklevel)
        ens = checked.ensemble
    if ens is None and index != "shapley":
        raise InvalidParameterError(
            f"index={index!r} is computed by TreeSHAP only: it needs algorithm='tree' (or "
            "'auto') and a supported tree model (see modellens.attribution.tree).")
    if rows is None and not draw_background and (ens is None or background is not None):
        raise InvalidParameterError(
            "Shapley values of Dask data need background rows in memory (a background drawn "
            "from X would be drawn from each partition); pass background= rows, e.g. "
            "background=X.sample(frac=...).compute() or a sample of the training data. "
            "(TreeSHAP of a supported tree model also takes none: the path-dependent game.)")
    bg, note = choose_background(dataset, n, background, rows, rng, optional=ens is not None,
                                 stacklevel=stacklevel)
    if ens is not None:  # every output asked for, in one game
        if players is not None and bg is None:
            raise InvalidParameterError(
                "groups= with algorithm='tree' needs a background (interventional TreeSHAP "
                "masks a group's columns jointly, exactly); the path-dependent game of no "
                "background takes single features. Pass background= rows, or use "
                "algorithm='exact', 'permutation' or 'kernel'.")
        trees = TreeGame(ens, model, dataset, n, bg, note, target=target,
                         model_rows=request.n_model_rows, raw=checked.raw)
        return trees if players is None else GroupGame(trees, players)
    if conditional:
        approach, scores = dependence[0], None
        streams = RowStreams.draw(rng) if streams is None else streams
        rng = law_rng(streams)
        if approach == "auto":  # the approach of lowest cross-validated MSEv
            approach, scores = choose_dependence(request.model, dataset, bg, rng, note,
                                                 request.options)
        causal = dependence[2] and resolve_causal(dependence[2], dataset.feature_names,
                                                  players is not None)
        game = dependence_game(request.model, dataset, n, bg, note, approach,
                               n_draws=dependence[1], rng=rng, causal=causal)
        game.streams = streams
        if scores is not None:
            game.diagnostics["dependence_cv_msev"] = scores
    else:
        game = InterventionalGame(request.model, dataset, n, bg, note)
    return game if players is None else GroupGame(game, players)


#: Planned model rows above which a large background gets a warning.
COSTLY_ROWS = 10_000_000


#: Background rows that a costly request is advised to sample down to.
SUGGESTED_BACKGROUND = 100


def _warn_if_costly(plan, n, m, note, *, tree=False, stacklevel=3):
    """Say so when a request plans very many rows mostly because of its background.

    ``tree``: the model is a tree ensemble, whose TreeSHAP (``algorithm="tree"``)
    reads the background once per tree (cost of order ``n + m``, no model rows).
    """
    total = sum(seg.n_rows for seg in plan.segments)
    if total > COSTLY_ROWS and m > SUGGESTED_BACKGROUND:
        hint = (" For this tree model, algorithm='tree' takes the whole background at a cost "
                "of order n + m." if tree else "")
        warnings.warn(
            f"this request plans {total:,} model rows ({n} explained rows x "
            f"{total // max(1, n * m):,} coalitions x {m} background rows): the cost grows "
            f"with the background, {note}. A sample of about {SUGGESTED_BACKGROUND} rows "
            f"usually suffices, e.g. background=X_train.sample({SUGGESTED_BACKGROUND}, "
            f"random_state=0); or explain fewer rows, or set n_samples= lower.{hint}",
            ModellensWarning, stacklevel=stacklevel)


def _choose_algorithm(algorithm, d, n_samples, n_permutations, cap=None):
    """Validate the budget options; resolve ``"auto"``.  Returns ``(algorithm, budget)``.

    ``cap``: a stopping rule's most coalitions per row, which ``"auto"``
    compares with exact enumeration's cost (the budget is then a first round).
    """
    if n_samples is not None:
        if algorithm not in ("auto", "kernel"):
            raise InvalidParameterError(
                f"n_samples is the budget of algorithm='kernel'; "
                f"algorithm={algorithm!r} does not use it.")
        if not is_integer(n_samples) or n_samples < 2:
            raise InvalidParameterError(
                f"n_samples must be an integer >= 2 (coalitions per explained "
                f"row), got {n_samples!r}.")
    if n_permutations is not None:
        if algorithm != "permutation":
            raise InvalidParameterError(
                "n_permutations is the budget of algorithm='permutation'; "
                f"algorithm={algorithm!r} does not use it.")
        if not is_integer(n_permutations) or n_permutations < 2:
            raise InvalidParameterError(
                f"n_permutations must be an integer >= 2, got {n_permutations!r}.")
    kernel_budget = int(n_samples) if n_samples is not None else default_kernel_samples(d)
    if algorithm == "auto":
        exact_fits = d <= MAX_EXACT_FEATURES and 2 ** d - 2 <= (
            kernel_budget if cap is None else cap)
        algorithm = "exact" if exact_fits else "kernel"
    if algorithm == "exact":
        if d > MAX_EXACT_FEATURES:
            raise InvalidParameterError(
                f"algorithm='exact' evaluates all 2**d coalitions: with d={d} features that is "
                f"{2 ** d:,} coalitions times the background rows per explained row, too many. "
                f"Use algorithm='kernel' (budget n_samples=) or 'permutation' "
                f"(budget n_permutations=); 'exact' takes at most {MAX_EXACT_FEATURES} features."
            )
        return "exact", None
    if algorithm == "permutation":
        return "permutation", int(n_permutations or DEFAULT_PERMUTATIONS)
    return "kernel", kernel_budget


def _warn_skewed(game, estimator):
    """Say why a text's (an image's) standard errors were withheld (``permutation.SKEW_PAIRS``)."""
    i, (j, g, needed) = next(iter(estimator.skewed.items()))
    names = getattr(getattr(game, "rep", None), "words", None) or \
        getattr(getattr(game, "rep", None), "names", None)
    what, drawn, advice = _skew_words(estimator, i, j, needed, names)
    d = game.n_players
    exact = f", or algorithm='exact' ({2 ** d - 2:,} coalitions)" \
        if d <= MAX_EXACT_FEATURES and getattr(estimator, "groups", None) is None else ""
    if j < 0:  # the rounds of interaction values: too few to measure a pair's rare spikes
        warnings.warn(
            f"no standard errors (std is NaN): {drawn} are too few for intervals of a text's "
            "(an image's) interaction values, whose pair terms are rare large contributions "
            f"(a pair of words moves the score in few coalitions). {advice} would do{exact}.",
            ModellensWarning, stacklevel=4)
        return
    warnings.warn(
        f"no standard errors (std is NaN): {what} are too skewed for an interval from "
        f"{drawn} (skewness {g:.1f}: a rare large contribution, as when a word moves the "
        f"score only beside a few others, seen too seldom to measure). {advice} would "
        f"do{exact}.", ModellensWarning, stacklevel=4)


def _skew_words(estimator, i, j, needed, names) -> tuple:
    """``(what was too skewed, what was drawn, the budget that would do)`` in the words of
    the estimator: permutation sampling or the rounds of interaction values."""
    from ._interaction_values import PairPermutationEstimator

    def name(k):
        return repr(names[k]) if names is not None else f"player {k}"

    if isinstance(estimator, PairPermutationEstimator):
        dp = estimator.d_padded
        return (f"the rounds' estimates of the value of {name(j)}",
                f"{estimator.rounds} rounds of {dp} orders",
                f"{'At least' if j < 0 else 'About'} {needed} rounds "
                f"(n_permutations={needed * dp})")
    return (f"the marginal contributions of {name(j)}",
            f"{estimator.pairs[i]} antithetic pairs of orders",
            f"About {needed} pairs (n_permutations={2 * needed})")


def _result(game, estimator, est, algorithm, budget, index, stop=None,
            converged=None, *, subject=None, diagnostics=None) -> Attributions:
    """The Attributions of an estimate: the game's subject, the numbers, the sampling block.

    ``subject`` and ``diagnostics`` are one output's of a game of several (TreeSHAP).
    """
    index = getattr(estimator, "index", index)  # Owen values: "owen"
    if getattr(estimator, "skewed", None):
        _warn_skewed(game, estimator)
    n_coalitions = estimator.n_coalitions
    if isinstance(game, RemovalGame) and np.ndim(n_coalitions):
        n_coalitions = int(n_coalitions[0])  # one input: a count
    diagnostics = game.diagnostics if diagnostics is None else diagnostics
    extra = {**diagnostics, "n_coalitions": n_coalitions,
             "n_model_rows": diagnostics.get("n_model_rows", 0) if game.model is None
             else game.model.n_rows}
    if algorithm == "tree":
        extra["index"] = index
    if getattr(estimator, "proxy_rows", None) is not None:
        extra["proxy_rows"] = estimator.proxy_rows.copy()
    extra.update(conditional_diagnostics(game, est.prediction))
    sampling = None
    if algorithm in ("permutation", "kernel") or isinstance(estimator, MonteCarloError):
        n_perm = None
        if algorithm == "permutation":
            n_perm = budget if isinstance(estimator, OnePlayer) else 2 * estimator.n_antithetic
        m = game.rows_per_coalition if isinstance(game, InterventionalGame) else 1
        # a row pays m rows per coalition and one for f(x); v(empty)'s m rows are shared
        model_rows = np.asarray(estimator.n_coalitions, dtype=np.int64) * m + 1
        spent = getattr(getattr(game, "inner", game), "rows_spent", lambda: None)()
        if spent is not None:  # whole leaves: a coalition costs its leaf's rows
            model_rows = spent + 1
        model_rows = np.broadcast_to(model_rows, (game.n_explained,)).copy()
        sampling = SamplingBlock(std=est.std, dof=np.asarray(estimator.dof, dtype=float),
                                 n_permutations=n_perm,
                                 n_samples=budget if algorithm == "kernel" else None,
                                 model_rows=model_rows,
                                 converged=None if converged is None else
                                 np.asarray(converged, dtype=bool),
                                 tol=None if stop is None else stop.tol,
                                 tol_abs=None if stop is None else stop.tol_abs,
                                 max_evals=None if stop is None else stop.max_evals,
                                 interactions_std=est.interactions_std)
    return build(game.subject if subject is None else subject, values=est.values,
                 base_values=np.full(game.n_explained, est.base_value),
                 prediction=est.prediction, method=f"{index}-{algorithm}",
                 value_function=game.value_function, sampling=sampling,
                 interactions=est.interactions, diagnostics=extra)


