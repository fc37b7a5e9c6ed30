"""The data seam's matrix: a float64 matrix of the rows plus the schema of their columns."""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from .._validation import (InvalidParameterError, MissingValuesWarning, ModellensWarning,
                           user_stacklevel)
from ._columns import (CATEGORICAL, NUMERIC, Column, _check_unique_names, _decode_column,
                       _encode_series, _level_values, _numeric_levels)
from ._rows import feature_position
from ._tables import as_pandas

__all__ = ["Dataset", "resolve_features"]


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

    def with_text_levels(self, found: dict) -> "Dataset":
        """A copy whose text columns also have the levels ``found[j]`` (appended).

        A text or object column's levels are the values its rows hold, not a
        closed set: values asked for elsewhere (the grid of a partial
        dependence on a few rows) are levels too.  Codes of the rows are
        unchanged; a pandas Categorical keeps its own categories.
        """
        columns = list(self.columns)
        for j, extra in found.items():
            col = columns[j]
            assert col.is_categorical and col.levels is not None \
                and not isinstance(col.dtype, pd.CategoricalDtype)
            extra = np.asarray(list(extra), dtype=object)
            columns[j] = replace(col, levels=np.concatenate([col.levels, extra]))
        return Dataset(self.values, columns, self.is_frame, self.column_labels)

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
