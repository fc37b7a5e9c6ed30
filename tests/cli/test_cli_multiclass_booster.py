"""A multiclass booster from its own model file: every class without --class, one with it."""

import numpy as np
import pandas as pd
import pytest

from cli_support import _one_error_line, _run


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    y = np.digitize(X["a"], [-0.5, 0.5])
    model = lgb.LGBMClassifier(n_estimators=10, verbose=-1).fit(X, y)
    folder = tmp_path_factory.mktemp("booster")
    model.booster_.save_model(folder / "model.txt")
    X.assign(y=y).to_csv(folder / "data.csv", index=False)
    return folder, model, X


def test_class_index_explains_one_output_of_a_multiclass_txt(files, capsys):
    import modellens as ml
    import lightgbm as lgb

    folder, model, X = files
    code, out, err = _run(["report", "--data", folder / "data.csv", "--model",
                           folder / "model.txt", "--target", "y", "--out",
                           folder / "r.html", "--sample", 100, "--explain", 4, "--class", 2],
                          capsys)
    assert code == 0, err
    assert (folder / "r.html").exists()
    # the same output as the library: the booster's column 2, its probability of class 2
    booster = lgb.Booster(model_file=str(folder / "model.txt"))
    np.testing.assert_allclose(ml.predict(booster, X, target=2),
                               model.predict_proba(X)[:, 2], atol=1e-12)


def _every_class_report(monkeypatch, capsys, data, model_file, out):
    """Run the CLI without --class; the Report it wrote."""
    from modellens.report._report import Report

    written = []
    save = Report.save
    monkeypatch.setattr(Report, "save", lambda self, path: (written.append(self),
                                                            save(self, path))[1])
    code, _, err = _run(["report", "--data", data, "--model", model_file, "--target", "y",
                         "--out", out, "--sample", 200, "--explain", 4, "--grid", 5], capsys)
    assert code == 0, err
    return written[0]


def _check_every_class(rep, booster, X, k):
    import modellens as ml

    effects = rep.sections["effects"].data
    for name in X.columns:
        assert len(effects["pdp"][name].outputs) == k
        for c in range(k):
            one = ml.pdp(booster, X, [name], grid=5, target=c, progress=False)[name]
            np.testing.assert_allclose(effects["pdp"][name].for_output(c).values, one.values,
                                       atol=1e-12, rtol=0)
    # the one output of the attribution sections is named in their heading
    assert rep.sections["shapley"].data["attributions"].output in rep.sections["shapley"].title


def test_a_multiclass_txt_without_class_explains_every_class(files, capsys, monkeypatch):
    import lightgbm as lgb

    folder, _, _ = files
    rep = _every_class_report(monkeypatch, capsys, folder / "data.csv", folder / "model.txt",
                              folder / "every.html")
    X = pd.read_csv(folder / "data.csv").drop(columns="y")
    _check_every_class(rep, lgb.Booster(model_file=str(folder / "model.txt")), X, 3)
    page = (folder / "every.html").read_text(encoding="utf-8")
    assert all(f"prediction[{c}]" in page for c in range(3))


def test_a_multiclass_xgboost_json_without_class_explains_every_class(tmp_path, capsys,
                                                                     monkeypatch):
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    y = np.digitize(X["a"] + 0.5 * X["b"], [-0.5, 0.5])
    model = xgb.XGBClassifier(n_estimators=8, max_depth=3).fit(X, y)
    model.get_booster().save_model(tmp_path / "model.json")
    X.assign(y=y).to_csv(tmp_path / "data.csv", index=False)
    rep = _every_class_report(monkeypatch, capsys, tmp_path / "data.csv",
                              tmp_path / "model.json", tmp_path / "every.html")
    booster = xgb.Booster()
    booster.load_model(tmp_path / "model.json")
    _check_every_class(rep, booster, pd.read_csv(tmp_path / "data.csv").drop(columns="y"), 3)


