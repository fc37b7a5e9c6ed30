"""Nothing from the working directory runs (issue 34).

A process the library or the command line starts must not import what lies in
the folder the user happens to work in: ``python -c`` puts that folder first on
``sys.path``, so a ``pickle.py`` there ran inside the report's compile child.
The planted modules below write a marker when imported; the caches are empty,
so the kernels compile (in the background child) as right after installing.
"""

import os
import pathlib
import subprocess
import sys

import modellens as ml

ROOT = pathlib.Path(ml.__file__).resolve().parents[1]  # the folder holding modellens/
PLANTED = ("pickle", "numba", "numpy", "modellens", "sitecustomize", "usercustomize",
           "threadpoolctl", "importlib")


def _plant(folder, marker):
    for name in PLANTED:
        (folder / f"{name}.py").write_text(
            f"with open({str(marker)!r}, 'a') as f:\n"
            f"    f.write('{name} ran in pid ' + str(__import__('os').getpid()) + '\\n')\n"
            "raise ImportError('planted')\n")


def test_a_cold_demo_imports_nothing_from_the_working_directory(tmp_path):
    work = tmp_path / "project"
    work.mkdir()
    marker = tmp_path / "ran.txt"
    _plant(work, marker)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"),
               MPLCONFIGDIR=str(tmp_path / "mpl"),
               # (an empty entry would put the working directory on the path: none added)
               PYTHONPATH=os.pathsep.join(
                   p for p in [str(ROOT), os.environ.get("PYTHONPATH", "")] if p))
    # -P: the command itself does not put the working directory on its path (as the
    # installed `modellens` script does not); what it starts must not either
    done = subprocess.run([sys.executable, "-P", "-m", "modellens", "demo", "--out",
                           str(tmp_path / "out"), "--grid", "5", "--explain", "5"],
                          cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not marker.exists(), marker.read_text()
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert 'id="shapley"' in page and "TreeSHAP" in page
    # the background compile did run, and wrote the kernels to the (empty) cache
    assert any((tmp_path / "numba").rglob("*.nbi"))
