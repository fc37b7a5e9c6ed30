"""``modellens compare``: the table of ml.compare on a data file."""

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.cli import main

xgb = pytest.importorskip("xgboost")


def test_compare_prints_the_features_of_the_difference(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    y = X["a"] + X["b"] * X["c"]
    A = xgb.XGBRegressor(n_estimators=10, max_depth=3).fit(X, y)
    B = xgb.XGBRegressor(n_estimators=10, max_depth=3).fit(X, y + 2 * X["c"])
    A.save_model(tmp_path / "a.json")
    B.save_model(tmp_path / "b.json")
    X.to_csv(tmp_path / "x.csv", index=False)
    out = tmp_path / "diff.csv"
    code = main(["compare", "--model", str(tmp_path / "a.json"), "--model-b",
                 str(tmp_path / "b.json"), "--data", str(tmp_path / "x.csv"), "--rows", "50",
                 "--background", "40", "--out", str(out)])
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert "model_b - model_a" in lines[0] and lines[2].split()[0] == "c"  # c moved most
    table = pd.read_csv(out)
    A2, B2 = xgb.XGBRegressor(), xgb.XGBRegressor()
    A2.load_model(tmp_path / "a.json")
    B2.load_model(tmp_path / "b.json")
    bg = X.iloc[np.sort(np.random.default_rng(0).choice(200, 40, replace=False))]
    want = ml.compare(A2, B2, X.iloc[:50], background=bg).to_frame()
    np.testing.assert_allclose(table["value"], want["value"], atol=1e-9)
