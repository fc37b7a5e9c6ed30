"""Regional effects: where a feature's effect differs, with the evidence for each split."""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from scipy import sparse

from .._validation import (InvalidParameterError, ModellensWarning, check_choice, check_int,
                           check_random_state)
from ..data import Dataset, resolve_features
from ..engine import open_request, run_outputs, summarise_outputs
from ..typing import BinsSpec, DataLike, FeatureSpec, GridSpec, ModelLike, RandomStateLike, \
    TargetSpec
from ._grid import DEFAULT_POINTS, grid_spec
from .ale import _AxisCache, _FeaturePlan, _OutOfCoreAxes
from .binning import bin_index
from ._derivatives import DerivativePlan, feature_scale
from .dale import _check_bins, _dale_effects
from .dale import _summarise as _dale_summarise
from .dale import DaleEffect, dale
from .pdp import pdp
from .regions_result import RegionNode, Regions, Split
from .result import Effect, Effects

__all__ = ["regions", "ALPHA", "N_THRESHOLDS", "N_BOOTSTRAP", "MIN_REGION_ROWS",
           "MIN_REGION_SHARE"]

#: Level of the permutation test a split must pass (with ``n_permutations > 0``).
ALPHA = 0.05
#: Candidate thresholds of a numeric splitting feature: its quantiles at 1/20, ..., 19/20.
N_THRESHOLDS = 20
#: Bootstrap resamples behind a split's stability.
N_BOOTSTRAP = 30
#: A region holds at least this many rows, and at least MIN_REGION_SHARE of the data.
MIN_REGION_ROWS = 20
MIN_REGION_SHARE = 0.05
#: Stop the permutation test once its decision is known (see ``_Grower._p_value``).
_EARLY_STOP = True
_FIRST_PERMUTATIONS = 20
#: Heterogeneity below this share of the local effects' mean square is taken as none.
_FLAT = 1e-12


def regions(model: ModelLike, X: DataLike, features: FeatureSpec = None, *,
            method: str = "ale", max_depth: int = 2, min_gain: float = 0.1,
            splits: FeatureSpec = None, bins: BinsSpec = DEFAULT_POINTS,
            grid: GridSpec = DEFAULT_POINTS, n_permutations: int = 100,
            random_state: RandomStateLike = None, target: TargetSpec = None,
            response_method: str = "auto", feature_names: Sequence[str] | None = None,
            chunk_size: int | None = None, n_jobs: int | None = None,
            progress: bool | None = None) -> Regions:
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
        As in :func:`modellens.ale`.  Dask data take every method: the
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
    method : {"ale", "dale", "pdp"}, default="ale"
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
    n_permutations : int, default=100
        Permutations behind each split's p-value; 0 skips the test (splits
        are then accepted on ``min_gain`` alone and ``p_value`` is NaN).
    random_state : None, int or Generator
        Seeds the permutations, bootstrap resamples and held-out halves.

    Returns
    -------
    Regions
        ``.splits`` (one row per accepted split, with its evidence),
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
    that its dependence on them is kept) ``n_permutations`` times and the
    best gain over *every* candidate feature and threshold is found again;
    :math:`p = (1 + \#\{\text{perm} \ge \text{observed}\}) / (1 +
    n_{perm})`.  Taking the best over all features makes the test account
    for the search, so on a model without interactions :math:`p < 0.05`
    happens in about 5% of data sets.  ``stability``: the share of 30
    bootstrap resamples of the region whose best split is on the same
    feature, with a threshold within one quantile step (the same level set).
    ``heldout_gain``: the split chosen on a random half of the rows, its
    gain measured on the other half.  A split is accepted when its gain is at
    least ``min_gain`` and :math:`p \le 0.05`.

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
    check_choice(method, "method", ("ale", "dale", "pdp"))
    check_int(max_depth, "max_depth", low=1, what="a positive int (the most splits per path)")
    if isinstance(min_gain, bool) or not isinstance(min_gain, (int, float, np.floating)) \
            or not 0 < float(min_gain) < 1:
        raise InvalidParameterError(
            f"min_gain must be a share in (0, 1) of a region's heterogeneity that a split must "
            f"remove, got {min_gain!r}.")
    check_int(n_permutations, "n_permutations", low=0, what="a non-negative int")
    rng = check_random_state(random_state)
    request = open_request(model, X, features, target=target, response_method=response_method,
                           feature_names=feature_names, chunk_size=chunk_size, n_jobs=n_jobs,
                           progress=progress, allow_pairs=False, several=True)
    dataset = request.dataset
    feats = request.features
    if method == "dale" and features is None:
        levels = [j for j in feats
                  if dataset.columns[j].is_categorical or dataset.columns[j].is_boolean]
        if levels:
            warnings.warn(f"method='dale' skips the categorical or boolean feature(s) "
                          f"{[dataset.columns[j].name for j in levels]} as features of "
                          "interest (they may still split); use method='ale' for them.",
                          ModellensWarning, stacklevel=2)
            feats = [j for j in feats if j not in levels]
            if not feats:
                raise InvalidParameterError("X has no numeric feature for method='dale'; use "
                                            "method='ale'.")
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

    if request.out_of_core and method == "ale":
        # the rows' encoded values come here for the split search; the model rows are
        # evaluated partition by partition
        dataset, locals_ = _ale_locals_out_of_core(request, feats, bins)
    elif request.out_of_core and method == "dale":
        dataset, locals_ = _dale_locals_out_of_core(request, feats, names, bins)
    elif request.out_of_core:
        # every row's ICE curve, partition by partition (out-of-core PD with a sample of
        # all the rows: the in-memory grid, from the same column summaries)
        parts = request.table.map(None, _encoded_rows)
        dataset = _gathered(request.dataset, [p for p in parts])
        locals_ = _pdp_locals(dataset, model, X, feats, names, grid, dict(
            target=target, response_method=response_method, feature_names=feature_names,
            chunk_size=chunk_size, n_jobs=n_jobs, progress=progress, sample=1.0))
    else:
        locals_ = _local_effects(method, request, model, X, feats, names, bins=bins,
                                 grid=grid, options=dict(
                                     target=target, response_method=response_method,
                                     feature_names=feature_names, chunk_size=chunk_size,
                                     n_jobs=n_jobs, progress=progress))
    trees, regional, global_effects = {}, {}, {}
    for j, name, local in zip(feats, names, locals_):
        cols = [c for c in (range(dataset.n_features) if allowed is None else allowed) if c != j]
        if cols:
            search = _Search(local, dataset, cols, min_rows)
            grower = _Grower(search, dataset, method=method, max_depth=max_depth,
                             min_gain=float(min_gain),
                             n_permutations=int(n_permutations), rng=rng)
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
    return Regions(method=method, trees=trees, regional=regional, global_effects=global_effects,
                   n_rows=n, min_region_rows=min_rows, n_permutations=int(n_permutations))


