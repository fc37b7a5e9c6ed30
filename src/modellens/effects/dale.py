"""Differential accumulated local effects (DALE)."""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from .._validation import (InvalidParameterError, ModellensWarning, check_choice, check_int,
                           check_level, is_integer, user_stacklevel)
from ..engine import count_quantile_edges, open_request
from ..engine._out_of_core import feature_sample
from ..models import ModelError
from ..typing import BinsSpec, DataLike, FeatureSpec, ModelLike, TargetSpec
from ._autobin import auto_bins, auto_bins_from_moments
from ._derivatives import DerivativePlan, resolve_backend, scale_rule
from ._grid import DEFAULT_POINTS, check_spec_keys, grid_spec
from .binning import (EMPTY_BINS, Moments, accumulate, band_half_width, bin_index, bin_stats,
                      check_edges, empty_bin_slopes, inside_edges, quantile_edges)
from .result import Band, Bins, Effect, Effects

__all__ = ["dale", "DaleEffect"]


@dataclass(eq=False, repr=False)
class DaleEffect(Effect):
    """A DALE curve that keeps its local effects, so it can be re-binned for free.

    Attributes
    ----------
    local_effects : ndarray of shape (n,)
        :math:`\\partial f / \\partial x_s` at each data point, aligned with
        ``feature_values`` (the feature's non-missing observed values).

    The remaining attributes are those of :class:`Effect`: ``band`` the
    confidence band of the curve at the edges, ``bins`` the per-bin counts,
    heterogeneity, effects (mean derivative times width) and mean
    derivatives; ``extra`` holds ``min_points`` and ``gradient`` (the source of
    the derivatives).
    """

    local_effects: np.ndarray | None = None
    _per_output = Effect._per_output + ("local_effects",)
    #: CRC-32 of ``feature_values`` when they are a view of the caller's data, so that
    #: re-binning can tell when that data was changed in place after the call.
    feature_digest: int | None = None

    def rebin(self, bins: BinsSpec = DEFAULT_POINTS, *, min_points: int | None = None,
              confidence: float | None = None,
              empty_bins: str | None = None) -> DaleEffect:
        """The same effect on other bins, from the stored local effects (no model call).

        Parameters
        ----------
        bins : int, array-like or "auto", default=20
            As in :func:`modellens.dale`.
        min_points, confidence, empty_bins : optional
            As in :func:`modellens.dale`; default: the values this effect used.

        Returns
        -------
        DaleEffect
            A new effect; this one is unchanged.

        Examples
        --------
        DALE of ``x0 ** 2`` with its exact gradient, first on 20 bins, then on 5
        without calling the model again; the curve stays on ``x0 ** 2`` up to
        a constant:

        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(400, 2))
        >>> def model(A):
        ...     return A[:, 0] ** 2
        >>> def gradient(A):
        ...     return np.column_stack([2 * A[:, 0], np.zeros(len(A))])
        >>> effect = ml.dale(model, X, bins=20, gradient=gradient)["x0"]
        >>> coarse = effect.rebin(5)
        >>> len(effect.grid), len(coarse.grid), coarse.bins.counts.tolist()
        (21, 6, [80, 80, 80, 80, 80])
        >>> shift = coarse.values - coarse.grid ** 2
        >>> bool(np.ptp(shift) < 0.01)
        True
        """
        if self.outputs is not None:  # each output re-binned on its own, stacked again
            parts = [cast(DaleEffect, self.for_output(c)).rebin(
                bins, min_points=min_points, confidence=confidence, empty_bins=empty_bins)
                for c in range(self.n_outputs)]
            return cast(DaleEffect, Effect.stack(parts, self.output_labels))
        min_points = self.extra.get("min_points", 10) if min_points is None else min_points
        empty_bins = self.extra.get("empty_bins", "zero") if empty_bins is None else empty_bins
        check_choice(empty_bins, "empty_bins", EMPTY_BINS)
        if confidence is None:
            confidence = self.band.level if self.band is not None else 0.95
        spec = _check_bins(bins, self.feature)
        _check_options(min_points, confidence)
        if self.local_effects is None:
            raise InvalidParameterError(
                f"this effect of {self.feature!r} was computed out of core (Dask data) and "
                "keeps no local effects to re-bin; call ml.dale again with the new bins.")
        if self.feature_digest is not None \
                and _digest(self.feature_values) != self.feature_digest:
            raise InvalidParameterError(
                f"the data of {self.feature!r} changed after ml.dale computed this effect (X "
                "was modified in place), so its local effects no longer match the feature's "
                "values; run ml.dale again, or pass it a copy of X.")
        return _summarise(self.feature, self.feature_values, self.local_effects, spec,
                          min_points=min_points, confidence=confidence, output=self.output,
                          backend=self.extra.get("gradient"), empty_bins=empty_bins,
                          feature_digest=self.feature_digest)


