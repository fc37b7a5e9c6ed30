"""Result object of the local attribution methods (Shapley values, LIME)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

import numpy as np
import pandas as pd

from .._validation import InvalidParameterError, is_integer
from ..data import Column, feature_position

__all__ = ["Attributions"]


@dataclass(eq=False)
class Attributions:
    """Per-row, per-feature attributions of a model's predictions.

    Attributes
    ----------
    values : ndarray of shape (n, d)
        Attribution of each feature for each explained row.  For Shapley
        values ``base_values + values.sum(axis=1)`` is the prediction.
    base_values : ndarray of shape (n,)
        The reference each row's attributions start from (Shapley values: the
        mean prediction over the background data; LIME: the intercept).
    codes : ndarray of shape (n, d)
        The explained rows, encoded: floats, with level codes for
        categorical columns (see ``columns``).  :attr:`data` gives them as the
        user knows them.
    feature_names : list of str
    method : str
        ``"shapley-exact"``, ``"shapley-permutation"``, ``"shapley-kernel"``,
        ``"shapley-tree"``, ``"lime"``, ...
    std : ndarray of shape (n, d) or None
        Standard error of each value for sampling estimators (None when the
        values are exact).
    dof : ndarray of shape (n,) or None
        Degrees of freedom of each row's standard errors (inf when they are
        known exactly); :meth:`confidence_interval` uses them.
    output : str
        What was explained (``"prediction"``, ``"P(y = 1)"``, ...).
    prediction : ndarray of shape (n,) or None
        The model's output for each explained row.
    intercept, score, local_prediction : ndarray of shape (n,) or None
        LIME's local surrogate: intercept, weighted R^2 and its prediction.
    columns : list of Column or None
        The schema of the explained columns (kind, category levels, dtype);
        None means every column is numeric.
    column_labels : list or None
        A DataFrame's own column labels, for the feature lookup rule (an
        integer is a label when the frame had integer labels).
    value_function : str or None
        The game whose Shapley values these are (``"interventional"``: the
        background fills absent features; ``"tree_path_dependent"``: the
        trees' covers, see :mod:`modellens.attribution.tree`; ``"removal"``:
        absent words removed, absent superpixels filled).
    interactions : ndarray of shape (n, d, d) or None
        Pairwise interaction values, each row's matrix summing over its last
        axis to that row's values.
    segments : int ndarray of shape (height, width) or None
        Images (``lime_image``, ``shapley(..., masker="image")``): the
        superpixel of every pixel, ``0 .. d - 1`` in the order of
        ``feature_names``.
    extra : dict
        Incidental details: ``"background"`` (a sentence on the background
        data), ``"n_background"``, ``"n_coalitions"``, ``"n_model_rows"``, ...

    Indexing selects rows and features as shap's ``Explanation`` does, but
    always keeps two dimensions: ``attr[0]`` is a one-row ``Attributions``,
    ``attr[:10]`` the first ten rows, ``attr[:, "bmi"]`` one feature,
    ``attr[mask, ["bmi", "bp"]]`` both at once.
    """

    values: np.ndarray
    base_values: np.ndarray
    codes: np.ndarray
    feature_names: list
    method: str
    std: np.ndarray | None = None
    dof: np.ndarray | None = None
    output: str = "prediction"
    prediction: np.ndarray | None = None
    intercept: np.ndarray | None = None
    score: np.ndarray | None = None
    local_prediction: np.ndarray | None = None
    columns: list | None = None
    column_labels: list | None = None
    value_function: str | None = None
    interactions: np.ndarray | None = None
    segments: np.ndarray | None = None
    extra: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self.feature_names = [str(f) for f in self.feature_names]
        self.values = np.asarray(self.values, dtype=np.float64)
        self.base_values = np.asarray(self.base_values, dtype=np.float64)
        self.codes = np.asarray(self.codes, dtype=np.float64)
        if self.columns is None:
            self.columns = [Column(name, "numeric") for name in self.feature_names]
        if self.values.ndim != 2 or self.values.shape != self.codes.shape \
                or len(self.feature_names) != self.values.shape[1] \
                or self.base_values.shape != (self.values.shape[0],):
            raise InvalidParameterError(
                f"inconsistent attributions: values {self.values.shape}, codes "
                f"{self.codes.shape}, base_values {self.base_values.shape}, "
                f"{len(self.feature_names)} feature names.")

    # ------------------------------------------------------------ reading
    def __len__(self):
        return self.values.shape[0]

    def __repr__(self):
        n, d = self.values.shape
        return (f"Attributions(method={self.method!r}, rows={n}, features={d}, "
                f"output={self.output!r})")

    @property
    def shape(self):
        return self.values.shape

    @property
    def kinds(self) -> list:
        """How each column was treated: ``"numeric"`` or ``"categorical"``."""
        return [c.kind for c in self.columns]

    @property
    def data(self) -> np.ndarray:
        """The explained rows as the user knows them: floats, or an object array with labels."""
        if not any(c.is_categorical or c.is_boolean for c in self.columns):
            return self.codes.copy()
        out = np.empty(self.codes.shape, dtype=object)
        for j, col in enumerate(self.columns):
            x = self.codes[:, j]
            missing = np.isnan(x)
            if col.is_categorical:
                out[:, j] = None
                out[~missing, j] = col.levels[x[~missing].astype(np.intp)]
            elif col.is_boolean:
                out[:, j] = None
                out[~missing, j] = x[~missing].astype(bool)
            else:
                out[:, j] = x
        return out

    def levels(self, feature) -> list:
        """Category labels of a categorical feature, in code order (empty for numeric ones)."""
        col = self.columns[self.index_of(feature)]
        return list(col.levels) if col.is_categorical else []

    def index_of(self, feature) -> int:
        """Column position of a feature given by name or index (the rule of ``Dataset``)."""
        return feature_position(feature, self.feature_names, self.column_labels)

    def numeric_data(self) -> np.ndarray:
        """The explained rows as floats: categorical columns as level codes (colour scales)."""
        return self.codes.copy()

    def confidence_interval(self, level: float = 0.95):
        """``(lower, upper)`` around ``values`` from the standard errors, both ``(n, d)``.

        Student's t quantiles with each row's ``dof`` degrees of freedom: at a
        small sampling budget the standard errors are estimated from few
        independent pieces, and normal quantiles would give intervals that
        miss far more often than ``1 - level``.  Exact values get a zero-width
        interval.
        """
        from scipy.stats import t

        from .._validation import check_level

        level = check_level(level, "level")
        if self.std is None:
            return self.values.copy(), self.values.copy()
        dof = np.full(len(self), np.inf) if self.dof is None else np.asarray(self.dof, float)
        with np.errstate(invalid="ignore"):
            q = np.where(dof > 0, t.ppf(0.5 + level / 2, np.where(dof > 0, dof, 1)), np.nan)
        half = q[:, None] * self.std
        return self.values - half, self.values + half

    def mean_abs(self) -> np.ndarray:
        """Global importance: mean of ``|values|`` over the rows, one per feature."""
        return np.abs(self.values).mean(axis=0)

    # ----------------------------------------------------------- indexing
    def __getitem__(self, key) -> "Attributions":
        rows, cols = key if isinstance(key, tuple) else (key, slice(None))
        rows = self._row_index(rows)
        cols = self._column_index(cols)
        per_row = {}
        for name in ("base_values", "dof", "prediction", "intercept", "score", "local_prediction"):
            value = getattr(self, name)
            per_row[name] = None if value is None else np.asarray(value)[rows]
        interactions = None
        if self.interactions is not None:
            interactions = self.interactions[rows][:, cols][:, :, cols]
        return replace(
            self, values=self.values[rows][:, cols], codes=self.codes[rows][:, cols],
            feature_names=[self.feature_names[j] for j in cols],
            std=None if self.std is None else self.std[rows][:, cols],
            columns=[self.columns[j] for j in cols],
            column_labels=None if self.column_labels is None
            else [self.column_labels[j] for j in cols],
            interactions=interactions, extra=_index_extra(self.extra, rows, cols), **per_row)

    def _row_index(self, rows) -> np.ndarray:
        n = len(self)
        if is_integer(rows):
            if not -n <= rows < n:
                raise IndexError(f"row {rows} is out of range for {n} explained rows.")
            return np.array([int(rows) % n])
        if isinstance(rows, slice):
            return np.arange(n)[rows]
        rows = np.asarray(rows)
        if rows.dtype == bool:
            if rows.shape != (n,):
                raise IndexError(f"a boolean row mask needs {n} entries, got {rows.shape}.")
            return np.flatnonzero(rows)
        if rows.dtype.kind not in "iu" or rows.ndim != 1:
            raise IndexError(f"rows are selected by an int, a slice, a boolean mask or a list of "
                             f"ints, got {rows!r}.")
        if rows.size and (rows.max() >= n or rows.min() < -n):
            raise IndexError(f"row positions must lie in [-{n}, {n}).")
        return rows % n

    def _column_index(self, cols) -> list:
        d = len(self.feature_names)
        if isinstance(cols, slice):
            return list(range(d))[cols]
        if isinstance(cols, (str, int, np.integer)) and not isinstance(cols, bool):
            return [self.index_of(cols)]
        cols = list(np.asarray(cols, dtype=object).tolist()) if not isinstance(cols, list) \
            else cols
        if cols and all(isinstance(c, (bool, np.bool_)) for c in cols):
            if len(cols) != d:
                raise IndexError(f"a boolean feature mask needs {d} entries, got {len(cols)}.")
            return [j for j, keep in enumerate(cols) if keep]
        return [self.index_of(c) for c in cols]

    # ------------------------------------------------------------ outputs
    def to_frame(self) -> pd.DataFrame:
        """Long-format table: one row per (explained row, feature).

        Columns: ``row``, ``feature``, ``method``, ``feature_value``,
        ``value``, ``std`` (sampling estimators), ``base_value`` and
        ``prediction`` (when known).
        """
        n, d = self.values.shape
        frame = pd.DataFrame({
            "row": np.repeat(np.arange(n), d),
            "feature": np.tile(np.asarray(self.feature_names, dtype=object), n),
            "feature_value": pd.Series(np.asarray(self.data, dtype=object).ravel(), dtype=object),
            "value": self.values.ravel(),
        })
        if self.std is not None:
            frame["std"] = np.asarray(self.std, dtype=float).ravel()
        frame["base_value"] = np.repeat(self.base_values, d)
        if self.prediction is not None:
            frame["prediction"] = np.repeat(self.prediction, d)
        frame.insert(2, "method", self.method)
        return frame

    def to_shap(self):
        """The same numbers as a ``shap.Explanation`` (needs shap installed).

        Categorical columns go to shap as level codes in ``data`` (shap's
        colour scales need numbers) with their labels in ``display_data``.
        """
        try:
            import shap
        except ImportError as exc:
            raise ImportError("to_shap() needs the shap package: pip install shap") from exc
        categorical = any(c.is_categorical for c in self.columns)
        return shap.Explanation(
            values=self.values.copy(), base_values=self.base_values.copy(),
            data=self.numeric_data(), display_data=self.data if categorical else None,
            feature_names=list(self.feature_names))

    def to_dict(self) -> dict:
        """A JSON-safe dict of every field (``json.dumps`` works on it; see :meth:`from_dict`)."""
        from .._serialize import to_jsonable

        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "columns"}
        out["columns"] = [_column_dict(c) for c in self.columns]
        return {"type": "Attributions", "fields": to_jsonable(out)}

    @classmethod
    def from_dict(cls, d: dict) -> "Attributions":
        """Rebuild an :class:`Attributions` from :meth:`to_dict` output (also after JSON)."""
        from .._serialize import from_jsonable

        if not isinstance(d, dict) or d.get("type") != "Attributions":
            raise InvalidParameterError("not a dict made by Attributions.to_dict().")
        values = from_jsonable(d["fields"])
        values["columns"] = [Column(**c) for c in values["columns"]]
        return cls(**values)

    @property
    def plot(self):
        """Plots: ``.plot.waterfall(i)``, ``.force(i)``, ``.beeswarm()``, ``.bar()``,
        ``.dependence(feature)``; calling ``.plot()`` draws the beeswarm (a
        waterfall for a single row)."""
        from ..plot.attributions import AttributionPlots

        return AttributionPlots(self)


#: ``extra`` entries with one entry per explained row (LIME's trust figures, inside
#: ``"stability"`` too): indexing selects their rows, and their features when True.
_ROW_EXTRAS = {"score_holdout": False, "conditions": True, "same_top_k": False,
               "top_k_overlap": False, "weight_std": True}


def _index_extra(extra: dict, rows, cols) -> dict:
    out = {}
    for key, value in extra.items():
        if isinstance(value, dict):
            value = _index_extra(value, rows, cols)
        elif key in _ROW_EXTRAS and value is not None:
            if isinstance(value, list):
                value = [value[i] for i in rows]
                if _ROW_EXTRAS[key]:
                    value = [[row[j] for j in cols] for row in value]
            else:
                value = np.asarray(value)[rows]
                if _ROW_EXTRAS[key]:
                    value = value[:, cols]
        out[key] = value
    return out


def _column_dict(col: Column) -> dict:
    return {"name": col.name, "kind": col.kind, "levels": col.levels, "ordered": col.ordered,
            "dtype": col.dtype}
