"""The grid or bins asked for a feature, and explicit grid points (every effect method)."""

from __future__ import annotations

import numpy as np

from .._validation import InvalidParameterError
from ..data import Dataset


#: Grid points (PD, M-plots) or bins (ALE, DALE) per feature when none are given.
DEFAULT_POINTS = 20


def grid_spec(grid, dataset: Dataset, feature):
    """The grid asked for one feature: ``grid`` itself or its entry in a dict."""
    if isinstance(grid, dict):
        names = {dataset.index_of(k) if not isinstance(k, tuple) else
                 tuple(dataset.index_of(f) for f in k): v for k, v in grid.items()}
        return names.get(feature, DEFAULT_POINTS)
    return grid


def pair_specs(dataset: Dataset, bins, pair):
    """The specification of both axes of a pair: its own dict entry, else each feature's.

    A tuple of two gives one specification per axis; anything else (an int,
    a list or array of points) applies to both.
    """
    if isinstance(bins, dict):
        pairs = {tuple(dataset.index_of(f) for f in k) for k in bins if isinstance(k, tuple)}
        if pair not in pairs:
            return grid_spec(bins, dataset, pair[0]), grid_spec(bins, dataset, pair[1])
    spec = grid_spec(bins, dataset, pair)
    if isinstance(spec, tuple):
        if len(spec) != 2:
            raise InvalidParameterError(
                f"the grid / bins of a pair must be one specification or a tuple of two, "
                f"got a tuple of {len(spec)}.")
        return spec
    return spec, spec


def explicit_grid(dataset: Dataset, j: int, spec):
    """Encoded values and labels of the grid points ``spec`` given for column ``j``."""
    col = dataset.columns[j]
    points = np.asarray(spec)
    if points.ndim != 1 or points.size == 0:
        raise InvalidParameterError(
            f"the grid for {col.name!r} must be an int or a 1-D array of points.")
    if col.is_categorical:
        assert col.levels is not None  # every categorical column has its levels
        lookup = {v: i for i, v in enumerate(col.levels.tolist())}
        unknown = [p for p in points.tolist() if p not in lookup]
        if unknown:
            raise InvalidParameterError(
                f"grid levels {unknown} are not levels of {col.name!r} "
                f"({list(col.levels)}).")
        values = np.array([lookup[p] for p in points.tolist()], dtype=float)
        return values, col.levels[values.astype(np.intp)]
    try:
        values = points.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"the grid for {col.name!r} must be numeric.") from exc
    if not np.isfinite(values).all():
        raise InvalidParameterError(f"the grid for {col.name!r} holds NaN or inf.")
    return values, values
