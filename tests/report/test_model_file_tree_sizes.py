"""LightGBM's tree_sizes line: kept for its parallel reading only where it was proven.

With ``tree_sizes`` LightGBM jumps to each tree by the sizes, unchecked, and
reads the trees in parallel threads, where a malformed tree aborts the process
instead of raising.  ``load_model`` hands LightGBM the line only when the
checks proved every jump lands on a checked tree (the text plain, the sizes
written as both readers read them); any other line is refused or dropped.
"""

import ctypes

import numpy as np
import pytest

from modellens.files import SAFE_TYPES, FileError, load_model
from modellens.trees import UnsafeModelError, check_lightgbm_file

lgb = pytest.importorskip("lightgbm")


@pytest.fixture(scope="module")
def model_text():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] - 2 * X[:, 1] + rng.normal(scale=0.1, size=300)
    booster = lgb.train({"num_leaves": 7, "verbose": -1, "min_data_in_leaf": 5},
                        lgb.Dataset(X, y), num_boost_round=5)
    return booster.model_to_string(), X


@pytest.fixture
def handed(monkeypatch):
    """The texts ``load_model`` hands to LightGBM's loader (``LGBM_BoosterLoadModelFromString``,
    whichever path calls it), as it reads them: up to the first NUL; the empty model and
    the probe of :func:`~modellens.trees.lightgbm_loaded_booster` left out."""
    from modellens.trees._lightgbm import _NO_TREES, _PROBE

    lib, seen = lgb.basic._LIB, []
    real = lib.LGBM_BoosterLoadModelFromString

    def spy(model_str, *args):
        text = ctypes.cast(model_str, ctypes.c_char_p).value.decode()
        if text not in (_NO_TREES, _PROBE):
            seen.append(text)
        return real(model_str, *args)

    monkeypatch.setattr(lib, "LGBM_BoosterLoadModelFromString", spy)
    return seen


def _sizes(text):
    line = next(line for line in text.split("\n") if line.startswith("tree_sizes="))
    return line, [int(v) for v in line.split("=")[1].split()]


def _planted(text, sizes_value):
    line, _ = _sizes(text)
    return text.replace(line, "tree_sizes=" + sizes_value, 1)


def _variants(text):
    _, s = _sizes(text)
    words = [str(v) for v in s]
    one = [s[0] - 1, s[1] + 1] + s[2:]  # the same total: the second jump lands mid-line
    return {
        "too short": " ".join(map(str, [s[0] - 1] + s[1:])),
        "too long": " ".join(map(str, s[:-1] + [s[-1] + 1])),
        "off by one": " ".join(map(str, one)),
        "negative": " ".join(["-" + words[0]] + words[1:]),
        "huge": " ".join(words[:-1] + [str(2 ** 64 + s[-1])]),
        "one size fewer": " ".join(words[:-1]),
        "one size more": " ".join(words + [words[-1]]),
        "empty": "",
        "a plus sign": " ".join(["+" + words[0]] + words[1:]),
        "underscores": " ".join([words[0][:1] + "_" + words[0][1:]] + words[1:]),
        "two spaces": "  ".join(words),
    }


@pytest.mark.parametrize("kind", ["too short", "too long", "off by one", "negative", "huge",
                                  "one size fewer", "one size more", "empty", "a plus sign",
                                  "underscores", "two spaces"])
def test_a_tree_sizes_line_that_disagrees_with_the_trees_never_reaches_lightgbm(
        tmp_path, model_text, handed, kind):
    text, X = model_text
    path = tmp_path / "m.txt"
    path.write_text(_planted(text, _variants(text)[kind]))
    data = path.read_bytes()
    try:
        assert not check_lightgbm_file(data, data.decode()).threads
    except UnsafeModelError:
        pass
    try:
        model = load_model(path)
    except FileError:
        return  # refused: nothing was handed to LightGBM
    assert handed and all("tree_sizes" not in model_str for model_str in handed)
    np.testing.assert_array_equal(model.predict(X), lgb.Booster(model_str=text).predict(X))


def test_its_own_file_is_read_with_the_tree_sizes(tmp_path, model_text, handed):
    text, X = model_text
    path = tmp_path / "m.txt"
    path.write_text(text)
    model = load_model(path)
    assert handed == [text]  # the file's text as it is: LightGBM reads the trees in threads
    own = lgb.Booster(model_file=str(path))
    assert model.model_to_string() == own.model_to_string()
    np.testing.assert_array_equal(model.predict(X), own.predict(X))


def test_a_skops_file_is_opened_once_and_judged_as_skops_judges_it(tmp_path, monkeypatch):
    # the trust decision, the booster checks and the load read one opening of the file
    import io

    import skops.io as sio
    from sklearn.preprocessing import FunctionTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 3))
    pipe = make_pipeline(FunctionTransformer(np.round),  # np.round: a type skops refuses
                         DecisionTreeRegressor(max_depth=3)).fit(X, X[:, 0])
    path = tmp_path / "m.skops"
    sio.dump(pipe, path)
    untrusted = sio.get_untrusted_types(file=path)
    real, opened = io.open, []

    def spy(file, *args, **kwargs):
        opened.append(str(file))
        return real(file, *args, **kwargs)

    monkeypatch.setattr(io, "open", spy)
    with pytest.raises(FileError, match="neither skops nor modellens") as refused:
        load_model(path)
    unknown = [t for t in untrusted if t not in SAFE_TYPES]
    assert unknown and all(t in str(refused.value) for t in unknown)
    with pytest.warns(Warning, match="neither skops"):
        model = load_model(path, trust=True)
    assert opened.count(str(path)) == 2  # once per load_model
    np.testing.assert_array_equal(model.predict(X), sio.load(path, trusted=untrusted).predict(X))


def test_a_skops_without_the_node_functions_judges_and_loads_through_its_public_ones(
        tmp_path, monkeypatch):
    # another skops version (the private functions missing or changed): the public
    # get_untrusted_types and load decide, with the same refusal and the same model
    import skops.io as sio
    from sklearn.preprocessing import FunctionTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.tree import DecisionTreeRegressor

    from modellens.files import _models

    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 3))
    tree = DecisionTreeRegressor(max_depth=3).fit(X, X[:, 0])
    odd = make_pipeline(FunctionTransformer(np.round), tree).fit(X, X[:, 0])
    sio.dump(tree, tmp_path / "tree.skops")
    sio.dump(odd, tmp_path / "odd.skops")
    monkeypatch.setattr(_models, "_skops_nodes", lambda archive: (None, None, None))
    np.testing.assert_array_equal(load_model(tmp_path / "tree.skops").predict(X), tree.predict(X))
    with pytest.raises(FileError, match="neither skops nor modellens"):
        load_model(tmp_path / "odd.skops")


@pytest.mark.parametrize("name", ["refi\u1e6d\r^\u02a7_decay_rate", "refit-decay", "Refit"])
def test_a_parameter_line_of_a_name_lightgbm_never_writes_is_refused(tmp_path, model_text,
                                                                     name):
    # the long fuzz run's crash: LightGBM 4 loaded such a file, then crashed the process
    # while it reported the loaded parameters
    text, _ = model_text
    assert "[refit_decay_rate: " in text
    path = tmp_path / "m.txt"
    path.write_text(text.replace("[refit_decay_rate: ", f"[{name}: ", 1), newline="")
    with pytest.raises(FileError, match="parameters hold the line"):
        load_model(path)
