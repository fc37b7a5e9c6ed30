r"""Deletion and insertion curves of a text explanation: do its top words move the model?

For a text attribution over ``p`` players ordered by their value (largest
first), the deletion curve is the model's score with the top ``k`` players
removed, and the insertion curve its score with only the top ``k`` kept, for
``k = 0 .. p``.  A faithful explanation makes the deletion curve fall fast
(small area) and the insertion curve rise fast (large area).  The areas are
trapezoids over the fraction ``k / p`` in ``[0, 1]``.  The texts are built by
the same masking rule as the explanation's (the players' spans, the model's
mask token or deletion) and scored through the engine in one run.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._result_dicts import flat_dict, flat_fields, floats, strings
from .._validation import InvalidParameterError
from ..engine import Plan, open_request, run
from ..models import TextClassifier, text_classifier
from ._games import input_model
from ..typing import ModelLike, PredictFn, TargetSpec
from ._masking import CoalitionRows, TextInput
from ._text import text_target
from .result import Attributions

__all__ = ["DeletionCurves", "deletion_curves"]

#: The fields of its dict, each with its conversion (to_dict and from_dict alike).
_LAYOUT: dict[str, Callable[[Any], Any]] = {
    "players": strings, "deletion": floats, "insertion": floats, "output": str}


@dataclass(frozen=True, eq=False)
class DeletionCurves:
    """The deletion and insertion curves of one text explanation.

    Attributes
    ----------
    players : list of str
        The players in the order they are removed / inserted (largest value first).
    deletion : ndarray of shape (p + 1,)
        The score with the first ``k`` players removed, ``k = 0 .. p``.
    insertion : ndarray of shape (p + 1,)
        The score with only the first ``k`` players kept.
    output : str
        The output scored.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> def score(texts):
    ...     return np.array([float("good" in t.split()) for t in texts])
    >>> attr = ml.shapley(score, "a good film")
    >>> curves = ml.deletion_curves(score, attr)
    >>> curves.players[0], curves.deletion.tolist(), curves.deletion_area
    ('good', [1.0, 0.0, 0.0, 0.0], 0.16666666666666666)
    """

    players: list
    deletion: np.ndarray
    insertion: np.ndarray
    output: str

    @property
    def fraction(self) -> np.ndarray:
        """``k / p`` for ``k = 0 .. p``."""
        p = len(self.players)
        return np.arange(p + 1) / max(p, 1)

    @property
    def deletion_area(self) -> float:
        """Area under the deletion curve over ``[0, 1]`` (smaller: more faithful)."""
        return float(np.trapezoid(self.deletion, self.fraction))

    @property
    def insertion_area(self) -> float:
        """Area under the insertion curve over ``[0, 1]`` (larger: more faithful)."""
        return float(np.trapezoid(self.insertion, self.fraction))

    def __repr__(self):
        return (f"DeletionCurves(output={self.output!r}, players={len(self.players)}, "
                f"deletion_area={self.deletion_area:.4g}, "
                f"insertion_area={self.insertion_area:.4g})")

    def to_frame(self) -> pd.DataFrame:
        """One row per ``k``: ``k``, ``fraction``, ``player`` (the k-th moved), ``deletion``,
        ``insertion``."""
        return pd.DataFrame({"k": np.arange(len(self.players) + 1), "fraction": self.fraction,
                             "player": [""] + [str(w) for w in self.players],
                             "deletion": self.deletion, "insertion": self.insertion})

    def to_dict(self) -> dict:
        """A JSON-safe dict of every field (:meth:`from_dict` rebuilds the result)."""
        return flat_dict(self, _LAYOUT)

    @classmethod
    def from_dict(cls, d: dict) -> "DeletionCurves":
        """Rebuild the result from :meth:`to_dict` output (also after a JSON round trip).

        Every field is checked before the curves are built (the players strings, both
        curves float arrays one point longer than the players, the output a string): a
        dict that ``to_dict`` did not write is refused by the name of the field at fault.
        """
        from .._result_specs import check_deletion_curves

        return cls(**flat_fields(d, "DeletionCurves", _LAYOUT, check_deletion_curves))

    def for_output(self, output) -> "DeletionCurves":
        """These curves when ``output`` is theirs (they hold one output: ``deletion_curves``
        computes another output's curves from its own order)."""
        if output != self.output:
            raise InvalidParameterError(
                f"these curves are of output {self.output!r}, not {output!r}: call "
                f"deletion_curves(model, attr, output={output!r}).")
        return self

    def plot(self, ax=None, *, output=None):
        """Both curves against the fraction of players moved, the areas in the legend.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (a new figure when None).
        output : str, optional
            Checked against the curves' output (one output per result).

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> def score(texts):
        ...     return np.array([("good" in t.split()) * 1.0 for t in texts])
        >>> curves = ml.deletion_curves(score, ml.shapley(score, "a good film"))
        >>> ax = curves.plot()
        >>> len(ax.get_lines())
        2
        """
        if output is not None:
            self.for_output(output)
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(5, 3.2))
        ax.plot(self.fraction, self.deletion, marker=".",
                label=f"deletion (area {self.deletion_area:.3g})")
        ax.plot(self.fraction, self.insertion, marker=".",
                label=f"insertion (area {self.insertion_area:.3g})")
        ax.set_xlabel("fraction of players removed / inserted (largest value first)")
        ax.set_ylabel(self.output)
        ax.legend(frameon=False)
        return ax


