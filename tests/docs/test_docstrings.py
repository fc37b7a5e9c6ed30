"""The public face: every public name's docstring opens with a plain sentence, has a
runnable Examples section (run here as doctests), and every public signature is
annotated with names that resolve."""

import doctest
import inspect
import re
import typing
import warnings

import matplotlib
import pytest

import modellens as ml
import modellens.typing as mt
from modellens.effects.dale import DaleEffect
from modellens.plot.attributions import AttributionPlots

FUNCTIONS = [getattr(ml, name) for name in ml.__all__
             if inspect.isfunction(getattr(ml, name))]
CLASSES = [getattr(ml, name) for name in ml.__all__ if inspect.isclass(getattr(ml, name))]

#: the plot methods of the results: each says what it draws, takes ``ax=`` (``axes=``
#: for a grid) and returns what it drew on
PLOTS = [
    ml.Effect.plot, ml.Effects.plot, ml.Interactions.plot, ml.WidthSweep.plot,
    ml.Attributions.plot.fget, AttributionPlots.__call__, AttributionPlots.waterfall,
    AttributionPlots.force, AttributionPlots.weights, AttributionPlots.text,
    AttributionPlots.image, AttributionPlots.bar, AttributionPlots.beeswarm,
    AttributionPlots.dependence, AttributionPlots.interactions, ml.InteractionPairs.plot,
    ml.AttributionSummary.plot_bar, ml.AttributionSummary.plot_beeswarm,
    ml.AttributionSummary.plot_dependence, ml.Regions.plot, ml.Importance.plot,
    ml.AttributionSummary.plot, ml.Shift.plot, ml.GroupComparison.plot, ml.DeletionCurves.plot,
]

#: the methods users call on results, each with its own example
METHODS = PLOTS + [
    AttributionPlots.text_html,
    ml.Effect.to_frame, ml.Effect.to_dict, ml.Effect.from_dict,
    ml.Effects.to_frame, ml.Effects.to_dict, ml.Effects.from_dict,
    DaleEffect.rebin,
    ml.Attributions.to_frame, ml.Attributions.to_dict, ml.Attributions.from_dict,
    ml.Attributions.to_shap, ml.Attributions.mean_abs, ml.Attributions.confidence_interval,
    ml.Attributions.interaction_pairs, ml.Attributions.mean_test, ml.InteractionPairs.to_frame,
    ml.Interactions.to_frame, ml.Interactions.to_dict, ml.Interactions.from_dict,
    ml.Importance.to_frame, ml.Importance.to_dict, ml.Importance.from_dict,
    ml.InteractionPairs.to_dict, ml.InteractionPairs.from_dict,
    ml.Regions.to_dict, ml.Regions.from_dict,
    ml.Report.save, ml.Report.to_html,
    ml.WidthSweep.to_frame, ml.WidthSweep.to_dict, ml.WidthSweep.from_dict,
    ml.AttributionSummary.to_frame, ml.AttributionSummary.to_dict,
    ml.AttributionSummary.from_dict, ml.AttributionSummary.for_output,
    ml.InteractionPairs.for_output, ml.Effects.get, ml.DistributedAttributions.to_frame,
]

#: functions whose estimate has a formula: it goes in a Notes section, after the words
ESTIMATORS = {"pdp", "mplot", "ale", "dale", "interactions", "shapley", "lime", "lime_text",
              "lime_image", "lime_width_sweep", "importance"}

_LATEX = re.compile(r":math:|\\[a-zA-Z]+|\$|\.\. math")


def _name(obj):
    return getattr(obj, "__qualname__", getattr(obj, "__name__", repr(obj)))


def _summary(doc):
    """The first paragraph of a docstring, on one line."""
    return " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())


def _sections(doc):
    """numpydoc section titles, in order."""
    return re.findall(r"^\s*([A-Z][A-Za-z ]+)\n\s*-{3,}\s*$", doc, flags=re.M)


@pytest.mark.parametrize("obj", FUNCTIONS + CLASSES + METHODS, ids=_name)
def test_docstring_opens_with_one_plain_sentence(obj):
    doc = obj.__doc__
    assert doc, f"{_name(obj)} has no docstring"
    first = _summary(doc)
    assert not _LATEX.search(first), f"{_name(obj)}: no LaTeX in the first sentence: {first!r}"
    assert first.endswith((".", "?")), f"{_name(obj)}: the first paragraph is a sentence: {first!r}"
    # one sentence: no full stop followed by a capitalised word before its end
    inner = re.sub(r"\b(e\.g|i\.e|etc|vs)\.", "", first[:-1])
    assert not re.search(r"[.?!] [A-Z]", inner), \
        f"{_name(obj)}: the first paragraph is one sentence, found more: {first!r}"
    assert len(first) <= 120, f"{_name(obj)}: keep the first sentence short: {first!r}"


@pytest.mark.parametrize("obj", FUNCTIONS + CLASSES + METHODS, ids=_name)
def test_docstring_has_an_examples_section(obj):
    sections = _sections(obj.__doc__)
    assert "Examples" in sections and ">>>" in obj.__doc__.split("Examples", 1)[1], \
        f"{_name(obj)}: add an Examples section with a runnable example"


