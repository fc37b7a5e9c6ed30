"""A fitted model's trees, and which of its outputs a tree method explains."""

from __future__ import annotations

import weakref

import numpy as np
import pandas as pd

from .._validation import InvalidParameterError, NotATreeModelError, is_integer
from ..models import class_position, lightgbm_names, requested_outputs, tree_ensemble_name
from ._ensemble import TreeEnsemble, unsupported
from ._lightgbm import lightgbm_booster, lightgbm_ensemble, lightgbm_text
from ._sklearn import sklearn_ensemble
from ._state import digest, lightgbm_leaves, lightgbm_state
from ._xgboost import xgboost_booster, xgboost_document, xgboost_ensemble

__all__ = ["tree_ensemble", "output_column", "tree_outputs", "unfit_data"]

#: model -> (its trees' state when read, TreeEnsemble): parsed trees reused while the
#: model lives and its trees are unchanged (``_state``: what each library's state is)
_PARSED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def tree_ensemble(model) -> TreeEnsemble:
    """The :class:`TreeEnsemble` of a fitted tree model; InvalidParameterError if unsupported.

    A scikit-learn Pipeline is refused: its preprocessing changes the features
    the trees split on.  A booster's parsed trees are kept while it lives and
    read again when its trees changed (a refit, more rounds, a leaf set by
    hand, another model loaded into it).
    """
    if isinstance(getattr(model, "steps", None), list):
        raise NotATreeModelError(
            "a Pipeline is not a tree model: its preprocessing changes the features that the "
            "trees split on, so tree values would be about transformed columns. Explain the "
            "pipeline with algorithm='exact', 'permutation' or 'kernel', or explain its last "
            "step on the transformed data (pipe[:-1].transform(X)).",
            reason=("a Pipeline: its preprocessing changes the features that the trees split "
                    "on") if tree_ensemble_name(model) is not None else None)
    root = type(model).__module__.split(".")[0]
    if root == "sklearn":
        return sklearn_ensemble(model)
    if root == "lightgbm":
        return _lightgbm(model)
    if root == "xgboost":
        return _xgboost(model)
    raise unsupported(model)


def _kept(model):
    try:
        return _PARSED.get(model)
    except TypeError:  # neither hashable nor weakly referable: read every time
        return None


def _keep(model, state, ens):
    try:
        _PARSED[model] = (state, ens)
    except TypeError:
        pass
    return ens


def _lightgbm(model) -> TreeEnsemble:
    """A LightGBM model's trees: kept while its state (``_state.lightgbm_state`` and every
    leaf's value) is unchanged; where that cannot be read, while its model text is."""
    booster = lightgbm_booster(model)
    state = lightgbm_state(model, booster, model_classes(model))
    hit = _kept(model)
    if hit is not None and state is not None and hit[0][0] == state:
        leaves = lightgbm_leaves(booster, hit[0][1])
        if leaves is not None and leaves.tobytes() == hit[0][2]:
            return hit[1]
    text = lightgbm_text(model)
    if hit is not None and hit[0][0] == digest(text, model_classes(model)):
        return hit[1]
    ens = lightgbm_ensemble(model, text)
    n_leaves = np.add.reduceat((ens.left < 0).astype(np.int64), ens.roots[:-1])
    leaves = None if state is None else lightgbm_leaves(booster, n_leaves)
    if leaves is None:
        return _keep(model, (digest(text, model_classes(model)),), ens)
    return _keep(model, (state, n_leaves, leaves.tobytes()), ens)


def _xgboost(model) -> TreeEnsemble:
    """An XGBoost model's trees: kept while its serialized trees are unchanged."""
    booster = xgboost_booster(model)
    state = digest(booster.save_raw("ubj"), model_classes(model))
    hit = _kept(model)
    if hit is not None and hit[0] == state:
        return hit[1]
    return _keep(model, state, xgboost_ensemble(model, xgboost_document(model)))


def model_classes(model):
    """The wrapper's classes as a plain list (None for a Booster): part of the trees' state."""
    classes = getattr(model, "classes_", None)
    return None if classes is None else np.asarray(classes).tolist()

