"""The bike-sharing gallery example is not executed by the docs build (shapr's files are not
part of modellens): it must at least compile, stay out of the executed pattern, and quote
shapr's published numbers as the data's README gives them."""

import pathlib

EXAMPLE = (pathlib.Path(__file__).parents[2] / "docs" / "examples"
           / "bike_conditional_shapley.py")


def test_bike_example_compiles_and_quotes_shapr():
    text = EXAMPLE.read_text(encoding="utf-8")
    compile(text, str(EXAMPLE), "exec")
    assert not EXAMPLE.name.startswith("plot_")  # the gallery executes plot_* only
    for published in ("1,169,051", "0.769", "1,520,051", "-2049.45", "-1017.54", "-435.45"):
        assert published in text
    for keyword in ("dependence=", "causal_order=", "confounding="):
        assert keyword in text
