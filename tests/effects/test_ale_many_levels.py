"""Categorical ALE on many unordered levels: refused with its cost and the alternatives."""

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.effects import _categorical


def _levels_frame(n_levels, *, ordered=False, repeat=2, seed=0):
    rng = np.random.default_rng(seed)
    n = n_levels * repeat
    names = [f"l{i:05d}" for i in range(n_levels)]
    codes = np.arange(n) % n_levels
    return pd.DataFrame({"a": rng.normal(size=n),
                         "c": pd.Categorical.from_codes(codes, categories=names,
                                                        ordered=ordered)})


def _f(A):
    return A["a"].to_numpy() + 1e-3 * A["c"].cat.codes.to_numpy()


def test_categorical_ale_on_too_many_levels_names_the_cost_and_the_alternatives():
    X = _levels_frame(_categorical.MAX_LEVELS + 1)
    with pytest.raises(ml.InvalidParameterError) as info:
        ml.ale(_f, X, ["c"])
    text = str(info.value)
    assert f"{_categorical.MAX_LEVELS + 1:,} unordered levels" in text
    gigabytes = 7 * 8 * (_categorical.MAX_LEVELS + 1) ** 2 / 1e9
    assert f"{gigabytes:,.1f} GB" in text
    assert "ml.pdp" in text and "ordered=True" in text


def test_the_level_cap_is_where_it_says(monkeypatch):
    monkeypatch.setattr(_categorical, "MAX_LEVELS", 5)
    assert ml.ale(_f, _levels_frame(5), ["c"])["c"].grid is not None
    with pytest.raises(ml.InvalidParameterError, match="6 unordered levels"):
        ml.ale(_f, _levels_frame(6), ["c"])


def test_ordered_levels_beyond_the_cap_follow_their_own_order():
    # no distances are needed: each step between neighbouring levels is the model's 1e-3
    n_levels = _categorical.MAX_LEVELS + 500
    X = _levels_frame(n_levels, ordered=True)
    effect = ml.ale(_f, X, ["c"])["c"]
    assert list(effect.grid) == list(X["c"].cat.categories)
    steps = np.diff(effect.values)
    assert np.allclose(steps, 1e-3)
