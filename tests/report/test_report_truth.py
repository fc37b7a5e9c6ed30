"""The report tells the truth on real data (issue 19): each test builds the data that
made an earlier version print a tidy, wrong page."""

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import r2_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, OrdinalEncoder

import modellens as ml
from modellens.files import FileError, conform, load_model as load_model_file, read_table

from cli_support import _run

SMALL = dict(sample=150, n_explain=6, n_background=6, grid=5, shapley_budget=20_000)


# ------------------------------------------------------------ 1. the model's dtypes
def _zip_data(n=400, seed=0):
    """Zip codes fit as strings with leading zeros: read_csv would make them integers."""
    rng = np.random.default_rng(seed)
    zips = np.array([f"{k:05d}" for k in (2134, 2139, 8540, 10001, 94110)], dtype=object)
    effect = dict(zip(zips, [0.0, 3.0, -2.0, 5.0, 1.0]))
    X = pd.DataFrame({"zip": rng.choice(zips, n), "size": rng.uniform(0, 1, n)})
    y = X.zip.map(effect).to_numpy() + 2 * X["size"].to_numpy() + rng.normal(0, 0.3, n)
    model = make_pipeline(make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["zip"]), remainder="passthrough"),
        LinearRegression()).fit(X, y)
    return model, X, y


def test_csv_column_the_model_saw_as_strings_is_read_as_strings(tmp_path):
    model, X, y = _zip_data()
    path = tmp_path / "d.csv"
    X.to_csv(path, index=False)
    assert pd.read_csv(path)["zip"].dtype.kind == "i"  # what a plain read gives
    frame = conform(read_table(path, model), model)
    assert frame["zip"].tolist() == X["zip"].tolist()  # leading zeros kept
    r = ml.report(model, frame, y, sections=["quality", "effects"], **SMALL)
    assert r.sections["quality"].data["metrics"]["r2"] == pytest.approx(
        r2_score(y, model.predict(X)), rel=1e-12)
    assert r.sections["effects"].data["importance"]["zip"] > 1.0


def test_parquet_with_numbers_where_the_model_saw_text_is_cast_or_refused(tmp_path):
    model, X, y = _zip_data()
    numbers = X.assign(zip=X["zip"].astype(int))
    # the Python API: every row would be an unknown level, so the report refuses it
    with pytest.raises(ml.InvalidParameterError, match=r"'zip'.*dtype=\{'zip': str\}"):
        ml.report(model, numbers, y, **SMALL)
    # levels such as 10001 survive the cast to text: the conformed frame is the original
    X2 = X[X.zip == "10001"]
    frame = conform(X2.assign(zip=X2["zip"].astype(int)), model)
    assert frame["zip"].tolist() == X2["zip"].tolist()


def test_file_that_cannot_be_what_the_model_expects_is_one_line(tmp_path, capsys):
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"grade": rng.choice([1, 2, 3], 200), "w": rng.normal(size=200)})
    y = X.grade * 2.0 + X.w
    model = make_pipeline(make_column_transformer((OrdinalEncoder(), ["grade"]),
                                                  remainder="passthrough"),
                          LinearRegression()).fit(X, y)
    frame = X.assign(grade=rng.choice(["low", "high"], 200))
    with pytest.raises(FileError, match="'grade' holds text such as .* fit on numbers"):
        conform(frame, model)
    data, saved = tmp_path / "d.csv", tmp_path / "m.skops"
    frame.assign(y=y).to_csv(data, index=False)
    sio.dump(model, saved)
    code, _, err = _run(["report", "--data", data, "--model", saved, "--target", "y",
                         "--out", tmp_path / "r.html"], capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1 and "'grade'" in err


def test_categorical_levels_of_lightgbm_and_xgboost_are_restored_from_a_csv(tmp_path):
    lgb = pytest.importorskip("lightgbm")
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"a": rng.normal(size=300),
                      "c": pd.Categorical(rng.choice(["u", "v", "w"], 300))})
    y = X.a + (X.c == "v") * 3.0
    path = tmp_path / "d.csv"
    X.to_csv(path, index=False)
    for model in (lgb.LGBMRegressor(n_estimators=20, verbose=-1, min_child_samples=5),
                  xgb.XGBRegressor(n_estimators=20, enable_categorical=True)):
        model.fit(X, y)
        frame = conform(read_table(path, model), model)
        assert isinstance(frame["c"].dtype, pd.CategoricalDtype)
        np.testing.assert_allclose(model.predict(frame), model.predict(X), rtol=1e-12)


