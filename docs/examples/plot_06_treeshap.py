"""
TreeSHAP and interaction values
===============================

For tree ensembles (scikit-learn's trees, forests and gradient boosting,
XGBoost, LightGBM) Shapley values can be read from the trees themselves, with
no model calls: ``ml.shapley`` picks this ``"tree"`` algorithm by itself.

Two games are possible, and they answer different questions:

* **path-dependent** (no ``background``): an absent feature follows the
  training data's split proportions stored in the trees (shap's default);
* **interventional** (with a ``background``): an absent feature takes the
  background rows' values, the same game as the model-agnostic algorithms,
  and equal to ``algorithm="exact"`` on that background.

The first call compiles the tree kernels (a few seconds, cached afterwards).
"""

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.ensemble import GradientBoostingRegressor

import modellens as ml

X, y = load_diabetes(return_X_y=True, as_frame=True)
gbm = GradientBoostingRegressor(
    n_estimators=100, max_depth=3, random_state=0
).fit(X, y)

# %%
# Path-dependent values, with interactions
# ----------------------------------------

attr = ml.shapley(gbm, X.iloc[:100], interactions=True)
print(
    attr.method,
    attr.value_function,
    attr.values.shape,
    attr.interactions.shape,
)
print(
    "additive:",
    np.allclose(
        attr.base_values + attr.values.sum(axis=1), attr.prediction
    ),
)

# %%
# Each row's interaction matrix sums over its last axis to the row's values:
# the diagonal is the feature's own (main) effect, the off-diagonal entries
# split the pair's joint effect in two halves.

inter = attr.interactions
print("rows sum to values:", np.allclose(inter.sum(axis=2), attr.values))
strength = np.abs(inter).mean(axis=0)
np.fill_diagonal(strength, 0)
a, b = np.unravel_index(np.argmax(strength), strength.shape)
print("strongest pair:", attr.feature_names[a], attr.feature_names[b])

# %%
# The dependence plot colours each point by the feature it interacts with
# most (from the interaction values when they are there).

ax = attr.plot.dependence("bmi")

# %%
# Interventional values against a background
# ------------------------------------------
# With a background the trees give the interventional values, equal to exact
# enumeration of the same game (which costs 1,024 coalitions times 50
# background rows of model calls per row here).

background = X.sample(50, random_state=0)
tree = ml.shapley(gbm, X.iloc[:5], background=background)
exact = ml.shapley(
    gbm, X.iloc[:5], background=background, algorithm="exact"
)
print(
    tree.value_function,
    "largest difference from exact:",
    float(np.abs(tree.values - exact.values).max()),
)

# %%
# Compiled kernels, and models that are not trees
# -----------------------------------------------
# TreeSHAP runs compiled kernels, built on first use and cached on disk after
# that. ``ml.warm_up`` builds them ahead of time (here in this process; with
# ``background=True`` in an isolated child, which ``ml.report(warm_up=...)``
# can wait on) and returns the seconds each method took. A model the tree
# methods cannot read is refused with ``ml.NotATreeModelError``: its ``reason``
# says why a tree model cannot be read, and is None for a model that is no tree
# ensemble at all. Catch it to fall back to a model-agnostic algorithm.

print(ml.warm_up(["shapley_path"]))
try:
    ml.shapley(lambda A: A[:, 0], X.iloc[:2].to_numpy(), algorithm="tree")
except ml.NotATreeModelError as error:
    print("TreeSHAP refused:", error.reason)