def dale(model: ModelLike, X: DataLike, features: FeatureSpec = None, *,
         bins: BinsSpec = DEFAULT_POINTS,
         gradient: Callable[[np.ndarray], np.ndarray] | None = None, min_points: int = 10,
         confidence: float = 0.95, fd_step: float = 1e-3, empty_bins: str = "zero",
         target: TargetSpec = None, response_method: str = "auto",
         feature_names: Sequence[str] | None = None, chunk_size: int | None = None,
         n_jobs: int | None = None, progress: bool | None = None) -> Effects:
    r"""How does the prediction change as each feature moves within its data, read from the gradient?

    Differential ALE (DALE) estimates the same curve as :func:`modellens.ale`
    from the model's derivative at the real data points: the mean slope in
    each bin times the bin's width, added up.  One gradient pass (PyTorch or
    JAX autodiff, a ``gradient=`` callable, or finite differences) serves every
    feature, no artificial rows are created, and the bins can be changed
    afterwards without calling the model again (``effects[name].rebin(bins)``);
    ``bins="auto"`` chooses variable-width bins from the data.  The spread of
    the derivatives in a bin shows how much the rows disagree (heterogeneity).

    Parameters
    ----------
    model : estimator, callable or torch model
        As in :func:`modellens.pdp`, or a ``torch.nn.Module`` / a function on
        torch tensors / a JAX function.
    X : ndarray or DataFrame of shape (n, d), or Dask DataFrame / array
        Dask data stay where they are (out of core): bins an int (Dask's
        approximate quantiles), edges, or "auto" (candidate edges from the
        approximate quantiles and the exact range, chosen from the local
        effects' moments merged over the partitions); the effects keep no
        local effects, so they cannot be re-binned.
    features : name, index, or list of them, optional
        Numeric features to explain (all numeric features when None; the
        categorical ones are then skipped with a warning, and asking for one
        is an error: use :func:`modellens.ale` for them).  Discrete numeric
        features are handled like continuous ones: the curve integrates the
        derivative at the observed values, exact for a model linear in that
        feature; :func:`modellens.ale` gives the differences between values.
    bins : int, array-like, "auto" or dict, default=20
        An int ``K`` gives ALE's quantile edges (the minimum and the type-1
        quantiles at ``k/K``, ties collapsed); an array gives the edges (points
        outside them are left out, with a warning); ``"auto"`` chooses variable-width bins from
        the local effects (see :func:`modellens.effects._autobin.auto_edges`:
        minimum estimated integrated squared error of the bin-mean derivative,
        by dynamic programming); a dict maps features to any of these.
    gradient : None, {"auto", "torch", "jax", "finite_differences"} or callable
        Where the derivatives come from.  ``None`` / ``"auto"``: autograd for a
        ``torch.nn.Module``, JAX for a ``jax.jit`` function, central finite
        differences otherwise.  ``"torch"`` / ``"jax"``: autodiff of a function
        on tensors / JAX arrays (it receives the encoded rows).  A callable
        ``gradient(X) -> (m, d)`` is called with chunks of rows in the form the
        model takes and returns every feature's derivative.
    min_points : int, default=10
        ``bins="auto"``: least number of points in a bin.
    confidence : float, default=0.95
        Level of the confidence band of the curve (``band``).
    empty_bins : {"zero", "interpolate"}, default="zero"
        As in :func:`modellens.ale`: explicit edges can leave a bin without
        data; its mean derivative is taken as 0 or interpolated from the
        nearest bins with data, with a warning either way.
    fd_step : float, default=1e-3
        Finite differences: the step of each feature as a fraction of its
        standard deviation (``2 n`` model rows per feature, all features in
        one engine pass).  Finite differences need a smooth model: tree
        ensembles are flat almost everywhere, use :func:`modellens.ale`.
    target, response_method, feature_names, chunk_size, n_jobs, progress
        As in :func:`modellens.pdp`; ``chunk_size`` is also the rows of one
        autodiff or gradient call.

    Returns
    -------
    Effects
        One :class:`~modellens.effects.dale.DaleEffect` (``method="dale"``) per feature: ``grid`` the
        bin edges, ``values`` the centred curve at the edges, ``counts`` the
        points per bin, ``std`` the heterogeneity, i.e. the standard deviation
        (ddof 0) of the local effects in each bin, in derivative units (output per unit
        of the feature; NaN for an empty bin), ``bins`` the per-bin
        quantities, and ``band`` the pointwise confidence band of the centred
        curve, from the standard errors of the bin means (independent bins,
        normal approximation).

    See Also
    --------
    ale : The same curve from differences of predictions; categorical features and pairs.
    pdp : Partial dependence and ICE curves.

    Notes
    -----
    With bin edges :math:`z_0 < \dots < z_K` of feature :math:`s` and
    :math:`S_k` the data points in bin ``k``, :math:`(z_{k-1}, z_k]` (the first
    bin closed), the curve at the edges is

    .. math::
        \tilde f(z_k) = \sum_{j \le k} (z_j - z_{j-1})
            \frac{1}{|S_j|} \sum_{i \in S_j} \frac{\partial f}{\partial x_s}(x^{(i)}),

    centred like ALE: minus the count-weighted mean of the bin-midpoint values
    (:func:`~modellens.effects.binning.accumulate`).  The derivative is taken
    at the real data points only, so no artificial rows are created and wide
    bins stay on the data distribution; one gradient pass gives the local
    effects of every feature, and bins can be changed afterwards without the
    model (:meth:`~modellens.effects.dale.DaleEffect.rebin`).

    References
    ----------
    .. [1] Gkolemis, V., Dalamagas, T. & Diou, C. (2022). DALE: Differential
       accumulated local effects for efficient and accurate global
       explanations. *ACML 2022*, PMLR 189.
    .. [2] Apley, D. W. & Zhu, J. (2020). Visualizing the effects of predictor
       variables in black box supervised learning models. *JRSS B* 82(4).

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).uniform(-1, 1, size=(1000, 2))
    >>> f = lambda A: A[:, 0] ** 2 + A[:, 1]
    >>> grad = lambda A: np.column_stack([2 * A[:, 0], np.ones(len(A))])
    >>> effects = ml.dale(f, X, bins=10, gradient=grad)
    >>> e = effects["x1"]
    >>> bool(np.allclose(np.diff(e.values), np.diff(e.grid)))  # slope 1
    True
    >>> e5 = effects["x0"].rebin(5)  # other bins, no model call
    >>> len(e5.grid)
    6
    """
    _check_options(min_points, confidence)
    check_choice(empty_bins, "empty_bins", EMPTY_BINS)
    request = open_request(model, X, features, target=target, response_method=response_method,
                           feature_names=feature_names, chunk_size=chunk_size, n_jobs=n_jobs,
                           progress=progress, allow_pairs=False, several=True)
    dataset, mdl, feats = request.dataset, request.model, request.features
    check_spec_keys(bins, dataset, feats, "bins")
    if request.out_of_core:  # errors before any pass over the data
        resolve_backend(mdl, gradient, dataset.values)
    # a derivative needs a continuum: levels and booleans (whose shifted values the
    # model would see cast back to True / False) are ALE's job
    categorical = [j for j in feats if dataset.columns[j].is_categorical
                   or dataset.columns[j].is_boolean]
    if categorical:
        names = [dataset.columns[j].name for j in categorical]
        if features is not None:
            raise InvalidParameterError(
                f"DALE needs numeric features; {names} are categorical or boolean. Use ml.ale "
                "for them (it compares the levels directly).")
        warnings.warn(f"DALE skips the categorical or boolean feature(s) {names}; use ml.ale "
                      "for them.", ModellensWarning, stacklevel=user_stacklevel())
        feats = [j for j in feats if j not in categorical]
        if not feats:
            raise InvalidParameterError("X has no numeric feature for DALE; use ml.ale for "
                                        "categorical ones.")
    specs = [_check_bins(grid_spec(bins, dataset, j), dataset.columns[j].name) for j in feats]
    names = [dataset.columns[j].name for j in feats]
    if request.out_of_core:
        return Effects.stack(_dale_out_of_core(request, feats, specs, names, gradient=gradient,
                                               fd_step=fd_step, min_points=min_points,
                                               confidence=confidence, empty_bins=empty_bins),
                             request.output_labels)

    # the data's missing values are said once, not once per output
    dataset.warn_missing(feats, "DALE bins")
    per_output = request.run_outputs(
        lambda values, part, model: [DerivativePlan(model, values, feats, gradient=gradient,
                                                    fd_step=fd_step, names=names)],
        desc="dale gradients")
    return Effects.stack([
        _dale_effects(dataset, feats, specs, derivatives, backend, output=one.output_name,
                      min_points=min_points, confidence=confidence, empty_bins=empty_bins)
        for ((derivatives, backend),), one in zip(
            per_output, [mdl.view(c) for c in range(mdl.n_outputs)])], request.output_labels)