# ---------------------------------------------------------------------- outputs
def output_column(ens: TreeEnsemble, model, target) -> tuple[int, bool, str]:
    """The raw-output column explained for ``target``: ``(column, negate, name)``.

    Binary classifiers with one margin column explain ``classes_[1]``; a
    ``target`` naming ``classes_[0]`` negates it.  Multiclass models need
    ``target`` (a label, or a position among ``classes_``).
    """
    classes = ens.classes
    if classes is None:
        if ens.n_outputs == 1:
            if target is not None and not (is_integer(target) and int(target) in (0, -1)):
                raise InvalidParameterError(
                    f"target={target!r}: the model has one output; leave target= out.")
            return 0, False, ens.output_names[0]
        if target is None:
            raise InvalidParameterError(
                f"the model has {ens.n_outputs} outputs; choose one with target= (its index).")
        if not is_integer(target) or not -ens.n_outputs <= int(target) < ens.n_outputs:
            raise InvalidParameterError(f"target={target!r} is not an output index "
                                        f"(0..{ens.n_outputs - 1}).")
        k = int(target) % ens.n_outputs
        return k, False, ens.output_names[k]
    k = class_position(classes, target)
    if ens.n_outputs == 1:  # one log-odds column, for classes_[1]
        name = f"log-odds(y = {classes[k]})"
        return 0, k == 0, name
    return k, False, ens.output_names[k]


def tree_outputs(ens: TreeEnsemble, model, target) -> tuple[list, list | None]:
    """The outputs a tree method explains for ``target=``: ``(outputs, labels)``.

    ``outputs`` lists ``(column, negate, name)`` of each explained output (see
    :func:`output_column`); ``labels`` (a class label or column per output)
    is None when the result has one output.  The rules are the black-box
    methods' (:func:`modellens.models.requested_outputs` and the model seam):
    ``target=None`` explains every class of a multiclass model and every
    column of a multi-output regressor, the positive class of a binary one,
    the one output of a regressor; ``"all"`` every class (both of a binary
    classifier) or column, an error for a model of one output; a list those
    outputs in its order (a list of one: that output alone, as ``target=``
    it; an empty list, or an output named twice, an error).
    """
    classes = ens.classes
    every = list(classes) if classes is not None else list(range(ens.n_outputs))
    wanted = requested_outputs(target, True)
    if wanted is not None and classes is None and ens.n_outputs == 1:
        raise InvalidParameterError(
            f"target={target!r} selects output columns, but the model returns one output per "
            "row; leave target= out.")
    if wanted is None:
        several = target is None and len(every) > 1 and not (classes is not None
                                                             and len(classes) == 2)
        targets = every if several else [target]
    elif wanted == "all":
        targets, several = every, True
    else:
        targets, several = list(wanted), len(wanted) > 1
    outputs = [output_column(ens, model, t) for t in targets]
    if not several:
        return outputs, None
    seen = [(c, negate) for c, negate, _ in outputs]
    if len(set(seen)) != len(seen):
        raise InvalidParameterError(
            f"target= names an output twice: {targets}; name each output once.")
    labels = [classes[class_position(classes, t)] for t in targets] if classes is not None \
        else [c for c, _, _ in outputs]
    return outputs, labels


def unfit_data(ens, model, dataset, X, *, categorical=False):
    """Why the encoded rows are not what the trees split on (None when they are).

    ``categorical``: the caller maps the rows with :meth:`TreeEnsemble.encode`,
    so the model's categorical features may be categorical columns.
    """
    if dataset.n_features != ens.n_features:
        return (f"X has {dataset.n_features} features but the model's trees use "
                f"{ens.n_features}")
    if ens.categories and not categorical:
        return ("the trees split on categories, which TreeSHAP (shapley) maps but the tree "
                "partial dependence does not; use method='brute'")
    foreign = [col.name for j, col in enumerate(dataset.columns)
               if col.is_categorical and j not in ens.categories]
    if foreign:
        return (f"the columns {foreign} are categorical or text but the trees split on them "
                "as numbers; encoded codes are not the values the model saw")
    fitted = getattr(model, "feature_names_in_", None)
    if fitted is not None and isinstance(X, pd.DataFrame):
        # LightGBM's names have "_" for the data's spaces: the same columns
        if lightgbm_names(model, X.columns, fitted) != [str(c) for c in fitted]:
            return (f"X's columns {list(X.columns)} are not the model's columns "
                    f"{list(fitted)} in the same order")
    return None
