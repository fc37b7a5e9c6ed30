r"""LIME's local surrogate: proximity kernel, feature selection and the weighted ridge fit.

Every LIME variant (tables, text, images) ends the same way: perturbed
samples in an interpretable representation :math:`z \in \mathbb R^{S \times p}`
(row 0 the explained instance), the model's answers :math:`y`, and proximity
weights :math:`\pi`.  The surrogate chooses at most ``k`` features and fits

.. math:: \min_{b, \beta} \sum_s \pi_s (y_s - b - z_s^\top \beta)^2
          + \alpha \lVert \beta \rVert^2, \qquad \alpha = 1,

with scikit-learn (Ridge on the weight-centred data, ``lars_path`` for the
lasso path).  Ribeiro, Singh & Guestrin (2016), and the ``lime`` package's
defaults, which this module follows so the two can be compared.

A model of several outputs is answered once per sample with all of them, and
their surrogates share the samples, distances and weights: each output
selects its own features, and outputs with the same features are fit by one
solve with a right-hand side per output (:func:`fit_outputs`).
"""

from __future__ import annotations

import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import (InvalidParameterError, ModellensWarning, check_choice, check_int,
                           check_positive_float)
from ..engine import run
from ._blocks import SurrogateBlock
from .result import build

__all__ = ["surrogate_attributions", "exponential_kernel", "SELECTIONS", "DEFAULT_NUM_FEATURES",
           "LocalFit", "fit_outputs", "choose_selection", "warn_if_shrunk",
           "check_budget", "EveryOutput", "run_every_output", "output_names"]

SELECTIONS = ("auto", "forward", "highest_weights", "lasso_path", "none")
#: ``num_features=None`` keeps at most this many features (fewer when there are fewer).
DEFAULT_NUM_FEATURES = 10
#: ``feature_selection="auto"`` runs forward selection up to this many features.
AUTO_FORWARD_MAX = 6
#: Ridge penalty of the final surrogate, and of the full fit that ranks features
#: for ``"highest_weights"`` (the lime package's choices).
RIDGE_ALPHA = 1.0
RANKING_ALPHA = 0.01


def check_budget(num_features, num_samples, p, kernel_width, feature_selection, *,
                 default_width: float, players: str = "features of the data"):
    """LIME's options checked against ``p`` interpretable features (``players`` names them).

    Returns ``(num_features, num_samples, kernel_width)`` with the defaults filled in.
    """
    num_features = min(DEFAULT_NUM_FEATURES, p) if num_features is None else \
        check_int(num_features, "num_features", low=1)
    if num_features > p:
        raise InvalidParameterError(
            f"num_features={num_features} is larger than the {p} {players}; pass at most {p}.")
    num_samples = check_int(num_samples, "num_samples", low=2)
    width = default_width if kernel_width is None else \
        check_positive_float(kernel_width, "kernel_width")
    check_choice(feature_selection, "feature_selection", SELECTIONS)
    return num_features, num_samples, width


def exponential_kernel(distances, width: float) -> np.ndarray:
    r"""Proximity weights :math:`\pi(D) = \sqrt{\exp(-D^2 / w^2)}`."""
    distances = np.asarray(distances, dtype=np.float64)
    return np.sqrt(np.exp(-(distances ** 2) / width ** 2))


def choose_selection(method: str, k: int) -> str:
    """``"auto"`` resolved: forward selection for a few features, highest weights otherwise."""
    if method == "auto":
        return "forward" if k <= AUTO_FORWARD_MAX else "highest_weights"
    return method


@dataclass
class LocalFit:
    """One surrogate: weights over all ``p`` features (0 for unselected ones) and its figures."""

    coef: np.ndarray
    intercept: float
    score: float
    score_holdout: float
    local_prediction: float
    used: np.ndarray
    #: The model's output at the instance (set by the caller, which has it).
    prediction: float = float("nan")
    #: Smallest factor :math:`S_j / (S_j + \alpha)` by which the ridge penalty shrinks a
    #: selected weight (:math:`S_j` the weighted spread of :math:`z_j`); 1 when none varies.
    shrinkage: float = 1.0


