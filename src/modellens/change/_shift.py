"""``ml.shift``: which features' change of distribution moved the mean prediction (or a metric).

The game.  Players are the features (and, with labels, one more player, the
labels).  A coalition ``S`` of players takes its values from the current
data, the others from the reference data, the two blocks drawn
independently of each other:

.. math:: v(S) = E\\big[g(X^{cur}_S, X^{ref}_{\\bar S}, y)\\big],
          \\quad (X^{cur}, y^{cur}) \\sim P_{cur},\\;
          (X^{ref}, y^{ref}) \\sim P_{ref} \\text{ independent},

with ``g`` the prediction (or the per-row metric of the prediction and the
label of the block the label player is in).  Within each block the joint
distribution is kept (both from one row); between the blocks it is not, as
in the interventional Shapley game.  ``v(N) - v(empty)`` is the change of
the mean of ``g``; the Shapley values of ``v`` share it among the players.
If the two data sets have one distribution, ``v(S) = v(N \\ S)`` and every
Shapley value is 0, so a test of "contribution 0" is a test of no change.

The estimator.  ``n_pairs`` reference rows and ``n_pairs`` current rows are
drawn without replacement and paired at random; each pair walks one random
order of the players, moving them one at a time from its reference row to
its current row (``d + 1`` model rows per pair: every prefix of the
features' order).  A pair's step of player ``j`` is an unbiased draw of
``phi_j`` (a random order's marginal contribution in the game of that
pair's rows), and distinct pairs use distinct rows of two i.i.d. samples,
so the pairs' draws are i.i.d.: ``phi_j`` is their mean, its standard error
their standard deviation over ``sqrt(n_pairs)``, and the per-player test is
Student's t with ``n_pairs - 1`` degrees of freedom, consistent as
``n_pairs`` grows under the assumption that the rows of each data set are
i.i.d. draws of its distribution.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._validation import InvalidParameterError, check_int, check_random_state
from ..attribution import holm
from ..engine import DataRows, Plan, Segment, open_request, run
from ..typing import ArrayLike, DataLike, ModelLike, RandomStateLike, TargetSpec
from .result import Shift

__all__ = ["shift", "METRICS", "DEFAULT_PAIRS"]

#: Metrics of a prediction and its label, per row (``"prediction"`` needs no label).
METRICS = ("prediction", "squared_error", "absolute_error", "log_loss", "accuracy")

#: Pairs of rows walked by default (each costs d + 1 model rows).
DEFAULT_PAIRS = 2000

#: The table's rows for the player of the labels and for what no player explains.
LABELS, UNEXPLAINED = "(labels)", "(unexplained)"


class HybridRows(Segment):
    """Each pair's ``d + 1`` rows: its reference row with the first ``k`` features of its
    order (``k = 0 .. d``) taken from its current row."""

    def __init__(self, ref: np.ndarray, cur: np.ndarray, rank: np.ndarray):
        self.ref, self.cur, self.rank = ref, cur, rank
        self.steps = ref.shape[1] + 1
        self.n_rows, self.width, self.group = len(ref) * self.steps, ref.shape[1], 1

    def fill(self, start, stop, out):
        r = np.arange(start, stop)
        i, k = r // self.steps, r % self.steps
        moved = self.rank[i] < k[:, None]
        np.copyto(out, np.where(moved, self.cur[i], self.ref[i]))


class ShiftPlan(Plan):
    """Every row of the reference and current data, and the pairs' hybrid rows."""

    def __init__(self, ref, cur, pairs_ref, pairs_cur, rank):
        self.ref, self.cur = DataRows(ref), DataRows(cur)
        self.hybrid = HybridRows(ref[pairs_ref], cur[pairs_cur], rank)
        self.segments = [self.ref, self.cur, self.hybrid]

    def reduce(self):
        steps = self.hybrid.steps
        return (self.ref.result, self.cur.result,
                self.hybrid.result.reshape(-1, steps))