# ------------------------------------------------------------ local effects
@dataclass
class _Local:
    """One feature's local effects, as observations: their row, bin and value.

    ``values`` has shape ``(m, k)`` (one column per output), ``strata``
    each data row's unit of the feature of interest (rows are permuted within
    it), ``regional`` builds the effect on some rows from kept answers.
    """

    rows: np.ndarray
    cell: np.ndarray
    values: np.ndarray
    n_cells: int
    strata: np.ndarray
    global_effect: Effect
    build: object

    def regional(self, rows) -> Effect:
        with warnings.catch_warnings():
            # a region may leave some global bins empty (flat there) or thin: expected
            warnings.simplefilter("ignore", ModellensWarning)
            return self.build(np.sort(np.asarray(rows)))  # type: ignore[operator]


def _local_effects(method, request, model, X, feats, names, *, bins, grid, options):
    dataset = request.dataset
    if method == "ale":
        return _ale_locals(request, feats, bins)
    if method == "dale":
        return _dale_locals(dataset, model, X, feats, names, bins, options)
    return _pdp_locals(dataset, model, X, feats, names, grid, options)


class _KeepingPlan(_FeaturePlan):
    """ALE's plan of one feature, keeping each row's local effect for the regions."""

    kept: np.ndarray | None = None

    def take_local(self, local):
        self.kept = np.array(local, dtype=float)
        super().take_local(local)


def _ale_locals(request, feats, bins):
    dataset = request.dataset
    axes = _AxisCache(dataset, 10)
    designs = [axes.get(j, grid_spec(bins, dataset, j)) for j in feats]
    made: list[list[_KeepingPlan]] = []

    def plans_for(values, part, model):
        made.append([_KeepingPlan(values, axis, output=model.output_name, confidence=0.95)
                     for axis in designs])
        return made[-1]

    per_output = request.run_outputs(plans_for, desc="regions (ale)")
    labels = request.output_labels
    # the plans of each output, in output order (an undetermined model's first try is dropped)
    made = made[len(made) - len(per_output):]
    globals_ = [Effect.stack(list(parts), labels) for parts in zip(*per_output)]
    return _ale_observations(dataset, designs, made, globals_, labels)


def _ale_locals_out_of_core(request, feats, bins):
    """Dask data: ALE's local effects of every row, computed partition by partition.

    The design (bin edges, discrete values, level orders) is the out-of-core
    ALE's, read from the whole table through ``engine/_design.py``'s column
    summaries and Dask's approximate quantiles.  Each partition runs the same
    keeping plans on its own rows, every output in one pass, and sends back
    its encoded rows and local effects; the client lays them out as the
    in-memory plans of the whole table would hold them, so the search, the
    tests and the regional curves are the in-memory code on the same numbers.
    Returns the gathered dataset and the features' local effects.
    """
    schema = request.dataset
    axes = _OutOfCoreAxes(request, bins, 10)
    designs = [axes.get(j, grid_spec(bins, schema, j)) for j in feats]
    model = request.model
    parts = request.table.map(model, _partition_locals, designs, request.table.local)
    if model.undetermined:  # told by the partitions' first answers (a partition of no rows: 1)
        model.settle_outputs(max(width for _, _, width, _ in parts),
                             names=_told_names(names for *_, names in parts))
    labels = request.output_labels
    dataset = _gathered(schema, [p[0] for p in parts])
    values = dataset.values
    offsets = np.cumsum([0] + [p[0].shape[0] for p in parts])
    whole = []
    for f, design in enumerate(designs):
        axis = design.on(values)
        axis.n_parts, axis.sample = 0, None
        axis.feature_values = dataset.observed_labels(axis.j)
        whole.append(axis)
    made = [[_KeepingPlan(values, axis, output=model.view(c).output_name
                          if model.n_outputs > 1 else model.output_name, confidence=0.95)
             for axis in whole] for c in range(model.n_outputs)]
    for f in range(len(designs)):
        key = _observation_keys(made[0][f])
        got = [(_observation_keys_of(rows, sign, offsets[i]), kept)
               for i, (_, observed, _, _) in enumerate(parts)
               for rows, sign, kept in [observed[f]]]
        part_keys = np.concatenate([k for k, _ in got])
        # the whole table's observation order, found among the partitions' (each key once)
        sorter = np.argsort(part_keys, kind="stable")
        order = sorter[np.searchsorted(part_keys, key, sorter=sorter)]
        for c, plans in enumerate(made):
            # (a partition of no rows asked an undetermined model nothing: one empty output)
            local = np.concatenate([kept[c] if c < len(kept) else np.zeros(0)
                                    for _, kept in got])
            plans[f].take_local(local[order])
    globals_ = [Effect.stack([plans[f].reduce() for plans in made], labels)
                for f in range(len(designs))]
    return dataset, _ale_observations(dataset, whole, made, globals_, labels)


def _encoded_rows(values, model, index):
    return values


def _gathered(schema, parts) -> Dataset:
    """The encoded rows of every partition, in order, as one in-memory dataset."""
    values = np.concatenate(parts) if parts else np.empty((0, len(schema.columns)))
    return Dataset(values, schema.columns, schema.is_frame, schema.column_labels)


def _observation_keys(plan) -> np.ndarray:
    """Each local effect of a plan named by its row and direction (a level axis steps both ways)."""
    rows = plan.axis.row_positions() if plan.sign is None else plan.rows
    return _observation_keys_of(rows, plan.sign, 0)


def _observation_keys_of(rows, sign, offset) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.int64) + int(offset)
    return 2 * rows + (0 if sign is None else (np.asarray(sign) > 0).astype(np.int64))


