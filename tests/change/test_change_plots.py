"""The pictures of what changed draw what the results hold."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import modellens as ml  # noqa: E402
from modellens.plot.change import plot_paired_beeswarm  # noqa: E402


def _data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(120, 3))


def test_drift_bars_with_intervals_largest_on_top():
    X = _data()
    cur = X + [0.0, 1.0, 0.0]
    s = ml.shift(lambda A: A @ [1.0, 2.0, 0.1], X, cur, n_pairs=100, random_state=0)
    ax = s.plot()
    assert [t.get_text() for t in ax.get_yticklabels()][-1] == "x1"
    bars = [p.get_width() for p in ax.patches]
    assert np.isclose(max(bars, key=abs), s.contribution[1])


def test_cohort_bars_and_paired_beeswarm():
    X = _data()
    old = ml.shapley(lambda A: A @ [1.0, 2.0, 0.1], X[:40], background=X[:30])
    new = ml.shapley(lambda A: A @ [1.0, 0.5, 0.1], X[:40], background=X[:30])
    ax = plot_paired_beeswarm(old, new)
    assert [t.get_text() for t in ax.get_yticklabels()][-1] == "x1"  # moved most
    offsets = ax.collections[-1].get_offsets()  # x1 after: its values, above its row
    assert np.allclose(np.sort(offsets[:, 0]), np.sort(new.values[:, 1]))
    g = old.compare_groups(X[:40, 0] > 0, n_boot=50, random_state=0)
    assert [t.get_text() for t in g.plot().get_yticklabels()][-1] == "x0"
    with pytest.raises(ml.InvalidParameterError, match="same rows"):
        plot_paired_beeswarm(old, new[:5])


def test_difference_waterfall_is_the_attribution_waterfall():
    X = _data()
    diff = ml.compare(lambda A: A @ [1.0, 2.0, 0.0], lambda A: A @ [1.0, 2.5, 0.0], X[:3],
                      background=X)
    ax = diff.plot.waterfall(0)
    assert "model_b - model_a" in " ".join(t.get_text() for t in ax.texts) + ax.get_xlabel() \
        + ax.get_title()
