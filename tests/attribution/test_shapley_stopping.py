"""The stopping rule of the sampling Shapley estimators (tol=, tol_abs=, max_evals=)."""

import json
import warnings

import numpy as np
import pytest

import modellens as ml
from modellens._validation import InvalidParameterError, ModellensWarning
from shapley_games import correlated_normal, exact_values, interacting

SAMPLING = ["kernel", "permutation"]


@pytest.fixture(scope="module")
def game10():
    """10 correlated features, a model with 3- and 4-way interactions, exact values."""
    rng = np.random.default_rng(3)
    X = correlated_normal(300, 10, 0.5, rng)
    bg, rows = X[:25], X[100:112]
    return rows, bg, exact_values(interacting, rows, bg)


@pytest.mark.parametrize("algorithm", SAMPLING)
@pytest.mark.parametrize("tol", [0.05, 0.03])
def test_stops_where_the_exact_error_is_within_the_tolerance(game10, algorithm, tol):
    rows, bg, exact = game10
    attr = ml.shapley(interacting, rows, background=bg, algorithm=algorithm, tol=tol,
                      max_evals=8000, random_state=0)
    assert attr.sampling.converged.all()
    spread = np.ptp(exact, axis=1, keepdims=True)
    scaled = (attr.values - exact) / (tol * spread)
    # the rule bounds each row's largest standard error by tol * spread, so the errors in
    # units of that bound are at most about N(0, 1): their mean square is below 1 (a rule
    # that stopped early or errors reported too small give several times that)
    assert np.mean(scaled ** 2) < 1.0
    assert np.abs(scaled).max() < 4.0
    # and the rule's own check holds on what it reports
    assert (np.nanmax(attr.std, axis=1) <= tol * np.ptp(attr.values, axis=1)).all()


@pytest.mark.filterwarnings("ignore:.*did not reach the tolerance")  # permutation's cap
@pytest.mark.parametrize("algorithm", SAMPLING)
def test_tighter_tolerance_costs_more_and_errs_less(game10, algorithm):
    rows, bg, exact = game10
    err = np.zeros(2)
    for seed in (1, 2, 3):  # one seed's squared error is itself noisy: sum three
        loose, tight = (ml.shapley(interacting, rows, background=bg, algorithm=algorithm,
                                   tol=t, max_evals=6000, random_state=seed)
                        for t in (0.05, 0.01))
        assert tight.sampling.model_rows.sum() > 2 * loose.sampling.model_rows.sum()
        err += [np.sum((a.values - exact) ** 2) for a in (loose, tight)]
    # the tight rule spends about 3x the rows (permutation sampling reaches its cap on half
    # the rows), so its squared error falls at least 2x; a rule that did not sharpen the
    # values would leave the ratio near 1
    assert err[1] < err[0] / 2


@pytest.mark.parametrize("algorithm", SAMPLING)
def test_rows_that_converge_early_stop_paying(algorithm):
    # the background holds 0 in features 0-3, so the four-way term is worth something only
    # when all four are in the coalition and the row's x0..x3 are non-zero: rows with
    # x0 = 0 play an additive game (no sampling error), the others a four-way interaction
    rng = np.random.default_rng(5)
    d, m = 9, 12
    bg = rng.normal(size=(m, d))
    bg[:, :4] = 0.0
    rows = rng.normal(size=(8, d))
    rows[:4, 0] = 0.0
    rows[4:, :4] = rng.uniform(1.0, 1.5, size=(4, 4))

    def f(A):
        return A.sum(axis=1) + 4.0 * A[:, 0] * A[:, 1] * A[:, 2] * A[:, 3]

    attr = ml.shapley(f, rows, background=bg, algorithm=algorithm, tol=0.05, max_evals=8000,
                      random_state=0)
    exact = exact_values(f, rows, bg)
    assert attr.sampling.converged.all()
    used = attr.sampling.model_rows
    # the additive rows stop after the first round (the cost of that budget alone); every
    # interacting row draws more
    first = {"kernel": {"n_samples": 8 * d}, "permutation": {"n_permutations": 20}}[algorithm]
    fixed = ml.shapley(f, rows, background=bg, algorithm=algorithm, random_state=0, **first)
    assert np.array_equal(used[:4], fixed.sampling.model_rows[:4])
    assert used[:4].max() < used[4:].min()
    assert np.allclose(attr.values[:4], exact[:4], atol=1e-10)
    # each row pays its coalitions times the background rows plus f(x); v(empty) is shared
    assert np.array_equal(used, np.asarray(attr.diagnostics["n_coalitions"]) * m + 1)
    assert attr.diagnostics["n_model_rows"] == used.sum() + m


