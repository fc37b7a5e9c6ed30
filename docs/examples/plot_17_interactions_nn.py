"""
Interactions of a neural network, and groups of features as players
====================================================================

A row's Shapley values say how much each feature moved its prediction; they
do not say which features acted *together*.  The SHAP interaction values
(``interactions=True``) split each value further: the diagonal holds a
feature's main effect, and each off-diagonal entry half of the pair's
Shapley interaction index, so that each row's matrix sums to its values.
Tree models had them from TreeSHAP; here a neural network gets them, exact
by enumeration on a handful of features, or sampled with standard errors.

And when two features are strongly correlated (a latitude and a longitude),
splitting the credit between them is unreliable; ``groups=`` makes them one
player, whose value answers "how much did the location matter?".
"""

import numpy as np
import pandas as pd
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import modellens as ml

rng = np.random.default_rng(0)
n = 1500
lat = rng.uniform(-1, 1, n)
X = pd.DataFrame({
    "lat": lat,
    "lon": 0.8 * lat + 0.2 * rng.uniform(-1, 1, n),   # strongly correlated with lat
    "rooms": rng.uniform(1, 6, n),
    "income": rng.uniform(0, 3, n),
    "age": rng.uniform(0, 50, n),
    "noise": rng.normal(size=n),
})
y = (X.income * X.rooms / 3 + np.sin(3 * X.lat) * np.cos(2 * X.lon) - 0.02 * X.age
     + 0.1 * rng.normal(size=n))
model = make_pipeline(StandardScaler(),
                      MLPRegressor(hidden_layer_sizes=(32, 32), max_iter=600,
                                   random_state=0)).fit(X, y)

# %%
# Exact interaction values: six features are 64 coalitions per row, each
# evaluated against the background, once for the values and the
# interactions together.

background = X.sample(50, random_state=0)
rows = X.iloc[:40]
attr = ml.shapley(model, rows, background=background, interactions=True)
print(attr.method, attr.interactions.shape)
print("rows sum to the values:",
      bool(np.allclose(attr.interactions.sum(axis=2), attr.values)))

# %%
# The strongest pairs over the explained rows: the mean absolute interaction
# value of each pair.  The network learned ``income x rooms`` and the
# ``lat x lon`` term; the noise feature interacts with nothing.

pairs = attr.interaction_pairs()   # an ml.InteractionPairs
print(pairs.to_frame().head(6).round(4))
ax = attr.plot.interactions(max_display=8)

# %%
# Sampled interaction values, for more features than enumeration affords:
# rounds of paired feature orders make every pair neighbours once per
# round, and the spread over the rounds gives standard errors (from five
# rounds on).  Six features are too few to need it: five rounds would reach
# most of their 64 coalitions, and modellens enumerates them instead.  A
# network of twelve features (4,096 coalitions per row) shows it, against
# its exact values on the same rows:

extra = pd.DataFrame(rng.uniform(-1, 1, (n, 6)), columns=[f"z{i}" for i in range(1, 7)])
X12 = pd.concat([X, extra], axis=1)
y12 = y + X12.z1 * X12.z2
model12 = make_pipeline(StandardScaler(),
                        MLPRegressor(hidden_layer_sizes=(32, 32), max_iter=400,
                                     random_state=0)).fit(X12, y12)
rows12, background12 = X12.iloc[:8], X12.sample(30, random_state=0)
exact = ml.shapley(model12, rows12, background=background12, interactions=True,
                   algorithm="exact")
sampled = ml.shapley(model12, rows12, background=background12, interactions=True,
                     algorithm="permutation", n_permutations=120, random_state=0)
error = np.abs(sampled.interactions - exact.interactions)
print(sampled.method, f"largest error {error.max():.4f}, "
      f"median standard error {np.median(sampled.sampling.interactions_std):.4f}")

# %%
# Latitude and longitude as one player.  Their joint value is well defined
# even though the split between them is not; features in no group keep
# their own values.

grouped = ml.shapley(model, rows, background=background,
                     groups={"location": ["lat", "lon"]})
print(grouped.feature_names)
print("location's value = the game of the groups, adds up:",
      bool(np.allclose(grouped.values.sum(axis=1) + grouped.base_values,
                       grouped.prediction)))
ax = grouped.plot.bar()
