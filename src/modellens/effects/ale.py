"""Accumulated local effects (ALE): first order, second order, categorical."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._validation import InvalidParameterError, check_choice, check_int, check_level
from ..engine import Plan, open_request
from ..typing import BinsSpec, DataLike, FeatureSpec, ModelLike, TargetSpec
from ._ale_plans import FeaturePlan, PairPlan
from ._design import Axis, ale_axes, ale_rows
from ._facts import facts_of
from ._grid import DEFAULT_POINTS, check_spec_keys
from ._tree_ale import tree_ale
from ._tree_ice import count_model_rows
from .binning import EMPTY_BINS
from .result import Effects

__all__ = ["ale"]



def ale(model: ModelLike, X: DataLike, features: FeatureSpec = None, *,
        bins: BinsSpec = DEFAULT_POINTS, max_discrete: int = 10, confidence: float = 0.95,
        empty_bins: str = "zero", target: TargetSpec = None, response_method: str = "auto",
        feature_names: Sequence[str] | None = None, chunk_size: int | None = None,
        n_jobs: int | None = None, progress: bool | None = None) -> Effects:
    r"""How does the prediction change, on average, as a feature moves within its data?

    Accumulated local effects (ALE) cut a feature's range into bins, measure
    how much the prediction changes across each bin for the rows inside it,
    and add those changes up.  Because every change is measured on rows that
    really have values in that bin, ALE stays inside the data: it is the effect
    to trust when features are correlated, where partial dependence
    extrapolates and M-plots mix effects.  Categorical features are handled as
    ordered levels; a pair ``(a, b)`` gives the pure two-feature interaction
    (second order).  A confidence band shows the sampling error of the curve.

    Parameters
    ----------
    model, X, target, response_method, feature_names, chunk_size, n_jobs, progress
        As in :func:`modellens.pdp`; ``X`` holds the points whose local
        effects are averaged.  Dask data (out of core): the design step of
        data in memory (a feature of at most ``max_discrete`` values is
        discrete), other numeric features binned at quantile edges from
        Dask's approximate quantiles (within about 0.1% of the data of their
        exact place; exact, from the values' counts, for a feature of at most
        256 distinct values); categorical and text features are ordered as in memory from
        per-level statistics merged over the partitions; pairs too;
        ``feature_values`` a sample of 10,000.
    features : name, index, or list of them, optional
        Features to explain (all when None); a pair ``(a, b)`` in the list
        gives a second-order effect.
    bins : int, array-like or dict, default=20
        Number of quantile bins ``K``, or an array of bin edges (strictly
        increasing; points outside them are left out with a warning), or a
        dict mapping features (or pairs) to either; a pair may take a tuple of
        two specifications.  Categorical and discrete features ignore an int.
    max_discrete : int, default=10
        Numeric features with at most this many distinct values are treated
        as ordered levels (0 turns this off).
    confidence : float, default=0.95
        Level of the confidence band of first-order curves.
    empty_bins : {"zero", "interpolate"}, default="zero"
        Explicit edges can leave a bin without data, which has no local
        effect to average: ``"zero"`` takes its effect as 0 (the curve is flat
        across it, as the ALE reference does), ``"interpolate"`` gives it the
        slope interpolated from the nearest bins with data.  Either way a
        warning counts the empty bins.  (Quantile bins are never empty.)

    Returns
    -------
    Effects
        One :class:`Effect` with ``method="ale"`` per requested feature.
        First order: ``grid`` holds the bin edges (the levels, in their ALE
        order, for level features), ``values`` the centred curve there,
        ``counts`` the points per bin (per level), ``std`` the standard
        deviation of the local effects per bin (per step), ``bins`` the
        per-bin (per-step) counts, spreads and mean effects, and ``band`` the
        confidence band from the variance of the centred curve (bins taken as
        independent).  Second order: ``values`` has shape ``(G_a, G_b)``,
        ``counts`` the points per unit of data (bin or level pair), ``std``
        and ``bins`` the spread and count of the four-corner differences per
        cell, and ``empty_cells`` the cells without data.

    See Also
    --------
    dale : ALE from the model's gradient: every feature in one pass, bins chosen later.
    pdp : Partial dependence and ICE curves.
    mplot : The mean prediction near each value.

    Notes
    -----
    **First order, numeric feature** :math:`S`.  The bin edges
    :math:`z_0 < \dots < z_K` are the minimum and the type-1 quantiles at
    :math:`k / K` (ties collapsed, so repeated values give fewer bins); a
    point with :math:`x_S \in (z_{k-1}, z_k]` (the first bin closed) lies in
    bin :math:`k`.  With :math:`n_k` points in bin :math:`k`,

    .. math::
        \hat{\tilde f}(z_k) = \sum_{j=1}^{k} \frac{1}{n_j}
            \sum_{i:\, x^{(i)}_S \in (z_{j-1}, z_j]}
            \left[f(z_j, x^{(i)}_{-S}) - f(z_{j-1}, x^{(i)}_{-S})\right],

    and the curve is centred by the count-weighted mean of the bin midpoints,
    :math:`\hat f(z_k) = \hat{\tilde f}(z_k) - \sum_j n_j
    (\hat{\tilde f}(z_{j-1}) + \hat{\tilde f}(z_j)) / (2n)`.

    **Levels** (categorical features, and numeric ones with at most
    ``max_discrete`` distinct values).  Levels :math:`v_0, \dots, v_{L-1}` are
    taken in order: an ordered categorical's own order, the sorted values of a
    discrete numeric feature, otherwise the order of a 1-D classical MDS of the
    levels' distances in the other features (Kolmogorov-Smirnov for numeric
    ones, total variation for categorical ones).  The step :math:`v_t \to
    v_{t+1}` is the mean of :math:`f(v_{t+1}, x_{-S}) - f(v_t, x_{-S})` over
    the points at either level; steps are accumulated from 0 and centred by the
    level frequencies.

    **Second order, pair** :math:`(a, b)`.  Each point contributes to its cell
    the four-corner difference

    .. math::
        \Delta^{(i)} = f(z^a_{k}, z^b_{l}, x^{(i)}_{-ab}) - f(z^a_{k}, z^b_{l-1}, \cdot)
                     - f(z^a_{k-1}, z^b_{l}, \cdot) + f(z^a_{k-1}, z^b_{l-1}, \cdot);

    cell means are accumulated in both directions, then the first-order effects
    of the accumulated surface and a constant are removed so that what is left
    is the pure interaction (Apley & Zhu 2020, eqs. 13-16).  A cell without
    data takes the mean of its nearest non-empty cell (distance between cell
    centres, each axis scaled by its range; equally near cells are averaged)
    and is flagged in ``Effect.empty_cells``.  A level axis steps
    between adjacent levels instead of bin edges.

    Every model row of the request (all features, all bins) is planned first
    and evaluated in one chunked stream: :math:`2n` rows per numeric feature,
    about :math:`2n` per level feature plus the data rows once, :math:`4n`
    per numeric pair.  Rows with a missing value in an explained feature are
    left out of its bins, with a warning that counts them.  Each feature's
    predictions are reduced to its bin statistics as soon as they are all in,
    so memory holds the rows of about one feature at a time.  For a tree
    ensemble in memory the first-order local effects come from its trees
    instead, exactly and with no model rows beyond the agreement check's (16
    rows), where that is cheaper (the rule is in ``modellens.effects._tree_ale``);
    such effects say so in ``extra["evaluated"]``, ``extra["trees_refused"]`` says
    why the trees, when tried, could not serve, and ``extra["n_model_rows"]`` the
    rows the model answered (the check's included).

    References
    ----------
    .. [1] Apley, D. W. & Zhu, J. (2020). Visualizing the effects of predictor
       variables in black box supervised learning models. *JRSS B* 82(4),
       1059-1086.
    .. [2] Molnar, C. (2022). *Interpretable Machine Learning*, 2nd ed.,
       chapter "Accumulated Local Effects (ALE) Plot".

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> effects = ml.ale(lambda A: 2 * A[:, 0] + A[:, 1] ** 2, X, bins=5)
    >>> e = effects["x0"]
    >>> bool(np.allclose(np.diff(e.values), 2 * np.diff(e.grid)))  # slope 2 recovered
    True
    >>> e.bins.counts
    array([200, 200, 200, 200, 200])
    >>> e.band.level
    0.95

    Two correlated features, a model that uses only ``x1``: ALE gives ``x0``
    no effect (an M-plot would show it rising with ``x1``), and a pair gives
    the second-order effect on a grid of bin edges:

    >>> rng = np.random.default_rng(0)
    >>> x0 = rng.normal(size=1000)
    >>> X = np.column_stack([x0, x0 + 0.3 * rng.normal(size=1000)])
    >>> effects = ml.ale(lambda A: A[:, 1], X, ["x0", "x1", ("x0", "x1")], bins=5)
    >>> print(np.round(effects["x0"].values, 6))
    [0. 0. 0. 0. 0. 0.]
    >>> effects[("x0", "x1")].values.shape
    (6, 6)
    """
    _check_options(bins, max_discrete, confidence)
    check_choice(empty_bins, "empty_bins", EMPTY_BINS)
    request = open_request(model, X, features, target=target, response_method=response_method,
                           feature_names=feature_names, chunk_size=chunk_size, n_jobs=n_jobs,
                           progress=progress, several=True)
    dataset, feats = request.dataset, request.features
    check_spec_keys(bins, dataset, feats, "bins")
    designs = ale_axes(facts_of(request), dataset, feats, bins, max_discrete)
    out_of_core = request.out_of_core
    if not out_of_core:
        designs = ale_rows(designs, dataset)

    # first-order axes, each once: the features asked alone and the two axes of every pair
    # (their main effects give the pair's total effect; one asked alone is not evaluated twice)
    singles: list[Axis] = []
    layout = []
    place: dict[int, int] = {}  # id of an axis -> its position in singles
    for design in designs:
        parts = design if isinstance(design, tuple) else (design,)
        for ax in parts:
            if id(ax) not in place:
                place[id(ax)] = len(singles)
                singles.append(ax)
        layout.append([place[id(ax)] for ax in parts])
    pairs = [d for d in designs if isinstance(d, tuple)]
    trees = None if out_of_core else tree_ale(request, singles)  # first order from the trees?

    def plans_for(values, part, model):
        plans: list[Plan] = []
        output = model.output_name
        for a, b in pairs:
            if out_of_core:
                a, b = a.on(values), b.on(values)
            plans.append(PairPlan(values, a, b, output=output, strict=not out_of_core))
        for design in singles:
            axis = design.on(values) if out_of_core else design
            plans.append(FeaturePlan(values, axis, output=output, confidence=confidence,
                                      empty_bins=empty_bins, keep_summary=out_of_core))
        return plans if trees is None else trees.plans(plans, model)

    def assemble(results):
        pair_effects, single_effects = iter(results[:len(pairs)]), results[len(pairs):]
        out = []
        for design, units in zip(designs, layout):
            if isinstance(design, tuple):
                effect = next(pair_effects)
                # the main effects on the pair's own axes (same edges or levels): the total
                # effect is their sum plus the interaction, on the pair's grid
                effect.extra["main_effects"] = tuple(
                    np.asarray(single_effects[k].values, dtype=float) for k in units)
                out.append(effect)
            else:
                out.append(single_effects[units[0]])
        return out

    effects = Effects.stack([assemble(results) for results in
                             request.run_outputs(plans_for, desc="ale")], request.output_labels)
    if trees is not None:  # the trees were asked: the rows of their check are the model's too
        count_model_rows(effects, request)
    return effects


# --------------------------------------------------------------------- input
def _check_options(bins, max_discrete, confidence):
    if isinstance(bins, str):
        raise InvalidParameterError(
            f"bins={bins!r} is not available for ale; pass an int (quantile bins) or an array "
            "of bin edges ('auto' belongs to dale).")
    if isinstance(bins, bool):
        raise InvalidParameterError("bins must be an int, an array of bin edges or a dict, "
                                    "not a bool.")
    check_int(max_discrete, "max_discrete", low=0, what="a non-negative int")
    check_level(confidence)
