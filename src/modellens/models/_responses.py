"""A model's responses as scikit-learn scorers read them, every column from one model.

A scorer asks a fitted model for ``predict`` (labels of a classifier, values
of a regressor), ``predict_proba`` / ``predict_log_proba`` (a column per
class) or ``decision_function``.  The engine streams one float per row, and a
response of several columns as one :class:`Model` with an output per
column (one pass gives every class); a classifier's labels travel as their
positions in ``classes_``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data import Dataset
from .adapter import Model

__all__ = ["RESPONSES", "response_model"]

#: The responses a scorer may ask for.
RESPONSES = ("predict", "predict_proba", "predict_log_proba", "decision_function")


class _LabelPositions:
    """A classifier's ``predict`` as the positions of its labels in ``classes_``."""

    def __init__(self, model):
        self.model = model
        self.classes = pd.Index(np.asarray(model.classes_).tolist())

    def __call__(self, X):
        return self.classes.get_indexer(np.asarray(self.model.predict(X)).tolist()) \
            .astype(np.float64)


def response_model(model, dataset: Dataset, method: str) -> Model:
    """The :class:`Model` giving every column of ``model.method`` in one answer.

    A multiclass response has one output per class, in the order of
    ``classes_``; a binary ``predict_proba`` / ``decision_function`` is served
    by its positive column alone (the other is one minus it, or its negative),
    labels travel as their positions in ``classes_``.
    """
    classes = getattr(model, "classes_", None)
    if classes is None:  # a regressor (or a model without labels): its own response,
        # every column of a multi-output one
        return Model(model, dataset, response_method=method, several=True)
    if method == "predict":
        as_frame = Model(model, dataset, response_method="predict").as_frame
        return Model(_LabelPositions(model), dataset,
                     input_format="frame" if as_frame else "array")
    if len(classes) == 2 and method in ("predict_proba", "decision_function"):
        return Model(model, dataset, response_method=method)
    return Model(model, dataset, response_method=method, several=True)
