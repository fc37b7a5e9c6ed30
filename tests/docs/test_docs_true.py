"""The README and the docs front page say what the code offers (issue #42)."""

import inspect
import re
import subprocess
from pathlib import Path

import modellens as ml

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FRONT = (ROOT / "docs" / "index.rst").read_text(encoding="utf-8")
COMING = (ROOT / "docs" / "user_guide" / "coming_from.rst").read_text(encoding="utf-8")
PUBLIC_FUNCTIONS = [n for n in ml.__all__ if inspect.isfunction(getattr(ml, n))]


def test_readme_and_front_page_name_every_public_function():
    assert PUBLIC_FUNCTIONS
    for name in PUBLIC_FUNCTIONS:
        assert f"ml.{name}" in README, name
        assert f"modellens.{name}`" in FRONT, name


def test_the_wave_four_options_are_said():
    for option in ("ml.regions", "tol=", "groups=", "interactions=True", "target=None",
                   "sample_weight="):
        assert option in README, option
    for option in ("regions", "tol=", "groups=", "interactions=True", "target=None"):
        assert option in FRONT, option


def test_no_gallery_count_that_the_gallery_does_not_have():
    scripts = sorted((ROOT / "docs" / "examples").glob("plot_*.py"))
    for text in (README, FRONT):
        for said in re.findall(r"(\d+) (?:gallery )?(?:scripts|examples)", text):
            assert int(said) == len(scripts), said


def test_coming_from_has_effector_regions_and_shapiq_interactions():
    assert "effector.RegionalALE" in COMING and "ml.regions(" in COMING
    assert "shapiq" in COMING and "interactions=True" in COMING
    assert "sample_weight=w" in COMING


def test_no_generated_file_is_tracked_at_the_repository_root():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:  # not a git checkout (an sdist): nothing to check
        return
    at_root = [p for p in tracked.stdout.splitlines() if "/" not in p]
    assert not [p for p in at_root if p.endswith(".json")], at_root
