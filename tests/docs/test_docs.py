"""The documentation: every public name has an API page and a gallery example, the
package ships its type information, and (slow) the site builds offline with warnings
as errors and the gallery runs."""

import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

import modellens as ml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXAMPLES = DOCS / "examples"
PUBLIC = [name for name in ml.__all__ if name != "__version__"]
#: pages of the user guide (docs/user_guide/<name>.rst), one per method family and more
GUIDE = ["index", "pdp_ice", "mplot", "ale", "dale", "outputs", "shapley", "lime", "report",
         "reading_the_report", "dask", "coming_from"]

#: gallery examples that print rather than draw
NO_FIGURE = {"plot_13_errors_warnings"}

needs_docs = pytest.mark.skipif(not DOCS.is_dir(), reason="no docs/ beside the tests")


def _autosummary_names(text):
    """Names listed under the autosummary directives of an rst file."""
    names = []
    for block in re.findall(r"^\.\. autosummary::\n((?:[ \t]+.*\n|\n)+)", text, flags=re.M):
        for line in block.splitlines():
            line = line.strip()
            if line and not line.startswith(":"):
                names.append(line.lstrip("~").rsplit(".", 1)[-1])
    return names


@needs_docs
def test_every_public_name_has_an_api_entry():
    listed = _autosummary_names((DOCS / "api.rst").read_text())
    missing = [name for name in PUBLIC if name not in listed]
    assert not missing, (f"add these names of modellens.__all__ to an autosummary list in "
                         f"docs/api.rst (one line each): {missing}")


def test_autosummary_parser_sees_entries_and_skips_options():
    text = ".. autosummary::\n   :toctree: generated/\n\n   pdp\n   ~a.b.Plots\n\nText\n"
    assert _autosummary_names(text) == ["pdp", "Plots"]


@needs_docs
def test_every_public_name_is_used_in_the_gallery():
    code = "\n".join(p.read_text() for p in sorted(EXAMPLES.glob("plot_*.py")))
    assert len(list(EXAMPLES.glob("plot_*.py"))) >= 12
    unused = [name for name in PUBLIC
              if not re.search(rf"\bml\.{re.escape(name)}\b|modellens\.{re.escape(name)}\b",
                               code)]
    # Result types are reached through what the functions return; the gallery uses
    # their attributes rather than naming them.
    reached = {"Effect", "Band", "Bins", "Report", "WidthSweep", "Interactions", "Importance",
               "DeletionCurves",
               "Warming",
               # the typed warnings are what the methods warn, with their fields
               "MissingValuesWarning", "UnknownLevelsWarning"}
    assert not [name for name in unused if name not in reached], unused


@needs_docs
def test_every_plot_method_is_drawn_in_the_gallery():
    code = "\n".join(p.read_text() for p in sorted(EXAMPLES.glob("plot_*.py")))
    for call in ["plot.waterfall(", "plot.force(", "plot.beeswarm(", "plot.bar(",
                 "plot.dependence(", "plot.weights(", "plot.text(", "plot.image(",
                 ".rebin(", "effects.plot()", "sweep.plot()", "ice=True", "center=True"]:
        assert call in code, call


def test_package_ships_py_typed():
    assert (Path(ml.__file__).parent / "py.typed").is_file()


def test_version_is_written_once():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in meta["project"]
    assert "version" in meta["project"]["dynamic"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "modellens._version.__version__"}
    assert "py.typed" in meta["tool"]["setuptools"]["package-data"]["modellens"]
    assert "modellens[docs]" in meta["project"]["optional-dependencies"]["test"]


@pytest.mark.slow
@pytest.mark.docs
@pytest.mark.timeout(1800)  # the gallery runs: minutes on a loaded machine
@needs_docs
def test_docs_build_with_warnings_as_errors(tmp_path):
    """Build a copy of docs/ (the gallery writes into its source folder) with -W."""
    pytest.importorskip("sphinx")
    pytest.importorskip("sphinx_gallery")
    src = tmp_path / "docs"
    shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns(
        "_build", "auto_examples", "generated", "sg_execution_times.rst"))
    shutil.copy(ROOT / "CHANGELOG.md", tmp_path / "CHANGELOG.md")
    out = tmp_path / "html"
    env = dict(os.environ, MPLBACKEND="Agg",
               # the modellens under test, wherever it is imported from
               PYTHONPATH=os.pathsep.join([str(Path(ml.__file__).parents[1]),
                                           os.environ.get("PYTHONPATH", "")]))
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
                          "-d", str(tmp_path / "doctrees"), str(src), str(out)],
                         env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    print(f"docs build: {seconds:.0f} s")
    assert run.returncode == 0, (run.stdout[-3000:] + "\n" + run.stderr[-6000:])

    for page in ["index", "install", "api", "changelog", "auto_examples/index"]:
        assert (out / f"{page}.html").is_file(), page
    for page in GUIDE:
        assert (out / "user_guide" / f"{page}.html").is_file(), page
    for name in PUBLIC:
        assert (out / "generated" / f"modellens.{name}.html").is_file(), name

    # Every example ran and drew: its page exists, holds its figures, and the images
    # are real pictures (not blank).
    from matplotlib.image import imread

    for script in sorted(EXAMPLES.glob("plot_*.py")):
        page = out / "auto_examples" / f"{script.stem}.html"
        assert page.is_file(), script.name
        if script.stem in NO_FIGURE:
            continue
        images = sorted((out / "_images").glob(f"sphx_glr_{script.stem}_[0-9]*.png"))
        assert images, f"{script.name} drew no figure"
        pixels = imread(images[0])
        assert pixels.std() > 0.01, f"{images[0].name} is blank"

    # What the examples printed is on their pages, and it states the checks they make.
    def text(stem):
        return (out / "auto_examples" / f"{stem}.html").read_text()

    assert "identical to the local run: True" in text("plot_12_dask")
    assert "base + sum of values == prediction: True" in text("plot_05_shapley")
    assert "additive: True" in text("plot_06_treeshap")
    assert "rows sum to values: True" in text("plot_06_treeshap")
    multiclass = text("plot_16_multiclass")
    assert "for_output equals target=: True" in multiclass
    assert "base + sum of values == prediction: True" in multiclass
    # the central figure: M-plot, PD and ALE panels of both features in one figure
    correlated = text("plot_02_correlated_features")
    for title in ["M-plot", "PD", "ALE"]:
        assert title in correlated
    # the API pages list the gallery examples that use each function
    assert "plot_02_correlated_features" in (out / "generated" / "modellens.ale.html").read_text()
