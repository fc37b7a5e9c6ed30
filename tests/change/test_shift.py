"""ml.shift: the change of a mean shared among the features by a Shapley decomposition.

Oracles: the Shapley values of the game over every (reference row, current row)
pair, enumerated here (the estimator's expectation over its pairings and orders);
a shift planted in one feature; the null (one distribution): every value 0.
"""

from itertools import combinations
from math import factorial

import numpy as np
import pytest

import modellens as ml


def brute_force_shift(g, ref, cur, y_ref=None, y_cur=None):
    """Shapley values of v(S) = mean over all pairs (i, k) of g(ref_i with S from cur_k).

    With labels the last player is the label (taken from cur_k when in S)."""
    d = ref.shape[1]
    players = d + (y_ref is not None)
    i, k = np.meshgrid(np.arange(len(ref)), np.arange(len(cur)), indexing="ij")
    i, k = i.ravel(), k.ravel()

    def v(S):
        rows = ref[i].copy()
        feats = [j for j in S if j < d]
        rows[:, feats] = cur[k][:, feats]
        if y_ref is None:
            return g(rows, None).mean()
        y = y_cur[k] if d in S else y_ref[i]
        return g(rows, y).mean()

    worth = {S: v(S) for n in range(players + 1) for S in combinations(range(players), n)}
    phi = np.zeros(players)
    for j in range(players):
        others = [p for p in range(players) if p != j]
        for n in range(players):
            w = factorial(n) * factorial(players - n - 1) / factorial(players)
            for S in combinations(others, n):
                phi[j] += w * (worth[tuple(sorted(S + (j,)))] - worth[S])
    return phi


def f(A):
    return 2.0 * A[:, 0] + A[:, 1] * A[:, 2] + np.sin(A[:, 2])


def _shifted(seed, n=40):
    rng = np.random.default_rng(seed)
    cov = [[1, 0.6, 0], [0.6, 1, 0.3], [0, 0.3, 1]]
    ref = rng.multivariate_normal([0, 0, 0], cov, size=n)
    cur = rng.multivariate_normal([0.5, 0.3, -0.2], cov, size=n)
    return ref, cur


def test_expectation_equals_brute_force():
    ref, cur = _shifted(0, n=30)
    truth = brute_force_shift(lambda R, y: f(R), ref, cur)
    runs = np.array([ml.shift(f, ref, cur, n_pairs=30, random_state=s).contribution
                     for s in range(60)])
    se = runs.std(axis=0, ddof=1) / np.sqrt(len(runs))
    assert np.all(np.abs(runs.mean(axis=0) - truth) <= 4 * se + 1e-12)
    # a wrong game (say, features moved jointly) is further off than that
    assert np.abs(truth).max() > 0.2


def test_with_labels_equals_brute_force():
    ref, cur = _shifted(1, n=25)
    rng = np.random.default_rng(2)
    y_ref, y_cur = f(ref) + rng.normal(size=25), f(cur) + 1.0 + rng.normal(size=25)
    truth = brute_force_shift(lambda R, y: (f(R) - y) ** 2, ref, cur, y_ref, y_cur)
    runs = np.array([ml.shift(f, ref, cur, y_ref, y_cur, n_pairs=25, random_state=s)
                     .contribution for s in range(60)])
    se = runs.std(axis=0, ddof=1) / np.sqrt(len(runs))
    assert np.all(np.abs(runs.mean(axis=0) - truth) <= 4 * se + 1e-12)
    s = ml.shift(f, ref, cur, y_ref, y_cur, random_state=0)
    assert s.metric == "squared_error" and s.feature_names[-1] == "(labels)"


