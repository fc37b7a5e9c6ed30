"""Attributions as a core plus typed blocks: flat attributes, layouts, indexing, plots."""

import matplotlib
import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.attribution import Attributions
from modellens.attribution._blocks import MediaBlock, SamplingBlock, SurrogateBlock

matplotlib.use("Agg")

@pytest.fixture(scope="module")
def lime_attr():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200),
                      "c": rng.normal(size=200)})
    f = lambda D: 2 * D["a"].to_numpy() - D["b"].to_numpy() + D["a"].to_numpy() * D["c"].to_numpy()  # noqa
    return ml.lime(f, X.iloc[:4], training_data=X, num_samples=300, stability=3,
                   random_state=0)


def test_the_flat_layout_of_schema_1_is_no_longer_read(lime_attr):
    """The project is unreleased: a dict without "schema" (the old flat layout) is refused."""
    d = lime_attr.to_dict()
    del d["schema"]
    with pytest.raises(ml.InvalidParameterError, match="schema None, which this version of "
                                                       "modellens does not write"):
        Attributions.from_dict(d)


def test_a_newer_schema_is_refused_with_the_reason(lime_attr):
    d = lime_attr.to_dict()
    d["schema"] = 99
    with pytest.raises(ml.InvalidParameterError, match="schema 99.*upgrade"):
        Attributions.from_dict(d)


def test_lime_fills_the_surrogate_block(lime_attr):
    a = lime_attr
    s = a.surrogate
    assert isinstance(s, SurrogateBlock) and a.sampling is None and a.media is None
    assert a.intercept is s.intercept and a.score is s.score
    assert a.local_prediction is s.local_prediction
    assert len(s.conditions) == 4
    assert (s.num_samples, s.discretize, s.feature_selection, s.sampling) == \
        (300, "quartile", "auto", "per_row")
    np.testing.assert_allclose(s.kernel_width, 0.75 * np.sqrt(3))
    assert a.diagnostics == {"n_model_rows": 4 * 3 * 300}
    assert not hasattr(a, "extra")  # the compatibility view is gone: the blocks hold these
    with pytest.raises(AttributeError):
        a.intercept = None  # the flat names read the blocks


def test_indexing_selects_rows_and_features_of_every_block(lime_attr):
    a = lime_attr
    sub = a[[2, 0], ["c", "a"]]
    np.testing.assert_array_equal(sub.values, a.values[[2, 0]][:, [2, 0]])
    np.testing.assert_array_equal(sub.surrogate.score_holdout, a.surrogate.score_holdout[[2, 0]])
    assert sub.surrogate.conditions == [[a.surrogate.conditions[i][j] for j in (2, 0)]
                                        for i in (2, 0)]
    st = sub.surrogate.stability
    np.testing.assert_array_equal(st["weight_std"], a.surrogate.stability["weight_std"][[2, 0]]
                                  [:, [2, 0]])
    np.testing.assert_array_equal(st["same_top_k"], a.surrogate.stability["same_top_k"][[2, 0]])
    assert st["repeats"] == 3 and sub.surrogate.kernel_width == a.surrogate.kernel_width

    X = np.random.default_rng(1).normal(size=(6, 3))
    perm = ml.shapley(lambda A: A[:, 0] * A[:, 1] + A[:, 2], X, background=X,
                      algorithm="permutation", n_permutations=10, random_state=0)
    one = perm[[4], [1, 2]]
    np.testing.assert_array_equal(one.std, perm.std[[4]][:, [1, 2]])
    np.testing.assert_array_equal(one.sampling.dof, perm.sampling.dof[[4]])
    assert one.sampling.n_permutations == 10 and one.diagnostics["n_background"] == 6


def test_the_constructor_takes_the_blocks_only():
    a = Attributions(values=[[1.0, -2.0]], base_values=[0.5], codes=[[1.0, 1.0]],
                     feature_names=["u", "v"], method="lime",
                     surrogate=SurrogateBlock(intercept=np.array([0.5]), score=np.array([0.9]),
                                              interpretable="continuous"),
                     sampling=SamplingBlock(std=np.array([[0.1, 0.2]]), dof=np.array([9.0])),
                     diagnostics={"n_model_rows": 10})
    assert a.intercept[0] == 0.5 and a.sampling.dof[0] == 9.0
    assert a.diagnostics == {"n_model_rows": 10}
    # continuous weights are slopes: the additive plots refuse them, as before
    with pytest.raises(ml.InvalidParameterError, match="discretize=None"):
        a.plot.waterfall(0)
    for legacy in ({"std": [[0.1, 0.2]]}, {"intercept": [0.5]}, {"extra": {}}):
        with pytest.raises(TypeError):
            Attributions([[1.0, -2.0]], [0.5], [[1.0, 1.0]], ["u", "v"], "lime", **legacy)
    with pytest.raises(TypeError):  # keyword-only past the core five
        Attributions([[1.0]], [0.0], [[1.0]], ["u"], "lime", "prediction")


def test_plots_read_the_blocks_not_extra():
    text = "good plot, dull film"
    spans = np.array([[0, 4, 0], [5, 9, 1], [11, 15, 2], [16, 20, 3]])
    a = Attributions(values=[[0.5, 0.2, -0.3, 0.0]], base_values=[0.1], codes=np.ones((1, 4)),
                     feature_names=["good", "plot", "dull", "film"], method="lime",
                     surrogate=SurrogateBlock(intercept=np.array([0.1]), score=np.array([0.75]),
                                              score_holdout=np.array([0.5]),
                                              interpretable="words"),
                     media=MediaBlock("text", text=text, spans=spans))
    html = a.plot.text_html(0)
    assert "R\u00b2 = 0.75" in html and "held-out 0.50" in html and "good" in html
    ax = a.plot.weights(0)
    assert "held-out 0.50" in ax.get_title()
    s = Attributions(values=[[1.0]], base_values=[0.0], codes=[[1.0]], feature_names=["x"],
                     method="shapley-kernel", sampling=SamplingBlock(std=np.array([[0.1]]),
                                                                     dof=np.array([4.0])))
    lo, hi = s.confidence_interval(0.95)
    from scipy.stats import t
    np.testing.assert_allclose(hi - lo, 2 * t.ppf(0.975, 4) * 0.1)


def test_dataclass_tools_still_work(lime_attr):
    import dataclasses

    doubled = dataclasses.replace(lime_attr, values=lime_attr.values * 2)
    np.testing.assert_array_equal(doubled.values, lime_attr.values * 2)
    assert doubled.surrogate is lime_attr.surrogate and doubled.surrogate.num_samples == 300
    assert dataclasses.asdict(lime_attr)["surrogate"]["num_samples"] == 300
