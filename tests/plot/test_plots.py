"""Plots draw what the results hold (read back from the artists)."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection, PolyCollection, QuadMesh
from matplotlib.contour import ContourSet
from matplotlib.colors import to_rgba
from matplotlib.patches import Polygon, Rectangle

import modellens as ml
from modellens.attribution.result import Attributions
from modellens.data import Column
from modellens.effects.result import Bins, Effect
from modellens.plot.attributions import _fmt
from modellens.plot.effects import EMPTY_CELL


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def effects():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=300), "b": rng.uniform(size=300),
                      "c": pd.Categorical(rng.choice(["u", "v", "w"], 300))})
    f = lambda df: df["a"] * df["b"] + (df["c"] == "v").to_numpy()  # noqa: E731
    return ml.pdp(f, X, features=["a", "c", ("a", "b"), ("a", "c")], ice=True, grid=8), \
        ml.mplot(f, X)


@pytest.fixture(scope="module")
def ale_effects():
    # x1 follows x0 closely, so most cells of the (x0, x1) pair hold no data
    rng = np.random.default_rng(3)
    x0 = rng.uniform(0, 1, 400)
    X = pd.DataFrame({"x0": x0, "x1": x0 + rng.normal(0, 0.05, 400),
                      "g": pd.Categorical(rng.choice(["p", "q", "r"], 400))})
    f = lambda df: df["x0"] ** 2 + df["x0"] * df["x1"] + (df["g"] == "q")  # noqa: E731
    return ml.ale(f, X, ["x0", "g", ("x0", "x1")], bins=8)


@pytest.fixture(scope="module")
def attributions():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 6))
    bg = rng.normal(size=(25, 6))
    w = np.array([3.0, -2.0, 1.0, 0.5, 0.0, -0.25])
    f = lambda Z: Z @ w + Z[:, 0] * Z[:, 1] + np.sin(Z[:, 2])  # noqa: E731
    return ml.shapley(f, X, background=bg, algorithm="exact"), X


def _labelled(ax, label):
    return [c for c in ax.collections if c.get_label() == label]


def _assert_band_polygon(poly, x, lower, upper):
    """The polygon runs along ``(x, lower)`` and back along ``(x, upper)``, nothing else."""
    assert isinstance(poly, PolyCollection)
    (path,) = poly.get_paths()
    v = path.vertices
    allowed = {(round(a, 9), round(b, 9)) for a, lo, hi in zip(x, lower, upper)
               for b in (lo, hi)}
    drawn = {(round(a, 9), round(b, 9)) for a, b in v}
    assert drawn == allowed
    np.testing.assert_allclose(v[:, 1].min(), np.min(lower), rtol=1e-12)
    np.testing.assert_allclose(v[:, 1].max(), np.max(upper), rtol=1e-12)


def _rug(ax):
    return [ln for ln in ax.get_lines() if ln.get_marker() == "|"]


def _scatter_points(ax):
    """All scatter dots of an Axes, as one (n, 2) array."""
    pts = [c.get_offsets() for c in ax.collections if c.get_offsets().size
           and not isinstance(c, (PolyCollection, LineCollection, QuadMesh))]
    return np.concatenate(pts) if pts else np.zeros((0, 2))


def test_effect_plot_draws_on_given_axes(effects):
    pd_eff, m_eff = effects
    eff = pd_eff["a"]
    fig, ax = plt.subplots()
    out = eff.plot(ax=ax)
    assert out is ax
    # 300 ICE curves thinned to 100 in one collection, plus the PD line and the rug
    (ice,) = [c for c in ax.collections if c.get_label() == "ICE"]
    assert isinstance(ice, LineCollection)
    segments = ice.get_segments()
    assert len(segments) == 100
    rows = {tuple(np.round(r, 12)): i for i, r in enumerate(eff.ice)}
    picked = [rows.get(tuple(np.round(seg[:, 1], 12))) for seg in segments]
    assert None not in picked and len(set(picked)) == 100  # distinct curves of eff.ice
    assert picked == sorted(picked)  # kept in row order
    for seg in segments:
        np.testing.assert_array_equal(seg[:, 0], eff.grid)
    lines = ax.get_lines()
    assert len(lines) == 2
    np.testing.assert_allclose(lines[0].get_xdata(), eff.grid)
    np.testing.assert_allclose(lines[0].get_ydata(), eff.values)
    # the rug: one tick per observed value (300 <= 500, so not thinned to quantiles)
    (rug,) = _rug(ax)
    np.testing.assert_array_equal(np.sort(rug.get_xdata()), np.sort(eff.feature_values))
    assert ax.get_title() == "PD: a"
    plt.close(fig)

    ax = pd_eff["c"].plot()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["u", "v", "w"]
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    np.testing.assert_allclose([b.get_height() for b in bars], pd_eff["c"].values)
    (ice,) = _labelled(ax, "ICE")
    assert len(ice.get_segments()) == 100
    plt.close(ax.figure)

    pair = pd_eff[("a", "b")]
    ax = pair.plot()
    (mesh,) = [c for c in ax.collections if isinstance(c, QuadMesh)]
    np.testing.assert_allclose(np.asarray(mesh.get_array()).reshape(pair.values.T.shape),
                               pair.values.T)
    assert len(ax.collections) > 1  # contour lines over the heatmap
    assert ax.figure.axes[-1].get_ylabel() == f"PD of {pair.output}"  # the colour bar
    plt.close(ax.figure)

    m = m_eff["a"]
    ax = m.plot()
    (band,) = _labelled(ax, "+/- 1 std of predictions")
    _assert_band_polygon(band, m.grid, m.values - m.std, m.values + m.std)
    assert band.get_alpha() == pytest.approx(0.15)  # a spread: fainter than a confidence band
    assert not _labelled(ax, "ICE")  # M-plots have no ICE curves
    assert [t.get_text() for t in ax.get_legend().get_texts()] == \
        ["+/- 1 std of predictions", "mplot"]


@pytest.mark.parametrize("max_ice,expected", [(10, 10), (299, 299), (300, 300), (1000, 300),
                                              (0, None)])
def test_ice_curves_are_thinned_to_max_ice(effects, max_ice, expected):
    eff = effects[0]["a"]
    ax = eff.plot(max_ice=max_ice)
    found = _labelled(ax, "ICE")
    if expected is None:
        assert not found
        return
    (ice,) = found
    assert len(ice.get_segments()) == expected
    assert ice.get_alpha() == pytest.approx(np.clip(8.0 / expected, 0.05, 0.5))
    # another random_state draws another sample of the same size
    other = eff.plot(max_ice=max_ice, random_state=1)
    segs_other = _labelled(other, "ICE")[0].get_segments()
    assert len(segs_other) == expected
    same = all(np.array_equal(a, b) for a, b in zip(ice.get_segments(), segs_other))
    assert same == (expected == 300)


def test_no_ice_no_band_no_rug_when_asked(effects):
    X = np.random.default_rng(1).normal(size=(1000, 2))
    eff = ml.pdp(lambda A: A[:, 0] ** 2, X, features=0, grid=6)["x0"]
    ax = eff.plot()
    assert not _labelled(ax, "ICE")  # no ice curves were computed
    (rug,) = _rug(ax)
    # more than 500 points: the rug shows 101 quantiles of the data
    np.testing.assert_allclose(rug.get_xdata(), np.quantile(X[:, 0], np.linspace(0, 1, 101)))
    ax = eff.plot(rug=False)
    assert not _rug(ax)
    m = effects[1]["a"]
    ax = m.plot(band=False)
    assert not [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert ax.get_legend() is None


@pytest.mark.parametrize("method", ["ale", "dale"])
def test_confidence_band_spans_lower_to_upper(method, ale_effects):
    if method == "ale":
        eff = ale_effects["x0"]
    else:
        rng = np.random.default_rng(5)
        X = rng.normal(size=(500, 2))
        eff = ml.dale(lambda A: A[:, 0] ** 2 * A[:, 1], X, features="x0", bins=7,
                      gradient=lambda A: np.column_stack([2 * A[:, 0] * A[:, 1],
                                                          A[:, 0] ** 2]))["x0"]
    assert eff.band.label == "95% confidence band" and eff.band.level == 0.95
    assert np.all(eff.band.upper - eff.band.lower > 0)
    ax = eff.plot()
    (band,) = _labelled(ax, "95% confidence band")
    _assert_band_polygon(band, eff.grid, eff.band.lower, eff.band.upper)
    assert band.get_alpha() == pytest.approx(0.2)
    (curve,) = [ln for ln in ax.get_lines() if ln.get_label() == method]
    np.testing.assert_allclose(curve.get_ydata(), eff.values)
    assert "95% confidence band" in [t.get_text() for t in ax.get_legend().get_texts()]
    assert ax.get_title() == f"{method.upper()}: x0"
    ax = eff.plot(band=False)
    assert not _labelled(ax, "95% confidence band")


def test_categorical_ale_draws_bars_and_error_bars(ale_effects):
    eff = ale_effects["g"]
    ax = eff.plot()
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(v) for v in eff.grid]
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    np.testing.assert_allclose([b.get_height() for b in bars], eff.values)
    # error bars: one vertical segment per level from the band's lower to its upper limit
    (errs,) = [c for c in ax.collections if isinstance(c, LineCollection)
               and c.get_label() != "ICE"]
    segs = sorted(errs.get_segments(), key=lambda s: s[0, 0])
    assert len(segs) == len(eff.grid)
    for k, seg in enumerate(segs):
        np.testing.assert_allclose(seg[:, 0], [k, k])
        np.testing.assert_allclose(sorted(seg[:, 1]), [eff.band.lower[k], eff.band.upper[k]])


def test_second_order_ale_heatmap_and_empty_cells(ale_effects):
    pair = ale_effects[("x0", "x1")]
    empty = pair.empty_cells
    assert empty.sum() > 0 and (~empty).sum() > 0
    ax = pair.plot()
    (mesh,) = [c for c in ax.collections if isinstance(c, QuadMesh)]
    np.testing.assert_allclose(np.asarray(mesh.get_array()).reshape(pair.values.T.shape),
                               pair.values.T)
    # each empty cell gets one light dot in its middle (one scatter), no hatching
    assert not [p for p in ax.patches if p.get_hatch()]
    (dots,) = [c for c in ax.collections if c.get_gid() == EMPTY_CELL]
    g0, g1 = (np.asarray(g, dtype=float) for g in pair.grid)
    drawn = {(round(a, 9), round(b, 9)) for a, b in dots.get_offsets()}
    cells = {(round((g0[i] + g0[i + 1]) / 2, 9), round((g1[j] + g1[j + 1]) / 2, 9))
             for i, j in zip(*np.nonzero(empty))}
    assert drawn == cells and len(dots.get_offsets()) == int(empty.sum())
    assert dots.get_label() == "empty cell (no data)"
    # a few contour lines, unlabelled
    (contours,) = [c for c in ax.collections if isinstance(c, ContourSet)]
    assert len(contours.levels) == 4
    assert not [t for t in ax.texts if t.get_gid() != "cell support"]  # no contour labels


def test_pdp_pair_with_a_categorical_axis(effects):
    pair = effects[0][("a", "c")]
    ax = pair.plot()
    (mesh,) = [c for c in ax.collections if isinstance(c, QuadMesh)]
    np.testing.assert_allclose(np.asarray(mesh.get_array()).reshape(pair.values.T.shape),
                               pair.values.T)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["u", "v", "w"]
    np.testing.assert_array_equal(ax.get_yticks(), [0, 1, 2])


def test_effects_plot_grid(effects):
    pd_eff, _ = effects
    axes = pd_eff.plot(ncols=2)
    assert axes.shape == (2, 2)
    fig = axes[0, 0].figure
    visible = [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]
    assert len(visible) == 4
    assert [ax.get_title() for ax in visible] == ["PD: a", "PD: c", "PD: a x b", "PD: a x c"]
    plt.close(fig)
    # more axes than effects: the spare ones are hidden
    fig, axes = plt.subplots(2, 3)
    out = pd_eff.plot(axes=axes)
    assert out.shape == (2, 3) and all(a is b for a, b in zip(out.flat, axes.flat))
    assert [ax.get_visible() for ax in axes.ravel()] == [True] * 4 + [False] * 2
    with pytest.raises(ValueError, match="4 effects need 4 axes"):
        pd_eff.plot(axes=axes[0, :2])


def test_effects_plot_takes_ax_like_every_other_plot(effects):
    # review: Effects.plot(ax=ax) ended in "TypeError: _draw() got multiple values for
    # argument 'ax'"; one Axes draws one effect, and several effects on one Axes say how
    pd_eff, _ = effects
    fig, ax = plt.subplots()
    out = ml.Effects([pd_eff["a"]]).plot(ax=ax)
    assert out.shape == (1,) and out[0] is ax
    assert ax.get_title() == "PD: a" and len(ax.lines) > 0
    with pytest.raises(ml.InvalidParameterError, match=r"4 effects need 4 axes.*axes=.*plot\(ax=ax\)"):
        pd_eff.plot(ax=ax)
    with pytest.raises(ml.InvalidParameterError, match="axes= .* or ax=, not both"):
        pd_eff.plot(ax=ax, axes=[ax])


def _mesh(ax):
    (mesh,) = [c for c in ax.collections if isinstance(c, QuadMesh)]
    return mesh


def _flat_cells(mesh, nx, ny):
    """True for flat cells around the grid points ("nearest"), False for values at the
    corners ("gouraud"), read from the mesh's coordinates."""
    shape = mesh.get_coordinates().shape
    assert shape in ((ny + 1, nx + 1, 2), (ny, nx, 2))
    return shape == (ny + 1, nx + 1, 2)


