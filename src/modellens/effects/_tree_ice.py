"""Exact PD and ICE of a tree ensemble over the data rows, from its trees (no model rows
beyond the agreement check's, on its first ``RESPONSE_CHECK_ROWS`` rows).

:func:`tree_ice` answers whether the trees can give the very curves the model
would give on the grid rows of a request (:func:`modellens.pdp` with
``method="auto"``), and if so a :class:`TreeICE` that computes them, every
asked feature and output from one walk of the trees per row
(:func:`modellens.trees.ice_margins`): the raw output at each grid value,
then the model's link (the logistic function, the softmax over every
class, or none) per row and grid value, so that the mean of the curves is
the partial dependence over the rows in the model's own response.

The route refuses (the caller falls back on model rows, and the result
says why in ``extra``) for what it cannot prove: a model the tree readers
do not read, data the trees do not split on as given, a response that is
not the raw output or its probabilities (a classifier's ``predict``, a
Poisson booster's exponential), a model whose outputs are known only from
its answers, and a model whose answers on a few data rows differ from the
trees' (a link the readers do not model, such as a LightGBM ``sigmoid``
parameter or a one-vs-all objective).  That check asks the model a few rows
(counted on the request's model seam, served or refused): every effect of a
request the trees were asked for says in ``extra["n_model_rows"]`` the rows the
model answered for it (:func:`count_model_rows`).
"""

from __future__ import annotations

import numpy as np

from ..trees import RESPONSE_CHECK_ROWS, respond

__all__ = ["EVALUATED_BY_TREES", "TreeICE", "tree_ice", "trusted_trees", "respond",
           "answers", "count_model_rows"]

#: ``Effect.extra["evaluated"]`` of a curve the trees gave.
EVALUATED_BY_TREES = (f"trees (exact ICE, no model rows beyond the {RESPONSE_CHECK_ROWS}-row "
                      "agreement check)")
#: Bytes of raw curves held at once (rows are walked in blocks of this size).
BLOCK_BYTES = 1 << 26
#: Grid rows (rows x grid points x features) below which the model evaluates them: it
#: does so in a fraction of a second, while the trees' kernel compiles for seconds on its
#: first use after installing (a first report of a small data set would wait for it).
MIN_GRID_ROWS = 200_000


class TreeICE:
    """The exact ICE curves of a request's 1-D features, for each of its outputs.

    Parameters
    ----------
    ens : TreeEnsemble
        Every output column of the model (a softmax needs all of them).
    response : tuple
        ``(kind, columns)`` (:func:`~modellens.trees.respond`): ``kind``
        ``"raw"`` (the raw output), ``"proba"`` (the link's probabilities) or
        ``"exp"`` (a log link's prediction); ``columns`` ``(column, sign)`` of
        each explained output.
    base : ndarray of shape (m, d)
        The encoded rows whose curves are asked.
    axes : dict
        Feature position -> its grid's encoded values.
    dataset : Dataset
        The rows' schema (categorical codes are mapped to the model's).
    """

    def __init__(self, ens, response, base, axes, dataset):
        self.ens, self.response, self.base, self.dataset = ens, response, base, dataset
        self.features = list(axes)
        self.axes = axes
        self._curves: list | None = None

    def curves(self, feature: int, output: int) -> np.ndarray:
        """ICE curves ``(m, G)`` of ``feature`` for output ``output``."""
        if self._curves is None:
            self._curves = self._compute()
        return self._curves[self.features.index(feature)][output]

    def _compute(self) -> list:
        from ..trees import IceGrids

        ens, dataset = self.ens, self.dataset
        X = np.ascontiguousarray(ens.cast(ens.encode(self.base, dataset.columns)))
        m, d, F = X.shape[0], X.shape[1], len(self.features)
        G = max(len(self.axes[j]) for j in self.features)
        values = np.zeros((F, G))
        slot = np.full(d, -1, np.int64)
        lengths = np.zeros(F, np.int64)
        for k, j in enumerate(self.features):
            grid = np.asarray(self.axes[j], dtype=np.float64)
            full = np.zeros((grid.size, d))
            full[:, j] = grid
            # a categorical grid is read in the model's codes, cast as the library casts
            values[k, :grid.size] = ens.cast(ens.encode(full, dataset.columns))[:, j]
            slot[j], lengths[k] = k, grid.size
        grids = IceGrids(values[None], lengths[None], slot)
        n_out = len(self.response[1])
        out = [[np.empty((m, lengths[k])) for _ in range(n_out)] for k in range(F)]
        for lo, hi, answer in answers(ens, X, grids, self.response):  # (b, F, G, n_out)
            for k in range(F):
                for c in range(n_out):
                    out[k][c][lo:hi] = answer[:, k, :lengths[k], c]
        return out


