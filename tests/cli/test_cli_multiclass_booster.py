"""A multiclass booster from its own model file: --class picks the output, one clear error."""

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


def test_without_class_one_error_names_the_option(files, capsys):
    folder, _, _ = files
    code, _, err = _run(["report", "--data", folder / "data.csv", "--model",
                         folder / "model.txt", "--target", "y", "--out", folder / "r.html",
                         "--sample", 100, "--explain", 4], capsys)
    line = _one_error_line(err)
    assert code != 0 and "--class" in line and "lambda" not in line
