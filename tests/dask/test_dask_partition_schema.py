"""A partition with another schema is refused, not read as codes (issue 40).

Dask trusts every partition to have the table's dtypes when a frame is built
without verifying them (``from_delayed(..., verify_meta=False)``,
``map_partitions``).  A partition whose numeric column held text was encoded
as level codes, and the effect came back silently different.
"""

import numpy as np
import pandas as pd
import pytest

import modellens as ml

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")


def _part(seed, text=False):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"a": rng.normal(size=40), "b": rng.normal(size=40)})
    if text:
        frame["b"] = frame["b"].astype(str)
    return frame


def f(D):
    return np.asarray(D["a"] * 2 + D["b"], dtype=float)


def test_a_partition_whose_numeric_column_holds_text_is_refused():
    parts = [dask.delayed(_part)(1), dask.delayed(_part)(2, text=True)]
    X = dd.from_delayed(parts, meta=_part(0).iloc[:0], verify_meta=False)
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(ml.InvalidParameterError, match="column 'b' is categorical where "
                                                           "the table's first rows make it "
                                                           "numeric"):
            ml.pdp(f, X, ["a"], grid=3)
        # the same partitions with one schema give the in-memory answer
        same = dd.from_delayed([dask.delayed(_part)(1), dask.delayed(_part)(2)],
                               meta=_part(0).iloc[:0])
        whole = pd.concat([_part(1), _part(2)], ignore_index=True)
        np.testing.assert_allclose(ml.pdp(f, same, ["a"], grid=3)["a"].values,
                                   ml.pdp(f, whole, ["a"], grid=3)["a"].values)


def test_a_numeric_partition_under_a_text_first_partition_is_refused():
    """The first rows hold text, a later partition numbers: read with the first rows'
    levels its values would reach the model as other values (fuzz seed 1410)."""
    parts = [dask.delayed(_part)(2, text=True), dask.delayed(_part)(1)]
    X = dd.from_delayed(parts, meta=_part(0).iloc[:0], verify_meta=False)
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(ml.InvalidParameterError, match="column 'b' is float64 where the "
                                                           "table's first rows make it "
                                                           "(object|str)"):
            ml.pdp(f, X, ["a"], grid=3)
