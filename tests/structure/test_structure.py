"""The structure every method shares: execution options, result types, lookup rule, imports."""

import doctest
import json
import pathlib
import warnings

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens import InvalidParameterError, ModellensWarning
from modellens._config import resolve_options
from modellens.engine import _tuner

from import_walk import MODULES, imported_modules, module_name

SRC = pathlib.Path(ml.__file__).parent


def f3(A):
    return np.sin(A[:, 0]) * A[:, 1] + A[:, 2] ** 2


# ------------------------------------------------------------------ ml.config
def test_config_nests_and_restores():
    assert ml.get_config() == {"chunk_size": None, "n_jobs": 1, "progress": None, "client": None}
    with ml.config(chunk_size=4096, progress=False):
        assert ml.get_config()["chunk_size"] == 4096
        with ml.config(chunk_size=2048, n_jobs=2):
            assert ml.get_config() == {"chunk_size": 2048, "n_jobs": 2, "progress": False,
                                       "client": None}
        assert ml.get_config() == {"chunk_size": 4096, "n_jobs": 1, "progress": False,
                                   "client": None}
    assert ml.get_config()["chunk_size"] is None
    with pytest.raises(RuntimeError):
        with ml.config(n_jobs=2):
            raise RuntimeError("boom")
    assert ml.get_config()["n_jobs"] == 1  # restored after an error too


def test_config_reaches_the_engine_and_a_keyword_wins():
    sizes = []

    def model(A):
        sizes.append(len(A))
        return A[:, 0]

    X = np.random.default_rng(0).normal(size=(500, 2))
    with ml.config(chunk_size=700):
        ml.pdp(model, X, features="x0", grid=4)
        assert sizes == [1, 700, 700, 600]  # (the first: the row that tells the outputs)
        sizes.clear()
        ml.pdp(model, X, features="x0", grid=4, chunk_size=1000)  # the keyword wins
        assert sizes == [1, 1000, 1000]
    assert resolve_options(n_jobs=3).n_jobs == 3
    with ml.config(n_jobs=2):
        assert resolve_options().n_jobs == 2 and resolve_options(n_jobs=1).n_jobs == 1


@pytest.mark.parametrize("bad", [{"chunk_size": "x"}, {"chunk_size": 2.5}, {"chunk_size": 0},
                                 {"n_jobs": 0}, {"n_jobs": 1.5}, {"progress": "yes"}])
def test_config_refuses_bad_values(bad):
    with pytest.raises(InvalidParameterError, match=next(iter(bad))):
        with ml.config(**bad):
            pass
    X = np.zeros((10, 2))
    with pytest.raises(ValueError, match=next(iter(bad))):
        ml.pdp(lambda A: A[:, 0], X, **bad)


def test_invalid_parameter_error_is_value_and_type_error():
    assert issubclass(InvalidParameterError, ValueError)
    assert issubclass(InvalidParameterError, TypeError)
    with pytest.raises(TypeError):
        ml.ale(f3, np.zeros((20, 3)), max_discrete="3")
    assert issubclass(ModellensWarning, UserWarning)
    X = np.random.default_rng(1).normal(size=(200, 3))
    with pytest.warns(ModellensWarning, match="background"):
        ml.shapley(f3, X[:2], background=None)


# ------------------------------------------------------------------ tuner
def test_tuner_cap_for_torch_sized_rows(monkeypatch):
    sizer = _tuner.ChunkSizer(11, None, 10**7, max_rows=2**15)
    assert sizer.cap == 2**15 and sizer.size <= 2**15


# ---------------------------------------------------------- results: dicts
def _roundtrip(obj):
    return type(obj).from_dict(json.loads(json.dumps(obj.to_dict(), allow_nan=False)))


def _assert_same(a, b):
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype
        if a.dtype.kind == "f":
            assert np.array_equal(a, b, equal_nan=True)
        else:
            assert a.tolist() == b.tolist()
    else:
        assert a == b or (a is None and b is None)


