"""The attack's "not yet tried" list (issue 40), tried: a clear refusal or the right result.

Output paths (a folder, a link to the data), the data through a link, two
runs writing one file at once, ``kill -9`` in the middle of a save, a full
disk (a 1 MB tmpfs where the test runs as root, and ENOSPC from the writer
everywhere), and names and levels with right-to-left and zero-width
characters, 6,000 characters, ``<!--``, template strings and U+2028 in
every string position of the report.  Nothing is lost (inputs and an older
report stay whole) and no partial file is presented as a report.
"""

import errno
import hashlib
import html
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from cli_support import _one_error_line, _run
from sklearn.compose import make_column_transformer
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

import modellens as ml
from modellens.files import write_atomic

SRC = str(Path(ml.__file__).resolve().parents[1])
FAST = ["--sample", "40", "--explain", "2", "--grid", "3", "--seed", "0", "--static"]


def _digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _files(tmp_path, columns=("a", "b", "c"), levels=("u", "v", "w")):
    rng = np.random.default_rng(0)
    n = 60
    X = pd.DataFrame({columns[0]: rng.normal(size=n), columns[1]: rng.normal(size=n),
                      columns[2]: rng.choice(list(levels), size=n)})
    y = X[columns[0]] - X[columns[1]] + (X[columns[2]] == levels[0])
    data = tmp_path / "data.csv"
    X.assign(target=y).to_csv(data, index=False)
    encode = make_column_transformer((OneHotEncoder(handle_unknown="ignore"), [columns[2]]),
                                     remainder="passthrough")
    model = tmp_path / "model.skops"
    sio.dump(make_pipeline(encode, Ridge()).fit(X, y), model)
    return data, model


def test_out_as_a_folder_is_refused_in_one_line(tmp_path, capsys):
    data, model = _files(tmp_path)
    folder = tmp_path / "out"
    folder.mkdir()
    code, _, err = _run(["report", "--data", data, "--model", model, "--target", "target",
                         "--out", folder, *FAST], capsys)
    assert code != 0 and "is a folder" in _one_error_line(err)
    assert list(folder.iterdir()) == []


def test_out_as_a_link_to_the_data_is_refused_and_the_data_kept(tmp_path, capsys):
    data, model = _files(tmp_path)
    before = _digest(data)
    link = tmp_path / "report.html"
    link.symlink_to(data)
    code, _, err = _run(["report", "--data", data, "--model", model, "--target", "target",
                         "--out", link, *FAST], capsys)
    assert code == 1 and "would destroy it" in _one_error_line(err)
    assert _digest(data) == before and link.is_symlink()


def test_data_through_a_link_is_read(tmp_path, capsys):
    data, model = _files(tmp_path)
    link = tmp_path / "linked.csv"
    link.symlink_to(data)
    out = tmp_path / "r.html"
    code, _, err = _run(["report", "--data", link, "--model", model, "--target", "target",
                         "--out", out, *FAST], capsys)
    assert code == 0, err
    assert "linked.csv" in out.read_text(encoding="utf-8")


def test_two_writers_of_one_file_leave_one_whole_file(tmp_path):
    target = tmp_path / "report.html"
    bodies = {i: (f"<!-- writer {i} -->" + "x" * 2_000_000).encode() for i in range(2)}
    start = threading.Barrier(2)

    def writer(i):
        def write(name):
            start.wait()
            with open(name, "wb") as fh:
                for k in range(0, len(bodies[i]), 65536):
                    fh.write(bodies[i][k:k + 65536])
        write_atomic(target, write)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert target.read_bytes() in bodies.values()
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


KILLED_SAVE = """
import os, signal, sys
sys.path.insert(0, {src!r})
from modellens.files import write_atomic
def write(name):
    with open(name, "w") as fh:
        fh.write("half a report")
        fh.flush()
        os.kill(os.getpid(), signal.SIGKILL)
write_atomic({target!r}, write)
"""


def test_kill_9_in_the_middle_of_a_save_leaves_the_old_report_whole(tmp_path):
    target = tmp_path / "report.html"
    target.write_text("the old, whole report")
    done = subprocess.run([sys.executable, "-c", KILLED_SAVE.format(src=SRC,
                                                                   target=str(target))])
    assert done.returncode == -9
    assert target.read_text() == "the old, whole report"
    # what is left is a hidden part file, never a report under the name asked for
    left = [p.name for p in tmp_path.iterdir() if p.name != "report.html"]
    assert all(name.startswith(".report.html.") and name.endswith(".part") for name in left)


def test_a_full_disk_is_one_line_and_leaves_no_partial_file(tmp_path, capsys, monkeypatch):
    data, model = _files(tmp_path)
    out = tmp_path / "r.html"
    real_write = write_atomic

    def full(path, write):
        def failing(name):
            with open(name, "w") as fh:
                fh.write("<html>part")
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(path, failing)

    import importlib

    monkeypatch.setattr(importlib.import_module("modellens.report._report"), "write_atomic",
                        full)
    code, _, err = _run(["report", "--data", data, "--model", model, "--target", "target",
                         "--out", out, *FAST], capsys)
    assert code == 1 and "No space left" in _one_error_line(err)
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == \
        ["data.csv", "model.skops"]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_a_really_full_disk(tmp_path, capsys):
    data, model = _files(tmp_path)
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(tiny)],
                      capture_output=True).returncode != 0:
        pytest.skip("this system does not let the test mount a tmpfs")
    try:
        code, _, err = _run(["report", "--data", data, "--model", model, "--target",
                             "target", "--out", tiny / "r.html", *FAST], capsys)
        assert code == 1 and "No space left" in _one_error_line(err)
        assert list(tiny.iterdir()) == []
    finally:
        subprocess.run(["umount", str(tiny)], check=True)


