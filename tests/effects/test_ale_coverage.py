"""Coverage of ALE's confidence band, against truths known in closed form.

The model is ``f(x) = x0^2 + x0 * x2 + x1`` with ``x0, x1, x2`` independent
N(0, 1).  A point in bin ``k`` (edges ``z``) has the local effect
``z_k^2 - z_{k-1}^2 + (z_k - z_{k-1}) x2``: it varies between points through
``x2`` (so the band has something to cover), and given the ``x0`` values (hence
the edges and the bin counts) its expectation is ``z_k^2 - z_{k-1}^2``, as
``E[x2 | x0] = 0``.  The target of the band is therefore the accumulation of
these exact bin means, ``z_k^2 - z_0^2``, centred like ALE centres (by the
count-weighted bin midpoints, with this sample's counts).  Given ``x0`` the
estimate is exactly Gaussian around that target (the ``x2`` are normal), so a
correctly scaled band covers it at its nominal level, up to the small cost of
estimating the variances.
"""

import functools

import numpy as np
import pandas as pd
import pytest

import modellens as ml

N_ROWS, N_BINS = 500, 8


def f(X):
    return X[:, 0] ** 2 + X[:, 0] * X[:, 2] + X[:, 1]


def centre_like_ale(curve, counts):
    """Centre values at the edges by the count-weighted mean of the bin midpoints."""
    mid = (curve[:-1] + curve[1:]) / 2
    return curve - np.dot(counts, mid) / counts.sum()


def covered(seeds, confidence):
    """``(len(seeds), edges)`` booleans: does the band cover the conditional truth there?"""
    return np.array([_covered(seed, confidence) for seed in seeds])


@functools.lru_cache(maxsize=None)
def _covered(seed, confidence):
    """One seed's row of :func:`covered`, kept: in a run of the whole file with its studies
    (``-m "study or not study"``) the smoke's seeds are the studies' first, computed once."""
    X = np.random.default_rng(seed).normal(size=(N_ROWS, 3))
    eff = ml.ale(f, X, features="x0", bins=N_BINS, confidence=confidence)["x0"]
    z = np.asarray(eff.grid, dtype=float)
    assert z.size == N_BINS + 1 and z[0] == X[:, 0].min() and z[-1] == X[:, 0].max()
    assert eff.band.level == confidence
    # bins counted here from the edges: (z_{k-1}, z_k], the first one closed
    k = np.clip(np.searchsorted(z, X[:, 0], side="left") - 1, 0, N_BINS - 1)
    counts = np.bincount(k, minlength=N_BINS)
    truth = centre_like_ale(z ** 2 - z[0] ** 2, counts)
    lower, upper = np.asarray(eff.band.lower), np.asarray(eff.band.upper)
    assert lower.shape == upper.shape == z.shape
    # a band around the estimate, symmetric about it
    np.testing.assert_allclose(upper - eff.values, eff.values - lower, rtol=1e-9, atol=1e-12)
    return (lower <= truth) & (truth <= upper)


@pytest.mark.study
@pytest.mark.timeout(1800)
def test_ale_95_band_covers_the_conditional_truth():
    hits = covered(range(1000), 0.95)
    share = hits.mean()
    # 1000 seeds x 9 edges: the share's Monte Carlo standard deviation, measured over
    # disjoint blocks of seeds, is about 0.0026, so +/- 0.015 is ~6 SD of slack (these
    # fixed seeds give 0.9536).  A band scaled by 0.85 covers 0.914 and one scaled by
    # 1.2 covers 0.983 here; half (0.68) or double width (1.000) fail by far.
    assert 0.935 < share < 0.965, share
    # every edge on its own (1000 draws each: SD ~0.007; observed 0.946 .. 0.961): a
    # band that ignored the centring, for instance, has no width at the first edge
    per_edge = hits.mean(axis=0)
    assert np.all((0.925 < per_edge) & (per_edge < 0.975)), per_edge


@pytest.mark.study
@pytest.mark.timeout(1800)
def test_ale_band_level_is_the_one_asked_for():
    hits = covered(range(1000), 0.8)
    share = hits.mean()
    # SD of the share ~0.007 at 1000 seeds (0.011 measured at 400); the fixed seeds give
    # ~0.80.  +/- 0.03 rejects a band that kept the 95% quantile (0.95) and one that
    # took the level as one-sided (z = 0.84: about 0.60).
    assert 0.77 < share < 0.83, share


