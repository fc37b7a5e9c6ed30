"""
Every class at once: explaining a multiclass model
==================================================

A classifier of three classes answers three probabilities per row, in one
call.  modellens explains all of them in one pass: with ``target=`` left out,
every method returns the numbers of every class on a last axis, named by
``.outputs``, and costs the model rows of one class.  ``for_output`` takes
one class back: exactly what the same call with ``target=`` that class gives.

Data: scikit-learn's bundled wine data (three cultivars, 13 chemical
measurements), and a histogram gradient boosting classifier.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_wine
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import train_test_split

import modellens as ml

wine = load_wine(as_frame=True)
X = wine.data[["alcohol", "flavanoids", "color_intensity", "proline", "hue"]]
y = wine.target_names[wine.target]  # "class_0", "class_1", "class_2"
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0, stratify=y)
clf = HistGradientBoostingClassifier(max_iter=100, random_state=0).fit(X_train, y_train)

# %%
# Predictions: a column per class
# -------------------------------
# ``ml.predict`` gives what every method explains: one column per output,
# named as the results name them.

print(ml.predict(clf, X_test.iloc[:4]).round(3))

# %%
# Effects of every class in one call
# ----------------------------------
# A 1-D effect of a multiclass model draws one line per class.  Partial
# dependence and ALE of every class come from the same model rows: the model
# answers each planned row with all three probabilities, and each column is
# folded into its own class's curve.

pd_effects = ml.pdp(clf, X_train, ["flavanoids", "proline"], grid=20)
print(pd_effects.outputs)
print(pd_effects["flavanoids"].values.shape)  # (grid points, classes)
ax = pd_effects.plot()

# %%
# The ALE curves say the same with correlated features handled; the table has
# an ``output`` column.

ale_effects = ml.ale(clf, X_train, ["flavanoids", "color_intensity"], bins=10)
ax = ale_effects.plot()
print(ale_effects.to_frame().groupby("output").size())

# %%
# One class is the single-output result: ``for_output`` returns exactly what
# ``target=`` computes.

one = ale_effects.for_output("class_2")
alone = ml.ale(clf, X_train, ["flavanoids", "color_intensity"], bins=10, target="class_2")
print("for_output equals target=:",
      all(np.array_equal(one[f].values, alone[f].values) for f in one))

# %%
# Shapley values ``(n, d, k)``
# ----------------------------
# Shapley values of every class, as shap returns them: ``values`` has a last
# axis of classes, and each class's values add up to its probability.  The
# bar plot stacks the classes' mean absolute values, as shap's multi-output
# bar plot does.

attr = ml.shapley(clf, X_test.iloc[:20], background=X_train.iloc[:50],
                  response_method="predict_proba", random_state=0)
print(attr.values.shape, attr.base_values.shape)
print("base + sum of values == prediction:",
      np.allclose(attr.base_values + attr.values.sum(axis=1), attr.prediction))
ax = attr.plot.bar()

# %%
# Select a class with ``for_output`` (a class label, an output name or a
# position), or by indexing the last axis; the plots of one row take
# ``output=``.

class_1 = attr.for_output("class_1")
print(class_1.values.shape, class_1.output)
print(np.array_equal(attr[..., "class_1"].values, class_1.values))
fig, axes = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
attr.plot.waterfall(0, output="class_0", ax=axes[0])
attr.plot.waterfall(0, output="class_1", ax=axes[1])

# %%
# LIME of every class
# -------------------
# LIME draws each row's perturbed samples once, asks the model once, and fits
# one surrogate per class on the same samples (one weighted ridge solve with a
# right-hand side per class), so the three explanations cost the samples and
# the model rows of one.

lime = ml.lime(clf, X_test.iloc[:3], training_data=X_train, num_samples=2000,
               random_state=0)
print(lime.values.shape, lime.score.shape)  # (rows, features, classes), (rows, classes)
print("model rows:", lime.diagnostics["n_model_rows"])
fig, axes = plt.subplots(1, 3, figsize=(15, 4), layout="constrained")
for ax, label in zip(axes, clf.classes_):
    lime.plot.weights(0, output=label, ax=ax)
    ax.set_title(f"{label}: R^2 {lime.for_output(label).score[0]:.2f}")
