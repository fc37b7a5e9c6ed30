"""Execution options that lead somewhere, progress bars that state the planned rows, row counters under threads."""

import numpy as np
import pytest

import modellens as ml
from modellens import InvalidParameterError, ModellensWarning


def test_progress_bar_states_the_planned_rows(capsys):
    X = np.random.default_rng(0).normal(size=(200, 3))
    ml.pdp(lambda A: A[:, 0], X, grid=5, progress=True)
    err = capsys.readouterr().err
    assert "pdp: 3,000 model rows" in err


def test_option_errors_lead_somewhere():
    X = np.random.default_rng(0).normal(size=(100, 3))
    f = lambda A: A[:, 0]  # noqa: E731
    with pytest.warns(ModellensWarning, match=r"for one 2-D effect of the pair pass a list"):
        out = ml.pdp(f, X, features=("x0", "x1"), grid=3)
    assert list(out) == ["x0", "x1"]
    with pytest.raises(InvalidParameterError, match="window= sets the neighbourhood"):
        ml.mplot(f, X, grid=10, window=0.2)
    with pytest.raises(InvalidParameterError, match="sample must be a positive count"):
        ml.pdp(f, X, sample=True)
    with pytest.raises(InvalidParameterError, match="chunk_size must be a positive number"):
        ml.ale(f, X, chunk_size="x")
    with pytest.raises(InvalidParameterError, match="got 2.5"):
        ml.ale(f, X, chunk_size=2.5)


def test_progress_bar_is_sparse_when_not_on_a_terminal(capsys):
    X = np.random.default_rng(9).normal(size=(3000, 2))
    ml.pdp(lambda A: A[:, 0], X, features="x0", grid=10, chunk_size=100, progress=True)
    err = capsys.readouterr().err
    # 300 chunks; a log file gets the opening and closing states, not one line per chunk
    assert "pdp: 30,000 model rows" in err and err.count("\r") <= 4


def test_row_counters_stay_right_with_threads():
    X = np.random.default_rng(10).normal(size=(60, 4))
    res = ml.shapley(lambda A: A.sum(axis=1), X[:20], background=X[20:], n_jobs=2,
                     chunk_size=64)
    # the empty coalition (40 rows), the explained rows (20) and 14 proper coalitions each
    assert res.diagnostics["n_model_rows"] == 40 + 20 + 20 * 14 * 40
