"""The parts of an effect (its band and bins) and how the parts of several outputs stack.

Moved out of :mod:`modellens.effects.result` (which re-exports :class:`Band` and
:class:`Bins`) to keep that module about the results themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

__all__ = ["Band", "Bins"]


@dataclass(frozen=True, eq=False)
class Band:
    """An interval around a curve, at its grid points.

    Attributes
    ----------
    lower, upper : ndarray
        The limits, shaped like ``Effect.values``.
    level : float or None
        Coverage of a confidence band (0.95 for 95%); None for a band that is
        a spread, not a confidence statement (an M-plot's +/- one standard
        deviation of the predictions).
    label : str
        How a legend names it.

    Examples
    --------
    ALE curves carry a 95% confidence band; a linear model's is a thin one:

    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(400, 2))
    >>> band = ml.ale(lambda A: 2 * A[:, 0] + A[:, 1], X, bins=5)["x0"].band
    >>> band.level, band.label
    (0.95, '95% confidence band')
    >>> bool(np.all(band.lower <= band.upper))
    True
    """

    lower: np.ndarray
    upper: np.ndarray
    level: float | None
    label: str

    def __repr__(self):
        return f"Band(level={self.level!r}, label={self.label!r}, shape={np.shape(self.lower)})"


@dataclass(frozen=True, eq=False)
class Bins:
    """Quantities of the intervals between consecutive grid points (the cells of a pair).

    ALE and DALE estimate their curves from the local effects of the points in
    each bin (between two edges, between two adjacent levels, or a 2-D cell);
    these are the per-bin numbers, one fewer than the grid points along each
    axis.

    Attributes
    ----------
    counts : ndarray of int
        Local effects (data points) in each bin.
    std : ndarray
        Heterogeneity: standard deviation (ddof 0) of the local effects in each
        bin; NaN for an empty bin.
    effects : ndarray or None
        The accumulated step of each bin (ALE: mean difference; DALE: mean
        derivative times width).
    mean_derivative : ndarray or None
        DALE: mean partial derivative in each bin.

    Examples
    --------
    Five quantile bins of 400 uniform points hold 80 points each; a linear
    model's local effects do not vary inside a bin (``std`` is 0):

    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(400, 2))
    >>> bins = ml.ale(lambda A: 2 * A[:, 0] + A[:, 1], X, bins=5)["x0"].bins
    >>> bins.counts
    array([80, 80, 80, 80, 80])
    >>> bool(np.allclose(bins.std, 0))
    True
    """

    counts: np.ndarray
    std: np.ndarray
    effects: np.ndarray | None = None
    mean_derivative: np.ndarray | None = None

    def __repr__(self):
        return f"Bins(shape={np.shape(self.counts)}, total={int(np.sum(self.counts))})"


def _same(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        try:
            return np.array_equal(a, b, equal_nan=True)
        except TypeError:  # labels of objects
            return np.array_equal(a, b)
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _stack_outputs(parts):
    """Per-output values stacked on a last axis (a band's or bins' fields one by one)."""
    first = parts[0]
    if first is None:
        return None
    if isinstance(first, (Band, Bins)):
        kwargs = {}
        for g in fields(first):
            values = [getattr(p, g.name) for p in parts]
            per_output = g.name in ("lower", "upper", "std", "effects", "mean_derivative")
            kwargs[g.name] = _stack_outputs(values) if per_output else values[0]
        return type(first)(**kwargs)
    return np.stack([np.asarray(p) for p in parts], axis=-1)


#: Entries of ``Effect.extra`` that are tuples of per-output arrays (a pair's main effects).
_PER_OUTPUT_EXTRA = ("main_effects",)


def _stack_extra(parts: list, outputs: list, feature) -> dict:
    """The ``extra`` of several outputs: per-output entries stacked, the rest shared."""
    out = {}
    for key in parts[0]:
        values = [p.get(key) for p in parts]
        if key in _PER_OUTPUT_EXTRA:
            out[key] = tuple(_stack_outputs(list(v)) for v in zip(*values))
        elif all(_same(values[0], v) for v in values[1:]):
            out[key] = values[0]
        else:
            raise ValueError(
                f"the outputs {outputs} of {feature!r} differ in extra[{key!r}]; ask for one "
                "output at a time with target=.")
    return out


def _take_output(value, c):
    if value is None:
        return None
    if isinstance(value, (Band, Bins)):
        kwargs = {}
        for g in fields(value):
            part = getattr(value, g.name)
            per_output = g.name in ("lower", "upper", "std", "effects", "mean_derivative")
            kwargs[g.name] = _take_output(part, c) if per_output else part
        return type(value)(**kwargs)
    return np.asarray(value)[..., c]
