"""M-plots as a plan: the neighbourhood rules and a variance that does not cancel."""

import numpy as np
import pytest

import modellens as ml


@pytest.mark.parametrize("offset", [0.0, 1e8])
def test_mplot_std_matches_numpy_per_bin_at_a_large_offset(offset):
    """E[p^2] - E[p]^2 from running sums returned std [22.9, 57.9, 0.0, ...] here (truth ~3e-5)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(100_000, 2))
    m = ml.mplot(lambda A: offset + 1e-3 * A[:, 0], X, ["x0"], grid=10)["x0"]
    p = offset + 1e-3 * X[:, 0]
    x = X[:, 0]
    # the oracle: numpy's std of the predictions of each bin's rows (bins: rank deciles)
    order = np.argsort(x, kind="stable")
    truth = [p[order[k * 10_000:(k + 1) * 10_000]].std() for k in range(10)]
    np.testing.assert_array_equal(m.counts, np.full(10, 10_000))
    np.testing.assert_allclose(m.std, truth, rtol=1e-6)
    np.testing.assert_allclose(m.band.upper - m.values, truth, rtol=1e-3)


def test_mplot_std_of_overlapping_windows_and_levels_at_an_offset():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(size=20_000), rng.integers(0, 4, 20_000)])
    f = lambda A: 1e9 + 1e-2 * A[:, 0] + 1e-3 * A[:, 1]  # noqa: E731
    p = f(X)
    points = np.array([-1.0, 0.0, 1.0])
    win = ml.mplot(f, X, ["x0"], grid=points, window=0.5)["x0"]
    xs_order = np.argsort(X[:, 0], kind="stable")
    from modellens.effects.mplot import window_neighbourhoods

    lo, hi = window_neighbourhoods(X[xs_order, 0], points, 0.5)
    assert (hi - lo == 10_000).all() and (lo[1:] < hi[:-1]).all()  # they overlap
    truth = [p[xs_order[a:b]].std() for a, b in zip(lo, hi)]
    np.testing.assert_allclose(win.std, truth, rtol=1e-6)
    lev = ml.mplot(f, X, ["x1"], grid=10)["x1"]
    truth = [p[X[:, 1] == v].std() for v in range(4)]
    np.testing.assert_allclose(lev.std, truth, rtol=1e-6)


def test_neighbourhood_rules():
    from modellens.effects.mplot import (level_neighbourhoods, quantile_neighbourhoods,
                                         window_neighbourhoods)

    xs = np.array([0, 1, 1, 1, 2, 3, 4, 5, 6, 7], dtype=float)
    lo, hi = level_neighbourhoods(xs, np.array([1.0, 4.0]))
    assert lo.tolist() == [1, 6] and hi.tolist() == [4, 7]
    lo, hi, points = quantile_neighbourhoods(xs, 5)
    # a cut after the second value would split the run of 1s: it moves to its end
    assert lo.tolist() == [0, 4, 6, 8] and hi.tolist() == [4, 6, 8, 10]
    assert points.tolist() == [1.0, 2.0, 4.0, 6.0]
    lo, hi = window_neighbourhoods(xs, np.array([0.0, 7.0]), 0.4)
    assert lo.tolist() == [0, 6] and hi.tolist() == [4, 10]  # shifted inwards, full
