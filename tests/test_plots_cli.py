import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.cli import main


@pytest.fixture(scope="module")
def effects():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=300), "b": rng.uniform(size=300),
                      "c": pd.Categorical(rng.choice(["u", "v", "w"], 300))})
    f = lambda df: df["a"] * df["b"] + (df["c"] == "v").to_numpy()  # noqa: E731
    return ml.pdp(f, X, features=["a", "c", ("a", "b"), ("a", "c")], ice=True, grid=8), \
        ml.mplot(f, X)


def test_effect_plot_draws_on_given_axes(effects):
    pd_eff, m_eff = effects
    fig, ax = plt.subplots()
    out = pd_eff["a"].plot(ax=ax)
    assert out is ax
    # 300 ICE curves thinned to 100 in one collection, plus the PD line and the rug
    (ice,) = [c for c in ax.collections if c.get_label() == "ICE"]
    assert len(ice.get_segments()) == 100
    rows = {tuple(np.round(r, 12)) for r in pd_eff["a"].ice}
    assert all(tuple(np.round(seg[:, 1], 12)) in rows for seg in ice.get_segments())
    lines = ax.get_lines()
    assert len(lines) == 2
    np.testing.assert_allclose(lines[0].get_ydata(), pd_eff["a"].values)
    plt.close(fig)
    ax = pd_eff["c"].plot()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["u", "v", "w"]
    plt.close(ax.figure)
    ax = pd_eff[("a", "b")].plot()
    assert ax.collections  # heatmap and contours
    plt.close(ax.figure)
    ax = m_eff["a"].plot()
    plt.close(ax.figure)


def test_effects_plot_grid(effects):
    pd_eff, _ = effects
    fig = pd_eff.plot(ncols=2)
    visible = [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]
    assert len(visible) == 4
    plt.close(fig)


def test_demo_writes_plots_and_csv(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--grid", "6", "--rows", "3"]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path) in out
    for name in ("pdp_ice.png", "mplot.png", "ale.png", "shap_beeswarm.png", "effects.csv",
                 "shapley_values.csv"):
        assert (tmp_path / name).stat().st_size > 0
    table = pd.read_csv(tmp_path / "effects.csv")
    assert {"pdp", "mplot", "ale"} <= set(table["method"])
    assert "bmi" in set(table["feature"])
