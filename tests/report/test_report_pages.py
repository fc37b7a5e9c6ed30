"""Pages that read true: one scale per page, no API texts, sections that stay."""

import numpy as np
import pandas as pd
import pytest

import modellens as ml

#: Small settings; ten features put exact Shapley values past the budget, so the
#: report takes TreeSHAP or permutation sampling.
SMALL = dict(sample=120, n_explain=6, n_background=6, grid=5, shapley_budget=20_000)


def _classification(n=240, d=10, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, d)), columns=[f"f{j}" for j in range(d)])
    y = (2 * X["f0"] - X["f1"] + rng.logistic(size=n) > 0).astype(int)
    return X, y


def test_boosted_classifier_shapley_section_explains_the_pages_scale():
    xgb = pytest.importorskip("xgboost")
    X, y = _classification()
    model = xgb.XGBClassifier(n_estimators=20, max_depth=3).fit(X, y)
    rep = ml.report(model, X, sections=["effects", "shapley"], **SMALL)
    sec = rep.sections["shapley"]
    attr = sec.data["attributions"]
    assert attr.output == "P(y = 1)"
    np.testing.assert_allclose(attr.prediction, model.predict_proba(X.iloc[
        sec.data["explained_rows"]])[:, 1], atol=1e-6)
    assert any("P(y = 1)" in note for note in sec.notes)


def test_pipeline_shapley_section_has_no_api_error_text():
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _classification()
    pipe = make_pipeline(StandardScaler(), RandomForestRegressor(n_estimators=5, max_depth=3,
                                                                 random_state=0))
    pipe.fit(X, y.astype(float))
    rep = ml.report(pipe, X, sections=["shapley"], **SMALL)
    text = " ".join(rep.sections["shapley"].notes + rep.sections["shapley"].warnings)
    assert "algorithm=" not in text and "pipe[:-1]" not in text
    assert "Pipeline" in text


def test_lime_section_stays_with_two_missing_values():
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = _classification(d=4)
    X.loc[[3, 50], "f1"] = np.nan  # 2 missing values, as penguins has
    model = HistGradientBoostingRegressor(max_iter=20).fit(X, y.astype(float))
    rep = ml.report(model, X, sections=["lime"], **SMALL)
    sec = rep.sections["lime"]
    assert not any("LIME was not run" in w for w in sec.warnings)
    assert sec.figure_groups and sec.figure_groups[0].figures


def test_a_one_level_column_is_described_as_one_level():
    X, y = _classification(d=3)
    X["site"] = pd.Categorical(["north"] * len(X))
    f = lambda df: df["f0"].to_numpy()  # noqa: E731
    rep = ml.report(f, X, sections=["data"], **SMALL)
    (site,) = [row for row in rep.sections["data"].data["features"] if row["feature"] == "site"]
    assert site["range"].startswith("1 level: north")


def test_missing_values_make_one_notice_per_section():
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = _classification(d=4)
    X.loc[[1, 2], "f0"] = np.nan
    X.loc[[5], "f1"] = np.nan
    model = HistGradientBoostingRegressor(max_iter=20).fit(X, y.astype(float))
    rep = ml.report(model, X, sections=["effects"], **SMALL)
    notices = [w for w in rep.sections["effects"].warnings if "missing value" in w]
    assert len(notices) == 1
    assert "'f0' (2 of" in notices[0] and "'f1' (1 of" in notices[0]
