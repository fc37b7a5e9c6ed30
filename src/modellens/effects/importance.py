"""Permutation feature importance: how much a score drops when a feature is shuffled.

Every permuted copy of the data is planned as rows of one engine stream
(:class:`PermutedRows`, a segment per feature); the model's answers are then
scored copy by copy with the scikit-learn scorer, which reads them through a
stand-in for the model (:class:`_Answers`).  The permutations are drawn
exactly as :func:`sklearn.inspection.permutation_importance` draws them, so
the same ``random_state`` gives the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validation import InvalidParameterError, check_int, check_sample_weight
from ..engine import DataRows, Plan, Segment, open_request, run_outputs
from ..models import RESPONSES, response_model
from ..typing import ArrayLike, DataLike, ModelLike, RandomStateLike, TargetSpec
from .importance_result import Importance

__all__ = ["importance", "PermutedRows"]


class PermutedRows(Segment):
    """The data with one column permuted, once per repeat: ``repeats * n`` rows.

    Row ``r * n + i`` is data row ``i`` with column ``column`` taken from
    row ``perms[r, i]``.
    """

    def __init__(self, data: np.ndarray, column: int, perms: np.ndarray):
        self.data, self.column, self.perms = data, column, perms
        self.n = data.shape[0]
        self.n_rows, self.width, self.group = perms.size, data.shape[1], 1

    def fill(self, start, stop, out):
        idx = np.arange(start, stop)
        r, i = np.divmod(idx, self.n)
        out[...] = self.data[i]
        out[:, self.column] = self.data[self.perms[r, i], self.column]


class ImportancePlan(Plan):
    """The answers at the data and at every permuted copy, of one response column."""

    def __init__(self, values, perms):
        self.at_data = DataRows(values)
        self.copies = [PermutedRows(values, j, perms) for j in range(values.shape[1])]
        self.segments = [self.at_data, *self.copies]
        self.repeats = perms.shape[0]

    def reduce(self):
        n = self.at_data.n_rows
        return self.at_data.result, np.stack([seg.result.reshape(self.repeats, n)
                                              for seg in self.copies])


def sklearn_permutations(random_state, n: int, n_repeats: int) -> np.ndarray:
    """The row orders of :func:`sklearn.inspection.permutation_importance`, ``(n_repeats, n)``.

    scikit-learn draws one seed from ``random_state``, then for every column
    a ``RandomState`` of that seed shuffles one index array in place once per
    repeat and takes the already permuted column through it: repeat ``r``
    reads the data through the composition of the first ``r`` shuffles.
    Every column gets the same orders.
    """
    from sklearn.utils import check_random_state

    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max + 1)
    rng = check_random_state(seed)
    shuffling = np.arange(n)
    order = np.arange(n)
    out = np.empty((n_repeats, n), dtype=np.intp)
    for r in range(n_repeats):
        rng.shuffle(shuffling)
        order = order[shuffling]
        out[r] = order
    return out


class _Answers:
    """Stands in for the model in a scorer: each response returns answers computed before.

    It has the response methods the model has (so the scorer picks the one it
    would pick), the model's ``classes_`` and scikit-learn tags.  A response
    not yet computed is computed through ``compute`` (on the data, once) and
    its name recorded.
    """

    def __init__(self, model, answers: dict, compute=None):
        self._model, self._answers, self._compute = model, answers, compute
        self.used: list[str] = []
        if hasattr(model, "classes_"):
            self.classes_ = model.classes_

    def __sklearn_tags__(self):
        if hasattr(self._model, "__sklearn_tags__"):
            return self._model.__sklearn_tags__()
        # a plain callable is scored as a regressor's prediction
        from sklearn.base import BaseEstimator, RegressorMixin

        class Regressor(RegressorMixin, BaseEstimator):
            pass
        return Regressor().__sklearn_tags__()

    def _respond(self, name):
        if name not in self._answers:
            if self._compute is None:
                raise InvalidParameterError(f"the scorer asked for {name}, which was not "
                                            "computed for the permuted rows.")
            self._answers[name] = self._compute(name)
        if name not in self.used:
            self.used.append(name)
        return self._answers[name]


def _answers_type(model, callable_model: bool):
    """A stand-in class with the model's response methods (named as the model's)."""
    methods: dict[str, Any] = {}
    names = ("predict",) if callable_model else [m for m in RESPONSES if hasattr(model, m)]
    for name in names:
        def method(self, X, _name=name):
            return self._respond(_name)
        method.__name__ = name
        methods[name] = method
    return type("_ModelAnswers", (_Answers,), methods)


def _scorer(model, scoring, callable_model: bool):
    """The scorer of ``scoring``, and its name."""
    from sklearn.base import is_classifier
    from sklearn.metrics import get_scorer

    if scoring is None:
        # what the score method of scikit-learn's classifiers and regressors computes
        scoring = "accuracy" if not callable_model and is_classifier(model) else "r2"
    if isinstance(scoring, str):
        try:
            return get_scorer(scoring), scoring
        except ValueError as exc:
            raise InvalidParameterError(f"scoring={scoring!r}: {exc}") from None
    if callable(scoring):
        return scoring, getattr(scoring, "__name__", "score")
    raise InvalidParameterError(
        f"scoring must be None, a scikit-learn scorer name (e.g. 'r2', 'accuracy', "
        f"'neg_log_loss') or a callable scorer(estimator, X, y), got {scoring!r}; for "
        "several scores call importance once per score.")


def _weighted(scorer, weights):
    """``scorer`` reading the rows with ``weights``, as scikit-learn calls a scorer with them."""
    def score(estimator, X, y):
        return scorer(estimator, X, y, sample_weight=weights)
    return score


def importance(model: ModelLike, X: DataLike, y: ArrayLike, *, scoring: Any = None,
               n_repeats: int = 5, random_state: RandomStateLike = None,
               sample_weight: ArrayLike | None = None, target: TargetSpec = None,
               response_method: str = "auto",
               feature_names: Sequence[str] | None = None, chunk_size: int | None = None,
               n_jobs: int | None = None, progress: bool | None = None) -> Importance:
    r"""How much worse the model scores when a feature's values are shuffled.

    Permutation feature importance (Breiman 2001; Fisher, Rudin & Dominici
    2019) breaks the link between one feature and the target by shuffling
    the feature's column, and measures the loss of score: a large drop means
    the model relies on the feature.  Each feature is shuffled ``n_repeats``
    times, and the spread over the repeats shows how stable the estimate is.
    The numbers equal :func:`sklearn.inspection.permutation_importance` with
    the same ``scoring`` and ``random_state`` (the same permutations); the
    permuted copies are evaluated as one stream of model rows.

    Parameters
    ----------
    model : estimator or callable
        As in :func:`modellens.pdp`.  A plain callable is scored on its
        output as a regressor's prediction.
    X : ndarray or DataFrame of shape (n, d)
        The rows to score on (ideally held-out data).
    y : array-like of shape (n,) or (n, k)
        The targets of ``X``; ``(n, k)`` for a regressor (or a callable) of
        ``k`` outputs, scored on all of them as scikit-learn scores it.
    scoring : str or callable, optional
        A scikit-learn scorer name (``"r2"``, ``"neg_mean_squared_error"``,
        ``"accuracy"``, ``"roc_auc"``, ``"neg_log_loss"``, ...) or a callable
        ``scorer(estimator, X, y)`` (greater is better).  None: accuracy for
        classifiers, :math:`R^2` otherwise (what their ``score`` gives).
    n_repeats : int, default=5
        Shuffles per feature.
    random_state : int, RandomState or None
        Seeds the shuffles as scikit-learn does (None: NumPy's global
        random state, as there).
    sample_weight : array-like of shape (n,), optional
        Weights of the rows in every score (the baseline and each permuted
        copy), passed to the scorer as
        :func:`sklearn.inspection.permutation_importance` passes them.
    target, response_method : optional
        The output of a plain callable model (as in :func:`modellens.pdp`);
        an estimator's response is the one the scorer asks for.
    feature_names, chunk_size, n_jobs, progress
        As in :func:`modellens.pdp`.

    Returns
    -------
    Importance
        ``importances`` ``(d, n_repeats)``, their mean and standard
        deviation per feature, the ``baseline`` score; ``.to_frame()``,
        ``.plot()``, ``to_dict()`` / ``from_dict()``.

    See Also
    --------
    interactions : Which features act together.
    shapley : Each row's prediction shared among the features.
    pdp : How the prediction depends on a feature.

    Notes
    -----
    With score :math:`s` (greater is better), data :math:`X` and the copy
    :math:`X^{(j, r)}` whose column :math:`j` is permuted by the
    :math:`r`-th order :math:`\pi_r`,

    .. math:: I_{j,r} = s(f, X, y) - s(f, X^{(j, r)}, y), \qquad
              \bar I_j = \frac{1}{R} \sum_{r=1}^R I_{j,r}, \qquad
              \mathrm{sd}_j = \sqrt{\frac{1}{R} \sum_{r=1}^R (I_{j,r} - \bar I_j)^2}.

    The cost is :math:`n (1 + d R)` model rows per response the scorer
    reads (labels, probabilities, ...): one pass gives every class of a
    multiclass response.  Shuffling breaks the
    feature's dependence on the others too, so the permuted rows may leave
    the data's distribution when features are correlated: read the
    importance of correlated features together.

    References
    ----------
    .. [1] Breiman, L. (2001). Random forests. *Machine Learning* 45, 5-32.
    .. [2] Fisher, A., Rudin, C. & Dominici, F. (2019). All models are wrong, but
       many are useful. *JMLR* 20(177), 1-81.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> y = 3 * X[:, 0] + X[:, 1]
    >>> imp = ml.importance(LinearRegression().fit(X, y), X, y, random_state=0)
    >>> imp.to_frame()["feature"].tolist()
    ['x0', 'x1', 'x2']
    >>> bool(imp.importances_mean[0] > imp.importances_mean[1] > abs(imp.importances_mean[2]))
    True
    """
    n_repeats = check_int(n_repeats, "n_repeats", low=1, what="a positive integer")
    callable_model = not any(hasattr(model, m) for m in RESPONSES)
    if not callable_model and (target is not None or response_method != "auto"):
        raise InvalidParameterError(
            "target= and response_method= choose the output of a plain callable model; an "
            "estimator is scored on the response its scorer asks for (scoring=).")
    if not callable_model:
        # the request's own model is not used: each response the scorer reads gets its own
        response_method = next(m for m in RESPONSES if hasattr(model, m))
    request = open_request(model, X, None, target=target, response_method=response_method,
                           feature_names=feature_names, chunk_size=chunk_size, n_jobs=n_jobs,
                           progress=progress, dask="in_memory", several=True,
                           wrap_model=callable_model)  # (an estimator's is not used)
    dataset = request.dataset
    y = np.asarray(y)
    if y.ndim not in (1, 2) or y.shape[0] != dataset.n_rows:
        raise InvalidParameterError(
            f"y must hold one target per row of X ({dataset.n_rows}): shape (n,), or (n, k) "
            f"for a model of k outputs; got shape {y.shape}.")
    if y.ndim == 2 and hasattr(model, "classes_") and not callable_model:
        raise InvalidParameterError(
            f"y has shape {y.shape}: a multi-label classifier is not supported; score each "
            "label's classifier with its own 1-D y.")
    weights = check_sample_weight(sample_weight, dataset.n_rows)
    scorer, name = _scorer(model, scoring, callable_model)
    if weights is not None:
        scorer = _weighted(scorer, weights)
    values = dataset.values
    perms = sklearn_permutations(random_state, dataset.n_rows, n_repeats)
    kind = _answers_type(model, callable_model)

    def assemble(method, parts):
        """The response ``method`` of rows from its columns' answers (last axis: rows)."""
        if method == "predict" and hasattr(model, "classes_") and not callable_model:
            return np.asarray(model.classes_)[parts[0].astype(np.intp)]
        if len(parts) == 1:
            if method == "predict_proba" and hasattr(model, "classes_"):
                return np.stack([1.0 - parts[0], parts[0]], axis=-1)  # binary
            return parts[0]
        return np.stack(parts, axis=-1)

    # each response the scorer reads: the data and every permuted copy of every feature in
    # one engine pass that gives all of its columns; the baseline is the pass's data rows
    copies = {}

    def compute(method):
        mdl = request.model if callable_model else response_model(model, dataset, method)
        answers = [out[0] for out in run_outputs(
            mdl, lambda m: [ImportancePlan(values, perms)], request.options,
            desc="importance")]
        if y.ndim == 1 and len(answers) > 1 and (callable_model or
                                                 not hasattr(model, "classes_")):
            raise InvalidParameterError(
                f"the model gives {len(answers)} outputs per row but y has one target per "
                f"row: pass y of shape (n, {len(answers)}) to score them together"
                + (", or target= to score one." if callable_model else "."))
        copies[method] = assemble(method, [c for _, c in answers])  # (d, R, n[, k])
        return assemble(method, [a for a, _ in answers])

    stand_in = kind(model, {}, compute)
    baseline = float(scorer(stand_in, X, y))
    used = stand_in.used
    d = dataset.n_features
    scores = np.empty((d, n_repeats))
    for j in range(d):
        for r in range(n_repeats):
            answers = {m: copies[m][j, r] for m in used}
            scores[j, r] = scorer(kind(model, answers), X, y)
    return Importance(feature_names=dataset.feature_names, importances=baseline - scores,
                      baseline=baseline, scoring=name, n_rows=dataset.n_rows)
