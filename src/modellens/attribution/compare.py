"""Shapley values of the difference of two models, ``f_B(x) - f_A(x)``.

Two tree ensembles are explained exactly in one traversal of the trees of
their difference (:func:`~._difference.difference_ensemble`); any other pair
through one model whose answer is ``f_B - f_A`` on the same rows
(:class:`~._difference.ModelDifference`), so every algorithm of
:func:`~modellens.shapley` pairs its coalitions, background rows and draws.

``diagnostics["n_model_rows"]`` counts the rows the two models answered in all: the
checks of their trees (:func:`~modellens.trees.route`, counted on the tree request as
they are spent, whether the trees serve or not) and, paired, each model's answer to every
planned row (``diagnostics["model_rows_each"]``: the rows each model answered so).
"""

from __future__ import annotations

import numpy as np

from .._validation import InvalidParameterError, check_choice, check_random_state
from ..engine import open_request, run
from ..models import tree_ensemble_name
from ._background import choose_background
from ._difference import ModelDifference, difference_ensemble
from ._games import ShapleyPlan, TreeGame, tree_ensemble_for
from .result import Attributions, build, keep_row_labels
from .shapley import ALGORITHMS, shapley

__all__ = ["compare_shapley", "ModelDifference", "difference_ensemble"]

#: what the result's output names say was explained
_WHAT = "{output}: model_b - model_a"


def compare_shapley(model_a, model_b, X, *, background=None, algorithm="auto",
                    random_state=None, target=None, response_method="auto", feature_names=None,
                    chunk_size=None, n_jobs=None, progress=None, **options) -> Attributions:
    """The Shapley values of ``f_B - f_A`` (see :func:`modellens.compare`)."""
    check_choice(algorithm, "algorithm", ALGORITHMS)
    checked_rows = 0  # (the model rows of trees checked, then refused)
    sampled = any(options.get(k) is not None for k in
                  ("n_samples", "n_permutations", "tol", "tol_abs", "max_evals", "groups")) \
        or options.get("dependence", "independent") != "independent" \
        or options.get("interactions", False)
    if algorithm == "tree" and sampled and not (set(k for k, v in options.items()
                                                    if v not in (None, False, "independent"))
                                                <= {"interactions", "index"}):
        raise InvalidParameterError(
            "algorithm='tree' compares the trees exactly: it takes background=, target=, "
            "interactions= and index=, not the sampling options "
            f"{sorted(k for k, v in options.items() if v not in (None, False, 'independent'))}"
            "; use algorithm='exact', 'permutation' or 'kernel' for those.")
    if algorithm == "tree" or (algorithm == "auto" and not sampled
                               and tree_ensemble_name(model_a) is not None
                               and tree_ensemble_name(model_b) is not None):
        rows = None if background is None or np.isscalar(background) else background
        request = open_request(model_b, X, reference=rows, feature_names=feature_names,
                               target=target, response_method=response_method,
                               chunk_size=chunk_size, n_jobs=n_jobs, progress=progress,
                               dask="in_memory", wrap_model=False, several=True)
        tree = _tree_difference(request, model_a, model_b, background=background,
                                strict=algorithm == "tree", random_state=random_state,
                                target=target, response_method=response_method, **options)
        if tree is not None:
            return tree
        checked_rows = request.n_model_rows  # (the trees checked, then refused)
    attr = shapley(ModelDifference(model_a, model_b), X, background=background,
                   algorithm=algorithm, random_state=random_state, target=target,
                   response_method=response_method, feature_names=feature_names,
                   chunk_size=chunk_size, n_jobs=n_jobs, progress=progress, **options)
    # each row the engine planned was answered by both models (the difference's seam
    # counts it once), after the rows that checked the trees before they were refused
    each = attr.diagnostics.get("n_model_rows")
    attr.diagnostics["model_rows_each"] = each
    if each is not None:
        attr.diagnostics["n_model_rows"] = 2 * int(each) + checked_rows
    return _relabel(attr, "paired")


def _relabel(attr: Attributions, how: str) -> Attributions:
    attr.output = _WHAT.format(output=attr.output)
    if attr.outputs is not None:
        attr.outputs = [_WHAT.format(output=o) for o in attr.outputs]
    attr.diagnostics["compare"] = how
    return attr


def _tree_difference(request, model_a, model_b, *, background, strict, random_state, target,
                     response_method, index="shapley", interactions=False,
                     **_) -> Attributions | None:
    """TreeSHAP of the trees of ``f_B - f_A`` on ``request`` (``model_b``'s, not wrapped);
    None where ``"auto"`` cannot use the trees.  The model rows of both models' checks are
    counted on ``request`` as they are spent (:func:`~modellens.trees.route`)."""
    rng = check_random_state(random_state)
    ensembles = []
    for model in (model_a, model_b):
        checked = tree_ensemble_for(model, request.dataset, request.X, strict=strict,
                                    response_method=response_method, request=request,
                                    n=request.n_explained, stacklevel=5)
        if not checked:
            return None
        ensembles.append(checked.ensemble)
    diff = difference_ensemble(*ensembles)
    dataset, n = request.dataset, request.n_explained
    bg, note = choose_background(dataset, n, background, request.reference, rng,
                                 optional=True, stacklevel=5)
    game = TreeGame(diff, model_b, dataset, n, bg, note, target=target)
    from .tree import TreeEstimator  # numba: only tree models need it

    estimator = TreeEstimator(game, interactions=interactions, n_threads=request.options.threads,
                              index=index)
    (estimates,) = run(None, [ShapleyPlan(game, estimator)], request.options,
                       desc="compare (tree)")
    parts = []
    for est, subject, diags in zip(estimates, game.subjects, game.output_diagnostics):
        extra = {**diags, "n_coalitions": 0, "n_model_rows": request.n_model_rows, "index": index,
                 "n_trees_a": ensembles[0].n_trees, "n_trees_b": ensembles[1].n_trees}
        parts.append(build(subject, values=est.values, base_values=np.full(n, est.base_value),
                           prediction=est.prediction, method=f"{index}-tree",
                           value_function=game.value_function, interactions=est.interactions,
                           diagnostics=extra))
    attr = parts[0] if game.labels is None else Attributions.stack(parts, game.labels)
    return _relabel(keep_row_labels(attr, request.X), "trees")
