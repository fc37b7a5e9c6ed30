"""Columns reach the model in their own dtypes; booleans, datetimes and integer labels read as a user expects."""

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens import InvalidParameterError


def _typed_frame(n=300, seed=4):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "f32": rng.normal(size=n).astype(np.float32),
        "F64": pd.array(rng.normal(size=n), dtype="Float64"),
        "I64": pd.array(rng.integers(0, 20, size=n), dtype="Int64"),
        "B": pd.array(rng.random(n) > 0.5, dtype="boolean"),
        "i8": rng.integers(0, 5, size=n).astype(np.int8),
    })
    frame.loc[3, "F64"] = pd.NA
    frame.loc[5, "I64"] = pd.NA
    return frame


@pytest.mark.filterwarnings("ignore:.*missing value:modellens.ModellensWarning")
def test_models_get_every_column_in_its_own_dtype():
    frame = _typed_frame()
    expected = dict(frame.dtypes)
    seen = []

    def model(D):
        seen.append(dict(D.dtypes))
        return (D["f32"].to_numpy(np.float64) + D["F64"].fillna(0).to_numpy(np.float64)
                + D["I64"].fillna(0).to_numpy(np.float64) + D["B"].fillna(False).to_numpy(float)
                + D["i8"].to_numpy(np.float64))

    ml.mplot(model, frame, grid=4)
    ml.pdp(model, frame, features=["f32", "I64", "B", "i8"], grid=5)
    ml.ale(model, frame, features=["f32", "F64", "I64", "i8"], bins=4)
    ml.shapley(model, frame.iloc[:3], background=frame.iloc[10:30])
    assert seen
    for dtypes in seen:
        for name in ("f32", "F64", "B"):
            assert dtypes[name] == expected[name], (name, dtypes[name])
        # integer columns keep their dtype unless a grid value between integers reaches them,
        # then they get the matching float dtype (documented)
        assert dtypes["I64"] in (expected["I64"], pd.Float64Dtype())
        assert dtypes["i8"] in (expected["i8"], np.dtype(np.float64))
    assert any(d["I64"] == expected["I64"] for d in seen)


def test_a_float32_torch_model_takes_its_float32_frame_in_every_method():
    torch = pytest.importorskip("torch")

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 1)

        def forward(self, x):
            return self.lin(x)[:, 0]

    net = Net().eval()

    def on_frame(D):
        assert all(D.dtypes == np.float32), D.dtypes
        with torch.no_grad():
            return net(torch.from_numpy(D.to_numpy())).numpy()

    frame = pd.DataFrame(np.random.default_rng(5).normal(size=(100, 2)).astype(np.float32),
                         columns=["a", "b"])
    ml.mplot(on_frame, frame, grid=4)
    ml.pdp(on_frame, frame, grid=4)
    ml.ale(on_frame, frame, bins=4)


def test_datetime_columns_are_refused_with_a_hint():
    frame = pd.DataFrame({"when": pd.date_range("2024-01-01", periods=50, freq="D"),
                          "x": np.arange(50.0)})
    with pytest.raises(InvalidParameterError, match=r"dates.*\.dt\.days"):
        ml.ale(lambda D: D["x"].to_numpy(), frame)


def test_booleans_read_as_false_and_true():
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"flag": rng.random(200) > 0.5, "x": rng.normal(size=200)})
    model = lambda D: 2.0 * D["flag"].to_numpy() + D["x"].to_numpy()  # noqa: E731
    pd_ = ml.pdp(model, frame, grid=5)
    assert pd_["flag"].grid.tolist() == [False, True]
    assert pd_["flag"].to_frame()["grid"].tolist() == [False, True]
    ale = ml.ale(model, frame, features="flag")["flag"]
    assert ale.grid.tolist() == [False, True]
    assert np.diff(ale.values)[0] == pytest.approx(2.0)
    attr = ml.shapley(model, frame.iloc[:3], background=frame)
    assert [type(v) for v in attr.data[:, 0]] == [bool] * 3
    assert attr.to_frame()["feature_value"].iloc[0] in (True, False)


def test_feature_lookup_is_strict_on_integer_labels_and_effects_agree():
    frame = pd.DataFrame(np.random.default_rng(12).normal(size=(50, 3)), columns=[1, 2, 3])
    with pytest.raises(InvalidParameterError, match="no column is labelled 0"):
        ml.pdp(lambda D: D[1].to_numpy(), frame, features=0)
    both = pd.DataFrame(np.random.default_rng(12).normal(size=(50, 3)), columns=[0, 1, 2])
    eff = ml.pdp(lambda D: D[1].to_numpy(), both, features=[1, 2], grid=3)
    attr = ml.shapley(lambda D: D[1].to_numpy(), both.iloc[:2], background=both)
    assert eff[1].feature == "1" == attr[:, 1].feature_names[0]
    with pytest.raises(KeyError):
        eff[["1", "2"]]  # not a pair that was asked for
    pair = ml.pdp(lambda D: D[1].to_numpy(), both, features=[(1, 2)], grid=3)
    assert pair[["1", "2"]] is pair[("1", "2")]
