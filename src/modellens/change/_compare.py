"""``ml.compare``: what differs between two models, feature by feature."""

from __future__ import annotations

from typing import Any

from ..attribution import Attributions
from ..attribution.compare import ModelDifference, compare_shapley
from .._validation import check_choice
from ..effects.ale import ale
from ..effects.pdp import pdp
from ..effects.result import Effects
from ..typing import DataLike, FeatureSpec, ModelLike

__all__ = ["compare", "METHODS"]

#: What ``ml.compare`` can explain of ``f_B - f_A``.
METHODS = ("shapley", "pdp", "ale")


def compare(model_a: ModelLike, model_b: ModelLike, X: DataLike, *,
            background: DataLike | int | None = None, method: str = "shapley",
            features: FeatureSpec = None, **kwargs: Any) -> Attributions | Effects:
    r"""How, and through which features, does model_b's prediction differ from model_a's?

    Explains the difference of two models on the same rows,
    :math:`\Delta(x) = f_B(x) - f_A(x)`: a retrained model against the one in
    production, a challenger against a champion.  With ``method="shapley"``
    (the default) each row's values add up to its difference,
    :math:`\sum_j \phi_j(x) = \Delta(x) - E_{bg}[\Delta]`; the effects give the
    difference of the two models' curves.

    Parameters
    ----------
    model_a, model_b : estimators or callables
        The two models, on the same features (and classes).  ``target=`` and
        ``response_method=`` choose the same output of both.
    X : ndarray or DataFrame of shape (n, d)
        The rows whose differences are explained.
    background : rows or int, optional
        As in :func:`modellens.shapley`: rows that stand in for absent
        features.  Two tree ensembles without a background get the
        path-dependent game of their difference (see Notes).
    method : {"shapley", "pdp", "ale"}, default="shapley"
        ``"shapley"`` gives :class:`Attributions` of :math:`\Delta`;
        ``"pdp"`` / ``"ale"`` give :class:`Effects` of :math:`\Delta`: the
        difference of the two models' PD / ALE curves on the same grid and
        rows, with the method's own bands (PD with ``ice=True``: the spread
        of the rows' difference curves; ALE's confidence band).
    features : optional
        The features of ``"pdp"`` / ``"ale"``, as in :func:`modellens.pdp`.
    **kwargs
        Every other keyword of :func:`modellens.shapley` (``algorithm``,
        ``n_samples``, ``n_permutations``, ``tol``, ``tol_abs``,
        ``max_evals``, ``dependence``, ``n_draws``, ``groups``,
        ``interactions``, ``random_state``, ``target``, ...), or of
        :func:`modellens.pdp` / :func:`modellens.ale`.

    Returns
    -------
    Attributions or Effects
        Output names end in ``": model_b - model_a"``;
        ``mean_test()`` gives each feature's test of "no change on average"
        (see Notes); ``diagnostics["compare"]`` says how the pair was explained:
        ``"trees"`` (exact, one traversal of both ensembles) or ``"paired"``
        (every model row answered by both models).  Paired results count in
        ``diagnostics["model_rows_each"]`` the rows each model answered.

    See Also
    --------
    shapley : The Shapley values of one model.
    shift : What changed between two data sets.

    Notes
    -----
    **Two tree ensembles** (scikit-learn, XGBoost, LightGBM, in any mix, on
    the same features and raw output scale; ``algorithm="auto"`` as in
    :func:`modellens.shapley`, or ``"tree"``) are explained exactly: the
    difference of two ensembles is an ensemble (model_b's trees and model_a's
    with negated leaves, base values subtracted), walked once by TreeSHAP;
    its values equal TreeSHAP(B) - TreeSHAP(A) to rounding.  With a
    background that is the interventional game of :math:`\Delta` on it.
    Without one it is the path-dependent game of the difference ensemble,
    in which each tree keeps its own covers: :math:`v(S) = v_B(S) - v_A(S)`,
    with :math:`v_B` conditioning on model_b's training data's split
    proportions and :math:`v_A` on model_a's.  Models trained on different
    data therefore compare each under its own reference distribution; pass
    one background for one common reference.

    **Did a feature's attributions change?**  ``diff.mean_test()`` tests, for
    each feature ``j``, :math:`H_0: E_{x \sim P}[\phi^B_j(x) - \phi^A_j(x)] = 0`:
    averaged over the population :math:`P` the rows of ``X`` are independent
    draws of, feature ``j`` moves model_b's prediction away from the
    background's as much as model_a's (the background held fixed, and not
    the rows of ``X`` themselves).  The test is Student's one-sample t over
    the rows (``n - 1`` degrees of freedom; a sampling estimator's per-row
    noise is in the rows' spread), the p-values Holm-adjusted over the
    features (family-wise error rate).  It tests the mean: when ``X`` is
    distributed like the background, a changed slope
    (:math:`\Delta = c\,(x_j - \bar x_j)`) has mean 0 and is not what it
    finds; ``mean_test()``'s ``mean_abs`` column and the values show it.

    **Any other pair** (or a sampling option) is explained as the model
    :math:`\Delta`: the engine asks both models for the same planned rows in
    one pass, so the sampled coalitions, background rows and conditional
    draws are the same for both (paired sampling).  Standard errors are
    those of the difference, which for two similar models is far smaller
    than the sum of two separate explanations' errors.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 3))
    >>> old = lambda A: A @ [1.0, 2.0, 0.0]
    >>> new = lambda A: A @ [1.0, 2.5, 0.0]
    >>> diff = ml.compare(old, new, X[:5], background=X)
    >>> bool(np.allclose(diff.values[:, 1], 0.5 * (X[:5, 1] - X[:, 1].mean())))
    True
    >>> bool(np.allclose(diff.values[:, [0, 2]], 0))
    True
    """
    check_choice(method, "method", METHODS)
    if method == "shapley":
        if features is not None:
            raise _no("features", "shapley")
        return compare_shapley(model_a, model_b, X, background=background, **kwargs)
    if background is not None:
        raise _no("background", method)
    curve = pdp if method == "pdp" else ale
    effects = curve(ModelDifference(model_a, model_b), X, features, **kwargs)
    for effect in effects.values():
        effect.output = f"{effect.output}: model_b - model_a"
        if effect.outputs is not None:
            effect.outputs = [f"{o}: model_b - model_a" for o in effect.outputs]
    return effects


def _no(name: str, method: str):
    from .._validation import InvalidParameterError

    return InvalidParameterError(f"{name}= is not a keyword of method={method!r}; leave it out "
                                 f"(method='shapley' takes background=, 'pdp' and 'ale' "
                                 "take features=).")
