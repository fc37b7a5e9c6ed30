"""A multiclass booster from its own model file: every class without --class, one with it.

Each command line runs once per file (a module fixture); the tests read the Report it
wrote, so the checks of one run share it.
"""

import contextlib
import io

import numpy as np
import pandas as pd
import pytest


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


def _report(argv, *, pictures=True):
    """Run the command line (status 0 asserted); the Report it wrote.  ``pictures=False``:
    its page's pictures blank, for a run whose pictures another run of this file draws
    alike (drawing them is most of a run's CPU; its numbers are what is checked)."""
    from cli_support import pages_without_pictures
    from modellens.cli import main
    from modellens.report._report import Report

    written, err = [], io.StringIO()
    save = Report.save
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(err), \
            (contextlib.nullcontext() if pictures else pages_without_pictures()):
        patch.setattr(Report, "save", lambda self, path: (written.append(self),
                                                          save(self, path))[1])
        code = main([str(a) for a in argv])
    assert code == 0, err.getvalue()
    return written[0]


def _every_class_report(data, model_file, out, *, pictures=True):
    """The CLI run without --class; the Report it wrote."""
    return _report(["report", "--data", data, "--model", model_file, "--target", "y",
                    "--out", out, "--sample", 200, "--explain", 4, "--grid", 5],
                   pictures=pictures)


@pytest.fixture(scope="module")
def one_class(files):
    """The report of the LightGBM text file with --class 2."""
    folder, _, _ = files
    return _report(["report", "--data", folder / "data.csv", "--model", folder / "model.txt",
                    "--target", "y", "--out", folder / "one.html", "--sample", 100,
                    "--explain", 4, "--class", 2], pictures=False)


@pytest.fixture(scope="module")
def every_class(files):
    """The report of the LightGBM text file without --class, and its page."""
    folder, _, _ = files
    rep = _every_class_report(folder / "data.csv", folder / "model.txt", folder / "every.html")
    return rep, (folder / "every.html").read_text(encoding="utf-8")


def test_class_index_explains_one_output_of_a_multiclass_txt(files, one_class):
    import modellens as ml
    import lightgbm as lgb

    folder, model, X = files
    assert (folder / "one.html").exists()
    # the same output as the library: the booster's column 2, its probability of class 2
    booster = lgb.Booster(model_file=str(folder / "model.txt"))
    np.testing.assert_allclose(ml.predict(booster, X, target=2),
                               model.predict_proba(X)[:, 2], atol=1e-12)


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


def test_a_multiclass_txt_without_class_explains_every_class(files, every_class):
    import lightgbm as lgb

    folder, _, _ = files
    rep, page = every_class
    X = pd.read_csv(folder / "data.csv").drop(columns="y")
    _check_every_class(rep, lgb.Booster(model_file=str(folder / "model.txt")), X, 3)
    assert all(f"prediction[{c}]" in page for c in range(3))


@pytest.fixture(scope="module")
def xgboost_reports(tmp_path_factory):
    """A four-class XGBoost model saved as .json and .ubj, and the report of each file
    without --class: ({suffix: Report}, the model, its data, the classes)."""
    xgb = pytest.importorskip("xgboost")
    folder = tmp_path_factory.mktemp("xgboost")
    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    y = np.digitize(X["a"] + 0.5 * X["b"], [-0.7, 0.0, 0.7])
    model = xgb.XGBClassifier(n_estimators=8, max_depth=3).fit(X, y)
    X.assign(y=y).to_csv(folder / "data.csv", index=False)
    reports = {}
    for suffix in ("json", "ubj"):
        model.get_booster().save_model(folder / f"model.{suffix}")
        # (the .ubj report's pictures are the .json one's: drawn once)
        reports[suffix] = _every_class_report(folder / "data.csv", folder / f"model.{suffix}",
                                              folder / f"{suffix}.html",
                                              pictures=suffix == "json")
    return reports, folder, model, X, y


def test_a_multiclass_xgboost_json_without_class_explains_every_class(xgboost_reports):
    xgb = pytest.importorskip("xgboost")
    reports, folder, _, _, _ = xgboost_reports
    booster = xgb.Booster()
    booster.load_model(folder / "model.json")
    _check_every_class(reports["json"], booster,
                       pd.read_csv(folder / "data.csv").drop(columns="y"), 4)


@pytest.mark.parametrize("kind", ["txt", "skops"])
def test_lightgbm_columns_with_spaces_are_the_data_columns(tmp_path, kind):
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
    # (a binary classifier's pictures, drawn by the other runs of the suite)
    rep = _every_class_report(tmp_path / "data.csv", model_file, tmp_path / "r.html",
                              pictures=False)
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


def test_a_multiclass_txt_is_scored_against_class_indices(files, every_class):
    # issue #42: "the model has 3 outputs ... which output y measures is unknown" skipped
    # the quality section of a booster whose file says it is a multiclass classifier
    folder, model, X = files
    rep, page = every_class
    y = pd.read_csv(folder / "data.csv")["y"].to_numpy()
    _scored_as_a_classifier(rep, y, model.predict_proba(X))
    assert "Confusion matrix" in page


def test_one_class_of_a_multiclass_txt_is_scored_as_that_class(files, one_class):
    folder, model, X = files
    y = pd.read_csv(folder / "data.csv")["y"].to_numpy()
    quality = one_class.sections["quality"].data
    assert quality["task"] == "classification"
    # class 2 against the rest, as for a scikit-learn classifier's --class
    p2 = model.predict_proba(X)[:, 2]
    assert quality["metrics"]["accuracy"] == pytest.approx(np.mean((p2 >= 0.5) == (y == 2)))
    assert quality["metrics"]["overall_accuracy"] == pytest.approx(
        np.mean(np.argmax(model.predict_proba(X), axis=1) == y))


def test_a_multiclass_xgboost_file_is_scored_against_class_indices(xgboost_reports):
    reports, _, model, X, y = xgboost_reports
    for suffix in ("json", "ubj"):
        _scored_as_a_classifier(reports[suffix], y, model.predict_proba(X))
