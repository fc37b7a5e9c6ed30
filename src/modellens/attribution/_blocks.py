"""Typed blocks of an :class:`~modellens.attribution.Attributions`, one per kind of method.

The core of a result (values, base values, the explained rows) is the same for
every method; what only some methods produce sits in a block:

* :class:`SurrogateBlock`: LIME's local surrogate and its trust figures;
* :class:`SamplingBlock`: the standard errors and budget of a sampling
  estimator (permutation sampling, KernelSHAP);
* :class:`MediaBlock`: the text or image whose words / superpixels are the
  features.

Each block knows how to select rows and features of itself (indexing an
``Attributions``) and how to write itself to a JSON-safe dict and back.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar, NamedTuple

import numpy as np

from .._validation import InvalidParameterError

__all__ = ["SurrogateBlock", "SamplingBlock", "MediaBlock", "Subject", "BLOCKS", "block_property"]


def _stack(values):
    """Per-output arrays on a new last axis (None stays None)."""
    return None if values[0] is None else np.stack([np.asarray(v) for v in values], axis=-1)


def _pick(value, c):
    """Output ``c`` of a stacked array (None stays None)."""
    return None if value is None else np.ascontiguousarray(np.asarray(value)[..., c])


#: The per-row figures of LIME's stability that differ by output.
_STABILITY_PER_OUTPUT = ("same_top_k", "top_k_overlap", "weight_std")


def _take(value, rows, cols=None):
    """Rows (and features) of a per-row array or list of lists; None stays None."""
    if value is None:
        return None
    if isinstance(value, list):
        value = [value[i] for i in rows]
        return value if cols is None else [[row[j] for j in cols] for row in value]
    value = np.asarray(value)[rows]
    return value if cols is None else value[:, cols]


class _Block:
    """Shared plumbing: a dict of the fields, and construction from one."""

    # set by @dataclass on every subclass: lets the checker accept fields(self)
    __dataclass_fields__: ClassVar[dict[str, Any]]

    def to_fields(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_fields(cls, d: dict):
        names = {f.name for f in fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise InvalidParameterError(f"{cls.__name__} has no fields {sorted(unknown)}.")
        return cls(**d)


@dataclass(eq=False)
class SurrogateBlock(_Block):
    """LIME's local surrogate of each explained row (``attr.surrogate``).

    Attributes
    ----------
    intercept, score, score_holdout, local_prediction : ndarray of shape (n,)
        The surrogate's intercept, its weighted R^2 on the samples it was fit
        on, the leave-one-out weighted R^2, and its prediction at the instance.
    interpretable : {"binned", "continuous", "words", "superpixels"}
        What a feature of the surrogate is: "lies in the instance's quantile
        bin / has its level" (0/1), a standardised value (the weights are then
        slopes, not parts of the prediction), a word kept, a superpixel kept.
    conditions : list of list of str or None
        Tables: what :math:`z_j = 1` means for each row and feature.
    kernel_width : float
    num_samples : int
        Perturbed samples per explained row.
    discretize : str or None
        Tables: the discretiser (``"quartile"``, ``"decile"``) or None.
    feature_selection : str
    sampling : str or None
        Tables: ``"per_row"`` or ``"shared"`` neighbourhoods.
    stability : dict or None
        With ``lime(..., stability=R)``: ``repeats``, ``top_k``, and per row
        ``same_top_k`` (n,), ``top_k_overlap`` (n,), ``weight_std`` (n, d).
    """

    intercept: np.ndarray | None = None
    score: np.ndarray | None = None
    score_holdout: np.ndarray | None = None
    local_prediction: np.ndarray | None = None
    interpretable: str | None = None
    conditions: list | None = None
    kernel_width: float | None = None
    num_samples: int | None = None
    discretize: str | None = None
    feature_selection: str | None = None
    sampling: str | None = None
    stability: dict | None = None

    #: the fields that differ by output (stacked on a last axis with several outputs)
    per_output = ("intercept", "score", "score_holdout", "local_prediction")

    @classmethod
    def stack(cls, blocks: list) -> "SurrogateBlock":
        """The surrogates of every output (fit on the same samples) as one block."""
        first = blocks[0]
        stability = first.stability
        if stability is not None:
            stability = {**stability, **{k: _stack([b.stability[k] for b in blocks])
                                         for k in _STABILITY_PER_OUTPUT if k in stability}}
        return cls(**{**first.to_fields(), "stability": stability,
                      **{k: _stack([getattr(b, k) for b in blocks]) for k in cls.per_output}})

    def output(self, c: int) -> "SurrogateBlock":
        """The surrogate of output ``c`` of a stacked block."""
        stability = self.stability
        if stability is not None:
            stability = {**stability, **{k: _pick(stability[k], c)
                                         for k in _STABILITY_PER_OUTPUT if k in stability}}
        return SurrogateBlock(**{**self.to_fields(), "stability": stability,
                                 **{k: _pick(getattr(self, k), c) for k in self.per_output}})

    def take(self, rows, cols) -> "SurrogateBlock":
        stability = self.stability
        if stability is not None:
            stability = {**stability,
                         **{k: _take(stability.get(k), rows) for k in ("same_top_k",
                                                                        "top_k_overlap")
                            if k in stability}}
            if "weight_std" in stability:
                stability["weight_std"] = _take(stability["weight_std"], rows, cols)
        return SurrogateBlock(**{
            **self.to_fields(),
            **{k: _take(getattr(self, k), rows) for k in ("intercept", "score",
                                                          "score_holdout",
                                                          "local_prediction")},
            "conditions": _take(self.conditions, rows, cols), "stability": stability})



@dataclass(eq=False)
class SamplingBlock(_Block):
    """Standard errors and budget of a sampling estimator (``attr.sampling``).

    Attributes
    ----------
    std : ndarray of shape (n, d) or None
        Standard error of each value (0 where every coalition was enumerated,
        NaN where too few draws give none).
    dof : ndarray of shape (n,) or None
        Degrees of freedom of each row's standard errors (inf: known exactly).
    n_permutations : int or None
        Permutation sampling: feature orders per row (antithetic pairs count twice).
    n_samples : int or None
        KernelSHAP: the budget of coalitions per row (under a stopping rule,
        that of the first round).
    model_rows : int ndarray of shape (n,) or None
        Model rows each explained row paid for: its coalitions times the
        background rows, plus one for its prediction (the empty coalition's
        background rows, shared by every row, are not counted here).
    converged : bool ndarray of shape (n,) or None
        Under a stopping rule (``tol`` / ``tol_abs``): whether the row reached
        the tolerance before the cap ``max_evals``.  None without a rule.
    tol, tol_abs : float or None
        The stopping rule's tolerances (None: not asked).
    max_evals : int or None
        The stopping rule's cap, coalitions per explained row.
    interactions_std : ndarray of shape (n, d, d) or None
        ``interactions=True`` with a sampling estimator: the standard error of
        each interaction value (same degrees of freedom ``dof``).
    """

    std: np.ndarray | None = None
    dof: np.ndarray | None = None
    n_permutations: int | None = None
    n_samples: int | None = None
    model_rows: np.ndarray | None = None
    converged: np.ndarray | None = None
    tol: float | None = None
    tol_abs: float | None = None
    max_evals: int | None = None
    interactions_std: np.ndarray | None = None

    #: per-row fields, shared by every output
    per_row = ("dof", "model_rows", "converged")

    @classmethod
    def stack(cls, blocks: list) -> "SamplingBlock":
        """The standard errors of every output as one block (the budget is shared)."""
        return cls(**{**blocks[0].to_fields(), "std": _stack([b.std for b in blocks]),
                      "interactions_std": _stack([b.interactions_std for b in blocks])})

    def output(self, c: int) -> "SamplingBlock":
        """The block of output ``c`` of a stacked block."""
        return SamplingBlock(**{**self.to_fields(), "std": _pick(self.std, c),
                                "interactions_std": _pick(self.interactions_std, c)})

    def take(self, rows, cols) -> "SamplingBlock":
        inter = self.interactions_std
        if inter is not None:
            inter = np.asarray(inter)[rows][:, cols][:, :, cols]
        return SamplingBlock(**{**self.to_fields(), "std": _take(self.std, rows, cols),
                                "interactions_std": inter,
                                **{k: _take(getattr(self, k), rows) for k in self.per_row}})



@dataclass(eq=False)
class MediaBlock(_Block):
    """The one text or image whose words / superpixels are the features (``attr.media``).

    Attributes
    ----------
    kind : {"text", "image"}
    text : str or None
    spans : int ndarray of shape (t, 3) or None
        ``(start, end, word)`` of each token of ``text``.
    image : ndarray or None
    segments : int ndarray of shape (height, width) or None
        The superpixel of each pixel, ``0 .. d - 1`` in the order of the features.
    """

    kind: str
    text: str | None = None
    spans: np.ndarray | None = None
    image: np.ndarray | None = None
    segments: np.ndarray | None = None

    def take(self, rows, cols) -> "MediaBlock":
        return self  # one input: its text / image does not depend on the rows kept



#: Blocks by the attribute of ``Attributions`` that holds them.
BLOCKS: dict[str, type[_Block]] = {"surrogate": SurrogateBlock, "sampling": SamplingBlock, "media": MediaBlock}


class Subject(NamedTuple):
    """What was explained, as a result shows it: the rows, the features, the output.

    ``codes`` are the explained rows encoded ``(n, d)``; ``columns`` /
    ``column_labels`` the schema (None: numeric, no frame labels); ``media``
    the text or image of a one-input explanation.
    """

    codes: np.ndarray
    feature_names: list
    output: str
    columns: list | None = None
    column_labels: list | None = None
    media: MediaBlock | None = None


def block_property(block: str, name: str, what: str):
    """A field of a block read as a flat attribute (None without the block)."""

    def get(self):
        held = getattr(self, block)
        return None if held is None else getattr(held, name)

    return property(get, doc=f"``{block}.{name}``: {what}.")
