"""Differential accumulated local effects (DALE)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np

from .._validation import InvalidParameterError, ModellensWarning, check_choice, user_stacklevel
from ..engine import feature_sample, open_request
from ..typing import BinsSpec, DataLike, FeatureSpec, ModelLike, TargetSpec
from ._autobin import auto_bins_from_moments
from ._dale_curves import DaleEffect, check_bins, check_options, curve, dale_effects
from ._derivatives import DerivativePlan, resolve_backend, scale_rule
from ._design import dale_bins
from ._facts import facts_of
from ._grid import DEFAULT_POINTS, check_spec_keys, grid_spec
from .binning import EMPTY_BINS, Moments, bin_index
from .result import Effects

__all__ = ["dale", "DaleEffect"]


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
        the local effects (see :func:`modellens.effects._autobin.auto_bins`:
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
    check_options(min_points, confidence)
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
    asked = [check_bins(grid_spec(bins, dataset, j), dataset.columns[j].name) for j in feats]
    specs = dale_bins(facts_of(request), feats, asked)
    names = [dataset.columns[j].name for j in feats]
    if request.out_of_core:
        return Effects.stack(_dale_out_of_core(
            request, feats, specs, names, auto=[isinstance(a, str) for a in asked],
            gradient=gradient, fd_step=fd_step, min_points=min_points, confidence=confidence,
            empty_bins=empty_bins), request.output_labels)

    # the data's missing values are said once, not once per output
    dataset.warn_missing(feats, "DALE bins")
    per_output = request.run_outputs(
        lambda values, part, model: [DerivativePlan(model, values, feats, gradient=gradient,
                                                    fd_step=fd_step, names=names)],
        desc="dale gradients")
    return Effects.stack([
        dale_effects(dataset, feats, specs, derivatives, backend, output=one.output_name,
                      min_points=min_points, confidence=confidence, empty_bins=empty_bins)
        for ((derivatives, backend),), one in zip(
            per_output, [mdl.view(c) for c in range(mdl.n_outputs)])], request.output_labels)


# ------------------------------------------------------------------ out of core
def _dale_out_of_core(request, feats, bins, names, *, auto, gradient, fd_step, min_points,
                      confidence, empty_bins):
    """DALE of Dask data: the derivative plan on every partition, its bins merged.

    ``bins``: each feature's edges from the design step (:func:`._design.dale_bins`),
    candidates where ``auto`` (the partition then chosen from the merged
    moments of the local effects between them).  Finite differences step by
    ``fd_step`` times each feature's standard deviation over the whole data.
    """
    table, mdl = request.table, request.model
    backend = resolve_backend(mdl, gradient, request.dataset.values)
    scale = None
    if backend == "finite_differences":
        cols = [table.frame.columns[j] for j in feats]
        std, top = table.compute(table.frame[cols].std(ddof=0), table.frame[cols].abs().max())
        scale = scale_rule(np.asarray(std, dtype=float), np.asarray(top, dtype=float))
    design = dict(feats=feats, bins=bins, auto=auto, names=names,
                  min_points=min_points, confidence=confidence, empty_bins=empty_bins,
                  n_parts=table.n_parts, output=mdl.output_name, backend=backend,
                  gradient=gradient if backend == "callable" else backend, fd_step=fd_step,
                  scale=scale)

    def plans_for(values, part, model):
        return [_DalePlan(model, values, dict(design, output=model.output_name))]

    return [results[0] for results in request.run_outputs(plans_for, desc="dale")]


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
            effects.append(curve(name, edges, moments.stats(), confidence=d["confidence"],
                                  empty_bins=d["empty_bins"], common=common))
        return effects


