"""Tampered model files are refused before anything walks their trees (issue #34).

Each file is built from a valid model with one defect in its node arrays; the
CLI runs on it in a process of its own (a crash is a negative return code, a
hang the deadline), forked from one child that imported the CLI once, and must
exit 1 with one line naming the problem, leaving the file as it was.  The same models, untampered, load and predict
as the original.
"""

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import modellens
from modellens.trees import tree_ensemble
from modellens.trees import UnsafeModelError
from modellens.files import FileError, load_model as load_model_file

from cli_support import run_commands_forked

sio = pytest.importorskip("skops.io")

SRC = str(Path(modellens.__file__).resolve().parents[1])


def _data(tmp_path, n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "c": rng.normal(size=n)})
    y = X.a - 2 * X.b + rng.normal(scale=0.1, size=n)
    X.to_csv(tmp_path / "data.csv", index=False)
    return X, y


def _tampered_tree(model, node, side, value):
    state = model.tree_.__getstate__()
    nodes = state["nodes"].copy()
    nodes[f"{side}_child"][node] = value
    state["nodes"] = nodes
    model.tree_.__setstate__(state)
    return model


def _skops_tree(folder, value):
    from sklearn.tree import DecisionTreeRegressor

    X, y = _data(folder)
    model = _tampered_tree(DecisionTreeRegressor(max_depth=3).fit(X, y), 0, "left", value)
    path = folder / "tree.skops"
    sio.dump(model, path)
    return path, model


def _skops_hgb(folder, value):
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = _data(folder)
    model = HistGradientBoostingRegressor(max_iter=5, max_depth=3).fit(X, y)
    nodes = model._predictors[2][0].nodes
    first = int(np.flatnonzero(nodes["is_leaf"] == 0)[0])
    nodes["left"][first] = value if value else first
    path = folder / "hgb.skops"
    sio.dump(model, path)
    return path, model


def _xgb_json(tmp_path, X, y):
    xgb = pytest.importorskip("xgboost")
    model = xgb.XGBRegressor(n_estimators=4, max_depth=3).fit(X, y)
    model.save_model(tmp_path / "ok.json")
    return model, json.loads((tmp_path / "ok.json").read_text())


def _xgb_negative_child(folder):
    X, y = _data(folder)
    _, doc = _xgb_json(folder, X, y)
    tree = doc["learner"]["gradient_booster"]["model"]["trees"][1]
    tree["left_children"][0] = -7
    path = folder / "bad.json"
    path.write_text(json.dumps(doc))
    return path, None


def _xgb_parent_out_of_range(folder):
    # XGBoost looks each node's parent up while it loads the file
    X, y = _data(folder)
    _, doc = _xgb_json(folder, X, y)
    doc["learner"]["gradient_booster"]["model"]["trees"][0]["parents"][1] = 10 ** 8
    path = folder / "bad.json"
    path.write_text(json.dumps(doc))
    return path, None


def _lgb_text(tmp_path, X, y):
    lgb = pytest.importorskip("lightgbm")
    model = lgb.LGBMRegressor(n_estimators=4, num_leaves=6, verbose=-1,
                              min_child_samples=5).fit(X, y)
    return model, model.booster_.model_to_string()


def _edit_tree(text, k, key, edit):
    """``text`` with the ``key`` line of tree ``k`` replaced by ``edit(values)``, sizes dropped."""
    lines = text.split("\n")
    lines = [line for line in lines if not line.startswith("tree_sizes=")]
    start = lines.index(f"Tree={k}")
    i = next(j for j in range(start, len(lines)) if lines[j].startswith(key + "="))
    values = lines[i].split("=", 1)[1].split(" ")
    lines[i] = f"{key}=" + " ".join(edit(values))
    return "\n".join(lines)


def _lgb_file(folder, text):
    path = folder / "bad.txt"
    path.write_text(text)
    return path, None


def _lgb_leaf_past_its_leaves(folder):
    X, y = _data(folder)
    _, text = _lgb_text(folder, X, y)

    def past(values):  # the first leaf reference becomes leaf num_leaves (one past the last)
        i = next(j for j, v in enumerate(values) if int(v) < 0)
        values[i] = str(~6)
        return values

    return _lgb_file(folder, _edit_tree(text, 1, "left_child", past))


def _lgb_own_child(folder):
    X, y = _data(folder)
    _, text = _lgb_text(folder, X, y)
    return _lgb_file(folder, _edit_tree(text, 2, "right_child", lambda v: ["0"] + v[1:]))