def _effects_equal(a, b):
    assert list(a) == list(b)
    for k in a:
        x, y = a[k], b[k]
        assert type(x) is type(y)
        for name in ("feature", "method", "grid", "values", "ice", "std", "counts", "kind",
                     "feature_values", "centered", "output", "ice_rows", "empty_cells"):
            _assert_same(getattr(x, name), getattr(y, name))
        for name in ("band", "bins"):
            p, q = getattr(x, name), getattr(y, name)
            assert (p is None) == (q is None)
            if p is not None:
                for field in p.__dataclass_fields__:
                    _assert_same(getattr(p, field), getattr(q, field))


def _mixed_frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "num": rng.normal(size=n),
        "cat": pd.Categorical(rng.choice(["a", "b", "c"], size=n)),
        "txt": rng.choice(["u", "v"], size=n).astype(object),
        "flag": rng.random(n) > 0.5,
    })


def _frame_model(D):
    return D["num"].to_numpy() * (1 + D["cat"].cat.codes.to_numpy()) \
        + (D["txt"] == "u").to_numpy() + D["flag"].to_numpy()


def test_every_effect_kind_survives_a_json_round_trip():
    X = np.random.default_rng(2).normal(size=(300, 3))
    frame = _mixed_frame()
    cases = [
        ml.pdp(f3, X, ["x0", ("x0", "x1")], grid=5, ice=True, center=True, sample=50,
               random_state=0),
        ml.pdp(_frame_model, frame, ["cat", ("num", "cat")], grid=4),
        ml.mplot(_frame_model, frame, grid=5),
        ml.ale(f3, X, ["x0", ("x1", "x2")], bins=6),
        ml.ale(_frame_model, frame, ["cat", "txt", ("num", "cat")], bins=5),
        ml.dale(f3, X, bins="auto"),
    ]
    for effects in cases:
        back = _roundtrip(effects)
        _effects_equal(effects, back)
    # a restored DALE effect still re-bins without the model
    dale = cases[-1]
    restored = _roundtrip(dale)
    np.testing.assert_array_equal(restored["x1"].rebin(4).values, dale["x1"].rebin(4).values)
    with pytest.raises(ValueError, match="to_dict"):
        ml.Effects.from_dict({"effects": []})


def test_attributions_survive_a_json_round_trip():
    frame = _mixed_frame()
    attr = ml.shapley(_frame_model, frame.iloc[:6], background=frame.iloc[100:130],
                      algorithm="kernel", n_samples=8, random_state=0)
    back = _roundtrip(attr)
    for name in ("values", "base_values", "codes", "std", "prediction", "feature_names",
                 "method", "output", "value_function"):
        _assert_same(getattr(attr, name), getattr(back, name))
    assert back.data.tolist() == attr.data.tolist()  # labels come back as labels
    assert [c.dtype for c in back.columns] == [c.dtype for c in attr.columns]
    assert back.diagnostics["n_background"] == 30


# ------------------------------------------------------- attributions: index
def test_attributions_indexing_selects_rows_and_features():
    frame = _mixed_frame()
    attr = ml.shapley(_frame_model, frame.iloc[:8], background=frame.iloc[100:140])
    one = attr[0]
    assert one.values.shape == (1, 4) and one.base_values.shape == (1,)
    np.testing.assert_array_equal(one.values[0], attr.values[0])
    assert one.data[0].tolist() == attr.data[0].tolist()
    assert attr[-1].prediction[0] == attr.prediction[-1]
    head = attr[:3]
    np.testing.assert_array_equal(head.values, attr.values[:3])
    col = attr[:, "cat"]
    assert col.feature_names == ["cat"] and col.kinds == ["categorical"]
    np.testing.assert_array_equal(col.values[:, 0], attr.values[:, 1])
    assert col.data[:, 0].tolist() == frame["cat"].iloc[:8].tolist()
    both = attr[attr.values[:, 0] > 0, ["flag", "num"]]
    np.testing.assert_array_equal(both.values, attr.values[attr.values[:, 0] > 0][:, [3, 0]])
    with pytest.raises(IndexError):
        attr[8]
    with pytest.raises(ValueError, match="unknown feature"):
        attr[:, "nope"]


