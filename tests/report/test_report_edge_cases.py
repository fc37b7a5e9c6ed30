"""The report at its edges: default waterfall rows, dollar signs in names, LIME settings and warnings, text targets."""

import numpy as np
import pytest

import modellens as ml


def test_report_default_waterfalls_are_the_highest_lowest_and_median_of_the_data():
    # the page says "highest prediction": it must be the data's highest, not the highest of
    # the few rows sampled for attributions
    import pandas as pd
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(400, 3)), columns=["a", "b", "c"])
    y = X.a * 2 + X.b
    model = Ridge().fit(X, y)
    r = ml.report(model, X, sections=["shapley", "lime"], sample=100, n_explain=5,
                  n_background=8, grid=5, random_state=0)
    pred = model.predict(X)
    order = np.argsort(pred, kind="stable")
    expected = [int(order[-1]), int(order[0]), int(order[(order.size - 1) // 2])]
    assert r.sections["shapley"].data["rows"] == expected
    assert r.sections["lime"].data["rows"] == expected
    captions = [f.caption for f in r.sections["shapley"].figures if f.caption]
    assert captions[0] == f"row {expected[0]}, highest prediction"


def test_report_draws_column_names_with_dollar_signs_as_text():
    # a name from the data is text, not matplotlib mathtext: "$ in \x $" made the report
    # crash (unknown symbol), and "a ($) vs b ($)" would be drawn in italics without the $
    import matplotlib.text
    import pandas as pd
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(0)
    names = ["spend $ in \\x $", "cost ($) vs price ($)", "c"]
    X = pd.DataFrame(rng.normal(size=(120, 3)), columns=names)
    y = X.iloc[:, 0] + X.iloc[:, 1]
    drawn = []
    original = matplotlib.text.Text.set_text

    def spy(self, s):
        drawn.append(str(s))
        return original(self, s)

    matplotlib.text.Text.set_text = spy
    try:
        r = ml.report(Ridge().fit(X, y), X, y, sample=100, n_explain=5, n_background=8, grid=5)
    finally:
        matplotlib.text.Text.set_text = original
    assert "shapley" in r.sections and "lime" in r.sections
    assert any("cost ($) vs price ($)" in t for t in drawn)
    assert "cost ($) vs price ($)" in r.to_html()


def test_report_footer_records_lime_settings():
    # the footer records what was run: LIME's samples, bins and kernel width too
    import pandas as pd
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(100, 3)), columns=["a", "b", "c"])
    r = ml.report(Ridge().fit(X, X.a), X, sections=["lime"], sample=80, n_explain=3,
                  n_background=5, grid=5)
    attr = r.sections["lime"].data["attributions"]
    text = dict(r.footer())["LIME"]
    assert f"{attr.surrogate.num_samples:,} samples" in text
    assert f"kernel width {attr.surrogate.kernel_width:.3g}" in text and "quartile" in text


def test_report_regression_with_a_text_target_is_a_clear_error():
    import pandas as pd
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 2)), columns=["a", "b"])
    y = np.where(X.a > 0, "yes", "no")
    with pytest.raises(ml.InvalidParameterError, match=r"y holds values that are not numbers"):
        ml.report(Ridge().fit(X, X.a), X, y, sections=["quality"])


def test_report_lime_section_shows_lime_warnings():
    # the report silences method warnings on the console; LIME's caveats go on the page
    import pandas as pd
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame({"a": rng.normal(size=n), "c": rng.choice(["x", "y"], n)})
    sample = np.sort(np.random.default_rng(0).choice(n, size=50, replace=False))
    rare = int(np.setdiff1d(np.arange(n), sample)[0])
    X.loc[rare, "c"] = "z"  # a level the LIME sample never holds
    y = X.a + (X.c == "y")
    model = make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown="ignore"),
                                                   ["c"]), remainder="passthrough"),
                          Ridge()).fit(X, y)
    r = ml.report(model, X, y, sections=["lime"], rows=[rare], sample=50, n_explain=3,
                  n_background=5, grid=4, random_state=0)
    assert any("never occurs in training_data" in w for w in r.sections["lime"].warnings)
    assert "never occurs in training_data" in r.to_html()
