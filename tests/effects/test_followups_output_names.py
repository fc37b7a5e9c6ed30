"""One rule for a function's output names: its DataFrame's columns, whatever target= asks."""

import numpy as np
import pandas as pd
import pytest

import modellens as ml


def _named(Z):
    return pd.DataFrame({"p": Z[:, 0] * Z[:, 1], "q": 2 * Z[:, 2] + Z[:, 0]})


def _unnamed(Z):
    return np.column_stack([Z[:, 0] * Z[:, 1], 2 * Z[:, 2] + Z[:, 0]])


@pytest.mark.parametrize("method, kw", [("pdp", {}), ("ale", dict(bins=5)),
                                        ("dale", dict(bins=5)), ("mplot", {})])
@pytest.mark.parametrize("target, name", [(1, "q"), (0, "p"), (-1, "q")])
def test_target_one_column_is_named_by_the_column(method, kw, target, name):
    X = np.random.default_rng(0).normal(size=(150, 3))
    one = getattr(ml, method)(_named, X, ["x0"], target=target, **kw)
    listed = getattr(ml, method)(_named, X, ["x0"], target=[target], **kw)
    every = getattr(ml, method)(_named, X, ["x0"], **kw)
    assert one["x0"].output == listed["x0"].output == every.for_output(name)["x0"].output \
        == name
    # only the name: the numbers are those of the unnamed function's column
    plain = getattr(ml, method)(_unnamed, X, ["x0"], target=target, **kw)
    assert plain["x0"].output == f"f(x)[{target}]"
    np.testing.assert_array_equal(one["x0"].values, plain["x0"].values)


def test_interactions_of_one_column_are_named_by_the_column():
    X = np.random.default_rng(1).normal(size=(80, 3))
    got = ml.interactions(_named, X, sample=30, random_state=0, target=1)
    plain = ml.interactions(_unnamed, X, sample=30, random_state=0, target=1)
    assert got.output == "q" and plain.output == "f(x)[1]"
    np.testing.assert_array_equal(got.overall.to_numpy(), plain.overall.to_numpy())


def test_a_function_asked_one_column_is_asked_each_row_once():
    # one row asked when the model is wrapped names the column (the door's probe); then
    # each planned row is asked once, under that name
    X = np.random.default_rng(2).normal(size=(60, 3))
    asked = []

    def counted(Z):
        asked.append(len(Z))
        return _named(Z)

    for n_jobs in (None, 2):
        asked.clear()
        effects = ml.pdp(counted, X, ["x0", "x1"], grid=4, target=1, n_jobs=n_jobs,
                         chunk_size=100)
        assert effects.outputs is None and effects["x0"].output == "q"
        assert asked[0] == 1 and sum(asked) == 1 + 2 * 4 * 60
        plain = ml.pdp(_unnamed, X, ["x0", "x1"], grid=4, target=1, n_jobs=n_jobs,
                       chunk_size=100)
        for feature in ("x0", "x1"):
            np.testing.assert_array_equal(effects[feature].values, plain[feature].values)
