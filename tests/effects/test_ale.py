"""Accumulated local effects: checked against straightforward loop implementations,
closed-form truths and PyALE."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

import modellens as ml

Z95 = norm.ppf(0.975)


# ------------------------------------------------------------------ references
# Written from the definitions (Apley & Zhu 2020; ALEPlot), one loop at a time.
def ref_edges(x, n_bins):
    """Minimum plus type-1 quantiles at k/K: the smallest x with ECDF >= k/K."""
    xs = sorted(x)
    n = len(xs)
    edges = [xs[0]]
    for k in range(1, n_bins + 1):
        i = next(i for i in range(n) if (i + 1) * n_bins >= k * n)
        edges.append(xs[i])
    return np.array(sorted(set(edges)))


def ref_bin(value, edges):
    if value == edges[0]:
        return 0
    for k in range(1, len(edges)):
        if edges[k - 1] < value <= edges[k]:
            return k - 1
    return None


def ref_ale_numeric(f, X, j, edges):
    n_bins = len(edges) - 1
    members = [[] for _ in range(n_bins)]
    for i in range(X.shape[0]):
        k = ref_bin(X[i, j], edges)
        if k is not None:
            members[k].append(i)
    delta, std, var = [], [], []
    for k in range(n_bins):
        rows = X[members[k]]
        lo, hi = rows.copy(), rows.copy()
        lo[:, j], hi[:, j] = edges[k], edges[k + 1]
        d = f(hi) - f(lo)
        delta.append(d.mean() if len(d) else 0.0)
        std.append(d.std() if len(d) else np.nan)
        var.append(d.var(ddof=1) / len(d) if len(d) > 1 else None)
    # a bin with one point (or none) borrows the pooled within-bin variance
    sizes = [len(m) for m in members]
    dof = sum(n - 1 for n in sizes if n > 1)
    pooled = sum(v * n * (n - 1) for v, n in zip(var, sizes) if v is not None) / dof
    var = [v if v is not None else pooled / max(n, 1) for v, n in zip(var, sizes)]
    acc = [0.0]
    for k in range(n_bins):
        acc.append(acc[-1] + delta[k])
    counts = sizes
    total = sum(counts)
    centre = sum(counts[k] * (acc[k] + acc[k + 1]) / 2 for k in range(n_bins)) / total
    values = np.array(acc) - centre
    # the centred value at edge k is a linear combination of the bin means:
    # sum_i (1[i < k] - w_i) delta_i, w_i its weight in the centring constant
    weight = [sum(counts[j] * ((i < j) + (i <= j)) / 2 for j in range(n_bins)) / total
              for i in range(n_bins)]
    cum_var = [sum(((i < k) - weight[i]) ** 2 * var[i] for i in range(n_bins))
               for k in range(n_bins + 1)]
    half = Z95 * np.sqrt(cum_var)
    return values, np.array(std), np.array(counts), (values - half, values + half)


def ref_ale_levels(f, X, j, levels):
    """Levels in the given order; each point steps up and down to its neighbours."""
    n_levels = len(levels)
    steps = [[] for _ in range(n_levels - 1)]
    for t, level in enumerate(levels):
        rows = X[X[:, j] == level]
        if t + 1 < n_levels:
            up = rows.copy()
            up[:, j] = levels[t + 1]
            steps[t].extend(f(up) - f(rows))
        if t > 0:
            down = rows.copy()
            down[:, j] = levels[t - 1]
            steps[t - 1].extend(f(rows) - f(down))
    acc = [0.0]
    for s in steps:
        acc.append(acc[-1] + np.mean(s))
    counts = np.array([np.sum(X[:, j] == level) for level in levels])
    values = np.array(acc) - np.dot(counts, acc) / counts.sum()
    return values, np.array([np.std(s) for s in steps]), counts


def ref_axis(kind, grid, value):
    """A row's crossings of an axis: (cell, low grid value, high grid value)."""
    if kind == "num":
        k = ref_bin(value, grid)
        return [(k, grid[k], grid[k + 1])]
    t = list(grid).index(value)
    out = []
    if t + 1 < len(grid):
        out.append((t, grid[t], grid[t + 1]))
    if t > 0:
        out.append((t - 1, grid[t - 1], grid[t]))
    return out


def ref_unit(kind, grid, value):
    return ref_bin(value, grid) if kind == "num" else list(grid).index(value)


