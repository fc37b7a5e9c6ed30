r"""Shapley games: the players, and how a coalition becomes model rows or exact values.

A game fixes what :math:`v(S)` means; an estimator (:mod:`.exact`,
:mod:`.permutation`, :mod:`.kernel`, :mod:`.tree`) decides which coalitions to
ask for and how to combine their worths.  Any estimator that plans coalitions
runs on any game that offers coalition rows:

* :class:`InterventionalGame`: a table and a background,
  :math:`v_i(S) = \frac1m \sum_b f(x^{(i)}_S, z^{(b)}_{\bar S})`;
* :class:`RemovalGame`: one text or image,
  :math:`v(S) = f(\text{input with only } S \text{ kept})`;
* :class:`TreeGame`: a tree ensemble, whose values the trees give exactly with
  no model rows beyond the agreement check's (path-dependent without a
  background, interventional with one).

Every game has the same small interface: ``n_players``, ``n_explained``,
``value_function``, ``model`` (what evaluates its rows; None for trees),
``subject`` (what the result shows), ``diagnostics`` (incidental details),
``offers_rows``; :meth:`Game.coalition_rows` ``(masks, rows=None) -> Segment``;
:meth:`Game.end_segments` and :meth:`Game.ends` (the empty and full
coalitions, :math:`v(\emptyset)` and :math:`v_i(N) = f(x^{(i)})`).
"""

from __future__ import annotations

import copy
from typing import NamedTuple

import numpy as np

from .._validation import InvalidParameterError, check_choice
from ..engine import DataRows, Plan
from ..models import InputModel, Model
from ..trees import route, tree_outputs
from ._blocks import MediaBlock, Subject
from ._masking import CoalitionRows, ImageMasker, MaskedRows, TextInput, TextMasker

__all__ = ["Game", "InterventionalGame", "RemovalGame", "TreeGame", "Estimate", "ShapleyPlan",
           "MASKERS", "check_masker", "tree_ensemble_for"]


class Estimate(NamedTuple):
    """What an estimator returns: values ``(n, d)``, their standard errors (or None),
    the base value :math:`v(\\emptyset)`, the predictions ``(n,)``, and interaction
    values ``(n, d, d)`` (with their standard errors when sampled) when the
    estimator gives them."""

    values: np.ndarray
    std: np.ndarray | None
    base_value: float
    prediction: np.ndarray
    interactions: np.ndarray | None = None
    interactions_std: np.ndarray | None = None


class Game:
    """Players and the worth of their coalitions (see the module docstring)."""

    value_function: str = ""
    offers_rows = True
    model: Model | InputModel | None = None  # what answers the game's rows
    n_explained: int
    n_players: int

    def coalition_rows(self, masks, rows=None):
        """A segment whose result is :math:`v_i(S)` for each (row, mask).

        ``masks`` ``(k, d)`` apply to every explained row (query ``q`` is row
        ``q // k``, mask ``q % k``), or, with ``rows`` ``(k,)``, each to its row.
        """
        raise InvalidParameterError(f"the {self.value_function} game of {type(self).__name__} "
                                    "is not evaluated on coalition rows.")

    def end_segments(self) -> list:
        """Segments of the empty and the full coalition (evaluated first)."""
        return []

    def ends(self):
        """``(v(empty), v_i(full) for every row)`` once the end segments are evaluated."""
        raise NotImplementedError

    def null_players(self) -> np.ndarray:
        """Players known not to change any coalition's worth, per explained row, ``(n, d)``.

        A null player's Shapley value is 0 exactly; a regression estimator that
        left it in would give it sampling noise (and spread that noise over the
        others).  None are known by default.
        """
        return np.zeros((self.n_explained, self.n_players), dtype=bool)