def test_pairs_with_a_categorical_or_boolean_axis_draw_flat_cells_without_contours(
        effects, ale_effects):
    # PD of a numeric x categorical pair: no contour lines across the levels
    pair = effects[0][("a", "c")]
    ax = pair.plot()
    assert [c for c in ax.collections if not isinstance(c, QuadMesh)] == []  # no contours
    assert not ax.texts  # no contour labels
    assert _flat_cells(_mesh(ax), len(pair.grid[0]), len(pair.grid[1]))
    # values from bins on a categorical axis: flat cells too, not gouraud shading
    rng = np.random.default_rng(7)
    values = rng.normal(size=(5, 3))
    binned = Effect(feature=("x", "g"), method="ale", grid=(np.linspace(0, 1, 5),
                                                             np.array(["p", "q", "r"])),
                    values=values, kind=("numeric", "categorical"),
                    bins=Bins(counts=np.ones((4, 2), int), std=np.zeros((4, 2))))
    ax = binned.plot()
    assert [c for c in ax.collections if not isinstance(c, QuadMesh)] == []
    assert not ax.texts
    assert _flat_cells(_mesh(ax), 5, 3)
    np.testing.assert_allclose(np.asarray(_mesh(ax).get_array()).reshape(3, 5), values.T)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["p", "q", "r"]
    # a boolean axis (kind "numeric", values False / True) is two levels as well
    flag = Effect(feature=("flag", "x"), method="pdp",
                  grid=(np.array([False, True]), np.linspace(0, 1, 4)),
                  values=rng.normal(size=(2, 4)), kind=("numeric", "numeric"))
    ax = flag.plot()
    assert [c for c in ax.collections if not isinstance(c, QuadMesh)] == []
    assert _flat_cells(_mesh(ax), 2, 4)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["False", "True"]
    np.testing.assert_array_equal(ax.get_xticks(), [0, 1])
    # numeric x numeric keeps its look: interpolated corners for binned values, contours
    for numeric_pair, flat in ((ale_effects[("x0", "x1")], False),
                               (effects[0][("a", "b")], True)):
        ax = numeric_pair.plot()
        assert [c for c in ax.collections if isinstance(c, ContourSet)]  # contour lines
        g0, g1 = numeric_pair.grid
        assert _flat_cells(_mesh(ax), len(g0), len(g1)) == flat