def shift(model: ModelLike, X_reference: DataLike, X_current: DataLike,
          y_reference: ArrayLike | None = None, y_current: ArrayLike | None = None, *,
          metric: str | None = None, n_pairs: int | None = None,
          random_state: RandomStateLike = None, target: TargetSpec = None,
          response_method: str = "auto", feature_names: Sequence[str] | None = None,
          chunk_size: int | None = None, n_jobs: int | None = None,
          progress: bool | None = None) -> Shift:
    r"""Which features' change of distribution moved the model's mean prediction, or its metric?

    Decomposes the change from the reference data to the current data of
    the mean prediction (without labels) or of a per-row metric (with labels)
    into a contribution per feature: a Shapley decomposition over which
    features take their current distribution.  With labels, one more player,
    ``"(labels)"``, carries the change of the labels that no feature's
    distribution explains (a change of ``y`` given ``x``, a relabelling).

    Parameters
    ----------
    model : estimator or callable
        As in :func:`modellens.pdp`; ``target`` and ``response_method`` choose
        the output.
    X_reference, X_current : ndarray or DataFrame
        The two data sets, with the same columns.
    y_reference, y_current : array-like, optional
        Their labels, both or neither.
    metric : str, optional
        ``"prediction"`` (the default without labels), ``"squared_error"``
        (the default with labels for a model of a number),
        ``"absolute_error"``, ``"log_loss"`` (the default with labels for a
        class probability: the label is 1 when it is the explained class) or
        ``"accuracy"`` (a class probability above 1/2 predicts the explained
        class).  Each is the mean over rows of a per-row value; a metric of
        the whole table (AUC) is not per-row and is refused.
    n_pairs : int, optional
        Pairs of rows walked (``d + 1`` model rows each; default
        ``min(2000, rows of the smaller data set)``, at most that).
    random_state : int or Generator, optional
        Seeds the pairs and their orders; the same seed, the same numbers.
    target, response_method, feature_names, chunk_size, n_jobs, progress
        As in :func:`modellens.pdp`.

    Returns
    -------
    Shift
        ``to_frame()``: ``feature``, ``contribution``, ``std``, ``p_value``
        (Holm-adjusted over the players), ``p_value_unadjusted``; a row
        ``"(labels)"`` with labels, and a row ``"(unexplained)"``: the full
        data's change minus the sum of the contributions (the pairs'
        sampling error, 0 in expectation), with its standard error.

    See Also
    --------
    compare : What changed between two models.
    importance : Which features the score needs.

    Notes
    -----
    The game is :math:`v(S) = E[g(X^{cur}_S, X^{ref}_{\bar S}, y)]`, the
    features of :math:`S` (and the label, when the label player is in
    :math:`S`) from a current row, the others from an independent reference
    row: the joint distribution is kept within each block, not between them
    (as in the interventional Shapley game).  When the two data sets have
    one distribution every Shapley value of this game is exactly 0.

    The estimator pairs ``n_pairs`` reference rows with ``n_pairs`` current
    rows (drawn without replacement) at random; each pair walks one random
    order of the players from its reference row to its current row, and a
    player's step is an unbiased draw of its Shapley value.  The pairs are
    i.i.d. when each data set's rows are i.i.d. draws of its distribution,
    so the contributions are means with standard errors ``sd / sqrt(n_pairs)``
    and each player is tested with Student's t (``n_pairs - 1`` degrees of
    freedom), the p-values adjusted over the players by Holm's method
    (family-wise error rate).  The contributions sum to the pairs' change of
    the mean; the change over every row is computed from every row.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> rng = np.random.default_rng(0)
    >>> ref = rng.normal(size=(2000, 3))
    >>> cur = ref + [1.0, 0.0, 0.0]          # only x0 moved
    >>> s = ml.shift(lambda A: A @ [2.0, 1.0, 1.0], ref, cur, random_state=0)
    >>> round(float(s.total_change), 6)
    2.0
    >>> frame = s.to_frame()
    >>> float(frame.contribution[0]) > 1.9, bool(np.allclose(frame.contribution[1:3], 0, atol=0.2))
    (True, True)
    """
    labels = _check_labels(y_reference, y_current, X_reference, X_current)
    rng = check_random_state(random_state)
    request = open_request(model, X_reference, reference=X_current, reference_name="X_current",
                           target=target, response_method=response_method,
                           feature_names=feature_names, chunk_size=chunk_size, n_jobs=n_jobs,
                           progress=progress, dask="in_memory")
    values, n_ref = request.dataset.values, request.n_explained
    ref, cur = values[:n_ref], request.reference
    assert cur is not None  # read with X_reference under one schema
    metric = _check_metric(metric, labels is not None, request.model)
    most = min(len(ref), len(cur))
    n_pairs = min(most, DEFAULT_PAIRS) if n_pairs is None else check_int(n_pairs, "n_pairs", low=2)
    if n_pairs > most:
        raise InvalidParameterError(
            f"n_pairs={n_pairs} is more than the smaller data set's {most} rows (pairs are "
            "drawn without replacement); pass n_pairs <= that.")
    d = ref.shape[1]
    players = d + (labels is not None)
    pr = rng.choice(len(ref), n_pairs, replace=False)
    pc = rng.choice(len(cur), n_pairs, replace=False)
    order = np.argsort(rng.random((n_pairs, players)), axis=1)  # each pair's random order
    position = np.argsort(order, axis=1)  # where each player stands in its pair's order
    # each feature's place among the features alone: the model rows walk the features' prefixes
    rank = np.argsort(np.argsort(position[:, :d], axis=1), axis=1)
    (pred_ref, pred_cur, steps), = run(request.model, [ShiftPlan(ref, cur, pr, pc, rank)],
                                       request.options, desc="shift")
    score = _scorer(metric, request.model)
    yr = None if labels is None else labels[0]
    yc = None if labels is None else labels[1]
    draws = _walk(order, steps, score, None if yr is None else yr[pr],
                  None if yc is None else yc[pc], d)
    full = float(np.mean(score(pred_cur, yc)) - np.mean(score(pred_ref, yr)))
    names = list(request.dataset.feature_names) + ([LABELS] if labels is not None else [])
    return _result(draws, full, names, metric, request.model.output_name,
                   float(np.mean(score(pred_ref, yr))), float(np.mean(score(pred_cur, yc))))


