r"""LIME's local surrogate: proximity kernel, feature selection and the weighted ridge fit.

Every LIME variant (tables, text, images) ends the same way: perturbed
samples in an interpretable representation :math:`z \in \mathbb R^{S \times p}`
(row 0 the explained instance), the model's answers :math:`y`, and proximity
weights :math:`\pi`.  The surrogate chooses at most ``k`` features and fits

.. math:: \min_{b, \beta} \sum_s \pi_s (y_s - b - z_s^\top \beta)^2
          + \alpha \lVert \beta \rVert^2, \qquad \alpha = 1,

by the ridge's normal equations on the weight-centred data (as scikit-learn's
Ridge solves them; ``lars_path`` for the lasso path).  Ribeiro, Singh &
Guestrin (2016), and the ``lime`` package's defaults, which this module
follows so the two can be compared.

A model of several outputs is answered once per sample with all of them, and
their surrogates share the samples, distances and weights: each output
selects its own features, and outputs with the same features are fit by one
solve with a right-hand side per output (:func:`fit_outputs`).  Many
neighbourhoods (the rows of a table) are fit together in batched linear
algebra (:func:`fit_many`).
"""

from __future__ import annotations

import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .._validation import (InvalidParameterError, ModellensWarning, check_choice, check_int,
                           check_positive_float)
from ..engine import run
from ._blocks import SurrogateBlock
from .result import build