# --------------------------------------------------------- 2. labels of the model
def _binary(n=300, seed=3):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    y = (X.a + 0.5 * X.b + rng.normal(0, 0.5, n) > 0).astype(int)
    return LogisticRegression().fit(X, y), X, y


def test_labels_that_are_not_the_models_classes_are_refused(tmp_path, capsys):
    model, X, y = _binary()
    words = np.where(y == 1, "malignant", "benign")
    with pytest.raises(ml.InvalidParameterError,
                       match=r"\['benign', 'malignant'\] are not the model's classes \['0', '1'\]"):
        ml.report(model, X, words, **SMALL)
    data, saved = tmp_path / "d.csv", tmp_path / "m.skops"
    X.assign(diagnosis=words).to_csv(data, index=False)
    sio.dump(model, saved)
    code, _, err = _run(["report", "--data", data, "--model", saved, "--target", "diagnosis",
                         "--out", tmp_path / "r.html"], capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "'benign', 'malignant'" in err and "'0', '1'" in err


def test_labels_castable_to_the_classes_are_cast():
    model, X, y = _binary()
    text = y.astype(str).to_numpy(dtype=object)  # "0" / "1" as a CSV of text would give
    r = ml.report(model, X, text, sections=["quality"], **SMALL)
    p = model.predict_proba(X)[:, 1]
    assert r.sections["quality"].data["metrics"]["accuracy"] == pytest.approx(
        np.mean((p >= 0.5) == (y == 1)))


# --------------------------------------------------------- 3. safe model files
def _tree_models():
    from sklearn.ensemble import (GradientBoostingRegressor, HistGradientBoostingClassifier,
                                  HistGradientBoostingRegressor, RandomForestClassifier)

    rng = np.random.default_rng(4)
    X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200),
                      "c": pd.Categorical(rng.choice(["u", "v"], 200))})
    y = (X.a + (X.c == "v") > 0).astype(int)
    numeric = X[["a", "b"]]
    models = [(HistGradientBoostingRegressor(max_iter=5), numeric),
              (HistGradientBoostingClassifier(max_iter=5, categorical_features="from_dtype"), X),
              (RandomForestClassifier(n_estimators=5, random_state=0), numeric),
              (GradientBoostingRegressor(n_estimators=5), numeric)]
    try:
        import xgboost

        models.append((xgboost.XGBClassifier(n_estimators=5, enable_categorical=True), X))
    except ImportError:
        pass
    try:
        import lightgbm

        models.append((lightgbm.LGBMRegressor(n_estimators=5, verbose=-1), X))
    except ImportError:
        pass
    return [(m.fit(data, y), data) for m, data in models]


def test_skops_files_of_tree_models_load_without_trust(tmp_path):
    for model, X in _tree_models():
        path = tmp_path / f"{type(model).__name__}.skops"
        sio.dump(model, path)
        assert sio.get_untrusted_types(file=path)  # skops alone would refuse it
        loaded = load_model_file(path)
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def _shift(X):
    return X + 1.0


def test_skops_file_with_other_types_is_still_refused_naming_them(tmp_path):
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(5)
    X = rng.normal(size=(50, 2))
    model = make_pipeline(FunctionTransformer(_shift), HistGradientBoostingRegressor(
        max_iter=3)).fit(np.abs(X), X[:, 0])
    path = tmp_path / "m.skops"
    sio.dump(model, path)
    with pytest.raises(FileError, match="test_report_truth._shift") as info:
        load_model_file(path)
    assert "TreePredictor" not in str(info.value)  # the vetted types are not the problem
    with pytest.warns(ml.ModellensWarning, match="test_report_truth._shift.*trust=True"):
        loaded = load_model_file(path, trust=True)
    assert loaded.predict(X).shape == (50,)


