r"""H statistics of a tree ensemble from its leaves, with no model rows.

A one-output ensemble predicts :math:`f(x) = b + \sum_l v_l \prod_{p \in P_l}
o_{lp}(x_p)`, where :math:`o_{lp}(x_p) = 1` when :math:`x_p` satisfies every
split on feature :math:`p` along leaf :math:`l`'s path (a row's bits at a leaf
form its *mask*).  For a feature set :math:`S` the brute-force block is then

.. math:: M_S[i, k] = b + \sum_l v_l \, [\text{row } k \text{ satisfies } l
          \text{ on } S] \, [\text{row } i \text{ satisfies } l \text{ outside } S],

so its group sums (see :mod:`._hstat`) need, for every leaf and group of
rows, how many rows satisfy the leaf on all its path features, on all but
one given feature, on all but two, and on each one (the kernels
``leaf_counts``, ``single_sums`` and ``pair_sums`` of :mod:`modellens.trees.kernels`).  Only
the leaves whose path holds a feature of :math:`S` vary with the rows; the
others add a constant per group, which the centring of every partial
dependence removes, so they are left out.  For a pair,
:math:`M_{jk} = M_j + M_k + \Delta_{jk}` up to such constants, where
:math:`\Delta_{jk}` comes only from the leaves with both features on their
path.
"""

from __future__ import annotations

import numpy as np

from .._validation import InvalidParameterError
from ..engine import Plan
from ..trees import kernels as K
from ._hstat import BlockSums, h_statistics, pairs_of_outputs

__all__ = ["tree_statistics", "TreeStatisticsPlan"]

#: Bytes of row masks computed at once; all rows' masks are kept when they fit.
MASK_BYTES = 2**27
#: Bytes of the pair sums computed per batch of pairs.
PAIR_BYTES = 2**26