@pytest.mark.parametrize("algorithm", SAMPLING)
def test_cap_warns_with_the_rows_and_their_errors(game10, algorithm):
    rows, bg, exact = game10
    with pytest.warns(ModellensWarning, match=r"did not reach the tolerance within "
                                              r"max_evals=200 .*rows 0 \(standard error"):
        attr = ml.shapley(interacting, rows, background=bg, algorithm=algorithm, tol=1e-4,
                          max_evals=200, random_state=0)
    assert not attr.sampling.converged.any()
    assert (attr.diagnostics["n_coalitions"] <= 200).all()
    assert np.isfinite(attr.values).all() and np.isfinite(attr.std).all()


def test_tol_abs_is_an_absolute_bound(game10):
    rows, bg, exact = game10
    attr = ml.shapley(interacting, rows, background=bg, algorithm="kernel", tol_abs=0.01,
                      max_evals=5000, random_state=2)
    assert attr.sampling.converged.all()
    assert (np.nanmax(attr.std, axis=1) <= 0.01).all()
    assert np.mean(((attr.values - exact) / 0.01) ** 2) < 1.0
    assert attr.sampling.tol is None and attr.sampling.tol_abs == 0.01


def test_same_seed_same_numbers_and_the_fields_round_trip(game10):
    rows, bg, _ = game10
    kw = dict(background=bg, algorithm="kernel", tol=0.05, random_state=7)
    a, b = ml.shapley(interacting, rows, **kw), ml.shapley(interacting, rows, **kw)
    assert np.array_equal(a.values, b.values)
    assert np.array_equal(a.sampling.model_rows, b.sampling.model_rows)
    back = ml.Attributions.from_dict(json.loads(json.dumps(a.to_dict())))
    assert np.array_equal(back.sampling.converged, a.sampling.converged)
    assert np.array_equal(back.sampling.model_rows, a.sampling.model_rows)
    assert back.sampling.tol == 0.05
    frame = a.to_frame()
    assert frame["converged"].all()
    assert np.array_equal(frame.groupby("row")["model_rows"].first().to_numpy(),
                          a.sampling.model_rows)
    part = a[2:5]
    assert np.array_equal(part.sampling.model_rows, a.sampling.model_rows[2:5])


@pytest.mark.parametrize("algorithm", SAMPLING)
def test_a_first_round_that_suffices_is_the_fixed_budget(game10, algorithm):
    # rows converged in the first round draw nothing more: the numbers of that budget
    # (for KernelSHAP one too small for the proxy, which the stopping rule does not use)
    rows, bg, _ = game10
    budget = {"kernel": {"n_samples": 40}, "permutation": {"n_permutations": 20}}[algorithm]
    fixed = ml.shapley(interacting, rows, background=bg, algorithm=algorithm, random_state=4,
                       **budget)
    stopped = ml.shapley(interacting, rows, background=bg, algorithm=algorithm, tol=10.0,
                         random_state=4, **budget)
    assert stopped.sampling.converged.all()
    assert np.array_equal(stopped.values, fixed.values)


def test_every_output_of_a_model_stops_together():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 8))

    def two(A):
        return np.column_stack([interacting(A), np.sin(A[:, 0] * A[:, 2] * A[:, 4])])

    attr = ml.shapley(two, X[:5], background=X[20:40], algorithm="kernel", tol=0.03,
                      random_state=0)
    assert attr.values.shape == (5, 8, 2)
    assert attr.sampling.converged.all()
    spread = np.ptp(attr.values, axis=1)
    assert (np.nanmax(attr.std, axis=1) <= 0.03 * spread + 1e-12).all()
    alone = ml.shapley(lambda A: two(A)[:, 1], X[:5], background=X[20:40], algorithm="kernel",
                       tol=0.03, random_state=0)
    # output 1 alone may stop earlier (output 0 made its rows draw on)
    assert (alone.sampling.model_rows <= attr.sampling.model_rows).all()


