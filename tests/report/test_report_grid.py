"""The report's PD grid is PD's own (issue 46: the report's own copy of the grid rule is gone).

The data section judges "PD points off the data" at the grid PD evaluates; that grid comes
from PD's design step, so it is ``ml.pdp``'s grid for the same column and ``grid=``.
"""

import ast
import pathlib
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens.data import Dataset
from modellens.report._inputs import grid_values

REPORT = pathlib.Path(ml.__file__).parent / "report"


def _frame():
    rng = np.random.default_rng(3)
    n = 80
    return pd.DataFrame({
        "many": rng.normal(size=n),                       # G evenly spaced points
        "few": rng.choice([0.0, 2.5, 7.0], n),            # its distinct values
        "seven": rng.choice(np.arange(7.0) ** 2, n),      # more values than points
        "city": pd.Categorical(rng.choice(["Oslo", "Lima", "Rome", "Kyiv"], n)),
        "gap": np.where(np.arange(n) % 4 == 0, np.nan, rng.uniform(size=n)),
    })


def _f(D):
    return D["many"].to_numpy() + D["few"].to_numpy() + D["seven"].to_numpy()


@pytest.mark.parametrize("name, spec", [("many", 5), ("few", 5), ("seven", 5), ("seven", 9),
                                        ("city", 5), ("city", ["Rome", "Oslo"]),
                                        ("gap", 4), ("many", [-1.0, 0.0, 2.0])])
def test_the_reports_pd_grid_is_pdps_grid(name, spec):
    X = _frame()
    ds = Dataset.from_data(X)
    j = ds.index_of(name)
    inputs = SimpleNamespace(sample_dataset=ds, grids={j: spec} if not isinstance(spec, int)
                             else {}, grid=spec if isinstance(spec, int) else 20)
    ours = grid_values(inputs, j)
    effect = ml.pdp(_f, X, name, grid=spec, progress=False)[name]
    np.testing.assert_array_equal(ds.labels(j, ours), effect.grid)


def test_the_report_has_no_grid_rule_of_its_own():
    """No evenly spaced points or distinct-value rule of its own in ``report/_inputs.py``."""
    tree = ast.parse((REPORT / "_inputs.py").read_text())
    (func,) = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
               and f.name == "grid_values"]
    calls = {node.func.attr for node in ast.walk(tree) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute)}
    used = {node.func.attr for node in ast.walk(func) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)}
    assert "linspace" not in calls and not used & {"unique", "n_unique"}
