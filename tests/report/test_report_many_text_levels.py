"""The report never stops on a column the model accepts (issue #42).

A 200-level zip code read as text and one-hot encoded in a Pipeline, 3,000
rows: the report ran five sections, then stopped ("grid levels [...] are not
levels of 'zip code'") where the rows explained one by one held fewer levels
than the sample whose levels made the grid.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

import modellens as ml
from cli_support import _run


def _zip_data(n=3000, levels=200, seed=0):
    rng = np.random.default_rng(seed)
    zips = np.array([f"{z:05d}" for z in rng.choice(np.arange(1000, 99999), levels,
                                                      replace=False)])
    X = pd.DataFrame({"zip code": pd.Series(zips[rng.zipf(1.3, n) % levels], dtype=object),
                      "x": rng.normal(size=n)})
    y = X["x"] * 2 + X["zip code"].map(dict(zip(zips, rng.normal(size=levels)))).to_numpy()
    model = make_pipeline(make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["zip code"]), remainder="passthrough"),
        Ridge()).fit(X, y)
    return X, y, model


def test_pd_of_a_few_rows_at_text_levels_they_lack_is_the_models_own():
    X, _, model = _zip_data(n=400, levels=40)
    rows = X.iloc[:3]
    grid = [z for z in pd.unique(X["zip code"]) if z not in set(rows["zip code"])][:5]
    effect = ml.pdp(model, rows, "zip code", grid=grid, ice=True)["zip code"]
    assert list(effect.grid) == grid
    for k, level in enumerate(grid):
        own = model.predict(rows.assign(**{"zip code": level}))
        np.testing.assert_allclose(effect.ice[:, k], own, rtol=0, atol=1e-12)
    assert X["zip code"].tolist()[:3] == rows["zip code"].tolist()  # the caller's rows


def test_a_categorical_dtype_still_refuses_a_level_it_does_not_declare():
    X, _, _ = _zip_data(n=100, levels=10)
    cat = X.astype({"zip code": "category"})
    with pytest.raises(ml.InvalidParameterError, match="not levels of 'zip code'"):
        ml.pdp(lambda D: D["x"].to_numpy(), cat, "zip code", grid=["00000"])


def test_the_report_of_a_200_level_zip_code_pipeline_runs_every_section(tmp_path, capsys):
    skops = pytest.importorskip("skops.io")
    X, y, model = _zip_data()
    X.assign(y=y).to_csv(tmp_path / "data.csv", index=False)
    skops.dump(model, tmp_path / "model.skops")
    code, out, err = _run(["report", "--data", tmp_path / "data.csv", "--target", "y",
                           "--model", tmp_path / "model.skops", "--out", tmp_path / "r.html",
                           "--static"], capsys)
    assert code == 0, err
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    for section in ("effects", "quality", "shapley", "lime"):
        assert f'id="{section}"' in page, section