def _lgb_sizes_past_the_text(folder):
    # LightGBM jumps to each tree by these sizes while loading, unchecked
    X, y = _data(folder)
    _, text = _lgb_text(folder, X, y)
    lines = text.split("\n")
    i = next(j for j, line in enumerate(lines) if line.startswith("tree_sizes="))
    lines[i] = "tree_sizes=" + " ".join(["100000000"] * 4)
    return _lgb_file(folder, "\n".join(lines))


#: Each tampered file: (how it is built, its arguments)
TAMPERED = {
    "tree outside": (_skops_tree, 10 ** 6), "tree cycle": (_skops_tree, 0),
    "hgb outside": (_skops_hgb, 10 ** 6), "hgb cycle": (_skops_hgb, 0),
    "xgb negative child": (_xgb_negative_child,), "xgb parent": (_xgb_parent_out_of_range,),
    "lgb leaf past": (_lgb_leaf_past_its_leaves,), "lgb own child": (_lgb_own_child,),
    "lgb sizes past": (_lgb_sizes_past_the_text,),
}


@pytest.fixture(scope="module")
def cli_runs(tmp_path_factory):
    """``{name: (exit status, stderr, model)}``: ``modellens report`` on each tampered file,
    each in its own process (a crash is a negative status, a hang the deadline), those
    processes forked from one that imported the command line and skops once: nine fresh
    interpreters paid those imports nine times (cli_support.run_commands_forked)."""
    built, commands = {}, []
    for name, (make, *args) in TAMPERED.items():
        folder = tmp_path_factory.mktemp(name.replace(" ", "-"))
        path, model = make(folder, *args)
        built[name] = (path, model, hashlib.sha256(path.read_bytes()).hexdigest())
        commands.append((["report", "--model", path, "--data", folder / "data.csv",
                          "--out", folder / "r.html", "--explain", "2", "--sample", "50",
                          "--grid", "3"], folder))
    env = dict(os.environ, PYTHONPATH=SRC, MODELLENS_NO_PROGRESS="1")
    runs = run_commands_forked(commands, tmp_path_factory.mktemp("runs"), env=env,
                               preload=["skops.io"])
    return {name: (code, err, path, model, digest)
            for (name, (path, model, digest)), (code, err) in zip(built.items(), runs)}


def _refused(run, *words):
    code, err, path, _, digest = run
    assert code != "hang", f"modellens report hung on {path.name}"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest  # left as it was
    assert code >= 0, f"crashed with signal {-code}: {err[-500:]}"
    lines = [line for line in err.strip().splitlines() if line]
    assert code == 1, err[-2000:]
    assert len(lines) == 1 and "Traceback" not in err, err[-2000:]
    assert "refusing" in lines[0], lines[0]
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("kind, words", [("outside", ("outside",)), ("cycle", ("cycle",))])
def test_skops_decision_tree_with_a_tampered_node_array_is_refused(cli_runs, kind, words):
    run = cli_runs[f"tree {kind}"]
    _refused(run, *words)
    path, model = run[2:4]
    with pytest.raises(FileError, match="refusing"):
        load_model_file(path)
    with pytest.raises(UnsafeModelError):  # the in-memory model is refused by the parser
        tree_ensemble(model)


@pytest.mark.parametrize("kind, words", [("outside", ("outside",)), ("cycle", ("cycle",))])
def test_skops_hist_gradient_boosting_with_a_tampered_predictor_is_refused(cli_runs, kind,
                                                                             words):
    run = cli_runs[f"hgb {kind}"]
    _refused(run, *words)
    with pytest.raises(UnsafeModelError):
        tree_ensemble(run[3])


def test_xgboost_json_with_a_negative_child_is_refused(cli_runs):
    _refused(cli_runs["xgb negative child"], "left child -7")


def test_xgboost_json_with_a_parent_out_of_range_is_refused(cli_runs):
    _refused(cli_runs["xgb parent"], "parent")


def test_lightgbm_text_with_a_leaf_index_past_its_leaves_is_refused(cli_runs):
    _refused(cli_runs["lgb leaf past"], "leaves")


def test_lightgbm_text_with_a_node_that_is_its_own_child_is_refused(cli_runs):
    _refused(cli_runs["lgb own child"], "cycle")


def test_lightgbm_text_whose_tree_sizes_point_past_the_text_is_refused(cli_runs):
    _refused(cli_runs["lgb sizes past"], "tree_sizes")


