"""Whether a model's parsed trees answer as the model does: the net under every tree route.

The tree readers keep each library's split rules to the bit, and the model
files are checked before they are read, but no list of checks foresees every
way a model is built (a field the reader does not model, a file edited where
no check looks): trees that load and pass every check may still answer
otherwise than the model.  Every tree route therefore compares the trees'
answers with the model's own on the rows it explains (:func:`disagreement`)
before it gives a number: TreeSHAP on its explained rows, the tree H
statistics and the tree partial dependence on the first ``DATA_CHECK_ROWS``
data rows, the exact ICE and tree ALE on their first ``RESPONSE_CHECK_ROWS``.
:func:`~modellens.trees.route` runs the check for every tree method.

What is compared: the trees' raw output against the model's raw margin where
the library gives it (:func:`margin_model`: XGBoost ``output_margin=True``,
LightGBM ``raw_score=True``, scikit-learn's ``decision_function``): it is
what TreeSHAP, the H statistics and the tree PD explain, each library
computes it with no link (cheaper than the probabilities), and a gap in it
is not hidden by a saturated probability (0.96 of log-odds at a margin of 12
moves the probability by 6e-6).  Where the library has no margin (a forest's
class probabilities, a regressor's prediction) its answer is the trees' sum
itself.  A route that shows the model's response (the exact ICE, tree ALE)
compares that response, through the request's own model (:func:`respond`).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..data import Dataset
from ..models import Model, ModelError

__all__ = ["CHECK_TOLERANCE", "FLOAT32_TOLERANCE", "EXPLAINED_CHECK_ROWS", "DATA_CHECK_ROWS",
           "RESPONSE_CHECK_ROWS", "disagreement", "margin_disagreement", "margin_model",
           "model_response", "respond"]

#: Relative agreement required (the readers keep each library's split rules to the bit,
#: so only rounding separates the two).  XGBoost adds its leaves and applies its link in
#: float32: its answers are the exact ones rounded to about 1e-7 per operation, so it is
#: held to float32's resolution over its trees (a link it does not model, a damaged
#: leaf or split still differs by far more).
CHECK_TOLERANCE = 1e-9
FLOAT32_TOLERANCE = 1e-4
#: Most explained rows TreeSHAP checks (the first ones): one model call on them costs a
#: small part of TreeSHAP's time on them; beyond it the call's memory grows with no gain.
EXPLAINED_CHECK_ROWS = 100_000
#: Data rows the tree H statistics and the tree partial dependence check (the first ones
#: of the rows they use): their statistics are means over these rows' trees.
DATA_CHECK_ROWS = 1_000
#: Data rows the routes that show the model's response (the exact ICE, tree ALE) check:
#: a link the readers do not model, or trees that answer otherwise, shows on a few rows.
RESPONSE_CHECK_ROWS = 16


def respond(ens, raw: np.ndarray, response) -> np.ndarray:
    """The explained outputs ``(..., n_out)`` of raw outputs ``(..., K)``, as the model
    answers them.

    ``response`` is ``(kind, columns)``: ``kind`` ``"raw"`` (the raw output),
    ``"proba"`` (the link's probabilities) or ``"exp"`` (a log link's prediction: a
    Poisson, Gamma or Tweedie booster's); ``columns`` ``(column, sign)`` of each
    explained output.
    """
    kind, columns = response
    if kind == "exp":
        full = np.exp(raw)
    elif kind == "proba":
        if ens.link == "softmax":
            shifted = np.exp(raw - raw.max(axis=-1, keepdims=True))
            full = shifted / shifted.sum(axis=-1, keepdims=True)
        elif ens.link == "logit":
            p = 1.0 / (1.0 + np.exp(-raw[..., 0]))
            full = np.stack([1.0 - p, p], axis=-1)
        else:  # a forest's leaves hold the class probabilities
            full = raw
    else:
        full = raw
    return np.stack([sign * full[..., col] for col, sign in columns], axis=-1)


def _xgboost_margin(model):
    if hasattr(model, "get_booster"):  # the scikit-learn wrapper (its best iteration kept)
        return lambda X: model.predict(X, output_margin=True)
    import xgboost as xgb

    def margin(X):  # a Booster predicts a DMatrix only (see models.booster_predict)
        data = xgb.DMatrix(X, enable_categorical=True) if isinstance(X, pd.DataFrame) else \
            xgb.DMatrix(X, feature_names=model.feature_names, feature_types=model.feature_types)
        return model.predict(data, output_margin=True)
    return margin


def margin_model(raw_model, ens, dataset):
    """``(Model, response)``: the model seam over the library's raw margin of every output
    (see the module docstring), and the ``response`` (:func:`respond`) that maps the trees'
    raw output ``(n, K)`` to its answer, for :func:`disagreement`.

    The seam feeds the model its own input form (a DataFrame with its categories, an
    array), as the model's other calls do, and counts its rows: every row it answers
    (the trees tell its outputs, so it answers no row to learn them).
    """
    library = ens.library
    response = ("raw", [(k, 1.0) for k in range(ens.n_outputs)])
    if ens.link == "identity" and (library != "xgboost" or hasattr(raw_model, "get_booster")):
        # the prediction is the raw output: asked as every other call asks the model (a
        # LightGBM random forest's raw_score is not averaged as its prediction is)
        fn = raw_model.predict_proba if ens.classes is not None else raw_model.predict
    elif library == "xgboost":
        fn = _xgboost_margin(raw_model)
    elif library == "lightgbm":
        def fn(X):
            return raw_model.predict(X, raw_score=True)
    elif ens.link in ("logit", "softmax"):
        fn = raw_model.decision_function
    elif ens.link == "log":  # scikit-learn's Poisson / Gamma boosting: predict is exp(raw)
        def fn(X):
            return np.log(raw_model.predict(X))
    else:
        fn = raw_model.predict
    as_frame = Model(raw_model, dataset, response_method="predict").as_frame
    # (a plain callable of the model's input form; several: one output per raw column)
    return _Margin(fn, dataset, input_format="frame" if as_frame else "array",
                   width=ens.n_outputs), response


class _Margin(Model):
    """A plain callable of ``width`` output columns as a model seam that knows them.

    A seam learns the outputs of a plain callable by asking it one row
    (:meth:`~modellens.models.Model._probe`, a row no method counts); the
    check's callable has the trees' columns, so it asks none: every row the model
    answers for the check is a row the check counts.
    """

    def __init__(self, fn, dataset, *, input_format: str, width: int):
        self._width = width
        super().__init__(fn, dataset, input_format=input_format, several=width > 1)

    def _probe(self, *, strict: bool = False, ask=None) -> int | None:
        return self._width if self._width > 1 else None


def disagreement(ens, model, rows, dataset, response) -> str | None:
    """Why the trees' answers on ``rows`` are not the model's (None when they agree).

    Parameters
    ----------
    ens : TreeEnsemble
        The parsed trees, every output column.
    model : Model
        The model seam whose :meth:`~modellens.models.Model.predict` gives the compared
        outputs (the request's own, or :func:`margin_model`'s).
    rows : ndarray of shape (m, d)
        Encoded data rows (the dataset's codes; the trees' own are mapped here).
    dataset : Dataset
        The rows' schema.
    response : tuple
        ``(kind, columns)`` mapping the trees' raw outputs to the model's answer
        (:func:`respond`).

    A model that refuses the rows because they hold a category it never saw (XGBoost)
    is checked on the rows of known categories.

    Returns
    -------
    str or None
        The largest relative gap ``|trees - model| / max(1, |model|)`` and on how many
        rows it is over the tolerance (``FLOAT32_TOLERANCE`` for XGBoost, which adds in
        float32, else ``CHECK_TOLERANCE``); None when every row agrees.
    """
    return _compare(ens, model, rows, dataset, response)[0]


def _compare(ens, model, rows, dataset, response):
    """``(why, raw)``: :func:`disagreement`, and the trees' raw output ``(m, K)`` on
    ``rows`` (None where only some rows were checked)."""
    if rows.shape[0] == 0:
        return None, None
    coded = ens.encode(rows, dataset.columns)
    m = len(rows)
    try:
        theirs = model.predict(rows.copy())
    except ModelError:
        # XGBoost refuses a frame holding a category it never saw, which the trees send
        # where the library's rule for codes does: the rows of known levels are checked
        known, rows, coded = _known(ens, model, rows, coded, dataset)
        if rows.shape[0] == 0:
            return None, None
        theirs = known.predict(rows.copy())  # (a model that refuses these too: its error)
        model.account(1, len(rows))  # (answered through a copy: the seam's rows all the same)
    raw = ens.predict_raw(coded)
    ours = respond(ens, raw, response)
    theirs = np.asarray(theirs, dtype=np.float64).reshape(ours.shape)
    gap = (np.abs(ours - theirs) / np.maximum(1.0, np.abs(theirs))).reshape(len(rows), -1)
    tolerance = FLOAT32_TOLERANCE if ens.library == "xgboost" else CHECK_TOLERANCE
    off = ~(gap <= tolerance)  # (NaN on either side is a disagreement)
    if not off.any():
        return None, raw if len(rows) == m else None
    worst = np.nanmax(np.where(np.isnan(gap), np.inf, gap))
    return (f"the trees' answers differ from the model's by up to {worst:.2g} (relative) on "
            f"{int(off.any(axis=1).sum())} of {len(rows)} checked rows; the model file may be "
            "damaged, or built by a version or with a setting modellens does not read (a link "
            "or objective the tree reader does not model)"), None


def _known(ens, model, rows, coded, dataset):
    """``(model, rows, coded)``: the rows whose categorical values the model saw (or are
    missing), and a copy of the model seam whose frames' categories are those it saw only
    (a frame's category dtype that lists an unseen level is refused whole)."""
    known = np.ones(len(rows), dtype=bool)
    columns = list(dataset.columns)
    for f, cats in ens.categories.items():
        unseen = np.isnan(coded[:, f]) & ~np.isnan(rows[:, f])
        if ens.unseen_code >= 0:
            unseen |= coded[:, f] == ens.unseen_code
        known &= ~unseen
        col = columns[f]
        if cats is not None and isinstance(col.dtype, pd.CategoricalDtype):
            seen = set(np.asarray(cats).tolist())
            columns[f] = dataclasses.replace(col, dtype=pd.CategoricalDtype(
                [c for c in col.dtype.categories if c in seen], ordered=col.dtype.ordered))
    seam = copy.copy(model)
    seam.dataset = Dataset(dataset.values[:0], columns, dataset.is_frame,
                           dataset.column_labels)
    return seam, rows[known], coded[known]


class Check(NamedTuple):
    """What :func:`margin_disagreement` found: why the trees disagree (None: they agree),
    and the trees' raw output ``(m, K)`` on the checked rows (None unless they agree on
    every row: a route may reuse it, the same numbers)."""

    why: str | None
    raw: np.ndarray | None


def margin_disagreement(raw_model, ens, dataset, rows, request) -> Check:
    """:func:`disagreement` of the trees with the library's raw margin (:func:`margin_model`)
    on ``rows``, and the trees' raw output there.

    The model rows it costs are the request's: they are counted on ``request`` (its
    ``account(calls, rows)``, :meth:`~modellens.engine.Request.account`) as they are
    spent, whether the trees agree or not, so that a result counts them whichever way
    it is computed.
    """
    checker, response = margin_model(raw_model, ens, dataset)
    try:
        why, raw = _compare(ens, checker, rows, dataset, response)
    finally:  # (a model that raised answered no row: the seam counts answered rows only)
        request.account(checker.n_calls, checker.n_rows)
    return Check(why, raw)


def model_response(ens, model):
    """``(kind, columns)`` (:func:`respond`) of the outputs of the model seam ``model`` from
    the trees' raw output, or why they are not the trees' output or its link (a str)."""
    views = [model.view(c) for c in range(model.n_outputs)]
    classes = ens.classes
    if classes is None:
        if ens.n_outputs != 1 or ens.link not in ("identity", "log") or \
                views[0].output_name != "prediction":
            return (f"the response {views[0].output_name!r} is not the trees' raw output "
                    f"({ens.output_names[0]})")
        # (a log link's prediction is exp of the raw output, as its model computes it)
        return "raw" if ens.link == "identity" else "exp", [(0, 1.0)]
    columns = []
    kinds = set()
    for view in views:
        label = view.explained_class
        if label is None or label not in classes:
            return f"the response {view.output_name!r} is not a class's probability or margin"
        k = classes.index(label)
        if view.explains_probability:
            kinds.add("proba")
            columns.append((k, 1.0))
        elif view.output_name.startswith("decision(") and ens.link in ("logit", "softmax"):
            kinds.add("raw")
            # a binary margin has one column, positive for classes_[1]
            columns.append((0, -1.0 if k == 0 else 1.0) if ens.link == "logit" else (k, 1.0))
        else:
            return f"the response {view.output_name!r} is not the trees' output or its link"
    if len(kinds) != 1:
        return "the outputs mix probabilities and margins"
    return kinds.pop(), columns
