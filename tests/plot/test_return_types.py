"""Every plot returns Axes (or an array of them), never a Figure: Jupyter then shows it once.

A cell whose last value is a Figure is drawn twice in a notebook: once as the
cell's value and once by the inline backend, which shows every open figure.
"""

import functools

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure

import modellens as ml
from modellens import plot as mlplot


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@functools.cache
def _table():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.uniform(size=200),
                      "c": pd.Categorical(rng.choice(["u", "v", "w"], 200))})
    return X, lambda df: df["a"] * df["b"] + (df["c"] == "v").to_numpy()


@functools.cache
def _shapley():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 4))
    return ml.shapley(lambda Z: Z @ [1.0, -2.0, 0.5, 0.0] + Z[:, 0] * Z[:, 1], X,
                      background=X[:10], algorithm="exact")


@functools.cache
def _lime():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    f = lambda Z: Z[:, 0] - 2 * Z[:, 1]  # noqa: E731
    return ml.lime(f, X[:3], training_data=X, num_samples=300, random_state=0), \
        ml.lime_width_sweep(f, X[:1], training_data=X, num_samples=300, random_state=0)


@functools.cache
def _text():
    f = lambda T: np.array([float("good" in t) for t in T])  # noqa: E731
    return ml.lime_text(f, "a good film, a good cast", num_samples=200, random_state=0)


@functools.cache
def _image():
    img = np.zeros((16, 16, 3))
    img[:8, :8] = 1.0
    segments = np.arange(16).reshape(4, 4).repeat(4, axis=0).repeat(4, axis=1)
    return ml.lime_image(lambda B: B.reshape(len(B), -1).mean(axis=1), img,
                         segmentation=segments, num_samples=200, random_state=0)


def _effects():
    X, f = _table()
    return ml.pdp(f, X, features=["a", "c", ("a", "b")], ice=True, grid=6)


DRAWS = {
    "Effect.plot": lambda: _effects()["a"].plot(),
    "Effect.plot (2-D)": lambda: ml.ale(*reversed(_table()), [("a", "b")], bins=5)[0].plot(),
    "Effects.plot": lambda: _effects().plot(),
    "plot_effect": lambda: mlplot.plot_effect(_effects()["c"]),
    "plot_effects": lambda: mlplot.plot_effects(_effects()),
    "Interactions.plot": lambda: ml.interactions(_table()[1], _table()[0], sample=40).plot(),
    "plot_interactions": lambda: mlplot.plot_interactions(
        ml.interactions(_table()[1], _table()[0], sample=40)),
    "attr.plot()": lambda: _shapley().plot(),
    "attr[0].plot()": lambda: _shapley()[0].plot(),
    "waterfall": lambda: _shapley().plot.waterfall(0),
    "force": lambda: _shapley().plot.force(0),
    "beeswarm": lambda: _shapley().plot.beeswarm(),
    "bar": lambda: _shapley().plot.bar(),
    "dependence": lambda: _shapley().plot.dependence(0),
    "lime plot()": lambda: _lime()[0][0].plot(),
    "lime weights": lambda: _lime()[0].plot.weights(1),
    "lime beeswarm": lambda: _lime()[0].plot(),
    "width sweep": lambda: _lime()[1].plot(),
    "text plot()": lambda: _text().plot(),
    "text": lambda: _text().plot.text(),
    "image plot()": lambda: _image().plot(),
    "image": lambda: _image().plot.image(),
}


@pytest.mark.parametrize("name", list(DRAWS))
def test_plots_return_axes_not_a_figure(name):
    out = DRAWS[name]()
    assert not isinstance(out, Figure)
    axes = np.ravel(np.asarray(out, dtype=object))
    assert axes.size >= 1 and all(isinstance(ax, Axes) for ax in axes)
    # the figure is one step away, for saving
    assert isinstance(axes[0].figure, Figure)


def test_effects_grid_returns_the_grid_of_axes():
    axes = _effects().plot(ncols=2)
    assert axes.shape == (2, 2)
    assert [ax.get_visible() for ax in axes.flat] == [True, True, True, False]
    assert {id(ax.figure) for ax in axes.flat} == {id(axes[0, 0].figure)}


@pytest.mark.parametrize("result, drawn", [
    (lambda: _shapley(), "beeswarm"),
    (lambda: _shapley()[3], "waterfall"),
    (lambda: _lime()[0][1], "weights"),
    (lambda: _lime()[0], "beeswarm"),
    (lambda: _text(), "text"),
    (lambda: _image(), "image"),
])
def test_calling_plot_draws_the_natural_picture(result, drawn):
    attr = result()
    assert attr.plot._natural() == drawn
    ax = attr.plot()
    # the same picture as the named method: compare what was drawn
    other = getattr(attr.plot, drawn)()
    assert ax.get_title() == other.get_title()
    assert [t.get_text() for t in ax.get_yticklabels()] == \
        [t.get_text() for t in other.get_yticklabels()]
    assert len(ax.patches) == len(other.patches) and len(ax.texts) == len(other.texts)


def test_calling_plot_passes_keywords_on():
    attr = _lime()[0][0]
    ax = attr.plot(max_display=1)
    assert len(ax.patches) == 1
    # a continuous LIME row has no waterfall; plot() draws its weights instead
    continuous = ml.lime(lambda Z: Z[:, 0], np.zeros((1, 2)), discretize=None,
                         training_data=np.random.default_rng(0).normal(size=(50, 2)),
                         num_samples=100, random_state=0)
    assert continuous.plot().get_xlabel() == continuous.plot.weights().get_xlabel()


@pytest.mark.parametrize("draw", [lambda: _effects().plot(), lambda: _effects().plot(ncols=2),
                                  lambda: ml.interactions(_table()[1], _table()[0],
                                                          sample=40).plot()])
def test_a_grid_of_axes_has_a_one_line_repr(draw):
    # a notebook prints the cell's value under the picture: one line, not one per panel
    out = draw()
    assert "\n" not in repr(out) and len(repr(out)) < 80
    assert all(isinstance(ax, Axes) for ax in np.ravel(out))