def test_valid_files_of_every_safe_format_still_load_and_predict_the_same(tmp_path):
    from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
    from sklearn.tree import DecisionTreeRegressor

    X, y = _data(tmp_path)
    for model in (DecisionTreeRegressor(max_depth=4).fit(X, y),
                  RandomForestRegressor(n_estimators=5, max_depth=4).fit(X, y),
                  HistGradientBoostingRegressor(max_iter=5).fit(X, y)):
        sio.dump(model, tmp_path / "m.skops")
        np.testing.assert_array_equal(load_model_file(tmp_path / "m.skops").predict(X),
                                      model.predict(X))
    xgb_model, _ = _xgb_json(tmp_path, X, y)
    xgb_model.get_booster().save_model(tmp_path / "ok.ubj")
    for name in ("ok.json", "ok.ubj"):
        np.testing.assert_array_equal(load_model_file(tmp_path / name).predict(X),
                                      xgb_model.predict(X))
    # pruning leaves deleted, unreachable nodes in XGBoost's arrays
    pruned = pytest.importorskip("xgboost").XGBRegressor(
        n_estimators=4, max_depth=4, tree_method="exact", gamma=2.0).fit(X, y)
    pruned.save_model(tmp_path / "pruned.json")
    doc = json.loads((tmp_path / "pruned.json").read_text())
    assert any(int(t["tree_param"]["num_deleted"]) > 0
               for t in doc["learner"]["gradient_booster"]["model"]["trees"])
    loaded = load_model_file(tmp_path / "pruned.json")
    np.testing.assert_array_equal(loaded.predict(X), pruned.predict(X))
    np.testing.assert_allclose(tree_ensemble(loaded).predict_raw(X)[:, 0],
                               pruned.predict(X, output_margin=True), rtol=1e-5, atol=1e-6)
    lgb_model, text = _lgb_text(tmp_path, X, y)
    (tmp_path / "ok.txt").write_text(text)
    np.testing.assert_array_equal(load_model_file(tmp_path / "ok.txt").predict(X),
                                  lgb_model.predict(X))


def _pipeline_data(tmp_path):
    rng = np.random.default_rng(3)
    n = 160
    X = pd.DataFrame({"age": rng.normal(40, 10, n), "income": rng.lognormal(3, 1, n),
                      "city": rng.choice(["north", "south", "east"], n).astype(object)})
    X.loc[::9, "age"] = np.nan
    X.loc[::13, "city"] = np.nan
    y = ((X.age.fillna(40) > 40) ^ (X.city == "north")).astype(int)
    X.to_csv(tmp_path / "data.csv", index=False)
    return X, y


def _ordinary_pipeline(last):
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    columns = ColumnTransformer([
        ("num", make_pipeline(SimpleImputer(), StandardScaler()), ["age", "income"]),
        ("cat", make_pipeline(SimpleImputer(strategy="most_frequent"),
                              OneHotEncoder(handle_unknown="ignore")), ["city"])])
    return make_pipeline(columns, last)


@pytest.mark.parametrize("last", ["logistic", "hgb"])
def test_an_ordinary_pipeline_in_skops_runs_through_the_cli_without_trust(tmp_path, capsys,
                                                                          last):
    # issue #29: skops does not trust numpy.dtype, which every SimpleImputer holds
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression

    from cli_support import _run, pages_without_pictures

    X, y = _pipeline_data(tmp_path)
    est = LogisticRegression() if last == "logistic" else \
        HistGradientBoostingClassifier(max_iter=5)
    model = _ordinary_pipeline(est).fit(X, y)
    path = tmp_path / "pipe.skops"
    sio.dump(model, path)
    assert "numpy.dtype" in sio.get_untrusted_types(file=path)
    np.testing.assert_array_equal(load_model_file(path).predict_proba(X),
                                  model.predict_proba(X))
    with pages_without_pictures():  # (what is checked is that the file loads and runs)
        code, out, err = _run(["report", "--model", path, "--data", tmp_path / "data.csv",
                               "--out", tmp_path / "r.html", "--explain", "2", "--sample",
                               "40", "--grid", "3"], capsys)
    assert code == 0, err
    assert (tmp_path / "r.html").stat().st_size > 0


def _plus_one(X):
    return X + 1.0


@pytest.mark.parametrize("func, name", [(_plus_one, "_plus_one"), (np.round, "numpy.round")])
def test_a_function_transformer_of_a_python_function_is_still_refused(tmp_path, func, name):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X, y = _pipeline_data(tmp_path)
    model = make_pipeline(FunctionTransformer(func), LogisticRegression()).fit(
        X[["income"]], y)
    path = tmp_path / "f.skops"
    sio.dump(model, path)
    with pytest.raises(FileError, match=name):
        load_model_file(path)
    # a ufunc is data to skops and loads
    model = make_pipeline(FunctionTransformer(np.log1p), LogisticRegression()).fit(
        X[["income"]], y)
    sio.dump(model, path)
    np.testing.assert_array_equal(load_model_file(path).predict(X[["income"]]),
                                  model.predict(X[["income"]]))