HOSTILE = {
    "rtl": "\u202eevil\u202c name",
    "zero_width": "a\u200bb\u200dc\ufeff",
    "long": "n" * 6000,
    "comment": "<!-- x",
    "template": "{{ 7*7 }} ${7*7} {% raw %}",
    "separator": "line\u2028break\u2029para",
}


@pytest.mark.browser
def test_hostile_strings_in_every_position_are_shown_as_text(tmp_path, capsys):
    names = (HOSTILE["rtl"] + HOSTILE["template"], HOSTILE["long"],
             HOSTILE["comment"] + HOSTILE["separator"])
    levels = (HOSTILE["zero_width"], HOSTILE["template"], HOSTILE["comment"] + HOSTILE["rtl"])
    data, model = _files(tmp_path, names, levels)
    # the files' names reach the page's title and source line
    odd = "<!-- m \u2028{{ 7*7 }}\u202e"
    model = model.rename(tmp_path / f"{odd}.skops")
    data = data.rename(tmp_path / f"{odd}.csv")
    out = tmp_path / "r.html"
    code, _, err = _run(["report", "--data", data, "--model", model, "--target", "target",
                         "--out", out, "--sample", "40", "--explain", "2", "--grid", "3"],
                        capsys)
    assert code == 0, err
    page = out.read_text(encoding="utf-8")
    assert "<!-- m" not in page
    assert html.escape("<!-- m", quote=False) in page or "\\u003c!-- m" in page
    # the template strings were not evaluated, the comment opener never raw in the page
    assert html.escape("<!-- x", quote=False) in page or "\\u003c!-- x" in page
    for text in (HOSTILE["template"], HOSTILE["rtl"], HOSTILE["zero_width"][:2]):
        assert html.escape(text, quote=False) in page or text in page
    assert "<!-- x" not in page
    assert "n" * 6000 in page  # a long name is shown whole somewhere (the data section)
    # in Chromium: no planted comment opener became a comment (it would swallow the page
    # after it), and the page shows every planted string as its text
    shown = _in_the_browser(out)
    assert not [c for c in shown["comments"] if " x" in c or " m" in c], shown["comments"]
    for text in ("<!-- x", "<!-- m", HOSTILE["template"], "{{ 7*7 }}", HOSTILE["rtl"],
                 "n" * 6000):
        assert text in shown["text"], text[:40]
    assert not shown["pwned"] and shown["sections"] >= 3


#: What the page holds once Chromium has read it: its comment nodes, the text shown.
_SHOWN = r"""(() => {
  const walk = document.createTreeWalker(document, NodeFilter.SHOW_COMMENT);
  const comments = [];
  while (walk.nextNode()) comments.push(walk.currentNode.data);
  return {comments, text: document.body.innerText,
          sections: document.querySelectorAll("section").length,
          pwned: document.body.hasAttribute("data-pwned")};
})()"""


def _in_the_browser(page):
    """:data:`_SHOWN` of ``page`` in the test process's headless Chromium."""
    from support import tab

    browser = tab(page, 1280)
    try:
        return browser.evaluate(_SHOWN)
    finally:
        browser.close()


# --- found by the randomized path fuzzer (tests/fuzz/safety_fuzz.py) ---------------------

def test_an_out_name_too_long_for_the_file_system_is_one_line_before_any_work(tmp_path,
                                                                                capsys):
    data, model = _files(tmp_path)
    out = tmp_path / ("n" * 270 + ".html")
    code, _, err = _run(["report", "--data", data, "--model", model, "--target", "target",
                         "--out", out, *FAST], capsys)  # was an OSError's traceback
    assert code == 2 and "File name too long" in _one_error_line(err)
    code, _, err = _run(["report", "--data", tmp_path / ("d" * 270 + ".csv"), "--model",
                         model, "--out", tmp_path / "r.html", *FAST], capsys)
    assert code == 2 and "File name too long" in _one_error_line(err)


def test_a_name_near_the_limit_is_written(tmp_path):
    # the part file's name was the target's plus a prefix and a suffix: over 255 bytes
    target = tmp_path / ("n" * 250 + ".html")
    write_atomic(target, lambda name: Path(name).write_text("whole"))
    assert target.read_text() == "whole" and [p.name for p in tmp_path.iterdir()] == \
        [target.name]


def test_out_as_a_link_into_a_missing_folder_is_refused_before_any_work(tmp_path, capsys):
    data, model = _files(tmp_path)
    link = tmp_path / "report.html"
    link.symlink_to(tmp_path / "nowhere" / "r.html")
    code, _, err = _run(["report", "--data", data, "--model", model, "--target", "target",
                         "--out", link, *FAST], capsys)
    assert code == 2 and "does not exist" in _one_error_line(err)
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()
