"""Shapley values of a model's predictions with an interventional value function."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Sequence
from functools import partial
from typing import Any, cast, overload

import numpy as np

from .._validation import (InvalidParameterError, ModellensWarning, check_choice,
                           check_random_state)
from ..data import is_integer
from ..engine import open_request, run, run_outputs
from ..models import tree_ensemble_name
from ..typing import DaskLike, DataLike, ModelLike, PredictFn, RandomStateLike, TargetSpec
from ._background import DEFAULT_BACKGROUND
from ._groups import GroupGame
from ._dependence import check_dependence, with_monte_carlo_error
from ._estimator_choice import choose_estimator
from ._games import InterventionalGame, RemovalGame, ShapleyPlan
from ._masking import ImageMasker, TextMasker
from ._stopping import GrowPlan, check_stopping, run_until_converged
from ._streams import RowStreams
from ._shapley_setup import (MAX_EXACT_FEATURES,
                             _check_stop_applies, _game,
                             _result, _warn_if_costly, _with_cap)
from ._text import is_text_list
from .distributed import DistributedAttributions
from .result import Attributions, keep_row_labels

__all__ = ["shapley", "ALGORITHMS", "MAX_EXACT_FEATURES", "DEFAULT_BACKGROUND"]

ALGORITHMS = ("auto", "exact", "permutation", "kernel", "tree")


# Dask data give a DistributedAttributions, everything else an Attributions: the Dask
# overload comes first because a Dask DataFrame is also a DataFrameLike
@overload
def shapley(model: ModelLike | PredictFn, X: DaskLike, *,
            background: DataLike | None = None, algorithm: str = "auto",
            n_samples: int | None = None, n_permutations: int | None = None,
            random_state: RandomStateLike = None, target: TargetSpec = None,
            response_method: str = "auto", feature_names: Sequence[str] | None = None,
            chunk_size: int | None = None, n_jobs: int | None = None,
            progress: bool | None = None, masker: TextMasker | ImageMasker | None = None,
            interactions: bool = False, index: str = "shapley", tol: float | None = None,
            tol_abs: float | None = None,
            max_evals: int | None = None,
            groups: dict | None = None, dependence: str = "independent",
            n_draws: int | None = None, causal_order: Sequence | None = None,
            confounding: bool | Sequence[bool] | None = None, asymmetric: bool = False,
            hf_tokenizer: Any = None, players: str | None = None) -> DistributedAttributions: ...


@overload
def shapley(model: ModelLike | PredictFn, X: list[str], *,
            background: DataLike | None = None, algorithm: str = "auto",
            n_samples: int | None = None, n_permutations: int | None = None,
            random_state: RandomStateLike = None, target: TargetSpec = None,
            response_method: str = "auto", feature_names: Sequence[str] | None = None,
            chunk_size: int | None = None, n_jobs: int | None = None,
            progress: bool | None = None, masker: TextMasker | ImageMasker | None = None,
            interactions: bool = False, index: str = "shapley", tol: float | None = None,
            tol_abs: float | None = None, max_evals: int | None = None,
            groups: dict | None = None, dependence: str = "independent",
            n_draws: int | None = None, causal_order: Sequence | None = None,
            confounding: bool | Sequence[bool] | None = None, asymmetric: bool = False,
            hf_tokenizer: Any = None, players: str | None = None) -> list[Attributions]: ...


@overload
def shapley(model: ModelLike | PredictFn, X: DataLike | str | np.ndarray, *,
            background: DataLike | None = None, algorithm: str = "auto",
            n_samples: int | None = None, n_permutations: int | None = None,
            random_state: RandomStateLike = None, target: TargetSpec = None,
            response_method: str = "auto", feature_names: Sequence[str] | None = None,
            chunk_size: int | None = None, n_jobs: int | None = None,
            progress: bool | None = None, masker: TextMasker | ImageMasker | None = None,
            interactions: bool = False, index: str = "shapley", tol: float | None = None,
            tol_abs: float | None = None, max_evals: int | None = None,
            groups: dict | None = None, dependence: str = "independent",
            n_draws: int | None = None, causal_order: Sequence | None = None,
            confounding: bool | Sequence[bool] | None = None, asymmetric: bool = False,
            hf_tokenizer: Any = None, players: str | None = None) -> Attributions: ...


def shapley(model: ModelLike | PredictFn,
            X: DaskLike | DataLike | str | list[str] | np.ndarray, *,
            background: DataLike | None = None, algorithm: str = "auto",
            n_samples: int | None = None, n_permutations: int | None = None,
            random_state: RandomStateLike = None, target: TargetSpec = None,
            response_method: str = "auto", feature_names: Sequence[str] | None = None,
            chunk_size: int | None = None, n_jobs: int | None = None,
            progress: bool | None = None, masker: TextMasker | ImageMasker | None = None,
            interactions: bool = False, index: str = "shapley", tol: float | None = None,
            tol_abs: float | None = None, max_evals: int | None = None,
            groups: dict | None = None, dependence: str = "independent",
            n_draws: int | None = None, causal_order: Sequence | None = None,
            confounding: bool | Sequence[bool] | None = None, asymmetric: bool = False,
            hf_tokenizer: Any = None, players: str | None = None
            ) -> Attributions | list[Attributions] | DistributedAttributions:
    r"""Why did the model predict this for that row: how much did each feature add or take away?

    Shapley values share each row's prediction, minus the average prediction
    over background data, fairly among the features: a feature's value is its
    average contribution when it joins the others in every possible order, with
    absent features taking the background rows' values.  They add up: the base
    value plus a row's values is its prediction.  Small models are enumerated
    exactly; larger ones are estimated by permutation sampling or KernelSHAP
    (with standard errors), and tree ensembles are read directly from their
    trees (TreeSHAP, exact and fast).  The background is the reference the
    explanation is relative to: choose it on purpose (for instance the
    training data).  Texts and images are explained word by word or superpixel
    by superpixel with a ``masker``.

    Parameters
    ----------
    model : estimator or callable
        As in :func:`modellens.pdp`.
    X : ndarray, DataFrame or Dask DataFrame of shape (n, d)
        The rows to explain.  DataFrames may hold categorical and string
        columns: a feature outside the coalition takes the background row's
        whole value (its category).  A Dask DataFrame (or array) is explained
        partition by partition where it lies, and the result stays
        distributed (see Returns); it needs ``background`` rows in memory
        (or none, for TreeSHAP's path-dependent values).
    background : ndarray, DataFrame or int, optional
        Rows that stand in for the absent features, with the columns of
        ``X``.  None (default) draws a random sample of at most
        ``DEFAULT_BACKGROUND = 100`` rows of ``X`` (seeded by
        ``random_state``; a warning says so when ``X`` has more rows); an
        int draws that many.  The model-agnostic algorithms' cost grows
        linearly with its size (``n`` x coalitions x ``m`` model rows);
        TreeSHAP reads it once per tree, at a cost of order ``n + m``, so a
        whole training set is a practical background there.
    algorithm : {"auto", "exact", "permutation", "kernel", "tree"}, default="auto"
        ``"exact"`` evaluates all :math:`2^d` coalitions (up to
        ``MAX_EXACT_FEATURES = 15`` features).  ``"permutation"`` averages
        marginal contributions over random feature orders, in antithetic
        pairs (an order and its reverse).  ``"kernel"`` is KernelSHAP: a
        weighted least-squares fit with the Shapley kernel over enumerated and
        sampled complementary coalitions, the efficiency constraint exact (see
        :mod:`modellens.attribution.kernel`); once a row has sampled ``2 d``
        pairs, a 3-additive proxy of the game fit on some of its pairs
        corrects the fit of the others (a control variate, see
        :mod:`modellens.attribution._proxy`; ``attr.diagnostics["proxy_rows"]``
        says which rows), at a fixed budget and under ``tol``.  ``"auto"`` takes ``"exact"``
        when the kernel budget would cover every coalition anyway (by default
        up to 11 features) and ``"kernel"`` otherwise.  ``"tree"`` is TreeSHAP
        for tree ensembles (scikit-learn trees, forests and gradient boosting,
        XGBoost, LightGBM; see :mod:`modellens.attribution.tree`): exact values
        read from the trees, with no model rows beyond the agreement check's (the
        model's raw margin on the explained rows, at most 100,000; counted in
        ``diagnostics["n_model_rows"]``), on the model's raw output
        (the prediction, the log-odds of a boosted classifier, the class
        probability of a forest).  Without ``background`` it gives the
        path-dependent values (Lundberg et al. 2020: absent features follow
        the training data's split proportions, the covers; ``value_function``
        ``"tree_path_dependent"``); with a background, the interventional
        values of this function, equal to ``"exact"``'s on that background.
        ``"auto"`` explains the number the model predicts (what
        :func:`modellens.predict`, PD, ALE and LIME explain): it picks
        ``"tree"`` for a supported tree model whose raw output is that
        number (regressors, forests, ``response_method="decision_function"``;
        not a Pipeline, numeric columns or the categorical ones of a
        HistGradientBoosting model, no sampling budget given) and the rules
        above otherwise, so the probability of a boosted classifier (whose
        trees add up to log-odds) is explained by ``"exact"`` or
        ``"kernel"``.  For TreeSHAP of the log-odds pass
        ``algorithm="tree"``; ``output`` names the scale explained.
    n_samples : int, optional
        KernelSHAP's budget: coalitions evaluated per explained row (each
        costs ``m`` model rows), default ``2 d + 2048``.  A budget of
        ``2**d - 2`` or more gives the exact values.
    n_permutations : int, optional
        Feature orders per explained row for ``"permutation"`` (default 20),
        drawn as antithetic pairs (an odd number is rounded up).  A pair costs
        at most ``2 (d - 1)`` coalitions.  Standard errors need at least 8
        pairs (16 orders; fewer give NaN and a warning).
    random_state : int or Generator, optional
        Seeds the background sample and the sampled coalitions / orders; the
        same seed gives the same numbers.  Each explained row draws from its
        own stream, set by the seed and the row's position in ``X``.
    target, response_method, feature_names, chunk_size, n_jobs, progress
        As in :func:`modellens.pdp` (for a transformers text classifier,
        ``response_method="decision_function"`` explains its logits instead
        of its class probabilities, and ``target=`` takes its class labels,
        ``target="POSITIVE"``, as well as their positions).  With ``algorithm="tree"``, ``target``
        picks the outputs by the same rules (every class of a multiclass
        model by default, computed in one pass over the trees; binary ones
        explain the log-odds of ``classes_[1]``), and the rows are explained in parallel
        on ``n_jobs`` threads (scikit-learn's meaning: None is 1 unless
        :func:`modellens.config` says otherwise, -1 every core).
    masker : {"text", "image"}, TextMasker or ImageMasker, optional
        Explain one text (``X`` a str; implied when ``X`` is a str) or one
        image (``X`` of shape (height, width, channels)) with ``model`` a
        ``predict_fn`` on lists of texts / arrays of images: the players are
        the distinct words / superpixels and
        :math:`v(S) = f(\text{input with only } S \text{ kept})` (absent words
        removed, absent superpixels filled with their mean colour), the
        masking of :func:`modellens.lime_text` / :func:`modellens.lime_image`.
        ``TextMasker(tokenizer=)`` and ``ImageMasker(segmentation=,
        hide_color=)`` choose its options.  ``base_values`` is
        :math:`f` with everything removed, so the values add up to
        ``prediction - base_values``; ``media`` holds the text and its word
        spans or the image and its superpixels (``segments``).  Every
        algorithm but ``"tree"`` runs on these games as on tables.  A list
        of texts gives a list of results, one per text (each its own words).
        ``model`` may be a Hugging Face ``text-classification`` pipeline (or a
        sequence-classification model with ``hf_tokenizer=``): every class
        is explained from the same forward passes (``target=`` a column picks
        one), in batches of texts sorted by length on the model's device, an
        absent word replaced by the tokenizer's mask token (deleted when it
        has none), and ``interactions=True`` ranks the word pairs.
    hf_tokenizer : transformers tokenizer, optional
        The tokenizer of a transformers ``model`` given without its pipeline
        (not a word splitter: that is ``TextMasker(tokenizer=)``).
    players : {"word", "sentence", "hierarchy"}, optional
        A text's players: its distinct words (default) or its sentences;
        ``"hierarchy"``: words within sentences, and Owen values (``._owen``).
    interactions : bool, default=False
        Also compute the SHAP interaction values (``interactions``, shape
        ``(n, d, d)``: half the Shapley interaction index of each pair off the
        diagonal, the main effects on it; each row's matrix is symmetric and
        sums over its last axis to its values), for any model.  TreeSHAP
        gives them from the trees (path-dependent game without background,
        interventional with one); ``"exact"`` (``"auto"`` up to 11 features)
        from the same coalitions as the values; ``"permutation"`` samples
        them in rounds of paired feature orders in which every pair is
        neighbours once (``n_permutations`` orders, default 10 rounds of
        ``d`` orders, ``d`` rounded up to even), with standard errors in
        ``sampling.interactions_std`` (see
        :mod:`modellens.attribution._interaction_values`; the values and their
        standard errors then come from the same rounds, so they differ from
        those of ``interactions=False`` with the same seed); KernelSHAP gives
        none.  :meth:`Attributions.interaction_pairs` ranks the pairs.
    index : {"shapley", "banzhaf"}, default="shapley"
        The attribution of the same game: ``"shapley"`` (the formula above) or
        ``"banzhaf"``, the Banzhaf value
        :math:`\beta_j(x) = 2^{-(d-1)} \sum_{S \subseteq N \setminus \{j\}}
        \big(v(S \cup \{j\}) - v(S)\big)`, every coalition weighted alike
        (Banzhaf 1965).  Banzhaf values need not add up to
        ``prediction - base_values``.  Computed by TreeSHAP
        (``algorithm="tree"`` or ``"auto"`` on a supported tree model), in
        both tree games (method ``"banzhaf-tree"``).
    tol : float, optional
        A stopping rule for ``"permutation"`` and ``"kernel"`` (and
        ``"auto"`` when it samples): each row draws in rounds until the
        largest standard error of its values is at most ``tol`` times their
        spread, :math:`\max_j \hat\sigma_{ij} \le \mathrm{tol}\,
        (\max_j \hat\phi_{ij} - \min_j \hat\phi_{ij})` (R shapr's
        criterion; e.g. ``tol=0.02``).  Every round evaluates the rows not
        done in one engine pass; rows that are done stop paying.  With a rule,
        ``n_samples`` / ``n_permutations`` set the first round (default ``8 d``
        coalitions / 20 orders) and ``"auto"`` enumerates exactly when
        ``2**d - 2 <= max_evals``.  The result's ``sampling.converged`` and
        ``sampling.model_rows`` say, per row, whether it got there and at
        what cost; rows still short at the cap are named in a warning with
        the error they reached.  See :mod:`modellens.attribution._stopping`.
    tol_abs : float, optional
        The same rule with an absolute bound: done when the largest standard
        error is at most ``tol_abs`` (in units of the output).  With both, a
        row is done when either holds.
    max_evals : int, optional
        The stopping rule's cap: most coalitions per explained row (each costs
        ``m`` model rows), default KernelSHAP's default budget ``2 d + 2048``.

    groups : dict, optional
        Groups of features that are one player each, e.g.
        ``{"location": ["lat", "lon"]}`` (features by name or integer, as
        ``features=`` elsewhere); features in no group are players of their
        own.  A group joins a coalition with all its features at once:
        :math:`v^G(T) = v(\bigcup_{g \in T} g)`.  The result's
        ``feature_names`` are the players' names (in the order of each one's
        first column), ``diagnostics["groups"]`` their features; a group of
        several features has no single value to show (``data`` NaN).  Every
        algorithm takes groups: the model-agnostic ones evaluate the groups'
        game, interventional TreeSHAP masks a group's columns jointly in
        every leaf (exact); path-dependent TreeSHAP (no background) refuses
        them.  ``"auto"`` does not pick TreeSHAP when groups are given.
    dependence : str, default="independent"
        The value function: ``"independent"``, ``"gaussian"``, ``"copula"``,
        ``"empirical"``, ``"tree"``, ``"forest"``, ``"surrogate"`` or ``"auto"``.  ``"independent"``: the marginal (interventional)
        game below.  The others estimate the conditional game
        :math:`v_i(S) = E[f(X) \mid X_S = x^{(i)}_S]` from the background (the
        training data): ``"gaussian"`` (a normal fit, Ledoit-Wolf shrinkage
        when ill-conditioned), ``"copula"`` (a Gaussian copula over the
        empirical margins), ``"empirical"`` (background rows weighted by a
        kernel of the Mahalanobis distance on :math:`S`, bandwidth 0.1,
        effective sample sizes in ``diagnostics``), ``"tree"`` (background
        rows in the leaf of a tree grown to predict the absent features from
        the present ones; a leaf of at most ``n_draws`` rows is evaluated
        whole, without draws), ``"forest"`` (the leaves of 5 such trees on
        halves of the background, weighted: :mod:`modellens.attribution._forest`)
        draw ``n_draws`` completions per coalition;
        ``"surrogate"`` predicts every worth with one regressor trained on
        masked background rows (no draws; its out-of-fold error in
        ``diagnostics["surrogate_oof_mse"]``).  ``"tree"``, ``"forest"``, ``"empirical"``
        and ``"surrogate"`` take categorical features and missing values; the
        others refuse them.  ``"auto"`` takes the approach of lowest
        cross-validated MSEv on the background (``diagnostics["dependence"]``,
        scores in ``diagnostics["dependence_cv_msev"]``).  Standard errors
        count the Monte Carlo error (see :mod:`modellens.attribution._conditional`),
        and so does ``tol``'s rule; not with ``algorithm="tree"`` or
        ``interactions``.  Dask data: every partition fits the same law.
        Every table result reports ``diagnostics["msev"]`` and ``"msev_se"``
        (:mod:`modellens.attribution._msev`).
    n_draws : int, optional
        Conditional draws per (explained row, coalition), default 200.
    causal_order : list of lists of features, optional
        A partial causal ordering of a conditional game (R shapr's
        ``causal_ordering``): components, each a list of feature names or
        positions, every feature once, causes before their effects.
    confounding : bool or list of bool, optional
        Causal Shapley values (Heskes et al. 2020): the worths become
        :math:`E[f(X) \mid do(X_S = x_S)]`, drawn along the order; per
        component, whether its features share hidden confounders.
    asymmetric : bool, default=False
        Average only the feature orders consistent with ``causal_order``
        (Frye et al. 2020): enumerated exactly, or sampled with
        ``algorithm="permutation"`` (and ``tol=``).  The semantics of all three:
        :mod:`modellens.attribution._causal`.

    Returns
    -------
    Attributions
        ``values`` ``(n, d)``; ``base_values`` (the mean background
        prediction, for every row); ``prediction`` (:math:`f(x)`); for the
        sampling algorithms a ``sampling`` block with the budget
        (``n_permutations`` / ``n_samples``) and ``std`` (also ``attr.std``):
        the standard error of each value (the
        spread over antithetic pairs, the delta-method error of the
        KernelSHAP fit; 0 where the budget enumerated every coalition), None
        for ``"exact"``, with its degrees of freedom in ``dof`` (antithetic
        pairs - 1, or kernel draws - 1): small budgets give few, so use
        :meth:`Attributions.confidence_interval` (t quantiles) rather than
        +/- 1.96 ``std``.  ``diagnostics`` records the background used and the cost
        (``"background"``, ``"n_background"``, ``"n_coalitions"``,
        ``"n_model_rows"``); the sampling block also has each row's
        ``model_rows`` and, with ``tol`` / ``tol_abs``, ``converged``.
        For a Dask ``X``: a :class:`~modellens.DistributedAttributions`, whose
        ``frame`` is a lazy Dask DataFrame with the partitions and index of
        ``X`` (a column per feature, ``base_value``, ``prediction``), equal to
        the in-memory values of the same rows and seed whatever the
        partitioning; standard errors and the ``diagnostics`` counts are not kept.

    See Also
    --------
    lime : Local linear surrogates, another local explanation.
    Attributions : The result: values, plots, tables, conversion to shap.
    interactions : Friedman's H statistics, a global view of interactions.

    Notes
    -----
    Feature :math:`j`'s Shapley value for the row :math:`x` is its average
    marginal contribution over coalitions :math:`S` of the other features,

    .. math:: \phi_j(x) = \sum_{S \subseteq N \setminus \{j\}}
              \frac{|S|!\,(d - |S| - 1)!}{d!}\,\big(v(S \cup \{j\}) - v(S)\big),

    with the interventional value function
    :math:`v(S) = \frac{1}{m} \sum_{b=1}^m f(x_S, z^{(b)}_{\bar S})`: the
    features outside :math:`S` take the values of background row
    :math:`z^{(b)}` and the prediction is averaged over the :math:`m`
    background rows.  The values add up:
    :math:`\sum_j \phi_j(x) = f(x) - v(\emptyset)`, and the base value
    :math:`v(\emptyset)` is the mean prediction over the background.

    Every (explained row, coalition, background row) is one model row: the
    cost is ``n * coalitions * m`` rows, all planned first and streamed
    through the model in large chunks.  The empty coalition (shared by every
    row) costs ``m`` rows and the full one (``f(x)``) one row per explained row.

    The sampled coalitions are drawn independently for each explained row, so
    the sampling errors of different rows are independent.

    References
    ----------
    .. [1] Shapley, L. S. (1953). A value for n-person games. *Contributions to
       the Theory of Games* II, 307-317.
    .. [2] Štrumbelj, E. & Kononenko, I. (2014). Explaining prediction models
       and individual predictions with feature contributions. *Knowledge and
       Information Systems* 41(3), 647-665.
    .. [3] Lundberg, S. M. & Lee, S.-I. (2017). A unified approach to
       interpreting model predictions. *NeurIPS 30*.
    .. [4] Covert, I. & Lee, S.-I. (2021). Improving KernelSHAP: practical
       Shapley value estimation via linear regression. *AISTATS 2021*.
    .. [5] Lundberg, S. M. et al. (2020). From local explanations to global
       understanding with explainable AI for trees. *Nature Machine
       Intelligence* 2, 56-67.
    .. [6] Banzhaf, J. F. (1965). Weighted voting doesn't work: a mathematical
       analysis. *Rutgers Law Review* 19, 317-343.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> rng = np.random.default_rng(0)
    >>> X, background = rng.normal(size=(5, 3)), rng.normal(size=(50, 3))
    >>> attr = ml.shapley(lambda A: A @ [1.0, 2.0, -1.0], X, background=background)
    >>> attr.method
    'shapley-exact'
    >>> # a linear model: phi_j = w_j (x_j - mean of the background's x_j)
    >>> bool(np.allclose(attr.values, (X - background.mean(axis=0)) * [1.0, 2.0, -1.0]))
    True
    >>> bool(np.allclose(attr.base_values + attr.values.sum(axis=1), attr.prediction))
    True

    Permutation sampling of a model with interactions, with standard errors;
    the same seed gives the same numbers:

    >>> X = rng.normal(size=(100, 8))
    >>> def model(A):
    ...     return A[:, 0] * A[:, 1] + A[:, 2] * A[:, 3]
    >>> kw = dict(background=X[:50], algorithm="permutation", n_permutations=50, random_state=0)
    >>> attr = ml.shapley(model, X[:3], **kw)
    >>> attr.method, attr.std.shape
    ('shapley-permutation', (3, 8))
    >>> bool(np.array_equal(attr.values, ml.shapley(model, X[:3], **kw).values))
    True

    Stop each row once its standard errors are below 2% of the spread of its
    values (a model with a three-way interaction, which sampling cannot get
    exactly); rows that get there early stop paying:

    >>> def model(A):
    ...     return A[:, 0] * A[:, 1] * A[:, 2] + np.sin(A[:, 3] + A[:, 4])
    >>> attr = ml.shapley(model, X[:4], background=X[:50], algorithm="kernel",
    ...                   tol=0.02, random_state=0)
    >>> bool(attr.sampling.converged.all())
    True
    >>> spread = attr.values.max(axis=1) - attr.values.min(axis=1)
    >>> bool(np.all(attr.std.max(axis=1) <= 0.02 * spread))
    True
    >>> attr.sampling.model_rows.shape  # per row: coalitions x 50 background rows + f(x)
    (4,)
    """
    check_choice(algorithm, "algorithm", ALGORITHMS)
    check_choice(index, "index", ("shapley", "banzhaf"))
    rng = check_random_state(random_state)
    settings = dict(background=background, algorithm=algorithm, n_samples=n_samples,
                    n_permutations=n_permutations, target=target,
                    response_method=response_method, feature_names=feature_names,
                    masker=masker, interactions=interactions, index=index,
                    random_state=random_state, groups=groups, hf_tokenizer=hf_tokenizer,
                    players=players,
                    stop=_check_stop_applies(check_stopping(tol, tol_abs, max_evals),
                                             algorithm, interactions),
                    dependence=check_dependence(dependence, n_draws, algorithm=algorithm,
                                                masker=masker, interactions=interactions,
                                                stop=tol is not None or tol_abs is not None,
                                                causal_order=causal_order,
                                                confounding=confounding, asymmetric=asymmetric))
    request = _open(model, X, settings, options=None, several=True, chunk_size=chunk_size,
                    n_jobs=n_jobs, progress=progress)
    if request.partitions is not None:
        from .distributed import explain_partitions

        if masker is not None or interactions or groups is not None:
            raise InvalidParameterError(
                "Dask data are explained row by row as tables: masker= (texts, images), "
                "interactions=True and groups= need the data in memory (X.compute() of the "
                "rows you want).")
        if background is None or is_integer(background):
            # a background drawn from X would be drawn from each partition's rows
            settings["draw_background"] = False
        return explain_partitions(
            request.partitions, partial(_explain_rows, model, settings),
            streams=RowStreams.draw(rng), options=request.options, feature_names=feature_names)
    if is_text_list(X):  # each text its own game (its own words), in the order given
        return [_explain(_one_text(request, t), rng=rng, streams=None, stacklevel=5, **settings)
                for t in cast(list, X)]
    return keep_row_labels(_explain(request, rng=rng, streams=None, stacklevel=5, **settings),
                           request.X)


def _open(model, X, settings, *, options, several=False, **given):
    """The request of a call through the front door: a text or image, or rows with the background."""
    background = settings["background"]
    media = settings["masker"] is not None or isinstance(X, str) or is_text_list(X)
    if not media and (isinstance(background, bool) or np.isscalar(background)) \
            and not is_integer(background):
        raise InvalidParameterError(f"background must be rows (array or DataFrame) or a "
                                    f"count, got {background!r}.")
    rows = None if background is None or is_integer(background) else background
    # the model is wrapped once the game is known: a tree ensemble is read from its trees
    return open_request(model, X, reference=None if media else rows,
                        feature_names=None if media else settings["feature_names"],
                        target=settings["target"], response_method=settings["response_method"],
                        options=options, dask="partitions", media=media, wrap_model=False,
                        several=several and not media, **given)


def _one_text(request, text):
    """The request of one text of a list (the same model and options)."""
    one = copy.copy(request)
    one.X = text
    return one


def _explain_rows(model, settings, X, streams, options) -> Attributions:
    """One partition's rows (rows ``streams.start`` on of the table), as in memory."""
    settings = dict(settings)
    draw_background = settings.pop("draw_background", True)
    request = _open(model, X, settings, options=options, several=True)
    return _explain(request, rng=None, streams=streams, stacklevel=5,
                    draw_background=draw_background, **settings)