def test_centered_pair_says_so_on_its_colour_bar():
    eff = Effect(feature=("a", "b"), method="pdp", grid=(np.linspace(0, 1, 4),
                                                          np.linspace(0, 2, 3)),
                 values=np.arange(12.0).reshape(4, 3), kind=("numeric", "numeric"),
                 centered=True, output="P(y = 1)")
    ax = eff.plot()
    assert ax.figure.axes[-1].get_ylabel() == "centered PD of P(y = 1)"
    assert ax.get_title() == "centered PD: a x b"
    plt.close(ax.figure)
    eff.centered = False
    assert eff.plot().figure.axes[-1].get_ylabel() == "PD of P(y = 1)"


def test_effects_grid_draws_one_legend(effects):
    _, m_eff = effects
    assert [k for k, e in m_eff.items() if e.band is not None and e.kind == "numeric"] == \
        ["a", "b"]  # two panels with a band: each drew its own legend before
    fig = m_eff.plot().flat[0].figure
    with_legend = [ax for ax in fig.axes if ax.get_legend() is not None]
    assert len(with_legend) == 1 and not fig.legends
    assert with_legend[0] is fig.axes[0]
    assert [t.get_text() for t in with_legend[0].get_legend().get_texts()] == \
        ["+/- 1 std of predictions", "mplot"]
    plt.close(fig)
    # a single effect still gets its legend
    assert m_eff["a"].plot().get_legend() is not None


