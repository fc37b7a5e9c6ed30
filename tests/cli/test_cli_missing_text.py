"""The CLI's reader gives a pipeline the missing values it was fit on (issue #42).

A text column with blanks, read from CSV, imputed by a SimpleImputer (which
reads NaN) and one-hot encoded: the report scores the model's own numbers.
(The in-memory paths gave None where the user had NaN, which the imputer does
not take for missing; the CLI's reader, which reads such codes as text, is
held to the same numbers here.)
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from cli_support import _run


def test_report_scores_a_pipeline_with_an_imputer_on_text_with_blanks(tmp_path, capsys,
                                                                      monkeypatch):
    skops = pytest.importorskip("skops.io")
    from modellens.report._report import Report

    rng = np.random.default_rng(0)
    n = 300
    # codes that read_csv would take for numbers: the reader reads them as the text the
    # model's encoder saw, an object column whose blanks are NaN
    edu = rng.choice(["01", "02", "10"], n).astype(object)
    edu[rng.random(n) < 0.2] = None
    x = rng.normal(size=n)
    effect = {"01": -1.0, "02": 0.0, "10": 2.0}
    y = x + np.array([effect.get(e, 5.0) for e in edu])  # a blank matters a lot
    pd.DataFrame({"education": edu, "x": x, "y": y}).to_csv(tmp_path / "data.csv", index=False)
    # as a user fits on the file, the codes as text
    X = pd.read_csv(tmp_path / "data.csv", dtype={"education": object}).drop(columns="y")
    text = make_pipeline(SimpleImputer(strategy="constant", fill_value="missing"),
                         OneHotEncoder(handle_unknown="ignore"))
    model = make_pipeline(make_column_transformer((text, ["education"]),
                                                  remainder="passthrough"), Ridge(1e-6))
    model.fit(X, y)
    skops.dump(model, tmp_path / "model.skops")
    written = []
    save = Report.save
    monkeypatch.setattr(Report, "save", lambda self, path: (written.append(self),
                                                            save(self, path))[1])
    code, _, err = _run(["report", "--data", tmp_path / "data.csv", "--target", "y",
                         "--model", tmp_path / "model.skops", "--out", tmp_path / "r.html",
                         "--static", "--sample", 150, "--explain", 4], capsys)
    assert code == 0, err
    metrics = written[0].sections["quality"].data["metrics"]
    assert metrics["r2"] == pytest.approx(r2_score(y, model.predict(X)), abs=1e-9)
    assert metrics["r2"] > 0.99  # the blanks' level is what the model learnt
