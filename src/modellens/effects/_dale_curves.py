"""DALE's curves from derivatives at the data, and the effect that keeps them for re-binning."""

from __future__ import annotations

import warnings
import zlib
from dataclasses import dataclass
from typing import cast

import numpy as np

from .._validation import (InvalidParameterError, ModellensWarning, check_choice, check_int,
                           check_level, is_integer, user_stacklevel)
from ..models import ModelError
from ..typing import BinsSpec
from ._autobin import auto_bins
from ._grid import DEFAULT_POINTS
from .binning import (EMPTY_BINS, accumulate, band_half_width, bin_index, bin_stats,
                      check_edges, empty_bin_slopes, inside_edges, quantile_edges)
from .result import Band, Bins, Effect

__all__ = ["DaleEffect", "dale_effects", "check_bins", "check_options", "summarise", "curve"]


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
        spec = check_bins(bins, self.feature)
        check_options(min_points, confidence)
        if self.local_effects is None:
            raise InvalidParameterError(
                f"this effect of {self.feature!r} was computed out of core (Dask data) and "
                "keeps no local effects to re-bin; call ml.dale again with the new bins.")
        if self.feature_digest is not None \
                and digest(self.feature_values) != self.feature_digest:
            raise InvalidParameterError(
                f"the data of {self.feature!r} changed after ml.dale computed this effect (X "
                "was modified in place), so its local effects no longer match the feature's "
                "values; run ml.dale again, or pass it a copy of X.")
        return summarise(self.feature, self.feature_values, self.local_effects, spec,
                          min_points=min_points, confidence=confidence, output=self.output,
                          backend=self.extra.get("gradient"), empty_bins=empty_bins,
                          feature_digest=self.feature_digest)


def dale_effects(dataset, feats, specs, derivatives, backend, *, output, min_points,
                  confidence, empty_bins):
    """The DALE effects of one output from its derivatives at the data (in memory)."""
    # derivatives are feature-major: each feature's local effects are one contiguous row,
    # kept by its effect for re-binning without a copy.  The feature columns are read
    # through transposed copies of a few at a time: reading the columns of a wide matrix
    # one by one would pass over all of it for every feature, and one copy of all of
    # them would double the memory (the block: at most an eighth of the data, as the
    # summary of a feature holds about three columns of it at once)
    effects = []
    block_bytes = min(_BLOCK_BYTES, dataset.values.nbytes // 8)
    per_block = max(1, block_bytes // (8 * dataset.n_rows))
    for first in range(0, len(feats), per_block):
        block = feats[first:first + per_block]
        columns = np.ascontiguousarray(dataset.values[:, block].T)
        for k, j in enumerate(block):
            c = first + k
            x, kept, g = observed(dataset, j, columns[k], derivatives[c], backend)
            effects.append(summarise(
                dataset.columns[j].name, x, g, specs[c], min_points=min_points,
                confidence=confidence, output=output, backend=backend,
                empty_bins=empty_bins, feature_values=kept,
                feature_digest=None if kept is x else digest(x)))
    return effects


def digest(values) -> int:
    """CRC-32 of an array's float64 values (contiguous copies are hashed as they are)."""
    return zlib.crc32(np.ascontiguousarray(values, dtype=np.float64).view(np.uint8).data)


#: Bytes of the transposed copy of feature columns that DALE reads at a time.
_BLOCK_BYTES = 16 * 2**20


# --------------------------------------------------------------------------
def observed(dataset, j, column, derivative, backend):
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


def check_options(min_points, confidence):
    check_int(min_points, "min_points", low=1, what="a positive int")
    check_level(confidence)


def check_bins(spec, name):
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


def summarise(name, x, g, spec, *, min_points, confidence, output, backend,
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
    return curve(name, edges, bin_stats(k, gb, edges.size - 1), confidence=confidence,
                  empty_bins=empty_bins, common=common)


def curve(name, edges, stats, *, confidence, empty_bins, common):
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
