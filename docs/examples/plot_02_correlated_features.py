"""
Correlated features: M-plot vs PD vs ALE
========================================

The central point of the ALE literature, on the example of the ALE lecture:
two features that move together, ``x1 = x + e1`` and ``x2 = x + e2`` with a
small noise, and an outcome ``y = x1 + x2**2 + noise``.  The true effect of
``x1`` is a straight line, the true effect of ``x2`` a parabola.

* **PD** sets ``x1`` to each grid value for *every* row, so it evaluates the
  model at points such as ``x1 = 0, x2 = 1`` that never occur: the model has
  never seen them and its answer there is an extrapolation.
* **M-plots** average the predictions of the rows whose ``x1`` is *near* the
  grid value, so they stay on the data, but those rows also have a different
  ``x2``: the curve of ``x1`` carries ``x2``'s effect too (omitted-variable
  bias).
* **ALE** averages *differences* of the prediction across small bins of
  ``x1`` at each row's own ``x2``, so it stays on the data and removes the
  other feature's effect.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor

import modellens as ml

rng = np.random.default_rng(0)
n = 5000
x = rng.uniform(0, 1, n)
X = np.column_stack(
    [x + rng.normal(0, 0.05, n), x + rng.normal(0, 0.05, n)]
)
y = X[:, 0] + X[:, 1] ** 2 + rng.normal(0, 0.2, n)
model = HistGradientBoostingRegressor(random_state=0).fit(X, y)

# sphinx_gallery_thumbnail_number = 2

# %%
# Where PD looks
# --------------
# The data lie on a narrow diagonal band.  The PD of ``x1`` at ``x1 = 0.1``
# evaluates the model at the red points: one per row, at that row's ``x2``,
# most of them far from any data.

fig, ax = plt.subplots(figsize=(4.5, 4))
ax.scatter(X[:, 0], X[:, 1], s=2, alpha=0.3, label="data")
ax.scatter(
    np.full(200, 0.1), X[:200, 1], s=6, color="C3", label="PD at x1 = 0.1"
)
ax.set(xlabel="x1", ylabel="x2")
ax.legend(loc="upper left")

# %%
# The three estimates in one figure
# ---------------------------------
# Each panel draws the estimate with :meth:`~modellens.Effect.plot` and the true effect
# (dashed), shifted to the same mean.  The M-plots of both features look the
# same, because each carries the other's effect; PD bends away from the truth
# at the ends, where its points leave the data; ALE follows the truth.

names = ["x1", "x2"]  # the columns' names in the results and plots
truth = {"x1": lambda g: g, "x2": lambda g: g**2}
estimates = {
    "M-plot": ml.mplot(model, X, feature_names=names),
    "PD": ml.pdp(model, X, feature_names=names),
    "ALE": ml.ale(model, X, feature_names=names),
}

fig, axes = plt.subplots(2, 3, figsize=(10, 6), sharey="row")
for col, (name, effects) in enumerate(estimates.items()):
    for row, feature in enumerate(names):
        ax = axes[row, col]
        effect = effects[feature]
        effect.plot(ax=ax)
        g = np.asarray(effect.grid, dtype=float)
        t = truth[feature](g)
        ax.plot(
            g,
            t - t.mean() + effect.values.mean(),
            "k--",
            lw=1.5,
            label="truth",
        )
        ax.set_title(f"{name} of {feature}")
axes[0, 0].legend(loc="upper left")
fig.tight_layout()

# %%
# How far each is from the truth (root mean squared difference of the
# centred curves on each method's own grid):

for name, effects in estimates.items():
    errors = []
    for feature in names:
        g = np.asarray(effects[feature].grid, dtype=float)
        v = effects[feature].values
        t = truth[feature](g)
        errors.append(np.sqrt(np.mean((v - v.mean() - t + t.mean()) ** 2)))
    print(f"{name:7s} x1: {errors[0]:.3f}   x2: {errors[1]:.3f}")

# %%
# The omitted-variable bias in its simplest form
# ----------------------------------------------
# A linear model of ``y = -x1 + 2 x2`` with ``corr(x1, x2) = 0.9``: the
# model's own slope for ``x1`` is about -1, yet the M-plot of ``x1`` rises, with
# slope about ``-1 + 2 * 0.9 = 0.8``, because rows with a large ``x1`` also
# have a large ``x2``.  PD and ALE (the model is additive and linear, so PD
# has nothing to extrapolate) both show the model's own slope.

from sklearn.linear_model import LinearRegression

cov = [[1, 0.9], [0.9, 1]]
Z = rng.multivariate_normal([0, 0], cov, size=500)
linear = LinearRegression().fit(
    Z, -Z[:, 0] + 2 * Z[:, 1] + rng.normal(size=500)
)
for name, f in [("M-plot", ml.mplot), ("PD", ml.pdp), ("ALE", ml.ale)]:
    e = f(linear, Z, ["x1"], feature_names=names)["x1"]
    g = np.asarray(e.grid, dtype=float)
    print(f"{name:7s} slope of x1: {np.polyfit(g, e.values, 1)[0]:+.2f}")
