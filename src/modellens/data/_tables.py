"""Polars and pyarrow tables read as their pandas counterparts, once, at the boundary."""

from __future__ import annotations

import sys

import pandas as pd

from .._validation import InvalidParameterError

__all__ = ["as_pandas", "as_pandas_pair", "as_pandas_series"]


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
        elif _is_text(pa, fld.type) and table.column(j).null_count:
            # a null is None where scikit-learn reads a polars or Arrow column (to_numpy):
            # the model's own call on the table sees None, not pandas' NaN
            # (a Series: its array would be read as text again, with NaN)
            col = frame.iloc[:, j]
            frame.isetitem(j, col.astype(object).where(col.notna(), None))
        elif pa.types.is_boolean(fld.type) and table.column(j).null_count:
            # pandas would give objects (True, False, None), read as text; the
            # nullable boolean keeps the column numeric with its missing values
            boolean = {pa.bool_(): pd.BooleanDtype()}.get
            frame.isetitem(j, table.column(j).to_pandas(types_mapper=boolean).array)
    return frame


def _is_text(pa, kind) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind) \
        or getattr(pa.types, "is_string_view", lambda _: False)(kind)