def test_native_xgboost_and_lightgbm_files_load_with_their_feature_names(tmp_path):
    xgb = pytest.importorskip("xgboost")
    lgb = pytest.importorskip("lightgbm")
    from modellens.files import model_feature_names

    rng = np.random.default_rng(6)
    X = pd.DataFrame({"zeta": rng.normal(size=200), "alpha": rng.normal(size=200)})
    y = (X.zeta - X.alpha > 0).astype(int)
    clf = xgb.XGBClassifier(n_estimators=5).fit(X, y)
    clf.save_model(tmp_path / "m.json")
    clf.get_booster().save_model(tmp_path / "m.ubj")
    for name in ("m.json", "m.ubj"):
        loaded = load_model_file(tmp_path / name)
        assert model_feature_names(loaded) == ["zeta", "alpha"]
        np.testing.assert_allclose(loaded.predict_proba(X), clf.predict_proba(X), rtol=1e-6)
    reg = lgb.LGBMRegressor(n_estimators=5, verbose=-1).fit(X, X.zeta * 2)
    reg.booster_.save_model(tmp_path / "m.txt")
    loaded = load_model_file(tmp_path / "m.txt")
    assert model_feature_names(loaded) == ["zeta", "alpha"]
    np.testing.assert_allclose(loaded.predict(X), reg.predict(X), rtol=1e-12)


def test_cli_report_from_an_xgboost_json_file(tmp_path, capsys):
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(7)
    X = pd.DataFrame({"zeta": rng.normal(size=150), "alpha": rng.normal(size=150)})
    y = X.zeta - X.alpha
    xgb.XGBRegressor(n_estimators=5).fit(X, y).save_model(tmp_path / "m.json")
    data = tmp_path / "d.csv"
    X[["alpha", "zeta"]].assign(y=y).to_csv(data, index=False)
    code, out, err = _run(["report", "--data", data, "--model", tmp_path / "m.json",
                           "--target", "y", "--out", tmp_path / "r.html", "--sample", "100",
                           "--explain", "5", "--grid", "5"], capsys)
    assert code == 0, err
    assert (tmp_path / "r.html").exists()


# ------------------------------------------------------------ 4. honest scales
def _scales_data(n=400, seed=8):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"signal": rng.uniform(0, 1, n), "noise": rng.uniform(0, 1, n),
                      "flag": rng.integers(0, 2, n).astype(float),
                      "ignored": rng.normal(size=n)})
    return X


def _scales_model(Z):
    Z = np.asarray(Z, dtype=float)
    return 2.0 * Z[:, 0] + 1e-4 * np.sin(40 * Z[:, 1]) + 0.5 * Z[:, 2]


def test_noise_feature_is_negligible_and_panels_share_one_span(monkeypatch):
    from modellens.report._sections import effect_figures

    X = _scales_data()
    spans = []
    keep = effect_figures.figure_from

    def spy(fig, title, *args, **kwargs):
        lo, hi = fig.axes[0].get_ylim()
        spans.append((title, hi - lo))
        return keep(fig, title, *args, **kwargs)

    monkeypatch.setattr(effect_figures, "figure_from", spy)
    r = ml.report(_scales_model, X, sections=["effects"], **SMALL)
    eff = r.sections["effects"].data
    assert eff["negligible"] == ["noise"]  # 1e-4 against a spread of about 2.5
    assert eff["zero"] == ["ignored"]  # the model never reads it
    titles = {g.title.split(" (")[0]: g for g in r.sections["effects"].figure_groups}
    assert titles["noise"].title.endswith("[negligible]")
    assert "does not change with ignored on any row" in titles["ignored"].warnings[0]
    # every PD / ALE pair was set to one span, the noise's ALE included
    pairs = list(zip(spans[0::2], spans[1::2]))
    assert [(a[0].split()[0], b[0].split()[0]) for a, b in pairs] == [("PD", "ALE")] * 4
    assert all(a[1] == pytest.approx(b[1]) for a, b in pairs)


def test_binary_feature_is_drawn_as_points_labelled_by_value(monkeypatch):
    import matplotlib.axes

    labels = []
    keep = matplotlib.axes.Axes.set_xticks

    def spy(ax, ticks, tick_labels=None, **kwargs):
        labels.append([str(t) for t in (tick_labels or [])])
        return keep(ax, ticks, tick_labels, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "set_xticks", spy)
    ml.report(_scales_model, _scales_data(), sections=["effects"], features=["flag"], **SMALL)
    assert labels and all(t == ["0", "1"] for t in labels)


