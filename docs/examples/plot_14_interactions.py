"""
Which features interact? Friedman's H-statistic
===============================================

A model is *additive* in two features when the effect of one does not depend
on the value of the other.  Friedman's H-statistic measures how far a model is
from that: the share of the variance of the pair's joint partial dependence
that the two one-feature partial dependences do not explain (0: no
interaction, 1: the pair acts only jointly).  ``ml.interactions`` computes it
for every feature (``overall``: against all the others) and for pairs
(``pairwise``), on a sample of rows, since its cost grows with the square of
the sample.

A strong pair is worth a second-order ALE (:func:`~modellens.ale` with the
pair) to see *how* the two interact.
"""

from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor

import modellens as ml

X, y = load_diabetes(return_X_y=True, as_frame=True)
model = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X, y)

inter = ml.interactions(model, X, ["bmi", "bp", "s5", "age"], sample=200)
print(inter.overall)
print(inter.pairwise.head())

# %%
# The pairs, strongest first:

ax = inter.plot()

# %%
# The strongest pair as a second-order ALE: what the pair does beyond the two
# features' own effects.

a, b = inter.pairwise.iloc[0][["feature_1", "feature_2"]]
pair = ml.ale(model, X, [(a, b)], bins=8)
ax = pair[(a, b)].plot()

# %%
# Which features does the score need?  Permutation importance shuffles one
# feature at a time and measures the loss of R^2 (the same numbers as
# scikit-learn's ``permutation_importance`` with the same seed); the boxes
# show the spread over the repeats.

imp = ml.importance(model, X, y, n_repeats=5, random_state=0)
print(imp.to_frame().sort_values("importances_mean", ascending=False).head())
ax = imp.plot()
