"""The skops checks made cheaper (issue 40, their cost), and the holes a cheaper walk closed.

scikit-learn trees are checked by one compiled pass over each tree's own node
records in scikit-learn's order (each node after its parent), the general checks
deciding where that pass does not pass; the schema walk of the ids also refuses a
``CachedNode``, compares every dict skops' memo would hit (an id read as a float, a
dict without a loader), and tells whether a booster walk is needed.
"""

import io
import json
import zipfile

import numpy as np
import pytest

from modellens.files import FileError, load_model
from modellens.trees import UnsafeModelError, check_sklearn_objects
from modellens.trees._checks import MAX_TREE_DEPTH, check_index, check_split_values, check_trees
from modellens.trees._checks_sklearn import _in_order

sio = pytest.importorskip("skops.io")


def _data(n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X[:, 0] - 2 * X[:, 1] + np.sin(3 * X[:, 2]) + rng.normal(scale=0.1, size=n)


def _fields(tree):
    return (tree.children_left, tree.children_right, tree.feature, tree.threshold)


def _general(left, right, feature, threshold, limit):
    """The general checks of one tree (the oracle): its depth, or None where they refuse."""
    try:
        depth = check_trees(left, right, [len(left)])
        inner = np.asarray(left) >= 0
        check_index(feature, limit, inner, "split feature")
        check_split_values(threshold, inner)
    except UnsafeModelError:
        return None
    return int(depth[0])


def _permuted(tree, rng):
    """A scikit-learn ``Tree`` of the same splits with its nodes but the root in another
    order (children before their parents): a valid tree scikit-learn never writes."""
    state = tree.__getstate__()
    nodes = state["nodes"]
    n = len(nodes)
    order = np.concatenate([[0], 1 + rng.permutation(n - 1)])  # new position -> old node
    where = np.empty(n, np.int64)
    where[order] = np.arange(n)  # old node -> new position
    out = nodes[order].copy()
    for side in ("left_child", "right_child"):
        inner = out[side] >= 0
        out[side][inner] = where[out[side][inner]]
    state = dict(state, nodes=out, values=state["values"][order])
    copy = type(tree)(tree.n_features, np.asarray(tree.n_classes), tree.n_outputs)
    copy.__setstate__(state)
    return copy


def _mutated(left, right, feature, threshold, rng):
    left, right, feature, threshold = (np.array(a) for a in (left, right, feature, threshold))
    n = len(left)
    i = int(rng.integers(0, n))
    kind = int(rng.integers(0, 8))
    odd = int(rng.choice([-2, -1, 0, i, n - 1, n, n + 1, 2 ** 40]))
    if kind == 0:
        left[i] = odd
    elif kind == 1:
        right[i] = odd
    elif kind == 2:  # two nodes' children swapped (shared subtrees, cycles, detached nodes)
        j = int(rng.integers(0, n))
        left[i], left[j] = left[j], left[i]
    elif kind == 3:
        feature[i] = int(rng.choice([-1, 4, 2 ** 40, 3]))
    elif kind == 4:
        threshold[i] = np.nan
    elif kind == 5:  # a leaf made a split of two nodes (already children elsewhere)
        left[i], right[i] = int(rng.integers(0, n)), int(rng.integers(0, n))
    elif kind == 6:  # a split made a leaf: its subtree detached, no node a child twice
        left[i] = right[i] = -1
    else:
        left[i], right[i] = right[i], left[i]  # harmless: the other order of two children
    return left, right, feature, threshold


def test_the_compiled_pass_agrees_with_the_general_checks():
    # the oracle: the general checks.  The pass either gives their depth, or -1 where they
    # refuse or where a node comes before its parent (then they decide)
    from sklearn.tree import DecisionTreeRegressor

    X, y = _data()
    rng = np.random.default_rng(7)
    tree = DecisionTreeRegressor(max_depth=6, random_state=0).fit(X, y).tree_
    cases = [_fields(tree), _fields(_permuted(tree, rng))]
    cases += [_mutated(*cases[k % 2], rng) for k in range(600)]
    passed = refused = other_order = 0
    for left, right, feature, threshold in cases:
        want = _general(left, right, feature, threshold, 4)
        got = _in_order(left, right, feature, threshold, 4, MAX_TREE_DEPTH)
        inner = left >= 0
        in_order = bool(np.all((left[inner] > np.flatnonzero(inner)) &
                               (right[inner] > np.flatnonzero(inner))))
        if got >= 0:
            assert want == got
            passed += 1
        elif want is None:
            refused += 1
        else:
            assert not in_order  # a valid tree in scikit-learn's order always passes
            other_order += 1
    assert passed > 10 and refused > 100 and other_order > 10


def test_the_compiled_pass_refuses_a_chain_deeper_than_the_limit():
    m = MAX_TREE_DEPTH + 1  # split j at 2j, its left child a leaf, its right the next split
    n = 2 * m + 1
    left, right = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
    left[0:2 * m:2], right[0:2 * m:2] = np.arange(1, 2 * m, 2), np.arange(2, 2 * m + 1, 2)
    feature, threshold = np.zeros(n, np.int64), np.zeros(n)
    assert _in_order(left, right, feature, threshold, 1, MAX_TREE_DEPTH) == -1
    assert _in_order(left[:-2], right[:-2], feature[:-2], threshold[:-2], 1,
                     MAX_TREE_DEPTH) == -1  # a split's children past the end
    left[2 * m - 2] = right[2 * m - 2] = -1  # one split less: exactly the limit
    assert _in_order(left[:-2], right[:-2], feature[:-2], threshold[:-2], 1,
                     MAX_TREE_DEPTH) == MAX_TREE_DEPTH


def test_a_forest_stored_in_another_node_order_loads_and_a_fault_in_it_is_named(tmp_path):
    from sklearn.ensemble import RandomForestRegressor

    X, y = _data()
    forest = RandomForestRegressor(n_estimators=4, max_depth=5, random_state=0).fit(X, y)
    want = forest.predict(X)
    rng = np.random.default_rng(3)
    forest.estimators_[2].tree_ = _permuted(forest.estimators_[2].tree_, rng)
    np.testing.assert_array_equal(forest.predict(X), want)  # the same model
    sio.dump(forest, tmp_path / "forest.skops")
    np.testing.assert_array_equal(load_model(tmp_path / "forest.skops").predict(X), want)
    tree = forest.estimators_[2].tree_
    state = tree.__getstate__()
    nodes = state["nodes"].copy()
    nodes["feature"][0] = 99  # the root: a split
    tree.__setstate__(dict(state, nodes=nodes))
    with pytest.raises(UnsafeModelError, match=r"\[2\].*split feature 99 is outside"):
        check_sklearn_objects(forest)
    sio.dump(forest, tmp_path / "bad.skops")
    with pytest.raises(FileError, match=r"\[2\].*split feature 99 is outside"):
        load_model(tmp_path / "bad.skops")


def test_a_tree_deeper_than_its_max_depth_is_refused_by_the_compiled_pass():
    # the depth the compiled pass finds is the one checked against the tree's max_depth
    from sklearn.tree import DecisionTreeRegressor

    X, y = _data()
    model = DecisionTreeRegressor(max_depth=5, random_state=0).fit(X, y)
    check_sklearn_objects(model)
    state = model.tree_.__getstate__()
    model.tree_.__setstate__(dict(state, max_depth=4))
    with pytest.raises(UnsafeModelError, match="5 deep but says max_depth=4"):
        check_sklearn_objects(model)


# ------------------------------------------------------------------ the schema walk
def _rewrite(data: bytes, change) -> bytes:
    """A skops file with ``change(schema)`` applied."""
    src = zipfile.ZipFile(io.BytesIO(data))
    schema = json.loads(src.read("schema.json"))
    change(schema)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            dst.writestr(name, json.dumps(schema) if name == "schema.json" else src.read(name))
    return out.getvalue()


def _params(schema):
    """The parameter nodes of a skops file's estimator (a DecisionTreeRegressor)."""
    return schema["content"]["content"]


def _tree_file():
    from sklearn.tree import DecisionTreeRegressor

    X, y = _data()
    return sio.dumps(DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)), X


