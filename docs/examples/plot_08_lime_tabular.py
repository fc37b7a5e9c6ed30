"""
LIME on tables, and how far to trust it
=======================================

LIME explains one row by fitting a small weighted linear model (the
*surrogate*) to the model's answers on random samples around the row; its
weights are the explanation.  Three things decide whether that explanation
means anything, and modellens reports each:

* **fidelity**: does the straight line describe the model near the row?
  (``score``, the weighted R^2 on the samples, and
  ``surrogate.score_holdout``, the same for samples left out of the fit);
* **stability**: do other random samples give the same explanation?
  (``stability=``);
* **the kernel width**: what "near" means; the weights can change with it
  (``ml.lime_width_sweep``).

Data: scikit-learn's bundled breast cancer data, a random forest, the
probability of the benign class.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

import modellens as ml

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X = X.iloc[:, :10]  # the ten "mean" measurements
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
forest = RandomForestClassifier(n_estimators=50, random_state=0).fit(
    X_train, y_train
)

# %%
# Explain a few rows in one pass
# ------------------------------
# ``training_data`` gives the statistics the samples are drawn from (quartile
# bins by default, as the lime package does).  ``plot.weights(i)`` draws one
# row's weights, each labelled with the condition it stands for.

attr = ml.lime(
    forest,
    X_test.iloc[:5],
    training_data=X_train,
    num_samples=2000,
    random_state=0,
)
ax = attr.plot.weights(0)
print(*attr.surrogate.conditions[0][:3], sep="\n")

# %%
# Fidelity
# --------
# ``score`` close to 1 and a held-out score close to it: the surrogate
# describes the model here.  A low held-out score: do not read the weights
# as a description of the model.  Here the scores are low: a random forest is
# a step function, and a straight line in the binned features captures only
# part of how it varies around each row.

held_out = attr.surrogate.score_holdout
for i in range(5):
    print(
        f"row {i}: score {attr.score[i]:.2f}, held-out {held_out[i]:.2f}, "
        f"model {attr.prediction[i]:.2f}, "
        f"surrogate {attr.local_prediction[i]:.2f}"
    )

# %%
# Stability over reseeds
# ----------------------
# ``stability=5`` repeats each explanation with five other seeds and reports
# whether the top features agree and how much each weight moves.

stable = ml.lime(
    forest,
    X_test.iloc[:5],
    training_data=X_train,
    num_samples=1000,
    stability=5,
    random_state=0,
)
s = stable.surrogate.stability
print("same top-3 in every repeat:", s["same_top_k"])
print("mean overlap of the top-3:  ", s["top_k_overlap"].round(2))

# %%
# The kernel width
# ----------------
# One set of samples, many widths: narrow kernels look very close to the row
# (few effective samples, noisy), wide ones average over the whole training
# distribution.  If the weights swing across the plausible widths, the
# explanation is a choice, not a fact.  The dotted line is the default width.

sweep = ml.lime_width_sweep(
    forest,
    X_test.iloc[:1],
    training_data=X_train,
    num_samples=2000,
    random_state=0,
)
ax = sweep.plot()
