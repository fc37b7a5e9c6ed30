"""The command line: report from files, safe model loading, one-line errors, the demo."""

import contextlib
import io
import operator
import subprocess
import sys
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from cli_support import _one_error_line, _run
from sklearn.compose import make_column_transformer
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder
from support import _assert_inert, assert_opens_cleanly, injection_frame

import modellens
from modellens.cli import main

SRC = str(Path(__file__).resolve().parents[2] / "src")

FAST = ["--sample", "120", "--explain", "6", "--grid", "5"]


def _data(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"age": rng.uniform(20, 70, n), "income": rng.normal(50, 10, n),
                      "city": rng.choice(["Oslo", "Lima", "Pune"], n)})
    y = 0.1 * X.age + 0.05 * X.income + (X.city == "Lima") + rng.normal(0, 0.1, n)
    return X, y


def _model(X, y, numeric=None):
    numeric = numeric or ["age", "income"]
    return make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown="ignore"),
                                                  ["city"]), ("passthrough", numeric)),
                         Ridge()).fit(X, y)


def _write_files(folder):
    X, y = _data()
    data = folder / "data.csv"
    X.assign(price=y).to_csv(data, index=False)
    model = folder / "model.skops"
    sio.dump(_model(X, y), model)
    return data, model, folder


@pytest.fixture
def files(tmp_path):
    return _write_files(tmp_path)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The report of ``files`` with the interactive explorer and with ``--static``, each
    written once for the tests that read them (a report costs seconds of CPU, most of it
    in the processes it starts): ``{static: (exit status, stdout, stderr, path)}``."""
    data, model, tmp = _write_files(tmp_path_factory.mktemp("pages"))
    runs = {}
    for flag in ([], ["--static"]):
        out_file = tmp / f"out{len(flag)}.html"
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([str(a) for a in ["report", "--data", data, "--target", "price",
                                              "--model", model, "--rows", "0", "4",
                                              "--out", out_file, *FAST, *flag]])
            except SystemExit as exit_:
                code = exit_.code
        runs[bool(flag)] = (code, out.getvalue(), err.getvalue(), out_file)
    return runs


def test_report_from_a_csv_and_a_skops_model(pages):
    code, out, err, out_file = pages[False]
    assert code == 0, err
    assert str(out_file.resolve()) in out
    text = out_file.read_text(encoding="utf-8")
    for anchor in ('id="data"', 'id="quality"', 'id="effects"', 'id="shapley"', 'id="run"'):
        assert anchor in text
    assert "model.skops" in text and "data.csv" in text
    assert "row 0" in text and "row 4" in text


def test_static_writes_the_still_page(pages):
    """--static: no explorer, no script but the page's own; without it the explorer is there."""
    text = {}
    for static, (code, _, err, out_file) in pages.items():
        assert code == 0, err
        text[static] = out_file.read_text(encoding="utf-8")
    assert 'data-ml-control="feature"' in text[False] and 'id="ml-data"' in text[False]
    assert "data-ml-control" not in text[True] and text[True].count("<script") == 1


def test_report_from_parquet_orders_columns_as_the_model_was_fit(files, capsys):
    data, model, tmp = files
    frame = pd.read_csv(data)
    parquet = tmp / "data.parquet"
    frame[["city", "price", "income", "age"]].to_parquet(parquet)
    code, _, err = _run(["report", "--data", parquet, "--target", "price", "--model", model,
                         "--features", "age", "--out", tmp / "p.html", *FAST], capsys)
    assert code == 0, err


@pytest.mark.browser
def test_injection_csv_gives_an_inert_page(tmp_path, capsys):
    X, y = injection_frame()
    data = tmp_path / "evil.csv"
    X.assign(target=y).to_csv(data, index=False)
    model = make_pipeline(make_column_transformer((OneHotEncoder(), ["label"]),
                                                  remainder="passthrough"), Ridge()).fit(X, y)
    sio.dump(model, tmp_path / "m.skops")
    out = tmp_path / "evil.html"
    code, _, err = _run(["report", "--data", data, "--target", "target", "--model",
                         tmp_path / "m.skops", "--out", out, *FAST], capsys)
    assert code == 0, err
    _assert_inert(out.read_text(encoding="utf-8"))
    assert_opens_cleanly(out, tmp_path)


