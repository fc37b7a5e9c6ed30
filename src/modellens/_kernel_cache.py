"""numba's on-disk cache of this library's kernels, keyed on the whole package's source.

numba stamps each file's cached machine code with that file's own contents, and reads
it back while they are unchanged.  A kernel's machine code also holds what it calls in
other modules (jitted callees are compiled into their callers) and the values of the
globals it reads, frozen at compile time: after an edit of
``trees/_checks_lightgbm_floats.py``, the cached pass of ``_checks_lightgbm_pass.py``
kept running the old callee until its cache files were deleted.  An editable checkout,
a shared ``NUMBA_CACHE_DIR`` or a cache restored by CI could so run stale machine code:
a silent wrong answer.

:func:`keep_kernels_fresh` registers numba cache locators for this package's files that
cache where numba's own would (``NUMBA_CACHE_DIR``, the ``__pycache__`` beside the
sources, the user-wide folder) under the same file names, but whose stamp is
:func:`code_key`, a hash of every source file of the package: any edit anywhere makes
every kernel compile once more, an unchanged package (a reinstall, a fresh checkout of
the same commit) keeps its cache.  The packages that hold kernels (``trees``,
``engine``) call it before their kernel modules are imported.
"""

from __future__ import annotations

import platform
import sys
from functools import lru_cache
from hashlib import sha256
from pathlib import Path

__all__ = ["code_key", "keep_kernels_fresh"]

#: The package's folder: the files :func:`code_key` hashes and the locators serve.
_HERE = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
def code_key() -> str:
    """What this library's compiled kernels depend on, hashed: numba's and Python's
    versions, the machine, the package's folder and the contents of every source file
    (contents, not times: a reinstall or a fresh checkout of the same code keeps the
    key; about 25 ms of CPU once per process)."""
    from importlib.metadata import version

    digest = sha256("\n".join([version("numba"), sys.version, platform.machine(),
                               str(_HERE)]).encode())
    for path in sorted(_HERE.rglob("*.py")):
        digest.update(f"\n{path.relative_to(_HERE).as_posix()}\n".encode())
        digest.update(sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


@lru_cache(maxsize=1)
def keep_kernels_fresh() -> None:
    """Register the package-keyed locators ahead of numba's own (once per process).

    Each one serves only files under this package and otherwise answers as the numba
    locator it extends, so the cache stays where users have it; files elsewhere (the
    user's own kernels) keep numba's stamps.  Under ``NUMBA_CACHE_LOCATOR_CLASSES``
    numba uses the locators named there, not these.
    """
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")
    ours = [_package_locator(getattr(caching, name, None) or getattr(caching, "_" + name), _HERE)
            for name in ("UserProvidedCacheLocator", "InTreeCacheLocator",
                         "UserWideCacheLocator")]
    impl._locator_classes[:0] = ours


def _package_locator(base, here: Path):
    """numba's locator ``base``, for the files under ``here`` only, stamped :func:`code_key`."""

    class PackageLocator(base):
        def get_source_stamp(self):
            return code_key()

        @classmethod
        def from_function(cls, py_func, py_file):
            try:
                inside = Path(py_file).resolve().is_relative_to(here)
            except (OSError, TypeError, ValueError):
                inside = False
            return super().from_function(py_func, py_file) if inside else None

    PackageLocator.__name__ = PackageLocator.__qualname__ = f"Package{base.__name__.lstrip('_')}"
    return PackageLocator
