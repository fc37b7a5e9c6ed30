"""The report's TreeSHAP section asks one probe row, then the others, and joins the two
results by hand (``report/_sections/shapley._join_rows``: the library has no helper that
joins Attributions by rows).  The oracle: the one call on the same rows, every field
(values, base values, codes, predictions, interactions, row labels, the diagnostics with
``n_model_rows``, the blocks TreeSHAP has none of)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestClassifier

import modellens as ml
from modellens.report._sections.shapley import _join_rows


def _data(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=list("abcd"),
                     index=[f"r{i}" for i in range(n)])  # row labels joined too
    return X, X.a * X.b + X.c - X.d


def _fields(attr):
    return {k: v for k, v in vars(attr).items()}


CASES = {
    "regressor, path-dependent": ("hgb", {}),
    "regressor, interventional, interactions": ("hgb", {"background": 30,
                                                         "interactions": True}),
    "three classes": ("forest", {"target": "all"}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_joined_rows_are_the_one_call_on_the_same_rows(case):
    kind, kw = CASES[case]
    X, y = _data()
    if kind == "hgb":
        model = HistGradientBoostingRegressor(max_iter=15, random_state=0).fit(X, y)
    else:
        model = RandomForestClassifier(n_estimators=6, max_depth=4, random_state=0).fit(
            X, np.digitize(y, [-0.5, 0.5]))
    if "background" in kw:
        kw = {**kw, "background": X.iloc[-kw["background"]:]}
    rows = X.iloc[3:10]

    def call(part):
        return ml.shapley(model, part, algorithm="tree", progress=False, **kw)

    joined, whole = _join_rows(call(rows.iloc[:1]), call(rows.iloc[1:])), call(rows)
    mine, theirs = _fields(joined), _fields(whole)
    assert mine.keys() == theirs.keys()
    assert joined.diagnostics == whole.diagnostics  # n_model_rows: both checks' rows
    assert whole.diagnostics["n_model_rows"] == len(rows)
    for name, value in theirs.items():
        if name == "diagnostics":
            continue
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(mine[name], value, err_msg=name)
        else:
            assert mine[name] == value, name
