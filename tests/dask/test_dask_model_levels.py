"""Out of core, a column the model takes as categorical is explained at its levels too."""

import numpy as np
import pandas as pd
import pytest

import modellens as ml

dd = pytest.importorskip("dask.dataframe")


def test_pd_and_ale_of_integer_categories_from_dask_equal_in_memory():
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(0)
    levels = 2 * np.arange(24) + 1
    X = pd.DataFrame({"hour": rng.choice(levels, 600), "x": rng.normal(size=600)})
    y = 4 * np.sin(X["hour"]) + X["x"]
    model = HistGradientBoostingRegressor(max_iter=20, categorical_features=["hour"],
                                          random_state=0).fit(X, y)
    lazy = dd.from_pandas(X, npartitions=3)
    for method in (ml.pdp, ml.ale):
        out, mem = method(model, lazy, ["hour"])["hour"], method(model, X, ["hour"])["hour"]
        assert list(np.asarray(out.grid)) == list(np.asarray(mem.grid))
        np.testing.assert_allclose(out.values, mem.values, atol=1e-12)
    assert sorted(np.asarray(ml.pdp(model, lazy, ["hour"])["hour"].grid).tolist()) == \
        levels.tolist()
