"""Regional effects, step three: growing a feature's split tree and testing each split."""

from __future__ import annotations

import numpy as np

from ._regions_search import FLAT, N_THRESHOLDS, Node, Rule, Search
from .regions_result import RegionNode, Split

__all__ = ["Grower", "ALPHA", "N_BOOTSTRAP"]

#: Level of the permutation test a split must pass (with ``n_permutations > 0``).
ALPHA = 0.05
#: Bootstrap resamples behind a split's stability.
N_BOOTSTRAP = 30
#: Stop the permutation test once its decision is known (see ``Grower._p_value``).
_EARLY_STOP = True
_FIRST_PERMUTATIONS = 20


class Grower:
    def __init__(self, search: Search, dataset, *, method, max_depth, min_gain, n_permutations,
                 rng):
        self.search, self.dataset, self.method = search, dataset, method
        self.max_depth, self.min_gain = max_depth, min_gain
        self.n_permutations, self.rng = n_permutations, rng

    def grow(self, rows, depth, path) -> RegionNode:
        node = RegionNode(region=_region_name(path), conditions=tuple(path), depth=depth,
                          rows=int(rows.size))
        node.row_index = rows
        if depth >= self.max_depth:
            node.reason = "maximum depth"
            return node
        if rows.size < 2 * self.search.min_rows:
            node.reason = (f"too few rows for two regions ({rows.size}; each region needs at "
                           f"least {self.search.min_rows})")
            return node
        data = self.search.node(rows)
        if data.cell.size == 0:
            node.reason = "no local effects (a constant feature)"
            return node
        ones = np.ones(rows.size)
        best = self.search.best(data, ones)
        if best is None:
            total = data.ss(ones)
            node.reason = self._flat(data) if total[0] <= FLAT * max(total[1], 1e-300) else (
                f"no split leaves at least {self.search.min_rows} rows on each side")
            return node
        gain, rule, before, after = best
        weight = float(np.bincount(data.cell, weights=ones[data.obs_row]).sum())
        split = Split(feature=self.dataset.columns[rule.j].name,
                      threshold=rule.threshold, levels=self._labels(rule),
                      heterogeneity_before=before / weight, heterogeneity_after=after / weight,
                      gain=float(gain), p_value=self._p_value(data, gain),
                      stability=self._stability(data, rule), heldout_gain=self._heldout(data),
                      rows_left=0, rows_right=0)
        goes_left = rule.goes_left(self.dataset.values[rows, rule.j])
        split.rows_left, split.rows_right = int(goes_left.sum()), int((~goes_left).sum())
        significant = self.n_permutations == 0 or split.p_value <= ALPHA
        if gain < self.min_gain or not significant:
            node.candidate = split
            node.reason = (
                f"the best split removes {gain:.0%} of the heterogeneity, below min_gain "
                f"({self.min_gain:.0%})" if gain < self.min_gain else
                f"the best split is not significant (p = {split.p_value:.3g} > {ALPHA:g})")
            return node
        node.split = split
        right_levels = None
        if rule.left is not None:
            z = self.dataset.values[rows, rule.j]
            codes = np.unique(z[~np.isnan(z)])
            rest = np.array(sorted(set(codes.tolist()) - rule.left), dtype=float)
            right_levels = tuple(_plain(v) for v in self.dataset.labels(rule.j, rest).tolist())
            if np.isnan(z).any():
                right_levels += ("missing",)
        left_cond, right_cond = _conditions(split, right_levels)
        node.left = self.grow(rows[goes_left], depth + 1, path + (left_cond,))
        node.right = self.grow(rows[~goes_left], depth + 1, path + (right_cond,))
        node.row_index = None
        return node

    def _flat(self, data) -> str:
        """Why a region whose local effects agree has no split, in the method's own terms."""
        if data.scale <= 0.0:  # every local effect is exactly zero
            return ("no effect: the model's output does not change with the feature on these "
                    "rows" + (" (every ICE curve is flat)" if self.method == "pdp" else
                              " (every local effect is zero)"))
        what = {"pdp": "every row's centred ICE curve is the same",
                "dale": "the rows' derivatives agree within every bin",
                "ale": "the rows' local effects agree within every bin"}[self.method]
        return (f"no heterogeneity: {what}, so the feature has the same effect on every row "
                "and no split can reduce the disagreement")

    def _labels(self, rule):
        if rule.left is None:
            return None
        codes = np.array(sorted(rule.left), dtype=float)
        return tuple(_plain(v) for v in self.dataset.labels(rule.j, codes).tolist())

    def _p_value(self, data: Node, observed):
        """Permutation p-value of the observed best gain, stopped early once it exceeds ALPHA.

        The permutations are drawn as one stream (the generator ends where a
        full run leaves it, so the stability and held-out draws that follow do
        not depend on the stop) and searched in batches.  Once ``h`` of them
        reach the observed gain, where ``(1 + h) / (1 + n_permutations) >
        ALPHA``, no further permutation can make the split significant: the
        test stops (Besag & Clifford 1991) and reports ``(1 + h) / (1 + m)``
        after ``m`` permutations, above ALPHA as the full run's would be.
        """
        if self.n_permutations == 0:
            return float("nan")
        strata = data.strata
        size = strata.size
        by_stratum = np.argsort(strata, kind="stable")
        blocks = np.split(by_stratum, np.flatnonzero(np.diff(strata[by_stratum])) + 1)
        # least exceedances that decide "not significant" whatever the remaining ones give
        decided = next(h for h in range(self.n_permutations + 1)
                       if (1 + h) / (1 + self.n_permutations) > ALPHA)
        # a first small batch: a split that is no better than chance stops after it
        batch = min(self.search.batch(data), _FIRST_PERMUTATIONS)
        exceed = done = 0
        while done < self.n_permutations:
            m = min(batch, self.n_permutations - done)
            batch = self.search.batch(data)
            draws = self.rng.random((m, size))
            sources = np.empty((m, size), dtype=np.intp)
            # each permutation's rows in random order within each stratum: the order of
            # their draws (random doubles tie with probability about n^2 / 2^53)
            for rows in blocks:
                sources[:, rows] = rows[np.argsort(draws[:, rows], axis=1)]
            found = self.search.best_many(data, np.ones((m, size)), sources, beat=observed)
            for i, one in enumerate(found):
                if one is not None and one[0] >= observed - 1e-12:
                    exceed += 1
                if exceed >= decided and _EARLY_STOP:
                    used = done + i + 1
                    # the generator ends where a full run leaves it
                    self.rng.random((self.n_permutations - done - m, size))
                    return (1 + exceed) / (1 + used)
            done += m
        return (1 + exceed) / (1 + self.n_permutations)

    def _stability(self, data: Node, rule: Rule):
        size = data.rows.size
        W = np.stack([np.bincount(self.rng.integers(0, size, size), minlength=size)
                      for _ in range(N_BOOTSTRAP)]).astype(float)
        present = None
        same = 0
        for start in range(0, N_BOOTSTRAP, self.search.batch(data)):
            for found in self.search.best_many(data, W[start:start + self.search.batch(data)]):
                if found is None or found[1].j != rule.j:
                    continue
                other = found[1]
                if rule.left is not None:
                    assert other.left is not None
                    if present is None:
                        present = set(np.unique(self.dataset.values[data.rows, rule.j]).tolist())
                    if other.left == rule.left or present - other.left == rule.left:
                        same += 1
                elif abs(other.position - rule.position) <= 1 / N_THRESHOLDS + 1e-9:
                    same += 1
        return same / N_BOOTSTRAP

    def _heldout(self, data: Node):
        size = data.rows.size
        half = np.zeros(size)
        half[self.rng.permutation(size)[:size // 2]] = 1.0
        found = self.search.best(data, half)
        if found is None:
            return 0.0
        rule = found[1]
        other = 1.0 - half
        total = data.ss(other)[0]
        if total <= 0:
            return 0.0
        column = self.search.cols.index(rule.j)
        left = rule.goes_left(data.Z[:, column])
        (ss_left, ss_right), nl, nr = data.split_ss_many(
            other[None, :], (~left).astype(np.intp)[None, :], 2)
        if nl[0, 0] == 0 or nr[0, 0] == 0:
            return 0.0
        return float(1.0 - max(ss_left[0, 0] + ss_right[0, 0], 0.0) / total)


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def _conditions(split: Split, right_levels):
    if split.levels is not None:
        def within(levels):
            return f"{split.feature} in {{{', '.join(str(v) for v in levels)}}}"
        return within(split.levels), within(right_levels)
    return (f"{split.feature} <= {split.threshold:.4g}", f"{split.feature} > {split.threshold:.4g}")


def _region_name(path):
    return " & ".join(path) if path else "all"
