"""One result protocol (issue 46): every public result reads, saves, loads and draws alike.

Every public result class has ``to_frame``, ``to_dict`` / ``from_dict`` and
``plot(ax=None, *, output=None, ...)`` (``ax`` and ``output`` by keyword), and
``for_output`` where it can hold several outputs; ``Effects`` is a ``Mapping``.
"""

import inspect
import json
from collections.abc import Mapping

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.plot.attributions import AttributionPlots

#: The public result classes.
RESULTS = [ml.Effect, ml.Effects, ml.Attributions, ml.Interactions, ml.InteractionPairs,
           ml.Regions, ml.Importance, ml.WidthSweep, ml.AttributionSummary,
           ml.DistributedAttributions, ml.Shift, ml.GroupComparison, ml.DeletionCurves]

#: Public classes that are not results, and why.
NOT_RESULTS = {
    "Band": "a part of an Effect (its confidence band), saved and drawn with it",
    "Bins": "a part of an Effect (its ALE / DALE bins), saved and drawn with it",
    "Report": "a page: save() and to_html() are its protocol",
    "ReportOptions": "the options of report(), checked when made",
    "Warming": "a handle on a background compile",
    "TextMasker": "an option of shapley()",
    "ImageMasker": "an option of shapley()",
}

#: What a result leaves out of the protocol, and why.
EXEMPT = {
    (ml.DistributedAttributions, "to_dict"): "lazy: its rows stay on the cluster; "
                                             "summary() is the in-memory result",
    (ml.DistributedAttributions, "from_dict"): "lazy (see to_dict)",
    (ml.DistributedAttributions, "plot"): "lazy: summary().plot() draws one pass's numbers",
    (ml.Importance, "output"): "one score over every output of the model",
    (ml.Importance, "for_output"): "one score over every output of the model",
}


def _is_error_or_warning(cls):
    return issubclass(cls, (Exception, Warning))


def test_every_public_class_is_a_result_or_said_not_to_be():
    classes = {name for name in ml.__all__ if inspect.isclass(getattr(ml, name))
               and not _is_error_or_warning(getattr(ml, name))}
    assert classes == {c.__name__ for c in RESULTS} | set(NOT_RESULTS)


def _plot_signature(cls):
    plot = cls.plot
    if isinstance(plot, property):  # the accessor: attr.plot(...) calls it
        plot = AttributionPlots.__call__
    return inspect.signature(plot)


def _keyword(sig, name):
    p = sig.parameters.get(name)
    return p is not None and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)


@pytest.mark.parametrize("cls", RESULTS, ids=lambda c: c.__name__)
def test_each_result_follows_the_protocol(cls):
    missing = []
    for name in ("to_frame", "to_dict", "from_dict", "plot", "for_output"):
        if (cls, name) in EXEMPT:
            continue
        if not callable(getattr(cls, name, None)) and not isinstance(
                getattr(cls, name, None), property):
            missing.append(name)
    if (cls, "from_dict") not in EXEMPT and "from_dict" not in missing:
        assert isinstance(inspect.getattr_static(cls, "from_dict"), classmethod), cls
    if (cls, "plot") not in EXEMPT and "plot" not in missing:
        sig = _plot_signature(cls)
        params = [p for p in sig.parameters if p != "self"]
        if not _keyword(sig, "ax"):
            missing.append("plot(ax=)")
        elif cls is not ml.Regions:  # Regions.plot(feature=None, ax=None): a feature first
            assert params[0] == "ax", f"{cls.__name__}.plot: ax first, got {params}"
        if (cls, "output") not in EXEMPT and not _keyword(sig, "output"):
            missing.append("plot(output=)")
    assert not missing, f"{cls.__name__} lacks {missing}"


def test_exemptions_are_real():
    for (cls, name) in EXEMPT:
        if name == "output":
            assert not _keyword(_plot_signature(cls), "output")
        else:
            assert not hasattr(cls, name), f"{cls.__name__}.{name} exists: drop its exemption"


