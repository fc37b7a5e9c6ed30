"""Mutated model files of every safe format: a clean refusal or a working model, never a crash.

A seeded set of mutations (``model_fuzz.make_inputs``) of valid skops, XGBoost
and LightGBM files runs through the loader, the model's own prediction and the
tree parser in child processes with a watchdog per input.  ``python
tests/fuzz/model_fuzz.py --seconds 300`` runs a longer set.
"""

import sys
from pathlib import Path

import pytest

pytest.importorskip("skops")
sys.path.insert(0, str(Path(__file__).parent))

import model_fuzz  # noqa: E402


def test_mutated_model_files_are_refused_cleanly_or_load_and_never_crash_or_hang(tmp_path):
    inputs = model_fuzz.make_inputs(tmp_path, 150, seed=34)
    # the watchdog's bounds are generous (a hang never answers; a loaded machine answers
    # late): 30 s per input called two inputs of a full run on a busy machine hangs
    result = model_fuzz.run_inputs(inputs, tmp_path, timeout=180.0, first_timeout=300.0)
    line = model_fuzz.summary(result)
    print(line)
    counts = result["counts"]
    assert result["tried"] == len(inputs), line
    assert counts.get("crash", 0) == 0 and counts.get("hang", 0) == 0, (line, result)
    assert result["changed"] == 0, line
    assert not [k for k in counts if k.startswith("unclean")], (line, result)
    # a model that loads and then fails in its own predict fails in the library's call
    # with the library's ModelError (one line), never another exception
    assert not [k for k in counts if k.startswith("loaded-error")], (line, result)
    # the parsed trees of every model that loads give the model's own raw output
    assert counts.get("loaded-disagree", 0) == 0, (line, result)
    # the set holds both kinds: a suite that only refuses (or only loads) tests nothing
    assert counts.get("refused", 0) > len(inputs) // 4, line
    assert counts.get("loaded", 0) > len(inputs) // 10, line


def test_a_skops_model_that_loads_then_fails_in_its_own_predict_gives_our_model_error(tmp_path):
    # the last long run's 20 skops files: loaded, then a Python error inside scikit-learn
    # (a mutated array the steps disagree on). Every method calls the model through the
    # library's wrapper, which says so in one ModelError: the load is not refused (nothing
    # short of predicting on the user's rows finds it), the use is
    import numpy as np
    import pandas as pd
    import skops.io as sio
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    import modellens as ml

    X = pd.DataFrame({"a": [0.0, 1, 2, 3, 4], "b": [1.0, 0, 1, 0, 2]})
    pipe = make_pipeline(StandardScaler(), Ridge()).fit(X, X.a)
    pipe[-1].coef_ = np.ones(8)
    sio.dump(pipe, tmp_path / "m.skops")
    model = ml.load_model(tmp_path / "m.skops")
    with pytest.raises(ValueError):
        model.predict(X)
    for call in (lambda: ml.predict(model, X), lambda: ml.pdp(model, X, "a", grid=3)):
        with pytest.raises(ml.ModelError, match="the model raised ValueError"):
            call()


def test_a_one_hot_encoder_whose_widths_disagree_with_its_categories_is_refused(tmp_path):
    # the long run's one crash (m06978_pipeline.skops, seed 15): a mutated shape shared by
    # id became the encoder's _n_features_outs (2 for 6 categories); predicting wrote past
    # the sparse matrix it sized and corrupted the heap ("double free or corruption")
    import pandas as pd
    import skops.io as sio
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    import modellens as ml

    X = pd.DataFrame({"c": [f"level{i % 6}" for i in range(30)]})
    pipe = make_pipeline(OneHotEncoder(handle_unknown="ignore"), Ridge()).fit(X, range(30))
    sio.dump(pipe, tmp_path / "good.skops")
    assert ml.load_model(tmp_path / "good.skops").predict(X).shape == (30,)
    pipe[0]._n_features_outs = [2]
    sio.dump(pipe, tmp_path / "bad.skops")
    with pytest.raises(ml.files.FileError, match="OneHotEncoder.*categories"):
        ml.load_model(tmp_path / "bad.skops")  # never predicted: that would corrupt the heap


def test_a_leafs_feature_index_is_never_read_by_the_tree_parser():
    # the long run's nine foreign errors (hgb.skops of seed 15, e.g. m00200): a leaf's
    # feature_idx set past the features; scikit-learn never reads it and predicts, the
    # tree parser indexed with it (IndexError out of ml.shapley)
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingRegressor

    import modellens as ml
    from modellens.trees import tree_ensemble

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    model = HistGradientBoostingRegressor(max_iter=3, max_depth=3).fit(X, X[:, 0] - X[:, 1])
    nodes = model._predictors[1][0].nodes
    nodes["feature_idx"][np.flatnonzero(nodes["is_leaf"])[0]] = 12
    ens = tree_ensemble(model)
    np.testing.assert_allclose(ens.predict_raw(ens.encode(X))[:, 0], model._raw_predict(X)[:, 0],
                               rtol=1e-12, atol=1e-12)
    attr = ml.shapley(model, X[:3], algorithm="tree")
    np.testing.assert_allclose(attr.values.sum(1) + attr.base_values, model.predict(X[:3]),
                               atol=1e-9)


def test_a_models_damaged_levels_leave_the_error_to_the_model():
    # the long run's one foreign TypeError (m02352_pipeline.skops, seed 15): an encoder's
    # categories_ holding lists; reading the model's levels raised "unhashable type: 'list'"
    # before the model was called. The model's own call now says what it makes of them
    import numpy as np
    import pandas as pd
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    import modellens as ml

    X = pd.DataFrame({"c": [f"level{i % 3}" for i in range(30)]})
    pipe = make_pipeline(OneHotEncoder(handle_unknown="ignore"), Ridge()).fit(X, range(30))
    damaged = np.empty(3, dtype=object)
    damaged[:] = [["level0"], ["level1"], ["level2"]]
    pipe[0].categories_ = [damaged]
    with pytest.raises(ml.ModelError, match="the model raised"):
        ml.predict(pipe, X)
