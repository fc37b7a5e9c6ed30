"""
Partial dependence, ICE and centred ICE
=======================================

Partial dependence (PD) answers *"what does the model predict on average when
this feature is set to a value, everything else left as it is?"*; the ICE
curves are the same question asked of each row separately, and centred ICE
(c-ICE) pins every curve to zero at the left end so that differences in
*shape* (interactions) stand out from differences in level.

We fit a gradient-boosting model on scikit-learn's bundled diabetes data
(442 patients, 10 standardised features, a disease-progression score).
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor

import modellens as ml

X, y = load_diabetes(return_X_y=True, as_frame=True)
model = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(
    X, y
)

# %%
# PD with ICE curves
# ------------------
# ``ice=True`` keeps every row's curve; the thick line is their mean, the PD.
# Parallel ICE curves mean the feature acts additively; curves that cross or
# fan out mean it interacts with other features.

effects = ml.pdp(model, X, ["bmi", "s5", "bp"], ice=True, random_state=0)
axes = effects.plot()

# %%
# Centred ICE
# -----------
# ``center=True`` subtracts each curve's value at the first grid point.  The
# spread at the right end is how differently the rows react to the same
# change of ``bmi``.

centred = ml.pdp(model, X, ["bmi"], ice=True, center=True, random_state=0)
fig, ax = plt.subplots(figsize=(5, 3.5))
centred["bmi"].plot(ax=ax)

# %%
# Two features at once, and a categorical one
# -------------------------------------------
# A pair ``("bmi", "s5")`` in ``features`` gives a 2-D PD (a heatmap);
# a categorical column gives one value per level.  Here ``sex`` is turned
# into a pandas categorical and the model refitted on it.

Xc = X.assign(
    sex=(X["sex"] > 0).map({True: "b", False: "a"}).astype("category")
)
model_c = HistGradientBoostingRegressor(
    max_iter=100, categorical_features="from_dtype", random_state=0
).fit(Xc, y)
two = ml.pdp(model_c, Xc, [("bmi", "s5"), "sex"], grid=15)
axes = two.plot()

# %%
# The numbers behind the pictures
# -------------------------------
# Every result is plain data: ``grid`` and ``values`` arrays, a long table,
# and a JSON-safe dictionary that restores the same object.

import json

e = effects["bmi"]
print(e.grid[:5], e.values[:5], e.ice.shape)
print(effects.to_frame().head())
restored = ml.Effects.from_dict(json.loads(json.dumps(effects.to_dict())))
print(restored["bmi"].values[:3])