__all__ = ["surrogate_attributions", "exponential_kernel", "SELECTIONS", "DEFAULT_NUM_FEATURES",
           "LocalFit", "fit_outputs", "fit_many", "choose_selection", "warn_if_shrunk",
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

    Batched: ``Z`` ``(B, S, q)``, ``Y`` ``(B, S, K)`` (one column per output) and
    ``w`` ``(B, S)`` hold ``B`` problems, each on samples of its own.  Returns
    ``(Zc, Yc, z_mean, y_mean)``, the means ``(B, q)`` and ``(B, K)``.
    """
    total = w.sum(axis=1)[:, None]
    z_mean = (w[:, None, :] @ Z)[:, 0] / total
    y_mean = (w[:, None, :] @ Y)[:, 0] / total
    sw = np.sqrt(w)[..., None]
    return (Z - z_mean[:, None]) * sw, (Y - y_mean[:, None]) * sw, z_mean, y_mean


class _Ridge(NamedTuple):
    """Weighted ridge fits of ``B`` problems (see :func:`_ridge`)."""

    coef: np.ndarray  # (B, q, K)
    intercept: np.ndarray  # (B, K)
    centred: np.ndarray  # (B, S, q): Zc of _centred
    gram: np.ndarray  # (B, q, q): Zc' Zc + alpha I
    spread: np.ndarray  # (B, q): the weighted spread of each column, Zc' Zc's diagonal


def _ridge(Z, Y, w, alpha) -> _Ridge:
    r"""Weighted ridge with an unpenalised intercept, of ``B`` problems at once.

    The intercept drops out on the weight-centred data (:func:`_centred`), so
    each problem solves :math:`(Z_c^\top Z_c + \alpha I)\beta = Z_c^\top Y_c`
    (scikit-learn's ``ridge_regression``), every output a right-hand side, all
    problems in one batched solve.  ``alpha > 0`` keeps every system regular.
    """
    B, _, q = Z.shape
    Zc, Yc, z_mean, y_mean = _centred(Z, Y, w)
    Zt = Zc.transpose(0, 2, 1)
    gram = Zt @ Zc
    spread = np.diagonal(gram, axis1=1, axis2=2).copy()
    diag = np.arange(q)
    gram[:, diag, diag] += alpha
    coef = np.linalg.solve(gram, Zt @ Yc) if q else np.zeros((B, 0, Y.shape[2]))
    intercept = y_mean - (z_mean[:, None, :] @ coef)[:, 0]
    return _Ridge(coef, intercept, Zc, gram, spread)


def _column_scales(Y) -> np.ndarray:
    """Per column of ``Y`` (the samples on axis -2), the power of two that brings its
    largest value near 1.

    R^2 does not depend on the scale of ``y``, but its sums of squares overflow to
    inf / inf = NaN for predictions beyond about 1e154.  A power of two scales
    exactly, so every other R^2 keeps its last digit.
    """
    peak = np.max(np.abs(Y), axis=-2, initial=0.0)
    return np.where((peak > 0) & np.isfinite(peak), -np.frexp(peak)[1], 0)


def _r2_columns(Y, fitted, w, *, resid=None) -> np.ndarray:
    """Weighted R^2 of each column ``(B, K)``, as scikit-learn's ``r2_score`` (1 for a
    perfect fit of a constant); ``resid`` replaces ``Y - fitted`` (the held-out residuals).
    ``Y`` and ``fitted`` ``(B, S, K)``, ``w`` ``(B, S)``."""
    e = _column_scales(Y)[:, None, :]
    Ys = np.ldexp(Y, e)
    rs = np.ldexp(Y - fitted if resid is None else resid, e)
    wr = w[:, None, :]
    unexplained = (wr @ rs ** 2)[:, 0]
    mean = (wr @ Ys)[:, 0] / w.sum(axis=1)[:, None]
    total = (wr @ (Ys - mean[:, None]) ** 2)[:, 0]
    # a constant: fit exactly (weighted), or its held-out residuals all near 0
    exact = unexplained <= 0 if resid is None else np.all(np.isclose(resid, 0), axis=1)
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
    Zc, Yc, _, _ = _centred(Z[None], np.ldexp(Y, _column_scales(Y))[None], w[None])
    G = Zc[0].T @ Zc[0]
    B = Zc[0].T @ Yc[0]
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
    """Per problem and output, the ``k`` largest ``|coef_j * z0_j|`` of a lightly
    penalised fit on all features (one batched fit for every problem and output)."""
    coef = _ridge(Z, Y, w, RANKING_ALPHA).coef
    return [[np.sort(np.argsort(-np.abs(coef[b, :, c] * z0[b]), kind="stable")[:k])
             for c in range(Y.shape[2])] for b in range(Z.shape[0])]


def _lasso_path(Z, y, w, k):
    """The last point of the weighted lasso path with at most ``k`` non-zero weights."""
    from sklearn.linear_model import lars_path

    Zc, yc, _, _ = _centred(Z[None], y[None, :, None], w[None])
    _, _, coefs = lars_path(Zc[0], yc[0, :, 0], method="lasso")
    used = np.arange(Z.shape[1])
    for i in range(coefs.shape[1] - 1, 0, -1):
        used = np.flatnonzero(coefs[:, i])
        if used.size <= k:
            break
    return used


class _Surrogates(NamedTuple):
    """The final ridge fits of ``B`` problems: per output ``(B, K)``, per column ``(B, q, K)``."""

    coef: np.ndarray
    intercept: np.ndarray
    score: np.ndarray
    score_holdout: np.ndarray
    local_prediction: np.ndarray
    shrinkage: np.ndarray  # (B,)


def _surrogates(Z, Y, w, z0, alpha) -> _Surrogates:
    r"""The ridge fits on the selected columns ``Z`` ``(B, S, q)`` and their figures.

    The held-out score is the leave-one-out weighted R^2 (PRESS), without
    refitting: holding out sample :math:`s` changes its residual to
    :math:`e_s / (1 - h_s)`, an exact identity of penalised least squares, with
    the leverage :math:`h_s = \pi_s \tilde z_s^\top G^{-1} \tilde z_s`,
    :math:`\tilde z = (1, z)` and :math:`G = \tilde Z^\top \Pi \tilde Z + \alpha I'`
    (the intercept unpenalised).  Eliminating the intercept from :math:`G`
    leaves :math:`h_s = \pi_s / \sum \pi + z_{c,s}^\top (Z_c^\top Z_c + \alpha I)^{-1}
    z_{c,s}` on the weight-centred rows :math:`z_c` (:func:`_centred`): the
    ridge's own system, which every output shares.  The shrinkage is the smallest
    :math:`S_j / (S_j + \alpha)` over columns of spread :math:`S_j > 0`.
    """
    fit = _ridge(Z, Y, w, alpha)
    fitted = Z @ fit.coef + fit.intercept[:, None, :]
    h = w / w.sum(axis=1)[:, None]
    if Z.shape[2]:
        # the inverse of the small system, then one product: a solve with S right-hand
        # sides per problem took 7 times longer
        h = h + np.einsum("bsi,bsi->bs", fit.centred @ np.linalg.inv(fit.gram), fit.centred)
    resid = (Y - fitted) / np.maximum(1.0 - h, 1e-12)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(fit.spread > 0, fit.spread / (fit.spread + alpha), np.inf)
    shrinkage = ratio.min(axis=1, initial=np.inf)
    return _Surrogates(
        fit.coef, fit.intercept, _r2_columns(Y, fitted, w),
        _r2_columns(Y, fitted, w, resid=resid),
        (z0[:, None, :] @ fit.coef)[:, 0] + fit.intercept,
        np.where(np.isfinite(shrinkage), shrinkage, 1.0))



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
    with a right-hand side each.  Column ``c``'s fit equals the fit of
    ``Y[:, [c]]`` alone.  ``Z`` is ``(S, p)`` (row 0 the instance), ``z0`` the
    instance's representation; each output selects at most ``k`` features
    with ``method`` and fits the weighted ridge on them.  One problem of
    :func:`fit_many`.
    """
    return fit_many(np.asarray(Z)[None], np.asarray(Y)[None], np.asarray(w)[None],
                    np.asarray(z0)[None], k, method)[0]


def fit_many(Z, Y, w, z0, k: int, method: str) -> list[list[LocalFit]]:
    """The surrogates of ``B`` neighbourhoods at once: ``[fits of problem b (one per output)]``.

    ``Z`` ``(B, S, p)``, ``Y`` ``(B, S, K)``, ``w`` ``(B, S)`` and ``z0``
    ``(B, p)``: each problem fit as :func:`fit_outputs` fits one, with the
    selection's ranking fit and the final ridge fits (and their scores) of
    every problem in batched linear algebra, so many small fits cost a few
    array operations instead of a Python round of each per row.  Problem
    ``b``'s fits do not depend on the other problems.
    """
    from sklearn import config_context

    # The inputs are ours and checked: scikit-learn's per-call validation (lars_path) would
    # cost more than the small fits themselves.  Products of a tall, narrow matrix gain
    # nothing from BLAS threads, and on a busy machine waiting for them took 50 times
    # longer.  (scikit-learn's config is thread-local; the BLAS limit is not, see
    # _one_blas_thread)
    with config_context(skip_parameter_validation=True, assume_finite=True), \
            _one_blas_thread():
        Z, Y, w, z0 = (np.asarray(a, dtype=np.float64) for a in (Z, Y, w, z0))
        return _fit_many(Z, Y, w, z0, k, method)


def _fit_many(Z, Y, w, z0, k, method):
    method = choose_selection(method, k)
    B, _, p = Z.shape
    K = Y.shape[2]
    if method == "none" or k >= p and method != "lasso_path":
        used = [[np.arange(p)] * K] * B
    elif method == "forward":
        used = [_forward(Z[b], Y[b], w[b], k) for b in range(B)]
    elif method == "highest_weights":
        used = _highest_weights(Z, Y, w, z0, k)
    else:
        used = [[_lasso_path(Z[b], Y[b, :, c], w[b], k) for c in range(K)] for b in range(B)]
    fits: list[list] = [[None] * K for _ in range(B)]
    # one problem per neighbourhood and set of selected features; problems of as many
    # features are fit together, each on its own columns
    by_size: dict[int, list] = {}
    for b in range(B):
        for cols, outs in _alike(used[b]):
            by_size.setdefault(len(cols), []).append((b, cols, outs))
    for q, problems in by_size.items():
        rows = np.array([b for b, _, _ in problems], dtype=np.intp)
        cols = np.array([c for _, c, _ in problems], dtype=np.intp).reshape(len(problems), q)
        if q == p and np.array_equal(rows, np.arange(B)):
            out = _surrogates(Z, Y, w, z0, RIDGE_ALPHA)  # every feature: no gathered copy
        else:
            out = _surrogates(np.take_along_axis(Z[rows], cols[:, None, :], axis=2), Y[rows],
                              w[rows], np.take_along_axis(z0[rows], cols, axis=1), RIDGE_ALPHA)
        for t, (b, chosen, outs) in enumerate(problems):
            for c in outs:
                coef = np.zeros(p)
                coef[cols[t]] = out.coef[t, :, c]
                fits[b][c] = LocalFit(
                    shrinkage=float(out.shrinkage[t]), coef=coef,
                    intercept=float(out.intercept[t, c]), score=float(out.score[t, c]),
                    score_holdout=float(out.score_holdout[t, c]),
                    local_prediction=float(out.local_prediction[t, c]),
                    used=np.array(chosen, dtype=np.intp))
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