def _partition_locals(values, model, index, designs, options):
    """One partition's encoded rows, and each feature's ``(rows, sign, local effects by output)``.

    ``options``: the one Dask driver's engine options inside a partition.
    """

    made: list = []
    if getattr(model, "undetermined", False):
        # a model telling its outputs with its first answer settles on this partition's
        # copy: the partitions (and threads) sharing the object each learn it themselves
        model = copy.copy(model)

    def plans_for(one):
        made.append([_KeepingPlan(values, design.on(values), output=one.output_name,
                                  confidence=0.95) for design in designs])
        return made[-1]

    per_output = run_outputs(model, plans_for, options, desc="regions (ale, partition)")
    made = made[len(made) - len(per_output):]
    observed = []
    for f in range(len(designs)):
        plan = made[0][f]
        rows = plan.axis.row_positions() if plan.sign is None else plan.rows
        kept = [np.zeros(0) if p[f].kept is None else p[f].kept for p in made]
        observed.append((rows, plan.sign, kept))
    return values, observed, len(made), getattr(model, "answer_names", None)


def _ale_observations(dataset, designs, made, globals_, labels):
    """Each feature's :class:`_Local` from the keeping plans of every output."""
    out = []
    for f, axis in enumerate(designs):
        plans = [output_plans[f] for output_plans in made]
        plan = plans[0]  # every output's plan has the same rows, cells and signs
        obs_rows = axis.row_positions() if plan.sign is None else plan.rows
        local = np.column_stack([np.zeros(0) if p.kept is None else p.kept for p in plans])
        strata = axis.unit_of_rows()

        def build(rows, plans=plans, axis=axis):
            inside = np.zeros(axis.n_data, dtype=bool)
            inside[rows] = True
            positions = axis.row_positions()
            keep_units = inside[positions]
            sub = copy.copy(axis)
            sub.rows = positions[keep_units]
            sub.unit = axis.unit[keep_units]
            effects = []
            for plan in plans:
                sub_plan = _FeaturePlan(dataset.values, sub, output=plan.output,
                                        confidence=plan.confidence)
                if plan.kept is not None:
                    own = inside[plan.rows if plan.sign is not None else positions]
                    sub_plan.take_local(plan.kept[own])
                effects.append(sub_plan.reduce())
            return Effect.stack(effects, labels)

        out.append(_Local(np.asarray(obs_rows, dtype=np.intp), np.asarray(plan.cell, np.intp),
                          local, axis.n_cells, strata, globals_[f], build))
    return out


def _check_dale_features(dataset, feats):
    for j in feats:
        col = dataset.columns[j]
        if col.is_categorical or col.is_boolean:
            raise InvalidParameterError(
                f"method='dale' needs numeric features of interest; {col.name!r} is "
                "categorical or boolean. Use method='ale' for it.")


def _dale_locals(dataset, model, X, feats, names, bins, options):
    _check_dale_features(dataset, feats)
    return _dale_observations(dataset, feats, names, dale(model, X, names, bins=bins,
                                                          **options))


def _dale_locals_out_of_core(request, feats, names, bins):
    """Dask data: DALE's derivatives of every row, computed partition by partition.

    The rows are gathered first (the split search needs them), so the steps'
    scales and the bins are those of the same rows in memory; each partition
    then takes the derivatives of its rows (every output in one pass), and
    the client reduces them as in-memory DALE does.  Returns the gathered
    dataset and the features' local effects.
    """
    schema, table, model = request.dataset, request.table, request.model
    _check_dale_features(schema, feats)
    dataset = _gathered(schema, table.map(None, _encoded_rows))
    scale = feature_scale(dataset.values[:, feats])
    parts = table.map(model, _partition_derivatives, feats, names, scale, table.local)
    if model.undetermined:  # told by the partitions' first answers (a partition of no rows: 1)
        model.settle_outputs(max(width for _, width, _ in parts),
                             names=_told_names(names for *_, names in parts))
    views = [model] if model.n_outputs == 1 else [model.view(c) for c in range(model.n_outputs)]
    specs = [_check_bins(grid_spec(bins, dataset, j), name) for j, name in zip(feats, names)]
    dataset.warn_missing(feats, "DALE bins")  # once, as dale() says it (not once per output)
    per_output = []
    for c, view in enumerate(views):
        found = [p[c] for p, _, _ in parts if p]  # (partitions of no rows: none)
        backend = found[0][1]
        derivatives = np.concatenate([d for d, _, _ in found], axis=1)
        checks = [k for _, _, k in found if k is not None]
        if checks:  # said once for the whole table, as in memory
            _warn_unreliable(np.sum(checks, axis=0), names)
        per_output.append(_dale_effects(dataset, feats, specs, derivatives, backend,
                                        output=view.output_name, min_points=10,
                                        confidence=0.95, empty_bins="zero"))
    effects = Effects.stack(per_output, request.output_labels)
    return dataset, _dale_observations(dataset, feats, names, effects)


class _Derivatives(DerivativePlan):
    """A partition's derivatives, kept with their checks (the client warns once)."""

    def summarise(self):
        if self._gradient is not None:
            return self._gradient.result, self.backend, None
        return self.derivatives, self.backend, self.check_counts()


def _partition_derivatives(values, model, index, feats, names, scale, options):
    """One partition's ``[(derivatives, backend, checks) per output]`` and its outputs' count."""
    if not len(values):
        return [], 1, None
    if getattr(model, "undetermined", False):
        model = copy.copy(model)  # settles on this partition's copy (see _partition_locals)
    per_output = summarise_outputs(
        model, lambda one: [_Derivatives(one, values, feats, names=names, scale=scale)],
        options, desc="regions (dale, partition)")
    return [found for (found,) in per_output], len(per_output), \
        getattr(model, "answer_names", None)


def _told_names(names):
    """The output names the partitions' answers gave (a function's DataFrame columns), if any."""
    return next((n for n in names if n is not None), None)


def _warn_unreliable(counts, names):
    # the check's rule, on the counts summed over the partitions (it reads no plan when
    # given the names)
    DerivativePlan.warn_unreliable(cast(DerivativePlan, None), counts, names)


