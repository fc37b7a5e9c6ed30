"""The report's "What changed" section (issue 44): ml.shift from reference data to the data.

Oracles: a direct ``ml.shift`` call with the same seed (the section must show its
numbers, not numbers of its own); a shift planted in one feature (the section must
name it first and find the others within their errors); reference data with other
columns or other kinds of values (a clear error before any model call).
"""

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from cli_support import _one_error_line, _run
from sklearn.linear_model import LinearRegression

import modellens as ml
from modellens.report._interactive import explorer_payload

SMALL = dict(sample=200, n_explain=3, n_background=20, grid=5, progress=False,
             random_state=0)


def _two(seed=0, n=400):
    """Reference and current data of one model; only ``b`` moved (by 1 sd)."""
    rng = np.random.default_rng(seed)
    ref = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    cur = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    cur["b"] += 1.0
    w = np.array([2.0, 3.0, -1.0])
    y_ref = ref.to_numpy() @ w + rng.normal(size=n)
    y_cur = cur.to_numpy() @ w + 0.5 + rng.normal(size=n)  # and the labels moved
    model = LinearRegression().fit(ref, y_ref)
    return model, ref, y_ref, cur, y_cur


def test_section_shows_the_numbers_of_shift_and_names_the_planted_feature_first():
    model, ref, y_ref, cur, y_cur = _two()
    rep = ml.report(model, cur, y_cur, X_reference=ref, y_reference=y_ref,
                    sections=["changed", "effects"], **SMALL)
    sec = rep.sections["changed"]
    direct = ml.shift(model, ref, cur, random_state=0)
    moved = sec.data["prediction"]
    np.testing.assert_array_equal(moved.contribution, direct.contribution)
    np.testing.assert_array_equal(moved.p_value, direct.p_value)
    assert moved.total_change == direct.total_change
    loss = ml.shift(model, ref, cur, y_ref, y_cur, random_state=0)
    np.testing.assert_array_equal(sec.data["metric"].contribution, loss.contribution)
    assert sec.data["metric"].metric == "squared_error"
    # the planted feature first, everywhere the section names features
    assert sec.data["order"][0] == "b"
    assert sec.tables[0].rows[0][0].text == "b"
    frame = moved.to_frame().set_index("feature")
    assert abs(frame.contribution["b"] - 3.0) <= 4 * frame["std"]["b"]
    assert frame.p_value["b"] < 1e-6
    others = frame.loc[["a", "c"]]
    assert np.all(np.abs(others.contribution) <= 4 * others["std"])
    # the table prints the shift's numbers (Holm p-values among them)
    cells = [[c.text for c in row] for row in sec.tables[0].rows]
    assert cells[0][1] == f"{direct.contribution[1]:.4g}"
    assert cells[0][4] == f"{direct.p_value[1]:.3g}"
    assert [row[0] for row in cells][-1] == "(unexplained)"
    # before / after PD of the moved feature: a linear model's PD has its slope on both
    before, after = sec.data["before_after"]["b"]
    np.testing.assert_allclose(np.diff(after.values) / np.diff(after.grid), 3.0, rtol=0.05)
    np.testing.assert_allclose(after.grid, before.grid)
    # the explorer's part: the same order and numbers, the planted feature picked first
    part = explorer_payload(rep.sections)["changed"]
    assert part["names"][0] == "b" and part["features"][0] == "b"
    assert part["contribution"][0] == pytest.approx(direct.contribution[1], rel=1e-4)
    page = rep.to_html()
    assert 'data-ml-part="changed"' in page and "What changed" in page


def test_no_reference_no_section_and_metric_needs_both_labels():
    model, ref, y_ref, cur, y_cur = _two(1, n=120)
    rep = ml.report(model, cur, y_cur, sections=["changed"], **SMALL)
    assert "changed" not in rep.sections
    rep = ml.report(model, cur, y_cur, X_reference=ref, sections=["changed"], **SMALL)
    assert rep.sections["changed"].data["metric"] is None
    assert any("needs the labels of both" in n for n in rep.sections["changed"].notes)


