"""``route()``: can the trees serve this request, do they answer as the model does, and if
not, why.

One answer for the tree methods (TreeSHAP, the tree H statistics, tree
partial dependence, the exact ICE curves, tree ALE), so that a request is refused for the
same reason in the same words whichever method meets it: the model is not a tree ensemble
these readers read (or its file is unsafe), the data is not what the trees split on
(feature count, categorical columns split as numbers, columns in another
order), the response asked for is not the trees' raw output (:func:`raw_is_response`, the
one rule), the tree partial dependence is asked for what it has not (ICE curves, a sample
of rows, another response), or the trees answer otherwise than the model on the rows the
route checks (:mod:`._agree`: the net under every tree route).  The model rows of that
check are the request's (``request=``): they are counted on it where they are spent,
whether the trees pass or not, so no method that routes can leave them out of its count.
A method asked for explicitly (``strict``) refuses with the method's one refusal text; a
method the library chose itself falls back on the model's rows (with the method's one
warning text where the trees disagree with the model).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import NoReturn

import numpy as np

from .._validation import InvalidParameterError, ModellensWarning, NotATreeModelError
from ._agree import (DATA_CHECK_ROWS, EXPLAINED_CHECK_ROWS, RESPONSE_CHECK_ROWS, disagreement,
                     margin_disagreement, model_response)
from ._ensemble import TreeEnsemble
from ._read import tree_ensemble, unfit_data

__all__ = ["Route", "route", "refused", "raw_is_response", "ROUTED_METHODS"]

#: The tree methods :func:`route` answers for.
ROUTED_METHODS = ("shapley", "interactions", "pdp", "ice", "ale")

#: How each method says it cannot use the trees (``{why}``: the reason).
_REFUSALS = {
    "shapley": "algorithm='tree' cannot explain this request: {why}. Use algorithm='exact', "
               "'permutation' or 'kernel'.",
    "interactions": "method='tree' cannot be used here: {why}. Use method='brute'.",
    "pdp": "method='tree' cannot use this data: {why}.",
    "ice": "the trees cannot give the exact ICE curves of this request: {why}.",
    "ale": "the trees cannot give the exact local effects of this request: {why}.",
}
#: How a method the library chose itself says it falls back on the model's rows because the
#: trees answer otherwise than the model (None: the method is never chosen for the user
#: (tree PD), or its result says why in ``extra["trees_refused"]`` (the exact ICE, ALE),
#: the model's rows giving the same numbers the trees were to give).
_FALLBACKS = {
    "shapley": "TreeSHAP is not used: {why}; the Shapley values are estimated from the "
               "model's own answers instead.",
    "interactions": "the tree H statistics are not used: {why}; they are estimated from the "
                    "model's own answers instead (method='brute').",
    "pdp": None, "ice": None, "ale": None,
}
#: The most rows each method checks (the first ones of those it is given).
_CHECK_ROWS = {"shapley": EXPLAINED_CHECK_ROWS, "interactions": DATA_CHECK_ROWS,
               "pdp": DATA_CHECK_ROWS, "ice": RESPONSE_CHECK_ROWS, "ale": RESPONSE_CHECK_ROWS}
#: What a method computes of the raw output (the end of its reason for another response).
_ON_RAW = {"shapley": "TreeSHAP explains the raw output",
           "interactions": "the tree method computes the statistics of the raw output"}


@dataclass(frozen=True)
class Route:
    """What :func:`route` answers.

    Attributes
    ----------
    ensemble : TreeEnsemble or None
        The model's trees when they can serve the request, else None.
    reason : str or None
        Why they cannot (None when they can).
    error : InvalidParameterError or None
        The error to raise when the user asked for the tree method: a
        :class:`~modellens.NotATreeModelError` whose ``reason`` is ``reason``
        (or the reader's own error for a model it cannot read).
    raw : ndarray of shape (m, K) or None
        The trees' raw output, every column, on the checked rows, where the check
        compared every row given (a route may reuse it: the same numbers).
    response : tuple or None
        ``(kind, columns)`` mapping the raw output to the model seam's answers
        (:func:`~modellens.trees.respond`), for the routes that show the response (the
        exact ICE, tree ALE).
    """

    ensemble: TreeEnsemble | None
    reason: str | None = None
    error: InvalidParameterError | None = None
    raw: np.ndarray | None = None
    response: tuple | None = None

    def __bool__(self) -> bool:
        return self.ensemble is not None

    def refuse(self) -> NoReturn:
        """Raise :attr:`error`: the trees were asked for and cannot serve the request."""
        raise self.error if self.error is not None else NotATreeModelError(
            str(self.reason), reason=str(self.reason))


def refused(method: str, why: str, message: str | None = None) -> Route:
    """The falsy :class:`Route` of ``method`` refused for ``why`` (its error in the words
    every refusal of that method has): a route that found the trees answer otherwise
    than the model (:func:`~modellens.trees.disagreement`) refuses through it."""
    text = message if message is not None else _REFUSALS[method].format(why=why)
    return Route(None, why, NotATreeModelError(text, reason=why))


def _pd_request(ice, sample, response_method) -> Route | None:
    """The tree partial dependence reads the trees' covers, not rows: what it has not."""
    if ice or sample is not None:
        return refused(
            "pdp", "ICE curves and samples need model rows",
            "method='tree' gives the partial dependence from the trees' covers: it has no "
            "ICE curves and uses no sample of X; use method='brute' for ice= or sample=.")
    if response_method != "auto":
        return refused(
            "pdp", f"response_method={response_method!r} is not the trees' raw output",
            "method='tree' reads the trees' raw output (response_method='auto'); use "
            "method='brute' for another response.")
    return None


def raw_is_response(ens: TreeEnsemble, response_method: str) -> bool:
    """Whether the trees' raw output is the response ``response_method`` asks of the model:
    the one rule of every tree method.

    A regressor's prediction and a forest's class probabilities are their trees' sum
    (``"auto"``, ``"predict"`` / ``"predict_proba"``); a boosted classifier's trees add up
    to log-odds (``link`` "logit" / "softmax"), whose model gives them by
    ``"decision_function"`` only; a Poisson, Gamma or Tweedie booster's trees add up to the
    log of its prediction (``link`` "log"), which no ``response_method`` gives.
    """
    if ens.link == "identity":
        return response_method in ("auto", "predict" if ens.classes is None else "predict_proba")
    return ens.link in ("logit", "softmax") and response_method == "decision_function"


def _raw_output(ens: TreeEnsemble, method: str, response_method: str,
                strict: bool) -> str | None:
    """Why ``response_method`` is not the raw output the method explains (None if it is).

    The rule is :func:`raw_is_response`; TreeSHAP asked for explicitly also takes
    ``"auto"`` for the raw output whatever the link (the log-odds of a boosted
    classifier, the log of a Poisson booster's prediction: its ``output`` names them).
    """
    if raw_is_response(ens, response_method) or (
            method == "shapley" and strict and response_method == "auto"):
        return None
    return (f"response_method={response_method!r} is not the trees' raw output "
            f"({ens.output_names[0]}); {_ON_RAW[method]}"
            + (" (pass response_method='decision_function' for it)"
               if method == "interactions" and ens.link in ("logit", "softmax") else ""))


def route(model, dataset, X, *, method: str, response_method: str = "auto", ice: bool = False,
          sample=None, rows=None, strict: bool = False, request=None,
          stacklevel: int = 2) -> Route:
    """Whether the trees of ``model`` can serve a request of ``method``, and if not, why.

    Parameters
    ----------
    model : object
        The fitted model.
    dataset : Dataset
        The request's validated data (its columns' kinds and count).
    X : array-like
        The data as given (its column names, checked against the model's).
    method : {"shapley", "interactions", "pdp", "ice", "ale"}
        The tree method asked: TreeSHAP, the tree H statistics, the tree partial
        dependence, the exact ICE curves over data rows, their local effects (ALE).
    response_method : str
        The response the request explains.
    ice, sample :
        The partial dependence's ICE curves and sample (the trees have none).
    rows : ndarray of shape (m, d), optional
        Encoded rows on whose first ones (as many as the method checks) the trees'
        answers are compared with the model's (:mod:`._agree`): the library's raw margin
        for TreeSHAP, the H statistics and the tree PD, the answers of the request's model
        seam (``request.model``) for the exact ICE and ALE.  None: no check (the route's
        answer before it).
    strict : bool
        The user asked for the tree method: a refusal raises its error (the method's one
        refusal text).  Not strict, the trees are used only where their raw output is the
        response (:func:`raw_is_response`), and trees that answer otherwise than the model
        are refused with the method's one warning (a :class:`~modellens.ModellensWarning`).
    request : Request
        The open request (:func:`~modellens.engine.open_request`), needed with ``rows``:
        the check's model rows are its own, counted on it as they are spent (the raw
        margin's through :meth:`~modellens.engine.Request.account`, the exact ICE's and
        ALE's by its model seam, which answers them), so that the method's count, from the
        trees or from the model's rows where the trees are refused, holds them.
    stacklevel : int
        The warning's stack level, as the caller would give it to ``warnings.warn``.

    Returns
    -------
    Route
        The trees (``route.ensemble``) with what their check found, or (not ``strict``)
        None with ``route.reason`` and the error the tree method would raise.
    """
    if rows is not None and request is None:
        raise TypeError("route() checks rows for a request: pass request= (the check's model "
                        "rows are counted on it)")
    answer = _route(model, dataset, X, method, response_method, ice, sample, strict)
    if answer and rows is not None:
        answer = _checked(answer, model, dataset, rows[:_CHECK_ROWS[method]], method, request)
        fallback = _FALLBACKS[method]
        if not answer and not strict and fallback is not None:
            warnings.warn(fallback.format(why=answer.reason), ModellensWarning,
                          stacklevel=stacklevel + 1)
    if strict and not answer:
        answer.refuse()
    return answer


def _route(model, dataset, X, method, response_method, ice, sample, strict) -> Route:
    """:func:`route` before the check of the trees' answers."""
    if method not in ROUTED_METHODS:
        raise ValueError(f"route() answers for {ROUTED_METHODS}, not {method!r}")
    if method == "pdp":
        asked = _pd_request(ice, sample, response_method)
        if asked is not None:
            return asked
    try:
        ens = tree_ensemble(model)
    except InvalidParameterError as exc:  # not a tree model, or an unsafe one
        return Route(None, getattr(exc, "reason", None) or str(exc), exc)
    why = unfit_data(ens, model, dataset, X, categorical=True)
    # (the exact ICE and ALE apply the model's link themselves: any response of it)
    if why is None and method in ("shapley", "interactions"):
        why = _raw_output(ens, method, response_method, strict)
    if why is not None:
        return refused(method, why)
    return Route(ens)


def _checked(answer: Route, model, dataset, rows, method: str, request) -> Route:
    """``answer`` with the check of the trees' answers on ``rows``, or refused for it (the
    check's model rows counted on ``request`` either way)."""
    ens = answer.ensemble
    if method in ("ice", "ale"):  # the response shown: compared through the request's model
        seam = request.model
        response = model_response(ens, seam)
        if isinstance(response, str):
            return refused(method, response)  # (no row asked)
        why = disagreement(ens, seam, rows, dataset, response)
        if why is not None:
            return refused(method, why)
        return Route(ens, response=response)
    why, raw = margin_disagreement(model, ens, dataset, rows, request)
    if why is not None:
        return refused(method, why)
    return Route(ens, raw=raw)