def test_text_games_take_the_rule_too():
    words = "good fine bad awful great nice poor dull neat odd".split()

    def predict(texts):
        return np.array([np.tanh(sum(t.count(w) * (i - 4.5) for i, w in enumerate(words)) / 4)
                         * (1 + ("good" in t) * ("great" in t)) for t in texts])

    attr = ml.shapley(predict, " ".join(words), algorithm="permutation", tol=0.05,
                      random_state=0)
    assert attr.sampling.converged.all()
    assert attr.sampling.model_rows[0] == attr.diagnostics["n_coalitions"] + 1


@pytest.mark.parametrize("kw, match", [
    (dict(tol=0), "tol must be a positive number"),
    (dict(tol=-0.1), "tol must be a positive number"),
    (dict(tol=float("nan")), "tol must be a positive number"),
    (dict(tol_abs="0.1"), "tol_abs must be a positive number"),
    (dict(max_evals=100), "max_evals caps the stopping rule: give tol="),
    (dict(tol=0.1, max_evals=1.5), "max_evals must be an integer >= 2"),
])
def test_bad_stopping_options_are_refused(kw, match):
    X = np.random.default_rng(0).normal(size=(20, 4))
    with pytest.raises(InvalidParameterError, match=match):
        ml.shapley(lambda A: A.sum(axis=1), X[:2], background=X, algorithm="kernel", **kw)


def test_tree_shap_takes_no_tolerance():
    from sklearn.ensemble import GradientBoostingRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    model = GradientBoostingRegressor(n_estimators=5, random_state=0).fit(X, X[:, 0])
    with pytest.raises(InvalidParameterError, match="TreeSHAP .* needs no tolerance"):
        ml.shapley(model, X[:2], algorithm="tree", tol=0.02)
    # "auto" on a tree model is exact: the tolerance is met without sampling
    assert ml.shapley(model, X[:2], tol=0.02).method == "shapley-tree"


@pytest.mark.parametrize("algorithm", SAMPLING)
def test_a_linear_model_stops_at_once_on_its_closed_form(algorithm):
    # phi_j = beta_j (x_j - mean of the background's x_j), whatever the correlation; paired
    # samples are exact on it, so every row is done after the first round
    rng = np.random.default_rng(4)
    X = correlated_normal(300, 14, 0.7, rng)
    beta = rng.normal(size=14)
    rows, bg = X[:5], X[100:140]
    attr = ml.shapley(lambda A: A @ beta, rows, background=bg, algorithm=algorithm,
                      tol=1e-3, random_state=0)
    np.testing.assert_allclose(attr.values, (rows - bg.mean(axis=0)) * beta, atol=1e-10)
    assert attr.sampling.converged.all()
    first = {"kernel": 8 * 14, "permutation": None}[algorithm]
    if first is not None:
        assert (np.asarray(attr.diagnostics["n_coalitions"]) <= first).all()
    else:
        assert (attr.sampling.dof == 9).all()  # the first round's 10 pairs, no more


def test_a_cap_too_small_for_an_error_says_so_without_numpy_warnings():
    """max_evals below what one standard error needs: the rows are not converged, and the
    warning says why in words (it printed "standard error nan" after numpy's "All-NaN
    slice encountered")."""
    X = np.random.default_rng(0).normal(size=(20, 13))

    def f(Z):
        return np.tanh(Z).sum(axis=1) + Z[:, 0] * Z[:, 1]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        attr = ml.shapley(f, X[:3], background=X[5:], algorithm="kernel", tol=0.01,
                          max_evals=5)
    assert not any(issubclass(w.category, RuntimeWarning) for w in caught)
    assert any("too few coalitions for a standard error" in str(w.message) for w in caught)
    assert not attr.sampling.converged.any()
