r"""Friedman-Popescu H statistics from group sums of partial dependence blocks.

For a feature set :math:`S` and the :math:`n` sampled rows, the block
:math:`M_S[i, k] = f(x_{kS}, x_{i,-S})` (row :math:`i` with the features in
:math:`S` taken from row :math:`k`) holds both partial dependence functions
at the sampled rows: its column means are :math:`F_S(x_{kS})` and its row
means :math:`F_{-S}(x_{i,-S})`.  A block is kept as sums over ``G`` random
groups of the rows (:class:`BlockSums`): ``C[g, u]`` sums column ``u`` over
the rows of group ``g``, ``R[i, h]`` sums row ``i`` over the columns of the
rows of group ``h``.  The group sums add up to the full sums (the
statistics), and leaving one group out of both the rows and the columns gives
the statistics of the sample without that group, from which
:func:`h_statistics` forms the delete-a-group jackknife standard errors with
no further model call.

Columns are *settings*: the distinct values of :math:`x_S` among the sample
(a boolean feature has two), ``inverse[k]`` the setting of row ``k``.
"""

from __future__ import annotations

from dataclasses import dataclass

import itertools

import numpy as np

from ..engine import GridRows

__all__ = ["N_GROUPS", "Groups", "BlockSums", "BlockRows", "settings_of", "h_statistics",
           "strongest_pairs", "pairs_of_outputs"]

#: Random groups of the sampled rows for the jackknife (19 degrees of freedom).
N_GROUPS = 20
#: A partial dependence whose spread is at most this share of the predictions' largest
#: size is flat (constant up to rounding): its statistics are 0, not noise over noise.
FLAT = 1e-11


@dataclass(frozen=True)
class Groups:
    """``G`` groups of consecutive positions of ``n`` rows (sizes differ by at most one)."""

    n: int
    labels: np.ndarray   # (n,) group of each position
    starts: np.ndarray   # (G,) first position of each group
    sizes: np.ndarray    # (G,) rows per group

    @classmethod
    def of(cls, n: int, n_groups: int = N_GROUPS) -> "Groups":
        G = max(1, min(n_groups, n))
        labels = (np.arange(n) * G) // n
        starts = np.searchsorted(labels, np.arange(G))
        return cls(n, labels, starts, np.bincount(labels, minlength=G))

    @property
    def G(self) -> int:
        return self.sizes.size


def settings_of(values: np.ndarray):
    """The distinct rows of ``values`` ``(n, c)`` and the position of each row among them.

    Missing values are one setting of their own (NaN is not equal to itself).
    """
    keyed = np.where(np.isnan(values), np.inf, values)  # X holds no inf: a free key
    distinct, inverse = np.unique(keyed, axis=0, return_inverse=True)
    return np.where(np.isinf(distinct), np.nan, distinct), inverse.reshape(-1)


@dataclass
class BlockSums:
    """Group sums of one block: ``C`` ``(G, U)``, ``R`` ``(n, G)`` or None, ``inverse`` ``(n,)``."""

    C: np.ndarray
    R: np.ndarray | None
    inverse: np.ndarray


