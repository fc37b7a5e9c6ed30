"""modellens demo: the report, and with --png the plots and tables."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from modellens.cli import main


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_demo_writes_the_report_and_with_png_the_plots_and_csv(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--grid", "6", "--rows", "3", "--png"]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path) in out
    report = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert report.startswith("<!DOCTYPE html>") and 'id="shapley"' in report
    for name in ("pdp_ice.png", "mplot.png", "ale.png", "shap_beeswarm.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for name in ("effects.csv", "shapley_values.csv"):
        assert (tmp_path / name).stat().st_size > 0
    table = pd.read_csv(tmp_path / "effects.csv")
    assert {"pdp", "mplot", "ale"} <= set(table["method"])
    assert "bmi" in set(table["feature"])
    assert np.isfinite(table["value"]).all()
    values = pd.read_csv(tmp_path / "shapley_values.csv")
    assert len(values) > 0


def test_demo_without_png_writes_only_the_report(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path / "new"), "--grid", "4", "--rows", "2"]) == 0
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["report.html"]
    # one total (the report's sections are a part of it, said as such), not two
    out = capsys.readouterr().out
    totals = [line for line in out.splitlines() if "total" in line or "done in" in line]
    assert len(totals) == 1 and "the report's sections" in totals[0], totals
