"""A model's responses as scikit-learn scorers read them, one column per engine model.

A scorer asks a fitted model for ``predict`` (labels of a classifier, values
of a regressor), ``predict_proba`` / ``predict_log_proba`` (a column per
class) or ``decision_function``.  The engine streams one float per row, so a
response is served as one :class:`Model` per column; a classifier's labels
travel as their positions in ``classes_``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data import Dataset
from .adapter import Model

__all__ = ["RESPONSES", "response_columns"]

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


def response_columns(model, dataset: Dataset, method: str) -> list:
    """``[(Model, column), ...]``: the models giving each column of ``model.method``.

    ``column`` is the position of the class (None for a one-column response).
    A binary ``predict_proba`` is served by its positive column alone (the
    other is one minus it).
    """
    classes = getattr(model, "classes_", None)
    if classes is None:  # a regressor (or a model without labels): its own response
        return [(Model(model, dataset, response_method=method), None)]
    if method == "predict":
        as_frame = Model(model, dataset, response_method="predict").as_frame
        return [(Model(_LabelPositions(model), dataset,
                       input_format="frame" if as_frame else "array"), None)]
    k = len(classes)
    if method == "decision_function" and k == 2 or k == 2 and method == "predict_proba":
        return [(Model(model, dataset, response_method=method), None)]
    return [(Model(model, dataset, target=label, response_method=method), c)
            for c, label in enumerate(np.asarray(classes).tolist())]