# ------------------------------------------------------- 5. many-level categoricals
def _dates(n=1500, seed=9):
    rng = np.random.default_rng(seed)
    days = pd.date_range("2011-01-01", periods=730, freq="D").strftime("%Y-%m-%d")
    X = pd.DataFrame({"dteday": pd.Series(rng.choice(days, n), dtype=object),
                      "temp": rng.uniform(0, 1, n)})
    y = X.temp * 3 + (X.dteday.str[:4] == "2012") * 1.0 + rng.normal(0, .1, n)
    model = make_pipeline(make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["dteday"]), remainder="passthrough"),
        LinearRegression()).fit(X, y)
    return model, X, y


def test_date_like_column_with_730_levels(monkeypatch):
    import matplotlib.axes

    model, X, y = _dates()
    ticks = []
    keep = matplotlib.axes.Axes.set_xticks

    def spy(ax, t, tick_labels=None, **kwargs):
        ticks.append(len(t))
        return keep(ax, t, tick_labels, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "set_xticks", spy)
    r = ml.report(model, X, y, sections=["data", "effects"], **{**SMALL, "sample": 1500})
    rows = {f["feature"]: f for f in r.sections["data"].data["features"]}
    assert "date-like" in rows["dteday"]["hint"]
    # each level is rare, but the other feature does not predict it: no off-data badge
    # beside a dependence of about 0
    assert rows["dteday"]["dependence"] < 0.1 and rows["dteday"]["warning"] == ""
    pd_effect = r.sections["effects"].data["pdp"]["dteday"]
    assert len(pd_effect.grid) == 20  # a stated top 20, not 700 levels
    counts = X.dteday.value_counts()
    assert set(pd_effect.grid) <= set(counts.index[counts >= counts.iloc[19]])
    values = np.asarray(pd_effect.values)
    assert ticks and max(ticks) <= 21  # 20 levels and the "other" group
    assert any("20 most frequent levels" in n for n in r.sections["effects"].notes)
    assert np.ptp(values) > 0.5  # 2011 vs 2012 is drawn


def _levels_data(k, n=3000, seed=11):
    """A categorical of ``k`` levels with unequal frequencies and a known effect per level."""
    rng = np.random.default_rng(seed)
    names = [f"L{i:03d}" for i in range(k)]
    p = rng.uniform(0.2, 3.0, k)
    X = pd.DataFrame({"c": pd.Categorical(rng.choice(names, n, p=p / p.sum()),
                                          categories=names),
                      "x": rng.uniform(0, 1, n)})
    # the effect grows with the frequency: a weighted and a plain mean differ
    effect = dict(zip(names, 4 * p + rng.normal(0, 0.3, k)))

    def f(Z):
        return np.asarray(Z["c"].astype(str).map(effect), dtype=float) + np.asarray(Z["x"])

    return f, X, effect


def _other_truth(X, effect, shown):
    counts = X["c"].astype(str).value_counts()
    rest = counts[[lv not in shown for lv in counts.index]]
    weighted = sum(effect[lv] * m for lv, m in rest.items()) / rest.sum()
    plain = np.mean([effect[lv] for lv in rest.index])
    return weighted + X["x"].mean(), plain + X["x"].mean(), len(rest)


def test_other_group_is_the_frequency_weighted_pd_of_the_remaining_levels(monkeypatch):
    import matplotlib.axes

    f, X, effect = _levels_data(35)
    labels = []
    keep = matplotlib.axes.Axes.set_xticks

    def spy(ax, t, tick_labels=None, **kwargs):
        labels.append(list(tick_labels or []))
        return keep(ax, t, tick_labels, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "set_xticks", spy)
    r = ml.report(f, X, sections=["effects"], features=["c"], **{**SMALL, "sample": 3000})
    data = r.sections["effects"].data
    shown = {str(v) for v in data["pdp"]["c"].grid}
    assert len(shown) == 20
    truth, unweighted, n_rest = _other_truth(X, effect, shown)
    other = data["other"]["c"]
    # 15 remaining levels: PD at each of them, weighted by frequency - exact
    assert not other["estimated"] and other["levels"] == n_rest == 15
    assert abs(unweighted - truth) > 0.1  # an unweighted mean would fail the next line
    assert other["value"] == pytest.approx(truth, abs=1e-10)
    assert other["rows"] == int((~X["c"].astype(str).isin(shown)).sum())
    # drawn apart and labelled with its size, after the 20 labelled levels
    assert any(lab and lab[-1] == "other (15 levels)" and len(lab) == 21 for lab in labels)


