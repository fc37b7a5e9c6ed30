"""
Shapley values: exact, permutation sampling and KernelSHAP
==========================================================

A row's Shapley values split its prediction minus the average prediction
into one share per feature: the share is the feature's contribution averaged
over every order in which the features could be "revealed", an absent
feature being filled in from background rows.  The shares add up exactly to
the prediction minus the base value.

Three ways to compute them, on scikit-learn's bundled diabetes data and a
small neural network (so that no tree shortcut applies):

* ``"exact"`` enumerates all :math:`2^d` coalitions (cheap up to about 11
  features);
* ``"permutation"`` samples feature orders and reports a standard error;
* ``"kernel"`` (KernelSHAP) fits a weighted regression over sampled
  coalitions, also with standard errors.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import modellens as ml

X, y = load_diabetes(return_X_y=True, as_frame=True)
model = make_pipeline(
    StandardScaler(),
    MLPRegressor(hidden_layer_sizes=(32,), max_iter=2000, random_state=0),
)
model.fit(X, y)
background = X.sample(
    50, random_state=0
)  # about 50-100 rows are usually enough
rows = X.iloc[:5]

# %%
# Exact values, and the additivity check
# --------------------------------------

exact = ml.shapley(model, rows, background=background, algorithm="exact")
print(exact.method, exact.values.shape)
print(
    "base + sum of values == prediction:",
    np.allclose(
        exact.base_values + exact.values.sum(axis=1), exact.prediction
    ),
)

# %%
# The number being split is the one :func:`~modellens.predict` gives: the
# explained output of every row (here the regressor's prediction; for a
# classifier, the probability of the ``target`` class), indexed like ``X``.

predicted = ml.predict(model, rows)
print(predicted.name, np.allclose(predicted, exact.prediction))

# %%
# Permutation sampling with standard errors
# -----------------------------------------
# Each antithetic pair of orders is one independent estimate; their spread
# gives a standard error, and :meth:`~modellens.Attributions.confidence_interval` uses
# t quantiles with the right degrees of freedom.  The error bars should
# cover the exact values most of the time.

perm = ml.shapley(
    model,
    rows,
    background=background,
    algorithm="permutation",
    n_permutations=40,
    random_state=0,
)
lower, upper = perm.confidence_interval(0.95)
covered = (lower <= exact.values) & (exact.values <= upper)
print(f"95% intervals covering the exact value: {covered.mean():.0%}")

fig, ax = plt.subplots(figsize=(7, 4))
i = 0
pos = np.arange(exact.values.shape[1])
ax.errorbar(
    pos - 0.1,
    perm.values[i],
    yerr=[perm.values[i] - lower[i], upper[i] - perm.values[i]],
    fmt="o",
    capsize=3,
    label="permutation, 95% CI",
)
ax.plot(pos + 0.1, exact.values[i], "k^", label="exact")
ax.set_xticks(pos, exact.feature_names)
ax.axhline(0, color="grey", lw=0.8)
ax.set(ylabel="Shapley value", title="row 0")
ax.legend()

# %%
# KernelSHAP for many features
# ----------------------------
# With 30 features exact enumeration would need a billion coalitions per
# row; ``algorithm="auto"`` switches to KernelSHAP (here on bundled breast
# cancer data, the probability of the benign class).

from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression

Xb, yb = load_breast_cancer(return_X_y=True, as_frame=True)
clf = make_pipeline(
    StandardScaler(), LogisticRegression(max_iter=1000)
).fit(Xb, yb)
kernel = ml.shapley(
    clf,
    Xb.iloc[:3],
    background=Xb.sample(30, random_state=0),
    n_samples=1024,
    random_state=0,
)
print(kernel.method, kernel.output)
top = np.argsort(-np.abs(kernel.values[0]))[:5]
for j in top:
    name, value = kernel.feature_names[j], kernel.values[0, j]
    print(f"{name:>22s} {value:+.3f} +/- {kernel.std[0, j]:.3f}")
