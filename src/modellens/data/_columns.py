"""One column's schema, and its values encoded to floats and decoded back for the model."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._validation import InvalidParameterError, ModellensWarning, user_stacklevel

__all__ = ["Column", "NUMERIC", "CATEGORICAL"]


NUMERIC = "numeric"
CATEGORICAL = "categorical"


@dataclass(frozen=True)
class Column:
    """Schema of one feature.

    Attributes
    ----------
    name : str
        Column name (``"x0"``, ``"x1"``, ... for arrays).
    kind : {"numeric", "categorical"}
        Categorical columns are stored as level codes.
    levels : ndarray or None
        Category labels (codes index into it), categorical columns only.
    ordered : bool
        True for an ordered pandas Categorical; such columns keep their
        level order instead of one learned from the data.
    dtype : object
        The dtype the column had, used when rows go back to the model.
    missing : object
        What stands for a missing value in a text or object column, given back
        to the model where a row's code is NaN: the user's own marker (the
        first missing value the column holds: ``np.nan``, ``None``,
        ``pd.NA``, ``pd.NaT``), so that a pipeline's imputer sees what it
        was fit on; ``np.nan`` (pandas' own) for a column without one.  Other
        dtypes write their own missing value (NaN, ``pd.NA``).
    """

    name: str
    kind: str
    levels: np.ndarray | None = None
    ordered: bool = False
    dtype: Any = None  # a numpy dtype or a pandas extension dtype
    # (NaN is not equal to itself: the marker takes no part in comparing schemas)
    missing: Any = field(default=np.nan, compare=False)

    @property
    def is_categorical(self) -> bool:
        return self.kind == CATEGORICAL

    @property
    def is_boolean(self) -> bool:
        """A numeric column of booleans (coded 0 / 1; shown as False / True)."""
        try:
            return self.kind == NUMERIC and self.dtype is not None \
                and pd.api.types.is_bool_dtype(self.dtype)
        except TypeError:
            return False


def _encode_series(name, series: pd.Series, ref: Column | None):
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        levels = np.asarray(dtype.categories, dtype=object)
        if ref is not None and ref.is_categorical:
            assert ref.levels is not None  # every categorical column has its levels
            codes = _codes_for(series.astype(object), ref.levels, name)
            return ref, codes
        codes = series.cat.codes.to_numpy().astype(np.float64)
        codes[codes < 0] = np.nan
        col = Column(name, CATEGORICAL, levels, bool(dtype.ordered), dtype)
        return col, codes
    if pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        raise InvalidParameterError(
            f"column {name!r} holds dates or durations ({dtype}); modellens explains numeric "
            "and categorical features. Give the model (and modellens) numbers instead, for "
            f"example (X[{name!r}] - X[{name!r}].min()).dt.days, or its parts (year, day of "
            "year) as separate columns.")
    if pd.api.types.is_bool_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype):
        vals = series.to_numpy(dtype=np.float64, na_value=np.nan)
        col = ref or Column(name, NUMERIC, dtype=dtype)
        return col, vals
    if pd.api.types.is_numeric_dtype(dtype):
        vals = series.to_numpy(dtype=np.float64, na_value=np.nan)
        if ref is not None and ref.is_categorical and _numeric_levels(ref):
            # numbers the explained data's schema (the model) reads as levels
            assert ref.levels is not None
            codes = pd.Index(ref.levels.astype(np.float64)).get_indexer(
                pd.Index(vals)).astype(np.float64)
            unknown = (codes < 0) & ~np.isnan(vals)
            if unknown.any():
                raise InvalidParameterError(
                    f"column {name!r} holds levels {sorted(set(vals[unknown].tolist()))} that "
                    f"the explained data does not have (known levels: {ref.levels.tolist()}).")
            codes[np.isnan(vals)] = np.nan
            return ref, codes
        col = ref or Column(name, NUMERIC, dtype=dtype)
        return col, vals
    # strings and objects: categorical with sorted levels
    obj = series.astype(object)
    missing = pd.isna(obj).to_numpy()
    if ref is not None and ref.is_categorical:
        assert ref.levels is not None  # every categorical column has its levels
        return ref, _codes_for(obj, ref.levels, name)
    present = pd.unique(obj[~missing])
    try:
        levels = np.asarray(sorted(present), dtype=object)
    except TypeError:  # mixed types cannot be sorted; keep first-seen order
        levels = np.asarray(present, dtype=object)
    codes = _codes_for(obj, levels, name)
    col = Column(name, CATEGORICAL, levels, False, dtype, missing_marker(obj, missing))
    return col, codes


def missing_marker(values: pd.Series, missing: np.ndarray | None = None):
    """The first missing value of an object column as it is (None, NaN, pd.NA, NaT); NaN if none.

    A row's code says only that its value is missing; the marker says which
    object the user wrote for it, given back to the model (one per column).
    """
    if missing is None:
        missing = pd.isna(values).to_numpy()
    first = np.flatnonzero(missing)[:1]
    if not first.size:
        return np.nan
    kinds = dict.fromkeys(_marker_kind(v) for v in values[missing])
    if len(kinds) > 1:
        # one marker goes back to the model for every missing value: a model that reads
        # None and NaN differently (SimpleImputer(missing_values=np.nan) takes None for a
        # level) would be explained at other values than the user's
        warnings.warn(
            f"column {values.name!r} writes its missing values in {len(kinds)} ways "
            f"({', '.join(kinds)}); the model is given the first ({next(iter(kinds))}) for "
            "every one of them, which it may read differently from the others. Write them "
            "one way first, e.g. X[col] = X[col].where(X[col].notna(), np.nan).",
            ModellensWarning, stacklevel=user_stacklevel())
    return values.iloc[first[0]]


def _marker_kind(value) -> str:
    """What stands for a missing value: None, NaN, pd.NA, NaT (or its type's name)."""
    if value is None:
        return "None"
    if value is pd.NA:
        return "pd.NA"
    if value is pd.NaT or isinstance(value, (np.datetime64, np.timedelta64)):
        return "NaT"
    if isinstance(value, (float, np.floating)):
        return "NaN"
    return type(value).__name__


def _codes_for(obj: pd.Series, levels: np.ndarray, name) -> np.ndarray:
    missing = pd.isna(obj).to_numpy()
    codes = pd.Categorical(obj, categories=pd.Index(levels, dtype=object)).codes.astype(np.float64)
    unknown = (codes < 0) & ~missing
    if unknown.any():
        found = sorted(map(str, set(obj[unknown].tolist())))
        raise InvalidParameterError(
            f"column {name!r} holds levels {found} that the explained data does not have "
            f"(known levels: {list(levels)})."
        )
    codes[missing] = np.nan
    return codes


def _numeric_levels(col: Column) -> bool:
    """A categorical column of numbers that reaches the model as numbers (not a Categorical)."""
    return col.levels is not None and col.levels.dtype.kind in "biuf" \
        and not isinstance(col.dtype, pd.CategoricalDtype)


def _level_values(x: np.ndarray, col: Column) -> np.ndarray:
    """Codes of a categorical column of numbers as the numbers (NaN where missing)."""
    assert col.levels is not None
    missing = np.isnan(x)
    out = col.levels.astype(np.float64)[np.where(missing, 0, x).astype(np.intp)]
    out[missing] = np.nan
    return out


def _decode_column(x: np.ndarray, col: Column):
    if col.is_categorical and _numeric_levels(col):
        return _decode_column(_level_values(x, col), Column(col.name, NUMERIC, dtype=col.dtype))
    if col.is_categorical:
        missing = np.isnan(x)
        codes = np.where(missing, -1, x).astype(np.int64)
        if isinstance(col.dtype, pd.CategoricalDtype):
            return pd.Categorical.from_codes(codes, dtype=col.dtype)
        assert col.levels is not None  # every categorical column has its levels
        if col.levels.size == 0:  # a text column with no value at all
            labels = np.empty(x.shape, dtype=object)
            labels[:] = [col.missing] * x.size
        else:
            labels = col.levels[np.where(missing, 0, codes)]
        if missing.any() and col.levels.size:
            # the user's own marker (an imputer for NaN does not take None for missing)
            labels[missing] = col.missing
        if col.dtype is not None and col.dtype != object:
            return pd.array(labels, dtype=col.dtype)
        # an explicit object array: pandas would otherwise infer its string dtype
        return pd.Series(labels, dtype=object, copy=False)
    dtype = col.dtype
    if dtype is None or dtype == np.float64:
        return x
    missing = np.isnan(x)
    extension = not isinstance(dtype, np.dtype)  # pandas' nullable Int64, Float64, boolean
    if pd.api.types.is_bool_dtype(dtype):
        if missing.any() or extension:
            return pd.arrays.BooleanArray(np.where(missing, False, x).astype(bool), missing)
        return x.astype(bool)
    if pd.api.types.is_integer_dtype(dtype):
        # values between integers (grid points, shifted rows) must stay fractional, so
        # the column is cast back only when every value is a whole number
        whole = np.array_equal(x[~missing], np.round(x[~missing]))
        if extension:
            if not whole:
                return pd.arrays.FloatingArray(np.where(missing, 0.0, x), missing)
            return pd.array(pd.arrays.IntegerArray(
                np.where(missing, 0, x).astype(np.int64), missing), dtype=dtype)
        if whole and not missing.any():
            return x.astype(dtype)
        return x
    if pd.api.types.is_float_dtype(dtype):
        if extension:
            values = np.where(missing, 0.0, x).astype(dtype.numpy_dtype)
            return pd.arrays.FloatingArray(values, missing)
        return x.astype(dtype)  # float32 rows for a float32 model (values rounded to it)
    return x


def _check_unique_names(columns, what: str) -> None:
    names = [str(c) for c in columns]
    if len(set(names)) != len(names):
        from collections import Counter

        twice = sorted(n for n, k in Counter(names).items() if k > 1)
        raise InvalidParameterError(
            f"{what} has duplicate column names {twice}; give every column a unique name.")
