"""numba's cache of the kernels is keyed on the whole package, not on each kernel's file.

numba stamps a file's cached machine code with that file's contents; a kernel's machine
code also holds its jitted callees from other modules.  After an edit of
``trees/_checks_lightgbm_floats.py`` the cached pass of ``_checks_lightgbm_pass.py``
kept the old callee: a fresh process ran stale machine code.  These tests run on a copy
of the package with two small kernel modules added (a caller and its callee in another
module), in fresh processes over one ``NUMBA_CACHE_DIR``, as a user's later sessions.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

import modellens as ml
from modellens import _kernel_cache

SRC = pathlib.Path(ml.__file__).resolve().parent

CALLEE = "from numba import njit\n\n\n@njit(cache=True)\ndef callee(x):\n    return x + {k}\n"
CALLER = textwrap.dedent("""
    from numba import njit

    from ._probe_callee import callee


    @njit(cache=True)
    def caller(x):
        return 10 * callee(x)
""")
RUN = textwrap.dedent("""
    import modellens
    from modellens.trees._probe_caller import caller
    assert modellens.__file__.startswith({root!r}), modellens.__file__
    print(caller(1), caller.stats.cache_hits.most_common(), flush=True)
""")


@pytest.fixture()
def package(tmp_path):
    """A copy of the package (without numba's caches) holding a caller and its callee.
    Python's bytecode of the package's own files comes along (it is checked against the
    copied sources' sizes and times, which the copy keeps): without it each child
    compiled the whole package's bytecode again (0.5 of its 2.3 s of CPU)."""
    root = tmp_path / "src"
    shutil.copytree(SRC, root / "modellens",
                    ignore=shutil.ignore_patterns("*.nbi", "*.nbc", "modellens-warm-*"))
    (root / "modellens" / "trees" / "_probe_callee.py").write_text(CALLEE.format(k=1))
    (root / "modellens" / "trees" / "_probe_caller.py").write_text(CALLER)
    return root


def _run(root, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(root))
    env.pop("NUMBA_CACHE_LOCATOR_CLASSES", None)
    # Python's own bytecode cache is keyed on a source's size and time, which the edit
    # below keeps: the child writes none, so the probes are read from their sources
    # (numba's cache is under test)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run([sys.executable, "-c", RUN.format(root=str(root))], env=env,
                          cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    value, hits = done.stdout.strip().splitlines()[-1].split(" ", 1)
    return int(value), hits != "[]"


def test_an_edited_callee_in_another_module_is_compiled_again(package, tmp_path):
    cache = tmp_path / "numba"
    assert _run(package, cache) == (20, False)  # compiled: 10 * (1 + 1)
    assert _run(package, cache) == (20, True)  # unchanged: loaded from the cache
    callee = package / "modellens" / "trees" / "_probe_callee.py"
    stat = callee.stat()
    callee.write_text(CALLEE.format(k=2))  # same size; same time too, as a coarse clock
    os.utime(callee, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    # the caller's file is unchanged: numba alone loaded its old machine code (20)
    assert _run(package, cache) == (30, False)
    assert _run(package, cache) == (30, True)


def test_every_cached_kernel_is_stamped_with_the_package_key():
    """Every kernel module (all of them live in ``trees`` and ``engine``) caches through
    the package's locators: one imported before the packages registered them would not."""
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher

    for package in ("modellens.trees", "modellens.engine"):
        for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
            importlib.import_module(f"{package}.{info.name}")
    kernels = [(name, key, f) for name, module in list(sys.modules.items())
               if name.startswith("modellens") for key, f in vars(module).items()
               if isinstance(f, CPUDispatcher) and f.py_func.__module__ == name
               and f._cache.__class__.__name__ != "NullCache"]
    assert len(kernels) > 50
    wrong = [f"{name}.{key}" for name, key, f in kernels
             if f._cache._cache_file._source_stamp != _kernel_cache.code_key()]
    assert not wrong, f"kernels keyed on their own file only: {wrong}"


def test_the_key_reads_contents_not_times(monkeypatch, tmp_path):
    """Any edit gives another key, even of the same size at the same time; a file
    touched (a fresh checkout of the same code) keeps it."""
    keys = []
    package = tmp_path / "p"
    (package / "sub").mkdir(parents=True)
    monkeypatch.setattr(_kernel_cache, "_HERE", package)
    for text, time in (("x = 1", 10**18), ("x = 2", 10**18), ("x = 2", 2 * 10**18)):
        (package / "sub" / "k.py").write_text(text)
        os.utime(package / "sub" / "k.py", ns=(time, time))
        _kernel_cache.code_key.cache_clear()
        keys.append(_kernel_cache.code_key())
    _kernel_cache.code_key.cache_clear()
    assert keys[0] != keys[1] and keys[1] == keys[2]