def test_effects_is_a_mapping_of_its_features():
    X = np.random.default_rng(0).normal(size=(40, 3))
    effects = ml.pdp(lambda A: A[:, 0] + A[:, 1] * A[:, 2], X, ["x0", ("x1", "x2")], grid=3)
    assert isinstance(effects, Mapping)
    assert list(effects) == ["x0", ("x1", "x2")] and len(effects) == 2
    assert "x0" in effects and ("x1", "x2") in effects and ["x1", "x2"] in effects
    assert 0 not in effects and "x9" not in effects and {} not in effects
    assert effects.get(0) is None and effects.get(0, "default") == "default"
    assert effects.get("x0") is effects["x0"]
    assert dict(effects.items())["x0"] is effects["x0"]
    # integer column labels are keys (their str): a label, never a position
    frame = pd.DataFrame(X, columns=[5, 6, 7])
    labelled = ml.pdp(lambda D: D[5].to_numpy(), frame, [5], grid=3)
    assert 5 in labelled and 0 not in labelled and labelled.get(5).feature == "5"


def _json(obj):
    return type(obj).from_dict(json.loads(json.dumps(obj.to_dict(), allow_nan=False)))


def test_width_sweep_reads_saves_loads_and_draws():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    train = np.random.default_rng(0).normal(size=(100, 2))
    sweep = ml.lime_width_sweep(lambda A: A * [1.0, -1.0], train[:1], training_data=train,
                                num_samples=200, random_state=0)
    back = _json(sweep)
    for name in ("widths", "values", "score", "score_holdout"):
        np.testing.assert_array_equal(getattr(back, name), getattr(sweep, name))
    assert back.outputs == sweep.outputs and back.feature_names == sweep.feature_names
    np.testing.assert_array_equal(back.for_output(1).values, sweep.for_output(1).values)
    frame = sweep.to_frame()
    assert list(frame.columns) == ["output", "width", "x0", "x1", "score", "score_holdout"]
    assert len(frame) == 2 * len(sweep.widths)
    one = frame[frame.output == sweep.outputs[1]]
    np.testing.assert_array_equal(one[["x0", "x1"]].to_numpy(), sweep.values[:, :, 1])
    _, ax = plt.subplots()
    assert sweep.plot(ax, output=1) is ax
    plt.close("all")


def test_attribution_summary_reads_saves_loads_and_draws():
    dd = pytest.importorskip("dask.dataframe")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = pd.DataFrame({"a": np.linspace(-1, 1, 21), "b": np.linspace(0, 1, 21) ** 2})
    f = lambda D: np.column_stack([3 * D["a"], -D["b"]])  # noqa: E731
    summary = ml.shapley(f, dd.from_pandas(df, npartitions=3), background=df).summary(
        sample=6, random_state=0)
    back = _json(summary)
    pd.testing.assert_frame_equal(back.importance, summary.importance)
    np.testing.assert_array_equal(back.rows, summary.rows)
    np.testing.assert_array_equal(back.sample.values, summary.sample.values)
    one = summary.for_output(1)
    np.testing.assert_array_equal(one.mean_abs(), summary.importance.iloc[:, 1].to_numpy())
    np.testing.assert_array_equal(one.sample.values, summary.sample.for_output(1).values)
    frame = summary.to_frame()
    assert list(frame.columns) == ["output", "feature", "mean_abs"] and len(frame) == 4
    _, ax = plt.subplots()
    assert summary.plot(ax=ax, output=0) is ax
    plt.close("all")


def test_plot_takes_ax_and_output_by_keyword():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X = np.random.default_rng(1).normal(size=(30, 3))
    two = lambda A: np.column_stack([A[:, 0], A[:, 1] * A[:, 2]])  # noqa: E731
    effects = ml.pdp(two, X, ["x0"], grid=3)
    attr = ml.shapley(two, X[:5], background=X)
    h = ml.interactions(two, X, sample=None)
    for draw in (lambda ax: effects["x0"].plot(ax=ax, output=1),
                 lambda ax: effects.plot(ax=ax, output=1).flat[0],
                 lambda ax: attr.plot(ax=ax, output=1),
                 lambda ax: h.plot(ax=ax, output=1)):
        _, ax = plt.subplots()
        assert draw(ax) is ax
        plt.close("all")


def test_no_flat_shortcut_of_a_block_beyond_the_contract():
    """A field of a result's block is read on the block (``attr.sampling.dof``); the flat
    names kept are the contract's (LIME's ``intercept``, ``score``, ``local_prediction``,
    images' ``segments``) and ``std``, the documented standard errors (README, user guide)."""
    flat = {name for name, value in vars(ml.Attributions).items()
            if isinstance(value, property) and getattr(value.fget, "__qualname__", "")
            .startswith("block_property")}
    assert flat == {"std", "intercept", "score", "local_prediction", "segments"}, flat
    assert not hasattr(ml.Attributions, "dof")
