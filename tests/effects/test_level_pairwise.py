"""The KS distances between a column's levels are the same numbers, found in C (issue 40).

A 1,000-level column in the report's ALE ordered its levels with an ``(L, Q)``
temporary per level and per other column (116 s of a 50,000 x 101 report);
scipy's ``cdist(..., "chebyshev")`` gives the same maxima (a max is exact in
any order).  The reference below is the loop as it was.
"""

import numpy as np

from modellens.effects._categorical import _pairwise


def _loop(profile, scale):
    dist = np.zeros((profile.shape[0],) * 2)
    for level in range(profile.shape[0]):
        gap = np.abs(profile - profile[level])
        dist[level] = gap.max(axis=1) if scale is None else scale * gap.sum(axis=1)
    return np.nan_to_num(dist, nan=0.0)


def test_ks_distances_equal_the_loop_exactly_with_levels_without_rows():
    rng = np.random.default_rng(3)
    for n_levels in (1, 2, 7, 60):
        profile = np.sort(rng.random((n_levels, 100)), axis=1)
        profile[rng.random(n_levels) < 0.2] = np.nan  # levels without rows
        profile[0, 5] = np.nan  # and a stray missing value: that level's distances are 0
        for scale in (None, 0.5):
            np.testing.assert_array_equal(_pairwise(profile, scale), _loop(profile, scale))


def _cdf_loop(pos, x, n_levels):
    from modellens.effects._categorical import N_QUANTILES

    points = np.quantile(x, np.linspace(0.0, 1.0, N_QUANTILES))
    out = np.full((n_levels, points.size), np.nan)
    for level in range(n_levels):
        block = np.sort(x[pos == level])
        if block.size:
            out[level] = np.searchsorted(block, points, side="right") / block.size
    return out


def test_cdf_profiles_equal_the_sort_and_search_per_level_exactly():
    from modellens.effects._categorical import _cdf_profiles

    rng = np.random.default_rng(4)
    for n_levels in (1, 3, 40):
        n = 500
        pos = rng.integers(0, n_levels, n)
        pos[pos == n_levels - 1] = 0 if n_levels > 1 else pos[pos == n_levels - 1]  # empty
        x = np.round(rng.normal(size=n), 1)  # ties, and points equal to values
        np.testing.assert_array_equal(_cdf_profiles(pos, x, n_levels),
                                      _cdf_loop(pos, x, n_levels))