class InterventionalGame(Game):
    """A table: absent features take each background row's values, averaged.

    Parameters
    ----------
    model : Model
    dataset : Dataset
        The explained rows are its first ``n`` rows.
    n : int
    background : ndarray of shape (m, d)
        Encoded background rows.
    note : str
        Where the background came from (shown in ``diagnostics["background"]``).
    """

    value_function = "interventional"
    model: Model

    def __init__(self, model: Model, dataset, n: int, background: np.ndarray, note: str):
        self.model, self._dataset = model, dataset
        self.foreground, self.background = dataset.values[:n], background
        self.n_explained, self.n_players = n, dataset.n_features
        self._empty, self._full = DataRows(background), DataRows(self.foreground)
        self.subject = Subject(
            codes=self.foreground.copy(), feature_names=dataset.feature_names,
            output=model.output_name, columns=dataset.columns,
            column_labels=dataset.column_labels if dataset.is_frame else None)
        self.diagnostics = {"background": note, "n_background": background.shape[0]}
        #: model rows per (explained row, coalition)
        self.rows_per_coalition = background.shape[0]
        self.made: list = []  # the coalition segments planned (MSEv reads their worths)

    def with_model(self, model):
        """The same game of another output's model (same background, same rows)."""
        return type(self)(model, self._dataset, self.n_explained, self.background,
                          self.diagnostics["background"])

    def coalition_rows(self, masks, rows=None):
        seg = MaskedRows(self.foreground, self.background, masks, rows=rows)
        self.made.append(seg)
        return seg

    def end_segments(self):
        return [self._empty, self._full]

    def ends(self):
        return float(self._empty.result.mean()), self._full.result.copy()

    def null_players(self) -> np.ndarray:
        """A feature whose value in the row equals it in every background row: masking it
        changes no model row, so :math:`v(S \\cup j) = v(S)` for every :math:`S`."""
        fg, bg = self.foreground, self.background
        null = np.ones(fg.shape, dtype=bool)
        for start in range(0, bg.shape[0], 256):  # (n, 256, d) at most at a time
            b = bg[None, start:start + 256, :]
            f = fg[:, None, :]
            null &= np.all((b == f) | (np.isnan(b) & np.isnan(f)), axis=1)
        return null


#: Kinds of input ``ml.shapley(..., masker=)`` takes besides tables.
MASKERS = ("text", "image")


def check_masker(masker):
    """``"text"`` / ``"image"`` / a masker object, as a masker object."""
    if isinstance(masker, str):
        check_choice(masker, "masker", MASKERS)
        return TextMasker() if masker == "text" else ImageMasker()
    if not isinstance(masker, (TextMasker, ImageMasker)):
        raise InvalidParameterError(f"masker must be 'text', 'image', a TextMasker or an "
                                    f"ImageMasker, got {type(masker).__name__}.")
    return masker


def media_subject(rep, model_output: str) -> Subject:
    """The subject of a one-input explanation over words or superpixels."""
    if isinstance(rep, TextInput):
        names, media = list(rep.words), MediaBlock("text", text=rep.text, spans=rep.spans)
    else:
        names = list(rep.names)
        media = MediaBlock("image", image=rep.image, segments=rep.segments)
    return Subject(codes=np.ones((1, len(names))), feature_names=names, output=model_output,
                   media=media)


def input_model(predict_fn, rep, target, *, several: bool = False) -> InputModel:
    """The model seam for a ``predict_fn`` on lists of texts / arrays of images."""
    names = list(rep.words) if isinstance(rep, TextInput) else list(rep.names)
    # the whole text / image tells the outputs when they are to be learnt (one input)
    return InputModel(predict_fn, names, target=target, bytes_per_input=rep.bytes_per_input,
                      several=several, probe=lambda: rep.build(np.ones((1, len(names)), bool)))


class RemovalGame(Game):
    """One text or image: absent words are removed, absent superpixels filled.

    Parameters
    ----------
    predict_fn : callable
    representation : TextInput or ImageInput
    target : int or list of int, optional
    several : bool
        Explain every output of ``(m, k)`` scores with ``target=None`` (or
        those a list names): each output's game is :meth:`with_model` of the
        model's view of it, on the same coalitions.
    """

    value_function = "removal"
    model: InputModel

    def __init__(self, predict_fn, representation, *, target=None, several=False):
        self.rep = representation
        self.kind = "text" if isinstance(representation, TextInput) else "image"
        self.n_explained, self.n_players = 1, representation.n_features
        self.diagnostics = {"masker": self.kind}
        self._use(input_model(predict_fn, representation, target, several=several))

    def _use(self, model):
        p = self.n_players
        self.model = model
        self._ends = CoalitionRows(self.rep, np.array([np.zeros(p, bool), np.ones(p, bool)]))
        self.subject = media_subject(self.rep, model.output_name)

    def with_model(self, model):
        """The same game of another output's model (same input, same players)."""
        game = copy.copy(self)
        game._use(model)
        return game

    def coalition_rows(self, masks, rows=None):
        # one explained input: every mask is its own
        return CoalitionRows(self.rep, masks)

    def end_segments(self):
        return [self._ends]

    def ends(self):
        v0, fx = self._ends.result
        return v0, np.array([fx])


