"""First-order ALE of a tree ensemble from its trees: the local effects with no model rows
beyond the agreement check's (``extra["n_model_rows"]`` counts them).

A point in bin ``k`` of a binned feature ``j`` contributes the local effect
:math:`f(z_k, x_{-j}) - f(z_{k-1}, x_{-j})`; a point at level ``t`` of a level
feature the steps :math:`f(v_{t+1}, x_{-j}) - f(v_t, x_{-j})` and
:math:`f(v_t, x_{-j}) - f(v_{t-1}, x_{-j})`.  Each is a two-point ICE curve of
the point on a grid of its own (its bin's edges, the levels beside its own),
which the trees give exactly (:func:`modellens.trees.ice_margins` with a grid
per row): one walk of each tree per point serves every feature, each grid
value reaching the leaf a prediction of the changed row reaches (NaN, zero
and category routing included); the model's link then applies per point and
grid value (:func:`~._tree_ice.respond`).  The bins' statistics, the
accumulation and the band are ALE's own (``FeaturePlan.take_local``), so the
curve is the model-row curve up to rounding.

**When** (:func:`tree_ale`, in memory, first-order axes; pairs keep their
model rows).  The trees stand in when (1) the request's first-order model rows
number at least ``MIN_MODEL_ROWS`` (below, the model's own time is small and
the kernel's first use compiles for seconds), (2) the trees are read, fit the
data and answer as the model does on its first rows (as for PD,
:func:`~._tree_ice.trusted_trees`; else the reason is in
``extra["trees_refused"]``), and (3) their walk is cheaper than the model rows:
a point costs one path per tree plus, for each asked feature a tree splits on,
at most two paths below its first split, so about ``n (1 + 2 h)`` predictions'
worth for ``n`` points and ``h`` the asked features a tree splits on (mean
over trees, an upper bound of those on a path), against the ``~2 n`` model
rows each feature costs.
"""

from __future__ import annotations

import numpy as np

from ..engine import Plan
from ._ale_plans import FeaturePlan
from ..trees import RESPONSE_CHECK_ROWS
from ._tree_ice import answers, respond, trusted_trees

__all__ = ["EVALUATED_BY_TREES", "MIN_MODEL_ROWS", "TreeALE", "tree_ale"]

#: ``Effect.extra["evaluated"]`` of local effects the trees gave.
EVALUATED_BY_TREES = (f"trees (exact local effects, no model rows beyond the "
                      f"{RESPONSE_CHECK_ROWS}-row agreement check)")
#: First-order model rows below which the model evaluates them (see the module's notes).
MIN_MODEL_ROWS = 50_000


def tree_ale(request, axes):
    """A :class:`TreeALE` for the first-order ``axes`` of an in-memory ALE request, a
    :class:`Refused` saying why the trees cannot serve, or None where they are not tried
    (not a tree model, few model rows, or the model rows are cheaper)."""
    from ..models import tree_ensemble_name

    if not axes or tree_ensemble_name(request.raw_model) is None:
        return None
    base = request.dataset.values
    model_rows = sum(_model_rows(ax) for ax in axes)
    if any(not ax.binned for ax in axes):
        model_rows += base.shape[0]  # the level features' predictions at the data
    if model_rows < MIN_MODEL_ROWS:
        return None
    trusted = trusted_trees(request, base, "ale")
    if isinstance(trusted, str):
        return Refused(trusted)
    if _walk_rows(base.shape[0], trusted[0], axes) >= model_rows:
        return None  # the walk would cost about as much as the model rows
    outputs = request.model.outputs if request.model.n_outputs > 1 else None
    ens, response = trusted
    return TreeALE(ens, response, base, axes, request.dataset, outputs)


def _model_rows(axis):
    """The model rows of one first-order axis (``FeaturePlan``'s segment)."""
    u = np.asarray(axis.unit, dtype=np.intp)
    if axis.binned:
        return 2 * u.size
    return int(np.count_nonzero(u < axis.grid.size - 1) + np.count_nonzero(u > 0))


def _walk_rows(n, ens, axes) -> float:
    """The walk's cost for ``n`` points, in predictions of the model (see the notes)."""
    return n * (1 + 2 * _asked_splits(ens, axes))


def _asked_splits(ens, axes) -> float:
    """The mean over trees of the asked features each splits on."""
    T = len(ens.roots) - 1
    if T == 0:
        return 0.0
    asked = np.zeros(int(ens.feature.max(initial=0)) + 1, bool)
    asked[[ax.j for ax in axes if ax.j < asked.size]] = True
    tree_of = np.repeat(np.arange(T), np.diff(ens.roots))
    inner = ens.left >= 0
    f = np.where(inner, ens.feature, 0)
    hit = inner & asked[f]
    return np.unique(tree_of[hit] * asked.size + f[hit]).size / T


class _Wrapped(Plan):
    """A first-order plan whose effect says how its local effects were evaluated."""

    plan: FeaturePlan
    extra: dict

    def reduce(self):
        effect = self.plan.reduce()
        effect.extra.update(self.extra)
        return effect


class Refused:
    """Trees asked and refused: the plans run on model rows, their effects saying why."""

    def __init__(self, why: str):
        self.why = why

    def plans(self, plans, model):
        out = []
        for plan in plans:
            if isinstance(plan, FeaturePlan):
                wrapped = _Wrapped()
                wrapped.plan, wrapped.extra = plan, {"evaluated": "model rows",
                                                     "trees_refused": self.why}
                wrapped.segments, wrapped.shared_rows = plan.segments, plan.shared_rows
                plan = wrapped
            out.append(plan)
        return out