def test_effects_grid_shares_y_across_1d_panels_when_asked(effects):
    pd_eff, _ = effects

    def panels(fig):
        return [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]

    fig = pd_eff.plot(sharey=True).flat[0].figure
    a, c, ab, ac = panels(fig)
    assert a.get_shared_y_axes().joined(a, c)
    assert not a.get_shared_y_axes().joined(a, ab) and not a.get_shared_y_axes().joined(a, ac)
    assert a.get_ylim() == c.get_ylim()
    # the shared limits hold the data of both panels (ICE curves included)
    low, high = a.get_ylim()
    for eff in (pd_eff["a"], pd_eff["c"]):
        assert low <= min(eff.ice.min(), eff.values.min(), 0)
        assert high >= max(eff.ice.max(), eff.values.max())
    # heatmaps keep their own y axis (the grid of b / the levels of c)
    assert ab.get_ylim() != ac.get_ylim() != a.get_ylim()
    plt.close(fig)
    # default: each panel has its own y axis
    fig = pd_eff.plot().flat[0].figure
    a, c, _, _ = panels(fig)
    assert not a.get_shared_y_axes().joined(a, c)
    assert a.get_ylim() != c.get_ylim()
    plt.close(fig)
    # axes= and figsize= keep working
    fig, axes = plt.subplots(2, 3)
    assert pd_eff.plot(axes=axes, sharey=True)[0, 0].figure is fig
    assert axes[0, 0].get_shared_y_axes().joined(axes[0, 0], axes[0, 1])
    assert not axes[0, 0].get_shared_y_axes().joined(axes[0, 0], axes[0, 2])
    plt.close(fig)
    fig = pd_eff.plot(figsize=(7, 5), sharey=True).flat[0].figure
    np.testing.assert_allclose(fig.get_size_inches(), [7, 5])


