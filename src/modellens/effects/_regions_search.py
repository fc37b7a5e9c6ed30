"""Regional effects, step two: the best split of a region, for many variants of it at once."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ._regions_local import Local

__all__ = ["Rule", "Search", "Node", "N_THRESHOLDS", "FLAT"]

#: Candidate thresholds of a numeric splitting feature: its quantiles at 1/20, ..., 19/20.
N_THRESHOLDS = 20
#: Heterogeneity below this share of the local effects' mean square is taken as none.
FLAT = 1e-12


@dataclass
class Rule:
    """A split: column ``j``; ``threshold`` (numeric: ``x <= t`` left) or ``left`` level codes."""

    j: int
    threshold: float | None = None
    left: frozenset | None = None
    position: float = 0.0  # numeric: the threshold's quantile among the region's rows

    def goes_left(self, z):
        if self.threshold is not None:
            return z <= self.threshold  # NaN: right
        assert self.left is not None
        return np.isin(z, list(self.left))


class Search:
    """Scores every candidate split of a region from the local effects of its rows.

    The search runs for many variants of a region at once (the permutations
    of the p-value, the bootstrap resamples of the stability): each variant
    is a row weight vector and a source row for each row's splitting values,
    and every candidate cut of every variant is scored by one bincount over
    all of them, summed in the same order as a search of that variant alone.
    """

    #: Observations (variants x local effects) per batch: bounds the batch's memory.
    BATCH_OBSERVATIONS = 2_000_000

    def __init__(self, local: Local, dataset, cols, min_rows):
        self.local, self.dataset, self.cols, self.min_rows = local, dataset, cols, min_rows
        self.Z = dataset.values[:, cols]
        self.levels = [dataset.columns[c].is_categorical or dataset.columns[c].is_boolean
                       for c in cols]
        # observations of each row, to gather a region's quickly
        order = np.argsort(local.rows, kind="stable")
        self.obs_sorted = order
        self.row_starts = np.searchsorted(local.rows[order], np.arange(dataset.n_rows + 1))

    @contextmanager
    def least_rows(self, min_rows):
        """Search with another least number of rows on each side (a half of a region's rows)."""
        kept, self.min_rows = self.min_rows, min_rows
        try:
            yield
        finally:
            self.min_rows = kept

    def node(self, rows):
        """The observations of ``rows`` (sorted positions), centred on the region's bin means."""
        starts, stops = self.row_starts[rows], self.row_starts[rows + 1]
        lengths = stops - starts
        idx = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
        obs = self.obs_sorted[idx]
        return Node(rows, np.repeat(np.arange(rows.size), lengths), self.local.cell[obs],
                     self.local.values[obs], self.local.n_cells, self.Z[rows],
                     self.local.strata[rows])

    def batch(self, node: "Node") -> int:
        """Variants searched at once in ``node``."""
        return max(1, self.BATCH_OBSERVATIONS // max(node.cell.size, 1))

    def best(self, node: "Node", w):
        """The best rule over every column for row weights ``w``: ``(gain, rule, before,
        after)``, or None."""
        return self.best_many(node, w[None, :])[0]

    def best_many(self, node: "Node", W, sources=None, beat=None) -> list:
        """The best rule of each variant: a list of ``(gain, rule, before, after)`` or None.

        ``W`` (variants, rows) holds row weights; row ``i`` of variant ``v``
        takes its splitting values from row ``sources[v, i]`` (default: its
        own), the permutations of the test.  A numeric column's candidate
        thresholds are the quantiles of the region's values, whatever the
        weights and sources: computed once per region, they serve every
        variant.

        A numeric column's best quantile cut is refined between the region's
        values around it (see ``_refine``) only where the refined cut could
        matter.  The refined cut keeps the rows below the lower neighbouring
        quantile on its left and those above the upper one on its right, so
        their sums of squares add up to a floor under its own: a gain ceiling.
        A column whose ceiling is below another column's gain cannot win, and
        with ``beat`` (the permutation test's observed gain, where only
        whether a variant's best gain reaches it matters) neither can one
        whose ceiling is below ``beat``, nor any once a gain reaches it.  The
        best rule is the same as with every column refined.
        """
        V = W.shape[0]
        if sources is None:
            sources = np.broadcast_to(np.arange(node.rows.size), W.shape)
        total, scale = node.ss_many(W)
        best: list = [None] * V
        live = np.flatnonzero(total > FLAT * max(scale, 1e-300))
        if live.size == 0:
            return best
        W, sources, total = W[live], sources[live], total[live]
        found: list = []
        lower = np.full(live.size, -np.inf)  # each variant's best gain so far
        for k in range(len(self.cols)):
            if self.levels[k]:
                one = self._levels_best(node, W, sources, k, total)
                gains = np.array([-np.inf if f is None else f[0] for f in one])
            else:
                one = self._coarse(node, W, sources, k, total)
                gains = np.full(live.size, -np.inf) if one is None else np.where(
                    one["any_ok"], 1.0 - np.maximum(one["cut"], 0.0) / total, -np.inf)
            found.append(one)
            lower = np.maximum(lower, gains)
        need = lower if beat is None else np.where(lower < beat, beat, np.inf)
        for k, c in enumerate(self.cols):
            one = found[k]
            if not self.levels[k]:
                one = [None] * live.size if one is None else \
                    self._refine(node, W, sources, k, total, one, need - 1e-9)
            for i, f in enumerate(one):
                v = live[i]
                if f is not None and (best[v] is None or f[0] > best[v][0]):
                    gain, rule, after = f
                    rule.j = c
                    best[v] = (gain, rule, total[i], after)
        return best

    def _cuts(self, node, W, groups, n_groups):
        """After-split sums of squares ``(V, n_groups - 1)``, admissible cuts masked as inf,
        whether a variant has any, and the sums of squares left and right of each cut."""
        (left, right), left_rows, right_rows = node.split_ss_many(W, groups, n_groups)
        ok = (left_rows >= self.min_rows) & (right_rows >= self.min_rows)
        return np.where(ok, left + right, np.inf), ok.any(axis=1), left, right

    def _coarse(self, node, W, sources, k, total):
        """Each variant's best quantile cut of numeric column ``k``, and its gain ceiling."""
        cache = node.cache.setdefault(k, {})
        if "t" not in cache:
            _thresholds(node.Z[:, k], cache)
        t = cache["t"]
        if t.size == 0:
            return None
        if "groups" not in cache:
            cache["groups"] = np.searchsorted(t, node.Z[:, k], side="left")
        after, any_ok, left, right = self._cuts(node, W, cache["groups"][sources], t.size + 1)
        chosen = np.argmin(after, axis=1)
        ends = np.arange(W.shape[0])
        floor = np.where(chosen > 0, left[ends, np.maximum(chosen - 1, 0)], 0.0) + np.where(
            chosen + 1 < t.size, right[ends, np.minimum(chosen + 1, t.size - 1)], 0.0)
        return {"chosen": chosen, "cut": after[ends, chosen], "any_ok": any_ok,
                "ceiling": 1.0 - np.maximum(floor, 0.0) / total}

    def _refine(self, node, W, sources, k, total, coarse, need) -> list:
        """Column ``k``'s best rule of each variant, its quantile cut refined where the
        gain ceiling reaches ``need``."""
        cache = node.cache[k]
        zs, t = cache["zs"], cache["t"]
        chosen, cut, any_ok = coarse["chosen"].copy(), coarse["cut"].copy(), coarse["any_ok"]
        V = W.shape[0]
        at = [t] * V
        # the best quantile cut, refined to the best cut between the region's values inside
        # the neighbouring quantile steps: a boundary in the data is then found exactly,
        # so that rows on its wrong side do not call for a second, spurious split; every
        # variant's refinement in one pass, its fine cuts' groups padded with empty groups at
        # the end (cumulative sums through them add zeros: the same numbers)
        which = np.flatnonzero(any_ok & (coarse["ceiling"] >= need))
        fines = {int(c): self._fine(node, k, cache, int(c)) for c in np.unique(chosen[which])}
        which = np.array([v for v in which if fines[int(chosen[v])][0].size], dtype=np.intp)
        if which.size:
            used = sorted({int(chosen[v]) for v in which})
            table = np.stack([fines[c][1] for c in used])
            row_of = np.searchsorted(used, chosen[which])
            width = max(fines[c][0].size for c in used) + 1
            fine_after = self._cuts(node, W[which], table[row_of[:, None], sources[which]],
                                    width)[0]
            best_fine = np.argmin(fine_after, axis=1)
            for i, (u, f) in enumerate(zip(which, best_fine)):
                if fine_after[i, f] < cut[u]:
                    at[u] = fines[used[row_of[i]]][0]
                    chosen[u], cut[u] = f, fine_after[i, f]
        out: list = []
        for v in range(V):
            if not any_ok[v]:
                out.append(None)
                continue
            threshold = at[v][chosen[v]]
            position = np.searchsorted(zs, threshold, side="right") / zs.size
            rule = Rule(-1, threshold=float(threshold), position=float(position))
            out.append((1.0 - max(cut[v], 0.0) / total[v], rule, cut[v]))
        return out

    def _fine(self, node, k, cache, c):
        """The region's values between the quantile cuts around cut ``c``, and each row's group."""
        key = ("fine", c)
        if key not in cache:
            zs, t = cache["zs"], cache["t"]
            lo = t[c - 1] if c > 0 else -np.inf
            hi = t[c + 1] if c + 1 < t.size else zs[-1]
            # the largest value itself when missing values make a right side
            stop = np.searchsorted(zs, hi, side="right") if c + 1 == t.size and cache["missing"] \
                else np.searchsorted(zs, hi, side="left")
            fine = np.unique(zs[np.searchsorted(zs, lo, side="right"):stop])
            cache[key] = fine, np.searchsorted(fine, node.Z[:, k], side="left")
        return cache[key]

    def _levels_best(self, node, W, sources, k, total) -> list:
        """Each variant's best cut of level column ``k`` along its level order.

        The variants whose rows of positive weight hold the region's every
        level (and missing values when it has any), as every permutation
        does, are scored at once; the others (a bootstrap resample that lost
        a level) one at a time.
        """
        z = node.Z[:, k]
        known = ~np.isnan(z)
        present = np.unique(z[known]).astype(np.intp)
        L = present.size
        level_of_row = np.where(known, np.searchsorted(present, np.where(known, z, 0)), L)
        V = W.shape[0]
        held = np.bincount(level_of_row, minlength=L + 1) > 0
        lor = level_of_row[sources]
        seen = np.bincount((lor + (np.arange(V) * (L + 1))[:, None]).ravel(),
                           weights=(W > 0).ravel(), minlength=V * (L + 1)).reshape(V, L + 1)
        same = ((seen > 0) == held).all(axis=1)
        out: list = [None] * V
        for v in np.flatnonzero(~same):
            out[v] = self._level_best(node, W[v], node.Z[sources[v], k], total[v])
        batch = np.flatnonzero(same)
        if batch.size == 0 or L + int(held[L]) < 2:
            return out
        lor = lor[batch]
        n, s, _, _ = node.group_sums(W[batch], lor, L + 1)
        means = np.divide(s, n[:, None], out=np.zeros_like(s), where=n[:, None] > 0)
        means = means.transpose(0, 2, 3, 1).reshape(batch.size, L + 1, -1)[:, :-1]
        weight = n.sum(axis=2)[:, :-1]
        rank = np.empty((batch.size, L + 1), dtype=np.intp)
        codes = []
        for i in range(batch.size):
            order = _level_order(means[i], weight[i])
            rank[i, order] = np.arange(L)
            codes.append(present[order])
        rank[:, L] = L
        groups = np.take_along_axis(rank, lor, axis=1)
        after, any_ok, _, _ = self._cuts(node, W[batch], groups, L + int(held[L]))
        chosen = np.argmin(after, axis=1)
        for i, v in enumerate(batch):
            if any_ok[i]:
                c = int(chosen[i])
                rule = Rule(-1, left=frozenset(codes[i][:c + 1].tolist()))
                out[v] = (1.0 - max(after[i, c], 0.0) / total[v], rule, after[i, c])
        return out

    def _level_best(self, node, w, z, ss_total):
        groups, codes = _level_groups(node, w, z)
        if groups is None:
            return None
        after, any_ok, _, _ = self._cuts(node, w[None, :], groups[None, :],
                                         int(groups.max()) + 1)
        if not any_ok[0]:
            return None
        c = int(np.argmin(after[0]))
        rule = Rule(-1, left=frozenset(codes[:c + 1].tolist()))
        return 1.0 - max(after[0, c], 0.0) / ss_total, rule, after[0, c]


def _thresholds(z, cache):
    """A region's sorted values and candidate thresholds (its quantiles) into ``cache``."""
    zs = np.sort(z[~np.isnan(z)])
    t = np.unique(np.quantile(zs, np.arange(1, N_THRESHOLDS) / N_THRESHOLDS,
                              method="inverted_cdf")) if zs.size else zs
    # the largest value cuts only when missing values make a right side
    missing = bool(np.isnan(z).any())
    cache["zs"], cache["missing"] = zs, missing
    cache["t"] = t[(t < zs[-1]) | missing] if zs.size else t


def _level_groups(node, w, z):
    """Levels in a data-driven order, for cuts along it; missing values a group of their own, last.

    Each level's mean deviation from the region's bin means, per bin (and
    output), is a vector; the levels are ordered by their projection on the
    first principal axis of these vectors (weighted by the levels' local
    effects), which for one bin is the order of the mean deviations.
    """
    known = ~np.isnan(z)
    codes_all = np.where(known, z, -1).astype(np.intp)
    present = np.unique(codes_all[(w > 0) & known])
    if present.size + int(((w > 0) & ~known).any()) < 2:
        return None, None
    pos = np.searchsorted(present, codes_all).clip(max=present.size - 1)
    at = known & (present[pos] == codes_all)
    level_of_row = np.where(at, pos, present.size)
    means, weight = node.level_means(w, level_of_row, present.size + 1)
    order = _level_order(means[:-1], weight[:-1])
    rank = np.empty(present.size + 1, dtype=np.intp)
    rank[order] = np.arange(present.size)
    rank[present.size] = present.size
    return rank[level_of_row], present[order]


def _level_order(means, weight):
    """The levels' order: by their mean deviations ``(L, B * k)`` projected on the first
    principal axis (weighted by ``weight``); two levels keep their order."""
    if means.shape[0] > 2:
        centred = means - (weight @ means) / max(weight.sum(), 1e-300)
        _, _, vt = np.linalg.svd(np.sqrt(weight)[:, None] * centred, full_matrices=False)
        score = centred @ vt[0]
    else:
        score = np.arange(means.shape[0], dtype=float)
    return np.argsort(score, kind="stable")


class Node:
    """A region's observations: local row, bin, values ``(m, k)``; its rows' split values."""

    def __init__(self, rows, obs_row, cell, values, n_cells, Z, strata):
        self.rows, self.obs_row, self.cell, self.n_cells = rows, obs_row, cell, n_cells
        self.Z, self.strata = Z, strata
        self.cache: dict = {}  # per column: the region's sorted values and thresholds
        # centred on the region's own bin means: sums of squares without cancellation
        count = np.bincount(cell, minlength=n_cells).astype(float)
        mean = np.stack([np.bincount(cell, weights=values[:, k], minlength=n_cells)
                         for k in range(values.shape[1])], axis=1).astype(float)
        mean = np.divide(mean, count[:, None], out=np.zeros_like(mean), where=count[:, None] > 0)
        self.values = values - mean[cell]
        self.sq = (self.values ** 2).sum(axis=1)
        self.scale = float(np.mean((values ** 2).sum(axis=1))) if values.size else 0.0

        # PD: every row has one local effect per grid point, in order; group sums are
        # then a sparse (groups x rows) product with the (rows, points * outputs) matrix
        n_rows = rows.size
        self.dense = n_cells > 0 and values.shape[0] == n_rows * n_cells and np.array_equal(
            cell, np.tile(np.arange(n_cells), n_rows))
        if self.dense:
            self.by_row = self.values.reshape(n_rows, -1)
            self.sq_row = self.sq.reshape(n_rows, n_cells).sum(axis=1)

    def group_sums(self, W, groups, n_groups):
        """Per variant, group of rows and bin: weights ``(V, G, B)``, sums ``(V, k, G, B)``,
        squares ``(V, G)``, and the rows' weights per group ``(V, G)``, for row weights ``W``
        and groups ``(V, rows)``.

        Each variant's sums add its observations in the order of a search of
        that variant alone: one bincount over every variant, offset by variant.
        """
        V, B, k = W.shape[0], self.n_cells, self.values.shape[1]
        offset = (np.arange(V) * n_groups)[:, None]
        flat = (groups + offset).ravel()
        r = np.bincount(flat, weights=W.ravel(), minlength=V * n_groups).reshape(V, n_groups)
        if self.dense:
            n_rows = groups.shape[1]
            # (variant, group) x rows, one entry per variant in each row's column: built as
            # CSC without sorting; each group's sum adds its rows in order, as CSR would
            # imported here, not at the top: scipy costs at ``import modellens``
            from scipy import sparse

            by_group = sparse.csc_matrix(
                (W.T.ravel(), (groups + offset).T.ravel(), np.arange(0, V * n_rows + 1, V)),
                shape=(V * n_groups, n_rows)) @ self.by_row
            s = np.asarray(by_group).reshape(V, n_groups, B, k).transpose(0, 3, 1, 2)
            q = np.bincount(flat, weights=(W * self.sq_row).ravel(),
                            minlength=V * n_groups).reshape(V, n_groups)
            return np.broadcast_to(r[:, :, None], (V, n_groups, B)), s, q, r
        ow = W[:, self.obs_row]
        g = (groups + offset)[:, self.obs_row]
        idx = (g * B + self.cell).ravel()
        size = V * n_groups * B
        n = np.bincount(idx, weights=ow.ravel(), minlength=size).reshape(V, n_groups, B)
        s = np.stack([np.bincount(idx, weights=(ow * self.values[:, j]).ravel(), minlength=size)
                      .reshape(V, n_groups, B) for j in range(k)], axis=1)
        q = np.bincount(g.ravel(), weights=(ow * self.sq).ravel(),
                        minlength=V * n_groups).reshape(V, n_groups)
        return n, s, q, r

    def ss_many(self, W):
        """Within-bin sums of squares ``(V,)`` under row weights ``W``, and the raw mean square."""
        n, s, q, _ = self.group_sums(W, np.zeros(W.shape, dtype=np.intp), 1)
        explained = np.divide(s ** 2, n[:, None], out=np.zeros_like(s),
                              where=n[:, None] > 0).reshape(W.shape[0], -1).sum(axis=1)
        return np.maximum(q[:, 0] - explained, 0.0), self.scale

    def ss(self, w):
        """Within-bin sum of squares under row weights ``w``, and the raw mean square."""
        total, scale = self.ss_many(w[None, :])
        return float(total[0]), scale

    def level_means(self, w, level_of_row, n_levels):
        """Each level's mean deviation per bin and output, ``(L, B * k)``, and its weight."""
        n, s, _, _ = self.group_sums(w[None, :], level_of_row[None, :], n_levels)
        n, s = n[0], s[0]
        means = np.divide(s, n, out=np.zeros_like(s), where=n > 0)
        return means.transpose(1, 2, 0).reshape(n_levels, -1), n.sum(axis=1)

    def split_ss_many(self, W, groups, n_groups):
        """Per variant, the sums of squares left and right of each cut between consecutive
        groups ``(V, G - 1)`` each, and the rows left and right of it."""
        n, s, q, r = self.group_sums(W, groups, n_groups)
        cq, cr = np.cumsum(q, axis=1), np.cumsum(r, axis=1)
        # PD's weights per bin are its rows' (every row has every grid point)
        cn = np.broadcast_to(cr[:, :, None], n.shape) if self.dense else np.cumsum(n, axis=1)
        cs = np.cumsum(s, axis=2)
        nl, sl, ql, rl = cn[:, :-1], cs[:, :, :-1], cq[:, :-1], cr[:, :-1]
        nr, sr, qr, rr = cn[:, -1:] - nl, cs[:, :, -1:] - sl, cq[:, -1:] - ql, cr[:, -1:] - rl
        expl_l = np.divide(sl ** 2, nl[:, None], out=np.zeros_like(sl),
                           where=nl[:, None] > 0).sum(axis=(1, 3))
        expl_r = np.divide(sr ** 2, nr[:, None], out=np.zeros_like(sr),
                           where=nr[:, None] > 0).sum(axis=(1, 3))
        return ((ql - expl_l), (qr - expl_r)), rl, rr


# ------------------------------------------------------------------ growth
