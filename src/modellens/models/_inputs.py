"""A model whose inputs are not rows of a table: texts, images.

Text and image explanations plan coalitions (which words, which superpixels
are kept); a representation turns a chunk of them into the model's own input
(a list of strings, an array of images).  :class:`InputModel` calls the user's
``predict_fn`` on such inputs with the same output checks as :class:`Model`
(one score per input, ``target=`` choosing a column of class scores, finite
numbers), so the engine streams them like any other rows.
"""

from __future__ import annotations

import numpy as np

from .._validation import InvalidParameterError
from ..data import Dataset
from ._torch import to_numpy
from ._answers import _numbers
from .adapter import Model, ModelError

__all__ = ["InputModel", "INPUT_CHUNK_BYTES"]

#: Memory cap of the inputs built for one call (the engine caps float rows alike).
INPUT_CHUNK_BYTES = 64 * 2**20


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
        first answer.
    bytes_per_input : int
        Memory of one built input, which caps the inputs of one call at
        about ``INPUT_CHUNK_BYTES``.
    several : bool
        Explain several outputs: with ``target=None`` every column of
        ``(m, k)`` scores (the first answer tells ``k``, as for a function on
        a table), or the columns a list ``target=`` names.
    """

    def __init__(self, predict_fn, names, *, target=None, bytes_per_input: int = 0,
                 several: bool = False):
        if not callable(predict_fn):
            raise InvalidParameterError(
                f"predict_fn must be a callable mapping inputs to scores, got "
                f"{type(predict_fn).__name__}.")
        schema = Dataset.from_data(np.zeros((1, len(names))), feature_names=list(names))
        super().__init__(predict_fn, schema, target=target, several=several)
        self._may_take_tensors = False
        self._cap = max(1, INPUT_CHUNK_BYTES // max(1, int(bytes_per_input))) \
            if bytes_per_input else None

    #: a row of coalitions is no input of ``predict_fn``: the outputs a list ``target=``
    #: names are checked against its first answer, which is kept
    _PROBES = False

    @property
    def max_chunk_rows(self):
        return self._cap

    def predict_inputs(self, inputs, masks: np.ndarray) -> np.ndarray:
        """Scores of ``inputs`` (built from the coalition rows ``masks``), shape ``(m,)``."""
        def ask(rest):
            # (the inputs of the rows no kept answer covers: the last ones)
            asked = inputs[len(inputs) - len(rest):] if len(rest) < len(inputs) else inputs
            try:
                out = self._fn(asked)
            except Exception as exc:
                raise ModelError(f"predict_fn raised {type(exc).__name__} on {len(rest)} "
                                 f"inputs: {exc}") from exc
            self.account(1, len(rest))
            self._note_names(out)  # a DataFrame's columns name the outputs
            return _numbers(to_numpy(out))

        return self._check(self._answer("inputs", masks, ask), masks, kind="inputs")
