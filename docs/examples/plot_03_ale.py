"""
Accumulated local effects: first order, categorical and 2-D
===========================================================

ALE answers *"how does the prediction change, on average, when this feature
moves a little, for the rows that actually have values there?"*, and adds
those small changes up into a curve.  Because every row is only moved within
its own small bin, the model is never asked about combinations of features
that do not occur.

We use scikit-learn's bundled diabetes data again, with ``sex`` as a pandas
categorical column.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor

import modellens as ml

X, y = load_diabetes(return_X_y=True, as_frame=True)
X = X.assign(
    sex=(X["sex"] > 0).map({True: "b", False: "a"}).astype("category")
)
model = HistGradientBoostingRegressor(
    max_depth=3,
    learning_rate=0.05,
    categorical_features="from_dtype",
    random_state=0,
)
model.fit(X, y)

# %%
# First order, with a confidence band
# -----------------------------------
# The shaded band is a 95% confidence band for the curve (the uncertainty of
# each bin's mean difference, accumulated); the rug marks where the data are.
# A wide band over a stretch means few rows or disagreeing rows there.

effects = ml.ale(model, X, ["bmi", "s5", "sex"], bins=10)
axes = effects.plot()

# %%
# Per-bin numbers: the band, the counts and the spread of the local effects
# (``bins.std``, the heterogeneity: large values mean rows react differently,
# an interaction with other features).

bmi = effects["bmi"]
print("edges  ", bmi.grid.round(3))
print("ALE    ", bmi.values.round(1))
print("lower  ", bmi.band.lower.round(1))
print("counts ", bmi.bins.counts)
print("spread ", bmi.bins.std.round(1))

# %%
# A categorical feature has no natural order, so its levels are ordered by
# how similar the rows at each level are in the other features, and ALE steps
# between neighbouring levels.  ``sex`` has two levels: one step.

print(effects["sex"].grid, effects["sex"].values.round(2))

# %%
# Second order: the interaction of two features
# ---------------------------------------------
# A pair gives the second-order ALE: what the pair does *beyond* the sum of
# the two first-order effects.  A flat surface means no interaction.  Cells
# without data take the value of the nearest non-empty cell and are marked.

pair = ml.ale(model, X, [("bmi", "s5")], bins=8)
fig, ax = plt.subplots(figsize=(5.5, 4.5))
pair[("bmi", "s5")].plot(ax=ax)
print("empty cells:", int(pair[("bmi", "s5")].empty_cells.sum()))
