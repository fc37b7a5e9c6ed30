"""Features and rows as the user names them: positions, labels, samples, one-row Series."""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from .._validation import InvalidParameterError, check_random_state, is_integer
__all__ = ["feature_position", "sample_rows", "row_labels", "row_as_frame"]


def feature_position(feature, names, labels=None) -> int:
    """Column position of ``feature``: the one lookup rule of every result and method.

    An integer is a column label when the frame has integer labels (``labels``
    holds a label equal to it), a position otherwise; anything else is matched
    against the names (the labels' ``str``).

    Parameters
    ----------
    feature : str or int
    names : list of str
        The feature names.
    labels : list, optional
        A DataFrame's own column labels (None for arrays).
    """
    d = len(names)
    if is_integer(feature):
        if labels is not None and any(is_integer(label) for label in labels):
            for j, label in enumerate(labels):
                if is_integer(label) and int(label) == int(feature):
                    return j
            raise InvalidParameterError(
                f"no column is labelled {feature}: X has integer column labels {list(labels)}, "
                "so an integer names a column (as in X[label]), not a position.")
        j = int(feature)
        if not -d <= j < d:
            raise InvalidParameterError(
                f"feature index {feature} is out of range for {d} features "
                f"(valid names: {list(names)}).")
        return j % d
    if not isinstance(feature, str):
        raise InvalidParameterError(f"a feature is a column name or an integer position, got "
                                    f"{feature!r} of type {type(feature).__name__}.")
    try:
        return list(names).index(feature)
    except ValueError:
        raise InvalidParameterError(f"unknown feature {feature!r}; valid names are "
                                    f"{list(names)}.") from None


def sample_rows(n: int, sample, random_state, *, name: str = "sample"):
    """Sorted positions of a random subsample of ``n`` rows, or None for all of them.

    ``sample`` is a count (at least 1) or a fraction in (0, 1]; ``random_state``
    a seed or a ``numpy.random.Generator``.
    """
    if sample is None:
        return None
    if is_integer(sample):
        size = int(sample)
        if size < 1:
            raise InvalidParameterError(f"{name} must be a positive count or a fraction in "
                                        f"(0, 1], got {sample}.")
    # typeshed's numbers.Real declares no arithmetic or comparison: hence the ignores
    elif isinstance(sample, numbers.Real) and not isinstance(sample, bool) \
            and 0 < sample <= 1:  # type: ignore[operator]
        size = max(1, int(round(sample * n)))  # type: ignore[call-overload]
    else:
        raise InvalidParameterError(f"{name} must be a positive count or a fraction in (0, 1], "
                                    f"got {sample!r}.")
    if size >= n:
        return None
    rng = check_random_state(random_state)
    return np.sort(rng.choice(n, size=size, replace=False))


def row_labels(X) -> np.ndarray | None:
    """The labels of ``X``'s rows in its index, or None where they are the positions.

    A pandas DataFrame's index (a Series' name for the one row it holds, as
    ``df.iloc[i]`` gives it); None for arrays, other tables and the default
    index ``0 .. n - 1``, whose labels are the positions.
    """
    if isinstance(X, pd.Series):
        return None if X.name is None else np.asarray(pd.Index([X.name]))
    if not isinstance(X, pd.DataFrame):
        return None
    index = X.index
    if isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1:
        return None
    return np.asarray(index)


def row_as_frame(X, reference=None, names=None):
    """``X`` unchanged, or a Series read as one row (``df.iloc[i]``) or one column.

    A Series whose index holds the feature names (those of ``reference``, the
    background / training frame, else ``names``, the model's own) is that
    row, as shap reads it: a one-row frame whose columns take the dtypes of
    ``reference`` where it has them.  Without names to match, a Series whose
    index holds distinct text labels is a row, and one indexed by row
    positions or labels (``df[name]``) is a column, as every method reads it.
    A Series that is neither the names' row nor the one column of a
    one-feature model is an error saying how to pass it.
    """
    if not isinstance(X, pd.Series):
        return X
    if isinstance(reference, pd.DataFrame):
        names = list(reference.columns)
    if names is not None:
        known = [str(n) for n in names]
        if _same_names(X.index, known):
            return _one_row(X, reference)
        if len(known) == 1 and (X.name is None or _same_names([X.name], known)):
            return X  # the one column of a one-feature model
        shown = [str(i) for i in X.index[:6]] + (["..."] if len(X) > 6 else [])
        raise InvalidParameterError(
            f"X is a pandas Series whose index {shown} is not the feature names {known}, so "
            "it is neither one row nor the column of a one-feature model: pass one row as a "
            "Series indexed by the feature names (df.iloc[i]) or a one-row DataFrame "
            "(df.iloc[[i]]), and columns as a DataFrame (df[[name, ...]]).")
    width = getattr(reference, "shape", (0, 0))[-1] if reference is not None else None
    labels = list(X.index)
    if (width is not None and len(X) == width and len(X) > 1) or (
            X.index.is_unique and labels and all(isinstance(i, str) for i in labels)):
        return _one_row(X, reference)
    return X


def _same_names(index, known: list) -> bool:
    # LightGBM stores a name with its spaces as "_" (see models.lightgbm_names)
    def key(name):
        return str(name).replace(" ", "_")
    return len(index) == len(known) and sorted(map(key, index)) == sorted(map(key, known))


def _one_row(series: pd.Series, reference) -> pd.DataFrame:
    """The Series as a one-row frame: its dtype is the row's common one (often object).

    The columns take the dtypes of ``reference`` where it has them; columns it
    lacks are left to :func:`encode_with`'s error about them.
    """
    row = series.to_frame().T
    if isinstance(reference, pd.DataFrame):
        shared = [c for c in row.columns if c in reference.columns]
        return row.astype(reference.dtypes[shared].to_dict())
    return row.infer_objects()
