"""The data seam: numpy, pandas, polars or pyarrow in, one float matrix plus a schema inside.

Every method works on ``Dataset.values``, a float64 matrix in which a
categorical column holds its level codes (``NaN`` for missing).  The schema
(names, kinds, levels, original dtypes) lets the model adapter turn any block of
such rows back into exactly the form the model was fit on.
"""

from __future__ import annotations

import numbers
import sys
import warnings
from typing import Any
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._validation import (InvalidParameterError, MissingValuesWarning, ModellensWarning,
                          check_random_state, is_integer, user_stacklevel)

__all__ = ["Dataset", "Column", "resolve_features", "is_integer", "feature_position",
           "sample_rows", "encode_with", "row_as_frame", "row_labels", "as_pandas", "as_pandas_pair",
           "as_pandas_series"]


# ------------------------------------------------------------- polars, pyarrow
def as_pandas(data, *, name: str = "X"):
    """``data`` as a pandas DataFrame when it is a polars or pyarrow table, else unchanged.

    The one conversion of such input, made where a public function receives it,
    so that everything after it (the schema, the rows handed to the model, the
    checks of column names against the model's) sees the pandas counterpart:
    numbers keep their dtype (an integer column with nulls becomes float64 with
    NaN, as pandas reads it), a boolean column with nulls becomes pandas'
    nullable ``boolean``, strings stay strings with missing values, decimals
    become float64, ``pl.Categorical`` becomes an unordered ``category`` with
    the levels sorted (as ``astype("category")`` gives them), ``pl.Enum`` an
    ordered one with the Enum's levels in their order, and a pyarrow dictionary
    column a ``category`` with the dictionary's levels and ordered flag.  A
    polars Series is one column.  polars itself is never imported: a polars
    object can only exist once the user has imported it.

    Parameters
    ----------
    data : object
        What the user passed.
    name : str
        The argument's name, for error messages.
    """
    pl = sys.modules.get("polars")
    if pl is not None:
        if isinstance(data, pl.LazyFrame):
            # collecting could run an expensive query or pull a larger-than-memory
            # table in without the user seeing it: they choose the rows
            raise InvalidParameterError(
                f"{name} is a polars LazyFrame; modellens reads the rows in memory, so "
                f"collect them first: {name}.collect(), or a sample such as "
                f"{name}.head(10_000).collect().")
        if isinstance(data, pl.Series):
            data = data.to_frame()
        if isinstance(data, pl.DataFrame):
            return _from_polars(data, name)
    pa = sys.modules.get("pyarrow")
    if pa is not None and isinstance(data, (pa.Table, pa.RecordBatch)):
        return _from_arrow(pa.table(data) if isinstance(data, pa.RecordBatch) else data, name)
    return data


def as_pandas_pair(X, other, *, other_name: str = "background"):
    """``X`` and rows read with it (background, training data) through :func:`as_pandas`.

    A pandas or pyarrow categorical declares its levels, but a polars
    ``Categorical`` has only the values it holds, so a slice of a frame (the
    explained rows) would lack levels of another (the background).  Its
    levels become those of the other side: the sorted union of both when
    both are polars Categoricals, the other's categories (order and ordered
    flag included) when they declare every level it holds.
    """
    loose_x, loose_other = _polars_categoricals(X), _polars_categoricals(other)
    X, other = as_pandas(X), as_pandas(other, name=other_name)
    if not (loose_x or loose_other) or not isinstance(X, pd.DataFrame) \
            or not isinstance(other, pd.DataFrame):
        return X, other
    cast_x, cast_other = {}, {}
    for c in (loose_x | loose_other) & set(X.columns) & set(other.columns):
        a, b = X[c].dtype, other[c].dtype
        if not (isinstance(a, pd.CategoricalDtype) and isinstance(b, pd.CategoricalDtype)):
            continue
        if c in loose_x and c in loose_other:
            cast_x[c] = cast_other[c] = pd.CategoricalDtype(
                sorted(set(a.categories) | set(b.categories)))
        elif c in loose_x and set(a.categories) <= set(b.categories):
            cast_x[c] = b
        elif c in loose_other and set(b.categories) <= set(a.categories):
            cast_other[c] = a
    # astype re-codes by label and returns new frames: the caller's stay as they are
    return (X.astype(cast_x) if cast_x else X), (other.astype(cast_other) if cast_other else other)


