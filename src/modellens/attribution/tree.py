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

Without a background, the values come from one pass over each tree that
integrates each leaf's weighted-Banzhaf polynomial over :math:`t \in [0, 1]`
with Gauss-Legendre nodes (Quadrature-TreeSHAP, Wettenstein, Mitchell & Yu,
arXiv 2605.04497; exact, as the polynomial's degree is below the path's
length): O(L D) per tree and row for the values, the Banzhaf values at
:math:`t = 1/2`, and the interaction values in the same pass (see
:mod:`modellens.trees.kernels`).

With a background, the background enters once per tree, as the count of
its rows per leaf and per pattern of the leaf's path features they fail;
each explained row then combines its own pattern with those counts (a
table lookup per leaf).  The cost is of order ``n + m`` per tree for ``n``
explained and ``m`` background rows, not ``n * m``, so a whole training set
is a practical background.  The same counts give Banzhaf values
(``index="banzhaf"``) and interventional interaction values.

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
from ..engine import DEFAULT_CHUNK_BYTES
from ..models import kernel_threads
from ..trees import TreeEnsemble
from ..trees import kernels as K
from ._games import Estimate, TreeGame

__all__ = ["TreePaths", "tree_values", "TreeEstimator"]

#: Most float64 entries of the per-leaf value tables of one group of trees.
TABLE_BUDGET = 2 ** 24
#: Most float64 entries of the background count tables of one group of trees (all threads).
COUNT_BUDGET = 2 ** 24
#: Leaves of more features get no value table (their 2**p masks x p values).
TABLE_MAX_FEATURES = 16
#: Leaves of more features count the background's distinct masks instead of a dense table.
DENSE_MAX_FEATURES = 20
#: Leaves of more features than this get a dense count table (``2**p`` entries) only when
#: the background has as many rows: a table holds at most one nonzero count a row, and
#: a tree's tables are never split between groups, so without this a tree of a thousand
#: 20-feature leaves asked for 8 GiB whatever the background (one tree of a deep random
#: forest: 4 GiB, on 3 background rows).
DENSE_ANY_BACKGROUND = 10
#: Rows explained together, tree by tree, so that each tree's tables stay in cache.
ROW_BLOCK = 64
#: Fewest rows of a task when a few rows are cut into blocks for the threads.
MIN_ROW_BLOCK = 8
#: Background rows counted together, tree by tree.
BACKGROUND_BLOCK = 256
#: Most bytes of the path-dependent kernel's work arrays, all its tasks at once: the cap
#: of a chunk of model rows.  A deep tree of many value columns needs far more per row
#: than typical trees (``(depth + 1) x G x (columns + 1)`` floats), so its tasks take
#: fewer rows, then fewer threads run them (:meth:`TreePaths.pd_plan`).
WORK_BYTES = DEFAULT_CHUNK_BYTES
#: Values the tree kernels compute (``index=`` of :func:`modellens.shapley`).
INDICES = ("shapley", "banzhaf")

def output_groups(tree_out, n_col, k):
    """The trees in groups that feed disjoint outputs, as the kernels split their work:
    ``(off, trees, o_lo, o_hi)``, group ``q`` the trees ``trees[off[q]:off[q + 1]]``
    (ascending) feeding the outputs ``o_lo[q]:o_hi[q]``.

    A many-class booster's trees each feed their class: a group per class, so that
    a few rows still give every thread work.  A forest's trees (every class at
    once) and a single output are one group.
    """
    T = len(tree_out)
    if n_col == 1 and k > 1 and T:
        trees = np.argsort(tree_out, kind="stable").astype(np.int64)
        outs, first = np.unique(tree_out[trees], return_index=True)
        off = np.append(first, T).astype(np.int64)
        return off, trees, outs.astype(np.int64), outs.astype(np.int64) + 1
    return (np.array([0, T], np.int64), np.arange(T, dtype=np.int64), np.zeros(1, np.int64),
            np.full(1, k, np.int64))