def _explain(request, *, background, algorithm, n_samples, n_permutations, target,
             response_method, feature_names, masker, interactions, index, random_state, rng,
             streams, stacklevel, stop=None, draw_background=True,
             groups=None, dependence=None, hf_tokenizer=None, players=None) -> Attributions:
    """The Shapley values of a request's rows (in memory): game, estimator, one engine run.

    ``streams`` (None: drawn from ``rng`` once the background is drawn) seeds the
    sampling estimators row by row; ``stacklevel`` is that of the user's call.
    """
    game = _game(request, masker=masker, background=background, algorithm=algorithm,
                 target=target, response_method=response_method, feature_names=feature_names,
                 interactions=interactions, index=index, budget_given=n_samples is not None
                 or n_permutations is not None, random_state=random_state, rng=rng,
                 draw_background=draw_background, stacklevel=stacklevel, groups=groups,
                 dependence=dependence, hf_tokenizer=hf_tokenizer, players=players,
                 streams=streams)
    if streams is None:  # (a conditional game drew them after its background)
        streams = getattr(getattr(game, "inner", game), "streams", None) or RowStreams.draw(rng)
    options = request.options
    estimator, algorithm, budget = choose_estimator(game, algorithm, n_samples, n_permutations,
                                              streams, interactions=interactions,
                                              n_threads=options.threads, index=index,
                                              stacklevel=stacklevel - 1, stop=stop)
    estimator = with_monte_carlo_error(estimator, game)
    if algorithm in ("permutation", "kernel") and stop is not None:
        stop = _with_cap(stop, game.n_players)
    else:
        stop = None
    plan = ShapleyPlan(game, estimator)
    if isinstance(game, RemovalGame):  # every output of the text's / image's model
        return _explain_outputs(game.model, options, game, estimator, algorithm, budget,
                                index, streams, stop, stacklevel=stacklevel + 1,
                                interactions=interactions)
    if isinstance(game.inner if isinstance(game, GroupGame) else game, InterventionalGame):
        if game.value_function != "conditional":  # (its rows are draws, not background)
                _warn_if_costly(plan, game.n_explained, game.background.shape[0],
                            game.diagnostics["background"],
                            tree=tree_ensemble_name(request.raw_model) is not None,
                            stacklevel=stacklevel - 1)
        return _explain_outputs(request.model, options, game, estimator, algorithm, budget,
                                index, streams, stop, stacklevel=stacklevel + 1,
                                interactions=interactions)
    # a tree ensemble: every output the game asks for, from one pass over the trees
    tree = getattr(game, "inner", game)
    (ests,) = run(None, [plan], options, desc=f"shapley ({algorithm})")
    subjects, diagnostics = tree.subjects, tree.output_diagnostics
    if tree is not game:  # groups: the players' subject, each output's name
        subjects = [game.subject._replace(output=s.output) for s in subjects]
        diagnostics = [{**d, "groups": game.diagnostics["groups"]} for d in diagnostics]
    parts = [_result(game, estimator, est, algorithm, budget, index, subject=subject,
                     diagnostics=diags)
             for est, subject, diags in zip(ests, subjects, diagnostics)]
    return parts[0] if tree.labels is None else Attributions.stack(parts, tree.labels)


