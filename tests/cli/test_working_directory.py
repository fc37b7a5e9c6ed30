"""Nothing from the working directory runs (issue 34).

A process the library or the command line starts must not import what lies in
the folder the user happens to work in: ``python -c`` puts that folder first on
``sys.path``, so a ``pickle.py`` there ran inside the report's compile child.
The planted modules below write a marker when imported.  The cold demo's numba cache
holds no warm-up stamp, so its report starts the background compile child, as right
after installing.
"""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from sklearn.ensemble import BaggingRegressor
from sklearn.linear_model import LinearRegression

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


def test_a_cold_demo_imports_nothing_from_the_working_directory(tmp_path,
                                                               kernels_without_stamps):
    """The demo's report starts its compile child (no method is stamped warm) and nothing
    runs from the working directory.  The child's path holds no working directory at all,
    so whether it compiles the kernels or loads them changes nothing it can import: the
    cache holds them (tests/conftest.py kernels_without_stamps): 38 s of CPU, not 72."""
    work = tmp_path / "project"
    work.mkdir()
    marker = tmp_path / "ran.txt"
    _plant(work, marker)
    kernels_without_stamps(tmp_path / "numba")
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
    # the background child did run: it stamped each method once its run ended
    stamps = (tmp_path / "numba").glob("modellens-warm-*")
    assert sorted(p.name.split("-")[2] for p in stamps) == ["effects", "interactions", "shapley"]


# --- the cluster's children (issue 40) ---------------------------------------------------
#
# `modellens report --workers N` and `ml.config(n_workers=N)` start Dask workers (and
# multiprocessing's resource tracker) as `python -c ...`, which puts the working
# directory first on their path.  The parent here runs as the installed `modellens`
# script does: a script file in another folder, no -I / -P flag to pass on.

DELEGATE = """\
import os, sys
with open({marker!r}, 'a') as _fh:
    _fh.write(__name__ + ' ran in pid ' + str(os.getpid()) + ' ' + repr(sys.argv) + '\\n')
# then the real module, so that the run goes on and every planted name gets its chance
del sys.modules[__name__]
_saved = sys.path[:]
sys.path[:] = [p for p in sys.path if p not in ('', os.getcwd())]
import importlib
_real = importlib.import_module(__name__)
sys.path[:] = _saved
sys.modules[__name__] = _real
"""

NAMES_SCRIPT = """\
import sys
def _names():
    import sys
    return [m.split('.')[0] for m in sys.modules]
if __name__ == "__main__":
    import numpy as np, modellens as ml
    import modellens.report, PIL.Image, matplotlib.backends.backend_agg
    from joblib import Parallel, delayed
    from modellens._config import get_config
    with ml.config(n_workers=1, progress=False):
        ml.pdp(lambda A: A[:, 0], np.zeros((20, 2)), grid=3)
        client = get_config()["client"]
        names = set().union(*client.run(_names).values())
    # a loky worker's (a model's predict with n_jobs=2) and what this process holds: a
    # forked picture process imports through its path
    names |= set().union(*Parallel(n_jobs=2)(delayed(_names)() for _ in range(2)))
    print(' '.join(sorted(names | set(_names()))))
"""

# what multiprocessing's resource tracker imports (it cannot be asked)
TRACKER = ("multiprocessing", "signal", "warnings", "_multiprocessing", "_posixshmem",
           "threading", "weakref", "struct", "pickle", "_pickle", "copyreg", "io", "socket",
           "selectors", "array", "tempfile", "itertools", "subprocess", "argparse")

