"""Regional effects: where a feature's effect differs, with the evidence for each split."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from .._validation import (InvalidParameterError, ModellensWarning, check_choice, check_int,
                           check_random_state)
from ..data import resolve_features
from ..engine import open_request
from ..typing import BinsSpec, DataLike, FeatureSpec, GridSpec, ModelLike, RandomStateLike, \
    TargetSpec
from ._grid import DEFAULT_POINTS
from ._regions_grow import ALPHA, N_BOOTSTRAP, Grower
from ._regions_local import (ale_locals_out_of_core, dale_locals_out_of_core, local_effects,
                             pdp_locals_out_of_core)
from ._regions_search import N_THRESHOLDS, Search
from .regions_result import RegionNode, Regions

__all__ = ["regions", "ALPHA", "N_THRESHOLDS", "N_BOOTSTRAP", "MIN_REGION_ROWS",
           "MIN_REGION_SHARE"]

#: A region holds at least this many rows, and at least MIN_REGION_SHARE of the data.
MIN_REGION_ROWS = 20
MIN_REGION_SHARE = 0.05


def regions(model: ModelLike, X: DataLike, features: FeatureSpec = None, *,
            effect: str = "ale", max_depth: int = 2, min_gain: float = 0.1,
            splits: FeatureSpec = None, bins: BinsSpec = DEFAULT_POINTS,
            grid: GridSpec = DEFAULT_POINTS, n_resamples: int = 100,
            require_heldout: bool = True, random_state: RandomStateLike = None,
            target: TargetSpec = None, response_method: str = "auto",
            feature_names: Sequence[str] | None = None, chunk_size: int | None = None,
            n_jobs: int | None = None, progress: bool | None = None,
            method: str | None = None, n_permutations: int | None = None) -> Regions:
    r"""Where does a feature's effect differ, and on which rows?

    A global effect averages the local effects of the rows; when the rows
    disagree (the effect of ``hour`` differs between working days and
    holidays), the average hides it.  For each feature of interest this
    grows a small tree of splits on the *other* features that most reduce
    the heterogeneity of the feature's local effects, tests each split, and
    gives the feature's effect in every region.  Every candidate split
    re-aggregates the local effects that the global effect evaluated: no
    model call beyond the global effect's own rows.

    Parameters
    ----------
    model, X, target, response_method, feature_names, chunk_size, n_jobs, progress
        As in :func:`modellens.ale`.  Dask data take every effect: the
        bins or grid come from the whole table as the out-of-core effects'
        do (exact ends; the exact edges or values of a feature of few
        values; Dask's approximate quantiles for ALE's bins otherwise, while
        PD's grid and DALE's bins are exact), each partition evaluates its
        rows' local effects where it lies, and the encoded rows and local
        effects come to this process for the split search; with the same
        bins the result equals the in-memory call's.
        With ``target=None`` a model of several outputs (every class of a
        classifier, the columns of an ``(n, k)`` answer) is explained for
        every output at once: each feature gets one split tree whose
        heterogeneity is summed over the outputs (a split must serve the
        outputs together), and each region's effect holds every output
        (``Effect.for_output``); ``target=`` picks one output and splits
        for it alone.
    features : name, index, or list of them, optional
        Features of interest (all when None).
    effect : {"ale", "dale", "pdp"}, default="ale"
        Whose local effects: ALE's finite differences across each row's bin,
        DALE's derivatives at the rows (numeric features only), or the
        centred ICE curves of partial dependence.
    max_depth : int, default=2
        Most splits from the whole data to a region (at most
        ``2 ** max_depth`` regions per feature).
    min_gain : float in (0, 1), default=0.1
        Least share of a region's heterogeneity a split must remove.
    splits : name, index, or list of them, optional
        Features that may split (default: every feature but the one of
        interest).
    bins : int or array-like, default=20
        ALE / DALE bins, as in :func:`modellens.ale`; the regional curves use
        the global bins.
    grid : int or array-like, default=20
        PD grid, as in :func:`modellens.pdp`.
    n_resamples : int, default=100
        Permutations behind each split's p-value; 0 skips the test (``p_value``
        is then NaN and plays no part in accepting a split).
    require_heldout : bool, default=True
        Accept a split only when it holds on held-out rows (see the rule in
        the Notes).  False accepts on ``min_gain`` and the p-value alone, as
        before this option existed; the split is still flagged.
    random_state : None, int or Generator
        Seeds the permutations, bootstrap resamples and held-out halves.
    method, n_permutations
        Deprecated names of ``effect`` and ``n_resamples`` (they warn with a
        ``DeprecationWarning`` and go in the next minor version).

    Returns
    -------
    Regions
        ``.splits`` (one row per accepted split, with its evidence and its
        ``flags``),
        ``regions[feature]`` (the tree, a ``RegionNode``),
        ``.effects(feature)`` (one :class:`Effect` per region) and
        ``.plot(feature)``.

    See Also
    --------
    ale : The global ALE whose local effects the regions re-aggregate.
    pdp : Partial dependence with ICE curves (``ice=True``).

    Notes
    -----
    **Heterogeneity.**  Each feature of interest has local effects
    :math:`\ell_o` in bins (grid points) :math:`b(o)`: one per row (ALE's
    :math:`f(z_k, x_{-S}) - f(z_{k-1}, x_{-S})`, DALE's :math:`\partial f /
    \partial x_S`), two for an inner level of a categorical feature (the
    steps up and down), or one per grid point for PD (the row's ICE curve
    minus its own mean).  The heterogeneity of a region :math:`R` is the mean
    squared deviation from the region's own bin means,

    .. math::
        H(R) = \frac{1}{|R|} \sum_b \sum_{o \in R,\, b(o) = b}
               (\ell_o - \bar\ell_{R,b})^2 ,

    the count-weighted within-bin variance.  A split of :math:`R` into
    :math:`L, Rr` has gain :math:`1 - (|L| H(L) + |Rr| H(Rr)) / (|R| H(R))`.

    **Candidates.**  A numeric splitting feature is cut at its quantiles
    (1/20, ..., 19/20 of the region's rows; ``x <= t`` goes left, missing
    values right), so thresholds sit where the data are; the best cut is then
    refined to the best one at the region's values between its two
    neighbouring quantiles.  A categorical or
    boolean one has its levels ordered by the mean deviation of their
    rows' local effects from the bin means, and is cut along that order
    (left: a subset of levels).  Both are scored at once from cumulative
    sums of per-bin counts, sums and squares: :math:`O(n + C \cdot B)` per
    feature.  A region keeps at least ``max(20, 5% of the rows)`` rows.

    **Evidence.**  ``p_value``: the rows' values of the splitting features
    are permuted together (within each bin of the feature of interest, so
    that its dependence on them is kept) ``n_resamples`` times and the
    best gain over *every* candidate feature and threshold is found again;
    :math:`p = (1 + \#\{\text{perm} \ge \text{observed}\}) / (1 +
    n_{perm})`.  Taking the best over all features makes the test account
    for the search, so on a model without interactions :math:`p < 0.05`
    happens in about 5% of data sets.  ``stability``: the share of 30
    bootstrap resamples of the region whose best split is on the same
    feature, with a threshold within one quantile step (the same level set).
    ``heldout_gain``: the split chosen on a random half of the rows (each
    side holding at least half of the least region size), its gain measured
    on the other half.

    **The rule.**  A split is accepted when (1) its gain is at least
    ``min_gain``, (2) :math:`p \le 0.05` (unless ``n_resamples=0``), and
    (3) with ``require_heldout=True`` (the default) its held-out gain is at
    least half of ``min_gain``: a split that removes heterogeneity only on
    the rows that chose it is noise the test did not catch.  Where the
    evidence disagrees, the split carries ``flags`` (in ``.splits``, its
    ``repr`` and the plot's title): ``"held-out gain near zero"`` (held-out
    gain below half of ``min_gain``; with ``require_heldout=False`` such a
    split may be accepted, flagged) and ``"low stability"`` (chosen again in
    fewer than half of the bootstrap resamples: the effect differs, but where
    to cut is poorly determined, as for a modifier acting smoothly).  A split
    not accepted is kept as the leaf's ``candidate``, its ``reason`` saying
    which part of the rule it failed.

    References
    ----------
    .. [1] Herbinger, J., Wright, M. N., Nagler, T., Bischl, B. & Casalicchio, G.
       (2024). Decomposing global feature effects based on feature interactions
       (GADGET). *JMLR* 25(381), 1-65.
    .. [2] Gkolemis, V. et al. (2023). Fast and accurate regional effect plots
       for automated tabular data analysis (effector).

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(1000, 3))
    >>> f = lambda A: 3 * A[:, 0] * (A[:, 2] > 0) + A[:, 1]
    >>> r = ml.regions(f, X, "x0", random_state=0)
    >>> s = r.splits.iloc[0]
    >>> s.split_feature, bool(abs(s.threshold) < 0.1), bool(s.p_value < 0.05)
    ('x2', True, True)
    >>> len(r.effects("x0"))
    2
    """
    effect = _renamed(effect, method, "ale", "effect", "method")
    n_resamples = _renamed(n_resamples, n_permutations, 100, "n_resamples", "n_permutations")
    check_choice(effect, "effect", ("ale", "dale", "pdp"))
    check_int(max_depth, "max_depth", low=1, what="a positive int (the most splits per path)")
    if isinstance(min_gain, bool) or not isinstance(min_gain, (int, float, np.floating)) \
            or not 0 < float(min_gain) < 1:
        raise InvalidParameterError(
            f"min_gain must be a share in (0, 1) of a region's heterogeneity that a split must "
            f"remove, got {min_gain!r}.")
    check_int(n_resamples, "n_resamples", low=0, what="a non-negative int")
    if not isinstance(require_heldout, (bool, np.bool_)):
        raise InvalidParameterError(f"require_heldout must be True or False, got "
                                    f"{require_heldout!r}.")
    rng = check_random_state(random_state)
    request = open_request(model, X, features, target=target, response_method=response_method,
                           feature_names=feature_names, chunk_size=chunk_size, n_jobs=n_jobs,
                           progress=progress, allow_pairs=False, several=True,
                           # wrapped where read (ALE, DALE out of core): PD and DALE in memory
                           # are the public calls, which wrap (and ask) the model themselves
                           wrap_model=False)
    dataset = request.dataset
    feats = _numeric_for_dale(dataset, request.features) \
        if effect == "dale" and features is None else request.features
    allowed = None if splits is None else resolve_features(dataset, splits, allow_pairs=False)
    names = [dataset.columns[j].name for j in feats]
    # a feature asked by name may not be named to split itself; with features=None every
    # feature is asked, and each simply skips itself among the splitting features
    for j in feats:
        if allowed is not None and j in allowed and features is not None:
            raise InvalidParameterError(
                f"feature {dataset.columns[j].name!r} cannot split its own regions: remove it "
                "from splits= (a feature's effect differs by the other features).")
    n = int(request.table.offsets()[-1]) if request.out_of_core else dataset.n_rows
    min_rows = max(MIN_REGION_ROWS, math.ceil(MIN_REGION_SHARE * n))
    if n < 2 * min_rows:
        raise InvalidParameterError(
            f"X has {n} rows; two regions need at least {2 * min_rows} (each at least "
            f"{MIN_REGION_ROWS} rows and {MIN_REGION_SHARE:.0%} of the data). Pass more rows.")

    options = dict(target=target, response_method=response_method,
                   feature_names=feature_names, chunk_size=chunk_size, n_jobs=n_jobs,
                   progress=progress)
    if request.out_of_core:
        # the rows' encoded values come here for the split search; the model rows are
        # evaluated partition by partition
        dataset, locals_ = _locals_out_of_core(effect, request, model, X, feats, names,
                                               bins=bins, grid=grid, options=options)
    else:
        locals_ = local_effects(effect, request, model, X, feats, names, bins=bins,
                                grid=grid, options=options)
    trees, regional, global_effects = {}, {}, {}
    for j, name, local in zip(feats, names, locals_):
        cols = [c for c in (range(dataset.n_features) if allowed is None else allowed) if c != j]
        if cols:
            search = Search(local, dataset, cols, min_rows)
            grower = Grower(search, dataset, effect=effect, max_depth=max_depth,
                            min_gain=float(min_gain), n_resamples=int(n_resamples),
                            require_heldout=bool(require_heldout), rng=rng)
            root = grower.grow(np.arange(n), depth=0, path=())
        else:  # features=None with splits= naming only this feature
            root = RegionNode(region="all", conditions=(), depth=0, rows=n,
                              reason="no other feature may split it")
            root.row_index = np.arange(n)
        trees[name] = root
        global_effects[name] = local.global_effect
        regional[name] = {leaf.region: local.regional(leaf.row_index)
                          for leaf in root.leaves()}
        for leaf in root.leaves():
            leaf.row_index = None  # positions are not part of the result
    return Regions(effect=effect, trees=trees, regional=regional, global_effects=global_effects,
                   n_rows=n, min_region_rows=min_rows, n_resamples=int(n_resamples),
                   require_heldout=bool(require_heldout))


def _renamed(value, old_value, default, name, old_name):
    """The value of a renamed keyword: the new one, or the old one with its deprecation warning."""
    if old_value is None:
        return value
    if value != default:
        raise InvalidParameterError(f"pass {name}= only; {old_name}= is its deprecated old name.")
    warnings.warn(f"regions({old_name}=...) is renamed {name}=; the old name goes in the next "
                  "minor version.", DeprecationWarning, stacklevel=3)
    return old_value


def _numeric_for_dale(dataset, feats):
    """Every feature asked by default, less the categorical or boolean ones DALE cannot take."""
    levels = [j for j in feats
              if dataset.columns[j].is_categorical or dataset.columns[j].is_boolean]
    if levels:
        warnings.warn(f"effect='dale' skips the categorical or boolean feature(s) "
                      f"{[dataset.columns[j].name for j in levels]} as features of "
                      "interest (they may still split); use effect='ale' for them.",
                      ModellensWarning, stacklevel=3)
        feats = [j for j in feats if j not in levels]
        if not feats:
            raise InvalidParameterError("X has no numeric feature for effect='dale'; use "
                                        "effect='ale'.")
    return feats


def _locals_out_of_core(effect, request, model, X, feats, names, *, bins, grid, options):
    """Dask data: the gathered rows and the features' local effects, partition by partition."""
    if effect == "ale":
        return ale_locals_out_of_core(request, feats, bins)
    if effect == "dale":
        return dale_locals_out_of_core(request, feats, names, bins)
    # every row's ICE curve (out-of-core PD with a sample of all the rows: the in-memory
    # grid, from the same column summaries)
    return pdp_locals_out_of_core(request, model, X, feats, names, grid,
                                  dict(options, sample=1.0))