def _dale_observations(dataset, feats, names, effects):
    """Each feature's :class:`_Local` from DALE's effects, which keep their derivatives."""
    out = []
    for j, name in zip(feats, names):
        effect = effects[name]
        assert isinstance(effect, DaleEffect)  # dale's effects keep their local effects
        g = _as_columns(effect.local_effects)  # (rows, outputs)
        known = np.flatnonzero(~np.isnan(dataset.values[:, j]))
        if g.shape[0] != known.size:
            raise InvalidParameterError(
                f"the derivative of the model for {name!r} is NaN or inf at some rows; "
                "method='dale' needs it at every row with a value. Drop those rows, or use "
                "method='ale'.")
        x = dataset.values[known, j]
        edges = np.asarray(effect.grid, dtype=float)
        cell = bin_index(x, edges) if edges.size > 1 else np.zeros(x.size, np.intp)
        strata = np.full(dataset.n_rows, -1, dtype=np.intp)
        strata[known] = cell
        ones = [effect.for_output(c) for c in range(effect.n_outputs)]

        def build(rows, effect=effect, ones=ones, known=known, g=g, x=x, edges=edges):
            own = np.isin(known, rows)
            return Effect.stack([_dale_summarise(
                one.feature, x[own], g[own, c], edges,
                min_points=one.extra.get("min_points", 10),
                confidence=one.band.level if one.band else 0.95, output=one.output,
                backend=one.extra.get("gradient"), empty_bins="zero")
                for c, one in enumerate(ones)], effect.output_labels)

        out.append(_Local(known, np.asarray(cell, np.intp), g,
                          max(edges.size - 1, 1), strata, effect, build))
    return out


def _pdp_locals(dataset, model, X, feats, names, grid, options):
    effects = pdp(model, X, names, grid=grid, ice=True, **options)
    out = []
    n = dataset.n_rows
    for name in names:
        effect = effects[name]
        ice = np.asarray(effect.ice, dtype=float)
        if ice.ndim == 2:
            ice = ice[:, :, None]
        n_grid = ice.shape[1]
        # (rows, points, outputs): each row's curve minus its own mean, per output
        centred = ice - ice.mean(axis=1, keepdims=True)
        # a flat curve is exactly flat once centred (its mean may round off its value): a
        # feature the model ignores then has no local effect at all, not rounding noise to split
        centred = np.where(np.ptp(ice, axis=1, keepdims=True) == 0, 0.0, centred)
        rows = np.repeat(np.arange(n), n_grid)
        cell = np.tile(np.arange(n_grid), n)
        ones = [effect.for_output(c) for c in range(effect.n_outputs)]

        def build(rows, effect=effect, ones=ones):
            parts = []
            for one in ones:
                curves = np.asarray(one.ice, dtype=float)[rows]
                values = curves.mean(axis=0) if rows.size else np.full(curves.shape[1], np.nan)
                fv = one.feature_values
                if fv is not None and len(fv) == n:
                    fv = np.asarray(fv)[rows]
                parts.append(Effect(feature=one.feature, method="pdp", grid=one.grid,
                                    values=values, ice=curves, kind=one.kind, feature_values=fv,
                                    output=one.output, ice_rows=rows))
            return Effect.stack(parts, effect.output_labels)

        out.append(_Local(rows, cell, centred.reshape(n * n_grid, -1), n_grid,
                          np.zeros(n, dtype=np.intp), effect, build))
    return out


def _as_columns(values):
    """Local effects as ``(m, k)``: one column per output (a trailing output axis kept)."""
    values = np.asarray(values, dtype=float)
    return values[:, None] if values.ndim == 1 else values.reshape(values.shape[0], -1)


# ------------------------------------------------------------------ search
@dataclass
class _Rule:
    """A split: column ``j``; ``threshold`` (numeric: ``x <= t`` left) or ``left`` level codes."""

    j: int
    threshold: float | None = None
    left: frozenset | None = None
    position: float = 0.0  # numeric: the threshold's quantile among the region's rows

    def goes_left(self, z):
        if self.threshold is not None:
            return z <= self.threshold  # NaN: right
        assert self.left is not None
        return np.isin(z, list(self.left))