@pytest.mark.parametrize("grid", [np.array([False, True]),
                                  np.array([False, True], dtype=object)])
def test_boolean_feature_is_drawn_as_two_levels(grid):
    ice = np.array([[0.0, 1.0], [0.5, 1.2], [0.2, 0.7]])
    eff = Effect(feature="flag", method="pdp", grid=grid, values=ice.mean(axis=0), ice=ice,
                 feature_values=np.array([True, False, True]))
    ax = eff.plot()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["False", "True"]
    np.testing.assert_array_equal(ax.get_xticks(), [0, 1])
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    np.testing.assert_allclose([b.get_height() for b in bars], eff.values)
    (ice_lines,) = _labelled(ax, "ICE")
    np.testing.assert_allclose([seg[:, 1] for seg in ice_lines.get_segments()], ice)
    assert not _rug(ax)


def test_waterfall_bars_run_from_base_value_to_prediction(attributions):
    attr, _ = attributions
    i = 3
    base, pred = attr.base_values[i], attr.prediction[i]
    for max_display, n_bars in ((10, 6), (4, 4)):
        ax = attr.plot.waterfall(i, max_display=max_display)
        bars = sorted([p for p in ax.patches if isinstance(p, Rectangle)],
                      key=lambda p: p.get_y())  # bottom bar first
        assert len(bars) == n_bars
        widths = np.array([b.get_width() for b in bars])
        lefts = np.array([b.get_x() for b in bars])
        # the bottom bar starts at the base value, each bar starts where the one below ends,
        # and the top bar ends at the prediction
        assert lefts[0] == pytest.approx(base, abs=1e-12)
        np.testing.assert_allclose(lefts[1:], (lefts + widths)[:-1], atol=1e-12)
        assert lefts[-1] + widths[-1] == pytest.approx(pred, abs=1e-10)
        assert widths.sum() == pytest.approx(pred - base, abs=1e-10)
        # top to bottom: features by decreasing |value|, the rest summed in the last bar
        phi = attr.values[i]
        d = phi.size
        order = np.argsort(-np.abs(phi), kind="stable")
        shown = order if max_display >= d else order[:max_display - 1]
        expected = list(phi[shown])
        labels = [f"{attr.feature_names[j]} = {attr.codes[i, j]:.4g}" for j in shown]
        if max_display < d:
            expected.append(phi[order[max_display - 1:]].sum())
            labels.append(f"{d - max_display + 1} other features")
        np.testing.assert_allclose(widths[::-1], expected, atol=1e-12)
        assert [t.get_text() for t in ax.get_yticklabels()] == labels
        colors = [to_rgba(b.get_facecolor())[:3] for b in bars[::-1]]
        assert [c == to_rgba("#d6404e")[:3] for c in colors] == [w >= 0 for w in expected]
        vlines = sorted(ln.get_xdata()[0] for ln in ax.get_lines()
                        if np.ptp(ln.get_xdata()) == 0 and ln.get_linestyle() in ("--", "-")
                        and ln.get_transform() is not ax.transData)
        np.testing.assert_allclose(sorted([base, pred]), vlines, atol=1e-12)
        plt.close(ax.figure)


