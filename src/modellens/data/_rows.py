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


def row_as_frame(X, reference):
    """``X`` unchanged, or a Series (one row, as ``df.iloc[i]`` gives it) as a one-row frame.

    The Series' index holds the column names and its dtype is the rows' common
    one (often object), so the columns take the dtypes of ``reference`` (the
    background / training frame) where it has them; columns it lacks are left
    to :func:`encode_with`'s error about them.
    """
    if not isinstance(X, pd.Series):
        return X
    X = X.to_frame().T
    if isinstance(reference, pd.DataFrame):
        shared = [c for c in X.columns if c in reference.columns]
        return X.astype(reference.dtypes[shared].to_dict())
    return X.infer_objects()
