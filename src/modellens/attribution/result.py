"""Result object of the local attribution methods (Shapley values, LIME)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

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
    data : ndarray of shape (n, d)
        The explained rows: floats, or an object array holding the category
        labels of categorical columns.
    feature_names : list of str
    method : str
        ``"shapley-exact"``, ``"shapley-permutation"``, ``"shapley-kernel"``,
        ``"lime"``, ...
    std : ndarray of shape (n, d) or None
        Standard error of each value for sampling estimators (None when the
        values are exact).
    output : str
        What was explained (``"prediction"``, ``"P(y = 1)"``, ...).
    prediction : ndarray of shape (n,) or None
        The model's output for each explained row.
    intercept, score, local_prediction : ndarray of shape (n,) or None
        LIME's local surrogate: intercept, weighted R^2 and its prediction.
    kinds : list of {"numeric", "categorical"} or None
        How each column was treated; categorical columns are drawn by level.
    extra : dict
        Method details: ``"background"`` (a sentence on the background data),
        ``"n_background"``, ``"n_coalitions"``, ``"n_model_rows"``,
        ``"levels"`` (category labels by feature), ...
    """

    values: np.ndarray
    base_values: np.ndarray
    data: np.ndarray
    feature_names: list
    method: str
    std: np.ndarray | None = None
    output: str = "prediction"
    prediction: np.ndarray | None = None
    intercept: np.ndarray | None = None
    score: np.ndarray | None = None
    local_prediction: np.ndarray | None = None
    kinds: list | None = None
    extra: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self.feature_names = [str(f) for f in self.feature_names]
        if self.kinds is None:
            self.kinds = ["numeric"] * len(self.feature_names)

    def __len__(self):
        return self.values.shape[0]

    def __repr__(self):
        n, d = self.values.shape
        return (f"Attributions(method={self.method!r}, rows={n}, features={d}, "
                f"output={self.output!r})")

    @property
    def shape(self):
        return self.values.shape

    def index_of(self, feature) -> int:
        """Column position of a feature given by name or index."""
        if isinstance(feature, (int, np.integer)) and not isinstance(feature, bool):
            j = int(feature)
            if not -len(self.feature_names) <= j < len(self.feature_names):
                raise ValueError(f"feature index {feature} is out of range for "
                                 f"{len(self.feature_names)} features.")
            return j % len(self.feature_names)
        if str(feature) not in self.feature_names:
            raise ValueError(f"unknown feature {feature!r}; valid names are {self.feature_names}.")
        return self.feature_names.index(str(feature))

    def numeric_data(self) -> np.ndarray:
        """``data`` as floats: categorical columns as level codes (for colour scales)."""
        out = np.empty(self.values.shape, dtype=np.float64)
        levels = self.extra.get("levels", {})
        for j, name in enumerate(self.feature_names):
            col = self.data[:, j]
            if self.kinds[j] == "categorical":
                known = levels.get(name)
                if known is None:
                    codes, _ = pd.factorize(pd.Series(col, dtype=object), sort=False)
                else:
                    codes = pd.Categorical(pd.Series(col, dtype=object),
                                           categories=pd.Index(known, dtype=object)).codes
                out[:, j] = np.where(codes < 0, np.nan, codes)
            else:
                out[:, j] = pd.to_numeric(pd.Series(col), errors="coerce").to_numpy(np.float64)
        return out

    def mean_abs(self) -> np.ndarray:
        """Global importance: mean of ``|values|`` over the rows, one per feature."""
        return np.abs(self.values).mean(axis=0)

    def to_frame(self) -> pd.DataFrame:
        """Long-format table: one row per (explained row, feature).

        Columns: ``row``, ``feature``, ``feature_value``, ``value``, ``std``
        (sampling estimators), ``base_value`` and ``prediction`` (when known).
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

    @property
    def plot(self):
        """Plots: ``.plot.waterfall(i)``, ``.force(i)``, ``.beeswarm()``, ``.bar()``,
        ``.dependence(feature)``; calling ``.plot()`` draws the beeswarm (a
        waterfall for a single row)."""
        from ..plot.attributions import AttributionPlots

        return AttributionPlots(self)