def _polars_categoricals(data) -> set:
    pl = sys.modules.get("polars")
    if pl is None or not isinstance(data, (pl.DataFrame, pl.Series)):
        return set()
    schema = data.to_frame().schema if isinstance(data, pl.Series) else data.schema
    return {name for name, dtype in schema.items()
            if isinstance(dtype, pl.Categorical)}


def as_pandas_series(values, *, name: str = "y"):
    """A polars Series or a pyarrow (chunked) array as a pandas Series; anything else unchanged.

    The column counterpart of :func:`as_pandas` (a target, for example), with
    the same dtype rules.
    """
    pl, pa = sys.modules.get("polars"), sys.modules.get("pyarrow")
    if pl is not None and isinstance(values, pl.Series):
        return as_pandas(values, name=name).iloc[:, 0]
    if pa is not None and isinstance(values, (pa.Array, pa.ChunkedArray)):
        return as_pandas(pa.table({name: values}), name=name).iloc[:, 0]
    return values


def _from_polars(df, name: str) -> pd.DataFrame:
    pl = sys.modules["polars"]  # imported: df is one of its frames
    try:
        table = df.to_arrow()
    except ModuleNotFoundError as exc:
        raise ImportError(f"reading a polars DataFrame ({name}) needs pyarrow, through which "
                          "polars hands its columns to pandas: pip install pyarrow.") from exc
    frame = _from_arrow(table, name)
    for j, dtype in enumerate(df.schema.values()):
        if isinstance(dtype, pl.Enum):
            # the Enum's levels, all of them and in their order, whatever the
            # version of polars wrote into the Arrow dictionary
            levels = list(dtype.categories)
            frame.isetitem(j, frame.iloc[:, j].cat.set_categories(levels, ordered=True).array)
        elif isinstance(dtype, pl.Categorical):
            frame.isetitem(j, _lexical(frame.iloc[:, j]).array)
    return frame


def _lexical(col: pd.Series) -> pd.Series:
    """A polars Categorical's pandas counterpart: unordered, its present levels sorted.

    polars orders a Categorical's levels lexically, while its Arrow dictionary
    lists them as first seen.
    """
    col = col.cat.remove_unused_categories()
    try:
        levels = sorted(col.cat.categories)
    except TypeError:  # pragma: no cover - polars categories are strings
        levels = list(col.cat.categories)
    return col.cat.set_categories(levels, ordered=False)


