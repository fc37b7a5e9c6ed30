"""``route()``: can the trees serve this request, and if not, why.

One answer for the tree methods (TreeSHAP, the tree H statistics, tree
partial dependence, the exact ICE curves), so that a request is refused for the same reason in the
same words whichever method meets it: the model is not a tree ensemble these
readers read (or its file is unsafe), the data is not what the trees split on
(feature count, categorical columns split as numbers, columns in another
order), the response asked for is not the trees' raw output, or the tree
partial dependence is asked for what it has not (ICE curves, a sample of rows,
another response).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

from .._validation import InvalidParameterError, NotATreeModelError
from ._ensemble import TreeEnsemble
from ._read import tree_ensemble, unfit_data

__all__ = ["Route", "route", "refused", "ROUTED_METHODS"]

#: The tree methods :func:`route` answers for.
ROUTED_METHODS = ("shapley", "interactions", "pdp", "ice", "ale")

#: response_method values that are the raw output of a tree ensemble for TreeSHAP, by link.
_RAW_RESPONSES = {"identity": ("predict", "predict_proba"), "logit": ("decision_function",),
                  "softmax": ("decision_function",), "log": ()}

#: How each method says it cannot use the trees (``{why}``: the reason).
_REFUSALS = {
    "shapley": "algorithm='tree' cannot explain this request: {why}. Use algorithm='exact', "
               "'permutation' or 'kernel'.",
    "interactions": "method='tree' cannot be used here: {why}. Use method='brute'.",
    "pdp": "method='tree' cannot use this data: {why}.",
    "ice": "the trees cannot give the exact ICE curves of this request: {why}.",
    "ale": "the trees cannot give the exact local effects of this request: {why}.",
}


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
    """

    ensemble: TreeEnsemble | None
    reason: str | None = None
    error: InvalidParameterError | None = None

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


def _raw_output(ens: TreeEnsemble, method: str, response_method: str) -> str | None:
    """Why ``response_method`` is not the raw output the method explains (None if it is).

    TreeSHAP explains the raw output and takes ``"auto"`` for it whatever the
    link; the H statistics take ``"auto"`` only where the raw output is what
    the model predicts (a regressor, a forest's probabilities).
    """
    if method == "shapley":
        if response_method not in ("auto",) + _RAW_RESPONSES[ens.link]:
            return (f"response_method={response_method!r} is not the trees' raw output "
                    f"({ens.output_names[0]}); TreeSHAP explains the raw output")
        return None
    if ens.link == "identity":  # a regressor's prediction, a forest's class probability
        raw = response_method == "auto" or response_method == (
            "predict" if ens.classes is None else "predict_proba")
    else:
        raw = ens.link in ("logit", "softmax") and response_method == "decision_function"
    if raw:
        return None
    return (f"response_method={response_method!r} is not the trees' raw output "
            f"({ens.output_names[0]}); the tree method computes the statistics of the raw "
            "output" + (" (pass response_method='decision_function' for it)"
                        if ens.link in ("logit", "softmax") else ""))


def route(model, dataset, X, *, method: str, response_method: str = "auto", ice: bool = False,
          sample=None) -> Route:
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

    Returns
    -------
    Route
        The trees (``route.ensemble``), or None with ``route.reason`` and the
        error to raise (``route.error``) when the user asked for the tree method;
        a caller that chose the trees itself falls back on a falsy route.
    """
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
    # (the exact ICE applies the model's link itself: any response)
    if why is None and method not in ("pdp", "ice", "ale"):
        why = _raw_output(ens, method, response_method)
    if why is not None:
        return refused(method, why)
    return Route(ens)
