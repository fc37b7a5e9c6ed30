"""KernelSHAP with a cross-fitted cubic proxy (attribution/_proxy.py): exact parts, accuracy, bias.

The proxy's own Shapley values are checked against enumeration of its game,
the estimator against brute-force exact values (``shapley_games``), its
accuracy against plain KernelSHAP on the same coalitions, and its bias by the
mean over seeds.
"""

import sys
import warnings
from itertools import combinations, product

import numpy as np
import pytest

import modellens as ml
from modellens.attribution._coalitions import size_weights
from shapley_games import game_shapley
from shapley_games import correlated_normal, exact_values, interacting

# where ml.shapley chooses its estimator: the tests swap the proxy estimator there
SHAPLEY = sys.modules["modellens.attribution._estimator_choice"]


def all_masks(d):
    masks = np.array(list(product([False, True], repeat=d)))
    code = masks @ (1 << np.arange(d))
    out = np.empty_like(masks)
    out[code] = masks  # bit code order, as game_shapley reads a game
    return out


def test_cubic_proxy_values_are_those_of_its_game():
    from modellens.attribution._proxy import _CubicProxy

    d = 7
    S = all_masks(d)
    S = S[~S[:, 0]][1:]  # one member of every complementary pair but (empty, N)
    # a game with linear, pairwise and three-way terms, seen through its pair differences
    m3 = {(0, 2, 5): 1.5, (1, 3, 4): -2.0, (2, 4, 6): 0.7}

    def game(M):
        M = M.astype(float)
        out = M @ np.arange(1, d + 1) + 0.8 * M[:, 1] * M[:, 6]
        for T, c in m3.items():
            out = out + c * M[:, list(T)].prod(axis=1)
        return out

    proxy = _CubicProxy.fit(S, game(S) - game(~S), np.full(len(S), 1.0 / len(S)))
    masks = all_masks(d)
    g = proxy(masks)
    assert g[0] == 0.0
    np.testing.assert_allclose(proxy.shapley, game_shapley(g), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(proxy.total, g[-1] - g[0], rtol=1e-10)
    # with every pair seen, a game of at most three-way terms is recovered from its odd
    # part: the proxy's values are the game's (linear, half of each pair, a third of each
    # triple), by enumeration
    want = game_shapley(game(masks))
    assert np.abs(want - np.arange(1, d + 1)).max() > 0.3  # the pair and triples matter
    np.testing.assert_allclose(proxy.shapley, want, atol=1e-4)


@pytest.fixture(scope="module")
def games():
    from sklearn.neural_network import MLPRegressor

    rng = np.random.default_rng(3)
    d = 10
    X = correlated_normal(900, d, 0.6, rng)
    y = interacting(X) + 0.1 * rng.normal(size=len(X))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlp = MLPRegressor(hidden_layer_sizes=(24, 24), max_iter=200, random_state=0)
        mlp.fit(X[:800], y[:800])
    bg, rows = X[800:816], X[850:856]
    return {name: (f, rows, bg, exact_values(f, rows, bg))
            for name, f in {"mlp": mlp.predict, "interactions": interacting}.items()}


def _errors(f, rows, bg, exact, n_samples, seeds):
    out = []
    for seed in seeds:
        attr = ml.shapley(f, rows, background=bg, algorithm="kernel", n_samples=n_samples,
                          random_state=seed)
        out.append(np.sum((attr.values - exact) ** 2, axis=1) / np.sum(exact ** 2, axis=1))
    return float(np.median(np.concatenate(out)))


@pytest.mark.study
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("multiple", [32, 64])
def test_proxy_beats_plain_kernelshap_on_the_same_coalitions(games, monkeypatch, multiple):
    from modellens.attribution.kernel import KernelEstimator

    for name, (f, rows, bg, exact) in games.items():
        d = rows.shape[1]
        assert ml.shapley(f, rows[:1], background=bg, algorithm="kernel",
                          n_samples=multiple * d).diagnostics["proxy_rows"].all()
        ours = _errors(f, rows, bg, exact, multiple * d, range(4))
        with monkeypatch.context() as m:
            m.setattr(SHAPLEY, "ProxyKernelEstimator", lambda *a, **k: KernelEstimator(*a))
            plain = _errors(f, rows, bg, exact, multiple * d, range(4))
        # 3-5x lower on these games in the benchmark; 1.5x leaves room for the seeds
        assert ours < plain / 1.5, (name, ours, plain)


def test_proxy_agrees_with_brute_force_at_a_large_budget(games):
    f, rows, bg, exact = games["interactions"]
    attr = ml.shapley(f, rows, background=bg, algorithm="kernel", n_samples=900,
                      random_state=0)
    assert attr.diagnostics["proxy_rows"].all()
    scale = np.abs(exact).max()
    np.testing.assert_allclose(attr.values, exact, atol=0.02 * scale)
    assert np.all(np.abs(attr.values - exact) <= 5 * attr.std + 1e-9 * scale)


@pytest.mark.study
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("pooled", [False, True])
def test_proxy_is_unbiased_over_seeds(games, monkeypatch, pooled):
    # cross-fitting: the mean over seeds sits on the exact values within its own noise,
    # by halves (a fixed budget) and pooled over folds (the stopping rule's)
    from modellens.attribution._proxy import ProxyKernelEstimator

    monkeypatch.setattr(SHAPLEY, "ProxyKernelEstimator",
                        lambda *a, **k: ProxyKernelEstimator(*a, pooled=pooled))
    multiple = 32
    f, rows, bg, exact = games["mlp"]
    rows, exact = rows[:3], exact[:3]
    d = rows.shape[1]
    attrs = [ml.shapley(f, rows, background=bg, algorithm="kernel", n_samples=multiple * d,
                        random_state=seed) for seed in range(60)]
    assert all(a.diagnostics["proxy_rows"].all() for a in attrs)
    draws = np.array([a.values for a in attrs])
    mean, sd = draws.mean(axis=0), draws.std(axis=0, ddof=1)
    z = (mean - exact) / (sd / np.sqrt(len(draws)) + 1e-12 * np.abs(exact).max())
    assert np.abs(z).max() < 4.5, np.abs(z).max()
    # and the noise is real: a biased estimator with tiny spread would pass the z test
    assert np.all(sd > 0)
    # the reported standard errors are those of the spread over seeds (within 25%)
    ratio = np.array([a.std for a in attrs]).mean(axis=0) / sd
    assert 0.75 < np.median(ratio) < 1.25, np.median(ratio)


def test_smoke_proxy_beats_plain_kernelshap_on_one_game(games, monkeypatch):
    """The fast loop's version of the two studies above: one game, two seeds."""
    from modellens.attribution.kernel import KernelEstimator

    f, rows, bg, exact = games["interactions"]
    d = rows.shape[1]
    ours = _errors(f, rows[:3], bg, exact[:3], 32 * d, range(2))
    with monkeypatch.context() as m:
        m.setattr(SHAPLEY, "ProxyKernelEstimator", lambda *a, **k: KernelEstimator(*a))
        plain = _errors(f, rows[:3], bg, exact[:3], 32 * d, range(2))
    assert ours < plain, (ours, plain)


def test_smoke_large_game_with_the_pooled_proxy():
    """The fast loop's version of the large-game study below: 20 features, 6 rows."""
    rng = np.random.default_rng(5)
    d = 20
    f, exact = _product_game(d, rng, n_terms=20)
    X = rng.normal(size=(10, d))
    rows, background = X[:6], X[6:10]
    phi = np.array([exact(x, background) for x in rows])
    attr = ml.shapley(f, rows, background=background, algorithm="kernel", n_samples=8 * d,
                      random_state=0)
    assert attr.diagnostics["proxy_rows"].all()
    values, std = np.asarray(attr.values), np.asarray(attr.std)
    np.testing.assert_allclose(values.sum(axis=1) + attr.base_values, f(rows), atol=1e-9)
    # 120 intervals: SD about 0.02 at 95%
    assert np.mean(np.abs(values - phi) < 1.96 * std) >= 0.85


def test_additive_games_are_exact_with_the_proxy():
    # the proxy's linear part takes an additive game whole: zero residual, zero error
    rng = np.random.default_rng(5)
    X = correlated_normal(200, 10, 0.8, rng)
    beta = rng.normal(size=10)
    rows, bg = X[:4], X[100:130]
    # by halves at fixed budgets, pooled under the stopping rule (one round: exact)
    for kw in (dict(n_samples=60), dict(n_samples=160), dict(tol=0.05)):
        attr = ml.shapley(lambda A: A @ beta, rows, background=bg, algorithm="kernel",
                          random_state=0, **kw)
        assert attr.diagnostics["proxy_rows"].all()
        np.testing.assert_allclose(attr.values, (rows - bg.mean(axis=0)) * beta, atol=1e-9)
        assert np.all(attr.std < 1e-9)


def test_rows_with_too_few_pairs_keep_plain_kernelshap(games, monkeypatch):
    from modellens.attribution.kernel import KernelEstimator

    f, rows, bg, exact = games["mlp"]
    d = rows.shape[1]
    # 35 coalitions: the sizes 1 and d - 1 enumerated, 7 sampled pairs for 10 features
    with pytest.warns(ml.ModellensWarning, match="too few to estimate standard errors"):
        attr = ml.shapley(f, rows, background=bg, algorithm="kernel", n_samples=35,
                          random_state=1)
    monkeypatch.setattr(SHAPLEY, "ProxyKernelEstimator", lambda *a, **k: KernelEstimator(*a))
    with pytest.warns(ml.ModellensWarning, match="too few to estimate standard errors"):
        plain = ml.shapley(f, rows, background=bg, algorithm="kernel", n_samples=35,
                           random_state=1)
    assert not attr.diagnostics["proxy_rows"].any()
    np.testing.assert_array_equal(attr.values, plain.values)
    np.testing.assert_array_equal(attr.std, plain.std)


def test_each_fold_is_corrected_by_a_proxy_fit_without_it(games, monkeypatch):
    # the folds' proxies come from one inverse of the full fit (a block formula): each must
    # equal a fit from scratch on the enumerated pairs and the other folds
    from modellens.attribution import _proxy

    seen = []
    real = _proxy._CubicProxy

    class Spy(real):
        def __init__(self, S, beta, gamma):
            super().__init__(S, beta, gamma)
            seen.append(self)

    monkeypatch.setattr(_proxy, "_CubicProxy", Spy)
    lam = 1e-3
    monkeypatch.setattr(_proxy, "gcv_penalty", lambda K, X, y: lam)
    f, rows, bg, _ = games["mlp"]
    d = rows.shape[1]
    est = None

    class Keep(_proxy.ProxyKernelEstimator):
        def __init__(self, *a, **k):
            nonlocal est
            super().__init__(*a, pooled=True)  # as under the stopping rule
            est = self

    monkeypatch.setattr(SHAPLEY, "ProxyKernelEstimator", Keep)
    ml.shapley(f, rows[:1], background=bg, algorithm="kernel", n_samples=8 * d, random_state=0)
    assert len(seen) == _proxy.FOLDS
    v0 = est.game.ends()[0]
    enum_y = est._enum.result.reshape(1, -1)[0] - v0
    yy = np.concatenate(est._y[0]) - v0
    Se = est.enum_masks[est._canon_e]
    diff_e = enum_y[est._canon_e] - enum_y[est._comp_e]
    w_e = est.enum_weights[est._canon_e]
    counts, T = est.counts[0], est.n_draws[0]
    fold = np.arange(len(est.pairs[0])) % _proxy.FOLDS
    for k, proxy in enumerate(seen):
        keep = fold != k
        S = np.concatenate([Se, est.pairs[0][keep]])
        diff = np.concatenate([diff_e, yy[keep, 0] - yy[keep, 1]])
        # a draw of size s is importance-weighted: the kernel's law over the sampled sizes
        # over the uniform one it is drawn from
        sizes = est.pairs[0][keep].sum(axis=1)
        mu = size_weights(d)[np.asarray(est.sampled_sizes) - 1]
        ratio = size_weights(d)[sizes - 1] / mu.sum() * len(mu)
        w = np.concatenate([w_e, est.w_sampled * counts[keep] * ratio / (2.0 * T)])
        direct = real.fit(S, diff, w, lam=lam)
        masks = all_masks(d)
        np.testing.assert_allclose(proxy(masks), direct(masks), rtol=1e-7,
                                   atol=1e-9 * np.abs(direct(masks)).max())
        np.testing.assert_allclose(proxy.shapley, direct.shapley, rtol=1e-7, atol=1e-12)


def test_null_players_get_zero_and_add_no_noise():
    """A feature whose value in the row equals it in every background row changes no
    model row: its value is 0 exactly, without error, and it is left out of the fit
    (main gave such constant columns |phi| up to 0.27 here and doubled the others' error)."""
    rng = np.random.default_rng(0)
    d = 8
    A = correlated_normal(90, d, 0.5, rng)
    X, background = A[:16], A[16:66]
    # column 8 equals the background (all 1) in the even rows only; 9-11 are constant
    X = np.hstack([X, np.where(np.arange(16) % 2 == 0, 1.0, 2.0)[:, None], np.ones((16, 3))])
    background = np.hstack([background, np.ones((50, 4))])

    def f(Z):
        return interacting(Z[:, :d]) + Z[:, 8] * Z[:, 0]

    phi = exact_values(f, X, background)
    null = np.zeros(X.shape, dtype=bool)
    null[:, 9:] = True
    null[::2, 8] = True
    assert np.abs(phi[null]).max() < 1e-12  # the oracle agrees they are null
    errors = []
    for tol in (None, 0.05):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # no numpy warning leaks
            attr = ml.shapley(f, X, background=background, algorithm="kernel",
                              n_samples=16 * X.shape[1], tol=tol, random_state=3)
        values, std = np.asarray(attr.values), np.asarray(attr.std)
        assert np.all(values[null] == 0.0) and np.all(std[null] == 0.0)
        assert np.all(std[~null] > 0)
        np.testing.assert_allclose(values.sum(axis=1), f(X) - attr.base_values, atol=1e-9)
        z = np.abs(values - phi)[~null] / std[~null]
        assert np.mean(z < 1.96) > 0.85, np.mean(z < 1.96)
        errors.append(np.median(((values - phi) ** 2).sum(1) / (phi ** 2).sum(1)))
    groups = ml.shapley(f, X, background=background, algorithm="kernel",
                        groups={"constant": [9, 10, 11]}, n_samples=200, random_state=3)
    g = list(groups.feature_names).index("constant")
    assert np.all(np.asarray(groups.values)[:, g] == 0.0)


def test_rows_with_null_players_are_explained_in_their_own_smaller_game():
    """A row whose null players leave k players that matter gets KernelSHAP of its k-player
    game (grouped by the set of those players): at a budget that covers that game's
    2**k - 2 coalitions its values are exact and their errors 0, where sampling over all
    d players (main) was not; rows of different sets in one call keep their own."""
    rng = np.random.default_rng(4)
    d = 10
    background = rng.normal(size=(1, d))
    X = rng.normal(size=(9, d))
    # rows 0-2 differ from the background in 4 features, rows 3-5 in 6 others, rows 6-8
    # in all: three groups of active players
    X[0:3, 4:] = background[0, 4:]
    X[3:6, :4] = background[0, :4]

    def f(Z):
        # three-way terms within each group's players: paired sampling alone is not exact
        return (np.sin(Z[:, 0] * Z[:, 5]) + Z[:, 1] * Z[:, 2] * Z[:, 3]
                + Z[:, 4] * Z[:, 6] * Z[:, 8] + Z @ np.arange(d))

    phi = exact_values(f, X, background)
    attr = ml.shapley(f, X, background=background, algorithm="kernel", n_samples=64,
                      random_state=0)
    values, std = np.asarray(attr.values), np.asarray(attr.std)
    # 4 players: 14 coalitions, within 64: enumerated, exact
    np.testing.assert_allclose(values[:3], phi[:3], atol=1e-10)
    assert np.all(std[:3] == 0.0)
    assert np.all(attr.diagnostics["n_coalitions"][:3] == 14)
    # 6 players (62 coalitions) fit too; the others sample within 64 coalitions
    np.testing.assert_allclose(values[3:6], phi[3:6], atol=1e-10)
    assert np.all(attr.diagnostics["n_coalitions"][3:6] == 62)
    assert np.all(values[3:6, :4] == 0.0) and np.all(values[:3, 4:] == 0.0)
    assert np.all(std[6:] > 0) and np.all(attr.diagnostics["n_coalitions"][6:] <= 64)
    np.testing.assert_allclose(values.sum(axis=1), f(X) - attr.base_values, atol=1e-9)
    # sampled active games: intervals hold and the stopping rule stops
    wide = rng.normal(size=(40, 16))
    bg = rng.normal(size=(1, 16))
    wide[:, 8:] = bg[0, 8:]  # 8 players matter in every row

    def g(Z):
        return np.tanh(Z[:, :8] @ np.linspace(-1, 1, 8)) * Z[:, 3] + Z[:, 0] * Z[:, 1] * Z[:, 2]

    exact = exact_values(g, wide, bg)
    sampled = ml.shapley(g, wide, background=bg, algorithm="kernel", n_samples=96,
                         random_state=1)
    assert np.all(sampled.diagnostics["n_coalitions"] <= 96)
    z = np.abs(np.asarray(sampled.values) - exact)[:, :8] / np.asarray(sampled.std)[:, :8]
    assert 0.9 <= np.mean(z < 1.96) <= 0.99, np.mean(z < 1.96)
    stopped = ml.shapley(g, wide[:4], background=bg, algorithm="kernel", tol=0.05,
                         random_state=1)
    assert stopped.sampling.converged.all()
    same = ml.shapley(g, wide[:4], background=bg, algorithm="kernel", tol=0.05,
                      random_state=1)
    np.testing.assert_array_equal(same.values, stopped.values)


def _product_game(d, rng, n_terms=40):
    """A model of linear and three-way product terms, and its exact interventional Shapley
    values in closed form: with one background row b, a product over T has Moebius
    coefficients m_U = prod_{U}(x - b) prod_{T \\ U} b on U within T, and phi_j sums m_U / |U|
    over the U that hold j; several background rows average these."""
    a = rng.normal(size=d)
    triples = np.array([rng.choice(d, size=3, replace=False) for _ in range(n_terms)])
    c = rng.normal(size=n_terms)

    def f(Z):
        return Z @ a + (np.prod(Z[:, triples], axis=2) * c).sum(axis=1)

    def exact(x, background):
        phi = np.zeros(d)
        for b in background:
            phi += a * (x - b)
            for t, coef in zip(triples, c):
                for size in (1, 2, 3):
                    for U in map(list, combinations(range(3), size)):
                        rest = [k for k in range(3) if k not in U]
                        m = coef * np.prod(x[t[U]] - b[t[U]]) * np.prod(b[t[rest]])
                        phi[t[U]] += m / size
        return phi / len(background)

    return f, exact


@pytest.mark.study
@pytest.mark.timeout(1800)
def test_large_games_at_small_budgets_sample_every_size_with_the_pooled_proxy(monkeypatch):
    """From 20 features and up to 16 d coalitions KernelSHAP spends the budget on sampled
    pairs of every size (enumerating the borders took a quarter of an 8 d budget) and
    corrects them with the proxy pooled over folds (its halves were fit on too few pairs);
    the errors hold their coverage against the closed-form values, and beat plain
    KernelSHAP on the same coalitions."""
    from modellens.attribution.kernel import KernelEstimator

    small, small_exact = _product_game(8, np.random.default_rng(1), n_terms=10)
    Z = np.random.default_rng(2).normal(size=(5, 8))
    np.testing.assert_allclose([small_exact(z, Z[2:]) for z in Z[:2]],
                               exact_values(small, Z[:2], Z[2:]), atol=1e-12)  # the oracle
    rng = np.random.default_rng(5)
    d = 30
    f, exact = _product_game(d, rng)
    X = rng.normal(size=(40, d))
    rows, background = X[:20], X[20:24]
    phi = np.array([exact(x, background) for x in rows])
    asked = []

    def recorded(A):
        asked.append(np.array(A, copy=True))
        return f(A)

    attr = ml.shapley(recorded, rows, background=background, algorithm="kernel",
                      n_samples=8 * d, random_state=0)
    assert attr.diagnostics["proxy_rows"].all()
    # no size enumerated: a row's coalitions of one feature are the few its pairs drew
    A = np.concatenate(asked)
    singles = [len(np.unique(A[(A == x).sum(axis=1) == 1], axis=0)) // len(background)
               for x in rows]
    assert max(singles) < d // 2, singles
    values, std = np.asarray(attr.values), np.asarray(attr.std)
    np.testing.assert_allclose(values.sum(axis=1) + attr.base_values, f(rows), atol=1e-9)
    z = (values - phi) / std
    assert 0.93 <= np.mean(np.abs(z) < 1.96) <= 0.985, np.mean(np.abs(z) < 1.96)
    assert abs(np.mean(z)) < 4 / np.sqrt(z.size) * np.std(z) + 0.1  # no systematic bias
    error = ((values - phi) ** 2).sum(axis=1) / (phi ** 2).sum(axis=1)
    with monkeypatch.context() as m:  # the same coalitions, no proxy
        m.setattr(SHAPLEY, "ProxyKernelEstimator",
                  lambda *a, **k: KernelEstimator(*a, enumerate_borders=False))
        plain = ml.shapley(f, rows, background=background, algorithm="kernel",
                           n_samples=8 * d, random_state=0).values
    plain_error = ((plain - phi) ** 2).sum(axis=1) / (phi ** 2).sum(axis=1)
    assert np.median(error / plain_error) < 0.95, np.median(error / plain_error)
    # under a stopping rule the borders are enumerated again
    more = ml.shapley(f, rows[:2], background=background, algorithm="kernel",
                      tol=0.2, max_evals=40 * d, random_state=0)
    assert more.diagnostics["proxy_rows"].all()
