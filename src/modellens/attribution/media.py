r"""LIME for one text or one image, over words or superpixels.

The interpretable features are the distinct words of a text or the
superpixels of an image; a coalition (a 0/1 vector over them) becomes a model
input by removing the absent words or filling the absent superpixels: the
rows of :class:`._games.RemovalGame`, whose Shapley values
:func:`modellens.shapley` gives with ``masker=``.  LIME samples coalitions
around the full input and fits its weighted surrogate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._validation import InvalidParameterError, check_random_state, renamed
from ..engine import Plan, open_request
from ..typing import ArrayLike, PredictFn, RandomStateLike, TargetSpec
from ._games import input_model, media_subject
from ..models import text_classifier
from ._masking import CoalitionRows, ImageInput
from ._text import text_input, text_target
from ._surrogate import (EveryOutput, check_budget, exponential_kernel, fit_outputs,
                         output_names, run_every_output, surrogate_attributions, warn_if_shrunk)
from .result import Attributions

__all__ = ["lime_text", "lime_image", "TEXT_KERNEL_WIDTH", "IMAGE_KERNEL_WIDTH"]

#: Default kernel widths (the lime package's): text distances are cosine distances
#: times 100, image distances plain cosine distances.
TEXT_KERNEL_WIDTH = 25.0
IMAGE_KERNEL_WIDTH = 0.25


def _cosine_to_full(Z):
    """Cosine distance of each 0/1 row to the all-ones vector (1 for the empty row)."""
    kept = Z.sum(axis=1)
    return 1.0 - np.sqrt(kept / Z.shape[1])


def _text_masks(p, size, rng):
    """Row 0 keeps every word; each other row removes ``r ~ U{1..p}`` words at random."""
    removed = rng.integers(1, p + 1, size=size)
    keys = rng.random((size, p))
    cut = np.sort(keys, axis=1)[np.arange(size), removed - 1]
    masks = keys > cut[:, None]
    masks[0] = True
    return masks


def _image_masks(p, size, rng):
    """Row 0 keeps every superpixel; each other one keeps each with probability 1/2."""
    masks = rng.random((size, p)) < 0.5
    masks[0] = True
    return masks


class _Samples(EveryOutput, CoalitionRows):
    """LIME's coalitions of one text or image, answered with every output of the model."""


class _Rows(Plan):
    """One segment's rows; the result is their answers."""

    def __init__(self, segment):
        self.segments = [segment]

    def reduce(self):
        return self.segments[0].result


def _lime_media(predict_fn, rep, *, kind, num_features, num_samples, kernel_width,
                feature_selection, random_state, target, options):
    p = rep.n_features
    what = "distinct words" if kind == "text" else "superpixels"
    num_features, num_samples, width = check_budget(
        num_features, num_samples, p, kernel_width, feature_selection,
        default_width=TEXT_KERNEL_WIDTH if kind == "text" else IMAGE_KERNEL_WIDTH,
        players=f"{what} of the {kind}")
    rng = check_random_state(random_state)
    masks = (_text_masks if kind == "text" else _image_masks)(p, num_samples, rng)
    # LIME's samples are coalitions of the removal game that Shapley values use; every
    # output of a predict_fn's (m, k) scores (target=None, or a list) is fit on the same
    # samples
    model = input_model(predict_fn, rep, target, several=True)
    plan = run_every_output(model, _Rows(_Samples(rep, masks)), options, desc=f"lime ({kind})")
    Y = plan.segments[0].result.reshape(num_samples, -1)
    Z = masks.astype(np.float64)
    distances = _cosine_to_full(Z) * (100.0 if kind == "text" else 1.0)
    fits = fit_outputs(Z, Y, exponential_kernel(distances, width), Z[0], num_features,
                       feature_selection)
    parts = []
    for c, name in enumerate(output_names(model)):
        warn_if_shrunk([fits[c]], stacklevel=4)
        parts.append(surrogate_attributions(
            media_subject(rep, name), [fits[c]], prediction=Y[:1, c].copy(),
            diagnostics={"n_model_rows": model.n_rows},
            interpretable="words" if kind == "text" else "superpixels", kernel_width=width,
            num_samples=num_samples, feature_selection=feature_selection))
    return parts[0] if len(parts) == 1 else Attributions.stack(parts, model.output_labels)


