"""The type checker is clean on src/ with the project's own configuration.

mypy runs as CI runs it: ``python -m mypy`` from the repository root, which reads
``[tool.mypy]`` in pyproject.toml (the package, the strictness, the untyped
libraries).  The test fails with mypy's report, so the errors read in the test
log.  mypy is in the ``test`` extra; only a local run without it skips.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]  # a cold run takes about a minute


def test_config_checks_the_package():
    # the test below is only as strong as the configuration it runs
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    config = meta["tool"]["mypy"]
    assert config["packages"] == ["modellens"]
    # checked as the oldest supported Python sees it: a call new in a later one is caught
    assert meta["project"]["requires-python"] == ">=" + config["python_version"]
    assert config["check_untyped_defs"] is True
    assert config["warn_unused_ignores"] is True


def test_mypy_is_clean_on_src():
    if importlib.util.find_spec("mypy") is None:
        if os.environ.get("CI"):
            pytest.fail("mypy is not installed; CI installs it with the test extra "
                        "(pip install '.[test]').")
        pytest.skip("mypy is not installed (pip install '.[test]')")
    # mypy_path = "src" in the configuration: this checkout's package is checked,
    # never an installed copy
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-color-output"],
                          cwd=ROOT, capture_output=True, text=True, timeout=1200)
    report = (proc.stdout + proc.stderr).strip()
    assert proc.returncode == 0, f"mypy found errors in src/:\n{report}"