def test_force_plot_pushes_from_the_base_value_to_the_prediction(attributions):
    attr, _ = attributions
    i = 5
    phi, pred = attr.values[i], attr.prediction[i]
    # x4 does not enter the model: its value is rounding noise (~1e-16), and is not drawn
    assert 0 < abs(phi[4]) < 1e-12
    phi = np.where(np.abs(phi) > 1e-12 * np.abs(phi).sum(), phi, 0.0)
    ax = attr.plot.force(i)
    polys = [p for p in ax.patches if isinstance(p, Polygon)]
    assert len(polys) == int(np.count_nonzero(phi)) == 5
    pos = [p for p in polys if to_rgba(p.get_facecolor())[:3] == to_rgba("#d6404e")[:3]]
    neg = [p for p in polys if p not in pos]
    assert len(pos) == int((phi > 0).sum()) and len(neg) == int((phi < 0).sum())

    # each arrow runs from its tail (vertex 0) to its head (vertex 2) over |phi_j|; the
    # positive ones chain up to f(x), the negative ones chain from f(x) upwards
    def spans(ps):
        ends = sorted((p.get_xy()[0, 0], p.get_xy()[2, 0]) for p in ps)
        return [(min(t, h), max(t, h), h - t) for t, h in ends]

    up = sorted(spans(pos))
    np.testing.assert_allclose(sorted(s[2] for s in up), np.sort(phi[phi > 0]), atol=1e-12)
    assert up[0][0] == pytest.approx(pred - phi[phi > 0].sum(), abs=1e-9)
    assert up[-1][1] == pytest.approx(pred, abs=1e-12)
    np.testing.assert_allclose([s[1] for s in up[:-1]], [s[0] for s in up[1:]], atol=1e-12)
    down = sorted(spans(neg))
    np.testing.assert_allclose(sorted(s[2] for s in down), np.sort(phi[phi < 0]), atol=1e-12)
    assert down[0][0] == pytest.approx(pred, abs=1e-12)
    assert down[-1][1] == pytest.approx(pred - phi[phi < 0].sum(), abs=1e-9)
    np.testing.assert_allclose([s[1] for s in down[:-1]], [s[0] for s in down[1:]], atol=1e-12)
    assert any(t.get_text() == f"f(x) = {pred:.4g}" for t in ax.texts)