def ref_ale_2d(f, X, a, b, axis_a, axis_b):
    """Second-order ALE, eqs. 13-16 of Apley & Zhu (2020), in loops."""
    (kind_a, grid_a), (kind_b, grid_b) = axis_a, axis_b
    ca, cb = len(grid_a) - 1, len(grid_b) - 1
    ua = ca if kind_a == "num" else len(grid_a)
    ub = cb if kind_b == "num" else len(grid_b)
    cells = {}
    units = np.zeros((ua, ub))
    for i in range(X.shape[0]):
        units[ref_unit(kind_a, grid_a, X[i, a]), ref_unit(kind_b, grid_b, X[i, b])] += 1
        for p, la, ha in ref_axis(kind_a, grid_a, X[i, a]):
            for q, lb, hb in ref_axis(kind_b, grid_b, X[i, b]):
                corner = {}
                for name, va, vb in (("ll", la, lb), ("lh", la, hb),
                                     ("hl", ha, lb), ("hh", ha, hb)):
                    row = X[i:i + 1].copy()
                    row[0, a], row[0, b] = va, vb
                    corner[name] = f(row)[0]
                d = corner["hh"] - corner["hl"] - corner["lh"] + corner["ll"]
                cells.setdefault((p, q), []).append(d)
    delta = np.full((ca, cb), np.nan)
    for (p, q), ds in cells.items():
        delta[p, q] = np.mean(ds)
    empty = np.isnan(delta)

    def centres(kind, grid):
        pos = np.asarray(grid, float) if kind == "num" else np.arange(len(grid), dtype=float)
        return [(pos[k] + pos[k + 1]) / 2 / (pos[-1] - pos[0]) for k in range(len(pos) - 1)]

    cen_a, cen_b = centres(kind_a, grid_a), centres(kind_b, grid_b)
    filled = delta.copy()
    for p in range(ca):
        for q in range(cb):
            if not empty[p, q]:
                continue
            dist = {(r, s): (cen_a[p] - cen_a[r]) ** 2 + (cen_b[q] - cen_b[s]) ** 2
                    for r in range(ca) for s in range(cb) if not empty[r, s]}
            best = min(dist.values())
            near = [delta[c] for c, v in dist.items() if v <= best * (1 + 1e-12)]
            filled[p, q] = np.mean(near)
    acc = np.zeros((ca + 1, cb + 1))
    for p in range(ca + 1):
        for q in range(cb + 1):
            acc[p, q] = filled[:p, :q].sum()

    def at_unit(kind, vector, u):  # a function on the grid, averaged over unit u
        return (vector[u] + vector[u + 1]) / 2 if kind == "num" else vector[u]

    def makers(kind, p):  # units whose points make a step across cell p
        return [p] if kind == "num" else [p, p + 1]

    main_a = [0.0]
    for p in range(ca):
        num = den = 0.0
        for u in makers(kind_a, p):
            for v in range(ub):
                num += units[u, v] * at_unit(kind_b, acc[p + 1] - acc[p], v)
                den += units[u, v]
        main_a.append(main_a[-1] + (num / den if den else 0.0))
    main_b = [0.0]
    for q in range(cb):
        num = den = 0.0
        for v in makers(kind_b, q):
            for u in range(ua):
                num += units[u, v] * at_unit(kind_a, acc[:, q + 1] - acc[:, q], u)
                den += units[u, v]
        main_b.append(main_b[-1] + (num / den if den else 0.0))
    surface = acc - np.array(main_a)[:, None] - np.array(main_b)[None, :]
    constant = 0.0
    for u in range(ua):
        for v in range(ub):
            rows_avg = at_unit(kind_a, surface, u)
            constant += units[u, v] * at_unit(kind_b, rows_avg, v)
    return surface - constant / units.sum(), empty, units


