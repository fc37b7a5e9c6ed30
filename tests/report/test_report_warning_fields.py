"""The report reads the library's warnings by their fields, not their texts (issue 46)."""

import warnings

import modellens as ml
from modellens.report._sections import capture
from modellens.report._sections.page import Section


def test_missing_value_notice_and_unknown_levels_come_from_fields():
    sec = Section("effects", "Effects")
    with capture.capture_warnings(sec):
        # texts no regular expression of the library's wording would read
        warnings.warn(ml.MissingValuesWarning("first", column="a", n_missing=2, n_rows=10,
                                              used_for="grid"))
        warnings.warn(ml.UnknownLevelsWarning("second", column="c", known_levels=["u"],
                                              unknown_levels=["v"]))
        warnings.warn(ml.ModellensWarning("a plain warning"))
    with capture.capture_warnings(sec):
        warnings.warn(ml.MissingValuesWarning("third", column="b", n_missing=1, n_rows=10,
                                              used_for="ALE bins"))
    assert sec.warnings == [
        "Rows with a missing value are left out of what needs the feature's value (grid, "
        "ALE bins): 'a' (2 of 10 rows), 'b' (1 of 10 rows).",
        "a plain warning"]


def test_the_capture_holds_no_regular_expression():
    import inspect

    assert "re.compile" not in inspect.getsource(capture)
