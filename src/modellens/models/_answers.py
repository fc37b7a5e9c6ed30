"""What a model's answer must be: numbers, finite, of a sane size; and the error saying not.

Every answer :class:`~modellens.models.Model` gets from the user's model is read
here (a DataFrame's columns named, a list of numbers made an array) and checked
before a method sees it; :class:`ModelError` is what a model that fails says.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["ModelError", "MAX_MAGNITUDE"]


class ModelError(RuntimeError):
    """The user's model failed or answered in a form we cannot use.

    The message says what the model was given and what came back, and how to
    fix it (for instance ``target=`` for a model with several outputs).

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).normal(size=(10, 2))
    >>> try:
    ...     ml.pdp(lambda A: A[:3, 0], X, grid=3)  # three values, whatever the rows
    ... except ml.ModelError as error:
    ...     print(error)
    the model returned shape (3,) for 60 rows; expected (60,).
    """


#: Largest prediction magnitude taken (2**1008, about 2.7e303): a sum of 2**16 of them
#: stays below float64's largest number; beyond, nearly every mean overflows to inf and
#: then NaN.  Below it, a result that still overflows is refused by the engine
#: (``engine._run._check_overflow``).
MAX_MAGNITUDE = float(np.finfo(np.float64).max) / 2.0**16


def _shown(value) -> str:
    """A feature value as an error message shows it (floats to 6 significant digits)."""
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6g}"
    return repr(value.item() if isinstance(value, np.generic) else value)


def _bound_class_names(fn) -> list[str] | None:
    """The output names of a classifier's bound ``predict_proba`` / ``decision_function``.

    ``clf.predict_proba`` passed as a function (texts, images, any table
    method) answers one column per class: they are named as the classifier's
    own outputs are (``"P(y = spam)"``), not by position.
    """
    method = getattr(fn, "__name__", "")
    classes = getattr(getattr(fn, "__self__", None), "classes_", None)
    if classes is None or method not in ("predict_proba", "decision_function"):
        return None
    labels = [str(c) for c in np.asarray(classes).tolist()]
    if len(set(labels)) != len(labels):
        return None
    return [f"P(y = {c})" if method == "predict_proba" else f"decision({c})" for c in labels]


def _answer_names(out) -> list[str] | None:
    """The output names an answer carries: a DataFrame's columns, a named Series' name.

    None for anything else, for a DataFrame's default labels 0..k-1, and for
    names that repeat (they could not tell the outputs apart).
    """
    if isinstance(out, pd.DataFrame):
        if isinstance(out.columns, pd.RangeIndex) and out.columns.start == 0:
            return None
        names = [str(c) for c in out.columns]
        return names if len(set(names)) == len(names) else None
    if isinstance(out, pd.Series) and out.name is not None:
        return [str(out.name)]
    return None


def _numbers(out) -> np.ndarray:
    """The model's answer as float64, refusing text, booleans and complex numbers.

    ``np.asarray(..., float)`` alone would read the text "1.5" as a number and
    True as 1, so class labels or a wrong method would be explained without a word.
    """
    arr = np.asarray(out)
    kind: str = arr.dtype.kind
    first = arr.flat[0] if arr.size else None
    if kind == "O":  # e.g. a pandas object column: its values decide
        for v in arr.flat:
            odd = "U" if isinstance(v, (str, bytes)) else "b" if isinstance(
                v, (bool, np.bool_)) else "c" if isinstance(v, complex) else None
            if odd is not None:
                kind, first = odd, v
                break
    what = {"U": "text", "S": "text", "b": "True/False values", "c": "complex numbers",
            "M": "dates", "m": "durations"}.get(kind)
    if what is not None:
        first = first.item() if isinstance(first, np.generic) else first
        raise ModelError(
            f"the model returned {what} (such as {first!r}), not numbers. Explain a numeric "
            "output: for a classifier its probability of a class (predict_proba with "
            "target=), or wrap the model so that it returns numbers, e.g. "
            "lambda X: model(X).astype(float) for a 0/1 decision.")
    try:
        return np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"the model returned values that are not numbers: {exc}") from exc


def _check_magnitude(out: np.ndarray) -> None:
    """Refuse predictions so large that the methods' sums and squares overflow float64."""
    if out.size and float(np.max(np.abs(out))) > MAX_MAGNITUDE:
        big = int((np.abs(out) > MAX_MAGNITUDE).sum())
        raise ModelError(
            f"the model returned {big} predictions of magnitude above {MAX_MAGNITUDE:.3g} "
            f"(the largest {float(np.max(np.abs(out))):.3g}), too close to the largest "
            "float64 number: the sums the explanations are built from would overflow to inf "
            "and NaN. Explain a rescaled output instead, e.g. "
            "lambda X: model.predict(X) / 1e300, or its logarithm.")