LIBRARY_SCRIPT = """\
import os, signal, sys, time
if __name__ == "__main__":
    import numpy as np, modellens as ml
    X = np.random.default_rng(0).normal(size=(300, 3))
    def f(A):
        return A[:, 0] * 2.0 + A[:, 1]
    with ml.config(n_workers=2, progress=False):
        from modellens._config import get_config
        client = get_config()["client"]
        ml.pdp(f, X, grid=5)
        # a worker killed and restarted by its nanny: the new one is a child as well
        pid = next(iter(client.run(os.getpid).values()))
        os.kill(pid, signal.SIGKILL)
        for _ in range(600):
            time.sleep(0.1)
            try:  # (a broadcast may still meet the killed worker's closed connection)
                pids = list(client.run(os.getpid).values()) if len(client.nthreads()) == 2 \
                    else []
            except OSError:
                continue
            if len(pids) == 2 and pid not in pids:
                break
        else:
            sys.exit("the killed worker was not restarted")
        effect = ml.pdp(f, X, grid=5)
    local = ml.pdp(f, X, grid=5)
    for name in range(3):
        assert np.array_equal(effect[name].values, local[name].values)
    print("done")
"""


@pytest.fixture(scope="module")
def child_names(tmp_path_factory):
    """Top-level modules a Dask worker and the resource tracker import, less the interpreter's own.

    Listed once for the file's three tests (a cluster and a loky pool start): what
    the children import does not depend on the test that plants them."""
    pytest.importorskip("distributed")
    tmp_path = tmp_path_factory.mktemp("names")
    clean = tmp_path / "clean"
    clean.mkdir()
    (tmp_path / "names.py").write_text(NAMES_SCRIPT)
    done = subprocess.run([sys.executable, str(tmp_path / "names.py")], cwd=clean,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    startup = subprocess.run([sys.executable, "-I", "-c",
                              "import sys; print(' '.join(sys.modules))"],
                             capture_output=True, text=True, check=True).stdout.split()
    names = set(done.stdout.split()) | set(TRACKER)
    names -= set(startup) | set(sys.builtin_module_names) | {"__main__", "__mp_main__"}
    return sorted(n for n in names if n.isidentifier())


def _plant_delegates(folder, names, marker):
    for name in names:
        (folder / f"{name}.py").write_text(DELEGATE.format(marker=str(marker)))


def _run_planted(tmp_path, names, script_text, *args):
    """Run ``script_text`` from another folder in a working directory planted with ``names``."""
    work = tmp_path / "project"
    work.mkdir()
    marker = tmp_path / "ran.txt"
    _plant_delegates(work, names, marker)
    (tmp_path / "bin").mkdir()
    script = tmp_path / "bin" / "run.py"
    script.write_text(script_text)
    done = subprocess.run([sys.executable, str(script), *map(str, args)], cwd=work,
                          env=_script_env(), capture_output=True, text=True, timeout=600)
    return done, marker


def _script_env():
    # the worktree's code without putting any folder of the test on the path
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in [str(ROOT), os.environ.get("PYTHONPATH", "")] if p))


