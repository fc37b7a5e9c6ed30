"""
The SHAP plots: waterfall, force, beeswarm, bar and dependence
==============================================================

Every :class:`~modellens.Attributions` result draws the usual pictures
through its ``plot`` attribute.  Here: exact Shapley values of a
gradient-boosting classifier on scikit-learn's bundled breast cancer data,
restricted to eight features so that the exact algorithm is cheap.
"""

from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import HistGradientBoostingClassifier

import modellens as ml

data = load_breast_cancer(as_frame=True)
features = [
    "mean radius",
    "mean texture",
    "mean smoothness",
    "mean concavity",
    "worst area",
    "worst concave points",
    "worst texture",
    "radius error",
]
X, y = data.data[features], data.target
clf = HistGradientBoostingClassifier(max_iter=30, random_state=0).fit(X, y)

# Probability of the benign class (class 1), explained on 50 rows against 20
# background rows: 50 x 2**8 x 20 = 256,000 model rows.
attr = ml.shapley(
    clf,
    X.iloc[:50],
    background=X.sample(20, random_state=0),
    algorithm="exact",
    response_method="predict_proba",
)
print(attr.output, attr.method)

# %%
# Waterfall: one row, from the base value (the mean prediction over the
# background) to the row's prediction, one bar per feature.

ax = attr.plot.waterfall(0)

# %%
# Force: the same row on one line, pushing up (red) and down (blue).

ax = attr.plot.force(0)

# %%
# Beeswarm: every explained row, every feature; colour is the feature's
# value, so "high values push the probability down" reads as red on the left.

ax = attr.plot.beeswarm()

# %%
# Bar: the mean absolute Shapley value per feature, a global importance.

ax = attr.plot.bar()

# %%
# Dependence: one feature's Shapley value against its value, coloured by
# another feature (chosen automatically, or give ``color=``).

ax = attr.plot.dependence("worst concave points", color="worst area")

# %%
# Rows and features are selected as in shap, and ``to_shap()`` hands the
# result to shap's own plots when you prefer them.

print(attr[:3, ["worst area", "mean radius"]].values)
print(type(attr.to_shap()).__name__)