def deletion_curves(model: ModelLike | PredictFn, attr: Attributions, *,
                    output: Hashable | None = None, target: TargetSpec = None,
                    hf_tokenizer: Any = None,
                    response_method: str = "auto", chunk_size: int | None = None,
                    n_jobs: int | None = None, progress: bool | None = None) -> DeletionCurves:
    """The deletion and insertion curves of a text explanation (see the module docstring).

    Parameters
    ----------
    model : callable, transformers pipeline or model
        The model explained (as given to :func:`~modellens.shapley` /
        :func:`~modellens.lime_text`, with the same ``hf_tokenizer`` and
        ``response_method``).
    attr : Attributions
        One text's explanation (``shapley`` of a text, or ``lime_text``).
    output : str or int, optional
        Which output of ``attr`` orders and scores; default its only one, or
        for several the class the model predicts for the text.
    target : int or str, optional
        The model's column of a single-output ``attr`` (the ``target=`` it
        was computed with) when the model has several: a position, or for a
        transformers classifier a class label of its ``config.id2label``
        (``"POSITIVE"``).  For an ``attr`` of several outputs, the same as
        ``output=``.
    chunk_size, n_jobs, progress
        Execution options (see :func:`modellens.config`).

    Returns
    -------
    DeletionCurves
        The players in the order moved, both curves and their areas.

    See Also
    --------
    shapley : Shapley values of the words of a text, the attributions read here.
    lime_text : LIME's attributions of the words of a text.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> def score(texts):  # "good" raises the score, "dull" lowers it
    ...     return np.array([("good" in t.split()) - 0.5 * ("dull" in t.split())
    ...                      for t in texts], dtype=float)
    >>> attr = ml.shapley(score, "a good but dull film")
    >>> curves = ml.deletion_curves(score, attr)
    >>> curves.players[0], curves.players[-1]
    ('good', 'dull')
    >>> curves.deletion_area < curves.insertion_area
    True
    """
    media = getattr(attr, "media", None)
    if media is None or getattr(media, "text", None) is None:
        raise InvalidParameterError("deletion_curves takes the explanation of one text "
                                    "(shapley of a str, or lime_text).")
    request = open_request(model, media.text, chunk_size=chunk_size, n_jobs=n_jobs,
                           progress=progress, media=True)
    fn = text_classifier(model, hf_tokenizer, response_method)
    if attr.outputs is not None:
        if target is not None and output is not None:
            raise InvalidParameterError(
                "give output= (which of the explanation's outputs) or target=, not both.")
        output = output if target is None else target  # every class explained: the same
        if output is None:
            output = int(np.argmax(np.asarray(attr.prediction)[0]))
        column = attr.output_position(output)
        one = attr.for_output(column)
    else:
        column, one = text_target(fn, target), attr  # a position (a class label read)
    spans = np.asarray(media.spans, dtype=np.intp).reshape(-1, 3)
    rep = TextInput(media.text, lambda t: [t[a:b] for a, b, _ in spans],
                    fn.mask_token if isinstance(fn, TextClassifier) else None)
    if rep.words != list(one.feature_names):
        raise InvalidParameterError("the explanation's players are not the words of its text "
                                    "(a custom masker?): deletion_curves cannot rebuild them.")
    order = np.argsort(-np.asarray(one.values[0], dtype=np.float64), kind="stable")
    p = len(order)
    masks = np.zeros((2 * (p + 1), p), dtype=bool)
    for k in range(p + 1):
        masks[k, order[k:]] = True          # deletion: the first k removed
        masks[p + 1 + k, order[:k]] = True  # insertion: only the first k kept
    mdl = input_model(fn, rep, column)
    seg = CoalitionRows(rep, masks)
    run(mdl, [_Segment(seg)], request.options, desc="deletion curves")
    scores = np.asarray(seg.result, dtype=np.float64).reshape(-1)
    name = attr.outputs[column] if attr.outputs is not None else mdl.output_name
    if attr.outputs is None and isinstance(fn, TextClassifier) and column is not None:
        name = fn.labels[int(column)]  # the class's label, not "f(x)[1]"
    return DeletionCurves(players=[rep.words[j] for j in order], deletion=scores[:p + 1],
                          insertion=scores[p + 1:], output=str(name))


class _Segment(Plan):
    """A plan of one segment (its answers are the result)."""

    def __init__(self, segment):
        self.segments = [segment]

    def reduce(self):
        return self.segments[0].result