class _Leaves:
    """The leaves of an ensemble, their values per output, and the masks of the sampled rows."""

    def __init__(self, ens, X):
        (leaf_node, path_off, path_node, path_left, path_slot, self.feat_off, self.feat_id,
         _) = K.leaf_paths(ens.left, ens.right, ens.feature, ens.cover, ens.roots)
        p = np.diff(self.feat_off)
        if len(p) and p.max() > K.MAX_PATH_FEATURES:
            raise InvalidParameterError(
                f"a path of the model splits on {int(p.max())} distinct features; the tree "
                f"method handles at most {K.MAX_PATH_FEATURES}. Use method='brute'.")
        self.values = ens.value[leaf_node]  # (leaves, outputs)
        self.pair_off = np.concatenate([[0], np.cumsum(p * (p - 1) // 2)]).astype(np.int64)
        self.L = len(leaf_node)
        self.X = X
        self._args = (ens.nodes, path_off, path_node, path_left, path_slot, self.feat_off)
        step = max(1, MASK_BYTES // (8 * max(self.L, 1)))
        self.blocks = [(lo, min(lo + step, len(X))) for lo in range(0, len(X), step)]
        self._kept = [self._masks(lo, hi) for lo, hi in self.blocks] \
            if len(self.blocks) == 1 else None

    def _masks(self, lo, hi):
        return K.sized(K.row_masks, hi - lo)(self.X[lo:hi], *self._args)

    def masks(self):
        """``(first row, masks)`` of each block of rows."""
        for b, (lo, hi) in enumerate(self.blocks):
            yield lo, (self._kept[b] if self._kept is not None else self._masks(lo, hi))


class TreeStatisticsPlan(Plan):
    """The tree H statistics of a request as the engine runs it: no model rows, and
    :meth:`reduce` (on the threads ``n_jobs`` asks for, as every reduction) gives
    :func:`tree_statistics`."""

    def __init__(self, ens, dataset, base, groups, feats, pair_request):
        self.request = (ens, dataset, base, groups, feats, pair_request)

    def reduce(self) -> list:
        return tree_statistics(*self.request)


def tree_statistics(ens, dataset, base, groups, feats, pair_request) -> list:
    """The H statistics of ``base`` (the sample, in group order) from the trees of ``ens``.

    Returns ``(overall, pairwise)`` as :func:`._hstat.h_statistics` does, one per
    output of ``ens`` (its value columns): the rows' masks and the counts per
    leaf and group, which do not depend on the leaves' values, are found once
    for every output.
    """
    X = np.ascontiguousarray(ens.cast(ens.encode(base, dataset.columns)))
    n, G = len(X), groups.G
    leaves = _Leaves(ens, X)
    n_slots = int(leaves.feat_off[-1])
    full = np.zeros((leaves.L, G))
    miss1, bits = np.zeros((n_slots, G)), np.zeros((n_slots, G))
    miss2 = np.zeros((int(leaves.pair_off[-1]), G))
    labels = groups.labels.astype(np.int64)
    for lo, masks in leaves.masks():
        K.sized(K.leaf_counts, len(masks))(masks, labels[lo:lo + len(masks)], leaves.feat_off,
                                           leaves.pair_off, full, miss1, bits, miss2)
    predictions = ens.predict_raw(X)
    counts = (full, miss1, bits, miss2)

    def features(c):
        return _features(leaves, np.ascontiguousarray(leaves.values[:, c]),
                         np.ascontiguousarray(predictions[:, c]), ens.n_features, groups, feats,
                         counts)

    if pair_request[0] != "shared" or ens.n_outputs == 1:
        # each output's pairs are its own: one output's sums at a time
        out = []
        for c in range(ens.n_outputs):
            first = features(c)
            pairs = pairs_of_outputs([first[1]], feats, pair_request)[0]
            out.append((first[1], _pairs(leaves, first, ens.n_features, groups, pairs, counts)))
        return out
    # one set of pairs for every output, chosen on all their overall statistics
    firsts = [features(c) for c in range(ens.n_outputs)]
    chosen = pairs_of_outputs([first[1] for first in firsts], feats, pair_request)
    return [(first[1], _pairs(leaves, first, ens.n_features, groups, pairs, counts))
            for first, pairs in zip(firsts, chosen)]


def _features(leaves, value, prediction, n_features, groups, feats, counts):
    """One output's features' block sums and overall statistics, from its leaf values and the
    shared counts: ``(singles, overall, C, index, value, prediction)``."""
    full, miss1, bits, _ = counts
    n, G = len(prediction), groups.G
    sizes = groups.sizes.astype(np.float64)

    index = np.full(n_features, -1, np.int64)
    index[list(feats)] = np.arange(len(feats))
    C = np.zeros((len(feats), n, G))
    R = np.zeros((len(feats), n, G))
    for lo, masks in leaves.masks():
        K.sized(K.single_sums, len(masks))(masks, lo, value, leaves.feat_off, leaves.feat_id,
                                           index, full, miss1, bits, sizes, C, R)
    R += prediction[None, :, None] * sizes[None, None, :]
    every = np.arange(n)
    singles = {j: BlockSums(np.ascontiguousarray(C[a].T), R[a], every)
               for a, j in enumerate(feats)}
    overall, _ = h_statistics(groups, prediction, singles, {}, overall=feats)
    # the pairs read the column sums only
    singles = {j: BlockSums(s.C, None, every) for j, s in singles.items()}
    return singles, overall, C, index, value, prediction


def _pairs(leaves, first, n_features, groups, pairs, counts):
    """One output's statistics of ``pairs`` (its :func:`_features` given as ``first``)."""
    singles, _, C, index, value, prediction = first
    full, miss1, _, miss2 = counts
    n, G = len(prediction), groups.G
    every = np.arange(n)
    pairwise: dict = {}
    batch = max(1, PAIR_BYTES // (8 * n * G))
    for start in range(0, len(pairs), batch):
        chunk = pairs[start:start + batch]
        pair_id = np.full((n_features, n_features), -1, np.int64)
        for q, (a, b) in enumerate(chunk):
            pair_id[a, b] = pair_id[b, a] = q
        D = np.zeros((len(chunk), n, G))
        for lo, masks in leaves.masks():
            K.sized(K.pair_sums, len(masks))(masks, lo, value, leaves.feat_off, leaves.feat_id,
                                             leaves.pair_off, pair_id, full, miss1, miss2, D)
        sums = {(a, b): BlockSums(np.ascontiguousarray((C[index[a]] + C[index[b]] + D[q]).T),
                                  None, every)
                for q, (a, b) in enumerate(chunk)}
        pairwise.update(h_statistics(groups, prediction, singles, sums)[1])
    return pairwise
