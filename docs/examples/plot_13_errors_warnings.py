"""
When a method cannot answer: errors and warnings
================================================

A method that cannot give a trustworthy number says so, with the reason and
what to do instead, rather than returning a silent wrong answer.  There are
three kinds of message:

* :class:`~modellens.InvalidParameterError`: an option or an input that
  cannot work (it is both a ``ValueError`` and a ``TypeError``);
* :class:`~modellens.ModelError`: the model failed on the rows it was given
  (the message names the model's own error and the input it received);
* :class:`~modellens.ModellensWarning`: a result that can be computed but
  deserves caution (empty bins, few permutations, a model that is not
  smooth, ...).
"""

import warnings

import numpy as np
from sklearn.ensemble import RandomForestRegressor

import modellens as ml

rng = np.random.default_rng(0)
X = rng.normal(size=(300, 3))
forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(
    X, X[:, 0] + X[:, 1]
)

# %%
# DALE needs derivatives; a forest has none worth the name:

try:
    ml.dale(forest, X)
except ml.InvalidParameterError as error:
    print(error)

# %%
# A model that fails on the rows it gets:

try:
    ml.pdp(lambda A: A[:, 5], X, [0])
except ml.ModelError as error:
    print(error)

# %%
# Bins without data: ALE has no rows to average there, so it warns and says
# which choices avoid the gap.

gapped = np.r_[rng.uniform(0, 1, 150), rng.uniform(2, 3, 150)][:, None]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    ml.ale(lambda A: A[:, 0] ** 2, gapped, bins=np.linspace(0, 3, 7))
for w in caught:
    print(f"{w.category.__name__}: {w.message}")

# %%
# All of our warnings share one class, so they can be silenced (or turned
# into errors) together, without touching other libraries' warnings::
#
#     warnings.simplefilter("ignore", ml.ModellensWarning)
#     warnings.simplefilter("error", ml.ModellensWarning)
