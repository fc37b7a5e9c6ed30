"""The report draws its still pictures outside pyplot, the heatmaps' pairs do not grow with
the classes, and TreeSHAP explains each scatter row once."""

import warnings

import numpy as np
import pandas as pd
import pytest

import modellens as ml


def _data(n=160, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                      "c": rng.uniform(-1, 1, n),
                      "colour": pd.Categorical(rng.choice(["red", "green", "blue"], n))})
    y = X.a + X.b * X.c + (X.colour == "red") + rng.normal(0, 0.1, n)
    return X, y


def test_a_report_with_20_pyplot_figures_open_neither_warns_nor_touches_them(monkeypatch):
    """A user's open figures: pyplot warns whenever a figure opens while 20 are (so a report
    drawing through pyplot warned once per picture, on its page or the console, for a user
    with 20 open); a report drawing on plain Figures opens none in pyplot, and leaves the
    user's figures as they were (with 25 open as well)."""
    import matplotlib.pyplot as plt
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = _data()
    model = HistGradientBoostingRegressor(max_iter=10, categorical_features="from_dtype",
                                          random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (pyplot's warning about the user's own figures)
        mine = [plt.figure() for _ in range(20)]
    before = plt.get_fignums()
    opened = []
    real = plt.figure
    monkeypatch.setattr(plt, "figure", lambda *a, **k: opened.append(1) or real(*a, **k))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rep = ml.report(model, X, y, X_reference=X.iloc[:80], y_reference=y.iloc[:80],
                        sample=120, n_explain=4, n_background=8, grid=5, progress=False)
        rep.to_html()
    assert not [w for w in caught if "More than 20 figures" in str(w.message)]
    shown = [text for sec in rep.sections.values() for text in sec.warnings]
    assert not [text for text in shown if "More than 20 figures" in text]
    assert not opened  # no figure of pyplot's, even for a moment
    assert plt.get_fignums() == before and all(plt.fignum_exists(f.number) for f in mine)
    # every section drew (the plot functions' own figures too: bar, beeswarm, waterfall,
    # LIME weights, the changed section's charts)
    assert {"effects", "shapley", "lime", "changed", "quality"} <= set(rep.sections)
    assert all(f.rendered for sec in rep.sections.values() for f in sec.figures)


def test_plain_figures_keep_the_plots_out_of_pyplot_only_inside():
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from modellens.plot import plain_figures

    X, _ = _data(40)
    attr = ml.shapley(lambda A: A[:, 0] * A[:, 1], X[["a", "b"]].to_numpy()[:5],
                      background=X[["a", "b"]].to_numpy()[:10], algorithm="exact")
    before = plt.get_fignums()
    with plain_figures():
        ax = attr.plot.bar()
        effect_ax = ml.pdp(lambda A: A[:, 0], X[["a", "b"]].to_numpy(), [0], grid=4,
                           progress=False)[0].plot()
    assert plt.get_fignums() == before
    for fig in (ax.figure, effect_ax.figure):
        assert type(fig.canvas) is FigureCanvasAgg and fig.canvas.manager is None
    outside = attr.plot.bar()  # a user's call: pyplot's figure, as notebooks show it
    assert outside.figure.number in plt.get_fignums()


def _ranked(*pairs):
    return [(p, 1.0 / (i + 1), 0.5) for i, p in enumerate(pairs)]


def test_the_heatmaps_pairs_hold_each_outputs_strongest_and_do_not_grow_with_outputs():
    from modellens.report._sections.interaction import SCREEN_DRAWN_PAIRS, _drawn_pairs

    pairs = [(f"x{i}", f"x{j}") for i in range(6) for j in range(i + 1, 6)]  # 15
    one = _ranked(*pairs)
    # one output: its best pairs
    assert _drawn_pairs([one], 0) == pairs[:SCREEN_DRAWN_PAIRS]
    # several outputs whose strongest pairs agree: the same pairs as one output's
    assert _drawn_pairs([one] * 7, 3) == pairs[:SCREEN_DRAWN_PAIRS]
    # each output's strongest pair has a heatmap, the explained output's ranking fills the
    # rest, in its order
    others = [_ranked(*([pairs[k]] + [p for p in pairs if p != pairs[k]])) for k in (9, 12)]
    drawn = _drawn_pairs([one] + others, 0)
    assert len(drawn) == SCREEN_DRAWN_PAIRS
    assert drawn == pairs[:SCREEN_DRAWN_PAIRS - 2] + [pairs[9], pairs[12]]
    # more outputs with strongest pairs of their own than places: each keeps its own
    many = [_ranked(*([pairs[k]] + [p for p in pairs if p != pairs[k]])) for k in range(9)]
    drawn = _drawn_pairs(many, 4)
    assert sorted(drawn) == sorted(pairs[:9]) and drawn[0] == pairs[4]


def test_treeshap_explains_each_scatter_row_once(monkeypatch):
    """The one-row probe's values lead the scatter's: no row is explained twice, and the
    result equals TreeSHAP of every scatter row in one call (to rounding: a one-row call may
    take another kernel path, 7e-18 apart on a forest's probabilities)."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    from test_report_multiclass import tree_rows

    X, y = _data()
    X = X[["a", "b", "c"]]
    model = HistGradientBoostingRegressor(max_iter=10).fit(X, y)
    asked = tree_rows(monkeypatch)
    rep = ml.report(model, X, sections=["shapley"], sample=120, n_explain=4, n_background=8,
                    grid=5, shapley_budget=1, n_explain_tree=50, progress=False)
    sec = rep.sections["shapley"]
    rows = sec.data["scatter_rows"]
    assert asked == [1, len(rows) - 1]
    whole = ml.shapley(model, X.iloc[rows], background=X.iloc[sec.data["background_rows"]],
                       algorithm="tree", progress=False)
    got = sec.data["scatter"]
    for name in ("values", "base_values", "prediction"):
        np.testing.assert_allclose(getattr(got, name), getattr(whole, name), rtol=0,
                                   atol=1e-14, err_msg=name)
    for name in ("codes", "row_labels"):
        np.testing.assert_array_equal(getattr(got, name), getattr(whole, name), err_msg=name)
    assert got.diagnostics == pytest.approx(whole.diagnostics)
    assert (got.method, got.output, got.feature_names) == \
        (whole.method, whole.output, whole.feature_names)