def test_pickle_needs_trust_model_file(files, capsys):
    data, _, tmp = files
    X, y = _data()
    for name in ("model.pkl", "model.joblib"):
        joblib.dump(_model(X, y), tmp / name)
        args = ["report", "--data", data, "--target", "price", "--model", tmp / name,
                "--out", tmp / "r.html", *FAST]
        code, _, err = _run(args, capsys)
        line = _one_error_line(err)
        assert code == 1 and not (tmp / "r.html").exists()
        assert "run arbitrary code" in line and "--trust-model-file" in line and "skops" in line
        code, _, err = _run(args + ["--trust-model-file"], capsys)
        assert code == 0, err
        (tmp / "r.html").unlink()


def test_skops_refusal_names_the_untrusted_types(files, capsys):
    data, _, tmp = files
    X, y = _data()
    model = make_pipeline(make_column_transformer(
        (OneHotEncoder(), ["city"]), (FunctionTransformer(operator.neg), ["age", "income"])),
        Ridge()).fit(X, y)
    sio.dump(model, tmp / "custom.skops")
    untrusted = sio.get_untrusted_types(file=tmp / "custom.skops")
    assert untrusted
    args = ["report", "--data", data, "--target", "price", "--model", tmp / "custom.skops",
            "--out", tmp / "r.html", *FAST]
    code, _, err = _run(args, capsys)
    line = _one_error_line(err)
    assert code == 1 and all(t in line for t in untrusted) and "--trust-model-file" in line
    code, _, err = _run(args + ["--trust-model-file"], capsys)
    assert code == 0, err
    assert untrusted[0] in err  # says what it loaded


@pytest.mark.parametrize("change, expected", [
    ({"--target": "nope"}, "no column 'nope'"),
    ({"--features": "height"}, "--features: no column 'height'"),
    ({"--rows": "150"}, "row 150 does not exist"),
])
def test_report_errors_are_one_line(files, capsys, change, expected):
    data, model, tmp = files
    opts = {"--data": data, "--target": "price", "--model": model, "--out": tmp / "r.html"}
    opts.update(change)
    argv = ["report"] + [str(x) for kv in opts.items() for x in kv] + FAST
    code, _, err = _run(argv, capsys)
    assert code != 0
    assert expected in _one_error_line(err)


def test_error_quotes_names_with_their_own_spaces(files, capsys):
    # a header of two spaces: the one-line error kept collapsing runs of spaces, so it
    # said "no column 'house price'; its columns are [..., 'house price']"
    data, model, tmp = files
    frame = pd.read_csv(data).rename(columns={"price": "house  price", "income": "Income"})
    frame.to_csv(tmp / "spaced.csv", index=False)
    base = ["report", "--data", tmp / "spaced.csv", "--model", model, "--out", tmp / "r.html"]
    code, _, err = _run(base + ["--target", "house  price", *FAST], capsys)
    assert code == 1 and "the model was fit on columns the data lacks: ['income']; the data " \
        "has columns that differ from them only in spaces or case: rename 'Income' -> " \
        "'income'." in _one_error_line(err)
    frame.rename(columns={"Income": "income"}).to_csv(tmp / "spaced.csv", index=False)
    code, _, err = _run(base + ["--target", "house price", *FAST], capsys)
    line = _one_error_line(err)
    assert code == 1 and "'house  price']" in line
    assert "Did you mean 'house  price'? It differs only in spaces or case." in line
    # --features names the model's column that differs in case; a name of no near match
    # gets no hint
    code, _, err = _run(base + ["--target", "house  price", "--features", "AGE", *FAST], capsys)
    assert "Did you mean 'age'?" in _one_error_line(err)
    code, _, err = _run(base + ["--target", "nope", *FAST], capsys)
    assert "Did you mean" not in _one_error_line(err)
    # a message of several lines is still printed on one
    from modellens.cli import _one_line
    assert _one_line(ValueError("first\n    second  part\r\nthird")) == "first second  part third"


