"""Names and levels with ``$`` are drawn as text in every plot, never as mathtext."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import modellens as ml  # noqa: E402

BAD = r"$\foo$"  # mathtext that cannot be parsed: drawing it raised
SUB = "b$_x$"  # mathtext that draws a subscript instead of the name


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({BAD: rng.normal(size=60), "price $": rng.normal(size=60),
                      "lvl": rng.choice([SUB, "$a$"], 60)})

    def f(A):
        return A[BAD].to_numpy() + 2 * A["price $"].to_numpy() + (A["lvl"] == SUB).to_numpy()
    return f, X


def _drawn_as_text(out):
    axes = np.asarray(out, dtype=object).ravel()
    fig = axes[0].figure
    fig.canvas.draw()  # raised ValueError (mathtext) before
    texts = [t for t in fig.findobj(Text) if "$" in t.get_text()]
    assert texts, "the plot shows none of the names"
    assert all(not t.get_parse_math() for t in texts), [t.get_text() for t in texts
                                                       if t.get_parse_math()]
    plt.close(fig)


@pytest.mark.parametrize("draw", [
    lambda f, X: ml.pdp(f, X).plot(),
    lambda f, X: ml.ale(f, X, [BAD, "lvl"]).plot(),
    lambda f, X: ml.mplot(f, X).plot(),
    lambda f, X: ml.pdp(f, X, [(BAD, "price $")], grid=4).plot(),
    lambda f, X: ml.interactions(f, X, sample=30).plot(),
], ids=["pdp", "ale", "mplot", "pdp-2d", "interactions"])
def test_effect_plots_draw_names_as_text(data, draw):
    _drawn_as_text(draw(*data))


@pytest.mark.parametrize("kind", ["bar", "beeswarm", "waterfall", "force", "dependence"])
def test_attribution_plots_draw_names_as_text(data, kind):
    f, X = data
    a = ml.shapley(f, X[:8], background=X[:20])
    plot = getattr(a.plot, kind)
    _drawn_as_text(plot(0) if kind in ("waterfall", "force") else
                   plot(BAD, color="price $") if kind == "dependence" else plot())


def test_lime_weights_draw_names_as_text(data):
    f, X = data
    a = ml.lime(f, X[:2], training_data=X, num_samples=200, random_state=0)
    _drawn_as_text(a.plot.weights(0))


def test_the_users_own_axes_keep_their_mathtext(data):
    f, X = data
    fig, (mine, ours) = plt.subplots(1, 2)
    mine.set_title(r"$\alpha$")
    ml.pdp(f, X, [BAD])[BAD].plot(ax=ours)
    fig.canvas.draw()
    assert mine.title.get_parse_math()
    assert not ours.xaxis.label.get_parse_math()
    plt.close(fig)


def test_a_huge_level_is_cut_in_the_picture(tmp_path):
    # a 300,000-character level made a picture too wide to save (MemoryError / ValueError)
    rng = np.random.default_rng(1)
    huge = "x" * 300_000
    X = pd.DataFrame({"a": rng.normal(size=40), "c": rng.choice(["short", huge], 40)})

    def f(A):
        return A["a"].to_numpy() + (A["c"] == huge).to_numpy()

    row = int(np.flatnonzero(X["c"] == huge)[0])
    attributions = ml.shapley(f, X.iloc[[row]], background=X)
    for axes in (ml.pdp(f, X, ["c"]).plot(), attributions.plot.waterfall(0)):
        fig = np.asarray(axes, dtype=object).ravel()[0].figure
        fig.savefig(tmp_path / "huge.png", bbox_inches="tight")
        texts = [t.get_text() for t in fig.findobj(Text)]
        assert max(map(len, texts)) <= 120
        assert any("xxxx" in t and t.endswith("\u2026") for t in texts)
        plt.close(fig)