def test_to_shap_draws_with_shaps_own_plots():
    shap = pytest.importorskip("shap")
    import matplotlib.pyplot as plt

    X = np.random.default_rng(3).normal(size=(30, 4))
    attr = ml.shapley(lambda A: A @ [1.0, -2.0, 0.5, 0.0], X[:10], background=X)
    exp = attr.to_shap()
    assert isinstance(exp, shap.Explanation)
    np.testing.assert_array_equal(exp.values, attr.values)
    np.testing.assert_array_equal(exp.base_values, attr.base_values)
    assert list(exp.feature_names) == attr.feature_names
    shap.plots.waterfall(exp[0], show=False)
    assert len(plt.gcf().axes) >= 1
    plt.close("all")
    shap.plots.beeswarm(exp, show=False)
    assert len(plt.gcf().axes) >= 1
    plt.close("all")
    frame = _mixed_frame()
    cat = ml.shapley(_frame_model, frame.iloc[:5], background=frame.iloc[100:130]).to_shap()
    assert cat.data.dtype == float and cat.display_data[0].tolist()[1] == frame["cat"].iloc[0]


# ------------------------------------------------------------ lookup rule
def test_integer_features_are_labels_on_integer_labelled_frames_everywhere():
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(rng.normal(size=(200, 3)), columns=[2, 1, 0])
    model = lambda D: 10 * D[2].to_numpy() + D[0].to_numpy()  # noqa: E731
    pd_ = ml.pdp(model, frame, features=2, grid=3)
    assert list(pd_) == ["2"]
    assert np.ptp(pd_["2"].values) > 10 * np.ptp(pd_["2"].grid) * 0.99  # slope 10: label 2
    attr = ml.shapley(model, frame.iloc[:5], background=frame)
    assert attr.index_of(2) == 0 and attr[:, 2].feature_names == ["2"]
    ax = attr.plot.dependence(2)
    assert ax.get_xlabel() == "2"
    drawn = np.concatenate([c.get_offsets()[:, 0] for c in ax.collections])
    np.testing.assert_allclose(np.sort(drawn), np.sort(frame[2].iloc[:5]))
    # on arrays (and frames with string labels) an integer is a position
    X = frame.to_numpy()
    assert list(ml.pdp(lambda A: A[:, 0], X, features=2, grid=3)) == ["x2"]
    assert ml.shapley(lambda A: A[:, 0], X[:3], background=X).index_of(2) == 2
    named = frame.set_axis(["c", "b", "a"], axis=1)
    assert list(ml.pdp(lambda D: D["c"].to_numpy(), named, features=2, grid=3)) == ["a"]


# --------------------------------------------------------------- imports
def _imports(path, source=None, me=None):
    """Every other modellens module ``path`` imports (see ``import_walk.imported_modules``)."""
    me = module_name(path) if me is None else me
    out = imported_modules(path.read_text() if source is None else source, me,
                           path.name == "__init__.py")
    out.discard(me)
    return out


