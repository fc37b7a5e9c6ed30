"""The grid or bins asked for a feature, and explicit grid points (every effect method)."""

from __future__ import annotations

import warnings

import numpy as np

from .._validation import InvalidParameterError, ModellensWarning, is_integer, user_stacklevel
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


def check_spec_keys(spec, dataset: Dataset, features, name: str) -> None:
    """A dict ``grid=`` / ``bins=`` names features (an unknown one is an error) that are asked for.

    An entry for a feature (or a pair) that is not explained is left unused:
    a warning says so, since it is most often a feature the call forgot.  A
    feature's own entry is used by the pairs it is part of too.
    """
    if not isinstance(spec, dict):
        return
    asked = set(features) | {j for f in features if isinstance(f, tuple) for j in f}
    unused = []
    for key in spec:
        # index_of raises for a name that is not a column (a misspelling)
        pos = tuple(dataset.index_of(f) for f in key) if isinstance(key, tuple) \
            else dataset.index_of(key)
        if pos not in asked:
            unused.append(key)
    if unused:
        shown = [dataset.columns[f].name if not isinstance(f, tuple) else
                 tuple(dataset.columns[j].name for j in f) for f in features]
        warnings.warn(f"{name}= has entries for {unused}, which are not explained (features: "
                      f"{shown}); they are not used: add them to features= or drop the "
                      "entries.", ModellensWarning, stacklevel=user_stacklevel())


def unseen_text_levels(dataset: Dataset, features, grid) -> dict:
    """Grid points of text columns that their rows do not hold: ``{column: [values]}``.

    A partial dependence of a few rows at the levels of many (the report's
    rows at its sample's levels) sets a text column to values these rows
    lack; they are levels the column can take (see :meth:`Dataset.with_text_levels`).
    """
    found: dict = {}
    for feat in features:
        specs = pair_specs(dataset, grid, feat) if isinstance(feat, tuple) else \
            (grid_spec(grid, dataset, feat),)
        for j, spec in zip(feat if isinstance(feat, tuple) else (feat,), specs):
            col = dataset.columns[j]
            if is_integer(spec) or not col.is_categorical or col.levels is None \
                    or col.levels.dtype != object or hasattr(col.dtype, "categories"):
                continue
            known = set(col.levels.tolist()) | set(found.get(j, []))
            points = np.asarray(spec, dtype=object).ravel().tolist()
            new = [p for p in dict.fromkeys(points) if p not in known and not _missing(p)]
            if new:
                found[j] = found.get(j, []) + new
    return found


def _missing(value) -> bool:
    try:
        return bool(value != value) or value is None
    except (TypeError, ValueError):
        return False


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
