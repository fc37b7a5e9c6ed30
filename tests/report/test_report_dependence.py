"""The data section's dependence score against known dependence, and its fit against the
closed-form ridge solution it iterates toward."""

import numpy as np
import pandas as pd
import pytest

from modellens.data import Dataset
from modellens.report._dependence import additive_oof, dependence


def test_scores_recover_known_dependence():
    rng = np.random.default_rng(0)
    n = 1000
    x0 = rng.normal(size=n)
    x2 = rng.uniform(-2, 2, n)
    flip = rng.random(n) < 0.1
    X = pd.DataFrame({
        "x0": x0,
        "x1": x0 + 0.5 * rng.normal(size=n),  # R^2 = 1 / (1 + 0.25) = 0.8
        "x2": x2,
        "x3": x2 ** 2 + 0.5 * rng.normal(size=n),  # R^2 = 1.4222 / (1.4222 + 0.25) = 0.851
        "x4": rng.normal(size=n),  # independent: 0
        # the sign of x2, flipped on 10% of the rows: balanced accuracy 0.9, adjusted 0.8
        "sign": pd.Categorical(np.where((x2 > 0) ^ flip, "pos", "neg")),
    })
    X.loc[rng.random(n) < 0.05, "x4"] = np.nan
    out = dependence(Dataset.from_data(X), {}, random_state=0)
    score = {name: entry["score"] for name, entry in zip(X.columns, out)}
    assert score["x1"] == pytest.approx(0.8, abs=0.05)
    assert score["x3"] == pytest.approx(1.4222 / 1.6722, abs=0.05)
    assert score["sign"] == pytest.approx(0.8, abs=0.05)
    assert -0.1 < score["x4"] < 0.05


def test_boosting_reaches_the_least_squares_fit_of_each_fold():
    # run to convergence (no early stop), componentwise boosting solves the normal
    # equations of the additive model: per fold, least squares on every input
    from scipy import sparse

    rng = np.random.default_rng(1)
    n, folds = 120, 3
    codes = [rng.integers(0, 5, n), rng.integers(0, 3, n)]
    line = rng.normal(size=n)
    Y = np.column_stack([codes[0] * 0.7 - (codes[1] == 2) + line + rng.normal(size=n),
                         rng.normal(size=n)])
    design = np.column_stack([np.eye(5)[codes[0]], np.eye(3)[codes[1]], line])
    blocks = [sparse.csr_matrix(design[:, :5]), sparse.csr_matrix(design[:, 5:8]),
              sparse.csr_matrix(design[:, 8:])]
    fold = np.arange(n) % folds
    ours = additive_oof(blocks, Y, fold, folds, steps=3000, rate=0.5, patience=None)
    want = np.empty_like(Y)
    for f in range(folds):
        train, test = fold != f, fold == f
        mean = Y[train].mean(axis=0)
        beta = np.linalg.lstsq(design[train], Y[train] - mean, rcond=None)[0]
        want[test] = mean + design[test] @ beta
    np.testing.assert_allclose(ours, want, rtol=0, atol=1e-6)


def test_softmax_boosting_reaches_each_folds_bin_frequencies():
    # one input of bins, run to convergence: the multinomial fit of a free log-odds per
    # bin is each bin's class frequencies among the fold's training rows
    from scipy import sparse

    rng = np.random.default_rng(2)
    n, folds = 300, 3
    bins = rng.integers(0, 4, n)
    classes = (bins + rng.integers(0, 3, n)) % 3  # every class in every bin, unevenly
    Y = np.eye(3)[classes]
    fold = np.arange(n) % folds
    ours = additive_oof([sparse.csr_matrix(np.eye(4)[bins])], Y, fold, folds, softmax=True,
                        steps=500, rate=0.5, patience=None)
    want = np.empty_like(Y)
    for f in range(folds):
        train = fold != f
        for b in range(4):
            at = fold == f
            want[at & (bins == b)] = Y[train & (bins == b)].mean(axis=0)
    np.testing.assert_allclose(ours, want, rtol=0, atol=1e-6)