def test_class_of_a_classifier_is_checked(files, capsys):
    from sklearn.linear_model import LogisticRegression

    data, _, tmp = files
    X, y = _data()
    labels = np.where(y > y.median(), "high", "low")
    clf = make_pipeline(_model(X, y).steps[0][1], LogisticRegression()).fit(X, labels)
    sio.dump(clf, tmp / "clf.skops")
    frame = X.assign(label=labels)
    frame.to_csv(tmp / "c.csv", index=False)
    base = ["report", "--data", tmp / "c.csv", "--target", "label", "--model", tmp / "clf.skops",
            "--out", tmp / "c.html", *FAST]
    code, _, err = _run(base + ["--class", "medium"], capsys)
    assert code == 1 and "not one of the model's classes" in _one_error_line(err)
    code, _, err = _run(base + ["--class", "low"], capsys)
    assert code == 0, err
    assert "P(y = low)" in (tmp / "c.html").read_text(encoding="utf-8")


def test_file_errors_are_one_line(files, capsys):
    data, model, tmp = files
    (tmp / "broken.parquet").write_bytes(b"not parquet at all")
    (tmp / "data.xlsx").write_text("x")
    (tmp / "model.bin").write_bytes(b"\x00")
    (tmp / "bad.skops").write_bytes(b"garbage")
    X, y = _data()
    other = X.rename(columns={"income": "salary"})
    sio.dump(_model(other, y, ["age", "salary"]), tmp / "other.skops")
    cases = [
        (["--data", tmp / "broken.parquet"], "cannot read"),
        (["--data", tmp / "data.xlsx"], "give a .csv or .parquet file"),
        (["--data", tmp / "missing.csv"], "no such file"),
        (["--model", tmp / "model.bin"], "give a .skops file"),
        (["--model", tmp / "bad.skops"], "cannot read the skops file"),
        (["--model", tmp / "other.skops"], "the model was fit on columns the data lacks: "
                                           "['salary']"),
        (["--out", tmp], "is a folder"),
        (["--sample", "0"], "--sample must be at least 2"),
        (["--grid", "1"], "--grid must be at least 2"),
        (["--rows", "-1"], "--rows must be at least 0"),
        (["--rows", "two"], "--rows must be a whole number"),
    ]
    for change, expected in cases:
        opts = {"--data": data, "--target": "price", "--model": model, "--out": tmp / "r.html"}
        opts.update(dict(zip(change[::2], change[1::2])))
        argv = ["report"] + [str(x) for kv in opts.items() for x in kv]
        code, _, err = _run(argv, capsys)
        # argument errors exit 2 (argparse), errors found while running 1
        assert code == (2 if expected.startswith(("--", "no such", "is a")) else 1), change
        assert expected in _one_error_line(err), (change, err)


def test_model_that_fails_on_the_columns_is_one_line(files, capsys):
    data, _, tmp = files
    X, y = _data()
    # fit on an array: the model knows no column names and gets a frame it cannot use
    model = Ridge().fit(np.c_[X.age, X.income, X.age], y)
    sio.dump(model, tmp / "array.skops")
    code, _, err = _run(["report", "--data", data, "--target", "price", "--model",
                         tmp / "array.skops", "--out", tmp / "r.html", *FAST], capsys)
    assert code == 1
    assert "error:" in _one_error_line(err)


def test_demo_options_out_of_range_are_argument_errors(tmp_path, capsys):
    existing = tmp_path / "file.txt"
    existing.write_text("x")
    for argv, expected in ((["--grid", "1"], "--grid must be at least 2"),
                           (["--explain", "0"], "--explain must be at least 1"),
                           (["--rows", "-1"], "--rows must be at least 0"),
                           (["--out", str(existing)], "is an existing file")):
        with pytest.raises(SystemExit) as exit_:
            main(["demo", *argv])
        assert exit_.value.code == 2
        assert expected in _one_error_line(capsys.readouterr().err)


def test_help_and_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"modellens {modellens.__version__}"
    for argv in (["--help"], ["report", "--help"], ["demo", "--help"]):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 0
        out = capsys.readouterr().out
        assert "usage: modellens" in out
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "report" in out and "demo" in out


def test_python_dash_m(tmp_path):
    done = subprocess.run([sys.executable, "-m", "modellens", "--version"], capture_output=True,
                          text=True, env={"PYTHONPATH": SRC, "PATH": ""}, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == f"modellens {modellens.__version__}"
    done = subprocess.run([sys.executable, "-m", "modellens", "demo", "--grid", "1"],
                          capture_output=True, text=True, env={"PYTHONPATH": SRC, "PATH": ""},
                          timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