@renamed(predict_fn="model")
def lime_text(model: PredictFn, text: str, *, num_features: int | None = None,
              num_samples: int = 5000, kernel_width: float | None = None,
              feature_selection: str = "auto",
              tokenizer: str | Callable[[str], list[str]] | None = None,
              random_state: RandomStateLike = None, target: TargetSpec = None,
              chunk_size: int | None = None, n_jobs: int | None = None,
              progress: bool | None = None, hf_tokenizer: Any = None,
              players: str | None = None, response_method: str = "auto") -> Attributions:
    r"""Which words of this text move the model's score?

    LIME for a text classifier (or any function of texts): it removes random
    sets of words from the text, scores the variants, and fits a weighted
    linear model of the score on which words were kept.  A word's weight is how
    much its presence raises (or lowers) the score near this text.  The words
    can be drawn highlighted in the text (``attr.plot.text()``,
    ``attr.plot.text_html()``).

    Parameters
    ----------
    model : callable, transformers pipeline or transformers model
        ``model(list of str) -> (m,)`` scores, or ``(m, k)`` class scores:
        every column is explained (from the same samples), or the one
        ``target=`` chooses.  A Hugging Face ``text-classification``
        pipeline, or a sequence-classification model with ``hf_tokenizer=``,
        is scored in batches on its own device, every class from the same
        forward passes (see the user guide's *Texts and transformers*).
    text : str
    tokenizer : str or callable, optional
        A regular expression matching one word (default ``r"\w+"``), or a
        callable ``text -> list of tokens`` (strings found in the text in order).
    hf_tokenizer : transformers tokenizer, optional
        The tokenizer of a transformers ``model`` given without its pipeline
        (not the word splitter: that is ``tokenizer``).
    players : {"word", "sentence"}, optional
        Cut the text into words (the default) or sentences, instead of
        ``tokenizer``.  An absent player is replaced by a transformers
        tokenizer's mask token when it has one, and deleted otherwise.
    response_method : {"auto", "predict_proba", "decision_function"}, default="auto"
        A transformers classifier's class probabilities (``"auto"``,
        ``"predict_proba"``) or logits (``"decision_function"``).
    num_features : int, optional
        Most words with a non-zero weight; default ``min(10, p)``, and at most
        the ``p`` distinct words.
    num_samples, kernel_width, feature_selection, random_state
        As in :func:`modellens.lime`.
    target : int, str or list of them, optional
        The column of ``model``'s output to explain (for a transformers
        classifier also a class label of its ``config.id2label``,
        ``target="POSITIVE"``); a list explains those columns and None
        (default) every column of ``(m, k)`` scores, each output's
        surrogate fit on the same samples (values
        ``(1, p, k)``, ``attr.for_output(c)`` the column's own result, equal
        to the call with ``target=c``).  A list is checked against the
        answer for the whole text or image (a column out of range is an error).
    chunk_size, n_jobs, progress
        Execution options (see :func:`modellens.config`).

    Returns
    -------
    Attributions
        One row over the distinct words (``feature_names``; values ``(1, p)``,
        or ``(1, p, k)`` for ``k`` outputs), with
        ``intercept``, ``score``, ``local_prediction`` (the ``surrogate``
        block); ``media.text`` and ``media.spans`` (each token's start, end
        and word) let
        ``attr.plot.text()`` and ``attr.plot.text_html()`` highlight the words.

    See Also
    --------
    lime_image : The same for an image.
    lime : LIME for tables.
    shapley : Shapley values of words, with ``masker=TextMasker()`` or a string ``X``.

    Notes
    -----
    Each distinct word is a feature (a bag of words: removing it removes every
    occurrence).  Sample 0 is the text itself; every other sample removes
    :math:`r \sim U\{1, \dots, p\}` distinct words chosen at random.  A sample
    keeping :math:`c` of the :math:`p` words is weighted by
    :math:`\sqrt{\exp(-D^2/w^2)}` with :math:`D = 100\,(1 - \sqrt{c/p})`
    (the cosine distance of its 0/1 vector to the full text, in percent) and
    default width :math:`w = 25`; the weighted ridge surrogate is that of
    :func:`modellens.lime` (the ``lime`` package's ``LimeTextExplainer``).

    References
    ----------
    .. [1] Ribeiro, M. T., Singh, S. & Guestrin, C. (2016). "Why should I trust
       you?": Explaining the predictions of any classifier. *KDD 2016*.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> def predict_fn(texts):  # P(positive) rises with "great"
    ...     p = np.array([0.9 if "great" in t.split() else 0.2 for t in texts])
    ...     return np.column_stack([1 - p, p])
    >>> attr = ml.lime_text(predict_fn, "a great movie with a dull plot", target=1,
    ...                     random_state=0)
    >>> attr.feature_names[int(np.argmax(attr.values[0]))]
    'great'
    >>> round(float(attr.values[0].max()), 1)
    0.7
    """
    request = open_request(model, text, chunk_size=chunk_size, n_jobs=n_jobs,
                           progress=progress, media=True)
    if players == "hierarchy":
        raise InvalidParameterError(
            "players='hierarchy' (words within sentences) gives Owen values, with "
            "ml.shapley; LIME's players are words ('word') or sentences ('sentence').")
    model = text_classifier(model, hf_tokenizer, response_method)
    rep = text_input(model, text, tokenizer=tokenizer, players=players)
    return _lime_media(model, rep, kind="text", num_features=num_features,
                       num_samples=num_samples, kernel_width=kernel_width,
                       feature_selection=feature_selection, random_state=random_state,
                       target=text_target(model, target), options=request.options)