def _explain_outputs(model, options, game, estimator, algorithm, budget, index, streams, stop,
                     *, stacklevel, interactions=False):
    """An interventional game's values for every output of the model in one pass.

    Each output gets its own game and estimator on the same background and row
    streams, so its coalitions (and numbers) are those of its single-output
    call; :func:`~modellens.engine.run_outputs` evaluates their rows once.
    """
    made: list = []

    def plans_for(one):
        # (a model whose answer named its one output is planned again under that name)
        if one is game.model and game.subject.output == one.output_name:
            g, e = game, estimator
        else:
            g = getattr(game, "inner", game).with_model(one)
            if isinstance(game, GroupGame):
                g = game.over(g)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ModellensWarning)  # said once, for output 0
                e = choose_estimator(g, algorithm, budget if algorithm == "kernel" else None,
                                     budget if algorithm == "permutation" else None, streams,
                                     interactions=interactions, n_threads=1, index=index,
                                     stacklevel=2, stop=stop)[0]
            e = with_monte_carlo_error(e, g)
        made.append((g, e))
        return [ShapleyPlan(g, e)]

    per_output = run_outputs(model, plans_for, options,
                             desc=f"shapley ({algorithm})")
    made = made[-len(per_output):]
    estimates = [est for (est,) in per_output]
    converged = None
    if stop is not None:
        def one_round(rows, more):
            grown = iter(made)

            def round_plans(one):
                g, e = next(grown)  # the outputs come in order, as in the first pass
                return [GrowPlan(g, e, rows, more)]

            return [est for (est,) in run_outputs(model, round_plans, options,
                                                  desc=f"shapley ({algorithm})")]

        estimates, converged = _keep_drawing(stop, [e for _, e in made], estimates, one_round,
                                             stacklevel=stacklevel)
    parts = [_result(g, e, est, algorithm, budget, index, stop, converged)
             for (g, e), est in zip(made, estimates)]
    if len(parts) == 1:
        return parts[0]
    for part in parts:  # the model's rows were evaluated once for every output
        part.diagnostics["n_model_rows"] = model.n_rows
    return Attributions.stack(parts, model.output_labels)


def _keep_drawing(stop, estimators, estimates, one_round, *, stacklevel):
    """The stopping rule's further rounds, when the estimator can draw more."""
    if not all(hasattr(e, "grow") for e in estimators):  # one player: exact already
        return estimates, np.ones(len(estimates[0].values), dtype=bool)
    return run_until_converged(stop, estimators, estimates, one_round, stacklevel=stacklevel)
