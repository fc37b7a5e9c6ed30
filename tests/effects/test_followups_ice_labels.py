"""ICE curves of DataFrame rows name them by X's index: to_frame(ice=True) joins back on X."""

import json

import numpy as np
import pandas as pd
import pytest

import modellens as ml

BETA = np.array([1.0, -2.0, 0.5])


def _linear(D):
    return np.asarray(D, dtype=float) @ BETA


@pytest.mark.parametrize("index", [[f"id{i}" for i in range(50)], np.arange(100, 150)])
@pytest.mark.parametrize("sample", [None, 6])
def test_ice_rows_are_labelled_by_x_index(index, sample):
    X = pd.DataFrame(np.random.default_rng(1).normal(size=(50, 3)), columns=["a", "b", "c"],
                     index=index)
    effect = ml.pdp(_linear, X, ["a"], grid=4, ice=True, sample=sample, random_state=0)["a"]
    frame = effect.to_frame(ice=True)
    curves = frame[frame["ice_row"].notna()]
    assert len(curves) == 4 * (50 if sample is None else sample)
    # each curve's value is f at its row with a set to the grid value: a wrong label fails
    rows = X.loc[curves["ice_row"].to_numpy()].to_numpy()
    expected = curves["grid"].to_numpy() * BETA[0] + rows[:, 1:] @ BETA[1:]
    np.testing.assert_allclose(curves["value"].to_numpy(), expected, rtol=0, atol=1e-12)
    back = ml.Effect.from_dict(json.loads(json.dumps(effect.to_dict())))
    assert back.to_frame(ice=True)["ice_row"].tolist() == frame["ice_row"].tolist()


def test_positions_where_the_index_is_the_default():
    X = np.random.default_rng(2).normal(size=(30, 3))
    for given in (X, pd.DataFrame(X, columns=["a", "b", "c"])):
        effect = ml.pdp(_linear, given, [0], grid=3, ice=True)
        first = next(iter(effect.values()))
        assert first.ice_labels is None
        assert "ice_labels" not in first.to_dict()["fields"]
        rows = first.to_frame(ice=True)["ice_row"]
        assert str(rows.dtype) == "Int64" and rows.dropna().unique().tolist() == list(range(30))


def test_every_output_keeps_the_labels():
    X = pd.DataFrame(np.random.default_rng(3).normal(size=(20, 3)), columns=["a", "b", "c"],
                     index=[f"id{i}" for i in range(20)])
    effects = ml.pdp(lambda D: np.column_stack([_linear(D), -_linear(D)]), X, ["a"], grid=3,
                     ice=True, sample=5, random_state=1)
    for c in range(2):
        one = effects.for_output(c)["a"]
        assert list(one.ice_labels) == list(X.index[one.ice_rows])