@pytest.mark.parametrize("max_display", [10, 3])
def test_beeswarm_one_dot_per_row_and_shown_feature(attributions, max_display):
    attr, X = attributions
    n, d = attr.values.shape
    ax = attr.plot.beeswarm(max_display=max_display)
    lines = min(d, max_display)
    pts = _scatter_points(ax)
    assert pts.shape == (n * lines, 2)
    # each dot sits near its line (within the swarm's width) and at one of its values
    order = np.argsort(-attr.mean_abs(), kind="stable")
    names = [attr.feature_names[j] for j in order[:lines]]
    if d > max_display:
        names[-1] = f"{d - max_display + 1} other features (sum)"
    assert [t.get_text() for t in ax.get_yticklabels()] == names
    for row in range(lines):
        y_line = lines - 1 - row
        on_line = pts[np.abs(pts[:, 1] - y_line) <= 0.4 + 1e-9]
        assert len(on_line) == n
        phi = attr.values[:, order[row]] if not (d > max_display and row == lines - 1) \
            else attr.values[:, order[lines - 1:]].sum(axis=1)
        np.testing.assert_allclose(np.sort(on_line[:, 0]), np.sort(phi), atol=1e-12)


def test_bar_heights_are_mean_absolute_values(attributions):
    attr, _ = attributions
    imp = np.abs(attr.values).mean(axis=0)
    order = np.argsort(-imp, kind="stable")
    ax = attr.plot.bar()
    bars = sorted([p for p in ax.patches if isinstance(p, Rectangle)], key=lambda p: -p.get_y())
    np.testing.assert_allclose([b.get_width() for b in bars], imp[order], rtol=1e-12)
    assert [t.get_text() for t in ax.get_yticklabels()] == \
        [attr.feature_names[j] for j in order]
    ax = attr.plot.bar(max_display=3)
    bars = sorted([p for p in ax.patches if isinstance(p, Rectangle)], key=lambda p: -p.get_y())
    np.testing.assert_allclose([b.get_width() for b in bars],
                               [imp[order[0]], imp[order[1]], imp[order[2:]].sum()], rtol=1e-12)
    assert ax.get_yticklabels()[-1].get_text() == "4 other features (sum)"


def test_dependence_plots_the_feature_against_its_values(attributions):
    attr, X = attributions
    ax = attr.plot.dependence("x2", color="x0")
    pts = _scatter_points(ax)
    np.testing.assert_array_equal(pts[:, 0], X[:, 2])
    np.testing.assert_array_equal(pts[:, 1], attr.values[:, 2])
    (coloured,) = [c for c in ax.collections if c.get_array() is not None and c.get_offsets().size]
    np.testing.assert_array_equal(coloured.get_array(), X[:, 0])  # coloured by x0
    assert ax.figure.axes[-1].get_ylabel() == "x0"
    plt.close(ax.figure)
    ax = attr.plot.dependence(1, color=None)
    pts = _scatter_points(ax)
    np.testing.assert_array_equal(pts[:, 0], X[:, 1])
    np.testing.assert_array_equal(pts[:, 1], attr.values[:, 1])
    assert len(ax.figure.axes) == 1  # no colour bar


def test_dependence_of_a_categorical_feature_jitters_around_its_codes():
    rng = np.random.default_rng(6)
    X = pd.DataFrame({"g": pd.Categorical(rng.choice(["lo", "mid", "hi"], 60),
                                          categories=["lo", "mid", "hi"]),
                      "v": rng.normal(size=60)})
    f = lambda df: (df["g"].cat.codes.to_numpy() * df["v"]).astype(float)  # noqa: E731
    attr = ml.shapley(f, X, background=X[:20], algorithm="exact")
    ax = attr.plot.dependence("g", color=None)
    pts = _scatter_points(ax)
    codes = X["g"].cat.codes.to_numpy()
    assert np.all(np.abs(pts[:, 0] - codes) <= 0.15)
    assert np.any(pts[:, 0] != codes)
    np.testing.assert_array_equal(pts[:, 1], attr.values[:, 0])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["lo", "mid", "hi"]


def _force_spans(phi, pred):
    """The [lo, hi] span of each contribution in a force plot, keyed by feature position."""
    spans = {}
    x = pred - phi[phi > 0].sum()
    for j in [j for j in np.argsort(phi) if phi[j] > 0]:
        spans[j] = (x, x + phi[j])
        x += phi[j]
    x = pred
    for j in [j for j in np.argsort(-phi) if phi[j] < 0][::-1]:
        spans[j] = (x, x - phi[j])
        x -= phi[j]
    return spans