class BlockRows(GridRows):
    """The rows of one block ``M_S`` (every sampled row under every setting of ``S``).

    Setting ``u`` takes the ``n`` rows ``u * n : (u + 1) * n``.  The answers
    are folded into :class:`BlockSums` as they arrive, one whole setting at a
    time and settings in order (a setting cut by a chunk waits for its rest),
    so every sum adds the same numbers in the same order whatever the chunks.

    Parameters
    ----------
    base : ndarray (n, d)
        The sampled rows, in group order.
    columns : sequence of int
        The features of ``S``.
    settings : ndarray (U, len(columns))
    inverse : ndarray (n,)
        The setting of each sampled row.
    groups : Groups
    rows_sums : bool
        Keep ``R`` (needed for the overall statistic, not for pairs).
    """

    def __init__(self, base, columns, settings, inverse, groups: Groups, *, row_sums: bool):
        super().__init__(base, columns, settings)
        self.inverse = np.asarray(inverse, dtype=np.intp)
        self.groups = groups
        self.row_sums = row_sums
        U = self.k
        # setting u adds (row k's group) for every sampled row k in it: (u, h, count) runs
        pairs = np.zeros((U, groups.G), np.int64)
        np.add.at(pairs, (self.inverse, groups.labels), 1)
        us, hs = np.nonzero(pairs)
        self._add_u, self._add_h = us, hs
        self._add_c = pairs[us, hs].astype(np.float64)
        self._add_off = np.searchsorted(us, np.arange(U + 1))

    def fold_all(self, answers):
        """Fold the whole block's answers at once (rows as the segment orders them), when
        they come from elsewhere than model rows (the trees' exact curves)."""
        self._reset()
        self._fold(0, self.n_rows, np.asarray(answers, dtype=np.float64))

    def _allocate(self):
        n, G = self.m, self.groups.G
        self.result = BlockSums(np.zeros((G, self.k)),
                                np.zeros((G, n)) if self.row_sums else None, self.inverse)
        self._next, self._waiting, self._partial = 0, {}, np.empty(n)

    def _store(self, start, stop, answers):
        self._waiting[start] = (stop, answers)
        while self._next in self._waiting:  # in row order, whatever order chunks come in
            stop, part = self._waiting.pop(self._next)
            self._consume(self._next, stop, np.asarray(part, dtype=np.float64))
            self._next = stop

    def _consume(self, start, stop, answers):
        n = self.m
        pos, off = start, 0
        if pos % n:  # the rest of a setting a chunk cut
            take = min(n - pos % n, stop - pos)
            self._partial[pos % n: pos % n + take] = answers[:take]
            pos, off = pos + take, take
            if pos % n == 0:
                self._fold_settings(pos // n - 1, self._partial[None, :])
        whole = (stop - pos) // n
        if whole:
            self._fold_settings(pos // n, answers[off: off + whole * n].reshape(whole, n))
            pos, off = pos + whole * n, off + whole * n
        if pos < stop:
            self._partial[: stop - pos] = answers[off:]

    def _fold_settings(self, first, block):
        """Fold the whole settings ``first : first + len(block)`` (rows of ``block``)."""
        out = self.result
        last = first + len(block)
        # column sums per group of rows: one sequential sum per (setting, group)
        out.C[:, first:last] = np.add.reduceat(block, self.groups.starts, axis=1).T
        if out.R is not None:
            a, b = self._add_off[first], self._add_off[last]
            # row sums per group of columns, added setting after setting: the same sums
            # for any cut into chunks
            _add_in_order(out.R, self._add_h[a:b],
                          block[self._add_u[a:b] - first] * self._add_c[a:b, None])

    def _finish(self):
        if self.result is None:
            self._allocate()
        if self.result.R is not None:
            self.result.R = np.ascontiguousarray(self.result.R.T)
        if self.on_finish is not None:
            self.on_finish(self)


def _add_in_order(out, index, values):
    """``out[index[e]] += values[e]`` for every entry ``e`` in order (``np.add.at``'s sums).

    Entries are added in waves of distinct targets (the first entry of each target,
    then the second, ...): each target receives its entries in their order, so the
    sums are bit for bit those of ``np.add.at``, in a few vectorised steps instead of
    its slow path for rows of values.
    """
    if index.size == 0:
        return
    order = np.argsort(index, kind="stable")
    sorted_index = index[order]
    new = np.empty(index.size, bool)
    new[0] = True
    np.not_equal(sorted_index[1:], sorted_index[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    rank = np.empty(index.size, np.intp)
    rank[order] = np.arange(index.size) - np.repeat(starts, np.diff(np.append(starts, index.size)))
    if starts.size == index.size:  # distinct targets: one wave
        out[index] += values
        return
    for r in range(int(rank.max()) + 1):
        wave = np.flatnonzero(rank == r)
        out[index[wave]] += values[wave]


# ---------------------------------------------------------------------- statistics
class _Replicates:
    """The full sample (replicate 0) and the sample without each group (1..G)."""

    def __init__(self, groups: Groups):
        self.groups = groups
        G, n = groups.G, groups.n
        self.keep = np.ones((G + 1, n), bool)
        self.keep[1:] = groups.labels[None, :] != np.arange(G)[:, None]
        self.count = np.concatenate([[n], n - groups.sizes]).astype(np.float64)

    def centred(self, values):
        """``values`` ``(G + 1, n)`` minus each replicate's mean over its rows (0 elsewhere)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(self.keep, values, 0.0).sum(axis=1) / self.count
        return np.where(self.keep, values - mean[:, None], 0.0)

    def columns(self, sums: BlockSums):
        """:math:`F_S` at every sampled row, per replicate ``(G + 1, n)``, centred."""
        total = sums.C.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            per = np.vstack([total, total[None, :] - sums.C]) / self.count[:, None]
        return self.centred(per[:, sums.inverse])

    def rows(self, sums: BlockSums):
        """:math:`F_{-S}` at every sampled row, per replicate ``(G + 1, n)``, centred."""
        assert sums.R is not None  # asked only of blocks that keep row sums
        total = sums.R.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            per = np.vstack([total, total[None, :] - sums.R.T]) / self.count[:, None]
        return self.centred(per)

    def ratio(self, residual, total, floor):
        """``(h2, sqrt of the mean squared residual, jackknife std of h2)`` of the replicates.

        A replicate whose ``total`` has a mean square at most ``floor`` (a
        partial dependence that is constant up to float rounding) gets 0: its
        ratio would be rounding noise over rounding noise.
        """
        num = (residual ** 2).sum(axis=1)
        den = (total ** 2).sum(axis=1)
        flat = den <= floor * self.count
        num = np.where(flat, 0.0, num)
        with np.errstate(invalid="ignore", divide="ignore"):
            h2 = np.where(flat, 0.0, num / np.where(flat, 1.0, den))
        G = self.groups.G
        if G < 2:
            std = np.nan
        else:
            rep = h2[1:]
            std = float(np.sqrt((G - 1) / G * np.sum((rep - rep.mean()) ** 2)))
        return float(h2[0]), float(np.sqrt(num[0] / self.count[0])), std


def h_statistics(groups: Groups, prediction, singles: dict, pairs: dict, *, overall=()):
    """The statistics of the sample and their jackknife standard errors.

    Parameters
    ----------
    groups : Groups
    prediction : ndarray (n,)
        :math:`f(x_i)` at the sampled rows.
    singles : dict
        Feature -> :class:`BlockSums` of its block (``R`` needed for ``overall``).
    pairs : dict
        ``(j, k)`` -> :class:`BlockSums` of the pair's block.
    overall : sequence
        The features whose overall statistic is wanted.

    Returns
    -------
    overall : dict
        Feature -> ``(h2, unnormalised, std)``.
    pairwise : dict
        Pair -> ``(h2, unnormalised, std)``.
    """
    rep = _Replicates(groups)
    prediction = np.asarray(prediction, np.float64)
    # partial dependences are means of predictions: rounding leaves them uncertain by
    # about eps times the predictions' size; 1e-11 of that size is flat
    floor = (FLAT * float(np.max(np.abs(prediction)))) ** 2
    f = rep.centred(np.broadcast_to(prediction, rep.keep.shape))
    columns = {j: rep.columns(s) for j, s in singles.items()}
    out_overall = {}
    for j in overall:
        out_overall[j] = rep.ratio(f - columns[j] - rep.rows(singles[j]), f, floor)
    out_pairs = {}
    for (j, k), sums in pairs.items():
        joint = rep.columns(sums)
        out_pairs[(j, k)] = rep.ratio(joint - columns[j] - columns[k], joint, floor)
    return out_overall, out_pairs


def strongest_pairs(overall: dict, feats, k):
    """The pairs among the ``k`` features with the largest overall statistic."""
    h2 = np.array([overall[j][0] for j in feats], dtype=np.float64)
    order = np.argsort(-np.nan_to_num(h2, nan=-np.inf), kind="stable")[:k]
    top = sorted(order)  # keep the features' own order within a pair
    return [(feats[a], feats[b]) for a, b in itertools.combinations(top, 2)]


def pairs_of_outputs(overall: list, feats, pair_request) -> list:
    """Each output's pairs, from every output's overall statistics ``overall``.

    ``pair_request`` is ``("list", pairs)`` (those, for every output),
    ``("top", k)`` (each output the pairs among its own ``k`` strongest
    features) or ``("shared", k)`` (one set for every output: the ``k``
    features with the largest sum over the outputs of their unnormalised
    overall statistic squared, the interaction's share of the prediction
    vector's variance; one output ranks as ``"top"``).
    """
    kind, what = pair_request
    if kind == "list":
        return [list(what) for _ in overall]
    if kind == "shared" and len(overall) > 1:
        joint = {j: (float(np.nansum([o[j][1] ** 2 for o in overall])),) for j in feats}
        chosen = strongest_pairs(joint, feats, what)
        return [list(chosen) for _ in overall]
    return [strongest_pairs(o, feats, what) for o in overall]
