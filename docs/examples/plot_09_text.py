"""
LIME and Shapley values for a text classifier
=============================================

For text the "features" are the words of one document.  LIME removes random
subsets of words and fits a linear surrogate; Shapley values split the
prediction fairly among the words (a word outside the coalition is removed).
Both take a ``predict_fn`` that maps a list of strings to class
probabilities.

The classifier is a TF-IDF + logistic regression fitted on a handful of
sentences written in this script (no download).
"""

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import modellens as ml

positive = [
    "a great movie",
    "great acting and a moving story",
    "wonderful and funny",
    "i loved the music",
    "a moving and wonderful film",
    "funny, clever and great",
    "the best film this year",
    "loved every minute",
]
negative = [
    "a dull movie",
    "boring plot and bad acting",
    "the worst film this year",
    "i hated the music",
    "dull, slow and boring",
    "bad jokes and a weak story",
    "a waste of time",
    "the plot was weak and dull",
]
texts = positive + negative
labels = np.r_[np.ones(len(positive)), np.zeros(len(negative))]
classifier = make_pipeline(TfidfVectorizer(), LogisticRegression(C=10)).fit(
    texts, labels
)
predict_fn = classifier.predict_proba  # list of str -> (m, 2)

review = "a great story but the acting was dull and the plot boring"
print("P(positive) =", predict_fn([review])[0, 1].round(3))

# %%
# LIME over words
# ---------------
# ``target=1`` explains the probability of the positive class.

words = ml.lime_text(
    predict_fn, review, target=1, num_samples=1000, random_state=0
)
ax = words.plot.weights(0)

# %%
# The text itself, highlighted by weight (``plot.text_html()`` gives the same
# as HTML for a notebook).

ax = words.plot.text(0)

# %%
# Shapley values of the words
# ---------------------------
# A string as ``X`` means "explain this text"; the values add up to the
# prediction minus the prediction with every word removed.

attr = ml.shapley(
    predict_fn, review, target=1, masker=ml.TextMasker(tokenizer=r"[a-z']+")
)  # how a text becomes words
print(
    attr.method,
    "sum of values + base =",
    round(float(attr.values.sum() + attr.base_values[0]), 3),
)
ax = attr.plot.waterfall(0)

# %%
# How faithful are the values?
# ----------------------------
# :func:`~modellens.deletion_curves` removes the words in the order of their
# values (largest first) and watches the score fall; the insertion curve adds
# them back to an empty text.  Faithful values make the deletion curve fall
# fast (a small area) and the insertion curve rise fast (a large one).

curves = ml.deletion_curves(predict_fn, attr, target=1)
print("deletion area", round(curves.deletion_area, 3),
      "insertion area", round(curves.insertion_area, 3))
ax = curves.plot()