def test_a_local_cluster_imports_nothing_from_the_working_directory(tmp_path, child_names):
    names = child_names
    assert {"pickle", "numpy", "distributed", "dask", "modellens", "tornado", "joblib",
            "matplotlib", "PIL"} <= set(names)
    done, marker = _run_planted(tmp_path, names, LIBRARY_SCRIPT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "done" in done.stdout
    assert not marker.exists(), marker.read_text()[:3000]


def test_report_workers_imports_nothing_from_the_working_directory(tmp_path, child_names):
    names = child_names
    X = np.random.default_rng(0).normal(size=(200, 3))
    data = tmp_path / "data.csv"
    pd.DataFrame(X, columns=["a", "b", "c"]).assign(y=X[:, 0] - X[:, 1]).to_csv(data,
                                                                                 index=False)
    model = tmp_path / "model.skops"
    # a model whose predict starts joblib's loky pool (in this process and in each Dask
    # worker): loky's workers start as `python -m ...`, its tracker as `python -c ...`
    sio.dump(BaggingRegressor(LinearRegression(), n_estimators=4, n_jobs=2, random_state=0)
             .fit(pd.DataFrame(X, columns=["a", "b", "c"]), X[:, 0] - X[:, 1]), model)
    work = tmp_path / "project"
    work.mkdir()
    marker = tmp_path / "ran.txt"
    _plant_delegates(work, names, marker)
    (tmp_path / "bin").mkdir()
    script = tmp_path / "bin" / "modellens"  # as the installed entry point runs
    script.write_text("import sys\nfrom modellens.cli import main\n"
                      "if __name__ == '__main__':\n    sys.exit(main())\n")
    done = subprocess.run([sys.executable, str(script), "report", "--data", str(data),
                           "--target", "y", "--model", str(model), "--workers", "2",
                           "--grid", "5", "--explain", "5", "--sample", "100",
                           "--out", str(tmp_path / "report.html")],
                          cwd=work, env=_script_env(), capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not marker.exists(), marker.read_text()[:3000]
    assert 'id="shapley"' in (tmp_path / "report.html").read_text(encoding="utf-8")



LIBRARY_POOLS_SCRIPT = """\
import os, sys
if __name__ == "__main__":
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np, pandas as pd, modellens as ml
    from sklearn.ensemble import BaggingRegressor
    from sklearn.linear_model import LinearRegression
    from modellens.report import _render
    X = pd.DataFrame(np.random.default_rng(0).normal(size=(60, 2)), columns=["a", "b"])
    model = BaggingRegressor(LinearRegression(), n_estimators=2,
                             random_state=0).fit(X, X["a"]).set_params(n_jobs=2)
    effect = ml.pdp(model, X, grid=3)  # the model's loky pool starts inside the library
    assert np.allclose(effect["a"].values, np.linspace(X["a"].min(), X["a"].max(), 3))
    pids = sys.argv[1]
    encode = _render._encode
    def spy(fig, dpi):
        with open(pids, "a") as fh:
            fh.write(str(os.getpid()) + "\\n")
        return encode(fig, dpi)
    _render._encode = spy
    figures = []
    for i in range(_render.PARALLEL_FROM):
        fig, ax = plt.subplots()
        ax.plot([0, i])
        figures.append(_render.figure_from(fig, f"f{i}"))
    _render.render_figures(figures)
    assert all(f.png.startswith(b"\\x89PNG") for f in figures)
    print("done", os.getpid())
"""


def test_the_library_s_pools_and_picture_processes_import_nothing_from_the_working_directory(
        tmp_path, child_names):
    """A model's loky pool started by ``ml.pdp`` and the forked processes that encode pictures."""
    import multiprocessing

    pids = tmp_path / "pids.txt"
    done, marker = _run_planted(tmp_path, child_names, LIBRARY_POOLS_SCRIPT, pids)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not marker.exists(), marker.read_text()[:3000]
    parent = done.stdout.split()[-1]
    if "fork" in multiprocessing.get_all_start_methods() and len(os.sched_getaffinity(0)) > 1:
        # the pictures were encoded in forked processes, the path this test is about
        assert set(pids.read_text().split()) - {parent}


def test_the_safe_path_hold_is_counted_and_gives_back_what_was_there(monkeypatch):
    from modellens._children import safe_path

    for before in (None, "", "1", "x"):
        if before is None:
            monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
        else:
            monkeypatch.setenv("PYTHONSAFEPATH", before)
        with safe_path():
            assert os.environ["PYTHONSAFEPATH"] == (before or "1")
            with safe_path():  # a nested holder (another thread's call) changes nothing
                pass
            assert os.environ["PYTHONSAFEPATH"] == (before or "1")
        assert os.environ.get("PYTHONSAFEPATH") == before


def test_every_call_through_the_model_seam_holds_the_safe_path(monkeypatch):
    # outside the engine too (the trees' agreement check calls the seam directly): a
    # model's own pools started then import nothing from the working directory
    from modellens.data import Dataset
    from modellens.models import Model

    monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    seen = []

    def f(X):
        seen.append(os.environ.get("PYTHONSAFEPATH"))
        return X[:, 0]

    X = np.arange(6.0).reshape(3, 2)
    Model(f, Dataset.from_data(X)).predict(X)
    assert seen == ["1"] and "PYTHONSAFEPATH" not in os.environ
