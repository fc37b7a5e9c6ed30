"""The fuzz runner's own bookkeeping: the clean inputs warm the kernels untimed, and a hang
says how long the input ran and under which watchdog limit (a cold compile under load
reads as 30-40 s under a 30 s limit, a true hang as the limit whatever the load).

Two skops files, so that the test stays fast: the warm-up runs the clean one only, and a
watchdog of a millisecond calls the second input of a format (a slow one) a hang."""

import sys
from pathlib import Path

import pytest

pytest.importorskip("skops")
sys.path.insert(0, str(Path(__file__).parent))

import model_fuzz  # noqa: E402


def _seeds(folder):
    """A clean skops tree, and a forest named as a mutation whose load, checks and predict
    take far more than the millisecond watchdog, so that the child cannot answer it before
    the runner waits (no other format: fast)."""
    import skops.io as sio
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.tree import DecisionTreeRegressor

    X, y = model_fuzz._frame()
    X.to_csv(folder / "numeric.csv", index=False)
    sio.dump(DecisionTreeRegressor(max_depth=3).fit(X, y), folder / "tree.skops")
    sio.dump(RandomForestRegressor(n_estimators=200, random_state=0).fit(X, y),
             folder / "m00000_forest.skops")
    clean = {"path": str(folder / "tree.skops"), "format": "skops", "data": "numeric.csv",
             "seed": "tree.skops"}
    return clean, dict(clean, path=str(folder / "m00000_forest.skops"), seed="forest.skops")


def test_the_warm_up_runs_the_clean_inputs_and_a_hang_says_its_time(tmp_path):
    clean, copy = _seeds(tmp_path)
    warmed = model_fuzz.warm_kernels([clean, copy], tmp_path)
    assert warmed["outcomes"] == {"tree.skops": "loaded"}  # the clean input only
    assert warmed["seconds"] > 0
    # the first input of a format has the long limit; the second a millisecond
    result = model_fuzz.run_inputs([clean, copy], tmp_path, timeout=0.001,
                                   first_timeout=300.0)
    assert result["counts"] == {"loaded": 1, "hang": 1}, result
    assert list(result["hangs"]) == [copy["path"]]
    hung = result["hangs"][copy["path"]]
    assert hung["limit"] == 0.001 and hung["seconds"] >= hung["limit"]