@pytest.mark.parametrize("small,n_drawn", [(1e-16, 2), (0.01, 3), (-0.01, 3)])
def test_force_plot_draws_slivers_inside_their_span(small, n_drawn):
    phi = np.array([2.0, small, -1.0])
    attr = Attributions(values=phi[None], base_values=[0.0], codes=[[1.0, 2.0, 3.0]],
                        feature_names=["a", "b", "c"], method="lime")
    pred = phi.sum()
    ax = attr.plot.force(0)
    polys = [p for p in ax.patches if isinstance(p, Polygon)]
    assert len(polys) == n_drawn  # a contribution of 0 (to float precision) is not drawn
    spans = _force_spans(phi, pred)
    expected = sorted(spans[j] for j in range(3) if abs(phi[j]) > 1e-12)
    drawn = sorted((p.get_xy()[:, 0].min(), p.get_xy()[:, 0].max()) for p in polys)
    np.testing.assert_allclose(drawn, expected, atol=1e-12)
    for p in polys:  # vertex 0 is still the tail and vertex 2 the head
        tail, head = p.get_xy()[0, 0], p.get_xy()[2, 0]
        assert tail != head


def test_force_plot_labels_do_not_overlap():
    # twelve small contributions side by side, eight up and four down, and a big one
    phi = np.array([6.0] + [0.8] * 8 + [-0.8] * 4)
    names = ["big"] + [f"feature_{k}" for k in range(12)]
    attr = Attributions(values=phi[None], base_values=[0.0], codes=np.linspace(0.1, 1.6, 13)[None],
                        feature_names=names, method="lime")
    ax = attr.plot.force(0)
    fig = ax.figure
    labels = [t for t in ax.texts if "\n= " in t.get_text()]
    assert len(labels) == 13  # all of them are large enough to be labelled

    def shown_boxes():
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        shown = [t for t in labels if t.get_visible()]
        boxes = [t.get_window_extent(renderer) for t in shown]
        for k, box in enumerate(boxes):
            for other in boxes[:k]:
                assert not box.overlaps(other), "two labels overlap"
        return [t.get_text().split("\n")[0] for t in shown]

    shown = shown_boxes()
    assert "big" in shown  # the largest contribution keeps its label
    assert 2 <= len(shown) < 13
    # decided when drawn: at a wider figure every label has room
    fig.set_size_inches(40, 2.4)
    assert len(shown_boxes()) == 13
    fig.set_size_inches(9, 2.4)
    assert shown_boxes() == shown


def _boolean_attributions():
    rng = np.random.default_rng(8)
    flag = rng.random(30) < 0.5
    v = rng.normal(size=30)
    codes = np.column_stack([flag.astype(float), v])
    values = np.column_stack([np.where(flag, 0.7, -0.4), 0.3 * v])
    return Attributions(values=values, base_values=np.full(30, 1.0), codes=codes,
                        feature_names=["flag", "v"], method="shapley-exact",
                        columns=[Column("flag", "numeric", dtype=np.dtype(bool)),
                                 Column("v", "numeric")]), flag


def test_boolean_features_are_labelled_false_true():
    assert [_fmt(v) for v in (True, False, np.True_, np.bool_(False), 1, np.float64(1.0))] \
        == ["True", "False", "True", "False", "1", "1"]
    attr, flag = _boolean_attributions()
    i = int(np.flatnonzero(flag)[0])
    ax = attr.plot.waterfall(i)
    assert "flag = True" in [t.get_text() for t in ax.get_yticklabels()]
    plt.close(ax.figure)
    ax = attr.plot.force(i)
    assert "flag\n= True" in [t.get_text() for t in ax.texts]
    plt.close(ax.figure)
    # dependence: the two values as levels, jittered around 0 and 1
    ax = attr.plot.dependence("flag", color=None)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["False", "True"]
    np.testing.assert_array_equal(ax.get_xticks(), [0, 1])
    pts = _scatter_points(ax)
    assert np.all(np.abs(pts[:, 0] - flag) <= 0.15)
    plt.close(ax.figure)
    # and as the colour of another feature
    ax = attr.plot.dependence("v", color="flag")
    assert [t.get_text() for t in ax.figure.axes[-1].get_yticklabels()] == ["False", "True"]