def ks_tv_order(frame, col):
    """Level order of ``frame[col]``: summed KS / TV distances, then classical MDS."""
    levels = [lv for lv in frame[col].cat.categories if (frame[col] == lv).any()]
    size = len(levels)
    dist = np.zeros((size, size))
    for other in frame.columns:
        if other == col:
            continue
        for p in range(size):
            for q in range(size):
                xp = frame.loc[frame[col] == levels[p], other]
                xq = frame.loc[frame[col] == levels[q], other]
                if isinstance(frame[other].dtype, pd.CategoricalDtype):
                    fp = xp.value_counts(normalize=True).reindex(frame[other].cat.categories)
                    fq = xq.value_counts(normalize=True).reindex(frame[other].cat.categories)
                    dist[p, q] += 0.5 * np.abs(fp.fillna(0) - fq.fillna(0)).sum()
                else:
                    grid = np.quantile(frame[other], np.linspace(0, 1, 100))
                    ecdf_p = np.array([np.mean(xp.to_numpy() <= g) for g in grid])
                    ecdf_q = np.array([np.mean(xq.to_numpy() <= g) for g in grid])
                    dist[p, q] += np.max(np.abs(ecdf_p - ecdf_q))
    centre = np.eye(size) - np.ones((size, size)) / size
    vals, vecs = np.linalg.eigh(-0.5 * centre @ dist ** 2 @ centre)
    return [levels[i] for i in np.argsort(vecs[:, -1] * np.sqrt(vals[-1]))]


def poly(A):
    """A model with curvature, interactions and a periodic part."""
    return A[:, 0] ** 2 + A[:, 0] * A[:, 1] - 0.5 * A[:, 1] * A[:, 2] + np.sin(3 * A[:, 2])


def correlated(n, seed=0, noise=0.3):
    rng = np.random.default_rng(seed)
    x0 = rng.normal(size=n)
    x1 = x0 + rng.normal(0, noise, n)
    x2 = rng.uniform(-1, 1, n)
    return np.column_stack([x0, x1, x2])