def _centred(Z, Y, w):
    """Weight-centred data scaled by :math:`\\sqrt{\\pi}`: the intercept drops out of the fit.

    ``Y`` is ``(S,)`` or ``(S, K)`` (one column per output).
    """
    total = w.sum()
    z_mean = w @ Z / total
    y_mean = w @ Y / total
    sw = np.sqrt(w)
    return (Z - z_mean) * sw[:, None], (Y - y_mean) * (sw[:, None] if Y.ndim == 2 else sw), \
        z_mean, y_mean


def _ridge(Z, Y, w, alpha):
    """Weighted ridge with an unpenalised intercept (scikit-learn): ``(coef, intercept)``.

    ``Y`` of shape ``(S, K)`` is solved with its ``K`` right-hand sides at once
    (``coef`` ``(p, K)``, ``intercept`` ``(K,)``); a ``(S,)`` ``Y`` gives
    ``(p,)`` and a float.
    """
    from sklearn.linear_model import ridge_regression

    one = Y.ndim == 1
    Y2 = Y[:, None] if one else Y
    if Z.shape[1] == 0:
        coef, intercept = np.zeros((0, Y2.shape[1])), w @ Y2 / w.sum()
    else:
        Zc, Yc, z_mean, y_mean = _centred(Z, Y2, w)
        # alpha > 0: one Cholesky factorisation solves every right-hand side
        coef = ridge_regression(Zc, Yc, alpha, solver="cholesky", check_input=False)
        coef = np.asarray(coef, dtype=np.float64).reshape(Y2.shape[1], Z.shape[1]).T
        intercept = y_mean - z_mean @ coef
    return (coef[:, 0], float(intercept[0])) if one else (coef, intercept)


def _column_scales(Y) -> np.ndarray:
    """Per column of ``Y``, the power of two that brings its largest value near 1.

    R^2 does not depend on the scale of ``y``, but its sums of squares overflow to
    inf / inf = NaN for predictions beyond about 1e154.  A power of two scales
    exactly, so every other R^2 keeps its last digit.
    """
    peak = np.max(np.abs(Y), axis=0, initial=0.0)
    return np.where((peak > 0) & np.isfinite(peak), -np.frexp(peak)[1], 0)


def _r2_columns(Y, fitted, w, *, resid=None) -> np.ndarray:
    """Weighted R^2 of each column, as scikit-learn's ``r2_score`` (1 for a perfect fit
    of a constant); ``resid`` replaces ``Y - fitted`` (the held-out residuals)."""
    e = _column_scales(Y)
    Ys = np.ldexp(Y, e)
    rs = np.ldexp(Y - fitted if resid is None else resid, e)
    unexplained = w @ rs ** 2
    total = w @ (Ys - w @ Ys / w.sum()) ** 2
    # a constant: fit exactly (weighted), or its held-out residuals all near 0
    exact = unexplained <= 0 if resid is None else np.all(np.isclose(resid, 0), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, 1.0 - unexplained / total, np.where(exact, 1.0, 0.0))


def _alike(used):
    """Outputs grouped by their selected features: ``[(features, [outputs]), ...]``.

    The outputs of a group share every matrix of their fits (the samples, the
    weights, the columns): one solve with a right-hand side per output.
    """
    groups: dict[tuple, list[int]] = {}
    for c, cols in enumerate(used):
        groups.setdefault(tuple(int(j) for j in cols), []).append(c)
    return list(groups.items())