def test_every_plot_method_of_the_results_is_checked():
    # a plot method added later joins PLOTS, or this fails
    from modellens.plot._media_plots import MediaPlots  # attr.plot.text() / .image()

    found = {f"{cls.__name__}.{name}" for cls in CLASSES + [AttributionPlots, MediaPlots]
             for name, member in vars(cls).items()
             if name.startswith("plot") or cls in (AttributionPlots, MediaPlots)
             and callable(member) and not name.startswith("_") and name != "text_html"}
    found.add("AttributionPlots.__call__")
    assert found == {_name(f) for f in PLOTS}


@pytest.mark.parametrize("method", PLOTS, ids=_name)
def test_plot_methods_document_ax_and_what_they_return(method):
    doc = method.__doc__
    sections = _sections(doc)
    if method is ml.Attributions.plot.fget:  # a property: what it gives is in its text
        assert "Axes" in doc and "ax=" in doc
        return
    assert sections[:2] == ["Parameters", "Returns"], f"{_name(method)}: {sections}"
    params = doc.split("Parameters\n", 1)[1].split("Returns\n", 1)[0]
    assert re.search(r"^\s*(ax|axes) :", params, flags=re.M) or "``ax=``" in params, \
        f"{_name(method)}: document ax="
    returned = doc.split("Returns\n", 1)[1].split("Examples\n", 1)[0]
    assert "Axes" in returned, f"{_name(method)}: say that it returns the Axes"
    # the example runs headless and checks the picture: it reads the returned Axes
    example = doc.split("Examples\n", 1)[1]
    assert 'matplotlib.use("Agg")' in example, f"{_name(method)}: use the Agg backend"
    assert re.search(r"\.(get_\w+|lines|patches|collections|images|texts)\b", example), \
        f"{_name(method)}: check something true about the Axes it returns"


@pytest.mark.parametrize("func", FUNCTIONS, ids=_name)
def test_function_sections_are_in_numpydoc_order(func):
    sections = _sections(func.__doc__)
    order = ["Parameters", "Returns", "Yields", "See Also", "Notes", "References", "Examples"]
    known = [s for s in sections if s in order]
    assert known == sorted(known, key=order.index), f"{func.__name__}: {sections}"
    for needed in ["Parameters", "See Also", "Examples"]:
        if needed == "Parameters" and not inspect.signature(func).parameters:
            continue
        assert needed in sections, f"{func.__name__}: add a {needed} section"
    if func.__name__ in ESTIMATORS:
        assert "Notes" in sections and "References" in sections, func.__name__
        # the maths lives in Notes, not before the parameters
        assert not _LATEX.search(func.__doc__.split("Parameters\n", 1)[0]), \
            f"{func.__name__}: move the formulas to Notes"


def _run_doctests(obj):
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(obj, _name(obj), globs={}) if t.examples]
    assert tests, f"{_name(obj)}: no doctest found"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ml.ModellensWarning)
        for t in tests:
            runner.run(t)
    return runner.summarize(verbose=False)


@pytest.mark.parametrize("obj", FUNCTIONS + CLASSES + METHODS + [mt], ids=_name)
def test_examples_run(obj, monkeypatch, tmp_path):
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if obj is ml.Attributions.to_shap:
        pytest.importorskip("shap")
    monkeypatch.chdir(tmp_path)  # examples that save write here
    try:
        result = _run_doctests(obj)
    finally:
        plt.close("all")
    assert result.failed == 0, f"{_name(obj)}: {result.failed} example(s) failed (output above)"


def test_the_doctest_runner_reports_a_wrong_example():
    def wrong():
        """Add.

        Examples
        --------
        >>> 1 + 1
        3
        """

    assert _run_doctests(wrong).failed == 1


@pytest.mark.parametrize("obj", FUNCTIONS + [ml.TextMasker, ml.ImageMasker], ids=_name)
def test_public_signatures_are_annotated_with_names_that_resolve(obj):
    func = obj.__init__ if inspect.isclass(obj) else obj
    params = [p for p in inspect.signature(func).parameters.values() if p.name != "self"]
    missing = [p.name for p in params if p.annotation is inspect.Parameter.empty]
    assert not missing, f"{_name(obj)}: annotate {missing}"
    if not inspect.isclass(obj):
        assert inspect.signature(func).return_annotation is not inspect.Signature.empty
    # every name in the annotations exists (get_type_hints evaluates them)
    typing.get_type_hints(func)


def test_model_data_and_feature_arguments_use_the_public_aliases():
    for func in [ml.pdp, ml.mplot, ml.ale, ml.dale, ml.interactions]:
        ann = func.__annotations__
        assert (ann["model"], ann["X"], ann["features"]) == ("ModelLike", "DataLike",
                                                             "FeatureSpec"), func.__name__
    for func in [ml.shapley, ml.lime, ml.lime_width_sweep, ml.report]:
        assert "ModelLike" in func.__annotations__["model"], func.__name__


def test_the_aliases_describe_what_users_pass():
    import numpy as np
    import pandas as pd
    from sklearn.linear_model import LinearRegression, LogisticRegression

    assert isinstance(pd.DataFrame({"a": [1]}), mt.DataFrameLike)
    assert not isinstance(np.zeros((2, 2)), mt.DataFrameLike)
    assert isinstance(LinearRegression(), mt.Predictor)
    assert isinstance(LogisticRegression(), mt.Classifier)
    assert not isinstance(lambda A: A, mt.Predictor)
    for alias in mt.__all__:
        assert hasattr(mt, alias), alias