class _Search:
    """Scores every candidate split of a region from the local effects of its rows.

    The search runs for many variants of a region at once (the permutations
    of the p-value, the bootstrap resamples of the stability): each variant
    is a row weight vector and a source row for each row's splitting values,
    and every candidate cut of every variant is scored by one bincount over
    all of them, summed in the same order as a search of that variant alone.
    """

    #: Observations (variants x local effects) per batch: bounds the batch's memory.
    BATCH_OBSERVATIONS = 2_000_000

    def __init__(self, local: _Local, dataset, cols, min_rows):
        self.local, self.dataset, self.cols, self.min_rows = local, dataset, cols, min_rows
        self.Z = dataset.values[:, cols]
        self.levels = [dataset.columns[c].is_categorical or dataset.columns[c].is_boolean
                       for c in cols]
        # observations of each row, to gather a region's quickly
        order = np.argsort(local.rows, kind="stable")
        self.obs_sorted = order
        self.row_starts = np.searchsorted(local.rows[order], np.arange(dataset.n_rows + 1))

    def node(self, rows):
        """The observations of ``rows`` (sorted positions), centred on the region's bin means."""
        starts, stops = self.row_starts[rows], self.row_starts[rows + 1]
        lengths = stops - starts
        idx = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
        obs = self.obs_sorted[idx]
        return _Node(rows, np.repeat(np.arange(rows.size), lengths), self.local.cell[obs],
                     self.local.values[obs], self.local.n_cells, self.Z[rows],
                     self.local.strata[rows])

    def batch(self, node: "_Node") -> int:
        """Variants searched at once in ``node``."""
        return max(1, self.BATCH_OBSERVATIONS // max(node.cell.size, 1))

    def best(self, node: "_Node", w):
        """The best rule over every column for row weights ``w``: ``(gain, rule, before,
        after)``, or None."""
        return self.best_many(node, w[None, :])[0]

    def best_many(self, node: "_Node", W, sources=None, beat=None) -> list:
        """The best rule of each variant: a list of ``(gain, rule, before, after)`` or None.

        ``W`` (variants, rows) holds row weights; row ``i`` of variant ``v``
        takes its splitting values from row ``sources[v, i]`` (default: its
        own), the permutations of the test.  A numeric column's candidate
        thresholds are the quantiles of the region's values, whatever the
        weights and sources: computed once per region, they serve every
        variant.

        A numeric column's best quantile cut is refined between the region's
        values around it (see ``_refine``) only where the refined cut could
        matter.  The refined cut keeps the rows below the lower neighbouring
        quantile on its left and those above the upper one on its right, so
        their sums of squares add up to a floor under its own: a gain ceiling.
        A column whose ceiling is below another column's gain cannot win, and
        with ``beat`` (the permutation test's observed gain, where only
        whether a variant's best gain reaches it matters) neither can one
        whose ceiling is below ``beat``, nor any once a gain reaches it.  The
        best rule is the same as with every column refined.
        """
        V = W.shape[0]
        if sources is None:
            sources = np.broadcast_to(np.arange(node.rows.size), W.shape)
        total, scale = node.ss_many(W)
        best: list = [None] * V
        live = np.flatnonzero(total > _FLAT * max(scale, 1e-300))
        if live.size == 0:
            return best
        W, sources, total = W[live], sources[live], total[live]
        found: list = []
        lower = np.full(live.size, -np.inf)  # each variant's best gain so far
        for k in range(len(self.cols)):
            if self.levels[k]:
                one = self._levels_best(node, W, sources, k, total)
                gains = np.array([-np.inf if f is None else f[0] for f in one])
            else:
                one = self._coarse(node, W, sources, k, total)
                gains = np.full(live.size, -np.inf) if one is None else np.where(
                    one["any_ok"], 1.0 - np.maximum(one["cut"], 0.0) / total, -np.inf)
            found.append(one)
            lower = np.maximum(lower, gains)
        need = lower if beat is None else np.where(lower < beat, beat, np.inf)
        for k, c in enumerate(self.cols):
            one = found[k]
            if not self.levels[k]:
                one = [None] * live.size if one is None else \
                    self._refine(node, W, sources, k, total, one, need - 1e-9)
            for i, f in enumerate(one):
                v = live[i]
                if f is not None and (best[v] is None or f[0] > best[v][0]):
                    gain, rule, after = f
                    rule.j = c
                    best[v] = (gain, rule, total[i], after)
        return best

    def _cuts(self, node, W, groups, n_groups):
        """After-split sums of squares ``(V, n_groups - 1)``, admissible cuts masked as inf,
        whether a variant has any, and the sums of squares left and right of each cut."""
        (left, right), left_rows, right_rows = node.split_ss_many(W, groups, n_groups)
        ok = (left_rows >= self.min_rows) & (right_rows >= self.min_rows)
        return np.where(ok, left + right, np.inf), ok.any(axis=1), left, right

    def _coarse(self, node, W, sources, k, total):
        """Each variant's best quantile cut of numeric column ``k``, and its gain ceiling."""
        cache = node.cache.setdefault(k, {})
        if "t" not in cache:
            _thresholds(node.Z[:, k], cache)
        t = cache["t"]
        if t.size == 0:
            return None
        if "groups" not in cache:
            cache["groups"] = np.searchsorted(t, node.Z[:, k], side="left")
        after, any_ok, left, right = self._cuts(node, W, cache["groups"][sources], t.size + 1)
        chosen = np.argmin(after, axis=1)
        ends = np.arange(W.shape[0])
        floor = np.where(chosen > 0, left[ends, np.maximum(chosen - 1, 0)], 0.0) + np.where(
            chosen + 1 < t.size, right[ends, np.minimum(chosen + 1, t.size - 1)], 0.0)
        return {"chosen": chosen, "cut": after[ends, chosen], "any_ok": any_ok,
                "ceiling": 1.0 - np.maximum(floor, 0.0) / total}

    def _refine(self, node, W, sources, k, total, coarse, need) -> list:
        """Column ``k``'s best rule of each variant, its quantile cut refined where the
        gain ceiling reaches ``need``."""
        cache = node.cache[k]
        zs, t = cache["zs"], cache["t"]
        chosen, cut, any_ok = coarse["chosen"].copy(), coarse["cut"].copy(), coarse["any_ok"]
        V = W.shape[0]
        at = [t] * V
        # the best quantile cut, refined to the best cut between the region's values inside
        # the neighbouring quantile steps: a boundary in the data is then found exactly,
        # so that rows on its wrong side do not call for a second, spurious split; every
        # variant's refinement in one pass, its fine cuts' groups padded with empty groups at
        # the end (cumulative sums through them add zeros: the same numbers)
        which = np.flatnonzero(any_ok & (coarse["ceiling"] >= need))
        fines = {int(c): self._fine(node, k, cache, int(c)) for c in np.unique(chosen[which])}
        which = np.array([v for v in which if fines[int(chosen[v])][0].size], dtype=np.intp)
        if which.size:
            used = sorted({int(chosen[v]) for v in which})
            table = np.stack([fines[c][1] for c in used])
            row_of = np.searchsorted(used, chosen[which])
            width = max(fines[c][0].size for c in used) + 1
            fine_after = self._cuts(node, W[which], table[row_of[:, None], sources[which]],
                                    width)[0]
            best_fine = np.argmin(fine_after, axis=1)
            for i, (u, f) in enumerate(zip(which, best_fine)):
                if fine_after[i, f] < cut[u]:
                    at[u] = fines[used[row_of[i]]][0]
                    chosen[u], cut[u] = f, fine_after[i, f]
        out: list = []
        for v in range(V):
            if not any_ok[v]:
                out.append(None)
                continue
            threshold = at[v][chosen[v]]
            position = np.searchsorted(zs, threshold, side="right") / zs.size
            rule = _Rule(-1, threshold=float(threshold), position=float(position))
            out.append((1.0 - max(cut[v], 0.0) / total[v], rule, cut[v]))
        return out

    def _fine(self, node, k, cache, c):
        """The region's values between the quantile cuts around cut ``c``, and each row's group."""
        key = ("fine", c)
        if key not in cache:
            zs, t = cache["zs"], cache["t"]
            lo = t[c - 1] if c > 0 else -np.inf
            hi = t[c + 1] if c + 1 < t.size else zs[-1]
            # the largest value itself when missing values make a right side
            stop = np.searchsorted(zs, hi, side="right") if c + 1 == t.size and cache["missing"] \
                else np.searchsorted(zs, hi, side="left")
            fine = np.unique(zs[np.searchsorted(zs, lo, side="right"):stop])
            cache[key] = fine, np.searchsorted(fine, node.Z[:, k], side="left")
        return cache[key]

    def _levels_best(self, node, W, sources, k, total) -> list:
        """Each variant's best cut of level column ``k`` along its level order.

        The variants whose rows of positive weight hold the region's every
        level (and missing values when it has any), as every permutation
        does, are scored at once; the others (a bootstrap resample that lost
        a level) one at a time.
        """
        z = node.Z[:, k]
        known = ~np.isnan(z)
        present = np.unique(z[known]).astype(np.intp)
        L = present.size
        level_of_row = np.where(known, np.searchsorted(present, np.where(known, z, 0)), L)
        V = W.shape[0]
        held = np.bincount(level_of_row, minlength=L + 1) > 0
        lor = level_of_row[sources]
        seen = np.bincount((lor + (np.arange(V) * (L + 1))[:, None]).ravel(),
                           weights=(W > 0).ravel(), minlength=V * (L + 1)).reshape(V, L + 1)
        same = ((seen > 0) == held).all(axis=1)
        out: list = [None] * V
        for v in np.flatnonzero(~same):
            out[v] = self._level_best(node, W[v], node.Z[sources[v], k], total[v])
        batch = np.flatnonzero(same)
        if batch.size == 0 or L + int(held[L]) < 2:
            return out
        lor = lor[batch]
        n, s, _, _ = node.group_sums(W[batch], lor, L + 1)
        means = np.divide(s, n[:, None], out=np.zeros_like(s), where=n[:, None] > 0)
        means = means.transpose(0, 2, 3, 1).reshape(batch.size, L + 1, -1)[:, :-1]
        weight = n.sum(axis=2)[:, :-1]
        rank = np.empty((batch.size, L + 1), dtype=np.intp)
        codes = []
        for i in range(batch.size):
            order = _level_order(means[i], weight[i])
            rank[i, order] = np.arange(L)
            codes.append(present[order])
        rank[:, L] = L
        groups = np.take_along_axis(rank, lor, axis=1)
        after, any_ok, _, _ = self._cuts(node, W[batch], groups, L + int(held[L]))
        chosen = np.argmin(after, axis=1)
        for i, v in enumerate(batch):
            if any_ok[i]:
                c = int(chosen[i])
                rule = _Rule(-1, left=frozenset(codes[i][:c + 1].tolist()))
                out[v] = (1.0 - max(after[i, c], 0.0) / total[v], rule, after[i, c])
        return out

    def _level_best(self, node, w, z, ss_total):
        groups, codes = _level_groups(node, w, z)
        if groups is None:
            return None
        after, any_ok, _, _ = self._cuts(node, w[None, :], groups[None, :],
                                         int(groups.max()) + 1)
        if not any_ok[0]:
            return None
        c = int(np.argmin(after[0]))
        rule = _Rule(-1, left=frozenset(codes[:c + 1].tolist()))
        return 1.0 - max(after[0, c], 0.0) / ss_total, rule, after[0, c]


def _thresholds(z, cache):
    """A region's sorted values and candidate thresholds (its quantiles) into ``cache``."""
    zs = np.sort(z[~np.isnan(z)])
    t = np.unique(np.quantile(zs, np.arange(1, N_THRESHOLDS) / N_THRESHOLDS,
                              method="inverted_cdf")) if zs.size else zs
    # the largest value cuts only when missing values make a right side
    missing = bool(np.isnan(z).any())
    cache["zs"], cache["missing"] = zs, missing
    cache["t"] = t[(t < zs[-1]) | missing] if zs.size else t


def _level_groups(node, w, z):
    """Levels in a data-driven order, for cuts along it; missing values a group of their own, last.

    Each level's mean deviation from the region's bin means, per bin (and
    output), is a vector; the levels are ordered by their projection on the
    first principal axis of these vectors (weighted by the levels' local
    effects), which for one bin is the order of the mean deviations.
    """
    known = ~np.isnan(z)
    codes_all = np.where(known, z, -1).astype(np.intp)
    present = np.unique(codes_all[(w > 0) & known])
    if present.size + int(((w > 0) & ~known).any()) < 2:
        return None, None
    pos = np.searchsorted(present, codes_all).clip(max=present.size - 1)
    at = known & (present[pos] == codes_all)
    level_of_row = np.where(at, pos, present.size)
    means, weight = node.level_means(w, level_of_row, present.size + 1)
    order = _level_order(means[:-1], weight[:-1])
    rank = np.empty(present.size + 1, dtype=np.intp)
    rank[order] = np.arange(present.size)
    rank[present.size] = present.size
    return rank[level_of_row], present[order]


def _level_order(means, weight):
    """The levels' order: by their mean deviations ``(L, B * k)`` projected on the first
    principal axis (weighted by ``weight``); two levels keep their order."""
    if means.shape[0] > 2:
        centred = means - (weight @ means) / max(weight.sum(), 1e-300)
        _, _, vt = np.linalg.svd(np.sqrt(weight)[:, None] * centred, full_matrices=False)
        score = centred @ vt[0]
    else:
        score = np.arange(means.shape[0], dtype=float)
    return np.argsort(score, kind="stable")


class _Node:
    """A region's observations: local row, bin, values ``(m, k)``; its rows' split values."""

    def __init__(self, rows, obs_row, cell, values, n_cells, Z, strata):
        self.rows, self.obs_row, self.cell, self.n_cells = rows, obs_row, cell, n_cells
        self.Z, self.strata = Z, strata
        self.cache: dict = {}  # per column: the region's sorted values and thresholds
        # centred on the region's own bin means: sums of squares without cancellation
        count = np.bincount(cell, minlength=n_cells).astype(float)
        mean = np.stack([np.bincount(cell, weights=values[:, k], minlength=n_cells)
                         for k in range(values.shape[1])], axis=1).astype(float)
        mean = np.divide(mean, count[:, None], out=np.zeros_like(mean), where=count[:, None] > 0)
        self.values = values - mean[cell]
        self.sq = (self.values ** 2).sum(axis=1)
        self.scale = float(np.mean((values ** 2).sum(axis=1))) if values.size else 0.0

        # PD: every row has one local effect per grid point, in order; group sums are
        # then a sparse (groups x rows) product with the (rows, points * outputs) matrix
        n_rows = rows.size
        self.dense = n_cells > 0 and values.shape[0] == n_rows * n_cells and np.array_equal(
            cell, np.tile(np.arange(n_cells), n_rows))
        if self.dense:
            self.by_row = self.values.reshape(n_rows, -1)
            self.sq_row = self.sq.reshape(n_rows, n_cells).sum(axis=1)

    def group_sums(self, W, groups, n_groups):
        """Per variant, group of rows and bin: weights ``(V, G, B)``, sums ``(V, k, G, B)``,
        squares ``(V, G)``, and the rows' weights per group ``(V, G)``, for row weights ``W``
        and groups ``(V, rows)``.

        Each variant's sums add its observations in the order of a search of
        that variant alone: one bincount over every variant, offset by variant.
        """
        V, B, k = W.shape[0], self.n_cells, self.values.shape[1]
        offset = (np.arange(V) * n_groups)[:, None]
        flat = (groups + offset).ravel()
        r = np.bincount(flat, weights=W.ravel(), minlength=V * n_groups).reshape(V, n_groups)
        if self.dense:
            n_rows = groups.shape[1]
            # (variant, group) x rows, one entry per variant in each row's column: built as
            # CSC without sorting; each group's sum adds its rows in order, as CSR would
            by_group = sparse.csc_matrix(
                (W.T.ravel(), (groups + offset).T.ravel(), np.arange(0, V * n_rows + 1, V)),
                shape=(V * n_groups, n_rows)) @ self.by_row
            s = np.asarray(by_group).reshape(V, n_groups, B, k).transpose(0, 3, 1, 2)
            q = np.bincount(flat, weights=(W * self.sq_row).ravel(),
                            minlength=V * n_groups).reshape(V, n_groups)
            return np.broadcast_to(r[:, :, None], (V, n_groups, B)), s, q, r
        ow = W[:, self.obs_row]
        g = (groups + offset)[:, self.obs_row]
        idx = (g * B + self.cell).ravel()
        size = V * n_groups * B
        n = np.bincount(idx, weights=ow.ravel(), minlength=size).reshape(V, n_groups, B)
        s = np.stack([np.bincount(idx, weights=(ow * self.values[:, j]).ravel(), minlength=size)
                      .reshape(V, n_groups, B) for j in range(k)], axis=1)
        q = np.bincount(g.ravel(), weights=(ow * self.sq).ravel(),
                        minlength=V * n_groups).reshape(V, n_groups)
        return n, s, q, r

    def ss_many(self, W):
        """Within-bin sums of squares ``(V,)`` under row weights ``W``, and the raw mean square."""
        n, s, q, _ = self.group_sums(W, np.zeros(W.shape, dtype=np.intp), 1)
        explained = np.divide(s ** 2, n[:, None], out=np.zeros_like(s),
                              where=n[:, None] > 0).reshape(W.shape[0], -1).sum(axis=1)
        return np.maximum(q[:, 0] - explained, 0.0), self.scale

    def ss(self, w):
        """Within-bin sum of squares under row weights ``w``, and the raw mean square."""
        total, scale = self.ss_many(w[None, :])
        return float(total[0]), scale

    def level_means(self, w, level_of_row, n_levels):
        """Each level's mean deviation per bin and output, ``(L, B * k)``, and its weight."""
        n, s, _, _ = self.group_sums(w[None, :], level_of_row[None, :], n_levels)
        n, s = n[0], s[0]
        means = np.divide(s, n, out=np.zeros_like(s), where=n > 0)
        return means.transpose(1, 2, 0).reshape(n_levels, -1), n.sum(axis=1)

    def split_ss_many(self, W, groups, n_groups):
        """Per variant, the sums of squares left and right of each cut between consecutive
        groups ``(V, G - 1)`` each, and the rows left and right of it."""
        n, s, q, r = self.group_sums(W, groups, n_groups)
        cq, cr = np.cumsum(q, axis=1), np.cumsum(r, axis=1)
        # PD's weights per bin are its rows' (every row has every grid point)
        cn = np.broadcast_to(cr[:, :, None], n.shape) if self.dense else np.cumsum(n, axis=1)
        cs = np.cumsum(s, axis=2)
        nl, sl, ql, rl = cn[:, :-1], cs[:, :, :-1], cq[:, :-1], cr[:, :-1]
        nr, sr, qr, rr = cn[:, -1:] - nl, cs[:, :, -1:] - sl, cq[:, -1:] - ql, cr[:, -1:] - rl
        expl_l = np.divide(sl ** 2, nl[:, None], out=np.zeros_like(sl),
                           where=nl[:, None] > 0).sum(axis=(1, 3))
        expl_r = np.divide(sr ** 2, nr[:, None], out=np.zeros_like(sr),
                           where=nr[:, None] > 0).sum(axis=(1, 3))
        return ((ql - expl_l), (qr - expl_r)), rl, rr


# ------------------------------------------------------------------ growth
class _Grower:
    def __init__(self, search: _Search, dataset, *, method, max_depth, min_gain, n_permutations,
                 rng):
        self.search, self.dataset, self.method = search, dataset, method
        self.max_depth, self.min_gain = max_depth, min_gain
        self.n_permutations, self.rng = n_permutations, rng

    def grow(self, rows, depth, path) -> RegionNode:
        node = RegionNode(region=_region_name(path), conditions=tuple(path), depth=depth,
                          rows=int(rows.size))
        node.row_index = rows
        if depth >= self.max_depth:
            node.reason = "maximum depth"
            return node
        if rows.size < 2 * self.search.min_rows:
            node.reason = (f"too few rows for two regions ({rows.size}; each region needs at "
                           f"least {self.search.min_rows})")
            return node
        data = self.search.node(rows)
        if data.cell.size == 0:
            node.reason = "no local effects (a constant feature)"
            return node
        ones = np.ones(rows.size)
        best = self.search.best(data, ones)
        if best is None:
            total = data.ss(ones)
            node.reason = self._flat(data) if total[0] <= _FLAT * max(total[1], 1e-300) else (
                f"no split leaves at least {self.search.min_rows} rows on each side")
            return node
        gain, rule, before, after = best
        weight = float(np.bincount(data.cell, weights=ones[data.obs_row]).sum())
        split = Split(feature=self.dataset.columns[rule.j].name,
                      threshold=rule.threshold, levels=self._labels(rule),
                      heterogeneity_before=before / weight, heterogeneity_after=after / weight,
                      gain=float(gain), p_value=self._p_value(data, gain),
                      stability=self._stability(data, rule), heldout_gain=self._heldout(data),
                      rows_left=0, rows_right=0)
        goes_left = rule.goes_left(self.dataset.values[rows, rule.j])
        split.rows_left, split.rows_right = int(goes_left.sum()), int((~goes_left).sum())
        significant = self.n_permutations == 0 or split.p_value <= ALPHA
        if gain < self.min_gain or not significant:
            node.candidate = split
            node.reason = (
                f"the best split removes {gain:.0%} of the heterogeneity, below min_gain "
                f"({self.min_gain:.0%})" if gain < self.min_gain else
                f"the best split is not significant (p = {split.p_value:.3g} > {ALPHA:g})")
            return node
        node.split = split
        right_levels = None
        if rule.left is not None:
            z = self.dataset.values[rows, rule.j]
            codes = np.unique(z[~np.isnan(z)])
            rest = np.array(sorted(set(codes.tolist()) - rule.left), dtype=float)
            right_levels = tuple(_plain(v) for v in self.dataset.labels(rule.j, rest).tolist())
            if np.isnan(z).any():
                right_levels += ("missing",)
        left_cond, right_cond = _conditions(split, right_levels)
        node.left = self.grow(rows[goes_left], depth + 1, path + (left_cond,))
        node.right = self.grow(rows[~goes_left], depth + 1, path + (right_cond,))
        node.row_index = None
        return node

    def _flat(self, data) -> str:
        """Why a region whose local effects agree has no split, in the method's own terms."""
        if data.scale <= 0.0:  # every local effect is exactly zero
            return ("no effect: the model's output does not change with the feature on these "
                    "rows" + (" (every ICE curve is flat)" if self.method == "pdp" else
                              " (every local effect is zero)"))
        what = {"pdp": "every row's centred ICE curve is the same",
                "dale": "the rows' derivatives agree within every bin",
                "ale": "the rows' local effects agree within every bin"}[self.method]
        return (f"no heterogeneity: {what}, so the feature has the same effect on every row "
                "and no split can reduce the disagreement")

    def _labels(self, rule):
        if rule.left is None:
            return None
        codes = np.array(sorted(rule.left), dtype=float)
        return tuple(_plain(v) for v in self.dataset.labels(rule.j, codes).tolist())

    def _p_value(self, data: _Node, observed):
        """Permutation p-value of the observed best gain, stopped early once it exceeds ALPHA.

        The permutations are drawn as one stream (the generator ends where a
        full run leaves it, so the stability and held-out draws that follow do
        not depend on the stop) and searched in batches.  Once ``h`` of them
        reach the observed gain, where ``(1 + h) / (1 + n_permutations) >
        ALPHA``, no further permutation can make the split significant: the
        test stops (Besag & Clifford 1991) and reports ``(1 + h) / (1 + m)``
        after ``m`` permutations, above ALPHA as the full run's would be.
        """
        if self.n_permutations == 0:
            return float("nan")
        strata = data.strata
        size = strata.size
        by_stratum = np.argsort(strata, kind="stable")
        blocks = np.split(by_stratum, np.flatnonzero(np.diff(strata[by_stratum])) + 1)
        # least exceedances that decide "not significant" whatever the remaining ones give
        decided = next(h for h in range(self.n_permutations + 1)
                       if (1 + h) / (1 + self.n_permutations) > ALPHA)
        # a first small batch: a split that is no better than chance stops after it
        batch = min(self.search.batch(data), _FIRST_PERMUTATIONS)
        exceed = done = 0
        while done < self.n_permutations:
            m = min(batch, self.n_permutations - done)
            batch = self.search.batch(data)
            draws = self.rng.random((m, size))
            sources = np.empty((m, size), dtype=np.intp)
            # each permutation's rows in random order within each stratum: the order of
            # their draws (random doubles tie with probability about n^2 / 2^53)
            for rows in blocks:
                sources[:, rows] = rows[np.argsort(draws[:, rows], axis=1)]
            found = self.search.best_many(data, np.ones((m, size)), sources, beat=observed)
            for i, one in enumerate(found):
                if one is not None and one[0] >= observed - 1e-12:
                    exceed += 1
                if exceed >= decided and _EARLY_STOP:
                    used = done + i + 1
                    # the generator ends where a full run leaves it
                    self.rng.random((self.n_permutations - done - m, size))
                    return (1 + exceed) / (1 + used)
            done += m
        return (1 + exceed) / (1 + self.n_permutations)

    def _stability(self, data: _Node, rule: _Rule):
        size = data.rows.size
        W = np.stack([np.bincount(self.rng.integers(0, size, size), minlength=size)
                      for _ in range(N_BOOTSTRAP)]).astype(float)
        present = None
        same = 0
        for start in range(0, N_BOOTSTRAP, self.search.batch(data)):
            for found in self.search.best_many(data, W[start:start + self.search.batch(data)]):
                if found is None or found[1].j != rule.j:
                    continue
                other = found[1]
                if rule.left is not None:
                    assert other.left is not None
                    if present is None:
                        present = set(np.unique(self.dataset.values[data.rows, rule.j]).tolist())
                    if other.left == rule.left or present - other.left == rule.left:
                        same += 1
                elif abs(other.position - rule.position) <= 1 / N_THRESHOLDS + 1e-9:
                    same += 1
        return same / N_BOOTSTRAP

    def _heldout(self, data: _Node):
        size = data.rows.size
        half = np.zeros(size)
        half[self.rng.permutation(size)[:size // 2]] = 1.0
        found = self.search.best(data, half)
        if found is None:
            return 0.0
        rule = found[1]
        other = 1.0 - half
        total = data.ss(other)[0]
        if total <= 0:
            return 0.0
        column = self.search.cols.index(rule.j)
        left = rule.goes_left(data.Z[:, column])
        (ss_left, ss_right), nl, nr = data.split_ss_many(
            other[None, :], (~left).astype(np.intp)[None, :], 2)
        if nl[0, 0] == 0 or nr[0, 0] == 0:
            return 0.0
        return float(1.0 - max(ss_left[0, 0] + ss_right[0, 0], 0.0) / total)


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def _conditions(split: Split, right_levels):
    if split.levels is not None:
        def within(levels):
            return f"{split.feature} in {{{', '.join(str(v) for v in levels)}}}"
        return within(split.levels), within(right_levels)
    return (f"{split.feature} <= {split.threshold:.4g}", f"{split.feature} > {split.threshold:.4g}")


def _region_name(path):
    return " & ".join(path) if path else "all"
