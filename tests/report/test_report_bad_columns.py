"""A column with at most one value does not stop the report; it is named and skipped."""

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from cli_support import _run
from sklearn.compose import make_column_transformer
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline

import modellens as ml


def _frame(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    X["one"] = np.nan
    X.loc[3, "one"] = 1.0  # one value, the rest missing
    X["none"] = np.nan  # all missing
    X["text"] = pd.Series([None] * n, dtype=object)  # a text column with no value
    return X


def _f(A):
    return A["a"].to_numpy() - 2 * A["b"].to_numpy()


@pytest.mark.parametrize("features", [None, ["a", "one"]])
def test_report_skips_columns_of_at_most_one_value(features):
    X = _frame()
    rep = ml.report(_f, X, _f(X), features=features, sample=100, n_explain=3, progress=False,
                    sections=["data", "effects"])
    data = rep.sections["data"]
    rows = {f["feature"]: f for f in data.data["features"]}
    assert rows["none"]["kind"] == "empty" and rows["none"]["note"] == "all missing"
    assert rows["none"]["distinct"] == 0 and rows["one"]["distinct"] == 1
    assert rows["one"]["kind"] == "constant"
    assert np.isnan(rows["one"]["dependence"])
    # the informative columns are still judged: b is not predicted by a (independent draws)
    assert np.isfinite(rows["a"]["dependence"]) and np.isfinite(rows["b"]["dependence"])
    skipped = [w for w in data.warnings if "fewer than two values" in w]
    assert len(skipped) == 1 and "one (" in skipped[0]
    effects = rep.sections["effects"].data
    drawn = set(effects["pdp"])
    assert "one" not in drawn and "none" not in drawn and "a" in drawn
    a = effects["pdp"]["a"]
    # the model is linear: PD of a is x - 2 E[b], slope 1
    assert np.allclose(np.diff(a.values) / np.diff(a.grid), 1.0)


def test_report_naming_only_empty_features_names_them():
    X = _frame()
    with pytest.raises(ml.InvalidParameterError, match=r"'none' \(all missing"):
        ml.report(_f, X, features=["none"], sample=100, progress=False)


def test_command_line_report_with_a_one_value_column(tmp_path, capsys):
    X = _frame().drop(columns=["text"])
    y = _f(X)
    fit = X.assign(one=np.arange(len(X)) % 2, none=0.0)  # the model saw the columns filled
    model = make_pipeline(make_column_transformer(("passthrough", ["a", "b"]),
                                                  remainder="drop"), Ridge()).fit(fit, y)
    sio.dump(model, tmp_path / "m.skops")
    X.assign(y=y).to_csv(tmp_path / "d.csv", index=False)
    out = tmp_path / "r.html"
    code, _, err = _run(["report", "--data", tmp_path / "d.csv", "--model", tmp_path / "m.skops",
                         "--target", "y", "--features", "a", "one", "--out", out,
                         "--sample", "100", "--explain", "3", "--grid", "4"], capsys)
    assert code == 0, err
    assert "Traceback" not in err
    assert "fewer than two values" in out.read_text(encoding="utf-8")
