"""
The HTML report
===============

``ml.report`` runs the methods of this library on one model and one data set
and writes a single self-contained HTML page: the data and how strongly the
features depend on each other (with a warning where PD would extrapolate),
the model's quality, PD with ICE beside ALE for every feature, the strongest
interaction as a 2-D ALE heatmap, Shapley values and LIME for chosen rows,
and a footer recording what was run.

This example keeps the samples small so that it runs in seconds; the
defaults (2,000 rows for effects, 50 explained rows) are meant for real use.
See :doc:`/user_guide/report` for how to read each section.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor

import modellens as ml

X, y = load_diabetes(return_X_y=True, as_frame=True)
model = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(
    X, y
)

# The settings can be kept in one object (checked when it is made) and reused;
# a keyword beside it replaces that one setting.
options = ml.ReportOptions(
    sample=300, n_explain=20, n_background=20, grid=10, max_features=4, random_state=0,
)
rep = ml.report(model, X, y, options=options, title="Diabetes progression")
out = Path(tempfile.mkdtemp()) / "report.html"
rep.save(out)
print(f"wrote {out.name}: {out.stat().st_size / 1e6:.1f} MB")
print("sections:", list(rep.sections))

# %%
# In a notebook, ``rep`` on the last line of a cell shows the page inline.
# Every section also keeps the numbers and result objects it shows, so
# nothing on the page has to be recomputed:

effects = rep.sections["effects"].data
top = effects["order"][0]
print("features by importance:", effects["order"][:4])

fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
effects["pdp"][top].plot(ax=axes[0])  # an Effects mapping
effects["ale"][top].plot(ax=axes[1])  # a dict of Effect, feature -> ALE
axes[0].set_title(f"PD and ICE of {top}")
axes[1].set_title(f"ALE of {top}")

# %%
# The Shapley section's attributions are an ordinary
# :class:`~modellens.Attributions`:

ax = rep.sections["shapley"].data["attributions"].plot.beeswarm()

# %%
# The footer: versions, settings, sample sizes, seed and time of each section.

for key, value in rep.footer():
    print(f"{key:>36s}: {value}")

# %%
# From the command line
# ---------------------
# The same page, without writing Python::
#
#     modellens demo       # a bundled model: modellens-demo/report.html
#     modellens report --data test.csv --target price \
#                      --model model.skops --out report.html
#
# ``--model`` takes a `skops <https://skops.readthedocs.io>`_ file, which
# cannot run code when it is loaded; pickle and joblib files are accepted only
# with ``--trust-model-file``.  ``modellens report --help`` lists the options.

# %%
# Files, read safely
# ------------------
# The command line reads its files with two public functions that a script
# can call too: :func:`~modellens.load_model` (skops, XGBoost and LightGBM
# files are checked before they are loaded; pickles only with ``trust=True``)
# and :func:`~modellens.read_data` (each column read as the model was fit on
# it).

from pathlib import Path

import numpy as np
import skops.io

folder = Path(tempfile.mkdtemp())
skops.io.dump(model, folder / "model.skops")
X.to_csv(folder / "test.csv", index=False)
same_model = ml.load_model(folder / "model.skops")
same_X = ml.read_data(folder / "test.csv", model=same_model)
print("same predictions:",
      bool(np.allclose(same_model.predict(same_X), model.predict(X))))