class _TreeALEPlan(_Wrapped):
    """A first-order plan whose local effects the trees give: no model rows (but the
    agreement check's, the request's)."""

    def __init__(self, plan, trees, k, c):
        self.plan, self.trees, self.k, self.c = plan, trees, k, c
        self.extra = {"evaluated": EVALUATED_BY_TREES}

    def reduce(self):
        self.plan.take_local(self.trees.local(self.k, self.c))
        return super().reduce()


class TreeALE:
    """The local effects of first-order ALE axes from the trees, for every output.

    Parameters
    ----------
    ens : TreeEnsemble
        Every output column of the model (a softmax needs all of them).
    response : tuple
        ``(kind, columns)`` of the explained outputs (see :class:`~._tree_ice.TreeICE`).
    base : ndarray of shape (n, d)
        The encoded data rows (ALE's points).
    axes : list of Axis
        The request's first-order axes.
    dataset : Dataset
        The rows' schema (categorical codes are mapped to the model's).
    outputs : list or None
        The wrapped model's output names (None: one output).
    """

    def __init__(self, ens, response, base, axes, dataset, outputs):
        self.ens, self.response, self.base, self.dataset = ens, response, base, dataset
        self.axes, self.outputs = list(axes), outputs
        self._steps: dict | None = None

    def plans(self, plans, model):
        """``plans`` (one output's) with its first-order plans given by the trees."""
        c = 0 if self.outputs is None else self.outputs.index(model.output_name)
        out = []
        for plan in plans:
            if isinstance(plan, FeaturePlan) and plan.segments:
                k = next(i for i, ax in enumerate(self.axes) if ax is plan.axis)
                plan = _TreeALEPlan(plan, self, k, c)
            out.append(plan)
        return out

    def local(self, k, c) -> np.ndarray:
        """The local effects of axis ``k`` for output ``c``, in its plan's order."""
        if self._steps is None:
            self._steps = self._compute()
        axis, steps = self.axes[k], self._steps[k]
        if axis.binned:
            return steps[0][:, c]
        (fwd, _, _, _), (bwd, _, _, _) = axis.steps(axis.unit)
        # FeaturePlan's order: the steps up, then the steps down (signed: own minus below)
        return np.concatenate([steps[0][fwd, c], -steps[1][bwd, c]])

    def _compute(self) -> dict:
        """``{k: (up, down)}``: per point of axis ``k`` (its rows' order) and output, ``f``
        at the upper edge (the level above) minus ``f`` at the lower edge (its own level);
        level axes also ``f`` at the level below minus ``f`` at its own."""
        ens = self.ens
        X = np.ascontiguousarray(ens.cast(ens.encode(self.base, self.dataset.columns)))
        steps: dict = {}
        # one walk serves features apart: an axis of a feature already in a pass waits
        passes: list = []
        for k, axis in enumerate(self.axes):
            spot = next((p for p in passes if all(self.axes[q].j != axis.j for q in p)), None)
            if spot is None:
                passes.append([k])
            else:
                spot.append(k)
        own = None
        if any(not self.axes[k].binned for k in range(len(self.axes))):
            own = respond(ens, ens.predict_raw(X), self.response)
        for ks in passes:
            steps.update(self._pass(X, ks, own))
        return steps

    def _grids(self, X, ks):
        """Each point's two grid values per axis of ``ks`` (model codes), and their count."""
        from ..trees import IceGrids

        ens, n, d = self.ens, X.shape[0], X.shape[1]
        values = np.zeros((n, len(ks), 2))
        lengths = np.zeros((n, len(ks)), np.int64)
        slot = np.full(d, -1, np.int64)
        for f, k in enumerate(ks):
            axis = self.axes[k]
            full = np.zeros((axis.grid.size, d))
            full[:, axis.j] = axis.grid
            coded = ens.cast(ens.encode(full, self.dataset.columns))[:, axis.j]
            u = np.asarray(axis.unit, dtype=np.intp)
            if axis.binned:
                lo, hi = u, u + 1
            else:  # the levels beside the point's own (its own where there is none)
                lo, hi = np.minimum(u + 1, coded.size - 1), np.maximum(u - 1, 0)
            rows = axis.row_positions()
            values[rows, f, 0], values[rows, f, 1] = coded[lo], coded[hi]
            lengths[rows, f] = 2
            slot[axis.j] = f
        return IceGrids(values, lengths, slot)

    def _pass(self, X, ks, own) -> dict:
        """The steps of the axes ``ks`` (distinct features) from one walk of the trees."""
        n, n_out = X.shape[0], len(self.response[1])
        first = np.empty((n, len(ks), n_out))
        second = np.empty((n, len(ks), n_out))
        for lo, hi, answer in answers(self.ens, X, self._grids(X, ks), self.response):
            first[lo:hi], second[lo:hi] = answer[:, :, 0], answer[:, :, 1]  # (b, F, 2, n_out)
        out = {}
        for f, k in enumerate(ks):
            axis = self.axes[k]
            rows = axis.row_positions()
            if axis.binned:  # f at the upper edge minus f at the lower
                out[k] = (second[rows, f] - first[rows, f], None)
            else:  # f at the levels above and below minus f at the point's own
                out[k] = (first[rows, f] - own[rows], second[rows, f] - own[rows])
        return out
