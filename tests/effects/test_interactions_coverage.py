"""Coverage of the jackknife standard errors of ml.interactions, against closed-form truths.

The model is ``f = x0 x1 + x0 + x1 + x2 / 2`` on independent U(-1, 1)
features (mean 0, variance 1/3).  Its partial dependences are ``F_0 = x0``,
``F_1 = x1``, ``F_-0 = x1 + x2 / 2`` and ``F_01 = x0 x1 + x0 + x1``, so the
pure interaction is ``x0 x1`` (E[(x0 x1)^2] = 1/9) and the truths are

* overall ``H2_0 = H2_1 = (1/9) / Var f`` with ``Var f = 1/9 + 2/3 + 1/12``;
* pairwise ``H2_01 = (1/9) / (1/9 + 2/3) = 1/7``.

Each seed draws a fresh data set of ``N_ROWS`` rows, uses all of them, and
builds the interval ``h2 +/- t(0.975, G - 1) * std`` (G = 20 groups).  The
estimator's bias is O(1/n) (about 0.0005 here, against a standard error of
about 0.015), so the intervals should cover the truths at about 95%.
"""


import functools

import numpy as np
import pytest
from scipy import stats

import modellens as ml

N_ROWS, SEEDS = 200, 300
VAR_F = 1 / 9 + 2 / 3 + 1 / 12
TRUTH = {"x0": (1 / 9) / VAR_F, "x1": (1 / 9) / VAR_F, ("x0", "x1"): 1 / 7}


def f(A):
    return A[:, 0] * A[:, 1] + A[:, 0] + A[:, 1] + 0.5 * A[:, 2]


@functools.lru_cache(maxsize=None)
def _seed(seed):
    """One seed's hits (per truth) and standard error, kept: in a run of the whole file
    with its study (``-m "study or not study"``) the smoke's seeds are the study's first,
    computed once."""
    q = stats.t.ppf(0.975, 19)
    X = np.random.default_rng(seed).uniform(-1, 1, size=(N_ROWS, 3))
    h = ml.interactions(f, X, sample=None, random_state=seed, progress=False)
    assert h.n_groups == 20
    hits = {j: abs(h.overall[j] - TRUTH[j]) <= q * h.overall_std[j] for j in ("x0", "x1")}
    row = h.pairwise.set_index(["feature_1", "feature_2"]).loc[("x0", "x1")]
    hits[("x0", "x1")] = abs(row.h2 - TRUTH[("x0", "x1")]) <= q * row["std"]
    return hits, h.overall_std["x0"]


def _hits(seeds):
    """Per truth, whether each seed's interval holds it; and the seeds' standard errors."""
    hits, widths = {k: [] for k in TRUTH}, []
    for seed in seeds:
        one, width = _seed(seed)
        for key in TRUTH:
            hits[key].append(one[key])
        widths.append(width)
    return hits, widths


@pytest.mark.study
@pytest.mark.timeout(1800)
def test_jackknife_intervals_cover_the_truth_at_their_nominal_rate():
    hits, widths = _hits(range(SEEDS))
    for key, hit in hits.items():
        share = np.mean(hit)
        # 300 seeds: the share's binomial SD is 0.0126; +/- 0.045 is 3.6 SD, while
        # standard errors off by 25% (coverage 0.88 or 0.99) fall outside
        assert abs(share - 0.95) < 0.045, (key, share)
    # and they are not merely wide: the standard error is of the size of the sampling SD
    # (the delta-method SD of a ratio of means at n = 200 is about 0.015)
    assert 0.008 < np.mean(widths) < 0.03


def test_smoke_jackknife_intervals_on_a_few_seeds():
    """The fast loop's version of the study above: 20 seeds, 60 intervals."""
    hits, widths = _hits(range(20))
    share = np.mean([h for hit in hits.values() for h in hit])
    assert share >= 0.8, share  # SD about 0.028 at 95%
    assert 0.008 < np.mean(widths) < 0.03
