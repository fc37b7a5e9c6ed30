"""The command line's outputs never destroy its inputs, and a failed write leaves the old file."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from cli_support import _one_error_line, _run
from sklearn.compose import make_column_transformer
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline

import modellens

#: the modellens the tests import, for the children too
SRC = str(Path(modellens.__file__).resolve().parents[1])
FAST = ["--sample", "60", "--explain", "3", "--grid", "4"]


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=80), "b": rng.normal(size=80)})
    y = X.a - 2 * X.b
    data = tmp_path / "data.csv"
    X.assign(y=y).to_csv(data, index=False)
    model = tmp_path / "model.skops"
    sio.dump(make_pipeline(make_column_transformer(("passthrough", ["a", "b"])),
                           Ridge()).fit(X, y), model)
    return data, model


@pytest.mark.parametrize("target", ["data", "model", "data hard link", "model symbolic link"])
def test_out_naming_an_input_is_refused_and_the_input_kept(files, tmp_path, capsys, target):
    data, model = files
    before = {p: p.read_bytes() for p in (data, model)}
    source = data if target.startswith("data") else model
    out = source
    if "hard" in target:
        out = tmp_path / "data-link.html"
        os.link(source, out)
    elif "symbolic" in target:
        out = tmp_path / "model-link.html"
        out.symlink_to(source)
    code, _, err = _run(["report", "--data", data, "--target", "y", "--model", model,
                         "--out", out, *FAST], capsys)
    assert code == 1
    line = _one_error_line(err)
    assert "--out" in line and ("--data" if source == data else "--model") in line
    assert {p: p.read_bytes() for p in (data, model)} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        {data.name, model.name, Path(out).name})


def _limited(code, limit, cwd):
    """Run ``code`` in a child whose files may not grow beyond ``limit`` bytes."""
    prologue = textwrap.dedent(f"""\
        import resource, sys
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
        """)
    return subprocess.run([sys.executable, "-c", prologue + textwrap.dedent(code)],
                          capture_output=True, text=True, cwd=cwd, timeout=300,
                          env={**os.environ, "PYTHONPATH": SRC})


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_report_save_that_fails_part_way_leaves_the_old_file(tmp_path):
    old = tmp_path / "report.html"
    old.write_text("<p>the report of last week</p>", encoding="utf-8")
    done = _limited("""
        from modellens.report._report import Report
        page = Report([], {"note": "x" * 50_000})
        assert len(page.to_html()) > 20_000
        try:
            page.save("report.html")
        except OSError as exc:
            print("refused:", exc.errno)
        else:
            print("written")
        """, 20_000, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused:")
    assert old.read_text(encoding="utf-8") == "<p>the report of last week</p>"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary file left


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_the_command_line_under_a_size_limit_keeps_the_old_report(files, tmp_path):
    data, model = files
    out = tmp_path / "out.html"
    out.write_text("old", encoding="utf-8")
    done = _limited(f"""
        from modellens.cli import main
        sys.exit(main(["report", "--data", {str(data)!r}, "--target", "y", "--model",
                       {str(model)!r}, "--out", "out.html", *{FAST!r}]))
        """, 30_000, tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "File too large" in done.stderr.strip().splitlines()[-1]
    assert out.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "model.skops", "out.html"]


def test_save_writes_through_a_temporary_file_in_the_same_folder(tmp_path, monkeypatch):
    # a writer that fails after some bytes (an interrupted write): the old file stays whole
    from modellens import files as _write
    from modellens.report._report import Report

    target = tmp_path / "r.html"
    target.write_bytes(b"previous")
    seen = []
    real_open = open

    def failing_open(name, mode="r", *args, **kwargs):
        fh = real_open(name, mode, *args, **kwargs)
        if "w" in mode:
            seen.append(Path(name))
            fh.write(b"<!DOCTYPE html><html>half a page")
            fh.close()
            raise KeyboardInterrupt
        return fh

    monkeypatch.setattr("builtins.open", failing_open)
    with pytest.raises(KeyboardInterrupt):
        Report([], {}).save(target)
    monkeypatch.undo()
    assert target.read_bytes() == b"previous"
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]
    assert seen and seen[0].parent == tmp_path and seen[0] != target
    assert _write.write_atomic(target, lambda name: Path(name).write_text("new")) == target
    assert target.read_text() == "new"


def test_terminal_escape_sequences_in_names_are_printed_escaped(tmp_path, capsys):
    # a column the model does not take, and a target, named with escape sequences that
    # would clear the screen and retitle the terminal if printed raw
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=80), "b": rng.normal(size=80)})
    y = X.a - X.b
    model = tmp_path / "m.skops"
    sio.dump(make_pipeline(make_column_transformer(("passthrough", ["a", "b"])),
                           Ridge()).fit(X, y), model)
    data = tmp_path / "d.csv"
    X.assign(**{"\x1b[2Jnote\x1b]0;pwned\x07": "x", "y\u202e": y}).to_csv(data, index=False)
    code, out, err = _run(["report", "--data", data, "--model", model, "--target", "y\u202e",
                           "--out", tmp_path / "r.html", *FAST], capsys)
    assert code == 0, err
    for stream in (out, err):
        assert "\x1b" not in stream and "\x07" not in stream and "\u202e" not in stream
    assert "\\x1b[2Jnote\\x1b]0;pwned\\x07" in out  # shown, as text
    code, _, err = _run(["report", "--data", data, "--model", model, "--target", "y\u202e",
                         "--features", "\x1b[31mred", "--out", tmp_path / "r.html"], capsys)
    assert code == 1 and "\x1b" not in err