@pytest.mark.parametrize("unknown", [False, True])
def test_a_cached_node_is_refused_naming_it(tmp_path, unknown):
    data, _ = _tree_file()

    def cache(schema):
        params = _params(schema)
        earlier = params["min_samples_split"]
        params["min_samples_leaf"] = {
            "__class__": "int", "__module__": "builtins", "__loader__": "CachedNode",
            "__id__": 12345 if unknown else earlier["__id__"]}

    path = tmp_path / "cached.skops"
    path.write_bytes(_rewrite(data, cache))
    with pytest.raises(FileError, match=r"holds a skops CachedNode \(id \d+, said to be "
                                        r"builtins\.int\)"):
        load_model(path)


@pytest.mark.parametrize("shape", ["float id", "no loader"])
def test_a_node_skops_would_take_from_its_memo_is_compared_too(tmp_path, shape):
    # skops' memo reads 5.0 as 5, and reads nothing else of a dict whose id it knows:
    # such a node at min_samples_leaf becomes the object of min_samples_split
    data, _ = _tree_file()

    def substitute(schema):
        params = _params(schema)
        assert params["min_samples_leaf"]["content"] == "1"
        known = params["min_samples_split"]["__id__"]
        if shape == "float id":
            params["min_samples_leaf"]["__id__"] = float(known)
        else:
            params["min_samples_leaf"] = {"__id__": known}

    path = tmp_path / "substituted.skops"
    path.write_bytes(_rewrite(data, substitute))
    fooled = sio.load(path, trusted=sio.get_untrusted_types(file=path))
    assert fooled.min_samples_leaf == fooled.min_samples_split == 2  # the hazard
    with pytest.raises(FileError, match="two objects of one id"):
        load_model(path)