def _from_arrow(table, name: str) -> pd.DataFrame:
    pa = sys.modules["pyarrow"]  # imported: table is one of its tables
    for j, fld in enumerate(table.schema):
        if pa.types.is_decimal(fld.type):
            # decimal.Decimal objects would read as text: they are numbers
            table = table.set_column(j, fld.name, table.column(j).cast(pa.float64()))
        elif pa.types.is_nested(fld.type):
            raise InvalidParameterError(
                f"column {fld.name!r} of {name} holds nested values ({fld.type}); modellens "
                "explains numeric and categorical features: give each part its own column.")
    # dates as datetime64, as pandas reads them (and as modellens' error about them expects)
    frame = table.to_pandas(date_as_object=False)
    for j, fld in enumerate(table.schema):
        if pa.types.is_dictionary(fld.type) and not fld.type.ordered \
                and any(k.startswith(b"_PL_CATEGORICAL") for k in (fld.metadata or {})):
            # a polars Categorical that reached Arrow (a Parquet file polars wrote)
            frame.isetitem(j, _lexical(frame.iloc[:, j]).array)
        elif pa.types.is_boolean(fld.type) and table.column(j).null_count:
            # pandas would give objects (True, False, None), read as text; the
            # nullable boolean keeps the column numeric with its missing values
            boolean = {pa.bool_(): pd.BooleanDtype()}.get
            frame.isetitem(j, table.column(j).to_pandas(types_mapper=boolean).array)
    return frame


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
    """

    name: str
    kind: str
    levels: np.ndarray | None = None
    ordered: bool = False
    dtype: Any = None  # a numpy dtype or a pandas extension dtype

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


@dataclass
class Dataset:
    """A feature matrix with its schema.

    Build it with :meth:`Dataset.from_data`; the caller's object is never
    modified (pandas columns are read, never written).
    """

    values: np.ndarray
    columns: list[Column]
    is_frame: bool
    #: The DataFrame's own column labels (names are their ``str``), given back to the model.
    column_labels: list | None = None
    _name_to_index: dict = field(default_factory=dict, repr=False)
    _n_unique: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self._name_to_index = {c.name: i for i, c in enumerate(self.columns)}

    def n_unique(self, j: int) -> int:
        """Number of distinct non-missing values of column ``j`` (computed once, on demand)."""
        if j not in self._n_unique:
            x = self.values[:, j]
            self._n_unique[j] = int(np.unique(x[~np.isnan(x)]).size)
        return self._n_unique[j]

    # ------------------------------------------------------------------ build
    @classmethod
    def from_data(cls, X, *, feature_names=None, like: "Dataset | None" = None) -> "Dataset":
        """Validate ``X`` and encode it.

        Parameters
        ----------
        X : ndarray of shape (n, d), DataFrame, polars DataFrame or pyarrow Table
            The data.  Numeric, boolean, pandas categorical, string and object
            columns are accepted; polars and pyarrow tables are read as their
            pandas counterparts (:func:`as_pandas`).
        feature_names : list of str, optional
            Names for the columns of an array (default ``x0 .. x{d-1}``).  A
            DataFrame's names are its columns: names that differ are an error.
        like : Dataset, optional
            Encode ``X`` with the schema of another dataset (same columns,
            same category codes), for example background data.
        """
        if isinstance(X, Dataset):
            return X
        X = as_pandas(X)  # a no-op for what the public functions already converted
        if callable(getattr(X, "__dask_graph__", None)) and X.__dask_graph__() is not None:
            # np.asarray would pull it in whole, without its names
            raise InvalidParameterError(
                "this method reads its data in memory and does not take Dask data (pdp, "
                "mplot, ale and dale do); pass a pandas sample, e.g. "
                "X.sample(frac=...).compute(), or X.compute() if it fits.")
        if isinstance(X, pd.Series):
            X = X.to_frame()
        if isinstance(X, pd.DataFrame):
            if feature_names is not None and like is None and \
                    [str(n) for n in feature_names] != [str(c) for c in X.columns]:
                # a frame names its own columns: other names would be silently dropped
                raise InvalidParameterError(
                    f"feature_names={list(feature_names)} differs from the columns of the "
                    f"DataFrame X {[str(c) for c in X.columns]}; a DataFrame's columns are its "
                    "feature names: leave feature_names= out, or rename the columns "
                    "(X.set_axis(names, axis=1)).")
            ds = cls._from_frame(X, like)
        else:
            ds = cls._from_array(X, feature_names, like)
        if ds.values.shape[0] == 0:
            raise InvalidParameterError("X has no rows: pass at least one data point.")
        if ds.values.shape[1] == 0:
            raise InvalidParameterError("X has no columns: pass at least one feature.")
        # level codes are never infinite, so the whole matrix can be checked at once
        bad = np.isinf(ds.values).any(axis=0)
        if bad.any():
            names = [ds.columns[j].name for j in np.flatnonzero(bad)]
            raise InvalidParameterError(
                f"X holds infinite values in column(s) {names}; replace them "
                "(for example with NaN or a clipped value) before explaining."
            )
        return ds

    @classmethod
    def _from_array(cls, X, feature_names, like):
        try:
            arr = np.asarray(X)
        except Exception as exc:  # pragma: no cover - exotic inputs
            raise InvalidParameterError(
                f"X must be an array or a DataFrame, got {type(X).__name__}") from exc
        if arr.ndim == 1:
            raise InvalidParameterError(
                f"X must be 2-D (n_samples, n_features), got shape {arr.shape}; "
                "use X.reshape(-1, 1) for a single feature."
            )
        if arr.ndim != 2:
            raise InvalidParameterError(
                f"X must be 2-D (n_samples, n_features), got shape {arr.shape}.")
        if like is not None:
            if arr.shape[1] != len(like.columns):
                raise InvalidParameterError(
                    f"data has {arr.shape[1]} columns but the explained data has {len(like.columns)}."
                )
            names = [c.name for c in like.columns]
        elif feature_names is not None:
            names = [str(n) for n in feature_names]
            if len(names) != arr.shape[1]:
                raise InvalidParameterError(
                    f"feature_names has {len(names)} names but X has {arr.shape[1]} columns."
                )
            _check_unique_names(names, "feature_names")
        else:
            names = [f"x{j}" for j in range(arr.shape[1])]
        if arr.dtype.kind in "biuf" and not (like is not None and any(
                c.is_categorical for c in like.columns)):
            # a read-only view when X is float64 already: large data is not copied,
            # and nothing we do can write to the caller's array
            values = np.asarray(arr, dtype=np.float64).view()
            values.flags.writeable = False
            columns = [
                Column(n, NUMERIC, dtype=arr.dtype)
                for j, n in enumerate(names)
            ]
            return cls(values, columns, is_frame=False)
        # an object / string array: encode column by column like a frame
        frame = pd.DataFrame({n: arr[:, j] for j, n in enumerate(names)})
        ds = cls._from_frame(frame, like)
        ds.is_frame = False
        return ds

    @classmethod
    def _from_frame(cls, frame: pd.DataFrame, like):
        names = [str(c) for c in frame.columns]
        _check_unique_names(names, "X")
        if like is not None:
            expected = [c.name for c in like.columns]
            if names != expected:
                missing = [n for n in expected if n not in names]
                if missing or len(names) != len(expected):
                    raise InvalidParameterError(
                        f"data columns {names} do not match the explained data's columns {expected}."
                    )
                frame = frame[[c for c in frame.columns if str(c) in expected]]
                frame.columns = names
                frame = frame[expected]
                names = expected
        n = len(frame)
        values = np.empty((n, len(names)), dtype=np.float64)
        columns = []
        for j, name in enumerate(names):
            series = frame.iloc[:, j]
            ref = like.columns[j] if like is not None else None
            col, codes = _encode_series(name, series, ref)
            values[:, j] = codes
            columns.append(col)
        return cls(values, columns, is_frame=True, column_labels=list(frame.columns))

    def with_levels(self, found: dict) -> "Dataset":
        """A copy with numeric columns made categorical at given levels.

        ``found`` maps a column position to ``(levels, dtype)``: the levels
        (numbers) the column is explained at, and the dtype its rows reach the
        model with (None: the column's own).  Values that are not among
        ``levels`` become extra levels after them; missing values stay missing.
        """
        values = np.array(self.values, dtype=np.float64)
        columns = list(self.columns)
        for j, (levels, dtype) in found.items():
            col = columns[j]
            x = values[:, j]
            levels = np.asarray(levels)
            present = np.unique(x[~np.isnan(x)])
            extra = present[~np.isin(present, levels.astype(np.float64))]
            if extra.size:
                whole = levels.dtype.kind in "biu" and np.array_equal(extra, np.round(extra))
                levels = np.concatenate([levels, extra.astype(levels.dtype if whole else
                                                                np.float64)])
                if isinstance(dtype, pd.CategoricalDtype):
                    dtype = pd.CategoricalDtype(pd.Index(levels))
            codes = pd.Index(levels.astype(np.float64)).get_indexer(pd.Index(x)).astype(np.float64)
            codes[codes < 0] = np.nan
            values[:, j] = codes
            columns[j] = Column(col.name, CATEGORICAL, levels, False,
                                col.dtype if dtype is None else dtype)
        values.flags.writeable = False
        return Dataset(values, columns, self.is_frame, self.column_labels)

    # ------------------------------------------------------------ accessors
    @property
    def n_rows(self) -> int:
        return self.values.shape[0]

    @property
    def n_features(self) -> int:
        return self.values.shape[1]

    @property
    def feature_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def index_of(self, feature) -> int:
        """Column index of a feature given by name or position (see :func:`feature_position`)."""
        return feature_position(feature, self.feature_names,
                                self.column_labels if self.is_frame else None)

    def column_values(self, j: int, *, drop_missing: bool = True, warn_for: str = "",
                      column: np.ndarray | None = None) -> np.ndarray:
        """The (encoded) values of column ``j``, missing ones left out with a warning.

        ``column`` may pass a contiguous copy of the column made beforehand
        (reading many columns of a wide matrix one by one is slow).
        """
        x = self.values[:, j].copy() if column is None else column
        if drop_missing:
            missing = np.isnan(x)
            if missing.any():
                if warn_for:
                    self._warn_missing(j, int(missing.sum()), warn_for)
                x = x[~missing]
        return x

    def warn_missing(self, features, what: str) -> None:
        """Say once which of ``features`` have missing values, left out of their ``what``.

        For a method that reads each column once per output: it warns here,
        once per call, and reads the columns without ``warn_for``.
        """
        for j in features:
            n_missing = int(np.isnan(self.values[:, j]).sum())
            if n_missing:
                self._warn_missing(j, n_missing, what)

    def _warn_missing(self, j: int, n_missing: int, what: str) -> None:
        name = self.columns[j].name
        warnings.warn(MissingValuesWarning(
            f"{n_missing} of {self.n_rows} rows have a missing value in {name!r}; they are "
            f"left out of its {what}.", column=name, n_missing=n_missing, n_rows=self.n_rows,
            used_for=what), stacklevel=user_stacklevel())

    def observed_labels(self, j: int) -> np.ndarray:
        """The non-missing values of column ``j`` as the user reads them (labels for categories).

        A numeric column without missing values comes back as a read-only view
        of the data, so that results for many features do not copy it each.
        """
        x = self.values[:, j]
        col = self.columns[j]
        if not (col.is_categorical or col.is_boolean) and not np.isnan(x).any():
            view = x.view()
            view.flags.writeable = False
            return view
        return self.labels(j, self.column_values(j))

    def labels(self, j: int, codes) -> np.ndarray:
        """Category labels for codes of a categorical column (values otherwise)."""
        col = self.columns[j]
        codes = np.asarray(codes)
        if col.is_boolean and not np.isnan(codes.astype(float)).any():
            return codes.astype(bool)
        if not col.is_categorical:
            return codes
        assert col.levels is not None  # every categorical column has its levels
        return col.levels[codes.astype(np.intp)]

    # ------------------------------------------------------- back to a model
    def to_frame(self, values: np.ndarray) -> pd.DataFrame:
        """Turn encoded rows back into a DataFrame with the original dtypes."""
        labels = self.column_labels or [c.name for c in self.columns]
        if all(not c.is_categorical and (c.dtype is None or c.dtype == np.float64)
               for c in self.columns):
            # float columns decode to themselves: one column-major copy is the frame's one
            # block (no column-by-column build); the model reads the layout a frame of
            # columns always had, so a layout-sensitive model (BLAS) gives the same bits
            frame = pd.DataFrame(np.asfortranarray(values), copy=False)
        else:
            frame = pd.DataFrame({j: _decode_column(values[:, j], col)
                                  for j, col in enumerate(self.columns)}, copy=False)
        frame.columns = labels
        return frame

    def to_array(self, values: np.ndarray) -> np.ndarray:
        """Encoded rows as the model's array input (object arrays for labels)."""
        if not any(c.is_categorical for c in self.columns):
            return values
        if all(_numeric_levels(c) for c in self.columns if c.is_categorical):
            # numbers the model reads as categories: given back as the numbers
            out = np.array(values, dtype=np.float64)
            for j, col in enumerate(self.columns):
                if col.is_categorical:
                    out[:, j] = _level_values(values[:, j], col)
            return out
        out = np.empty(values.shape, dtype=object)
        for j, col in enumerate(self.columns):
            out[:, j] = np.asarray(_decode_column(values[:, j], col), dtype=object)
        return out


# --------------------------------------------------------------------------
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
    col = Column(name, CATEGORICAL, levels, False, dtype)
    return col, codes


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
            labels = np.full(x.shape, None, dtype=object)
        else:
            labels = col.levels[np.where(missing, 0, codes)]
        if missing.any() and col.levels.size:
            labels = labels.copy()
            labels[missing] = None
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


def resolve_features(dataset: Dataset, features, *, allow_pairs: bool = True):
    """Normalise ``features`` to a list of column indices and index pairs.

    ``None`` means every column; a single name / index means one feature; a
    tuple ``(a, b)`` inside a list asks for a 2-D effect.
    """
    if features is None:
        return list(range(dataset.n_features))
    if isinstance(features, (str, numbers.Integral, np.integer)):
        features = [features]
    elif isinstance(features, tuple) and allow_pairs and len(features) == 2 \
            and not any(isinstance(f, (tuple, list)) for f in features):
        warnings.warn(f"features={features!r} explains each of the two features on its own; "
                      f"for one 2-D effect of the pair pass a list holding it: "
                      f"[{features!r}].", ModellensWarning, stacklevel=3)
    elif not isinstance(features, (list, tuple, np.ndarray, pd.Index)):
        raise InvalidParameterError(
            f"features must be None, a name, an integer position or a list of them "
            f"(pairs as tuples), got {features!r}.")
    out: list[int | tuple[int, int]] = []
    for f in features:
        if isinstance(f, (tuple, list)) and not isinstance(f, str):
            if not allow_pairs:
                raise InvalidParameterError(
                    "this method explains single features; pairs are not supported.")
            if len(f) != 2:
                raise InvalidParameterError(f"a feature pair must have two entries, got {f!r}.")
            a, b = dataset.index_of(f[0]), dataset.index_of(f[1])
            if a == b:
                raise InvalidParameterError(
                    f"a feature pair needs two different features, got {f!r}.")
            out.append((a, b))
        else:
            out.append(dataset.index_of(f))
    if not out:
        raise InvalidParameterError(
            "features is empty; pass None for all features or a list of names.")
    seen = set()
    for f in out:
        if f in seen:
            names = tuple(dataset.columns[j].name for j in f) if isinstance(f, tuple) \
                else dataset.columns[f].name
            raise InvalidParameterError(f"feature {names!r} is asked for more than once.")
        seen.add(f)
    return out


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
                    unknown = unknown_levels(other[c], dtype.categories)
                    if unknown:
                        raise InvalidParameterError(
                            f"{other_name} column {c!r} holds levels {unknown} that are not "
                            f"categories of X[{c!r}] ({list(dtype.categories)}).")
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


def _check_unique_names(columns, what: str) -> None:
    names = [str(c) for c in columns]
    if len(set(names)) != len(names):
        from collections import Counter

        twice = sorted(n for n, k in Counter(names).items() if k > 1)
        raise InvalidParameterError(
            f"{what} has duplicate column names {twice}; give every column a unique name.")


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
