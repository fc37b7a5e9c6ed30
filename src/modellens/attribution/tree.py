r"""TreeSHAP: exact Shapley values of tree ensembles, from the trees themselves.

Two games, the two questions one can ask of a tree model:

* **path-dependent** (no background; Lundberg et al. 2020): the value of a
  coalition :math:`S` is the tree's expectation when the features outside
  :math:`S` are unknown and a split on one of them sends the row down both
  sides in proportion to the training data that went each way (the covers).
  It answers "how did each feature move the prediction away from the
  average training prediction, given how the model itself splits the
  training data?"; it follows the model's view of the correlations among
  features, and needs no data.
* **interventional** (a background): the value of :math:`S` is the mean
  prediction when the features outside :math:`S` take each background row's
  values, the value function of the model-agnostic algorithms of
  :func:`modellens.shapley`, whose ``algorithm="exact"`` it equals to float
  rounding.  It answers "how much does setting feature :math:`j` to this
  row's value change the prediction, against this background?".

Both are computed on the model's raw output: the prediction of a regressor,
the log-odds (margin) of a boosted classifier, the class probability of a
random forest classifier.  Values on the probability scale of a boosted
classifier are the interventional values of ``predict_proba``: call
:func:`modellens.shapley` with ``algorithm="exact"`` / ``"permutation"`` /
``"kernel"`` (they evaluate the model and are slower).
"""

from __future__ import annotations

import numba
import numpy as np

from .._validation import InvalidParameterError
from ..models import _tree_kernels as K
from ..models._trees import TreeEnsemble
from ._games import Estimate, TreeGame

__all__ = ["TreePaths", "tree_values", "TreeEstimator"]

#: Most float64 entries of the per-leaf tables (FastTreeSHAP-style precomputation).
TABLE_BUDGET = 2 ** 24
#: Rows explained together, tree by tree, so that each tree's tables stay in cache.
ROW_BLOCK = 32


class TreePaths:
    """The leaves of a one-output :class:`TreeEnsemble` with their paths and features."""

    def __init__(self, ens: TreeEnsemble):
        if ens.n_outputs != 1:
            raise ValueError("select one output first")
        self.ens = ens
        (self.leaf_node, self.path_off, self.path_node, self.path_left, self.path_slot,
         self.feat_off, self.feat_id, self.feat_z) = K.leaf_paths(
            ens.left, ens.right, ens.feature, ens.cover, ens.roots)
        self.leaf_value = np.ascontiguousarray(ens.value[self.leaf_node, 0])
        self.p = np.diff(self.feat_off)
        self.p_max = int(self.p.max()) if len(self.p) else 0
        if self.p_max > K.MAX_PATH_FEATURES:
            raise InvalidParameterError(
                f"a path of the model splits on {self.p_max} distinct features; TreeSHAP here "
                f"handles at most {K.MAX_PATH_FEATURES}. Use algorithm='permutation' or "
                "'kernel'.")
        self.W = K.shapley_weights(max(self.p_max, 1))
        self.nodes = (ens.left, ens.feature, ens.threshold, ens.default_left, ens.missing,
                      ens.cat_left)
        self.paths = (self.path_off, self.path_node, self.path_left, self.path_slot)

    def table_offsets(self, n_rows: int) -> np.ndarray:
        """Offsets of the leaves that get a table of all masks (-1: computed per row).

        A leaf with ``p`` features gets one when its ``2**p`` masks are no more
        than the rows to explain and the tables fit :data:`TABLE_BUDGET`.
        """
        sizes = (2.0 ** self.p) * self.p
        order = np.argsort(self.p, kind="stable")
        cum = np.cumsum(sizes[order])
        ok = (2.0 ** self.p[order] <= max(n_rows, 1)) & (cum <= TABLE_BUDGET)
        # keep a prefix in order of p, so small leaves are tabled first
        n_ok = int(np.argmin(ok)) if not ok.all() else len(ok)
        chosen = np.zeros(len(self.p), bool)
        chosen[order[:n_ok]] = True
        off = np.full(len(self.p), -1, np.int64)
        sz = np.where(chosen, sizes, 0).astype(np.int64)
        starts = np.concatenate([[0], np.cumsum(sz)[:-1]])
        off[chosen] = starts[chosen]
        return off

    def expected_value(self) -> float:
        return float(self.ens.base[0] + K.expected_leaf_value(self.leaf_value, self.feat_off,
                                                              self.feat_z))

    def path_dependent(self, X, *, method="auto") -> np.ndarray:
        """Path-dependent values: per-leaf tables when every leaf gets one, else linear.

        ``method``: ``"tables"`` (FastTreeSHAP-style: O(depth + p) per leaf and
        row once the tables are built), ``"linear"`` (Gauss-Legendre form of
        Linear TreeSHAP: O(nodes x depth / 2) per tree and row, no tables) or
        ``"auto"``.
        """
        off = self.table_offsets(len(X))
        if method == "tables" or (method == "auto" and np.all(off >= 0)):
            table = K.pd_tables(self.leaf_value, self.feat_off, self.feat_z, off, self.W)
            none = np.zeros(0, np.int64)
            return self._leaf_values(X, off, table, none.astype(np.uint64), none * 1.0, none,
                                     np.zeros((1, 1)), 1.0)
        ens = self.ens
        edges = K.tree_edges(ens.left, ens.right, ens.feature, ens.cover, ens.roots)
        t_nodes, t_weights = K.gauss_nodes(max(self.p_max - 1, 0))
        return K.pd_values_linear(X, ens.left, ens.right, ens.feature, ens.threshold,
                                  ens.default_left, ens.missing, ens.cat_left,
                                  np.ascontiguousarray(ens.value[:, 0]), ens.roots, *edges,
                                  t_nodes, t_weights, K.n_blocks(len(X)))

    def interactions(self, X, phi) -> np.ndarray:
        W2 = np.zeros_like(self.W)
        # W2[p, s] = s! (p - s - 2)! / (p - 1)!, the Shapley weights of p - 1 players
        W2[2:, :] = self.W[1:-1, :]
        return K.pd_interactions(X, *self.nodes, self.leaf_value, *self.paths, self.feat_off,
                                 self.feat_id, self.feat_z, self.W, W2, phi)

    def interventional(self, X, B) -> np.ndarray:
        masks = K.row_masks(B, *self.nodes, *self.paths, self.feat_off)  # (m, L)
        L = masks.shape[1]
        # distinct background masks of each leaf, with their counts
        srt = np.sort(masks, axis=0)
        new = np.ones_like(srt, dtype=bool)
        new[1:] = srt[1:] != srt[:-1]
        cols = np.broadcast_to(np.arange(L), srt.shape)
        keep_t = new.T
        bg_masks = srt.T[keep_t]
        leaf_of = cols.T[keep_t]
        starts = np.flatnonzero(keep_t.ravel())
        ends = np.concatenate([starts[1:], [srt.size]])
        # a run never crosses a leaf: each leaf's column starts with new=True
        bg_counts = (ends - starts).astype(np.float64)
        bg_off = np.searchsorted(leaf_of, np.arange(L + 1))
        # C[u, w] = (u - 1)! w! / (u + w)!: the Shapley weight W[u + w, w]
        C = np.zeros((self.p_max + 2, self.p_max + 2))
        for u in range(1, self.p_max + 1):
            w = np.arange(self.p_max + 1 - u)
            C[u, w] = self.W[u + w, w]
        scale = 1.0 / len(B)
        off = self.table_offsets(len(X))
        table = K.iv_tables(self.leaf_value, self.feat_off, bg_masks, bg_counts, bg_off, off,
                            C, scale)
        return self._leaf_values(X, off, table, bg_masks, bg_counts, bg_off, C, scale)

    def _leaf_values(self, X, off, table, bg_masks, bg_counts, bg_off, C, scale):
        leaf_roots = np.searchsorted(self.leaf_node, self.ens.roots).astype(np.int64)
        return K.leaf_values(X, *self.nodes, self.leaf_value, *self.paths, self.feat_off,
                             self.feat_id, self.feat_z, off, table, self.W, bg_masks, bg_counts,
                             bg_off, C, scale, leaf_roots, self.ens.roots, ROW_BLOCK)


