"""The report's conditional Shapley section (issue 43): shown where the data section finds
features the others explain strongly, beside the marginal values, with both MSEv."""

import numpy as np
import pandas as pd
from sklearn.linear_model import LinearRegression

import modellens as ml

SMALL = dict(sample=300, n_explain=3, n_background=150, grid=5, progress=False)


def _data(partner_noise, seed=0, n=300):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    X = pd.DataFrame({"a": a, "b": a + partner_noise * rng.normal(size=n),
                      "c": rng.normal(size=n)})
    y = X.a + X.b + X.c
    return LinearRegression().fit(X, y), X, y


def test_dependent_features_get_conditional_values_beside_the_marginal_ones():
    model, X, y = _data(0.1)
    rep = ml.report(model, X, y, sections=["conditional"], **SMALL)
    sec = rep.sections["conditional"]
    assert {"a", "b"} <= set(sec.data["flagged"]) and "c" not in sec.data["flagged"]
    cond, marg = sec.data["conditional"], sec.data["marginal"]
    assert cond.value_function == "conditional" and marg.value_function == "interventional"
    assert len(cond) == len(sec.data["rows"]) == 3
    # f = a + b + c with b ~ a: the marginal worth of {a} misses what b carries, the
    # conditional one does not, so its MSEv is far lower (both keep the independent c's
    # share, which bounds the ratio away from 0: about 0.48 here, 1 for equal games)
    assert sec.data["msev_ratio"] < 0.7
    assert np.allclose(cond.base_values + cond.values.sum(axis=1), cond.prediction)
    (table,) = sec.tables
    assert len(table.rows) == 3 and len(table.columns) == 1 + 2 * 3
    assert any("dependence='tree'" in note for note in sec.notes)


def test_independent_features_get_no_conditional_section():
    model, X, y = _data(3.0)
    rep = ml.report(model, X, y, sections=["conditional"], **SMALL)
    assert "conditional" not in rep.sections
