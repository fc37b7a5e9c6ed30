"""Pictures stay readable where the numbers are extreme or the grid is dense."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.contour import ContourSet

import modellens as ml
from modellens.attribution.lime_result import WidthSweep
from modellens.plot.effects import EMPTY_CELL


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _r2_axis(ax):
    (twin,) = [other for other in ax.figure.axes if other is not ax]
    return twin


def test_width_sweep_clips_the_held_out_r2_axis_and_marks_what_falls_below():
    widths = np.geomspace(0.01, 10, 6)
    held = np.array([-3e10, -4.5e3, -1.0, -0.2, 0.6, 0.3])
    sweep = WidthSweep(widths, np.ones((6, 2)), held, held, ["a", "b"], 1.5)
    ax = sweep.plot()
    twin = _r2_axis(ax)
    low, high = twin.get_ylim()
    assert -1.1 <= low <= -1.0 and high == 1.0
    # the line keeps the true values (the axis clips them); the two below -1 are marked
    (line, marks) = twin.get_lines()
    np.testing.assert_array_equal(line.get_ydata(), held)
    np.testing.assert_array_equal(marks.get_xdata(), widths[:2])
    np.testing.assert_array_equal(marks.get_ydata(), [-1.0, -1.0])
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[-2:] == ["held-out R\u00b2", "held-out R\u00b2 < -1 (off the axis)"]


def test_width_sweep_axis_is_zero_to_one_when_every_fit_is_good():
    widths = np.geomspace(0.1, 10, 4)
    held = np.array([0.2, 0.5, 0.9, 0.7])
    ax = WidthSweep(widths, np.ones((4, 1)), held, held, ["a"], 1.0).plot()
    twin = _r2_axis(ax)
    assert twin.get_ylim()[1] == 1.0 and -0.05 <= twin.get_ylim()[0] <= 0.0
    assert len(twin.get_lines()) == 1  # nothing off the axis, no marks


def test_width_sweep_of_a_real_row_with_narrow_widths():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    f = lambda Z: np.sin(3 * Z[:, 0]) + Z[:, 1] ** 2  # noqa: E731
    sweep = ml.lime_width_sweep(f, X[:1], training_data=X, random_state=0, discretize=None,
                                widths=np.geomspace(0.02, 20, 12), num_samples=500)
    assert np.nanmin(sweep.score_holdout) < -10  # narrow kernels: R^2 far below 0
    low, high = _r2_axis(sweep.plot()).get_ylim()
    assert -1.1 <= low and high == 1.0


def test_twenty_bin_second_order_ale_has_few_unlabelled_contours_and_light_marks():
    rng = np.random.default_rng(5)
    x0 = rng.uniform(0, 1, 600)
    X = pd.DataFrame({"x0": x0, "x1": x0 + rng.normal(0, 0.08, 600)})
    pair = ml.ale(lambda df: df["x0"] * df["x1"] + np.sin(4 * df["x0"]), X,
                  [("x0", "x1")], bins=20)[0]
    empty = pair.empty_cells
    assert empty.shape == (20, 20) and empty.sum() > 100
    ax = pair.plot()
    (contours,) = [c for c in ax.collections if isinstance(c, ContourSet)]
    assert len(contours.levels) == 4
    assert not ax.texts  # no contour labels
    assert not ax.patches  # no hatched rectangles, one per cell
    (dots,) = [c for c in ax.collections if c.get_gid() == EMPTY_CELL]
    assert len(dots.get_offsets()) == int(empty.sum())
    # light: small, white, partly transparent
    assert dots.get_sizes()[0] <= 10 and dots.get_alpha() < 1
