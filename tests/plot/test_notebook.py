"""The README's plots in a real Jupyter kernel: each picture shown once, no frozen progress bar.

The README's plotting lines are read from the README itself, run one per cell
of a notebook executed headless (nbclient, ipykernel, matplotlib's inline
backend), with progress bars on; the saved outputs are then read as a
viewer would: images per cell, and what is left of each progress bar.
"""

import pathlib
import re

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]  # a Jupyter kernel starts

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
PLOT = re.compile(r"\.plot(\.\w+)?\(")

#: The README's data and model (its "Explain my scikit-learn model" block, without the
#: report), plus the names its "Use" block takes as given.
SETUP = """\
%matplotlib inline
import matplotlib.pyplot as plt
import modellens as ml
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.model_selection import train_test_split

X, y = load_diabetes(return_X_y=True, as_frame=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
model = HistGradientBoostingRegressor(random_state=0).fit(X_train, y_train)
attr = ml.shapley(model, X_test[:30], background=X_train.sample(20, random_state=0))
effects = ml.pdp(model, X_test, ["age", "bmi", ("bmi", "bp")], ice=True, center=True)
regions = ml.regions(model, X_test, ["bmi"], effect="ale", random_state=0)
"""


def readme_plot_lines():
    """Every statement of the README's Python blocks that draws a plot."""
    text = README.read_text()
    found = []
    for block in re.findall(r"```python\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            code = line.split("  #")[0].strip()
            for statement in code.split(";"):
                statement = statement.strip()
                if PLOT.search(statement) and "=" not in statement.split("(")[0]:
                    found.append(statement)
    return found


def _cell(statement):
    # ml.config is a context variable, which does not outlive a cell: each cell sets it,
    # and ends on the statement's value, as the bare line would
    setup = "fig, ax = plt.subplots()\n" if "ax=ax" in statement else ""
    return (f"{setup}with ml.config(progress=True):\n    _value = {statement}\n_value")


def _texts(output):
    if output.output_type == "stream":
        return [output.text]
    return [output.get("data", {}).get("text/plain", "")]


def test_the_readme_has_plot_lines():
    lines = readme_plot_lines()
    assert "ml.ale(model, X_test).plot()" in lines
    assert {"effects.plot()", "attr.plot.waterfall(0)", "attr.plot.beeswarm()"} <= set(lines)
    assert any("lime_width_sweep" in line for line in lines)


def test_readme_plots_show_once_in_a_notebook_and_leave_no_frozen_bar():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    lines = readme_plot_lines()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SETUP)] + \
        [nbformat.v4.new_code_cell(_cell(line)) for line in lines]
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3").execute()
    # the notebook as saved, read back
    saved = nbformat.reads(nbformat.writes(nb), as_version=4)
    bars = 0
    for line, cell in zip(lines, saved.cells[1:]):
        images = [o for o in cell.outputs if "image/png" in o.get("data", {})]
        assert len(images) == 1, f"{line}: {len(images)} pictures"
        value = [o for o in cell.outputs if o.output_type == "execute_result"]
        assert value and "Figure" not in value[0]["data"]["text/plain"], line
        for text in (t for o in cell.outputs for t in _texts(o)):
            states = [s for s in re.split(r"[\r\n]", text) if "%|" in s]
            # a bar's last state left in the file is its finished line
            assert not states or "100%|" in states[-1], f"{line}: {states[-1]!r}"
            bars += bool(states)
    # the bars were on: one for each line that asks the model (the others draw results)
    assert bars == sum("ml." in line for line in lines) >= 2
