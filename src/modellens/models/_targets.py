"""What ``target=`` and ``response_method=`` select: a class, a column, a response.

Read by :class:`~modellens.models.Model` and the tree ensembles alike: the
position of a class, the column a target names, the outputs a target list asks
for, the classes a response gives, and a raw booster's predict.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validation import InvalidParameterError, is_integer
from ._torch import is_torch_module

__all__ = ["class_position", "booster_predict"]


def _column(target) -> int:
    """``target`` as an output column position (negative ones count from the end)."""
    if not is_integer(target):
        raise InvalidParameterError(
            f"target= is the index of the output column to explain (the model has no "
            f"classes_ to match a label against), got {target!r}.")
    return int(target)


_RESPONSES = ("auto", "predict_proba", "decision_function", "predict")


def class_position(classes: list, target) -> int:
    """The position among ``classes`` of the class ``target`` names.

    ``target`` is a class label or a position (negative ones from the end);
    None means the positive class of a binary model and is an error otherwise.
    """
    if target is None:
        if len(classes) != 2:
            raise InvalidParameterError(
                f"the model has {len(classes)} classes {classes}; choose the one to explain "
                "with target= (a class label or its index).")
        return 1
    if target in classes:
        return classes.index(target)
    if is_integer(target) and -len(classes) <= int(target) < len(classes):
        return int(target) % len(classes)
    raise InvalidParameterError(f"target={target!r} is not one of the model's classes "
                                f"{classes} nor a position among them.")


def booster_predict(model):
    """The ``predict`` of a raw XGBoost ``Booster`` on the rows modellens hands a model.

    A Booster predicts a ``DMatrix`` only: the rows are wrapped in one, a
    DataFrame with its column names (and pandas categoricals), an array with
    the booster's own feature names and types.  None for any other model
    (a LightGBM ``Booster`` takes arrays and DataFrames as they are).
    """
    if type(model).__name__ != "Booster" or not type(model).__module__.startswith("xgboost"):
        return None
    import xgboost as xgb

    def predict(data):
        if isinstance(data, pd.DataFrame):
            return model.predict(xgb.DMatrix(data, enable_categorical=True))
        return model.predict(xgb.DMatrix(data, feature_names=model.feature_names,
                                         feature_types=model.feature_types))
    return predict


def _response_classes(model, response_method):
    """The classes whose columns the chosen response has (None: columns by position).

    The same choice as :meth:`Model._choose_response` makes for ``"auto"``.
    """
    classes = getattr(model, "classes_", None)
    if classes is None or is_torch_module(model):
        return None
    method = response_method
    if method == "auto":
        method = "predict_proba" if hasattr(model, "predict_proba") else "predict"
    if method not in ("predict_proba", "decision_function"):
        return None
    return list(np.asarray(classes).tolist())


def _requested_outputs(target, several):
    """``"all"`` or the list of outputs ``target`` asks for; None for one output (or none)."""
    wanted: str | list
    if isinstance(target, str) and target == "all":
        wanted = "all"
    elif isinstance(target, (list, np.ndarray)):
        wanted = list(np.asarray(target).tolist()) if isinstance(target, np.ndarray) \
            else list(target)
        if not wanted:
            raise InvalidParameterError("target= is an empty list; name at least one output.")
        if any(wanted.count(t) > 1 for t in wanted):
            raise InvalidParameterError(
                f"target= names an output twice: {wanted}; name each output once.")
    else:
        return None
    if not several:
        raise InvalidParameterError(
            f"target={target!r} asks for several outputs, which this function does not "
            "explain at once yet; pass one class or output column.")
    return wanted


def _in_range(column: int, width: int) -> int:
    if not -width <= column < width:
        raise InvalidParameterError(f"target={column} is out of range: the model returns "
                                    f"{width} outputs per row (valid: 0..{width - 1}).")
    return column % width
