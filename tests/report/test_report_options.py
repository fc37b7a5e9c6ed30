"""``ml.report`` takes one options object; the report reads the library's warnings in one place;
the report package keeps to the house's size limits (issue 46)."""

import ast
import dataclasses
import pathlib
import warnings

import numpy as np
import pandas as pd
import pytest

import modellens as ml

SMALL = dict(sample=120, n_explain=6, n_background=6, grid=5, shapley_budget=20_000)
REPORT = pathlib.Path(ml.__file__).parent / "report"


def _linear():
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(150, 3)), columns=["a", "b", "c"])

    def f(Z):
        Z = np.asarray(Z, dtype=float)
        return 2 * Z[:, 0] - Z[:, 1]
    return f, X


def test_options_are_frozen_and_checked_when_made():
    options = ml.ReportOptions(grid=7, sections=["effects"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.grid = 3  # type: ignore[misc]
    # refused before any model is called: the options are checked where they are made
    with pytest.raises(ml.InvalidParameterError, match="grid"):
        ml.ReportOptions(grid=1)
    with pytest.raises(ml.InvalidParameterError, match="sample"):
        ml.ReportOptions(sample=2.0)
    with pytest.raises(ml.InvalidParameterError, match="unknown sections"):
        ml.ReportOptions(sections=["effect"])
    with pytest.raises(ml.InvalidParameterError, match="warm_up"):
        ml.ReportOptions(warm_up="yes")


def test_keywords_and_options_give_the_same_report_and_keywords_replace_fields():
    f, X = _linear()
    by_keywords = ml.report(f, X, sections=["effects"], progress=False, **SMALL)
    by_options = ml.report(f, X, options=ml.ReportOptions(sections=["effects"], progress=False,
                                                          **SMALL))
    a, b = by_keywords.sections["effects"].data, by_options.sections["effects"].data
    for name in X.columns:
        np.testing.assert_array_equal(a["pdp"][name].values, b["pdp"][name].values)
    # a keyword beside options replaces that field only
    mixed = ml.report(f, X, options=ml.ReportOptions(sections=["effects"], progress=False,
                                                     **SMALL), grid=4, interactive=False)
    assert mixed.settings["PD grid points / ALE bins"] == 4
    assert mixed.interactive is False and len(mixed.sections["effects"].data["pdp"]["a"].grid) == 4
    assert mixed.settings["rows explained by attributions"] == by_options.settings[
        "rows explained by attributions"]


def test_an_unknown_keyword_is_refused_as_python_refuses_one():
    f, X = _linear()
    with pytest.raises(TypeError, match="unexpected keyword argument 'grids'.*grid"):
        ml.report(f, X, grids=5)
    with pytest.raises(ml.InvalidParameterError, match="ReportOptions"):
        ml.report(f, X, options={"grid": 5})


def _library_warnings():
    """The warnings the report reads, raised by the library itself (not copied texts)."""
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=60), "pet": rng.choice(["ant", "bee"], 60)})
    model = make_pipeline(make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["pet"]), remainder="passthrough"),
        LinearRegression()).fit(X, X["x"] + (X["pet"] == "bee"))
    new = X.assign(pet=np.where(np.arange(60) < 5, "cat", X["pet"]))
    new.loc[:3, "x"] = np.nan
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ml.pdp(model, new, ["x"], grid=4)
    return caught


def test_the_library_warnings_the_report_reads_carry_their_facts_as_fields():
    """The report reads the library's own warnings by type and fields: the fields hold what
    a text used to say (a renamed field fails here, not silently on the page)."""
    caught = [w.message for w in _library_warnings()]
    assert any(isinstance(m, ml.UnknownLevelsWarning) for m in caught)
    (missing,) = [m for m in caught if isinstance(m, ml.MissingValuesWarning)]
    assert (missing.column, missing.n_missing, missing.n_rows) == ("x", 4, 60)
    assert missing.used_for


def test_no_regular_expression_in_the_report_reads_the_librarys_messages():
    """The report matches no text of the library's messages (it reads typed warnings); the
    page's own guards (the explorer's script escaping) are not about the library's messages."""
    allowed = {("_interactive.py", "_script_text")}
    found = []
    for path in REPORT.rglob("*.py"):
        rel = path.relative_to(REPORT).as_posix()
        tree = ast.parse(path.read_text())
        compiled = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
                    for t in node.targets if isinstance(t, ast.Name)
                    and isinstance(node.value, ast.Call)
                    and getattr(node.value.func, "attr", "") == "compile"}
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(func):
                uses_re = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and (node.value.id == "re" or node.value.id in compiled)
                if uses_re and (rel, func.name) not in allowed:
                    found.append(f"{rel}:{func.name}")
    assert not found, found


def _code_lines(func, lines):
    body = func.body
    doc = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        doc = body[0].end_lineno - body[0].lineno + 1
    code = [t for t in lines[func.lineno - 1:func.end_lineno]
            if t.strip() and not t.strip().startswith("#")]
    return len(code) - doc


#: Over the limit and left whole for now: lane ``safety`` edits the explorer's payload in the
#: same wave; it is split once that work is merged.
LEFT_WHOLE = {"explorer_payload"}


def test_the_report_package_keeps_to_the_size_limits():
    """No file of report/ over 700 lines, no function over 80 lines of code."""
    big, long = [], []
    for path in REPORT.rglob("*.py"):
        text = path.read_text()
        lines = text.splitlines()
        if len(lines) > 700:
            big.append((path.name, len(lines)))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = _code_lines(node, lines)
                if size > 80 and node.name not in LEFT_WHOLE:
                    long.append((path.name, node.name, size))
    assert not big and not long, (big, long)


def test_pictures_are_encoded_when_the_page_needs_them_and_the_same_in_parallel():
    """A report read for its numbers encodes no picture; the page encodes them all at once,
    in forked processes where it pays, byte for byte as one after another."""
    from modellens.report._render import render_figures

    f, X = _linear()
    options = ml.ReportOptions(sections=["effects", "shapley"], progress=False, **SMALL)
    first, second = ml.report(f, X, options=options), ml.report(f, X, options=options)
    pictures = [p for s in first.sections.values() for p in s.figures]
    again = [p for s in second.sections.values() for p in s.figures]
    assert len(pictures) >= 6 and not any(p.rendered for p in pictures)
    page = first.to_html()
    assert all(p.rendered for p in pictures) and pictures[0].data_uri in page
    serial = [p.png for p in again]  # one at a time, in this process
    assert [p.png for p in pictures] == serial
    render_figures(again)  # nothing left to encode: a no-op
    assert [p.png for p in again] == serial
    assert all(p.png.startswith(b"\x89PNG") and p.width > 0 for p in pictures)


def test_the_report_imports_nothing_of_the_model_seam():
    """The report takes objects; reading model files is the command line's (``ml.load_model``,
    ``modellens.files``), not the report's."""
    found = []
    for path in REPORT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and (
                    node.module == "models" or node.module.startswith("models.")
                    or node.module.startswith("modellens.models")):
                found.append((path.name, node.module))
    assert not found, found
