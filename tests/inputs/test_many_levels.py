"""Pairing a background or training table with X costs time linear in their levels."""

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.data import Dataset, encode_with, unknown_levels


def _old_unknown_levels(values, categories):
    # the rule as it was: one set of the categories built per distinct value (quadratic)
    present = pd.unique(pd.Series(values).dropna().astype(object))
    return [v for v in present if v not in set(categories)]


def test_unknown_levels_equal_the_old_rule():
    rng = np.random.default_rng(0)
    categories = [f"l{i}" for i in range(300)]
    values = pd.Series(rng.choice(categories + ["new1", "new2", None, "new3"], 2000),
                       dtype=object)
    got = unknown_levels(values, categories)
    assert got == _old_unknown_levels(values, categories)
    assert sorted(got) == ["new1", "new2", "new3"]
    assert unknown_levels(values[values.isin(categories)], categories) == []


@pytest.mark.parametrize("kind", ["category", "text"])
def test_pairing_ten_thousand_levels_encodes_as_one_table(kind):
    n_levels = 10_000
    rng = np.random.default_rng(1)
    names = np.array([f"l{i}" for i in range(n_levels)], dtype=object)
    X = pd.DataFrame({"a": rng.normal(size=n_levels), "c": names})
    if kind == "category":
        X["c"] = pd.Categorical(names)
    rows = X.iloc[[5, 17, 9_999]]
    paired, n = encode_with(rows, X)
    assert n == 3
    # the same schema and codes as encoding the two tables stacked as one
    ref = Dataset.from_data(pd.concat([rows, X.astype(rows.dtypes.to_dict())],
                                      ignore_index=True))
    assert np.array_equal(paired.values, ref.values)
    assert list(paired.columns[1].levels) == list(ref.columns[1].levels)


def test_a_level_outside_the_categories_is_still_named():
    X = pd.DataFrame({"c": pd.Categorical(["a", "b", "a"]), "x": [1.0, 2.0, 3.0]})
    other = pd.DataFrame({"c": ["a", "zz"], "x": [0.0, 1.0]})
    with pytest.raises(ml.InvalidParameterError, match=r"\['zz'\]"):
        encode_with(X, other)