def answers(ens, X, grids, response):
    """Yield ``(lo, hi, answer)``: the explained outputs ``(hi - lo, F, G, n_out)`` of rows
    ``lo:hi`` of ``X`` at each grid value (the kernel's raw curves, then :func:`respond`),
    walking the rows in blocks of about ``BLOCK_BYTES`` of raw curves.

    ``grids`` (:class:`~modellens.trees.IceGrids`) hold one grid for every row (PD's
    ICE) or one per row (ALE's bin edges), which each block then takes its part of.
    """
    from ..trees import IceGrids, ice_margins, kernels

    value, tree_out = ens.traversal()
    n, K = X.shape[0], ens.n_outputs
    F, G = grids.values.shape[1], grids.values.shape[2]
    per_row = grids.values.shape[0] > 1
    kernel = kernels.sized(ice_margins, n)
    block = max(1, BLOCK_BYTES // (8 * F * G * max(K, len(response[1]))))
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        part = IceGrids(grids.values[lo:hi], grids.lengths[lo:hi], grids.slot) \
            if per_row else grids
        raw = kernel(X[lo:hi], ens.nodes, value, tree_out, K, ens.roots, part)
        yield lo, hi, respond(ens, raw + ens.base, response)


def tree_ice(request, features, axes, base):
    """A :class:`TreeICE` for the request's 1-D ``features``, or why the trees cannot serve.

    Parameters
    ----------
    request : Request
        The open request (its raw model, dataset and wrapped model).
    features : list
        The requested features (pairs are left to the model rows).
    axes : list
        ``pd_axes`` of each requested feature.
    base : ndarray of shape (m, d)
        The encoded rows of the curves.

    Returns
    -------
    TreeICE, str or None
        The curves' source, the reason the model rows are needed, or None where
        the trees are not tried (a model that is not a tree ensemble, fewer
        than ``MIN_GRID_ROWS`` grid rows).
    """
    from ..models import tree_ensemble_name

    if tree_ensemble_name(request.raw_model) is None:
        return None  # not a tree model: the model rows, as always
    single = {f: ax[0][0] for f, ax in zip(features, axes) if not isinstance(f, tuple)}
    if not single:
        return "2-D partial dependence is evaluated on model rows"
    if base.shape[0] * sum(len(g) for g in single.values()) < MIN_GRID_ROWS:
        return None  # few grid rows: the model's own time is small
    trusted = trusted_trees(request, base, "ice")
    if isinstance(trusted, str):
        return trusted
    ens, response = trusted
    return TreeICE(ens, response, base, single, request.dataset)


def count_model_rows(effects, request) -> None:
    """Set ``extra["n_model_rows"]`` of every effect of ``request``, whose trees were asked
    (served or refused): the rows its model answered, the agreement check's included."""
    n_rows = request.n_model_rows
    for effect in effects.values():
        effect.extra["n_model_rows"] = n_rows


def trusted_trees(request, base, method):
    """``(ens, response)``: the trees that may stand in for the request's model on rows
    like ``base`` (the route's answer, :func:`~modellens.trees.route`: read, fit for the
    data, their answers the model's response on its first rows), or why they may not (a
    str).  ``method``: the route's (``"ice"``, ``"ale"``)."""
    from ..trees import route

    answer = route(request.raw_model, request.dataset, request.X, method=method, rows=base,
                   request=request)
    if answer.ensemble is None:
        return str(answer.reason)
    return answer.ensemble, answer.response