def _walk(order, steps, score, y_ref, y_cur, d):
    """Each pair's marginal contribution of every player along its order, ``(pairs, players)``."""
    n, players = order.shape
    draws = np.zeros((n, players))
    at = np.zeros(n, dtype=np.intp)          # features moved so far
    labelled = np.zeros(n, dtype=bool)       # the label moved
    rows = np.arange(n)

    def value(k, lab):
        pred = steps[rows, k]
        if y_ref is None:
            return score(pred, None)
        return score(pred, np.where(lab, y_cur, y_ref))

    before = value(at, labelled)
    for p in range(players):
        who = order[:, p]
        is_label = who >= d
        at = at + ~is_label
        labelled = labelled | is_label
        after = value(at, labelled)
        draws[rows, who] = after - before
        before = after
    return draws


def _result(draws, full, names, metric, output, ref_value, cur_value) -> Shift:
    n = len(draws)
    phi = draws.mean(axis=0)
    std = draws.std(axis=0, ddof=1) / np.sqrt(n)
    from scipy import stats

    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(std > 0, phi / std, np.where(phi == 0, 0.0, np.inf))
    raw = 2 * stats.t.sf(np.abs(t), n - 1)
    totals = draws.sum(axis=1)
    return Shift(feature_names=names, contribution=phi, std=std, p_value=holm(raw),
                 p_value_unadjusted=raw, total_change=full,
                 unexplained=full - float(totals.mean()),
                 unexplained_std=float(totals.std(ddof=1) / np.sqrt(n)),
                 reference_value=ref_value, current_value=cur_value, metric=metric,
                 output=output, n_pairs=n, correction="holm")


def _check_labels(y_ref, y_cur, X_ref, X_cur):
    if (y_ref is None) != (y_cur is None):
        raise InvalidParameterError(
            "pass both y_reference and y_current (the labels of both data sets), or neither.")
    if y_ref is None:
        return None
    out = []
    for y, X, name in ((y_ref, X_ref, "y_reference"), (y_cur, X_cur, "y_current")):
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != len(X):
            raise InvalidParameterError(f"{name} must hold one label per row of its data "
                                        f"({len(X)}), got shape {y.shape}.")
        out.append(y)
    return out


def _check_metric(metric, labelled: bool, model):
    if metric is None:
        if not labelled:
            return "prediction"
        return "log_loss" if model.explains_probability else "squared_error"
    if metric in ("auc", "roc_auc"):
        raise InvalidParameterError(
            "metric='auc' is a statistic of the whole table, not a mean over rows, so this "
            "decomposition (a mean of per-row values) cannot share it; use 'log_loss' or "
            "'accuracy'.")
    if metric not in METRICS:
        raise InvalidParameterError(f"metric must be one of {METRICS}, got {metric!r}.")
    if metric != "prediction" and not labelled:
        raise InvalidParameterError(f"metric={metric!r} needs labels: pass y_reference and "
                                    "y_current.")
    if metric in ("log_loss", "accuracy") and not model.explains_probability:
        raise InvalidParameterError(
            f"metric={metric!r} reads a class probability; the model's output is "
            f"{model.output_name!r}. Use a classifier (predict_proba), or 'squared_error'.")
    return metric


def _scorer(metric, model):
    """The per-row value ``g(prediction, label)`` of a metric."""
    positive = getattr(model, "explained_class", None)

    def hit(y):
        return (np.asarray(y) == positive).astype(np.float64)

    if metric == "prediction":
        return lambda p, y: np.asarray(p, dtype=np.float64)
    if metric == "squared_error":
        return lambda p, y: (p - np.asarray(y, dtype=np.float64)) ** 2
    if metric == "absolute_error":
        return lambda p, y: np.abs(p - np.asarray(y, dtype=np.float64))
    if metric == "accuracy":
        return lambda p, y: ((p > 0.5) == (hit(y) > 0)).astype(np.float64)
    eps = 1e-15

    def log_loss(p, y):
        q = np.clip(p, eps, 1 - eps)
        h = hit(y)
        return -(h * np.log(q) + (1 - h) * np.log1p(-q))

    return log_loss
