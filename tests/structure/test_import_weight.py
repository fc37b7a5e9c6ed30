"""``import modellens`` loads no heavy library that only some functions use.

Every process pays the import: each command (``modellens --version`` too), each
worker of a Dask cluster or a process pool, each test that starts a child.
SciPy's ``stats`` alone cost about 0.7 s of CPU time there (2.36 s to 1.65 s);
a module that needs one of these imports it in the function that uses it.
pandas and numba stay: the results are frames, the kernels are compiled
functions defined at import.
"""

import os
import subprocess
import sys
from pathlib import Path

import modellens

SRC = str(Path(modellens.__file__).resolve().parents[1])
#: Top-level names ``import modellens`` must leave unimported (``scipy`` itself is
#: imported by numba; its subpackages are what costs).
HEAVY = ("scipy.stats", "scipy.special", "scipy.sparse", "scipy.spatial", "scipy.optimize",
         "sklearn", "matplotlib", "torch", "dask", "distributed", "skops", "lightgbm",
         "xgboost", "polars", "sphinx")


def test_import_modellens_leaves_the_heavy_libraries_unimported():
    code = ("import sys, modellens, modellens.cli\n"
            f"heavy = {HEAVY!r}\n"
            "print('\\n'.join(sorted(m for m in sys.modules\n"
            "                        if any(m == h or m.startswith(h + '.') for h in heavy))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": SRC}, timeout=300)
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.split()
    assert not loaded, f"import modellens loads {sorted({m.split('.')[0] for m in loaded})}: " \
                       f"{loaded[:10]}"
