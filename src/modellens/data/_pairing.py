"""Rows explained together with other rows (background, training data) under one schema."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validation import InvalidParameterError
from ._columns import _check_unique_names
from ._dataset import Dataset
from ._tables import as_pandas_pair

__all__ = ["encode_with", "unknown_levels", "check_levels"]


def encode_with(X, other, *, feature_names=None, other_name: str = "background"):
    """Encode ``X`` and ``other`` (rows with the same columns) under one schema.

    Category levels are learned from the data, so when either holds
    categorical or text columns both are encoded together: levels seen only in
    ``other`` get a code too, and ``other`` reaches the model with the dtypes
    of ``X`` (category order, ordered flag, string dtype).  Numeric data are
    encoded with ``X``'s schema.

    Returns
    -------
    dataset : Dataset
        ``X``'s rows first, then ``other``'s.
    n : int
        The number of rows of ``X``.

    ``other_name`` is what error messages call ``other`` (the caller's argument name).
    """
    X, other = as_pandas_pair(X, other, other_name=other_name)
    for what, rows in (("X", X), (other_name, other)):
        if hasattr(rows, "__len__") and len(rows) == 0:
            raise InvalidParameterError(f"{what} has no rows: pass at least one row.")
        if isinstance(rows, pd.DataFrame):
            _check_unique_names(rows.columns, what)
    if isinstance(X, pd.DataFrame) and isinstance(other, pd.DataFrame):
        names, other_names = [str(c) for c in X.columns], [str(c) for c in other.columns]
        if sorted(names) != sorted(other_names):
            raise InvalidParameterError(f"{other_name} columns {other_names} do not match the "
                                        f"columns of X {names}.")
        textual = [c for c in X.columns if _is_textual(X[c].dtype)]
        if textual:
            other = other.set_axis(other_names, axis=1)[names].set_axis(X.columns, axis=1)
            cast = {}
            for c in textual:
                dtype = X[c].dtype
                if isinstance(dtype, pd.CategoricalDtype):
                    check_levels(c, other[c], dtype, other_name)
                cast[c] = dtype
            combined = pd.concat([X, other.astype(cast)], ignore_index=True)
            return Dataset.from_data(combined, feature_names=feature_names), len(X)
    elif isinstance(X, np.ndarray) and isinstance(other, np.ndarray) and X.ndim == other.ndim == 2 \
            and (X.dtype.kind not in "biuf" or other.dtype.kind not in "biuf"):
        if X.shape[1] != other.shape[1]:
            raise InvalidParameterError(f"{other_name} has {other.shape[1]} columns but X has "
                                        f"{X.shape[1]}.")
        combined = np.concatenate([X.astype(object), other.astype(object)])
        return Dataset.from_data(combined, feature_names=feature_names), len(X)
    dataset = Dataset.from_data(X, feature_names=feature_names)
    if dataset.is_frame and any(c.is_categorical for c in dataset.columns) \
            and not hasattr(other, "columns"):
        raise InvalidParameterError(
            f"X is a DataFrame with categorical columns; pass {other_name} as a DataFrame with "
            "the same columns so that categories can be matched.")
    extra = Dataset.from_data(other, like=dataset)
    values = np.concatenate([dataset.values, extra.values])
    return Dataset(values, dataset.columns, dataset.is_frame, dataset.column_labels), len(X)


def check_levels(column, values, dtype, other_name: str) -> None:
    """Refuse ``values`` (``other_name``'s column) holding levels that are not categories of
    ``dtype`` (``X[column]``'s categorical dtype): cast to it, they would become missing."""
    unknown = unknown_levels(values, dtype.categories)
    if unknown:
        raise InvalidParameterError(
            f"{other_name} column {column!r} holds levels {unknown} that are not "
            f"categories of X[{column!r}] ({list(dtype.categories)}).")


def unknown_levels(values, categories) -> list:
    """The distinct non-missing ``values`` that are not among ``categories``, in order of appearance.

    One hash lookup per distinct value (the set of categories is built once),
    so pairing tables of many levels costs time linear in their size.
    """
    present = pd.unique(pd.Series(values).dropna().astype(object))
    known = set(categories)
    return [v for v in present if v not in known]


def _is_textual(dtype) -> bool:
    return isinstance(dtype, pd.CategoricalDtype) or not pd.api.types.is_numeric_dtype(dtype)