def test_other_group_of_many_levels_is_estimated_without_bias_from_drawn_levels():
    f, X, effect = _levels_data(300, n=6000)
    r = ml.report(f, X, sections=["effects"], features=["c"], **{**SMALL, "sample": 6000})
    data = r.sections["effects"].data
    shown = {str(v) for v in data["pdp"]["c"].grid}
    truth, _, n_rest = _other_truth(X, effect, shown)
    other = data["other"]["c"]
    assert other["estimated"] and other["levels"] == n_rest and other["evaluated"] <= 40
    assert 0 < other["se"] < 0.5
    assert abs(other["value"] - truth) < 4 * other["se"]
    assert any('"other" point' in n for n in r.sections["effects"].notes)


# --------------------------------------------------------- 6. the interaction screen
def test_screen_finds_a_pair_whose_effect_is_all_interaction():
    rng = np.random.default_rng(10)
    X = pd.DataFrame(rng.uniform(-1, 1, (400, 7)), columns=list("abcdegh"))

    def f(Z):
        Z = np.asarray(Z)
        # g and h have flat PD (symmetric), so they are not among the 4 most important
        return 3 * Z[:, 0] + 3 * Z[:, 1] + 3 * Z[:, 2] + 3 * Z[:, 3] + Z[:, 4] \
            + 2 * Z[:, 5] * Z[:, 6]

    r = ml.report(f, X, sections=["interaction"], **SMALL)
    data = r.sections["interaction"].data
    assert set(data["pair"]) == {"g", "h"}
    assert len(data["ranked"]) == 15  # the pairs among the 6 strongest overall interactors
    note = r.sections["interaction"].notes[0]
    assert "Friedman's H" in note and "among the 6 features with the strongest overall" in note
    assert "of the 7 features" in note


def test_screen_ranks_by_the_size_of_the_interaction_not_its_share():
    # (a, b) is a pure interaction of negligible size (H^2 = 1, tiny H); (c, d) interacts
    # strongly but has large main effects too (H^2 well below 1): the size decides
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.uniform(-1, 1, (400, 4)), columns=list("abcd"))

    def f(Z):
        Z = np.asarray(Z)
        return 1e-3 * Z[:, 0] * Z[:, 1] + 4 * Z[:, 2] + 4 * Z[:, 3] + 3 * Z[:, 2] * Z[:, 3]

    r = ml.report(f, X, sections=["interaction"], **SMALL)
    data = r.sections["interaction"].data
    assert set(data["pair"]) == {"c", "d"}
    share = data["interactions"].pairwise.set_index(["feature_1", "feature_2"])["h2"]
    assert share.max() > 0.9  # the tiny pure pair has the larger share ...
    ab = [h2 for p, _, h2 in data["ranked"] if set(p) == {"a", "b"}][0]
    assert ab > 0.9  # ... and still loses
    assert len(r.sections["interaction"].tables[0].rows) == 6  # the first and runners-up
    assert list(r.sections) == ["interaction"]  # effects computed, not shown


# ----------------------------------------------------------------- 8. wording
def test_small_data_dependence_is_not_judged_and_rank_correlation_is_shown():
    rng = np.random.default_rng(11)
    a = rng.normal(size=54)
    X = pd.DataFrame({"a": a, "b": a + rng.normal(0, .6, 54), "c": rng.normal(size=54)})
    r = ml.report(lambda Z: np.asarray(Z)[:, 0], X, sections=["data"], **SMALL)
    rows = {f["feature"]: f for f in r.sections["data"].data["features"]}
    rho = pd.Series(X.a).corr(X.b, method="spearman")
    assert np.isnan(rows["a"]["dependence"])
    assert rows["a"]["note"] == f"too few rows to judge; rank correlation {rho:.2f} with b"


def test_dependence_is_clipped_at_zero_on_the_page():
    rng = np.random.default_rng(12)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    r = ml.report(lambda Z: np.asarray(Z)[:, 0], X, sections=["data"], **SMALL)
    rows = r.sections["data"].data["features"]
    assert min(f["dependence"] for f in rows) < 0  # independent columns: negative CV R^2
    shown = [row[6].text for row in r.sections["data"].tables[0].rows]
    assert all(not t.startswith("-") for t in shown)