# ------------------------------------------------------------- first order
def test_first_order_matches_loop_reference():
    X = correlated(300)
    X[:, 2] = np.round(X[:, 2] * 3) / 3  # 7 values: ties collapse 12 bins into fewer
    out = ml.ale(poly, X, bins=12, max_discrete=0)
    for j in range(3):
        edges = ref_edges(X[:, j], 12)
        values, std, counts, band = ref_ale_numeric(poly, X, j, edges)
        eff = out[f"x{j}"]
        assert eff.method == "ale" and eff.kind == "numeric"
        np.testing.assert_array_equal(eff.grid, edges)
        np.testing.assert_allclose(eff.values, values, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(eff.std, std, rtol=1e-8, atol=1e-12)
        np.testing.assert_array_equal(eff.counts, counts)
        np.testing.assert_allclose(eff.band.lower, band[0], rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(eff.band.upper, band[1], rtol=1e-8, atol=1e-12)
    assert len(out["x2"].grid) < 13  # ties collapsed edges


def test_explicit_edges_of_very_different_widths():
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.lognormal(0, 1.2, 400), rng.normal(size=400)])
    X[0, 0] = 0.02  # a point exactly on an inner edge belongs to the bin below it
    edges = np.array([0.0, 0.02, 0.05, 0.5, 1.0, 3.0, 60.0])
    X[1, 0] = 70.0  # outside the edges: left out, with a warning
    f = lambda A: np.log1p(A[:, 0]) * (1 + A[:, 1]) + A[:, 1]  # noqa: E731
    with pytest.warns(UserWarning, match="1 of 400 values of 'x0' lie outside"):
        eff = ml.ale(f, X, [0], bins=edges)["x0"]
    values, std, counts, _ = ref_ale_numeric(f, X, 0, edges)
    np.testing.assert_array_equal(eff.grid, edges)
    np.testing.assert_allclose(eff.values, values, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(eff.counts, counts)
    assert eff.counts.sum() == 399


def test_heavy_ties_collapse_bins():
    rng = np.random.default_rng(4)
    x = np.where(rng.uniform(size=500) < 0.7, 0.0, rng.exponential(size=500))
    X = np.column_stack([x, rng.normal(size=500)])
    f = lambda A: np.sqrt(A[:, 0]) + A[:, 0] * A[:, 1]  # noqa: E731
    eff = ml.ale(f, X, [0], bins=20)["x0"]
    edges = ref_edges(x, 20)
    assert edges.size < 21 and edges[0] == 0.0 and edges[1] > 0.0
    values, _, counts, _ = ref_ale_numeric(f, X, 0, edges)
    np.testing.assert_array_equal(eff.grid, edges)
    np.testing.assert_allclose(eff.values, values, rtol=1e-10, atol=1e-12)
    # the closed first bin holds all the zeros (70% of the data) and what lies up to z_1
    assert eff.counts[0] == np.sum(x <= edges[1]) > 0.7 * 500 - 30
    np.testing.assert_array_equal(eff.counts, counts)


def test_quadratic_truth_under_dependence():
    # f = 2 x1 + 2 x2 - 4 x1 x2 with x2 ~ x1: the ALE of x1 is 2x - 2x^2 (+ const)
    rng = np.random.default_rng(5)
    x1 = rng.uniform(0, 1, 20_000)
    X = np.column_stack([x1, x1 + rng.normal(0, 0.05, x1.size)])
    f = lambda A: 2 * A[:, 0] + 2 * A[:, 1] - 4 * A[:, 0] * A[:, 1]  # noqa: E731
    eff = ml.ale(f, X, [0], bins=40)["x0"]
    z = eff.grid
    gap = eff.values - (2 * z - 2 * z ** 2)
    assert np.ptp(gap) < 0.01
    # a PD would be flat here (E[2 - 4 x2] = 0): the ALE is clearly curved
    assert np.ptp(eff.values) > 0.45


def test_seed_linear_model_slope():
    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(6)
    cov = [[1.0, 0.9], [0.9, 1.0]]
    X = rng.multivariate_normal([0, 0], cov, size=500)
    y = -X[:, 0] + 2 * X[:, 1] + rng.normal(size=500)
    lm = LinearRegression().fit(X, y)
    eff = ml.ale(lm, X, [0], bins=20)["x0"]
    slope = np.polyfit(eff.grid, eff.values, 1)[0]
    assert slope == pytest.approx(lm.coef_[0], rel=1e-9)
    assert abs(slope + 1) < 0.2
    # the linear curve's local effects are identical within a bin: no heterogeneity
    assert np.all(eff.std < 1e-9)


def test_discrete_feature_steps_between_values():
    rng = np.random.default_rng(7)
    X = np.column_stack([rng.integers(0, 4, 400).astype(float), rng.normal(size=400)])
    X[:, 1] += X[:, 0]
    f = lambda A: A[:, 0] ** 3 + A[:, 0] * A[:, 1]  # noqa: E731
    eff = ml.ale(f, X, [0])["x0"]
    values, std, counts = ref_ale_levels(f, X, 0, [0.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(eff.grid, [0, 1, 2, 3])
    np.testing.assert_allclose(eff.values, values, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(eff.std, std, rtol=1e-8, atol=1e-12)
    np.testing.assert_array_equal(eff.counts, counts)
    assert eff.extra["discrete"] and np.dot(eff.counts, eff.values) == pytest.approx(0, abs=1e-9)
    # the threshold is configurable: as quantile bins the feature has 3 bins
    binned = ml.ale(f, X, [0], max_discrete=0)["x0"]
    np.testing.assert_array_equal(binned.grid, [0, 1, 2, 3])
    assert binned.counts.tolist() == [np.sum(X[:, 0] <= 1), np.sum(X[:, 0] == 2),
                                      np.sum(X[:, 0] == 3)]


def test_two_valued_and_constant_features():
    rng = np.random.default_rng(8)
    X = np.column_stack([rng.integers(0, 2, 300), np.full(300, 4.2), rng.normal(size=300)])
    f = lambda A: 3 * A[:, 0] + A[:, 1] * A[:, 2] + A[:, 0] * A[:, 2]  # noqa: E731
    out = ml.ale(f, X, [0, 1, (0, 2), (1, 2)])
    two = out["x0"]
    np.testing.assert_allclose(two.values, ref_ale_levels(f, X, 0, [0.0, 1.0])[0], rtol=1e-10)
    assert two.values[1] - two.values[0] == pytest.approx(3 + X[:, 2].mean(), rel=1e-10)
    flat = out["x1"]
    np.testing.assert_array_equal(flat.grid, [4.2])
    np.testing.assert_array_equal(flat.values, [0.0])
    assert flat.counts.tolist() == [300]
    assert np.all(out[("x1", "x2")].values == 0)
    ref, _, _ = ref_ale_2d(f, X, 0, 2, ("lev", [0.0, 1.0]), ("num", ref_edges(X[:, 2], 20)))
    np.testing.assert_allclose(out[("x0", "x2")].values, ref, atol=1e-10)
    # with the level rule off, two values make one quantile bin
    single = ml.ale(f, X, [0], max_discrete=0)["x0"]
    np.testing.assert_array_equal(single.grid, [0, 1])


def test_missing_values_are_left_out_with_a_count():
    X = correlated(200)
    X[[3, 50, 70], 0] = np.nan
    f = lambda A: np.nan_to_num(A[:, 0]) * A[:, 1]  # noqa: E731
    with pytest.warns(UserWarning, match="3 of 200 rows have a missing value in 'x0'"):
        eff = ml.ale(f, X, [0], bins=10)["x0"]
    keep = ~np.isnan(X[:, 0])
    values, _, counts, _ = ref_ale_numeric(f, X[keep], 0, ref_edges(X[keep, 0], 10))
    np.testing.assert_allclose(eff.values, values, rtol=1e-10, atol=1e-12)
    assert eff.counts.sum() == 197


# ------------------------------------------------------------ categorical
def categorical_data(n=600, seed=9):
    rng = np.random.default_rng(seed)
    group = rng.choice(["north", "south", "east", "west", "centre"], n)
    shift = {"north": 0.0, "centre": 1.0, "east": 2.0, "south": 3.0, "west": 4.0}
    temp = np.array([shift[g] for g in group]) + rng.normal(0, 0.7, n)
    rain = np.where(rng.uniform(size=n) < np.array([shift[g] for g in group]) / 5, "wet", "dry")
    frame = pd.DataFrame({
        "region": pd.Categorical(group),
        "temp": temp,
        "rain": pd.Categorical(rain),
    })
    return frame


REGION_EFFECT = {"north": 0.0, "south": 2.0, "east": -1.0, "west": 0.5, "centre": 3.0}


def region_model(frame):
    base = frame["region"].astype(str).map(REGION_EFFECT).to_numpy(dtype=float)
    wet = (frame["rain"].astype(str) == "wet").to_numpy()
    return base * (1 + 0.5 * wet) + frame["temp"].to_numpy() * base


def test_categorical_order_and_effects_match_loop_reference():
    frame = categorical_data()
    before = frame.copy()
    out = ml.ale(region_model, frame, ["region"])
    eff = out["region"]
    pd.testing.assert_frame_equal(frame, before)  # the caller's data untouched
    order = ks_tv_order(frame, "region")
    got = list(eff.grid)
    assert got == order or got == order[::-1]
    # regions sit on a line in temp: the similarity order recovers it
    assert got in (["north", "centre", "east", "south", "west"],
                   ["west", "south", "east", "centre", "north"])
    # steps between adjacent levels, by brute force on the frame
    steps = []
    for lo, hi in zip(got[:-1], got[1:]):
        diffs = []
        for own, other, sign in ((lo, hi, 1), (hi, lo, -1)):
            rows = frame[frame["region"] == own]
            moved = rows.copy()
            moved["region"] = pd.Categorical([other] * len(rows),
                                             categories=frame["region"].cat.categories)
            diffs.extend(sign * (region_model(moved) - region_model(rows)))
        steps.append(diffs)
    acc = np.concatenate([[0.0], np.cumsum([np.mean(s) for s in steps])])
    counts = np.array([np.sum(frame["region"] == g) for g in got])
    np.testing.assert_allclose(eff.values, acc - np.dot(counts, acc) / counts.sum(), rtol=1e-10)
    np.testing.assert_allclose(eff.std, [np.std(s) for s in steps], rtol=1e-8)
    np.testing.assert_array_equal(eff.counts, counts)
    assert eff.kind == "categorical"


@pytest.mark.parametrize("seed", [0, 8])
def test_similarity_order_weighs_ks_and_total_variation_like_the_reference(seed):
    # random level profiles in two numeric and two categorical features: the order
    # depends on every distance's exact definition and weight
    rng = np.random.default_rng(seed)
    n, size = 400, 6
    level = rng.integers(0, size, n)
    shift, spread = rng.normal(0, 1, (size, 2)), rng.uniform(0.5, 2, size)
    p3, p2 = rng.dirichlet(np.ones(3), size), rng.dirichlet(np.ones(2) * 0.5, size)
    frame = pd.DataFrame({
        "g": pd.Categorical(np.array(list("ABCDEF"))[level]),
        "x": shift[level, 0] + rng.normal(size=n) * spread[level],
        "y": shift[level, 1] + rng.standard_t(3, n),
        "c": pd.Categorical(np.array(["p", "q", "r"])[[rng.choice(3, p=p3[v]) for v in level]]),
        "d": pd.Categorical(np.array(["u", "v"])[[rng.choice(2, p=p2[v]) for v in level]]),
    })
    eff = ml.ale(lambda F: F["x"].to_numpy() * F["g"].cat.codes.to_numpy(), frame, ["g"])["g"]
    order = ks_tv_order(frame, "g")
    assert list(eff.grid) in (order, order[::-1])


def test_ordered_categorical_keeps_its_order_and_unused_levels_drop():
    frame = categorical_data()
    levels = ["west", "east", "north", "south", "centre", "nowhere"]
    frame["region"] = pd.Categorical(frame["region"].astype(str), categories=levels, ordered=True)
    eff = ml.ale(region_model, frame, ["region"])["region"]
    assert list(eff.grid) == levels[:-1]


def test_categorical_string_column_in_pair_and_transposition():
    frame = categorical_data(n=400)
    frame["region"] = frame["region"].astype(str)  # a plain text column
    before = frame.copy()
    out = ml.ale(region_model, frame, [("region", "temp"), ("temp", "region")], bins=6)
    pd.testing.assert_frame_equal(frame, before)
    ab, ba = out[("region", "temp")], out[("temp", "region")]
    assert ab.kind == ("categorical", "numeric")
    np.testing.assert_allclose(ab.values, ba.values.T, atol=1e-12)
    np.testing.assert_array_equal(ab.empty_cells, ba.empty_cells.T)
    np.testing.assert_array_equal(ab.counts, ba.counts.T)
    assert list(ab.grid[0]) == list(ba.grid[1])
    assert ab.empty_cells.any()  # regions far apart in temp: some cells empty
    assert np.ptp(ab.values) > 0.1  # region x temp interact


# ------------------------------------------------------------ second order
def test_second_order_matches_loop_reference_with_empty_cells():
    X = correlated(150, seed=10, noise=0.2)
    out = ml.ale(poly, X, [(0, 1), (1, 2)], bins=5)
    for a, b in ((0, 1), (1, 2)):
        ea, eb = ref_edges(X[:, a], 5), ref_edges(X[:, b], 5)
        values, empty, units = ref_ale_2d(poly, X, a, b, ("num", ea), ("num", eb))
        eff = out[(f"x{a}", f"x{b}")]
        np.testing.assert_array_equal(eff.grid[0], ea)
        np.testing.assert_array_equal(eff.grid[1], eb)
        np.testing.assert_allclose(eff.values, values, rtol=1e-9, atol=1e-10)
        np.testing.assert_array_equal(eff.empty_cells, empty)
        np.testing.assert_array_equal(eff.counts, units)
    assert out[("x0", "x1")].empty_cells.any()  # correlated: off-diagonal cells empty


def test_second_order_with_a_level_axis_matches_loop_reference():
    rng = np.random.default_rng(11)
    level = rng.integers(0, 4, 120).astype(float)
    X = np.column_stack([level, level + rng.normal(0, 0.6, 120), rng.normal(size=120)])
    f = lambda A: A[:, 0] ** 2 * np.sin(A[:, 1]) + A[:, 2] * A[:, 0]  # noqa: E731
    eff = ml.ale(f, X, [(0, 1)], bins=4)[("x0", "x1")]
    ref, empty, units = ref_ale_2d(f, X, 0, 1, ("lev", [0.0, 1.0, 2.0, 3.0]),
                                   ("num", ref_edges(X[:, 1], 4)))
    np.testing.assert_allclose(eff.values, ref, rtol=1e-9, atol=1e-10)
    np.testing.assert_array_equal(eff.empty_cells, empty)
    np.testing.assert_array_equal(eff.counts, units)
    # two level axes: every point crosses up to four cells
    X[:, 1] = np.clip(level + rng.integers(-1, 2, 120), 0, 4)
    eff = ml.ale(f, X, [(0, 1)])[("x0", "x1")]
    ref, empty, units = ref_ale_2d(f, X, 0, 1, ("lev", [0.0, 1.0, 2.0, 3.0]),
                                   ("lev", [0.0, 1.0, 2.0, 3.0, 4.0]))
    assert empty.any()
    np.testing.assert_allclose(eff.values, ref, rtol=1e-9, atol=1e-10)
    np.testing.assert_array_equal(eff.empty_cells, empty)


def test_empty_cells_take_the_mean_of_equally_near_cells():
    # data only in the diagonal cells of a 4 x 4 grid of equal cells: every empty
    # cell next to the diagonal has two non-empty neighbours at the same distance
    rng = np.random.default_rng(16)
    cell = rng.integers(0, 4, 200)
    X = np.column_stack([(cell + rng.uniform(0.05, 0.95, 200)) / 4,
                         (cell + rng.uniform(0.05, 0.95, 200)) / 4])
    f = lambda A: A[:, 0] ** 2 * A[:, 1] + np.cos(4 * A[:, 0] * A[:, 1])  # noqa: E731
    edges = np.linspace(0, 1, 5)
    out = ml.ale(f, X, [(0, 1), (1, 0)], bins=edges)
    ref, empty, _ = ref_ale_2d(f, X, 0, 1, ("num", edges), ("num", edges))
    np.testing.assert_array_equal(out[("x0", "x1")].empty_cells, ~np.eye(4, dtype=bool))
    np.testing.assert_allclose(out[("x0", "x1")].values, ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out[("x1", "x0")].values, ref.T, rtol=1e-9, atol=1e-12)


def test_second_order_is_flat_for_additive_models():
    X = correlated(400, seed=12)
    additive = lambda A: A[:, 0] ** 2 + np.sin(A[:, 1]) + np.exp(A[:, 2])  # noqa: E731
    out = ml.ale(additive, X, [(0, 1), (0, 2)], bins=8)
    for eff in out.values():
        assert np.max(np.abs(eff.values)) < 1e-10
    # the same call on a model with an interaction is not flat
    interacting = ml.ale(lambda A: additive(A) + A[:, 0] * A[:, 2], X, [(0, 2)], bins=8)
    assert np.ptp(interacting[("x0", "x2")].values) > 0.5


def test_second_order_of_a_product_is_the_centred_product():
    # f = x0 * x2 on a product lattice (every pair of values once, so the cell counts
    # factorise): the pure interaction is (z0 - m0)(z2 - m2) exactly, m = the
    # count-weighted mean of the bin midpoints
    a, b = np.meshgrid(np.linspace(-1, 1, 40), np.linspace(0, 3, 30) ** 2, indexing="ij")
    rng = np.random.default_rng(13)
    X = np.column_stack([a.ravel(), rng.normal(size=a.size), b.ravel()])
    eff = ml.ale(lambda A: A[:, 0] * A[:, 2] + A[:, 1], X, [(0, 2)], bins=6)[("x0", "x2")]
    za, zb = eff.grid
    m0 = np.dot(eff.counts.sum(axis=1), (za[:-1] + za[1:]) / 2) / a.size
    m2 = np.dot(eff.counts.sum(axis=0), (zb[:-1] + zb[1:]) / 2) / a.size
    np.testing.assert_allclose(eff.values, np.outer(za - m0, zb - m2), atol=1e-12)
    assert not eff.empty_cells.any()


def test_pair_order_only_transposes():
    X = correlated(300, seed=14, noise=0.15)
    out = ml.ale(poly, X, [(0, 1), (1, 0)], bins=7)
    ab, ba = out[("x0", "x1")], out[("x1", "x0")]
    assert ab.empty_cells.any()
    np.testing.assert_allclose(ab.values, ba.values.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(ab.empty_cells, ba.empty_cells.T)
    np.testing.assert_allclose(ab.std, ba.std.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(ab.grid[0], ba.grid[1])


# ------------------------------------------------------------ plumbing
def test_one_model_pass_for_all_features():
    calls = []

    def f(A):
        calls.append(len(A))
        return poly(A)

    X = correlated(200)
    X = np.column_stack([X, np.arange(200) % 3])
    ml.ale(f, X, [0, 1, 3, (0, 2), (2, 3)], bins=10)
    # one evaluate call, one chunk: numeric 2n each, the level feature's steps plus the
    # data once, 4n per numeric pair, 4 corners per crossing of the level pair, and 2n
    # for feature 2, asked only in pairs (whose main effects give their total effect)
    level_steps = np.sum(X[:, 3] < 2) + np.sum(X[:, 3] > 0)
    # (first: the one row that tells f's outputs, asked when it is wrapped)
    assert calls == [1, 2 * 200 * 2 + level_steps + 200 + 4 * 200 + 4 * level_steps + 2 * 200]


def test_small_chunks_and_threads_give_the_same_numbers():
    X = correlated(150)
    X = np.column_stack([X, np.arange(150) % 4])
    feats = [0, 3, (0, 1), (3, 2)]
    f = lambda A: poly(A) + A[:, 3] ** 2 * A[:, 2]  # noqa: E731
    whole = ml.ale(f, X, feats, bins=6)
    pieces = ml.ale(f, X, feats, bins=6, chunk_size=37, n_jobs=2)
    for key in whole:
        assert np.ptp(whole[key].values) > 0.1
        np.testing.assert_allclose(pieces[key].values, whole[key].values, rtol=1e-12, atol=1e-12)


def test_bins_per_feature_and_pair():
    X = correlated(200)
    out = ml.ale(poly, X, [0, (1, 2)], bins={"x0": 5, ("x1", "x2"): (4, np.linspace(-1, 1, 3))})
    assert len(out["x0"].grid) == 6
    assert len(out[("x1", "x2")].grid[0]) == 5
    np.testing.assert_array_equal(out[("x1", "x2")].grid[1], [-1, 0, 1])
    # a pair without its own entry takes each feature's
    out = ml.ale(poly, X, [(0, 1)], bins={"x0": 3, "x1": 4})
    assert [len(g) for g in out[("x0", "x1")].grid] == [4, 5]


def test_classifier_probability_and_frame():
    from sklearn.linear_model import LogisticRegression

    X = correlated(300)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    y = (X[:, 0] + X[:, 2] > 0).astype(int)
    clf = LogisticRegression().fit(frame, y)
    eff = ml.ale(clf, frame, ["a"], bins=8)["a"]
    assert eff.output == "P(y = 1)"
    values, _, _, _ = ref_ale_numeric(lambda A: clf.predict_proba(
        pd.DataFrame(A, columns=["a", "b", "c"]))[:, 1], X, 0, ref_edges(X[:, 0], 8))
    np.testing.assert_allclose(eff.values, values, rtol=1e-9, atol=1e-12)


def test_matches_pyale_on_continuous_features():
    pyale = pytest.importorskip("PyALE")
    X = correlated(500, seed=15)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])

    class Model:
        def predict(self, data):
            return poly(np.asarray(data, dtype=float))

    out = ml.ale(Model(), frame, ["a", "c"], bins=10)
    for name in ("a", "c"):
        theirs = pyale.ale(frame, Model(), [name], grid_size=10, include_CI=False, plot=False)
        np.testing.assert_allclose(out[name].grid, theirs.index.to_numpy(), rtol=1e-12)
        np.testing.assert_allclose(out[name].values, theirs["eff"].to_numpy(), rtol=1e-9)


def test_to_frame_and_plots():
    import matplotlib.pyplot as plt

    frame = categorical_data(n=300)
    out = ml.ale(region_model, frame, ["temp", "region", ("temp", "region")], bins=8)
    table = out.to_frame()
    assert set(table["feature"]) == {"temp", "region", "temp x region"}
    ax = out["temp"].plot()
    assert any(c.get_label() == "95% confidence band" for c in ax.collections)
    ax = out["region"].plot()
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(v) for v in out["region"].grid]
    pair = out[("temp", "region")]
    ax = pair.plot()
    (marked,) = [c for c in ax.collections if c.get_gid() == "empty cell"]
    assert len(marked.get_offsets()) == int(pair.empty_cells.sum()) > 0
    fig = out.plot().flat[0].figure
    assert len(fig.axes) >= 3
    plt.close("all")


@pytest.mark.parametrize("kwargs, message", [
    ({"bins": "auto"}, "'auto' belongs to dale"),
    ({"bins": 0}, "positive number of bins"),
    ({"bins": [0.0, 1.0, 1.0]}, "strictly increasing"),
    ({"bins": [[0, 1], [1, 2]]}, "1-D array"),
    ({"bins": [0.0, np.nan]}, "NaN or inf"),
    ({"max_discrete": -1}, "max_discrete"),
    ({"confidence": 1.5}, "confidence"),
    ({"features": ["nope"]}, "unknown feature"),
    ({"features": [(0, 0)]}, "two different features"),
    ({"features": [(0, 1, 2)]}, "two entries"),
])
def test_bad_input_errors(kwargs, message):
    X = correlated(50)
    with pytest.raises(ValueError, match=message):
        ml.ale(poly, X, **kwargs)


def test_edges_for_a_categorical_feature_are_refused():
    frame = categorical_data(n=100)
    with pytest.raises(ValueError, match="categorical"):
        ml.ale(region_model, frame, ["region"], bins=[0, 1, 2])


def test_all_missing_feature_is_refused():
    X = correlated(30)
    X[:, 1] = np.nan
    with pytest.raises(ValueError, match="no non-missing values"), pytest.warns(UserWarning):
        ml.ale(lambda A: A[:, 0], X, [1])