def test_bad_reference_is_refused_before_any_model_call():
    model, ref, y_ref, cur, y_cur = _two(2, n=60)
    calls = []

    def counted(A):
        calls.append(len(A))
        return model.predict(A)

    bad = {
        "must hold X's columns": ref.rename(columns={"c": "d"}),
        "holds numbers in X": ref.assign(b=ref["b"].map(lambda v: f"{v:.2f}")),
    }
    for message, frame in bad.items():
        with pytest.raises(ml.InvalidParameterError, match=message):
            ml.report(counted, cur, X_reference=frame, sections=["changed"], **SMALL)
    with pytest.raises(ml.InvalidParameterError, match="one target per row of X_reference"):
        ml.report(counted, cur, y_cur, X_reference=ref, y_reference=y_ref[:-1],
                  sections=["changed"], **SMALL)
    with pytest.raises(ml.InvalidParameterError, match="pass y as well"):
        ml.report(counted, cur, X_reference=ref, y_reference=y_ref, sections=["changed"],
                  **SMALL)
    with pytest.raises(ml.InvalidParameterError, match="pass X_reference"):
        ml.ReportOptions(y_reference=y_ref)
    # a categorical column: a level the current data's categories lack would become missing
    kinds = pd.CategoricalDtype(["u", "v"])
    cur_k = cur.assign(k=pd.Series(["u", "v"] * 30, dtype=kinds))
    with pytest.raises(ml.InvalidParameterError,
                       match=r"X_reference column 'k' holds levels \['w'\]"):
        ml.report(counted, cur_k, X_reference=ref.assign(k=["u", "w"] * 30),
                  sections=["changed"], **SMALL)
    assert calls == []
    # columns in another order are X's columns: read in X's order
    rep = ml.report(model, cur, X_reference=ref[["c", "a", "b"]], sections=["changed"],
                    **SMALL)
    np.testing.assert_array_equal(rep.sections["changed"].data["prediction"].contribution,
                                  ml.shift(model, ref, cur, random_state=0).contribution)


def test_command_line_reference(tmp_path, capsys):
    model, ref, y_ref, cur, y_cur = _two(3, n=150)
    sio.dump(model, tmp_path / "m.skops")
    cur.assign(y=y_cur).to_csv(tmp_path / "cur.csv", index=False)
    ref.assign(y=y_ref).to_csv(tmp_path / "ref.csv", index=False)
    out = tmp_path / "r.html"
    base = ["report", "--data", tmp_path / "cur.csv", "--model", tmp_path / "m.skops",
            "--target", "y", "--static", "--sample", "100", "--explain", "3", "--grid", "4"]
    code, _, err = _run(base + ["--reference", tmp_path / "ref.csv", "--out", out], capsys)
    assert code == 0, err
    page = out.read_text(encoding="utf-8")
    assert "What changed" in page and "squared_error" in page
    ref.rename(columns={"c": "d"}).to_csv(tmp_path / "other.csv", index=False)
    code, _, err = _run(base + ["--reference", tmp_path / "other.csv", "--out", out], capsys)
    assert code != 0 and "--reference other.csv" in _one_error_line(err)
    ref.assign(b="high").to_csv(tmp_path / "text.csv", index=False)
    code, _, err = _run(base + ["--reference", tmp_path / "text.csv", "--out", out], capsys)
    line = _one_error_line(err)  # the model records no dtypes: the report's check says it
    assert code != 0 and "'b' holds numbers in X" in line and "X_reference" in line
    code, _, err = _run(base + ["--reference", tmp_path / "ref.csv", "--out",
                                tmp_path / "ref.csv"], capsys)
    assert code != 0 and "--reference" in _one_error_line(err)