def test_flag_is_explained_once_with_a_badge_per_row():
    rng = np.random.default_rng(13)
    x = rng.uniform(-2, 2, 300)
    X = pd.DataFrame({"x1": x, "x2": x + rng.normal(0, .05, 300),
                      "x3": x + rng.normal(0, .05, 300)})
    r = ml.report(lambda Z: np.asarray(Z).sum(axis=1), X, sections=["data"], **SMALL)
    sec = r.sections["data"]
    badges = [row[-1].text for row in sec.tables[0].rows]
    assert badges == ["PD off the data"] * 3
    assert sum("PD off the data (3 features" in w for w in sec.warnings) == 1


def test_holdout_wording():
    model, X, y = _zip_data()
    plain = ml.report(model, X, y, sections=["quality"], **SMALL).sections["quality"].notes[0]
    held = ml.report(model, X, y, sections=["quality"], holdout=True,
                     **SMALL).sections["quality"].notes[0]
    assert "If these rows were used for training" in plain
    assert "held-out rows" in held and "optimistic" not in held


def test_multiclass_quality_has_overall_accuracy_and_confusion_matrix():
    from sklearn.metrics import accuracy_score, confusion_matrix

    rng = np.random.default_rng(14)
    X = pd.DataFrame(rng.normal(size=(300, 2)), columns=["a", "b"])
    y = np.array(["cat", "dog", "eel"])[np.digitize(X.a + 0.3 * rng.normal(size=300),
                                                    [-0.5, 0.5])]
    model = LogisticRegression().fit(X, y)
    r = ml.report(model, X, y, target="dog", sections=["quality"], **SMALL)
    q = r.sections["quality"].data
    assert q["metrics"]["overall_accuracy"] == pytest.approx(accuracy_score(y,
                                                                            model.predict(X)))
    np.testing.assert_array_equal(q["confusion"], confusion_matrix(y, model.predict(X)))


def test_lime_low_fidelity_is_badged():
    rng = np.random.default_rng(15)
    X = pd.DataFrame(rng.uniform(-1, 1, (300, 3)), columns=["a", "b", "c"])

    def wiggly(Z):
        Z = np.asarray(Z)
        return np.sin(25 * Z[:, 0]) * np.cos(25 * Z[:, 1])

    r = ml.report(wiggly, X, sections=["lime"], rows=[0, 1, 2], **SMALL)
    sec = r.sections["lime"]
    score = sec.data["score"]
    low = [r_ for r_, s in zip(sec.data["rows"], score) if s < 0.3]
    assert low and sec.data["low_fidelity"] == low
    assert any("Low fidelity" in w for w in sec.warnings)
    badges = [row[-1].text for row in sec.tables[0].rows]
    assert badges == ["low fidelity" if s < 0.3 else "" for s in score]


def test_shapley_note_says_why_rankings_differ():
    X = _scales_data()

    def f(Z):
        Z = np.asarray(Z)
        # signal*flag is all interaction: large Shapley shares, but both PD curves flat-ish
        return 4 * (Z[:, 0] - 0.5) * (Z[:, 2] - 0.5) + 0.3 * Z[:, 1]

    r = ml.report(f, X, sections=["effects", "shapley"], **SMALL)
    notes = " ".join(r.sections["shapley"].notes)
    assert "The rankings differ" in notes and "interactions" in notes


