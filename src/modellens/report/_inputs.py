"""What every section of the report reads: computed once, frozen.

The sections are pure functions of an :class:`Inputs` and of the findings of
the sections they name (``needs`` / ``uses``), so the order of the sections
on the page cannot change what any of them shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from .._validation import InvalidParameterError, check_random_state, is_integer
from ..data import Dataset
from ..effects.pdp import pd_grid

__all__ = ["Inputs", "build_inputs", "take_rows", "TOP_LEVELS", "SCATTER_VALUES"]

#: A categorical feature with more levels than this gets PD at its most frequent
#: levels only (stated on the page), and its pictures label these levels.
TOP_LEVELS = 20
#: Most Shapley values (rows x features x outputs) of the rows a tree ensemble's beeswarm
#: and dependence charts show: the page holds them, so they bound its size (about 7 bytes
#: each, 0.4 MB at most, beside plotly.js's 4.8 MB).
SCATTER_VALUES = 60_000


@dataclass(frozen=True)
class Inputs:
    """The data, model and samples of one report (read-only arrays).

    Attributes
    ----------
    model, X, y
        As given (``y`` cast to the classifier's labels).
    target
        The one output the single-output sections explain (interaction,
        regions, Shapley, LIME, the quality metrics): the ``target`` given,
        else for a model of several outputs the class of highest mean
        predicted probability (the first output when they are not
        probabilities; a raw booster's output column by position).
    outputs : tuple of str
        Names of every output when the model has several and no ``target``
        was given (the effects section and the confusion matrix show each);
        empty otherwise.
    all_predictions : ndarray of shape (n, k) or None
        Every output on every row, in the order of ``outputs`` (None when
        ``outputs`` is empty).
    output_position : int
        Position of ``target`` among ``outputs`` (0 when ``outputs`` is empty).
    output_labels : tuple
        The classes (or output positions) of ``outputs``, in their order.
    classes : tuple or None
        The classes y is scored against: a classifier's ``classes_``, or the
        class indices ``0 .. k-1`` of a multiclass booster read from its own
        file (which is trained on them); None for other models.
    reference : Reference or None
        The reference data of the "What changed" section (``X_reference`` and
        ``y_reference``, checked against ``X``), or None.
    dataset : Dataset
        ``X`` encoded once for the data summaries and samples (the
        predictions come from :func:`modellens.predict`, which encodes
        ``X`` for the model itself).
    features : tuple of int
        Positions of the features whose effects are drawn.
    skipped : tuple
        ``(name, why)`` of the features asked for (or all, by default) that
        have fewer than two values in the sample: no effect to draw.
    sample_index, explain_index, background_index : ndarray of int
        Rows of ``X`` behind effects and dependence, attributions, and the
        Shapley background.
    scatter_index : tuple of int
        The rows TreeSHAP explains for the beeswarm and dependence charts of
        a tree ensemble: ``explain_index`` first, then sampled rows in a
        random order (any first part of them is a random sample), at most
        ``n_explain_tree`` in all and at most :data:`SCATTER_VALUES` Shapley
        values; never fewer than ``explain_index``.
    X_sample, X_explain, X_background
        The same rows, as the kind of object ``X`` is.
    sample_dataset : Dataset
        ``dataset`` restricted to ``sample_index``.
    grids : mapping
        Feature position -> PD grid specification (an int, or the labels of
        the most frequent levels of a many-level categorical feature).
    prediction : ndarray of shape (n,)
        The explained output on every row.
    output_name : str
    explained_class : object
        The class whose probability or decision value is explained (None
        when the output is not one class's).
    probability : bool
        Whether the output is a class's probability.
    picks : tuple
        ``(row, why)`` of the default waterfall rows (empty when ``rows`` is set).
    rows : tuple of int
        The rows the user named.
    """

    model: object
    X: object
    y: object
    target: object
    dataset: Dataset
    features: tuple
    sample_index: np.ndarray
    X_sample: object
    sample_dataset: Dataset
    explain_index: tuple
    X_explain: object
    background_index: np.ndarray
    X_background: object
    grids: MappingProxyType
    prediction: np.ndarray
    output_name: str
    explained_class: object
    probability: bool
    picks: tuple
    rows: tuple
    grid: int
    max_features: int
    random_state: int
    progress: object
    shapley_budget: int
    holdout: bool
    input_notes: tuple
    unused_columns: tuple
    skipped: tuple = ()
    outputs: tuple = ()
    all_predictions: np.ndarray | None = None
    output_position: int = 0
    output_labels: tuple = ()
    scatter_index: tuple = ()
    unscored: str | None = None
    classes: tuple | None = None
    reference: object = None


def take_rows(X, positions):
    """Rows of ``X`` (DataFrame or array) at ``positions``, as the same kind of object."""
    positions = np.asarray(positions, dtype=np.intp)
    if hasattr(X, "iloc"):
        return X.iloc[positions]
    return np.asarray(X)[positions]


def _frozen(a):
    a = np.array(a, copy=True)
    a.flags.writeable = False
    return a


def build_inputs(model, X, y, *, features, rows, sample, n_explain, n_background, grid,
                 max_features, target, random_state, progress, shapley_budget, holdout,
                 input_notes, unused_columns, n_explain_tree=None) -> Inputs:
    """Encode ``X`` for the summaries, predict every row once, and draw the report's samples."""
    from .._predict import predict
    from ..data import resolve_features

    # the summaries read X encoded once; the predictions come through the public API,
    # as a user would get them (the same output, target and model adapter as every method)
    dataset = Dataset.from_data(X)
    n = dataset.n_rows
    if n < 2:
        raise InvalidParameterError(f"a report needs at least 2 rows of data, got {n}.")
    named = features is not None
    features = tuple(resolve_features(dataset, features, allow_pairs=False)) \
        if named else tuple(range(dataset.n_features))
    predicted = predict(model, X, target=target, progress=progress)
    (outputs, all_predictions, position, unscored, labels, target, prediction, output_name,
     explained_class, probability, scored) = _outputs(model, predicted, y, target)

    rng = check_random_state(random_state)
    sample_index = np.sort(rng.choice(n, size=min(sample, n), replace=False))
    sample_dataset = dataset if sample_index.size == n else \
        Dataset(dataset.values[sample_index], dataset.columns, dataset.is_frame,
                dataset.column_labels)
    # a column of at most one value in the sample has no effect to draw (and no grid)
    skipped = tuple((dataset.columns[j].name,
                     "all missing" if sample_dataset.n_unique(j) == 0 else "one value")
                    for j in features if sample_dataset.n_unique(j) < 2)
    features = tuple(j for j in features if sample_dataset.n_unique(j) >= 2)
    if named and not features:
        raise InvalidParameterError(
            "features: no effect to draw for "
            + ", ".join(f"{name!r} ({why} in the {sample_dataset.n_rows:,} sampled rows)"
                        for name, why in skipped)
            + "; name features with at least two values.")
    picks = () if rows else tuple(_extreme_rows(prediction))
    leading = list(rows) or [i for i, _ in picks]
    others = np.setdiff1d(sample_index, leading)
    drawn = np.sort(rng.choice(others, size=min(n_explain, others.size), replace=False))
    explain_index = tuple(leading + [int(i) for i in drawn])
    background_index = np.sort(rng.choice(n, size=min(n_background, n), replace=False))
    # drawn last: the samples above are those of a report without it
    scatter_index = _scatter_rows(rng, sample_index, explain_index, n_explain_tree,
                                  dataset.n_features * max(1, len(outputs)))

    grids = {}
    for j in features:
        col = dataset.columns[j]
        if col.is_categorical and sample_dataset.n_unique(j) > TOP_LEVELS:
            codes = sample_dataset.values[:, j]
            codes, counts = np.unique(codes[~np.isnan(codes)], return_counts=True)
            top = codes[np.argsort(-counts, kind="stable")[:TOP_LEVELS]]
            assert col.levels is not None  # every categorical column has its levels
            grids[j] = col.levels[np.sort(top).astype(np.intp)]
        else:
            grids[j] = grid
    return Inputs(
        model=model, X=X, y=y, target=target, dataset=dataset, features=features,
        unscored=unscored,
        sample_index=_frozen(sample_index), X_sample=take_rows(X, sample_index),
        sample_dataset=sample_dataset, explain_index=explain_index,
        X_explain=take_rows(X, explain_index), background_index=_frozen(background_index),
        X_background=take_rows(X, background_index), grids=MappingProxyType(grids),
        prediction=prediction, output_name=output_name, explained_class=explained_class,
        probability=probability, picks=picks,
        rows=tuple(rows), grid=grid, max_features=max_features,
        random_state=int(random_state), progress=progress, shapley_budget=shapley_budget,
        holdout=bool(holdout), input_notes=tuple(input_notes),
        unused_columns=tuple(unused_columns), skipped=skipped, outputs=outputs,
        all_predictions=all_predictions, output_position=position, output_labels=labels,
        scatter_index=scatter_index, classes=scored)


def booster_classes(model, width: int | None = None) -> range | None:
    """``range(k)`` for a raw multiclass booster (LightGBM, XGBoost) of ``k`` classes.

    ``width``, when given, is the number of outputs the booster gave, which
    must be ``k``.  A booster read from its own file has no ``classes_``, but its objective
    says it is a classifier of the class indices ``0 .. k-1`` it was trained
    on, and its ``k`` outputs are their probabilities (LightGBM
    ``multiclass`` / ``multiclassova``, XGBoost ``multi:softprob``).
    """
    kind = type(model).__module__.split(".")[0]
    if (width is not None and width < 2) or kind not in ("lightgbm", "xgboost") \
            or hasattr(model, "classes_"):
        return None
    try:
        if kind == "lightgbm":
            params = getattr(model, "params", {}) or {}
            objective, k = str(params.get("objective", "")), params.get("num_class")
            multiclass = objective.startswith("multiclass")
        else:
            import json

            learner = json.loads(model.save_config())["learner"]
            multiclass = learner["objective"]["name"] == "multi:softprob"
            k = learner["learner_model_param"]["num_class"]
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    if not multiclass or k is None or int(k) < 2 or (width is not None and int(k) != width):
        return None
    return range(int(k))


def _outputs(model, predicted, y, target) -> tuple:
    """What the predictions say of the model's outputs: every output's names and values when
    it has several (and no target), the explained one, whether it is a probability, and the
    classes y is scored against."""
    outputs: tuple = ()
    all_predictions = None
    position = 0
    unscored = None
    labels: tuple = ()
    own = getattr(model, "classes_", None)
    scored = None if own is None else tuple(np.asarray(own).tolist())
    if predicted.ndim == 2:
        # several outputs and no target: the effects show every one; the sections that
        # explain one output take the class the model predicts most (its highest mean
        # probability), named beside their numbers
        all_predictions = _frozen(predicted.to_numpy(dtype=float))
        outputs = tuple(str(c) for c in predicted.columns)
        classes = predicted.attrs.get("explained_class")
        probability = bool(predicted.attrs.get("probability"))
        indices = booster_classes(model, len(outputs))
        if indices is not None:
            # a multiclass booster's file says its outputs are the probabilities of the
            # class indices it was trained on: y is scored against them
            classes, probability = list(indices), True
            scored = tuple(indices)
        if y is not None and not probability:
            # y is one column and the outputs are not one target's classes: which output it
            # measures is unknown, and scoring the first against it would be a wrong number
            unscored = (f"The model has {len(outputs)} outputs ({', '.join(outputs)}) and y is "
                        "one column: which output y measures is unknown, so the model is not "
                        "scored. Say it with target= (its position, target=0 for the first; "
                        "--class on the command line).")
        position = int(np.argmax(np.nanmean(all_predictions, axis=0))) if probability else 0
        labels = tuple(classes) if classes is not None else tuple(range(len(outputs)))
        target = labels[position]
        prediction = _frozen(all_predictions[:, position])
        output_name = outputs[position]
        explained_class = classes[position] if classes is not None else None
    else:
        prediction = _frozen(predicted.to_numpy(dtype=float))
        output_name = str(predicted.name)
        explained_class = predicted.attrs["explained_class"]
        probability = bool(predicted.attrs["probability"])
        indices = booster_classes(model)
        if indices is not None and is_integer(target) and -len(indices) <= target < len(indices):
            # one class of a multiclass booster (target= its index): scored as that class
            explained_class, probability = indices[target], True
            scored = tuple(indices)
    return (outputs, all_predictions, position, unscored, labels, target, prediction,
            output_name, explained_class, probability, scored)


def _scatter_rows(rng, sample_index, explain_index, wanted, per_row) -> tuple:
    """The explained rows, then other sampled rows in a random order: ``wanted`` rows in
    all, fewer when their ``per_row`` Shapley values each would pass ``SCATTER_VALUES``."""
    if wanted is None:
        return tuple(explain_index)
    size = max(len(explain_index), min(int(wanted), SCATTER_VALUES // max(per_row, 1)))
    others = rng.permutation(np.setdiff1d(sample_index, explain_index))
    extra = others[:max(size - len(explain_index), 0)]
    return tuple(explain_index) + tuple(int(i) for i in extra)


def grid_values(inputs: Inputs, j: int) -> np.ndarray:
    """Encoded values PD evaluates feature ``j`` at (level codes for categorical features):
    PD's own grid rule (:func:`modellens.effects.pdp.pd_grid`) on the sample it runs on."""
    ds = inputs.sample_dataset
    if np.isnan(ds.values[:, j]).all():
        return np.array([])
    return pd_grid(ds, j, inputs.grids.get(j, inputs.grid))


def _extreme_rows(prediction) -> list:
    """``(position, why)`` of the rows with the highest, lowest and median prediction."""
    order = np.argsort(prediction, kind="stable")
    picks = [(int(order[-1]), "highest prediction"), (int(order[0]), "lowest prediction"),
             (int(order[(order.size - 1) // 2]), "median prediction")]
    out: list[tuple[int, str]] = []
    for i, why in picks:
        if i not in [j for j, _ in out]:
            out.append((i, why))
    return out