@renamed(predict_fn="model")
def lime_image(model: PredictFn, image: ArrayLike, *, num_features: int | None = None,
               num_samples: int = 1000, kernel_width: float | None = None,
               feature_selection: str = "auto",
               segmentation: str | ArrayLike | Callable[[np.ndarray], np.ndarray] = "quickshift",
               hide_color: float | ArrayLike | None = None,
               segmentation_options: dict[str, Any] | None = None,
               random_state: RandomStateLike = None, target: TargetSpec = None,
               chunk_size: int | None = None, n_jobs: int | None = None,
               progress: bool | None = None) -> Attributions:
    r"""Which regions of this image move the model's score?

    LIME for an image model: the image is cut into superpixels (patches of
    similar colour), random sets of them are hidden, the variants are scored,
    and a weighted linear model of the score on which superpixels were kept
    gives each superpixel a weight.  ``attr.plot.image()`` draws the image with
    the most positive and negative superpixels outlined.

    Parameters
    ----------
    model : callable
        ``model(images) -> (m,)`` or ``(m, k)`` (every column explained
        from the same samples, or those ``target=`` chooses);
        ``images`` has shape ``(m, height, width, channels)`` (or
        ``(m, height, width)`` for a 2-D image) and the image's dtype.
    image : ndarray of shape (height, width, channels) or (height, width)
    segmentation : {"quickshift", "slic"} or int ndarray of shape (height, width)
        Quickshift uses ``kernel_size=4, max_dist=200, ratio=0.2`` (the lime
        package's), SLIC ``n_segments=50, compactness=10``; change them with
        ``segmentation_options``.  Both need scikit-image (the ``image``
        extra); a label array does not.
    hide_color : float or sequence, optional
        The colour of hidden superpixels; None (default) fills each with its
        own mean colour.
    Other parameters as in :func:`lime_text` (``num_samples`` defaults to 1000).

    Returns
    -------
    Attributions
        One row over the superpixels (``feature_names`` their ids), with
        ``segments`` (the superpixel of every pixel, ``0 .. p - 1`` in the
        order of ``feature_names``) and the image, in the ``media`` block;
        ``attr.plot.image()`` overlays the most positive and negative ones.

    See Also
    --------
    lime_text : The same for a text.
    shapley : Shapley values of superpixels, with ``masker=ImageMasker()``.
    ImageMasker : How an image is cut into superpixels for Shapley values.

    Notes
    -----
    The image is cut into superpixels (scikit-image's quickshift or SLIC, or
    your own label array); sample 0 is the image, every other sample keeps each
    superpixel with probability 1/2 and fills the others with their own mean
    colour (or ``hide_color``).  A sample keeping :math:`c` of :math:`p`
    superpixels is weighted by :math:`\sqrt{\exp(-D^2/w^2)}`,
    :math:`D = 1 - \sqrt{c/p}` (cosine distance to the full image), default
    :math:`w = 0.25`; the surrogate is that of :func:`modellens.lime` (the
    ``lime`` package's ``LimeImageExplainer``).

    References
    ----------
    .. [1] Ribeiro, M. T., Singh, S. & Guestrin, C. (2016). "Why should I trust
       you?": Explaining the predictions of any classifier. *KDD 2016*.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> image = np.random.default_rng(0).random((16, 16, 3))
    >>> labels = (np.arange(16)[:, None] // 8) * 2 + np.arange(16)[None, :] // 8
    >>> def predict_fn(images):  # looks at the top-left quarter only
    ...     return images[:, :8, :8].std(axis=(1, 2, 3))
    >>> attr = ml.lime_image(predict_fn, image, segmentation=labels, random_state=0)
    >>> attr.feature_names, attr.segments.shape
    (['0', '1', '2', '3'], (16, 16))
    >>> attr.feature_names[int(np.argmax(attr.values[0]))]
    '0'
    """
    request = open_request(model, image, chunk_size=chunk_size, n_jobs=n_jobs,
                           progress=progress, media=True)
    rep = ImageInput(image, segmentation, hide_color, random_state, segmentation_options)
    return _lime_media(model, rep, kind="image", num_features=num_features,
                       num_samples=num_samples, kernel_width=kernel_width,
                       feature_selection=feature_selection, random_state=random_state,
                       target=target, options=request.options)