def test_cli_prints_a_line_per_section_and_lists_unused_columns(tmp_path, capsys):
    model, X, y = _zip_data()
    data, saved = tmp_path / "d.csv", tmp_path / "m.skops"
    X.assign(y=y, leak=y * 2).to_csv(data, index=False)
    sio.dump(model, saved)
    code, out, err = _run(["report", "--data", data, "--model", saved, "--target", "y",
                           "--out", tmp_path / "r.html", "--sample", "150", "--explain", "5",
                           "--grid", "5", "--holdout"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    for key in ("data", "quality", "effects", "interaction", "shapley", "lime"):
        assert any(line.startswith(f"modellens report: {key}: ") and line.endswith(" s")
                   for line in lines), out
    assert "columns the model does not take: leak" in out
    text = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "leak" in text and "held-out rows" in text


# ------------------------------------------------------------ 10. the structure
def test_the_order_of_the_sections_does_not_change_what_they_show(monkeypatch):
    from modellens.report import _sections

    rng = np.random.default_rng(16)
    x = rng.uniform(-2, 2, 200)
    X = pd.DataFrame({"a": x, "b": x + rng.normal(0, .05, 200), "c": rng.normal(size=200)})

    def f(Z):
        Z = np.asarray(Z)
        return Z[:, 0] + 2 * Z[:, 1] * Z[:, 2]

    keys = ["data", "effects", "interaction", "shapley"]
    first = ml.report(f, X, sections=keys, **SMALL)
    monkeypatch.setattr(_sections, "SECTIONS", list(reversed(_sections.SECTIONS)))
    second = ml.report(f, X, sections=keys, **SMALL)
    assert list(second.sections) == list(reversed(keys))
    for key in keys:
        a, b = first.sections[key], second.sections[key]
        assert a.notes == b.notes and a.warnings == b.warnings
        assert [g.title for g in a.figure_groups] == [g.title for g in b.figure_groups]
        assert [g.warnings for g in a.figure_groups] == [g.warnings for g in b.figure_groups]
    np.testing.assert_array_equal(first.sections["shapley"].data["attributions"].values,
                                  second.sections["shapley"].data["attributions"].values)
    # the inputs are frozen: a section cannot change what the next one reads
    inputs_seen = []
    keep = _sections.effects_section

    def spy(inputs, found):
        inputs_seen.append(inputs)
        return keep(inputs, found)

    monkeypatch.setattr(_sections, "SECTIONS", [
        s if s.key != "effects" else _sections.SectionSpec("effects", spy, uses=("data",))
        for s in _sections.SECTIONS])
    ml.report(f, X, sections=["effects"], **SMALL)
    (inputs,) = inputs_seen
    with pytest.raises(Exception):
        inputs.grid = 3
    with pytest.raises(ValueError):
        inputs.prediction[0] = 1.0


def test_a_section_cannot_read_findings_it_does_not_declare(monkeypatch):
    """A section sees only the findings it names: an undeclared read raises, whatever order
    the sections are built in, instead of depending on that order."""
    from modellens.report import _sections

    X = pd.DataFrame({"a": np.linspace(0, 1, 120), "b": np.linspace(1, 0, 120) ** 2})

    def f(Z):
        return np.asarray(Z)[:, 0]

    def sneaky(inputs, found):
        return found["effects"]  # not in needs / uses

    monkeypatch.setattr(_sections, "SECTIONS", [
        s if s.key != "lime" else _sections.SectionSpec("lime", sneaky)
        for s in _sections.SECTIONS])
    with pytest.raises(KeyError):
        ml.report(f, X, sections=["effects", "lime"], **SMALL)


def test_unordered_levels_are_drawn_by_effect_and_ordered_ones_keep_their_order():
    rng = np.random.default_rng(5)
    n = 300
    effect = {"ant": 2.0, "bee": -1.0, "cat": 0.5, "dog": -3.0}
    X = pd.DataFrame({"x": rng.uniform(-1, 1, n),
                      "pet": pd.Categorical(rng.choice(list(effect), n)),
                      "size": pd.Categorical(rng.choice(["S", "M", "L"], n),
                                             categories=["S", "M", "L"], ordered=True)})

    def f(F):
        return (np.asarray(F["x"]) + F["pet"].map(effect).astype(float).to_numpy()
                + F["size"].cat.codes.to_numpy() * 0.1)

    r = ml.report(f, X, sections=["effects"], **SMALL)
    order = r.sections["effects"].data["level_order"]
    # the PD panel takes the ALE panel's order (ALE accumulates along it)
    ale = r.sections["effects"].data["ale"]["pet"]
    assert order["pet"] == [str(v) for v in ale.grid]
    assert sorted(order["pet"]) == ["ant", "bee", "cat", "dog"]
    assert "size" not in order  # S < M < L is the column's own order


def test_brute_force_screen_stays_within_its_budget_of_model_rows():
    from modellens.report._sections.interaction import SCREEN_BRUTE_FEATURES, SCREEN_BRUTE_ROWS

    rng = np.random.default_rng(11)
    X = pd.DataFrame(rng.uniform(-1, 1, (400, 25)), columns=[f"f{i}" for i in range(25)])

    def f(Z):
        Z = np.asarray(Z)
        return Z @ np.linspace(3, 1, 25) + 2 * Z[:, 0] * Z[:, 1]

    r = ml.report(f, X, sections=["interaction"], **{**SMALL, "sample": 400})
    inter = r.sections["interaction"].data["interactions"]
    assert inter.method == "brute" and len(inter.overall) == SCREEN_BRUTE_FEATURES
    assert 0 < inter.n_model_rows <= SCREEN_BRUTE_ROWS
    assert set(r.sections["interaction"].data["pair"]) == {"f0", "f1"}


def test_screen_of_a_pipeline_whose_trees_cannot_be_read_keeps_to_the_brute_budget():
    """A Pipeline ending in trees is named a tree model, but its trees see encoded columns:
    the screen must not fall to brute force over every pair (40M rows on the messy CSV)."""
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.preprocessing import StandardScaler

    from modellens.report._sections.interaction import SCREEN_BRUTE_ROWS

    rng = np.random.default_rng(21)
    X = pd.DataFrame(rng.uniform(-1, 1, (400, 8)), columns=[f"x{i}" for i in range(8)])
    y = X.x0 * X.x1 + X.x2
    model = make_pipeline(FunctionTransformer(), HistGradientBoostingRegressor(
        max_iter=20, random_state=0)).fit(X, y)
    r = ml.report(model, X, sections=["interaction"], **{**SMALL, "sample": 400})
    inter = r.sections["interaction"].data["interactions"]
    assert inter.method == "brute"
    assert inter.n_model_rows <= SCREEN_BRUTE_ROWS + inter.sample_size
    assert {"x0", "x1"} == set(r.sections["interaction"].data["pair"])


def test_the_data_section_checks_the_grid_pd_evaluates(monkeypatch):
    """The off-data share is measured on PD's own grid, for every kind of feature: a
    continuous one, a few-valued one, one with missing values, a categorical one and one
    with more levels than are labelled (its top levels)."""
    from modellens.report._sections import data as data_module

    rng = np.random.default_rng(21)
    n = 300
    X = pd.DataFrame({
        "x": rng.normal(size=n),
        "few": rng.integers(0, 4, n).astype(float),
        "gaps": np.where(rng.random(n) < .2, np.nan, rng.uniform(3, 9, n)),
        "pet": pd.Categorical(rng.choice(["ant", "bee", "cat"], n)),
        "town": pd.Categorical(rng.choice([f"t{k:02d}" for k in range(30)], n)),
    })

    def f(D):
        return (D["x"].to_numpy() + D["few"].to_numpy() + np.nan_to_num(D["gaps"].to_numpy())
                + D["pet"].cat.codes.to_numpy() + 0.1 * D["town"].cat.codes.to_numpy())

    checked = {}
    keep = data_module.dependence

    def spy(dataset, grids, **kw):
        checked.update({dataset.columns[j].name: (dataset.columns[j], g)
                        for j, g in grids.items()})
        return keep(dataset, grids, **kw)

    monkeypatch.setattr(data_module, "dependence", spy)
    rep = ml.report(f, X, sections=["data", "effects"], max_features=5, **SMALL)
    pd_effects = rep.sections["effects"].data["pdp"]
    assert set(checked) == set(X.columns)
    for name, (col, grid) in checked.items():
        evaluated = pd_effects[name].grid
        if col.is_categorical:
            grid = col.levels[grid.astype(int)]
            assert sorted(map(str, grid)) == sorted(map(str, evaluated)), name
        else:
            np.testing.assert_allclose(grid, evaluated, rtol=0, atol=1e-12, err_msg=name)
    assert len(checked["town"][1]) == 20  # the top levels only, as PD


def test_the_reports_predictions_are_the_public_ones():
    """The page's predictions are what ``ml.predict`` gives a user for the same target."""
    rng = np.random.default_rng(22)
    X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    y = np.where(X.a + X.b > 0, "yes", "no")
    clf = LogisticRegression().fit(X, y)
    rep = ml.report(clf, X, y, sections=["quality", "shapley"], target="no", **SMALL)
    expected = clf.predict_proba(X)[:, list(clf.classes_).index("no")]
    rows = rep.sections["shapley"].data["rows"]
    # the default waterfalls are the rows of highest, lowest and median prediction
    assert rows[:2] == [int(np.argmax(expected)), int(np.argmin(expected))]
    attr = rep.sections["shapley"].data["attributions"]
    np.testing.assert_allclose(attr.prediction[:2], expected[rows[:2]], atol=1e-12)
    assert rep.settings["explained output"] == "P(y = no)"