@pytest.mark.parametrize("value", [1.0, True, "1", 2])
def test_nested_nodes_of_one_id_that_differ_in_a_value_or_its_type_are_refused(tmp_path,
                                                                               value):
    # nested nodes are compared by digest, which tells 1, 1.0, True and "1" apart
    from sklearn.ensemble import RandomForestRegressor

    X, y = _data()
    data = sio.dumps(RandomForestRegressor(n_estimators=2, max_depth=2, random_state=0)
                     .fit(X, y))

    def extra(second):
        def change(schema):
            params = _params(schema)
            # estimator and estimator_ are one object, written twice: two nested nodes
            first, last = params["estimator"], params["estimator_"]
            assert first["__id__"] == last["__id__"] and isinstance(first["content"], dict)
            first["extra"], last["extra"] = 1, second  # a key skops does not read
        return change

    path = tmp_path / "retyped.skops"
    path.write_bytes(_rewrite(data, extra(value)))
    with pytest.raises(FileError, match="two objects of one id"):
        load_model(path)
    path.write_bytes(_rewrite(data, extra(1)))
    load_model(path)  # the same values: loads


def test_the_booster_walk_runs_only_where_a_node_is_a_booster(tmp_path, monkeypatch):
    from modellens.files import _models

    calls = []
    real = _models._check_skops_boosters
    monkeypatch.setattr(_models, "_check_skops_boosters",
                        lambda archive, schema: calls.append(1) or real(archive, schema))
    data, X = _tree_file()
    path = tmp_path / "tree.skops"
    path.write_bytes(data)
    load_model(path)
    assert calls == []
    lgb = pytest.importorskip("lightgbm")
    model = lgb.LGBMRegressor(n_estimators=3, num_leaves=4, verbose=-1).fit(X, X[:, 0])
    sio.dump(model, tmp_path / "lgb.skops")
    load_model(tmp_path / "lgb.skops")
    assert calls == [1]