# ------------------------------------------------------------------- levels
# A level feature (discrete numeric, or categorical) with f = a[x0] + b[x0] * x2: a point at
# level t steps to t+1 and from t-1, with local effects a[t+1] - a[t] + (b[t+1] - b[t]) x2,
# whose expectation is the step of ``a``.  Accumulated and centred by the level frequencies
# the truth is ``a`` minus its frequency-weighted mean, whatever order the levels take.
# The points of level t enter both step t-1 (stepping down) and step t (stepping up), so
# adjacent steps are correlated: positively when b keeps rising, negatively when it zig-zags.
# A band that takes the steps as independent covers ~0.905 and ~0.990 in the two discrete
# cases below and ~0.91 in the categorical one (measured on the committed code, 51b0d69).
A_LEVELS = np.array([0.0, 1.0, 0.5, 2.0, 1.5, 3.0])


def _level_hits(seeds, b, *, categorical=False, n=400):
    L = b.size
    a = A_LEVELS[:L]
    names = np.array(list("pqrstu"))[:L]
    hits = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        t = rng.integers(0, L, n)
        x2 = rng.normal(size=n)
        if categorical:
            # an unordered categorical: its levels are ordered by MDS on the other features
            X = pd.DataFrame({"g": pd.Categorical(names[t], categories=list(names)),
                              "x1": t + rng.normal(size=n), "x2": x2})

            def model(df):
                c = df["g"].cat.codes.to_numpy()
                return a[c] + b[c] * df["x2"].to_numpy()

            eff = ml.ale(model, X, features="g")["g"]
            assert eff.kind == "categorical"
            levels = np.searchsorted(names, np.asarray(eff.grid).astype(str))
        else:
            X = np.column_stack([t.astype(float), rng.normal(size=n), x2])

            def model(Z):
                c = Z[:, 0].astype(int)
                return a[c] + b[c] * Z[:, 2]

            eff = ml.ale(model, X, features="x0")["x0"]
            assert eff.extra.get("discrete")
            levels = np.asarray(eff.grid).astype(int)
        assert eff.band.level == 0.95 and sorted(levels) == list(range(L))
        counts = np.bincount(t, minlength=L)[levels]
        truth = a[levels] - np.dot(counts, a[levels]) / counts.sum()
        hits.append((eff.band.lower <= truth) & (truth <= eff.band.upper))
    return np.array(hits)


@pytest.mark.study
@pytest.mark.timeout(1800)
def test_binary_feature_band_covers_the_truth():
    # two levels: one step, so no question of how steps depend on each other
    hits = _level_hits(range(600), np.array([0.0, 1.0]))
    # 600 seeds, 2 fully dependent edges: SD ~0.009; observed ~0.957
    assert 0.925 < hits.mean() < 0.975, hits.mean()


@pytest.mark.study
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("b,categorical,seeds", [
    (np.arange(6.0), False, 400),
    (np.array([0.0, 1, 0, 1, 0, 1]), False, 400),
    (np.arange(5.0), True, 300)],
    ids=["discrete, same-sign steps", "discrete, alternating steps", "categorical"])
def test_level_feature_band_covers_the_truth(b, categorical, seeds):
    hits = _level_hits(range(seeds), b, categorical=categorical)
    # SD of the share ~0.005-0.007 here (several hundred seeds x 5-6 dependent edges); a
    # band with the steps' covariance covers 0.957 / 0.945 / 0.953 on these seeds, one
    # without it 0.905 / 0.990 / 0.911
    assert 0.93 < hits.mean() < 0.97, hits.mean()


def test_smoke_bands_cover_on_a_few_seeds():
    """The fast loop's version of the studies above (the same checks, 30 and 20 seeds)."""
    share = covered(range(30), 0.95).mean()
    # 30 seeds x 9 edges: SD about 0.013 at 95%; a band of half width covers about 0.68
    assert share > 0.88, share
    assert covered(range(30), 0.8).mean() < 0.9  # the level asked for, not 95%
    levels = _level_hits(range(20), np.arange(5.0), categorical=True)
    assert levels.mean() > 0.85, levels.mean()
