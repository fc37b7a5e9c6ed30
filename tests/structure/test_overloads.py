"""A type checker sees what shapley and lime return: a DistributedAttributions for
Dask data, an Attributions for everything else (their ``@overload`` signatures).

A small user program is checked by mypy (its API, with the project's configuration,
as tests/structure/test_typing.py runs it) with ``assert_type`` on each call: mypy
reports an error when the type it infers differs.  The program also holds one
deliberately wrong assertion, and the test asks for exactly that error, so it fails
when the overloads are removed or reordered (the Dask lines then infer Attributions)
and also when the check itself went blind (an argument read as ``Any`` fails every
assertion, the right ones included).
"""

from __future__ import annotations

import importlib.util
import os
import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]  # mypy: up to a minute cold

PROGRAM = textwrap.dedent("""\
    import dask.array as da
    import dask.dataframe as dd
    import numpy as np
    import pandas as pd
    from typing_extensions import assert_type

    import modellens as ml
    from modellens.typing import Predictor


    def check(model: Predictor, frame: pd.DataFrame, array: np.ndarray,
              lazy: dd.DataFrame, lazy_array: da.Array) -> None:
        assert_type(ml.shapley(model, frame), ml.Attributions)
        assert_type(ml.shapley(model, array), ml.Attributions)
        assert_type(ml.shapley(model, [[0.0, 1.0]]), ml.Attributions)
        assert_type(ml.shapley(model, lazy, background=frame), ml.DistributedAttributions)
        assert_type(ml.shapley(model, lazy_array), ml.DistributedAttributions)
        assert_type(ml.lime(model, frame, training_data=frame), ml.Attributions)
        assert_type(ml.lime(model, array, training_data=array), ml.Attributions)
        assert_type(ml.lime(model, lazy, training_data=frame), ml.DistributedAttributions)
        assert_type(ml.lime(model, lazy_array, training_data=array),
                    ml.DistributedAttributions)
        assert_type(ml.predict(model, frame), pd.Series | pd.DataFrame)  # several outputs: a frame
        assert_type(ml.predict(model, array), pd.Series | pd.DataFrame)
        # what users do with each: both read without an error
        ml.shapley(model, lazy).summary().plot_bar()
        ml.shapley(model, frame).plot.bar()
        assert_type(ml.shapley(model, lazy), ml.Attributions)  # WRONG on purpose
    """)


def _wrong_line():
    return next(i for i, line in enumerate(PROGRAM.splitlines(), 1) if "WRONG" in line)


def test_shapley_and_lime_return_types_follow_the_input(tmp_path, monkeypatch):
    if importlib.util.find_spec("mypy") is None:
        if os.environ.get("CI"):
            pytest.fail("mypy is not installed; CI installs it with the test extra "
                        "(pip install '.[test]').")
        pytest.skip("mypy is not installed (pip install '.[test]')")
    # without Dask its types are Any and the Dask lines could not say anything
    pytest.importorskip("dask.dataframe")
    from mypy import api

    program = tmp_path / "user_program.py"
    program.write_text(PROGRAM)
    # the project's configuration (mypy_path = "src", relative to the working
    # directory): this checkout's package is checked, never an installed copy
    monkeypatch.chdir(ROOT)
    stdout, stderr, _ = api.run(["--config-file", str(ROOT / "pyproject.toml"),
                                 "--no-color-output", "--no-error-summary", str(program)])
    report = (stdout + stderr).strip()
    errors = [line for line in report.splitlines() if ": error:" in line]
    lines = [int(m.group(1)) for m in (re.search(r":(\d+): error:", e) for e in errors) if m]
    assert lines == [_wrong_line()], \
        f"mypy should report only the deliberately wrong assertion:\n{report}"
    assert "DistributedAttributions" in errors[0] and "assert-type" in errors[0], report


def test_dask_like_is_what_the_functions_take_out_of_core():
    # the overload a type checker picks and the branch the function takes agree
    import numpy as np
    import pandas as pd

    from modellens.engine import is_dask_input
    from modellens.typing import DaskLike

    dd = pytest.importorskip("dask.dataframe")
    da = pytest.importorskip("dask.array")
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    lazy = dd.from_pandas(frame, npartitions=2)
    for X in [lazy, lazy["a"], da.from_array(frame.to_numpy(), chunks=1)]:
        assert isinstance(X, DaskLike) and is_dask_input(X), type(X)
    for X in [frame, frame["a"], frame.to_numpy(), [[1.0, 2.0]]]:
        assert not isinstance(X, DaskLike) and not is_dask_input(X), type(X)