def task_rows(n, block, n_groups):
    """Rows per task of a kernel split into row blocks and ``n_groups`` groups of trees:
    at most ``block``, the blocks of equal size, and at least one task per thread where
    the rows allow blocks of ``MIN_ROW_BLOCK`` (the rows are the kernels' inner loops)."""
    n_blk = -(-n // block)
    want = -(-numba.get_num_threads() // max(n_groups, 1))
    n_blk = max(n_blk, min(want, -(-n // MIN_ROW_BLOCK)), 1)
    return max(1, -(-n // n_blk))


def _factorial_ratio(a, b, c):
    """``a! b! / c!`` elementwise, through lgamma."""
    # imported here, not at the top: scipy.special costs ~0.5 s at ``import modellens``
    from scipy.special import gammaln

    return np.exp(gammaln(np.asarray(a) + 1.0) + gammaln(np.asarray(b) + 1.0)
                  - gammaln(np.asarray(c) + 1.0))


class TreePaths:
    """The leaves of a :class:`TreeEnsemble`: their paths, features and games.

    Every leaf is a product game over the distinct features of its path
    (see :mod:`modellens.trees.kernels`); a row enters a leaf's game
    only through the mask of those features whose splits it fails, found
    for all leaves of a tree in one preorder pass.  Every output of the
    ensemble (its value columns, :meth:`TreeEnsemble.select_outputs`) is
    computed in the same pass (:meth:`TreeEnsemble.traversal`); the values of
    an ensemble of several outputs have a last axis of outputs, those of one
    output none.
    """

    def __init__(self, ens: TreeEnsemble, players=None):
        self.ens = ens
        self.k = ens.n_outputs
        self.value, self.tree_out = ens.traversal()
        # players (the player of each column, groups=): the paths' factors are players, so
        # a leaf's factor of a group is "satisfies every split on the group's columns" (the
        # group joins or leaves as one); the splits still read their own columns
        feature = ens.feature if players is None else np.asarray(players, np.int64)[ens.feature]
        (self.order, self.node_slot, node_new, self.parent, self.depth, self.leaf_node,
         self.leaf_roots, self.feat_off, self.feat_id, self.feat_z, self.prev, self.edge_z,
         self.feat_depth) = K.root_layout(ens.left, ens.right, feature, ens.cover, ens.roots)
        self.leaf_of = np.full(len(ens.left), -1, np.int64)
        self.leaf_of[self.leaf_node] = np.arange(len(self.leaf_node))
        # twins: a right leaf whose left sibling is a leaf, split on a feature new to the path
        par = self.parent[self.leaf_node]
        has_par = par >= 0
        pp = np.where(has_par, par, 0)
        is_right = has_par & (ens.right[pp] == self.leaf_node)
        sib = np.where(is_right, self.leaf_of[ens.left[pp]], -1)
        twin_ok = is_right & (sib >= 0) & (node_new[pp] == 1)
        self.twin = np.where(twin_ok, sib, -1).astype(np.int64)
        self.twin_slot = np.where(twin_ok, self.node_slot[pp], 0).astype(np.int64)
        self.leaf_value = np.ascontiguousarray(self.value[self.leaf_node])
        self.p = np.diff(self.feat_off)
        self.p_max = int(self.p.max()) if len(self.p) else 0
        if self.p_max > K.MAX_PATH_FEATURES:  # (the layout lists one past the limit at most)
            raise InvalidParameterError(
                f"a path of the model splits on more than {K.MAX_PATH_FEATURES} distinct "
                f"features; TreeSHAP here handles at most {K.MAX_PATH_FEATURES}. Use "
                "algorithm='permutation' or 'kernel'.")
        self.W = K.shapley_weights(max(self.p_max, 1))
        self.nodes = ens.nodes
        # the trees as the kernels walk them, bundled once per ensemble and players
        self.lay = K.Layout(
            ens.roots, self.order, self.node_slot, self.parent, self.depth, self.leaf_node,
            self.leaf_roots, self.leaf_of, self.feat_off, self.feat_id, self.feat_z,
            self.feat_depth, self.prev, self.edge_z, self.twin, self.twin_slot, self.value,
            self.leaf_value, self.tree_out)
        self.split = output_groups(self.tree_out, self.value.shape[1], self.k)

    # ------------------------------------------------------------------ planning
    def plan(self, n_rows: int, n_background: int = 0, *, game: str = "path") -> dict:
        """How a request is computed: groups of trees, table sizes and counted work.

        ``game`` is ``"path"`` or ``"interventional"``.  Every figure is
        planned, not timed: the background's cost is ``background_node_visits``
        (one preorder pass per tree and background row) plus the count
        tables; each explained row costs ``row_node_visits`` / ``n_rows`` and
        one lookup (or one computed leaf game) per leaf.  Only leaves of more
        than ``DENSE_MAX_FEATURES`` features, or of more than ``DENSE_ANY_BACKGROUND``
        and more masks than background rows, pair explained rows with distinct
        background masks (``sparse_pairs``, at most rows x distinct masks).
        """
        iv = game == "interventional"
        p = self.p
        dense = (p <= DENSE_MAX_FEATURES) & ((p <= DENSE_ANY_BACKGROUND)
                                             | (2.0 ** p <= n_background))
        tabled = (p <= TABLE_MAX_FEATURES) & (2.0 ** p <= max(n_rows, 1))
        if iv:
            tabled &= dense
        # a table holds p values per mask (the unit game's for several value columns, which
        # scale it: every class of a forest shares one table), a merged partner's p after them
        merged = (self.twin >= 0) & tabled
        partner = np.full(len(p), -1, np.int64)
        partner[self.twin[merged]] = np.flatnonzero(merged)
        width = 1 + ((partner >= 0) & (self.value.shape[1] > 1))
        tab_sizes = np.where(tabled, (2 ** np.minimum(p, 62)) * p * width, 0)
        cnt_sizes = np.where(dense, 2 ** np.minimum(p, 62), 0) if iv else 0 * p
        big = ~dense if iv else np.zeros(len(p), bool)
        n_parts = self._n_parts(n_background)
        groups, start = [], 0
        acc_t = acc_c = acc_s = 0
        sizes = np.diff(self.ens.roots)
        for k in range(self.ens.n_trees):
            lo, hi = self.leaf_roots[k], self.leaf_roots[k + 1]
            t, c = int(tab_sizes[lo:hi].sum()), int(cnt_sizes[lo:hi].sum()) * n_parts
            sp = int(big[lo:hi].sum()) * n_background
            if k > start and (acc_t + t > TABLE_BUDGET or acc_c + c > COUNT_BUDGET
                              or acc_s + sp > COUNT_BUDGET):
                groups.append((start, k))
                start, acc_t, acc_c, acc_s = k, 0, 0, 0
            acc_t, acc_c, acc_s = acc_t + t, acc_c + c, acc_s + sp
        groups.append((start, self.ens.n_trees))
        tab_off = np.full(len(p), -1, np.int64)
        cnt_off = np.full(len(p), -1, np.int64)
        tab_sizes = np.where(merged, 0, tab_sizes)
        for lo, hi in groups:
            a, b = self.leaf_roots[lo], self.leaf_roots[hi]
            sizes_ab = tab_sizes[a:b]
            tab_off[a:b] = np.where(merged[a:b], -2,
                                    np.where(tabled[a:b], np.cumsum(sizes_ab) - sizes_ab, -1))
            if iv:
                c = cnt_sizes[a:b]
                cnt_off[a:b] = np.where(dense[a:b], np.cumsum(c) - c, -1)
        n_nodes = int(sizes.sum())
        return {
            "groups": groups, "tab_off": tab_off, "tab_sizes": tab_sizes, "cnt_off": cnt_off,
            "big": big, "partner": partner,
            "n_parts": n_parts,
            "row_node_visits": n_rows * n_nodes,
            "background_node_visits": n_background * n_nodes if iv else 0,
            "leaf_lookups": n_rows * int((tabled & ~merged).sum()),
            "leaf_games": n_rows * int((~tabled).sum()),
            "table_entries": max(int(tab_sizes[self.leaf_roots[lo]:self.leaf_roots[hi]].sum())
                                 for lo, hi in groups),
            "count_entries": max(int(np.sum(cnt_sizes[self.leaf_roots[lo]:
                                                      self.leaf_roots[hi]])) * n_parts
                                 for lo, hi in groups) if iv else 0,
            "sparse_pairs": n_rows * n_background * int(big.sum()),
        }

    @staticmethod
    def _n_parts(m):
        """Count tables filled at once: one per thread, fewer for small backgrounds."""
        return max(1, min(numba.get_num_threads(), m // BACKGROUND_BLOCK))

    def expected_value(self):
        """The path-dependent base value (a float; ``(k,)`` for several outputs)."""
        total = self.ens.base + K.expected_leaf_value(self.leaf_value, self.feat_off,
                                                      self.feat_z, self.leaf_roots,
                                                      self.tree_out, self.k)
        return float(total[0]) if self.k == 1 else total

    def _shaped(self, a):
        """One output's values without the output axis."""
        return a[..., 0] if self.k == 1 else a

    # ------------------------------------------------------------------ games
    def path_dependent(self, X, *, index="shapley", pairs=False):
        """Path-dependent values ``(n, d)`` by quadrature, and with ``pairs`` the SHAP
        interaction values ``(n, d, d)`` from the same pass (else None); ``(n, d, k)``
        and ``(n, d, d, k)`` for ``k`` outputs.

        Shapley values integrate each leaf's weighted Banzhaf polynomial over
        ``t`` in [0, 1] with ``ceil(p_max / 2)`` Gauss-Legendre nodes (exact);
        Banzhaf values read it at ``t = 1/2``.  See
        :func:`~modellens.trees.kernels.pd_quadrature`: O(nodes x G) per
        tree and row for the values, no tables.
        """
        n, d = X.shape
        t_nodes, t_weights = self._quadrature(index)
        k = self.k
        out = np.zeros((n, d, k))
        inter = np.zeros((n, d, d, k) if pairs else (0, 0, 0, 0))
        plan = self.pd_plan(n, d, index=index, pairs=pairs)
        with kernel_threads(plan["threads"]):
            plan["kernel"](np.ascontiguousarray(X.T), self.nodes, self.lay, t_nodes, t_weights,
                           plan["block"], out, inter, self.split)
        if not pairs:
            return self._shaped(out), None
        diag = np.arange(d)
        inter[:, diag, diag] = out - inter.sum(axis=2)
        return self._shaped(out), self._shaped(inter)

    def _quadrature(self, index):
        """Nodes and weights on [0, 1]: Gauss-Legendre's for Shapley values, 1/2 for Banzhaf."""
        if index == "banzhaf":
            return np.array([0.5]), np.array([1.0])
        return K.gauss_nodes(self.p_max)

    def pd_plan(self, n_rows: int, n_features: int, *, index="shapley", pairs=False) -> dict:
        """How :meth:`path_dependent` runs: its ``kernel`` (threaded or the serial twin),
        rows per task ``block``, ``threads``, and the ``bytes`` it allocates at its peak
        (:func:`~modellens.trees.kernels.treeshap_bytes`, every array counted).

        A task's work arrays hold ``block`` rows of the open path, ``(depth + 1) x G x
        (columns + 1)`` floats a row (:func:`~modellens.trees.kernels.pd_task_bytes`):
        tens of MiB for a tree at the depth cap.  The tasks at once (one per thread) keep
        to ``WORK_BYTES`` together: fewer rows a task, down to one, then fewer threads.
        Rows are independent, so neither changes a value.
        """
        n, d = n_rows, n_features
        G, c = len(self._quadrature(index)[0]), self.value.shape[1]
        D = int(self.depth.max()) if len(self.depth) else 0
        pf = self.p_max if pairs else 0
        kernel = K.sized(K.pd_quadrature, n, work=n * len(self.order))
        threads = numba.get_num_threads() if kernel is K.pd_quadrature else 1
        # the pairs' buffer (d, d, columns, block) also stays near a few MiB (in cache)
        block = ROW_BLOCK if not pairs else max(1, min(ROW_BLOCK, 2 ** 19 // max(d * d * c, 1)))
        fixed = K.pd_task_bytes(D, G, c, d, 0, pf)
        per_row = K.pd_task_bytes(D, G, c, d, 1, pf) - fixed
        block = max(1, min(block, (WORK_BYTES // threads - fixed) // per_row))
        threads = max(1, min(threads, WORK_BYTES // K.pd_task_bytes(D, G, c, d, block, pf)))
        n_groups = len(self.split[0]) - 1
        block = task_rows(n, block, n_groups)
        tasks = min(threads, -(-n // block) * n_groups)
        size = K.treeshap_bytes(
            len(self.order), len(self.leaf_node), D, d, self.k, block, rows=n,
            trees=self.ens.n_trees, leaf_depths=int(self.depth[self.leaf_node].sum()),
            path_features=self.p_max, quad=G, columns=c, tasks=tasks, pairs=pairs)
        return {"kernel": kernel, "block": block, "threads": threads, "bytes": size}

    def interventional(self, X, B, *, index="shapley") -> np.ndarray:
        """Interventional values against the background rows ``B`` (cast).

        Per group of trees, the background is counted once per leaf and mask
        of failed features (:func:`~modellens.trees.kernels.background_counts`),
        the leaves' tables are built from the counts, and the rows read them:
        O(n + m) per tree, never a (rows x background) or (background x
        leaves) array.
        """
        plan = self.plan(len(X), len(B), game="interventional")
        return self._shaped(self._values(X, plan, self._iv_weights(index), 1.0 / len(B), B))

    def interactions(self, X, phi, B) -> np.ndarray:
        """SHAP interaction values ``(n, d, d)`` (``(n, d, d, k)``) of the interventional
        game against the background ``B``; ``phi`` the Shapley values (path-dependent
        ones come from :meth:`path_dependent`)."""
        n, d = X.shape
        out = np.zeros((n, d, d, self.k))
        phi = phi.reshape(n, d, self.k)
        P = self.p_max + 2
        u, w = np.meshgrid(np.arange(P), np.arange(P), indexing="ij")
        with np.errstate(invalid="ignore", over="ignore"):
            I_UU = np.where(u >= 2, _factorial_ratio(u - 2, w, u + w - 1), 0.0)
            I_UW = np.where((u >= 1) & (w >= 1), _factorial_ratio(u - 1, w - 1, u + w - 1), 0.0)
            I_WW = np.where(w >= 2, _factorial_ratio(u, w - 2, u + w - 1), 0.0)
        plan = self.plan(0, len(B), game="interventional")
        BT = np.ascontiguousarray(B.T)
        for lo, hi in plan["groups"]:
            counts = self._background(B, BT, plan, lo, hi)
            K.interaction_values(X, self.nodes, self.lay, lo, hi, I_UU, I_UW, I_WW, 1.0 / len(B),
                                 counts, out)
        diag = np.arange(d)
        out[:, diag, diag] = 0.0
        out[:, diag, diag] = phi - out.sum(axis=2)
        return self._shaped(out)

    def _iv_weights(self, index):
        """``C[u, w]``: a leaf's value per background row for a feature only the row
        satisfies, with ``u`` such features and ``w`` the row fails (Shapley:
        ``(u - 1)! w! / (u + w)!``; Banzhaf: ``2**-(u + w - 1)``)."""
        P = self.p_max + 2
        C = np.zeros((P, P))
        for u in range(1, self.p_max + 1):
            w = np.arange(self.p_max + 1 - u)
            # the Shapley weight W[u + w, w]
            C[u, w] = self.W[u + w, w] if index == "shapley" else 0.5 ** (u + w - 1)
        return C

    def _background(self, B, BT, plan, lo, hi):
        """The background's counts for trees ``lo:hi`` (:class:`~modellens.trees.kernels.Counts`):
        dense tables and sparse masks.

        ``BT``: ``B`` transposed (contiguous features), as the counting reads it.
        """
        empty_i, empty_f = np.zeros(0, np.int64), np.zeros(0)
        sp_off = np.zeros(len(self.p) + 1, np.int64)
        cnt_off = plan["cnt_off"]
        if B is None:
            return K.Counts(empty_f, cnt_off, sp_off, empty_i, empty_f)
        a, b = self.leaf_roots[lo], self.leaf_roots[hi]
        c_off = plan["cnt_off"][a:b]
        size = int(max((c_off + 2 ** np.minimum(self.p[a:b], 62))[c_off >= 0], default=0))
        work = BT.shape[1] * int(self.ens.roots[hi] - self.ens.roots[lo])
        cnt = K.sized(K.background_counts, BT.shape[1], work=work)(
            BT, self.nodes, self.lay, lo, hi, cnt_off, size, plan["n_parts"], BACKGROUND_BLOCK,
            4 * numba.get_num_threads())
        big = np.flatnonzero(plan["big"][a:b]) + a
        if not len(big):
            return K.Counts(cnt, cnt_off, sp_off, empty_i, empty_f)
        column = np.full(len(self.p), -1, np.int64)
        column[big] = np.arange(len(big))
        masks = K.background_masks(B, self.nodes, self.lay, lo, hi, column, len(big))
        sp_mask, sp_cnt, sizes = [], [], np.zeros(len(self.p), np.int64)
        for j, l in enumerate(big):
            vals, counts = np.unique(masks[:, j], return_counts=True)
            sp_mask.append(vals)
            sp_cnt.append(counts.astype(np.float64))
            sizes[l] = len(vals)
        sp_off[1:] = np.cumsum(sizes)
        return K.Counts(cnt, cnt_off, sp_off, np.concatenate(sp_mask), np.concatenate(sp_cnt))

    def _values(self, X, plan, C, scale, B):
        out = np.zeros(X.shape + (self.k,))
        XT = np.ascontiguousarray(X.T)
        BT = None if B is None else np.ascontiguousarray(B.T)
        for lo, hi in plan["groups"]:
            counts = self._background(B, BT, plan, lo, hi)
            a, b = self.leaf_roots[lo], self.leaf_roots[hi]
            t_off = plan["tab_off"]
            size = int(max((t_off[a:b] + plan["tab_sizes"][a:b])[t_off[a:b] >= 0], default=0))
            table = K.sized(K.leaf_tables, size, limit=K.SERIAL_TABLE)(
                self.leaf_value, self.feat_off, t_off, size, C, scale, counts.cnt,
                counts.cnt_off, plan["partner"], self.twin_slot, a, b)
            n, split = XT.shape[1], self.split
            K.sized(K.leaf_values, n, work=n * int(self.ens.roots[hi] - self.ens.roots[lo]))(
                XT, self.nodes, self.lay, lo, hi, K.Tables(t_off, plan["partner"], table), C,
                scale, counts, task_rows(n, ROW_BLOCK, len(split[0]) - 1), out, split)
        return out


def tree_values(ens: TreeEnsemble, X, background=None, *, interactions=False,
                index="shapley", players=None, prediction=None):
    """TreeSHAP of every output of an ensemble on raw rows ``X``, in one pass over the trees.

    Returns ``(values, base_value, raw_prediction, interaction_values or None)``:
    ``(n, d)``, a float, ``(n,)`` and ``(n, d, d)`` for an ensemble of one
    output; ``(n, d, k)``, ``(k,)``, ``(n, k)`` and ``(n, d, d, k)`` for ``k``
    (:meth:`TreeEnsemble.select_outputs`).  ``index="banzhaf"`` gives Banzhaf
    values (no interaction values).  ``players``: the player (group) of each
    column, ``0 .. G - 1`` (interventional only); the values are then those of
    the ``G`` players.  ``prediction``: the raw output ``(n, k)`` of ``X`` where the
    caller has it (the trees' check against the model computed it), else computed.
    """
    Xc = np.ascontiguousarray(ens.cast(X))
    paths = TreePaths(ens, players)
    one = ens.n_outputs == 1
    fx = ens.predict_raw(Xc) if prediction is None else prediction
    fx = fx[:, 0] if one else fx
    if interactions and index != "shapley":
        raise InvalidParameterError(
            "interactions=True gives SHAP interaction values (the Shapley interaction "
            "index); leave index= at 'shapley' for them.")
    if background is None:
        values, inter = paths.path_dependent(Xc, index=index, pairs=interactions)
        return values, paths.expected_value(), fx, inter
    Bc = np.ascontiguousarray(ens.cast(background))
    values = paths.interventional(Xc, Bc, index=index)
    base = ens.predict_raw(Bc).mean(axis=0)
    inter = paths.interactions(Xc, values, Bc) if interactions else None
    if players is not None:  # the players' values fill the first G columns
        G = int(np.max(players)) + 1
        values = values[:, :G]
        inter = None if inter is None else inter[:, :G, :G]
    return values, float(base[0]) if one else base, fx, inter


# ---------------------------------------------------------------------- ml.shapley's estimator
class TreeEstimator:
    """TreeSHAP on a :class:`~._games.TreeGame`: the trees answer, no model rows.

    ``n_threads`` (the count of the request's ``n_jobs``) sets numba's threads
    for this call (see :func:`~modellens.models.kernel_threads`: no other
    thread's count changes); ``index`` is ``"shapley"`` or ``"banzhaf"``.
    :meth:`estimate` gives one :class:`~._games.Estimate` per output of the
    game, every output from one pass over the trees.
    """

    segments = ()
    n_coalitions = 0
    dof = None

    def __init__(self, game, *, interactions: bool = False, n_threads: int = 1,
                 index: str = "shapley", players=None):
        if not isinstance(game, TreeGame):
            raise InvalidParameterError("algorithm='tree' explains tree ensembles only.")
        self.interactions, self.n_threads, self.index = bool(interactions), n_threads, index
        #: the player of each column (groups=), or None
        self.players = players

    def estimate(self, game) -> list:
        game = getattr(game, "inner", game)  # a GroupGame of the trees: its tree game
        with kernel_threads(self.n_threads):
            values, base, fx, inter = tree_values(game.ensemble, game.X, game.background,
                                                  interactions=self.interactions,
                                                  index=self.index, players=self.players,
                                                  prediction=getattr(game, "prediction", None))
        if game.ensemble.n_outputs == 1:
            return [Estimate(values, None, base, fx, inter)]
        return [Estimate(np.ascontiguousarray(values[..., c]), None, float(base[c]),
                         np.ascontiguousarray(fx[:, c]),
                         None if inter is None else np.ascontiguousarray(inter[..., c]))
                for c in range(game.ensemble.n_outputs)]