def _top(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


#: The layers as the code has them, top to bottom.  A module may import its own
#: package and the layers strictly below its own; ``plot`` is a leaf that the result
#: types of effects and attribution (and the report, through them) draw with.
LAYERS = [("__main__",), ("cli",), ("cli_compare", "cli_texts"), ("report",), ("_warm",), ("change",), ("attribution", "effects", "_predict"), ("plot",), ("engine",),
          ("files",), ("trees",), ("models",), ("data",), ("_result_dicts", "_result_specs"),
          ("_result_checks",), ("_serialize", "datasets", "_config"),
          ("_validation", "_version", "typing", "_progress", "_children"), ("_process", "_kernel_cache")]

def _graph():
    # the face (modellens/__init__) re-exports every layer and is left out: the report
    # and the command line reach the public functions through it
    return {mod: {t for t in _imports(path) if t != "modellens"}
            for mod, path in MODULES.items() if mod != "modellens"}


def _circles(graph):
    """The strongly connected groups of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_between_any_two_modules():
    circles = [sorted(c) for c in _circles(_graph())]
    assert not circles, f"import circles (function-level imports included): {circles}"


def test_the_circle_check_finds_function_level_and_package_circles():
    graph = {"a.x": {"a.y"}, "a.y": {"a.z"}, "a.z": {"a.x"}, "b": {"a.x"}}
    assert _circles(graph) == [{"a.x", "a.y", "a.z"}]
    # a lazy import inside a function is an import all the same
    src = "def f():\n    from ..engine import _run\n    from . import ale\n"
    found = _imports(SRC / "effects" / "probe.py", src, "modellens.effects.probe")
    assert found == {"modellens.engine._run", "modellens.effects.ale"}


def test_the_architecture_page_lists_these_layers():
    # docs/architecture.md describes the code as built: its layer block is LAYERS
    page = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text()
    block = page.split("<!-- layers: read by tests/structure/test_structure.py -->")[1]
    block = block.split("<!-- /layers -->")[0].strip().strip("`").strip()
    assert [tuple(line.split()) for line in block.splitlines()] == [tuple(layer)
                                                                    for layer in LAYERS]


def test_import_graph_arrows_point_down():
    rank = {name: i for i, names in enumerate(LAYERS) for name in names}
    for mod, targets in _graph().items():
        layer = _top(mod)
        assert layer in rank, f"{mod}: add its layer to LAYERS"
        for t in targets:
            tl = _top(t)
            if tl == layer:
                continue
            assert rank[tl] > rank[layer], f"{mod} imports {t}, which is not below it"


# -------------------------------------------------------- public docstrings
PUBLIC = [ml.pdp, ml.mplot, ml.ale, ml.dale, ml.shapley, ml.config]


@pytest.mark.parametrize("func", PUBLIC, ids=lambda f: f.__name__)
def test_public_functions_document_references_and_run_their_examples(func):
    doc = func.__doc__
    assert "Examples\n" in doc and ">>>" in doc
    if func is not ml.config:
        assert "References\n" in doc
        # shapley's overloads: an Attributions, for a list of texts a list of them, or for
        # Dask data a DistributedAttributions
        assert func.__annotations__.get("return") in (
            "Effects", "Attributions",
            "Attributions | list[Attributions] | DistributedAttributions")
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(func, func.__name__, globs={})
    assert tests and sum(len(t.examples) for t in tests) >= 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModellensWarning)
        for t in tests:
            runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted >= 2


@pytest.mark.parametrize("bad", ["abc", -1, 1.5, True])
def test_random_state_is_checked_at_the_boundary(bad):
    """A seed numpy would reject (or read as 1, for True) gets our error naming the option."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    f = lambda A: A @ [1.0, 2.0, 3.0]  # noqa: E731
    calls = [
        lambda: ml.shapley(f, X[:2], background=X, algorithm="permutation", random_state=bad),
        lambda: ml.lime(f, X[:2], training_data=X, num_samples=50, random_state=bad),
        lambda: ml.pdp(f, X, sample=10, random_state=bad),
        lambda: ml.lime_text(lambda texts: np.array([len(t) for t in texts], float), "a b c",
                             num_samples=20, random_state=bad),
    ]
    for call in calls:
        with pytest.raises(ml.InvalidParameterError, match="random_state"):
            call()


def test_random_state_accepts_integers_and_generators():
    from modellens._validation import check_random_state

    a = check_random_state(np.int64(3)).random(3)
    np.testing.assert_array_equal(a, np.random.default_rng(3).random(3))
    g = np.random.default_rng(5)
    assert check_random_state(g) is g  # the caller's stream goes on, as numpy's default_rng
    assert isinstance(check_random_state(None), np.random.Generator)
