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


def _pets(n=300, seed=5):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x": rng.uniform(-1, 1, n),
                      "pet": pd.Categorical(rng.choice(["ant", "bee", "cat", "dog"], n))})
    # pet's levels depend on x, so ALE's similarity order is not the order of effect
    X.loc[X["x"] > 0.5, "pet"] = "dog"
    return X


def test_pd_and_ale_panels_of_a_category_share_the_level_order():
    X = _pets()
    effect = {"ant": 2.0, "bee": -1.0, "cat": 0.5, "dog": -3.0}
    f = lambda F: np.asarray(F["x"]) + F["pet"].map(effect).astype(float).to_numpy()  # noqa
    rep = ml.report(f, X, sections=["effects"], **SMALL)
    data = rep.sections["effects"].data
    assert data["level_order"]["pet"] == [str(v) for v in data["ale"]["pet"].grid]


def test_a_negligible_categorical_effect_is_not_zoomed():
    X = _pets()
    tiny = {"ant": 1e-6, "bee": -1e-6, "cat": 0.0, "dog": 2e-6}
    f = lambda F: 3 * np.asarray(F["x"]) + F["pet"].map(tiny).astype(float).to_numpy()  # noqa
    rep = ml.report(f, X, sections=["effects"], **SMALL)
    data = rep.sections["effects"].data
    assert "pet" in data["negligible"]
    # the panel spans its rows' predictions (as a numeric panel with its ICE curves does),
    # not the 4e-6 between its levels
    ice = np.asarray(data["pdp"]["pet"].ice, dtype=float)
    assert data["spans"]["pet"] >= 0.9 * (np.quantile(ice, 0.99) - np.quantile(ice, 0.01))


def test_effects_are_ordered_by_the_rows_they_move():
    # a level of 2 rows moves them far; x moves every row a little: by the rows, x comes first
    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame({"x": rng.uniform(-1, 1, n),
                      "kind": pd.Categorical(np.where(np.arange(n) < 2, "rare", "common"))})
    f = lambda F: 3 * np.asarray(F["x"]) + 10.0 * (F["kind"] == "rare").to_numpy()  # noqa
    rep = ml.report(f, X, sections=["effects"], **{**SMALL, "sample": n})
    data = rep.sections["effects"].data
    assert data["order"][:2] == ["x", "kind"]
    p = 2 / n  # the weighted standard deviation of a PD of 10 at a level of share p
    assert data["importance"]["kind"] == pytest.approx(10 * np.sqrt(p * (1 - p)), rel=1e-9)
    assert any("over the rows" in note for note in rep.sections["effects"].notes)


def test_the_footer_total_is_the_total_the_log_prints():
    X, y = _classification(d=3)
    f = lambda df: df["f0"].to_numpy() * df["f1"].to_numpy()  # noqa: E731
    lines = []
    # "interaction" needs "effects", built but not shown: its time counts in the total
    rep = ml.report(f, X, sections=["interaction"], log=lines.append, **SMALL)
    footer = dict(rep.footer())
    (total,) = [line for line in lines if line.startswith("total: ")]
    assert footer["time: total"] == total.removeprefix("total: ")
    steps = [float(line.split(": ")[1].removesuffix(" s")) for line in lines
             if not line.startswith("total: ") and line.endswith(" s")]
    assert float(footer["time: total"].removesuffix(" s")) >= sum(steps) - 0.05 * len(steps)


def test_quality_section_has_residual_diagnostics():
    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(200, 3)), columns=["a", "b", "c"])
    y = 3 * X["a"] + X["b"] ** 2  # the linear model misses b's curve: residuals show it
    model = LinearRegression().fit(X, y)
    rep = ml.report(model, X, y, sections=["quality", "effects"], **SMALL)
    res = rep.sections["quality"].data["residuals"]
    np.testing.assert_allclose(res["residual"], y - model.predict(X), atol=1e-10)
    assert res["features"][0] == rep.sections["effects"].data["order"][0] == "a"
    group = rep.sections["quality"].figure_groups[-1]
    assert group.title.startswith("Residuals") and len(group.figures) == 1 + len(res["features"])


def test_shapley_section_has_dependence_plots_and_each_rows_own_curves():
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(200, 4)), columns=["a", "b", "c", "d"])
    y = 3 * X["a"] + 2 * X["b"] ** 2 + X["c"]
    model = RandomForestRegressor(n_estimators=10, max_depth=5, random_state=0).fit(X, y)
    rep = ml.report(model, X, sections=["shapley"], **SMALL)
    sec = rep.sections["shapley"]
    top = sec.data["dependence_features"]
    importance = sec.data["importance"]
    assert top == sorted(importance, key=lambda f: -importance[f])[:3]
    titles = [g.title for g in sec.figure_groups]
    assert any(t.startswith("Dependence") for t in titles)
    # ceteris paribus: row r's curve of feature f is the model at row r with f moved
    profiles = sec.data["ceteris_paribus"]
    rows = sec.data["rows"]
    for name in top:
        effect = profiles[name]
        for k, r in enumerate(rows):
            moved = pd.concat([X.iloc[[r]]] * len(effect.grid), ignore_index=True)
            moved[name] = np.asarray(effect.grid, dtype=float)
            np.testing.assert_allclose(np.asarray(effect.ice)[k], model.predict(moved),
                                       atol=1e-12)


def test_ceteris_paribus_reads_the_effects_sections_ice_curves(monkeypatch):
    """The drawn rows' profiles are rows of the effects section's ICE curves: the same
    numbers as PD on those rows alone, and no second model call for them."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    from modellens.report._sections import effects, shapley

    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(150, 4)), columns=["a", "b", "c", "d"])
    X["e"] = pd.Categorical(rng.choice(["u", "v", "w"], 150))
    y = 3 * X["a"] * X["b"] + X["c"] + (X["e"] == "v")
    model = HistGradientBoostingRegressor(max_iter=30, categorical_features="from_dtype",
                                          random_state=0).fit(X, y)
    calls = []
    pdp = shapley.pdp

    def counted(model, X, *args, **kwargs):
        calls.append(len(X))
        return pdp(model, X, *args, **kwargs)

    # every section that may run PD: the effects section's and the Shapley section's own
    for module in (effects, shapley):
        monkeypatch.setattr(module, "pdp", counted)
    # every row in the sample, as in the demo
    rep = ml.report(model, X, sections=["effects", "shapley"], **dict(SMALL, sample=150))
    sec = rep.sections["shapley"]
    rows = sec.data["rows"]
    assert calls == [rep.sections["effects"].data["pdp"]["a"].ice.shape[0]]  # effects' PD only
    profiles = sec.data["ceteris_paribus"]
    for name in sec.data["dependence_features"]:
        alone = pdp(model, X.iloc[rows], [name], ice=True, progress=False,
                    grid={name: list(profiles[name].grid)})[name]
        np.testing.assert_array_equal(np.asarray(profiles[name].ice), np.asarray(alone.ice))
        assert list(np.asarray(profiles[name].grid)) == list(np.asarray(alone.grid))