def tree_values(ens: TreeEnsemble, X, background=None, *, interactions=False):
    """TreeSHAP of a one-output ensemble on raw rows ``X``.

    Returns ``(values, base_value, raw_prediction, interaction_values or None)``.
    """
    Xc = np.ascontiguousarray(ens.cast(X))
    paths = TreePaths(ens)
    fx = ens.predict_raw(Xc)[:, 0]
    if background is None:
        values = paths.path_dependent(Xc)
        base = paths.expected_value()
        inter = paths.interactions(Xc, values) if interactions else None
    else:
        if interactions:
            raise InvalidParameterError(
                "interactions=True is computed for the path-dependent game only; leave "
                "background= out (background=None) to get tree interaction values.")
        Bc = np.ascontiguousarray(ens.cast(background))
        values = paths.interventional(Xc, Bc)
        base = float(ens.predict_raw(Bc)[:, 0].mean())
        inter = None
    return values, base, fx, inter


# ---------------------------------------------------------------------- ml.shapley's estimator
class TreeEstimator:
    """TreeSHAP on a :class:`~._games.TreeGame`: the trees answer, no model rows.

    ``n_jobs`` sets numba's threads for this call.  ``numba.set_num_threads``
    is thread-local (each Python thread has its own mask), so setting and
    restoring it here changes no other thread's count and two threads
    explaining trees at once do not race.
    """

    segments = ()
    n_coalitions = 0
    dof = None

    def __init__(self, game, *, interactions: bool = False, n_jobs: int | None = None):
        if not isinstance(game, TreeGame):
            raise InvalidParameterError("algorithm='tree' explains tree ensembles only.")
        self.interactions, self.n_jobs = bool(interactions), n_jobs

    def estimate(self, game) -> Estimate:
        args = (game.ensemble, game.X, game.background)
        if self.n_jobs is None:
            values, base, fx, inter = tree_values(*args, interactions=self.interactions)
        else:
            before = numba.get_num_threads()
            numba.set_num_threads(max(1, min(int(self.n_jobs), numba.config.NUMBA_NUM_THREADS)))
            try:
                values, base, fx, inter = tree_values(*args, interactions=self.interactions)
            finally:
                numba.set_num_threads(before)
        return Estimate(values, None, base, fx, inter)