def _forward(Z, Y, w, k):
    r"""Greedy forward selection per output: add the feature that most raises the weighted
    R^2 of least squares.

    On the weight-centred data (:func:`_centred`), with Gram matrix
    :math:`G = Z_c^\top Z_c` and :math:`b = Z_c^\top y_c`, adding feature
    :math:`j` to the set :math:`S` raises the explained sum of squares by
    :math:`c_j^2 / r_j`, where :math:`r_j = G_{jj} - G_{jS} G_{SS}^{+} G_{Sj}`
    is what of :math:`z_j` the set leaves unexplained and
    :math:`c_j = b_j - G_{jS} G_{SS}^{+} b_S` its covariance with the
    residual: the R^2 of every candidate at once, from one Gram matrix that
    all outputs share, instead of a least-squares fit per candidate.  A
    candidate that the set already explains (:math:`r_j \approx 0`) adds
    nothing; ties (within rounding) go to the first feature.
    """
    Zc, Yc, _, _ = _centred(Z, np.ldexp(Y, _column_scales(Y)), w)
    G = Zc.T @ Zc
    B = Zc.T @ Yc
    p = Z.shape[1]
    diag = np.diag(G).copy()
    # below this, a candidate is a combination of the chosen ones (or constant)
    floor = 1e-10 * np.maximum(diag, np.finfo(float).tiny)
    out = []
    for c in range(Y.shape[1]):
        used: list[int] = []
        for _ in range(min(k, p)):
            if used:
                inv = np.linalg.pinv(G[np.ix_(used, used)])
                across = G[:, used]
                left = diag - np.einsum("js,st,jt->j", across, inv, across)
                cov = B[:, c] - across @ (inv @ B[used, c])
            else:
                left, cov = diag, B[:, c]
            fresh = left > floor
            gain = np.zeros(p)
            gain[fresh] = cov[fresh] ** 2 / left[fresh]
            gain[used] = -np.inf
            # ties within rounding go to the first feature (a copy of a column is one)
            best = gain.max()
            used.append(int(np.flatnonzero(gain >= best - 1e-12 * abs(best))[0]))
        out.append(np.array(sorted(used), dtype=np.intp))
    return out


def _highest_weights(Z, Y, w, z0, k):
    """Per output, the ``k`` largest ``|coef_j * z0_j|`` of a lightly penalised fit on all
    features (one fit for every output)."""
    coef, _ = _ridge(Z, Y, w, RANKING_ALPHA)
    return [np.sort(np.argsort(-np.abs(coef[:, c] * z0), kind="stable")[:k])
            for c in range(Y.shape[1])]


def _lasso_path(Z, y, w, k):
    """The last point of the weighted lasso path with at most ``k`` non-zero weights."""
    from sklearn.linear_model import lars_path

    Zc, yc, _, _ = _centred(Z, y, w)
    _, _, coefs = lars_path(Zc, yc, method="lasso")
    used = np.arange(Z.shape[1])
    for i in range(coefs.shape[1] - 1, 0, -1):
        used = np.flatnonzero(coefs[:, i])
        if used.size <= k:
            break
    return used


def _leverages(Z, w, alpha):
    r"""Leverages :math:`h_s = \pi_s \tilde z_s^\top G^{-1} \tilde z_s` of the ridge fit on ``Z``.

    :math:`\tilde z = (1, z)` and :math:`G = \tilde Z^\top \Pi \tilde Z + \alpha I'`
    (the intercept unpenalised); they do not depend on the answers, so every
    output fit on the same columns shares them.
    """
    X = np.column_stack([np.ones(Z.shape[0]), Z])
    penalty = np.full(X.shape[1], alpha)
    penalty[0] = 0.0
    G = (X * w[:, None]).T @ X + np.diag(penalty)
    return w * ((X @ np.linalg.pinv(G)) * X).sum(axis=1)


