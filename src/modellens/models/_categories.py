"""Which columns a fitted model treats as categories, and their levels.

A model records what it saw: an encoder's ``categories_``,
HistGradientBoosting's categorical preprocessor (``is_categorical_``),
XGBoost's categorical feature types and stored categories, LightGBM's
categorical features (``pandas_categorical``, or the values in its feature
infos).  A column the model takes as categorical must be explained at those
levels: a CSV or Parquet file gives an integer-coded category (hours 0-23)
as plain integers, and a numeric grid between them (1.21, 2.42, ...) would
send every row down the model's unknown-category branch without an error.

:func:`model_levels` reads the record and :func:`with_model_levels` turns
such columns of a :class:`~modellens.data.Dataset` into categorical columns
with the model's levels, so every method (grids, samplers, backgrounds)
evaluates them only at levels the model knows.  The CLI reads and checks
data files against the same record (:func:`expected_inputs`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validation import (ModellensWarning, UnknownLevelsWarning, unknown_levels_message,
                           user_stacklevel)
from ..data import Dataset

__all__ = ["Expected", "expected_inputs", "model_feature_names", "lightgbm_names", "is_text",
           "model_levels", "with_model_levels"]


@dataclass(frozen=True)
class Expected:
    """What the model was fit on for one column.

    Attributes
    ----------
    text : bool or None
        The levels the model knows are strings (else numbers; None: not recorded).
    levels : ndarray or None
        The known levels, when the model records them.
    category : bool
        The model takes the column as a pandas Categorical (XGBoost, LightGBM).
    source : str
        Where the record came from, for messages ("OneHotEncoder", ...).
    """

    text: bool | None
    levels: np.ndarray | None = None
    category: bool = False
    source: str = ""


# ------------------------------------------------------------- what the model saw
def model_feature_names(model) -> list | None:
    """The column names a fitted model takes, in order (None when it does not record them)."""
    names = getattr(model, "feature_names_in_", None)
    if names is None and _is_lightgbm_booster(model):
        names = model.feature_name()
    if names is None and type(model).__module__.startswith("xgboost") \
            and hasattr(model, "feature_names"):
        names = model.feature_names
    return None if names is None else [str(n) for n in names]


def lightgbm_names(model, columns, names=None) -> list[str]:
    """``columns`` (as ``str``) under the names a LightGBM model stored for them.

    LightGBM stores a column name with each space replaced by ``_`` ("mean
    radius" is fit as "mean_radius") and predicts by position, so a data
    column is the one the model was fit on when it is the only column that
    reads as a stored name with its spaces as ``_`` (and that stored name is
    not a column itself).  Every other column, and every column for any
    other model, keeps its name.  ``names``: the stored names, when the
    caller has them (default :func:`model_feature_names`).
    """
    columns = [str(c) for c in columns]
    if not type(model).__module__.startswith("lightgbm"):
        return columns
    names = model_feature_names(model) if names is None else [str(n) for n in names]
    if names is None:
        return columns
    have, stored = set(columns), set(names)
    renamed = list(columns)
    for name in names:
        if name in have:
            continue
        found = [j for j, c in enumerate(columns)
                 if c not in stored and c.replace(" ", "_") == name]
        if len(found) == 1:
            renamed[found[0]] = name
    return renamed


def expected_inputs(model, names=None) -> dict:
    """Column name -> :class:`Expected`, for the columns whose levels the model records.

    ``names`` name the columns of a model that records none (one fit on an
    array); the model's own names win.
    """
    out: dict = {}
    try:
        _walk(model, model_feature_names(model) or names, out)
    except ImportError:  # no scikit-learn: no Pipeline or encoder to read
        pass
    return out


def _walk(est, names, out):
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline

    if est is None or isinstance(est, str):
        return
    if isinstance(est, Pipeline):
        # only the steps before the first one that changes the columns see the raw columns
        for _, step in est.steps:
            _walk(step, names, out)
            if not _keeps_columns(step):
                break
        return
    if isinstance(est, ColumnTransformer):
        inputs = [str(n) for n in getattr(est, "feature_names_in_", names or [])]
        for name, trans, _ in getattr(est, "transformers_", []):
            index = getattr(est, "_transformer_to_input_indices", {}).get(name)
            if index is None or not inputs:
                continue
            _walk(trans, [inputs[i] for i in index], out)
        return
    categories = getattr(est, "categories_", None)
    if categories is not None and names is not None and len(categories) == len(names):
        for name, levels in zip(names, categories):
            levels = np.asarray(levels)
            kept = levels[~pd.isna(levels)] if levels.dtype.kind in "Of" else levels
            out.setdefault(name, Expected(text=is_text(kept), levels=kept,
                                          source=type(est).__name__))
        return
    preprocessor = getattr(est, "_preprocessor", None)  # HistGradientBoosting, categories
    if preprocessor is not None:
        own = getattr(est, "feature_names_in_", None)
        _walk(preprocessor, [str(n) for n in own] if own is not None else names, out)
        return
    _xgboost_categories(est, out)
    _lightgbm_categories(est, out)


def _keeps_columns(step) -> bool:
    return type(step).__name__ in ("SimpleImputer", "FunctionTransformer") or step == \
        "passthrough"


def is_text(levels) -> bool:
    """Whether an array of levels holds strings (an empty one: by its dtype)."""
    if levels.size == 0:
        return levels.dtype.kind in "OUS"
    return levels.dtype.kind in "US" or (levels.dtype.kind == "O" and any(
        isinstance(v, str) for v in levels))


def _xgboost_categories(est, out):
    if not type(est).__module__.startswith("xgboost"):
        return
    booster = est.get_booster() if hasattr(est, "get_booster") else est
    names, types = booster.feature_names, booster.feature_types
    if not names or not types:
        return
    levels = {}
    try:
        cats = booster.get_categories(export_to_arrow=True)
        levels = {str(n): np.asarray(a.to_pylist()) for n, a in (cats.to_arrow() or [])
                  if a is not None}
    except Exception:  # older XGBoost: categories are not stored, codes are
        pass
    for name, kind in zip(names, types):
        if kind == "c":
            lv = levels.get(str(name))
            out.setdefault(str(name), Expected(text=None if lv is None else is_text(lv),
                                               levels=lv, category=True, source="XGBoost"))


def _is_lightgbm_booster(model) -> bool:
    return type(model).__module__.startswith("lightgbm") and hasattr(model, "feature_name") \
        and hasattr(model, "dump_model")


def _lightgbm_categories(est, out):
    booster = getattr(est, "booster_", None) if type(est).__module__.startswith("lightgbm") \
        else None
    booster = booster if booster is not None else (est if _is_lightgbm_booster(est) else None)
    if booster is None:
        return
    # the feature infos are the model's, not a tree's: one iteration's dump has them (0 or
    # None would dump every tree: seconds on a many-class booster, at every call)
    infos = booster.dump_model(num_iteration=1).get("feature_infos", {})
    names = booster.feature_name()
    # LightGBM's categorical features are those whose info lists values
    categorical = [n for n in names if isinstance(infos.get(n), dict) and infos[n].get("values")]
    pandas_cats = booster.pandas_categorical or []
    if pandas_cats:
        # pandas_categorical lists the levels of the frame's category columns in column order
        for name, lv in zip(categorical, pandas_cats):
            lv = np.asarray(lv)
            out.setdefault(str(name), Expected(text=is_text(lv), levels=lv, category=True,
                                               source="LightGBM"))
        return
    for name in categorical:
        # integer categories (categorical_feature= on numbers): the values it saw;
        # negative values are missing to LightGBM
        values = np.asarray(infos[name]["values"], dtype=np.int64)
        out.setdefault(str(name), Expected(text=False, levels=np.unique(values[values >= 0]),
                                           source="LightGBM"))


# ------------------------------------------------------------ the model's levels
def model_levels(model, dataset: Dataset, *, expected: dict | None = None) -> dict:
    """Column position -> ``(levels, dtype)`` for the numeric columns the model takes as categories.

    ``levels`` are the model's levels (numbers), ``dtype`` the pandas
    CategoricalDtype the model takes the column as (XGBoost, LightGBM fit on
    a pandas Categorical), else None (the column reaches the model with its
    own dtype, as an encoder or HistGradientBoosting reads it).  ``expected``
    is :func:`expected_inputs`' record, when it has been read.
    """
    names = dataset.feature_names
    if expected is None:
        expected = _expected(model, names)
    out = {}
    for name, exp in expected.items():
        j = dataset._name_to_index.get(name)
        if j is None or exp.levels is None or not len(exp.levels) or exp.text:
            continue
        col = dataset.columns[j]
        if col.is_categorical or col.is_boolean:
            continue  # labels already: see _unknown_labels
        levels = np.asarray(exp.levels)
        if levels.dtype.kind not in "biuf":
            try:
                levels = levels.astype(np.float64)
            except (TypeError, ValueError):
                continue
        out[j] = (levels, pd.CategoricalDtype(pd.Index(levels)) if exp.category else None)
    return out


def with_model_levels(model, dataset: Dataset) -> Dataset:
    """``dataset`` with the columns the model takes as categories made categorical at its levels.

    Values of such a column that are not among the model's levels (the model
    reads them as unknown) are kept as extra levels, with a warning; so are
    the levels of a text or categorical column that the model never saw.
    """
    expected = _expected(model, dataset.feature_names)
    found = model_levels(model, dataset, expected=expected)
    new = dataset.with_levels(found) if found else dataset
    for j, (levels, _) in found.items():
        extra = new.columns[j].levels[len(levels):]
        if len(extra):
            _warn_unknown(dataset.columns[j].name, levels, extra, expected)
    for j, levels, extra in _unknown_labels(dataset, expected, skip=found):
        _warn_unknown(dataset.columns[j].name, levels, extra, expected)
    return new


def _expected(model, names) -> dict:
    try:
        return expected_inputs(model, names)
    except Exception:  # a model that records what it saw in a form we cannot read
        return {}


def _unknown_labels(dataset: Dataset, expected: dict, *, skip) -> list:
    """``(column, model's levels, unseen levels)`` of the labelled columns with levels the
    model never saw.

    A one-hot encoder with ``handle_unknown="ignore"`` reads such a level as
    no level at all, without an error: a PD or ALE value, or an attribution,
    at that level describes only that fallback.
    """
    out = []
    for name, exp in expected.items():
        j = dataset._name_to_index.get(name)
        if j is None or j in skip or exp.levels is None or not len(exp.levels):
            continue
        col = dataset.columns[j]
        if not col.is_categorical or col.is_boolean or col.levels is None:
            continue
        codes = dataset.values[:, j]
        used = col.levels[np.unique(codes[~np.isnan(codes)]).astype(np.intp)]
        try:  # a damaged model's levels (nested lists): its own call says what it makes of them
            known = set(np.asarray(exp.levels, dtype=object).reshape(-1).tolist())
        except (TypeError, ValueError):
            continue
        extra = [v for v in used.tolist() if v not in known]
        if extra:
            out.append((j, np.asarray(exp.levels), np.asarray(extra, dtype=object)))
    return out


def _warn_unknown(name, levels, extra, expected) -> None:
    known, unseen = levels.tolist(), extra.tolist()
    source = expected[name].source if name in expected else ""
    warnings.warn(UnknownLevelsWarning(
        unknown_levels_message(name, known, unseen, source), column=name, known_levels=known,
        unknown_levels=unseen), stacklevel=user_stacklevel())