def test_planted_shift_carries_the_change():
    rng = np.random.default_rng(3)
    ref = rng.normal(size=(3000, 4))
    cur = rng.normal(size=(3000, 4))
    cur[:, 1] += 0.5
    model = lambda A: A[:, 0] * A[:, 2] + 2.0 * A[:, 1] + np.cos(A[:, 3])  # noqa: E731
    s = ml.shift(model, ref, cur, random_state=0)
    frame = s.to_frame().set_index("feature")
    assert abs(frame.contribution["x1"] - 1.0) <= 4 * frame["std"]["x1"]
    others = frame.loc[["x0", "x2", "x3"]]
    assert np.all(np.abs(others.contribution) <= 4 * others["std"])
    assert frame.p_value["x1"] < 1e-6
    # the contributions and the unexplained part add up to the full data's change
    assert np.isclose(frame.contribution.sum(), s.total_change)
    assert np.isclose(s.total_change, model(cur).mean() - model(ref).mean())
    assert list(s.to_frame().columns) == ["feature", "contribution", "std", "p_value",
                                          "p_value_unadjusted"]


def test_classifier_metrics_and_refusals():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(4)
    ref = rng.normal(size=(400, 2))
    cur = ref + [0.0, 1.0]
    y_ref, y_cur = (ref[:, 0] > 0).astype(int), (cur[:, 0] > 0).astype(int)
    clf = LogisticRegression().fit(ref, y_ref)
    for metric in ("log_loss", "accuracy"):
        s = ml.shift(clf, ref, cur, y_ref, y_cur, metric=metric, random_state=0)
        assert np.isfinite(s.contribution).all()
    acc = ml.shift(clf, ref, cur, y_ref, y_cur, metric="accuracy", random_state=0)
    want = np.mean(clf.predict(cur) == y_cur) - np.mean(clf.predict(ref) == y_ref)
    assert np.isclose(acc.total_change, want)
    with pytest.raises(ml.InvalidParameterError, match="whole table"):
        ml.shift(clf, ref, cur, y_ref, y_cur, metric="auc")
    with pytest.raises(ml.InvalidParameterError, match="both"):
        ml.shift(clf, ref, cur, y_ref)
    with pytest.raises(ml.InvalidParameterError, match="n_pairs"):
        ml.shift(clf, ref, cur, n_pairs=401)


def test_same_seed_same_numbers_and_round_trip():
    import json

    ref, cur = _shifted(5, n=200)
    a, b = (ml.shift(f, ref, cur, random_state=7) for _ in range(2))
    np.testing.assert_array_equal(a.contribution, b.contribution)
    back = ml.Shift.from_dict(json.loads(json.dumps(a.to_dict())))
    assert back.to_frame().equals(a.to_frame())


def _null_and_planted(seed, shift=0.0, n=4000, d=5):
    rng = np.random.default_rng(seed)
    w = np.arange(1.0, d + 1)
    ref, cur = rng.normal(size=(n, d)), rng.normal(size=(n, d))
    cur[:, 0] += shift
    s = ml.shift(lambda A: A @ w, ref, cur, n_pairs=n, random_state=seed)
    return s.p_value_unadjusted[0], s.p_value.min(), s.p_value[0]


def test_calibration_smoke():
    """A few null and planted simulations (the study below runs 1,000)."""
    null = np.array([_null_and_planted(s, n=500) for s in range(30)])
    assert np.mean(null[:, 0] < 0.05) <= 0.2
    planted = np.array([_null_and_planted(s, shift=0.3, n=500) for s in range(10)])
    assert np.mean(planted[:, 2] < 0.05) >= 0.8


@pytest.mark.study
def test_calibration_study():
    """1,000 null simulations (two samples of 4,000 rows, 5 features, one distribution):
    the per-feature test rejects at 5% +- 1.5%, Holm's family-wise rate at most that;
    a planted shift of a tenth of the feature's attribution std (x0 moved by 0.1 sd, its
    attribution w0 (x0 - mean) has std w0) is found (Holm, 5%) in at least 90% of 200 runs."""
    null = np.array([_null_and_planted(s) for s in range(1000)])
    assert 0.035 <= np.mean(null[:, 0] < 0.05) <= 0.065
    assert np.mean(null[:, 1] < 0.05) <= 0.065
    planted = np.array([_null_and_planted(10_000 + s, shift=0.1) for s in range(200)])
    assert np.mean(planted[:, 2] < 0.05) >= 0.9
