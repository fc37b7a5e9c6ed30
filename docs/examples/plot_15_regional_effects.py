"""
Where an effect differs: regional effects
=========================================

A global effect is an average over the rows.  When the rows disagree, the
average can describe none of them: in bike sharing, rentals peak at 8:00 and
17:00 on working days (commuters) but around midday on weekends and holidays,
and the ALE of ``hour`` averages the two shapes.  ``ml.regions`` looks for
the split of the data, on the *other* features, that makes the local effects
of ``hour`` agree, tests it, and draws one curve per region.  It re-uses the
local effects the global ALE evaluated: it costs no model call beyond that
ALE's own.

The data here are synthetic, shaped like the UCI bike-sharing data, so that
the true answer is known: ``hour`` matters differently on working days, and
temperature adds the same amount on every day.
"""

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor

import modellens as ml

rng = np.random.default_rng(0)
n = 3000
X = pd.DataFrame({
    "hour": rng.integers(0, 24, n),
    "workingday": rng.random(n) < 0.7,
    "temp": rng.uniform(0, 35, n),
    "humidity": rng.uniform(20, 100, n),
})
h = X["hour"].to_numpy()
commute = 200 * np.exp(-(h - 8) ** 2 / 3) + 250 * np.exp(-(h - 17.5) ** 2 / 4)
leisure = 180 * np.exp(-(h - 14) ** 2 / 12)
rentals = (np.where(X["workingday"], commute, leisure) + 4 * X["temp"]
           - 0.5 * X["humidity"] + rng.normal(0, 10, n))
model = HistGradientBoostingRegressor(max_iter=150, random_state=0).fit(X, rentals)

# %%
# The regions of ``hour``, and, for comparison, of ``temp``.  Each split comes
# with its evidence: the share of heterogeneity it removes (``gain``), a
# permutation p-value, how often bootstrap resamples choose the same split
# (``stability``), and the gain measured on rows that did not choose it
# (``heldout_gain``).  A split must hold on those held-out rows to be accepted;
# ``flags`` names any evidence that disagrees (``"low stability"``, ``"held-out
# gain near zero"``).

regions = ml.regions(model, X, ["hour", "temp"], max_depth=1, random_state=0)
print(regions)
print(regions.splits[["feature", "split_feature", "levels", "gain", "p_value",
                      "stability", "heldout_gain", "flags"]].round(3))

# %%
# ``hour`` splits on ``workingday`` with nearly all of its heterogeneity
# removed, stable and as strong on held-out rows.  A split of ``temp`` may
# show too, with a small gain: the boosted trees are not exactly additive in
# ``temp``, and regions describe the model, not the data.  The gain says how
# much it matters.
#
# One curve per region, the global curve dashed: the morning and evening
# peaks of working days, the midday hump of the other days.

ax = regions.plot("hour")

# %%
# The regional curves are ordinary effects, on the global bins:

for region, effect in regions.effects("hour").items():
    print(f"{region}: peak at hour {effect.grid[np.argmax(effect.values)]:.0f}")

# %%
# The result saves as JSON and comes back whole:

again = ml.Regions.from_dict(regions.to_dict())
print(again.splits.equals(regions.splits))

# %%
# A pair: the second-order ALE of ``hour`` and ``temp`` is their pure
# interaction (here small: temperature adds the same at every hour).  With
# ``total=True`` the plot adds both main effects, which is what the model
# does with the pair; each cell shows its rows and the standard error of its
# mean local effect, and cells with few rows carry a light cross.

pair = ml.ale(model, X, [("hour", "temp")], bins=6)[("hour", "temp")]
ax = pair.plot(total=True)