@pytest.mark.parametrize("kind", ["txt", "skops"])
def test_lightgbm_columns_with_spaces_are_the_data_columns(tmp_path, capsys, monkeypatch, kind):
    # review: LightGBM stores "mean radius" as "mean_radius"; the report refused the very
    # data the model was fit on ("the model was fit on columns the data lacks")
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(150, 3)), columns=["mean radius", "b", "worst  area"])
    y = (X["mean radius"] + X["worst  area"] > 0).astype(int)
    model = lgb.LGBMClassifier(n_estimators=10, verbose=-1).fit(X, y)
    assert model.booster_.feature_name() == ["mean_radius", "b", "worst__area"]
    if kind == "txt":
        model_file = tmp_path / "model.txt"
        model.booster_.save_model(model_file)
    else:
        sio = pytest.importorskip("skops.io")
        model_file = tmp_path / "model.skops"
        sio.dump(model, model_file)
    X.assign(y=y).to_csv(tmp_path / "data.csv", index=False)
    rep = _every_class_report(monkeypatch, capsys, tmp_path / "data.csv", model_file,
                              tmp_path / "r.html")
    attr = rep.sections["shapley"].data["attributions"]
    assert attr.feature_names == ["mean_radius", "b", "worst__area"]
    # the explained rows' values add up to the model's probability of those rows
    rows = pd.DataFrame(np.asarray(attr.data, dtype=float), columns=X.columns)
    np.testing.assert_allclose(attr.values.sum(axis=1) + attr.base_values,
                               model.predict_proba(rows)[:, 1], atol=1e-9)


def _scored_as_a_classifier(rep, y, proba):
    """The quality section of a multiclass booster: sklearn's numbers on its class indices."""
    from sklearn.metrics import confusion_matrix, log_loss

    quality = rep.sections["quality"].data
    assert quality["task"] == "classification"
    predicted = np.argmax(proba, axis=1)
    assert quality["metrics"]["overall_accuracy"] == pytest.approx(np.mean(predicted == y),
                                                                   abs=1e-12)
    # (XGBoost answers in float32)
    assert quality["metrics"]["log_loss"] == pytest.approx(log_loss(y, proba), abs=1e-6)
    np.testing.assert_array_equal(quality["confusion"], confusion_matrix(y, predicted))


def test_a_multiclass_txt_is_scored_against_class_indices(files, capsys, monkeypatch):
    # issue #42: "the model has 3 outputs ... which output y measures is unknown" skipped
    # the quality section of a booster whose file says it is a multiclass classifier
    folder, model, X = files
    rep = _every_class_report(monkeypatch, capsys, folder / "data.csv", folder / "model.txt",
                              folder / "scored.html")
    y = pd.read_csv(folder / "data.csv")["y"].to_numpy()
    _scored_as_a_classifier(rep, y, model.predict_proba(X))
    assert "Confusion matrix" in (folder / "scored.html").read_text(encoding="utf-8")


def test_one_class_of_a_multiclass_txt_is_scored_as_that_class(files, capsys, monkeypatch):
    from modellens.report._report import Report

    folder, model, X = files
    written = []
    save = Report.save
    monkeypatch.setattr(Report, "save", lambda self, path: (written.append(self),
                                                            save(self, path))[1])
    code, _, err = _run(["report", "--data", folder / "data.csv", "--model",
                         folder / "model.txt", "--target", "y", "--out", folder / "one.html",
                         "--sample", 100, "--explain", 4, "--class", 2], capsys)
    assert code == 0, err
    y = pd.read_csv(folder / "data.csv")["y"].to_numpy()
    quality = written[0].sections["quality"].data
    assert quality["task"] == "classification"
    # class 2 against the rest, as for a scikit-learn classifier's --class
    p2 = model.predict_proba(X)[:, 2]
    assert quality["metrics"]["accuracy"] == pytest.approx(np.mean((p2 >= 0.5) == (y == 2)))
    assert quality["metrics"]["overall_accuracy"] == pytest.approx(
        np.mean(np.argmax(model.predict_proba(X), axis=1) == y))


def test_a_multiclass_xgboost_file_is_scored_against_class_indices(tmp_path, capsys,
                                                                   monkeypatch):
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    y = np.digitize(X["a"] + 0.5 * X["b"], [-0.7, 0.0, 0.7])
    model = xgb.XGBClassifier(n_estimators=8, max_depth=3).fit(X, y)
    X.assign(y=y).to_csv(tmp_path / "data.csv", index=False)
    for suffix in ("json", "ubj"):
        model.get_booster().save_model(tmp_path / f"model.{suffix}")
        rep = _every_class_report(monkeypatch, capsys, tmp_path / "data.csv",
                                  tmp_path / f"model.{suffix}", tmp_path / f"{suffix}.html")
        _scored_as_a_classifier(rep, y, model.predict_proba(X))