def _dale_effects(dataset, feats, specs, derivatives, backend, *, output, min_points,
                  confidence, empty_bins):
    """The DALE effects of one output from its derivatives at the data (in memory)."""
    # derivatives are feature-major: each feature's local effects are one contiguous row,
    # kept by its effect for re-binning without a copy.  The feature columns are read
    # through transposed copies of a few at a time: reading the columns of a wide matrix
    # one by one would pass over all of it for every feature, and one copy of all of
    # them would double the memory
    effects = []
    per_block = max(1, _BLOCK_BYTES // (8 * dataset.n_rows))
    for first in range(0, len(feats), per_block):
        block = feats[first:first + per_block]
        columns = np.ascontiguousarray(dataset.values[:, block].T)
        for k, j in enumerate(block):
            c = first + k
            x, kept, g = _observed(dataset, j, columns[k], derivatives[c], backend)
            effects.append(_summarise(
                dataset.columns[j].name, x, g, specs[c], min_points=min_points,
                confidence=confidence, output=output, backend=backend,
                empty_bins=empty_bins, feature_values=kept,
                feature_digest=None if kept is x else _digest(x)))
    return effects


# ------------------------------------------------------------------ out of core
def _dale_out_of_core(request, feats, specs, names, *, gradient, fd_step, min_points,
                      confidence, empty_bins):
    """DALE of Dask data: the derivative plan on every partition, its bins merged.

    Bins are ``int`` (Dask's approximate quantiles; the exact edges of data
    in memory for a feature of few distinct values), edges, or ``"auto"``
    (candidate edges from the approximate quantiles and the range; the
    partition chosen from the merged moments of the local effects between
    them).  Finite differences step by ``fd_step`` times each feature's
    standard deviation over the whole data.
    """
    table, mdl = request.table, request.model
    backend = resolve_backend(mdl, gradient, request.dataset.values)
    bins = [None] * len(feats)
    by_count: dict[int, list[int]] = {}
    for c, spec in enumerate(specs):
        if isinstance(spec, str):
            by_count.setdefault(AUTO_CANDIDATES, []).append(c)
        elif isinstance(spec, int):
            by_count.setdefault(spec, []).append(c)
        else:
            bins[c] = spec
    summaries = table.column_summaries(feats) if by_count else {}
    for n_bins, group in by_count.items():
        edges, _ = table.quantile_edges([feats[c] for c in group], n_bins)
        for c, z in zip(group, edges):
            # few distinct values: the exact edges of data in memory, from their counts
            exact = count_quantile_edges(summaries[feats[c]], n_bins)
            z = z if exact is None else exact
            if isinstance(specs[c], str):
                z = np.unique(np.concatenate([z, np.linspace(z[0], z[-1], n_bins + 1)]))
            bins[c] = z
    scale = None
    if backend == "finite_differences":
        cols = [table.frame.columns[j] for j in feats]
        std, top = table.compute(table.frame[cols].std(ddof=0), table.frame[cols].abs().max())
        scale = scale_rule(np.asarray(std, dtype=float), np.asarray(top, dtype=float))
    design = dict(feats=feats, bins=bins, auto=[isinstance(s, str) for s in specs], names=names,
                  min_points=min_points, confidence=confidence, empty_bins=empty_bins,
                  n_parts=table.n_parts, output=mdl.output_name, backend=backend,
                  gradient=gradient if backend == "callable" else backend, fd_step=fd_step,
                  scale=scale)

    def plans_for(values, part, model):
        return [_DalePlan(model, values, dict(design, output=model.output_name))]

    return [results[0] for results in request.run_outputs(plans_for, desc="dale")]


#: Candidate bins (quantile edges and equal-width edges, each) of ``bins="auto"`` out of core.
AUTO_CANDIDATES = 16


class _DalePlan(DerivativePlan):
    """The derivatives of a partition's rows, summarised as moments per bin of each feature."""

    def __init__(self, mdl, values, design):
        self.design, self.values = design, values
        self.m = values.shape[0]
        if self.m:
            super().__init__(mdl, values, design["feats"], gradient=design["gradient"],
                             fd_step=design["fd_step"], names=design["names"],
                             scale=design["scale"])
        else:
            self.backend, self._gradient = design["backend"], None

    def summarise(self):
        d = self.design
        if self.m:
            derivatives = self._gradient.result if self._gradient is not None \
                else self.derivatives
            checks = self.check_counts() if self._gradient is None else None
        out = []
        for c, (j, z) in enumerate(zip(d["feats"], d["bins"])):
            x = self.values[:, j]
            g = derivatives[c] if self.m else np.empty(0)
            missing = np.isnan(x)
            finite = np.isfinite(g) & ~missing
            keep = finite & (x >= z[0]) & (x <= z[-1])
            out.append(dict(moments=Moments.of(bin_index(x[keep], z), g[keep], z.size - 1),
                            missing=int(missing.sum()),
                            not_finite=int((~missing).sum() - finite.sum()),
                            outside=int(finite.sum() - keep.sum()),
                            sample=feature_sample(x[keep], d["n_parts"]),
                            checks=None if not self.m or checks is None else checks[c]))
        return out

    def merge(self, summaries):
        d = self.design
        merged = []
        for c, z in enumerate(d["bins"]):
            parts = [s[c] for s in summaries]
            checks = [p["checks"] for p in parts if p["checks"] is not None]
            merged.append(dict(
                moments=Moments.merged([p["moments"] for p in parts], z.size - 1),
                sample=np.sort(np.concatenate([p["sample"] for p in parts])),
                checks=np.sum(checks, axis=0) if checks else None,
                **{key: sum(p[key] for p in parts) for key in ("missing", "not_finite",
                                                               "outside")}))
        return merged

    def finish(self, summary):
        d = self.design
        effects = []
        checks = [s["checks"] for s in summary]
        if all(ch is not None for ch in checks):
            self.warn_unreliable(checks, d["names"])
        for c, name in enumerate(d["names"]):
            s = summary[c]
            if s["missing"]:
                warnings.warn(f"{s['missing']} rows have no value in {name!r}; they are left "
                              "out of its DALE bins.", ModellensWarning,
                              stacklevel=user_stacklevel())
            for key, what in (("not_finite", f"the {self.backend} derivative is NaN or inf"),
                              ("outside", "the value lies outside the bin edges")):
                if s[key]:
                    warnings.warn(f"{s[key]} rows of {name!r} are left out of its DALE bins: "
                                  f"{what}.", ModellensWarning,
                                  stacklevel=user_stacklevel())
            edges, moments = d["bins"][c], s["moments"]
            if d["auto"][c]:
                edges, moments = auto_bins_from_moments(edges, moments,
                                                        min_points=d["min_points"])
            common = dict(feature=name, method="dale", kind="numeric",
                          feature_values=s["sample"], output=d["output"], local_effects=None,
                          extra={"min_points": d["min_points"], "gradient": self.backend,
                                 "empty_bins": d["empty_bins"]})
            effects.append(_curve(name, edges, moments.stats(), confidence=d["confidence"],
                                  empty_bins=d["empty_bins"], common=common))
        return effects


def _digest(values) -> int:
    """CRC-32 of an array's float64 values (contiguous copies are hashed as they are)."""
    return zlib.crc32(np.ascontiguousarray(values, dtype=np.float64).view(np.uint8).data)


#: Bytes of the transposed copy of feature columns that DALE reads at a time.
_BLOCK_BYTES = 16 * 2**20


# --------------------------------------------------------------------------
def _observed(dataset, j, column, derivative, backend):
    """Feature values and derivatives of the rows where both are known.

    ``column`` is a contiguous copy of the feature's column.  Returns the
    values to compute with, the values the effect keeps (a view of the data
    when every row takes part, so they are not stored twice) and the
    derivatives.
    """
    name = dataset.columns[j].name
    missing = np.isnan(column)
    if missing.all():
        raise InvalidParameterError(f"feature {name!r} has no non-missing values; DALE needs "
                                    "data in it.")
    g = derivative
    x = column
    kept = None
    if missing.any():
        x = dataset.column_values(j, column=column)  # warned by dale()
        g = g[~missing]
    finite = np.isfinite(g)
    if not finite.all():
        if not finite.any():
            raise ModelError(f"the {backend} derivative for {name!r} is NaN or inf at every row.")
        warnings.warn(f"the {backend} derivative for {name!r} is NaN or inf at "
                      f"{int((~finite).sum())} of {g.size} rows (missing values in other "
                      "features?); they are left out of its DALE bins.", ModellensWarning,
                      stacklevel=user_stacklevel())
        x, g = x[finite], g[finite]
    elif not missing.any():
        kept = dataset.observed_labels(j)
    return x, (x if kept is None else kept), g


def _check_options(min_points, confidence):
    check_int(min_points, "min_points", low=1, what="a positive int")
    check_level(confidence)


def _check_bins(spec, name):
    """``"auto"``, an int >= 1, or validated edges (float array)."""
    if isinstance(spec, str):
        if spec != "auto":
            raise InvalidParameterError(f"bins must be an int, an array of edges or 'auto', "
                                        f"got {spec!r}.")
        return spec
    if is_integer(spec):
        if spec < 1:
            raise InvalidParameterError(f"bins must be a positive int, got {spec} (feature "
                                        f"{name!r}).")
        return int(spec)
    return check_edges(spec, name)


def _summarise(name, x, g, spec, *, min_points, confidence, output, backend,
               empty_bins="zero", feature_values=None, feature_digest=None):
    """Bin the local effects ``g`` observed at ``x`` and build the effect.

    ``feature_values`` are the values the effect keeps (default: ``x``); they
    must equal ``x``, and may be a view of the data where ``x`` is a copy, with
    ``feature_digest`` their CRC-32 then.
    """
    k = None
    if isinstance(spec, str):
        edges, k = auto_bins(x, g, min_points=min_points)
    elif isinstance(spec, int):
        edges = quantile_edges(x, spec)
    else:
        edges = spec
    common = dict(feature=name, method="dale", kind="numeric",
                  feature_values=x if feature_values is None else feature_values,
                  output=output, local_effects=g, feature_digest=feature_digest,
                  extra={"min_points": min_points, "gradient": backend,
                         "empty_bins": empty_bins})
    label = f"{confidence:.0%} confidence band"
    if edges.size < 2:  # a constant feature: no interval to accumulate over
        zero = np.zeros(1)
        empty = np.empty(0)
        return DaleEffect(grid=edges, values=zero, std=empty, counts=np.empty(0, np.intp),
                          band=Band(zero, zero, confidence, label),
                          bins=Bins(counts=np.empty(0, np.intp), std=empty, effects=empty,
                                    mean_derivative=empty), **common)

    gb = g
    if k is None:
        xb = x
        if not isinstance(spec, int):
            inside = inside_edges(x, edges, name, "DALE bins")
            if not inside.all():
                xb, gb = x[inside], g[inside]
        k = bin_index(xb, edges)
    return _curve(name, edges, bin_stats(k, gb, edges.size - 1), confidence=confidence,
                  empty_bins=empty_bins, common=common)


def _curve(name, edges, stats, *, confidence, empty_bins, common):
    """The effect from the bin statistics ``(mean, std, counts, var_mean)`` of derivatives."""
    mean, std, counts, var_mean = stats
    label = f"{confidence:.0%} confidence band"
    if not (counts > 0).all():
        mean = empty_bin_slopes(mean, counts, edges, name, empty_bins, "dale")
    width = np.diff(edges)
    bin_effects = mean * width
    values, variance = accumulate(bin_effects, counts, width ** 2 * var_mean)
    half = band_half_width(variance, confidence, name)
    return DaleEffect(grid=edges, values=values, std=std, counts=counts,
                      band=Band(values - half, values + half, confidence, label),
                      bins=Bins(counts=counts, std=std, effects=bin_effects,
                                mean_derivative=mean), **common)