def _holdout_r2(Z, Y, w, coef, intercept, alpha, h=None):
    r"""Leave-one-out weighted R^2 of the ridge fit (PRESS), without refitting.

    Holding out sample :math:`s` changes its residual to :math:`e_s / (1 - h_s)`
    with the leverage :math:`h_s` (:func:`_leverages`): an exact identity of
    penalised least squares.  ``Y`` ``(S, K)`` with ``coef`` ``(p, K)`` gives
    one score per column; ``(S,)`` a float.
    """
    h = _leverages(Z, w, alpha) if h is None else h
    one = np.ndim(Y) == 1
    Y2 = np.asarray(Y, dtype=np.float64).reshape(len(Y), -1)
    fitted = Z @ np.reshape(coef, (Z.shape[1], -1)) + intercept
    resid = (Y2 - fitted) / np.maximum(1.0 - h, 1e-12)[:, None]
    scores = _r2_columns(Y2, fitted, w, resid=resid)
    return float(scores[0]) if one else scores


#: Below this shrinkage the ridge penalty, not the model, sets a weight (it is halved).
SHRINKAGE_WARN = 0.5


def warn_if_shrunk(fits, stacklevel=3):
    """Warn when the ridge penalty more than halves a weight of some fit.

    The penalty is fixed (1) while the samples' total kernel weight shrinks with a
    narrow kernel, few samples or few words: then every weight is pulled toward 0.
    """
    low = [k for k, f in enumerate(fits) if f.shrinkage < SHRINKAGE_WARN]
    if low:
        warnings.warn(
            f"the ridge penalty (alpha = {RIDGE_ALPHA:g}) shrinks weights of {len(low)} of "
            f"{len(fits)} explanation(s) by more than half (first: row {low[0]}, factor "
            f"{fits[low[0]].shrinkage:.2g}): the kernel leaves the samples too little weight, "
            "so the weights are biased toward 0. Widen kernel_width or draw more samples "
            "(num_samples).", ModellensWarning, stacklevel=stacklevel)


_CONTROLLER: list[Any] = []  # the threadpoolctl controller, once made
_BLAS_LOCK = threading.Lock()
#: Fits running now, and the threadpoolctl limiter the first of them set.
_BLAS_STATE: dict[str, Any] = {"users": 0, "limiter": None}


def _blas_controller():
    """One threadpoolctl controller: finding the loaded BLAS libraries takes milliseconds."""
    if not _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


@contextmanager
def _one_blas_thread():
    """BLAS on one thread while any surrogate fit runs.

    A BLAS library has one thread count for the whole process, so this cannot
    be confined to the calling thread.  Set and restored by a count under a
    lock: the first fit to enter sets 1, the last to leave restores what the
    first found.  Fits running at once (the engine's threads, or two user
    threads) then never restore a stale count, which a plain set-and-restore
    per fit would do when their windows overlap.  Other code that calls BLAS
    during a fit runs on one BLAS thread meanwhile; the fits are short.
    """
    with _BLAS_LOCK:
        if _BLAS_STATE["users"] == 0:
            _BLAS_STATE["limiter"] = _blas_controller().limit(limits=1, user_api="blas")
        _BLAS_STATE["users"] += 1
    try:
        yield
    finally:
        with _BLAS_LOCK:
            _BLAS_STATE["users"] -= 1
            if _BLAS_STATE["users"] == 0:
                _BLAS_STATE.pop("limiter").restore_original_limits()
                _BLAS_STATE["limiter"] = None


def fit_outputs(Z, Y, w, z0, k: int, method: str) -> list[LocalFit]:
    """One surrogate per column of ``Y`` ``(S, K)``, fit on the same samples and weights.

    Each output selects its own features (as a single-output fit of that
    column would); outputs with the same features are fit in one ridge solve
    with a right-hand side each, and share the leverages of their held-out
    score.  Column ``c``'s fit equals the fit of ``Y[:, [c]]`` alone.  ``Z`` is ``(S, p)``
    (row 0 the instance), ``z0`` the instance's representation; each output selects at
    most ``k`` features with ``method`` and fits the weighted ridge on them.
    """
    from sklearn import config_context

    # The inputs are ours and checked: scikit-learn's per-call validation would cost more
    # than the small fits themselves.  Products of a tall, narrow matrix gain nothing from
    # BLAS threads, and on a busy machine waiting for them took 50 times longer.
    # (scikit-learn's config is thread-local; the BLAS limit is not, see _one_blas_thread)
    with config_context(skip_parameter_validation=True, assume_finite=True), \
            _one_blas_thread():
        return _fit_outputs(np.asarray(Z, dtype=np.float64), np.asarray(Y, dtype=np.float64),
                            w, z0, k, method)


