"""Masking: a coalition vector mapped back to a model input, as engine segments.

Tables: the interventional value function of Shapley values (below).  Texts and
images: words / superpixels kept or removed (:class:`TextInput`,
:class:`ImageInput`, evaluated as :class:`CoalitionRows`), shared by LIME and
KernelSHAP.


A *query* is one (explained row, coalition): its value
:math:`v_i(S) = \\frac{1}{m} \\sum_b f(x^{(i)}_S, z^{(b)}_{\\bar S})` is the mean
prediction over the background rows :math:`z^{(b)}` with the features of the
coalition :math:`S` taken from the explained row.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from .._validation import InvalidParameterError, check_random_state
from ..engine import Segment
from ..typing import ArrayLike

__all__ = ["MaskedRows", "TextInput", "ImageInput", "CoalitionRows", "WORD_PATTERN",
           "SENTENCE_PATTERN", "PLAYERS", "text_pattern", "TextMasker", "ImageMasker",
           "word_sentences"]


class MaskedRows(Segment):
    """Rows that mix an explained row with every background row under a coalition mask.

    Query ``q`` (one explained row with one mask) owns ``m`` contiguous rows
    ``where(mask, foreground[i], background[b])``, one per background row
    ``b``; they are averaged (``group = m``), so ``result`` holds one value
    :math:`v_i(S)` per query.

    Parameters
    ----------
    foreground : ndarray of shape (n, d)
        Explained rows (encoded; never written).
    background : ndarray of shape (m, d)
        Background rows that fill the features outside the coalition.
    masks : bool ndarray of shape (k, d) or (Q, d)
        Coalitions (True = the feature takes the explained row's value).
    rows : int ndarray of shape (Q,), optional
        Explained row of each mask.  When None, every mask is applied to
        every explained row: query ``q`` is row ``q // k`` with mask ``q % k``.
    """

    def __init__(self, foreground: np.ndarray, background: np.ndarray, masks, *, rows=None):
        masks = np.asarray(masks, dtype=bool)
        d = foreground.shape[1]
        if masks.ndim != 2 or masks.shape[1] != d or background.ndim != 2 \
                or background.shape[1] != d:
            raise InvalidParameterError(f"masks {masks.shape} and background {background.shape} "
                                        f"must have {d} columns like the explained rows")
        self.foreground = foreground
        self.background = background
        self.masks = masks
        self.m = background.shape[0]
        self.width = d
        if rows is None:
            self.query_rows = None
            self.k = masks.shape[0]
            n_queries = foreground.shape[0] * self.k
        else:
            self.query_rows = np.asarray(rows, dtype=np.intp)
            if self.query_rows.shape != (masks.shape[0],):
                raise InvalidParameterError(f"rows has shape {self.query_rows.shape}; expected "
                                            f"({masks.shape[0]},), one explained row per mask")
            n_queries = masks.shape[0]
        self.n_rows = n_queries * self.m
        self.group = self.m

    def rows(self, start, stop):
        m = self.m
        first, last = start // m, (stop - 1) // m + 1
        queries = np.arange(first, last)
        if self.query_rows is None:
            fg, mask = np.divmod(queries, self.k)
            mask = self.masks[mask]
        else:
            fg, mask = self.query_rows[queries], self.masks[queries]
        # broadcasting builds whole (query, background) blocks without gathering the background
        block = np.where(mask[:, None, :], self.foreground[fg][:, None, :],
                         self.background[None, :, :])
        block = block.reshape(-1, self.foreground.shape[1])
        lo = start - first * m
        return block[lo: lo + stop - start]

    def fill(self, start, stop, out):
        out[...] = self.rows(start, stop)


# ---------------------------------------------------------------- texts and images
# A coalition over interpretable features (distinct words, superpixels) is a 0/1
# vector; a representation maps a block of them back to the model's own input.
# LIME samples such vectors around the all-ones instance, KernelSHAP plans them
# as coalitions: both evaluate them through CoalitionRows.

#: The default tokeniser: runs of word characters (letters, digits, underscore); the
#: spaces and punctuation between them are no players and always stay.
WORD_PATTERN = r"\w+"
#: ``players="sentence"``: a sentence runs from a character that is neither a space nor
#: ``.!?`` through its closing ``.!?`` run (or the end of the text).
SENTENCE_PATTERN = r"[^\s.!?][^.!?]*(?:[.!?]+|$)"
#: The players a text can be cut into ("hierarchy": words within sentences, for Owen values).
PLAYERS = ("word", "sentence", "hierarchy")


def text_pattern(players, tokenizer):
    """The word splitter of ``players=`` (``"word"``, ``"sentence"``) and ``tokenizer=``."""
    if players is None:
        return tokenizer
    if players not in PLAYERS:
        raise InvalidParameterError(f"players must be one of {PLAYERS}, got {players!r}.")
    if tokenizer is not None:
        raise InvalidParameterError(
            "players= and tokenizer= both say how the text is cut: pass one of them.")
    return SENTENCE_PATTERN if players == "sentence" else WORD_PATTERN


def word_sentences(text: str, spans: np.ndarray, n_words: int, pattern: str) -> np.ndarray:
    """The sentence (``0 .. m - 1``, in order) of each distinct word: that of its first token."""
    starts = [m.start() for m in re.finditer(pattern, text)]
    sentence = np.full(n_words, -1, dtype=np.intp)
    for a, _, word in spans:
        if sentence[word] < 0:
            sentence[word] = int(np.searchsorted(starts, a, side="right")) - 1
    # sentences without a word of their own (all of theirs came earlier) are no group
    return np.unique(np.maximum(sentence, 0), return_inverse=True)[1].astype(np.intp)


class TextInput:
    """One text as a bag of words: coalition rows -> texts with the absent words removed.

    Every occurrence of an absent word is cut out (or replaced by ``mask``);
    the text around it (spaces, punctuation) stays.

    Attributes
    ----------
    text : str
    words : list of str
        The distinct words, in order of first appearance: the features.
    spans : ndarray of shape (t, 3)
        ``(start, end, word)`` of each token in ``text``.
    """

    def __init__(self, text, tokenizer=None, mask=None):
        if not isinstance(text, str):
            raise InvalidParameterError(f"text must be a str, got {type(text).__name__}.")
        if tokenizer is None or isinstance(tokenizer, str):
            pattern = re.compile(tokenizer or WORD_PATTERN)
            spans = [m.span() for m in pattern.finditer(text) if m.end() > m.start()]
        elif callable(tokenizer):
            spans = _locate(text, tokenizer(text))
        else:
            raise InvalidParameterError(
                "tokenizer must be a regular expression (str) matching one word, or a callable "
                f"text -> list of tokens, got {type(tokenizer).__name__}.")
        if not spans:
            raise InvalidParameterError(
                f"the text has no words to explain ({text[:60]!r}); pass a text with at least "
                "one word (or a tokenizer that finds some).")
        index: dict[str, int] = {}
        words: list[str] = []
        ids: list[int] = []
        for a, b in spans:
            w = text[a:b]
            if w not in index:
                index[w] = len(words)
                words.append(w)
            ids.append(index[w])
        self.text, self.words = text, words
        self.spans = np.array([(a, b, k) for (a, b), k in zip(spans, ids)], dtype=np.intp)
        starts = np.concatenate([[0], self.spans[:, 1]])
        ends = np.concatenate([self.spans[:, 0], [len(text)]])
        self._gaps = [text[a:b] for a, b in zip(starts, ends)]
        self._tokens = [text[a:b] for a, b, _ in self.spans]
        #: what stands for an absent word: nothing (deleted), or a mask token
        self.mask = "" if mask is None else str(mask)

    @property
    def n_features(self) -> int:
        return len(self.words)

    bytes_per_input = 0
    #: the group (sentence) of each word with ``players="hierarchy"``, else None
    hierarchy: np.ndarray | None = None

    def build(self, masks) -> list:
        """The texts of coalition rows ``masks`` ``(m, p)`` (True: the word is kept)."""
        keep = np.asarray(masks, dtype=bool)[:, self.spans[:, 2]]
        gaps, tokens, mask = self._gaps, self._tokens, self.mask
        out = []
        for row in keep:
            parts = [gaps[0]]
            for t, kept in enumerate(row):
                parts.append(tokens[t] if kept else mask)
                parts.append(gaps[t + 1])
            out.append("".join(parts))
        return out


def _locate(text, tokens):
    """``(start, end)`` of each token, searched in order through ``text``."""
    spans, pos = [], 0
    for tok in tokens:
        if not isinstance(tok, str) or not tok:
            raise InvalidParameterError(f"the tokenizer returned {tok!r}; tokens must be "
                                        "non-empty strings that occur in the text in order.")
        start = text.find(tok, pos)
        if start < 0:
            raise InvalidParameterError(f"the tokenizer returned {tok!r}, which does not occur "
                                        "in the text after the previous token.")
        spans.append((start, start + len(tok)))
        pos = start + len(tok)
    return spans


def _import_skimage():
    try:
        import skimage.segmentation as seg
    except ImportError as exc:
        raise ImportError(
            "segmenting images into superpixels needs scikit-image, the optional extra "
            "'image': pip install 'modellens[image]' (or pass segmentation= an integer "
            "label array of the image's height and width).") from exc
    return seg


#: ``segmentation="quickshift"`` / ``"slic"`` options (quickshift: the lime package's).
QUICKSHIFT_OPTIONS = {"kernel_size": 4, "max_dist": 200, "ratio": 0.2}
SLIC_OPTIONS = {"n_segments": 50, "compactness": 10.0}


class ImageInput:
    """One image cut into superpixels: coalition rows -> images with absent ones filled.

    Parameters
    ----------
    image : ndarray of shape (h, w, c) or (h, w)
    segmentation : {"quickshift", "slic"} or int ndarray of shape (h, w)
    hide_color : float or sequence, optional
        The fill of hidden superpixels; None fills each with its own mean colour.
    random_state : int, optional
        Seeds quickshift.

    Attributes
    ----------
    segments : int ndarray of shape (h, w)
        Superpixel of each pixel, ``0 .. p - 1``.
    names : list of str
        The superpixels' ids (a passed label array keeps its own labels).
    """

    def __init__(self, image, segmentation="quickshift", hide_color=None, random_state=None,
                 segmentation_options=None):
        image = _check_image(image)
        h, w = image.shape[:2]
        options = dict(segmentation_options or {})
        if isinstance(segmentation, str):
            if segmentation not in ("quickshift", "slic"):
                raise InvalidParameterError(f"segmentation must be 'quickshift', 'slic' or an "
                                            f"integer label array, got {segmentation!r}.")
            seg = _import_skimage()
            from skimage.util import img_as_float

            # colour (RGB, or the RGB of RGBA) is segmented as is; grey (with or without
            # alpha) as grey
            rgb = image[..., :3] if image.ndim == 3 and image.shape[2] >= 3 else \
                np.repeat(image.reshape(h, w, -1)[..., :1], 3, axis=2)
            if segmentation == "quickshift":
                seed = 0 if random_state is None else int(
                    check_random_state(random_state).integers(2**31 - 1))
                labels = seg.quickshift(img_as_float(rgb), **{**QUICKSHIFT_OPTIONS,
                                                                    "rng": seed, **options})
            else:
                labels = seg.slic(img_as_float(rgb), start_label=0, channel_axis=-1,
                                  **{**SLIC_OPTIONS, **options})
        else:
            labels = np.asarray(segmentation)
            if labels.shape != (h, w) or labels.dtype.kind not in "iub":
                raise InvalidParameterError(
                    f"segmentation as an array must hold integer labels of shape {(h, w)} (the "
                    f"image's height and width), got {labels.dtype} of shape {labels.shape}.")
        ids, inverse = np.unique(labels, return_inverse=True)
        self.segments = inverse.reshape(h, w).astype(np.intp)
        self.names = [str(i) for i in ids]
        self.image = image
        p = ids.size
        flat = image.reshape(h * w, -1).astype(np.float64)
        if hide_color is None:
            sums = np.zeros((p, flat.shape[1]))
            np.add.at(sums, self.segments.ravel(), flat)
            fill = sums / np.bincount(self.segments.ravel(), minlength=p)[:, None]
        else:
            fill = np.tile(_hide_colour(hide_color, image), (p, 1))
        if image.dtype.kind in "biu":
            fill = np.rint(fill)  # the nearest level: a cast alone would truncate the mean
        self.fill = fill[self.segments].reshape(image.shape).astype(image.dtype)
        self.bytes_per_input = image.nbytes

    @property
    def n_features(self) -> int:
        return len(self.names)

    def build(self, masks) -> np.ndarray:
        """The images of coalition rows ``masks`` ``(m, p)``, shape ``(m, *image.shape)``."""
        keep = np.asarray(masks, dtype=bool)[:, self.segments]  # (m, h, w)
        if self.image.ndim == 3:
            keep = keep[..., None]
        return np.where(keep, self.image[None], self.fill[None])


def _hide_colour(hide_color, image) -> np.ndarray:
    """``hide_color`` as one value per channel, checked against the image's channels and dtype."""
    channels = 1 if image.ndim == 2 else image.shape[2]
    try:
        colour = np.asarray(hide_color, dtype=np.float64)
    except (TypeError, ValueError):
        colour = None
    if colour is None or colour.ndim > 1 or colour.size not in (1, channels) \
            or not np.isfinite(colour).all():
        raise InvalidParameterError(
            f"hide_color must be one number or {channels} (one per channel of the image), got "
            f"{hide_color!r}.")
    if image.dtype.kind in "iu":
        info = np.iinfo(image.dtype)
        if colour.min() < info.min or colour.max() > info.max:
            raise InvalidParameterError(
                f"hide_color={hide_color!r} does not fit the image's dtype {image.dtype} "
                f"({info.min} to {info.max}).")
    return np.broadcast_to(colour, (channels,))


def _check_image(image) -> np.ndarray:
    image = np.asarray(image)
    if image.dtype.kind not in "biuf" or image.ndim not in (2, 3) \
            or (image.ndim == 3 and not 1 <= image.shape[2] <= 4) or min(image.shape[:2]) < 2:
        raise InvalidParameterError(
            f"image must be one numeric array of shape (height, width, channels) with 1 to 4 "
            f"channels, or (height, width); got {image.dtype} of shape {image.shape}. Pass a "
            "single image, not a batch.")
    if image.dtype.kind == "f" and not np.isfinite(image).all():
        raise InvalidParameterError("image holds NaN or infinite values.")
    return image


class CoalitionRows(Segment):
    """Coalition rows (0/1 over a representation's features), answered on built inputs.

    Parameters
    ----------
    representation : TextInput or ImageInput
    masks : bool ndarray of shape (k, p)
    rows : ignored
        Accepted for the KernelSHAP planner (one explained input).
    """

    def __init__(self, representation, masks, rows=None):
        self.representation = representation
        self.masks = np.asarray(masks, dtype=bool).reshape(-1, representation.n_features)
        self.n_rows, self.width, self.group = self.masks.shape[0], self.masks.shape[1], 1

    def call_key(self):
        return ("inputs", id(self.representation), self.width)

    def answer(self, model, rows):
        masks = rows > 0.5
        return model.predict_inputs(self.representation.build(masks), rows)

    def fill(self, start, stop, out):
        out[...] = self.masks[start:stop]


class TextMasker:
    """How :func:`~modellens.shapley` cuts a text into words, the players of its Shapley values.

    Each distinct word is one feature; a word left out of a coalition is
    removed from the text (every occurrence), and the model scores what is
    left.  A string ``X`` with no masker gets this masker with its defaults.

    Parameters
    ----------
    tokenizer : str or callable, optional
        A regular expression matching one word (default ``r"\\w+"``), or a
        callable ``text -> list of tokens``.
    players : {"word", "sentence", "hierarchy"}, optional
        Cut the text into words (``WORD_PATTERN``, the default) or sentences
        (``SENTENCE_PATTERN``: through each ``.``, ``!`` or ``?`` run); instead
        of ``tokenizer``.  ``"hierarchy"``: words within sentences, whose
        :func:`~modellens.shapley` values are Owen values (each word in the
        sentence of its first occurrence; see ``attribution._owen``).
    mask_token : str, optional
        What replaces an absent player in the text.  None (default): the
        model's mask token for a transformers classifier whose tokenizer has
        one (``[MASK]``, ``<mask>``), deletion otherwise.

    See Also
    --------
    ImageMasker : The same for images.
    lime_text : LIME for a text, on the same words.

    Examples
    --------
    A score that counts the word "good": all of it goes to "good", nothing to
    the other words:

    >>> import numpy as np, modellens as ml
    >>> def score(texts):
    ...     return np.array([t.count("good") for t in texts], dtype=float)
    >>> attr = ml.shapley(score, "a good film with a good cast", masker=ml.TextMasker())
    >>> attr.feature_names
    ['a', 'good', 'film', 'with', 'cast']
    >>> print(np.round(attr.values[0], 6) + 0.0)
    [0. 2. 0. 0. 0.]
    """

    def __init__(self, tokenizer: str | Callable[[str], list[str]] | None = None, *,
                 players: str | None = None, mask_token: str | None = None) -> None:
        self.pattern = text_pattern(players, tokenizer)
        self.tokenizer, self.players, self.mask_token = tokenizer, players, mask_token

    def __repr__(self):
        return f"TextMasker(tokenizer={self.tokenizer!r}, mask_token={self.mask_token!r})"

    def represent(self, text, random_state=None, mask_token=None) -> TextInput:
        """The text's players; ``mask_token`` (the model's) unless the masker sets its own."""
        rep = TextInput(text, self.pattern, self.mask_token if self.mask_token else mask_token)
        if self.players == "hierarchy":  # the sentence of each word: Owen values' groups
            rep.hierarchy = word_sentences(text, rep.spans, rep.n_features, SENTENCE_PATTERN)
        return rep


class ImageMasker:
    """How :func:`~modellens.shapley` cuts an image into superpixels, the players of its Shapley values.

    Each superpixel is one feature; one left out of a coalition is filled
    with its own mean colour (or ``hide_color``) and the model scores the
    image.

    Parameters
    ----------
    segmentation : {"quickshift", "slic"} or int ndarray of shape (height, width)
    hide_color : float or sequence, optional
        Fill of hidden superpixels; None: each its own mean colour.
    segmentation_options : dict, optional
        Passed to scikit-image's segmentation function.

    See Also
    --------
    TextMasker : The same for texts.
    lime_image : LIME for an image, on the same superpixels.

    Examples
    --------
    An 8 x 8 image whose right half is white, four vertical strips as
    superpixels, and a model that scores the mean brightness: each white
    strip holds a quarter of the image's light (hidden strips are black):

    >>> import numpy as np, modellens as ml
    >>> image = np.zeros((8, 8, 3))
    >>> image[:, 4:] = 1.0
    >>> strips = np.repeat(np.arange(8)[None, :] // 2, 8, axis=0)
    >>> def brightness(images):
    ...     return np.asarray(images).mean(axis=(1, 2, 3))
    >>> masker = ml.ImageMasker(segmentation=strips, hide_color=0.0)
    >>> attr = ml.shapley(brightness, image, masker=masker)
    >>> attr.feature_names, attr.values[0].tolist()
    (['0', '1', '2', '3'], [0.0, 0.0, 0.25, 0.25])
    """

    def __init__(self, segmentation: str | ArrayLike = "quickshift",
                 hide_color: float | ArrayLike | None = None,
                 segmentation_options: dict[str, Any] | None = None) -> None:
        self.segmentation, self.hide_color = segmentation, hide_color
        self.segmentation_options = segmentation_options

    def __repr__(self):
        seg = self.segmentation if isinstance(self.segmentation, str) else "labels"
        return f"ImageMasker(segmentation={seg!r}, hide_color={self.hide_color!r})"

    def represent(self, image, random_state=None) -> ImageInput:
        return ImageInput(image, self.segmentation, self.hide_color, random_state,
                          self.segmentation_options)
