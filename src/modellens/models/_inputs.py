"""A model whose inputs are not rows of a table: texts, images.

Text and image explanations plan coalitions (which words, which superpixels
are kept); a representation turns a chunk of them into the model's own input
(a list of strings, an array of images).  :class:`InputModel` calls the user's
``predict_fn`` on such inputs with the same output checks as :class:`Model`
(one score per input, ``target=`` choosing a column of class scores, finite
numbers), so the engine streams them like any other rows.

:func:`text_function` is the one rule of what a text method takes as its
model: a function of a list of texts as it is, and a fitted scikit-learn text
model (a ``Pipeline`` of a vectorizer and a classifier) by its bound
``predict_proba``, else ``decision_function``, else ``predict``.
"""

from __future__ import annotations

import numpy as np

from .._validation import InvalidParameterError
from ..data import Dataset
from .adapter import Model, ModelError

__all__ = ["InputModel", "INPUT_CHUNK_BYTES", "text_function", "ESTIMATOR_OUTPUTS"]

#: Memory cap of the inputs built for one call (the engine caps float rows alike).
INPUT_CHUNK_BYTES = 64 * 2**20

#: A scikit-learn text model's outputs, in the order ``response_method="auto"`` tries them.
ESTIMATOR_OUTPUTS = ("predict_proba", "decision_function", "predict")


def text_function(model, response_method: str = "auto"):
    """``model`` as a function of a list of texts (not a ``transformers`` model).

    A callable is returned as it is (it returns its own scores: a
    ``response_method`` other than ``"auto"`` is refused).  A fitted
    scikit-learn estimator that reads texts (a ``Pipeline`` of a
    ``TfidfVectorizer`` and a ``LogisticRegression``, say) gives its bound
    ``predict_proba`` (``"auto"``; else ``decision_function``, else
    ``predict``), or the method ``response_method`` names: bound methods, so
    the outputs are named by the estimator's classes, as they are for a table.
    """
    if callable(model):
        if response_method != "auto":
            raise InvalidParameterError(
                "response_method= for a text chooses a transformers model's or a scikit-learn "
                "text pipeline's output; a function of texts returns its own scores.")
        return model
    methods = ESTIMATOR_OUTPUTS if response_method == "auto" else (response_method,)
    for method in methods:
        fn = getattr(model, method, None)
        if callable(fn):
            return fn
    if response_method != "auto" and hasattr(model, "predict"):
        raise InvalidParameterError(f"{type(model).__name__} has no {response_method} method.")
    raise InvalidParameterError(
        f"the model ({type(model).__name__}) is not a text classifier: give a function of a "
        "list of strings, a transformers text-classification pipeline, or a fitted "
        "scikit-learn text pipeline (e.g. TfidfVectorizer + LogisticRegression).")


class InputModel(Model):
    """``predict_fn(inputs) -> (m,)`` or ``(m, k)`` scores, on inputs built from coalitions.

    Parameters
    ----------
    predict_fn : callable
        Maps a list of texts / an array of images to scores.
    names : list of str
        The interpretable features (distinct words, superpixel ids).
    target : int or list of int, optional
        The output column to explain when ``predict_fn`` returns class scores;
        a list (with ``several``) explains those columns, checked against the
        probe's answer.
    bytes_per_input : int
        Memory of one built input, which caps the inputs of one call at
        about ``INPUT_CHUNK_BYTES``.
    several : bool
        Explain several outputs: with ``target=None`` every column of
        ``(m, k)`` scores (``predict_fn``'s answer for ``probe`` tells ``k``,
        as a function on a table tells it for a data row), or the columns a
        list ``target=`` names.
    probe : callable, optional
        ``probe()`` builds the one input (the whole text or image) that
        ``predict_fn`` answers when the model is wrapped, to tell its outputs
        (see :meth:`Model._probe`); without it ``predict_fn`` is taken to have
        one output.
    """

    def __init__(self, predict_fn, names, *, target=None, bytes_per_input: int = 0,
                 several: bool = False, probe=None):
        if not callable(predict_fn):
            raise InvalidParameterError(
                f"predict_fn must be a callable mapping inputs to scores, got "
                f"{type(predict_fn).__name__}.")
        schema = Dataset.from_data(np.zeros((1, len(names))), feature_names=list(names))
        self._probe_input = probe  # (read while the model is wrapped, by _probe_answer)
        super().__init__(predict_fn, schema, target=target, several=several)
        self._may_take_tensors = False
        self._cap = max(1, INPUT_CHUNK_BYTES // max(1, int(bytes_per_input))) \
            if bytes_per_input else None

    #: a row of coalitions is no input of ``predict_fn``: the probe asks a built input
    _TABLE_ROWS = False

    def _probe_answer(self):
        """``predict_fn``'s answer for the probe's one input (None: no probe given)."""
        if self._probe_input is None:
            return None
        inputs = self._probe_input()
        try:
            return self._fn(inputs)
        except Exception as exc:
            raise ModelError(f"predict_fn raised {type(exc).__name__} on {len(inputs)} "
                             f"inputs: {exc}") from exc

    @property
    def max_chunk_rows(self):
        return self._cap

    def predict_inputs(self, inputs, masks: np.ndarray) -> np.ndarray:
        """Scores of ``inputs`` (built from the coalition rows ``masks``), shape ``(m,)``."""
        try:
            out = self._fn(inputs)
        except Exception as exc:
            raise ModelError(f"predict_fn raised {type(exc).__name__} on {len(inputs)} "
                             f"inputs: {exc}") from exc
        self.account(1, len(inputs))
        return self._check(out, masks)