def tree_ensemble_for(model, dataset, X, *, strict: bool, response_method: str, request,
                      n=None, stacklevel: int = 4):
    """The route of TreeSHAP (:func:`~modellens.trees.route`, checked on the explained rows:
    the first ``n`` of ``dataset``, all when None): falsy when it cannot explain this
    request (``strict``: the route raises why).

    Returns the :class:`~modellens.trees.Route`: the trees and their raw output on the
    explained rows (``raw``).  The model rows of their check are ``request``'s, counted on
    it (:meth:`~modellens.engine.Request.account`) whether the trees pass or not.
    """
    return route(model, dataset, X, method="shapley", response_method=response_method,
                 rows=dataset.values if n is None else dataset.values[:n], strict=strict,
                 request=request, stacklevel=stacklevel)


class TreeGame(Game):
    """A tree ensemble's own game: exact values from the trees, no model rows but their
    check's.

    Path-dependent without a background (absent features follow the covers),
    interventional with one.  ``X`` and ``background`` are held in the trees'
    own category codes (:meth:`TreeEnsemble.encode`).  The outputs ``target``
    asks for (:func:`~modellens.trees.tree_outputs`: the black-box
    rules) are the value columns of :attr:`ensemble`, explained in one pass
    over the trees; ``labels`` (None for one output) select them in the
    stacked result, and :attr:`subjects` holds each output's subject.
    ``model_rows``: the request's model rows (:attr:`~modellens.engine.Request.n_model_rows`:
    those that checked the trees' answers, :func:`tree_ensemble_for`, the game's only
    ones); ``raw``: the trees' raw output on the explained rows that the check computed
    (every column).
    """

    offers_rows = False

    def __init__(self, ens, model, dataset, n: int, background, note: str, *, target=None,
                 model_rows: int = 0, raw=None):
        outputs, self.labels = tree_outputs(ens, model, target)
        self.ensemble = ens.select_outputs([(c, negate) for c, negate, _ in outputs])
        #: the explained rows' raw output of each explained column, where the check gave it
        #: for every row (TreeSHAP's prediction, not computed again)
        # (only where the selection sums each column's leaves in the same order as all the
        # trees do: TreeEnsemble.sums_as_source)
        same_sum = raw is not None and len(raw) == n and self.ensemble.sums_as_source
        self.prediction = np.column_stack(
            [-raw[:, c] if negate else raw[:, c] for c, negate, _ in outputs]) \
            if same_sum else None
        fg = dataset.values[:n]
        # the trees' categorical splits read the model's own category codes
        self.X = self.ensemble.encode(fg, dataset.columns)
        self.background = None if background is None else \
            self.ensemble.encode(background, dataset.columns)
        self.value_function = "tree_path_dependent" if background is None else "interventional"
        self.n_explained, self.n_players = n, dataset.n_features
        self.subjects = [Subject(
            codes=fg.copy(), feature_names=dataset.feature_names, output=output,
            columns=dataset.columns,
            column_labels=dataset.column_labels if dataset.is_frame else None)
            for _, _, output in outputs]
        self.subject = self.subjects[0]
        # each output's trees, as its single-output call counts them
        feeds = np.logical_or.reduceat(self.ensemble.value != 0, self.ensemble.roots[:-1],
                                       axis=0)
        self.output_diagnostics = [
            {"background": note, "n_background": 0 if background is None else len(background),
             "n_trees": int(max(feeds[:, c].sum(), 1)), "library": ens.library,
             "link": ens.link, "n_model_rows": model_rows} for c in range(len(outputs))]
        self.diagnostics = self.output_diagnostics[0]


class ShapleyPlan(Plan):
    """A game's end coalitions and an estimator's coalitions; :meth:`reduce` is the estimate."""

    def __init__(self, game: Game, estimator):
        self.game, self.estimator = game, estimator
        self.segments = game.end_segments() + list(estimator.segments)

    def reduce(self) -> Estimate:
        return self.estimator.estimate(self.game)
