"""
What changed: two models, two data sets, two groups of rows
===========================================================

A model retrained on new data predicts differently; the data drifted; one
group of patients is explained differently from the others.  ``ml.compare``
explains the difference of two models row by row, ``ml.shift`` shares the
change of the mean prediction between two data sets among the features, and
``attr.compare_groups`` compares two groups of one explanation, each with
standard errors and Holm-adjusted tests.

Data: scikit-learn's bundled diabetes data; two gradient boosting models,
the second trained on the older patients only.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_diabetes
from sklearn.ensemble import GradientBoostingRegressor

import modellens as ml
from modellens.plot.change import plot_paired_beeswarm

X, y = load_diabetes(return_X_y=True, as_frame=True)
old = GradientBoostingRegressor(n_estimators=100, max_depth=3, random_state=0).fit(X, y)
older = X["age"] > 0
new = GradientBoostingRegressor(n_estimators=100, max_depth=3, random_state=0).fit(
    X[older], y[older])

# %%
# Two models: the trees of their difference
# -----------------------------------------
# Two tree ensembles are explained exactly in one traversal of the trees of
# ``f_new - f_old``; each row's values add up to its difference.

diff = ml.compare(old, new, X.iloc[:200], background=X.iloc[200:300])
print(diff.diagnostics["compare"], diff.output)
diff.plot.waterfall(0)
plt.show()

# %%
# Before and after, row by row: the features whose rows moved most on top.

background = X.iloc[200:300]
plot_paired_beeswarm(ml.shapley(old, X.iloc[:200], background=background, algorithm="tree"),
                     ml.shapley(new, X.iloc[:200], background=background, algorithm="tree"))
plt.show()

# %%
# Two data sets: which features moved the mean prediction
# -------------------------------------------------------
# The younger patients as the reference, the older ones as the current data.

drift = ml.shift(old, X[~older], X[older], random_state=0)
assert isinstance(drift, ml.Shift)
print(drift.to_frame().round(3).head(12))
drift.plot()
plt.show()

# %%
# Two groups of one explanation
# -----------------------------

attr = ml.shapley(old, X, background=X.iloc[:100], algorithm="tree")
groups = attr.compare_groups((X["sex"] > 0).to_numpy(), random_state=0)
assert isinstance(groups, ml.GroupComparison)
print(groups.to_frame().round(3).head())
groups.plot()
plt.show()
