"""A warm numba cache starts no warm-up child, and a failed command stops the one it started.

Every ``modellens report`` started a child process that imported the library (about
2 s of CPU time) and ran the tiny methods even when numba's cache already held every
kernel, and the report waited for it; a command refused after the model was read left
that child running.  The stamp tests point ``NUMBA_CACHE_DIR`` at a fresh folder, which
is where the stamps are looked for (numba read its own setting at import).
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeRegressor

import modellens as ml
from modellens import _warm


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    return tmp_path


def _stamps(folder):
    return sorted(p.name.split("-")[2] for p in folder.glob("modellens-warm-*"))


def test_a_method_warmed_for_this_code_starts_no_child(cache, kernels_without_stamps):
    # the kernels are in the cache, not the stamps: the child loads them (compiling them
    # cost the child 18 s of CPU instead of 5, and is not what the stamps are about)
    kernels_without_stamps(cache, ["effects"])
    warming = ml.warm_up(["effects"], background=True)
    assert isinstance(warming, ml.Warming)  # nothing stamped: a child warms
    assert warming.wait(timeout=600)
    assert _stamps(cache) == ["effects"]  # written by the child once its run ended
    assert ml.warm_up(["effects"], background=True) is None
    assert ml.warm_up(["effects"], model=lambda A: A[:, 0], background=True) is None
    partly = ml.warm_up(["effects", "pdp"], background=True)
    try:
        assert partly.methods == ["pdp"]  # only what is not stamped
    finally:
        partly.stop()
    # the foreground call still runs what it is asked (and returns its seconds)
    assert list(ml.warm_up(["effects"])) == ["effects"]


def test_a_stamp_of_other_code_is_not_read_and_is_replaced(cache):
    stale = cache / "modellens-warm-effects-0123456789abcdef"
    stale.touch()
    assert _warm._stamp("effects") != stale  # the key is the code's, not any stamp's
    warming = ml.warm_up(["effects"], background=True)
    assert isinstance(warming, ml.Warming)
    warming.stop()
    ml.warm_up(["effects"])
    assert not stale.exists() and _warm._stamp("effects").exists()


def test_a_method_that_fails_is_not_stamped(cache, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("planted")

    monkeypatch.setattr("modellens.effects.ale.ale", broken)
    with pytest.raises(RuntimeError, match="planted"):
        ml.warm_up(["effects"])
    assert _stamps(cache) == []
    assert isinstance(ml.warm_up(["effects"], background=True), ml.Warming)


def test_an_unwritable_cache_folder_keeps_no_stamp_and_raises_nothing(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(blocked / "cache"))
    assert list(ml.warm_up(["effects"])) == ["effects"]
    assert not (blocked / "cache").exists()


def test_a_refused_report_stops_the_child_it_started(tmp_path, monkeypatch):
    from skops.io import dump

    from modellens.cli import main

    stopped = []

    class Handle:
        methods = ["effects"]

        def stop(self):
            stopped.append(True)

    monkeypatch.setattr(ml, "warm_up", lambda *a, **k: Handle())
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 2)), columns=["a", "b"])
    dump(DecisionTreeRegressor(max_depth=2).fit(X, X["a"]), tmp_path / "m.skops")
    X.to_csv(tmp_path / "d.csv", index=False)
    assert main(["report", "--model", str(tmp_path / "m.skops"), "--data",
                 str(tmp_path / "d.csv"), "--features", "nope",
                 "--out", str(tmp_path / "r.html")]) == 1
    assert stopped == [True]
    assert not (tmp_path / "r.html").exists()
