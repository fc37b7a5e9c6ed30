"""The model seam: the only code that calls the user's model.

A :class:`Model` turns encoded rows (see :mod:`modellens.data`) into one float
per row.  It chooses the response (class probability, prediction, decision
function), feeds the model the input form it was fit on, and checks every
answer, so that methods never see a malformed prediction.
"""

from __future__ import annotations

import numbers

import numpy as np

from .data import Dataset

__all__ = ["Model", "ModelError"]


class ModelError(RuntimeError):
    """The user's model failed or answered in a form we cannot use."""


_RESPONSES = ("auto", "predict_proba", "decision_function", "predict")


class Model:
    """Adapter from a fitted model (or callable) to ``rows -> (m,) floats``.

    Parameters
    ----------
    model : estimator or callable
        An object with ``predict_proba`` (classifiers), ``predict`` or
        ``decision_function``, a scikit-learn Pipeline, or a plain callable
        ``f(X) -> (m,)``.
    dataset : Dataset
        The schema used to build the model's input.
    target : label or int, optional
        The class whose probability is explained.  A class label is matched
        first, then a position in ``classes_``.  Binary classifiers default to
        the positive class (``classes_[1]``); multiclass ones require it.
    response_method : {"auto", "predict_proba", "decision_function", "predict"}
        ``"auto"`` uses ``predict_proba`` for classifiers and ``predict``
        otherwise.
    input_format : {"auto", "frame", "array"}
        ``"auto"`` feeds a DataFrame when the data came as one, unless the
        model is a scikit-learn estimator fit on an unnamed array.
    """

    def __init__(self, model, dataset: Dataset, *, target=None, response_method="auto",
                 input_format="auto"):
        if isinstance(model, Model):
            raise TypeError("pass the user's model, not a modellens.Model")
        if response_method not in _RESPONSES:
            raise ValueError(f"response_method must be one of {_RESPONSES}, got {response_method!r}.")
        self.model = model
        self.dataset = dataset
        self.n_calls = 0
        self.n_rows = 0
        self._fn, self.output_name, self.class_index = self._choose_response(model, target,
                                                                             response_method)
        self.as_frame = self._choose_input(model, dataset, input_format)

    # ------------------------------------------------------------ response
    @staticmethod
    def _choose_response(model, target, response_method):
        classes = getattr(model, "classes_", None)
        has_proba = hasattr(model, "predict_proba")
        if response_method == "auto":
            if has_proba and classes is not None:
                response_method = "predict_proba"
            elif hasattr(model, "predict"):
                response_method = "predict"
            elif has_proba:
                response_method = "predict_proba"
            elif callable(model):
                if target is not None:
                    raise ValueError("target= needs a classifier with classes_; "
                                     "a plain callable must return one value per row.")
                return model, "f(x)", None
            else:
                raise TypeError(
                    f"cannot explain a {type(model).__name__}: pass a fitted estimator with "
                    "predict / predict_proba, or a callable f(X) -> (n,) array."
                )
        fn = getattr(model, response_method, None)
        if fn is None:
            raise TypeError(f"{type(model).__name__} has no {response_method} method.")
        if response_method == "predict":
            if target is not None:
                raise ValueError("target= selects a class of predict_proba / decision_function; "
                                 "the model's predict gives one value per row already.")
            return fn, "prediction", None
        if classes is None:
            if target is None:
                return fn, response_method, 1 if response_method == "predict_proba" else None
            if not isinstance(target, (numbers.Integral, np.integer)):
                raise ValueError("the model has no classes_; give target as a column index.")
            return fn, f"{response_method}[{target}]", int(target)
        classes = list(np.asarray(classes).tolist())
        if target is None:
            if len(classes) == 2:
                k = 1
            else:
                raise ValueError(
                    f"the model has {len(classes)} classes {classes}; choose the one to explain "
                    "with target= (a class label or its index)."
                )
        elif target in classes:
            k = classes.index(target)
        elif isinstance(target, (numbers.Integral, np.integer)) and 0 <= int(target) < len(classes):
            k = int(target)
        else:
            raise ValueError(f"target={target!r} is not one of the model's classes {classes}.")
        name = f"P(y = {classes[k]})" if response_method == "predict_proba" else \
            f"decision({classes[k]})"
        if response_method == "decision_function" and len(classes) == 2:
            # binary decision functions return one column, positive for classes_[1]
            return fn, name, (None if k == 1 else -1)
        return fn, name, k

    @staticmethod
    def _choose_input(model, dataset, input_format):
        if input_format not in ("auto", "frame", "array"):
            raise ValueError(f"input_format must be 'auto', 'frame' or 'array', got {input_format!r}.")
        if input_format != "auto":
            return input_format == "frame"
        if not dataset.is_frame:
            return False
        fitted_on_array = hasattr(model, "n_features_in_") and not hasattr(model, "feature_names_in_")
        return not fitted_on_array

    # ------------------------------------------------------------ predict
    def to_input(self, rows: np.ndarray):
        """Encoded rows in the form the model takes."""
        if self.as_frame:
            return self.dataset.to_frame(rows)
        return self.dataset.to_array(rows)

    def predict(self, rows: np.ndarray) -> np.ndarray:
        """Evaluate the model on encoded ``rows``; returns shape ``(m,)`` floats."""
        m = rows.shape[0]
        X = self.to_input(rows)
        try:
            out = self._fn(X)
        except Exception as exc:
            raise ModelError(
                f"the model raised {type(exc).__name__} while predicting {m} rows "
                f"(input: {'DataFrame' if self.as_frame else 'array'} with columns "
                f"{self.dataset.feature_names}): {exc}"
            ) from exc
        self.n_calls += 1
        self.n_rows += m
        return self._check(out, rows)

    def _check(self, out, rows):
        m = rows.shape[0]
        try:
            out = np.asarray(out, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ModelError(f"the model returned values that are not numbers: {exc}") from exc
        if self.class_index == -1:
            out = -out.reshape(-1) if out.ndim == 1 or out.shape[1:] == (1,) else out
        elif self.class_index is not None:
            if out.ndim != 2:
                raise ModelError(
                    f"expected {self.output_name} to return shape ({m}, n_classes), got {out.shape}."
                )
            out = out[:, self.class_index]
        elif out.ndim == 2 and out.shape[1] == 1:
            out = out[:, 0]
        if out.shape != (m,):
            hint = ""
            if out.ndim == 2 and out.shape[0] == m:
                hint = (" The model returns several outputs per row; wrap it so that it returns "
                        "one (for example lambda X: model(X)[:, k]) or pass target=.")
            raise ModelError(
                f"the model returned shape {out.shape} for {m} rows; expected ({m},).{hint}"
            )
        bad = ~np.isfinite(out)
        if bad.any():
            nan_in = np.isnan(rows)
            rows_nan = int(nan_in.any(axis=1).sum())
            cols = [self.dataset.columns[j].name for j in np.flatnonzero(nan_in.any(axis=0))]
            where = (f" The input held NaN in {rows_nan} of these rows (columns {cols}); impute "
                     "them or use a model that accepts missing values." if rows_nan else "")
            raise ModelError(
                f"the model returned NaN or inf for {int(bad.sum())} of {m} rows.{where}"
            )
        return out