def _fit_outputs(Z, Y, w, z0, k, method):
    method = choose_selection(method, k)
    K, p = Y.shape[1], Z.shape[1]
    if method == "none" or k >= p and method != "lasso_path":
        used = [np.arange(p)] * K
    elif method == "forward":
        used = _forward(Z, Y, w, k)
    elif method == "highest_weights":
        used = _highest_weights(Z, Y, w, z0, k)
    else:
        used = [_lasso_path(Z, Y[:, c], w, k) for c in range(K)]
    fits: list = [None] * K
    for cols, outs in _alike(used):
        cols = np.array(cols, dtype=np.intp)
        Zu = Z[:, cols]
        coef_used, intercept = _ridge(Zu, Y[:, outs], w, RIDGE_ALPHA)
        fitted = Zu @ coef_used + intercept
        h = _leverages(Zu, w, RIDGE_ALPHA)
        spread = w @ (Zu - w @ Zu / w.sum()) ** 2
        spread = spread[spread > 0]
        shrinkage = float((spread / (spread + RIDGE_ALPHA)).min()) if spread.size else 1.0
        score = _r2_columns(Y[:, outs], fitted, w)
        holdout = _holdout_r2(Zu, Y[:, outs], w, coef_used, intercept, RIDGE_ALPHA, h)
        local = z0[cols] @ coef_used + intercept
        for t, c in enumerate(outs):
            coef = np.zeros(p)
            coef[cols] = coef_used[:, t]
            fits[c] = LocalFit(
                shrinkage=shrinkage, coef=coef, intercept=float(intercept[t]),
                score=float(score[t]), score_holdout=float(holdout[t]),
                local_prediction=float(local[t]), used=cols)
    return fits


# ------------------------------------------------------------ every output at once
class EveryOutput:
    """A segment that keeps every output of its answers: ``(rows,)``, or ``(rows, k)``.

    Its result takes the shape of the first answers folded, so the plan
    needs not know how many outputs the model has.
    """

    n_rows: int
    result: Any

    def _fold(self, start, stop, answers):
        if self.result is None:
            self.result = np.zeros((self.n_rows,) + np.shape(answers)[1:])
        super()._fold(start, stop, answers)  # type: ignore[misc]


def run_every_output(model, plan, options, *, desc):
    """Run the one plan of every output of ``model`` (its segments :class:`EveryOutput`).

    LIME's surrogates of every output read the same samples, distances and
    weights, so one plan draws them, keeps the model's ``(rows, k)`` answers
    and fits the outputs together: all outputs cost the model rows of one.
    """
    run(model, [plan], options, desc=desc)
    return plan


def output_names(model) -> list:
    """The name of each explained output (one for a single-output model)."""
    return list(model.outputs) if model.n_outputs > 1 else [model.output_name]


def surrogate_attributions(subject, fits, *, prediction, diagnostics=None, **details):
    """The Attributions of LIME fits (one per explained row) over ``subject``'s features.

    ``details`` are the :class:`SurrogateBlock` fields beyond the fits' own
    figures (``interpretable``, ``kernel_width``, ``num_samples``, ...).
    """
    intercept = np.array([f.intercept for f in fits])
    block = SurrogateBlock(intercept=intercept, score=np.array([f.score for f in fits]),
                           score_holdout=np.array([f.score_holdout for f in fits]),
                           local_prediction=np.array([f.local_prediction for f in fits]),
                           **details)
    return build(subject, values=np.array([f.coef for f in fits]), base_values=intercept,
                 prediction=prediction, method="lime", surrogate=block,
                 diagnostics=diagnostics)
