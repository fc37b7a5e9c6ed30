"""
Explaining a small transformer text classifier, beside shap and captum
=======================================================================

A tiny BERT (2 layers of width 32, a WordPiece vocabulary fixed in code) is
trained in a few seconds on texts whose label is 1 exactly when the words
"sunny" and "beach" both occur: the planted signal is an AND, so the two words
matter only together.  We explain it word by word with modellens (Shapley
values with standard errors, Owen values over words within sentences, the
strongest word pair, deletion curves) and put shap's Partition explainer and
captum's ``ShapleyValueSampling`` beside it on the same text.

It is **not executed** by the documentation build (its file name does not
start with ``plot_``): it trains a model and needs ``transformers``, ``shap``
and ``captum``.  Run it from a checkout of modellens (the model is
``tests/text_model.py``); ``benchmarks/bench_text_transformer.py`` times the
three at equal budgets on 64-256-word texts.
"""

# %%
# The model
# ---------
import re
import sys
from pathlib import Path

import numpy as np
import torch

import modellens as ml

sys.path.insert(0, str(Path.cwd() / "tests"))
import text_model  # noqa: E402  (tests/text_model.py of the modellens checkout)

torch.set_num_threads(1)
pipe, accuracy = text_model.build_pipeline()
print(f"held-out accuracy {accuracy:.3f}")

text = "the day was sunny and we walked along the beach with bread"

# %%
# Shapley values of the words, every class, and the planted pair
# --------------------------------------------------------------
# Eleven distinct words: exact enumeration (2,046 masked texts, every class from the
# same forward passes).  ``target=`` takes the class label.
attr = ml.shapley(pipe, text, interactions=True, target="SUNNY_BEACH")
print(attr.to_frame().round(3))
print(attr.interaction_pairs().to_frame().head(3))

# %%
# Sampled, with standard errors.  On this model a word may move the score only
# beside a few others (a rare large contribution), and 32 pairs of orders see
# it too seldom: the errors are withheld with a warning that says so.  At 512
# orders they are given:
sampled = ml.shapley(pipe, text, algorithm="permutation", n_permutations=64,
                     target="SUNNY_BEACH", random_state=0)
print(np.isnan(sampled.std).all())
sampled = ml.shapley(pipe, text, algorithm="permutation", n_permutations=512,
                     target="SUNNY_BEACH", random_state=0)
lower, upper = sampled.confidence_interval(0.95)
for word, v, lo, hi in zip(sampled.feature_names, sampled.values[0], lower[0], upper[0]):
    print(f"{word:10s} {v:7.3f}  [{lo:7.3f}, {hi:7.3f}]")

# %%
# Owen values: words within sentences
# -----------------------------------
# For long texts, ``players="hierarchy"`` keeps each sentence's words together:
# the exact values enumerate far fewer coalitions than 2**p, and sampling costs
# 2 (p - 1) masked texts an order.
long_text = text_model.long_text(48, rng=np.random.default_rng(0))
owen = ml.shapley(pipe, long_text, players="hierarchy", target="SUNNY_BEACH",
                  random_state=0)
print(owen.method, owen.sampling.model_rows[0], "masked texts")
top = np.argsort(-owen.values[0])[:3]
print([owen.feature_names[j] for j in top])

# %%
# Faithfulness: the deletion and insertion curves
# -----------------------------------------------
curves = ml.deletion_curves(pipe, attr, target="SUNNY_BEACH")
print(curves.players[:3], round(curves.deletion_area, 3), round(curves.insertion_area, 3))
curves.plot()

# %%
# shap's Partition explainer and captum on the same text
# ------------------------------------------------------
# shap's players are the tokenizer's tokens (a word's value is the sum over its
# tokens); captum's are the words through a feature mask of their tokens, the
# mask token as the baseline.  Neither reports how far its numbers may be from
# the exact ones.
import shap  # noqa: E402
from captum.attr import ShapleyValueSampling  # noqa: E402

from modellens.models import TextClassifier  # noqa: E402

classifier = TextClassifier(pipe.model, pipe.tokenizer)
explainer = shap.Explainer(lambda t: classifier.scores([str(s) for s in t])[:, 1],
                           shap.maskers.Text(pipe.tokenizer))
print(explainer([text], max_evals=512, silent=True))

enc = pipe.tokenizer(text, return_tensors="pt", return_offsets_mapping=True)
words = list(attr.feature_names)
spans = [(m.start(), m.end(), words.index(m.group(0))) for m in re.finditer(r"\w+", text)]
# each token's word; [CLS] and [SEP] (empty offsets) a feature of their own, never masked
word_of = [next((k for s, e, k in spans if s <= a < e), len(words)) if a < b else len(words)
           for a, b in enc["offset_mapping"][0].tolist()]
mask = torch.as_tensor(word_of)[None]
baseline = torch.where(mask == len(words), enc["input_ids"], pipe.tokenizer.mask_token_id)


def forward(ids):
    with torch.no_grad():
        return torch.softmax(pipe.model(input_ids=ids).logits, -1)[:, 1]


captum = ShapleyValueSampling(forward).attribute(enc["input_ids"], baselines=baseline,
                                                 feature_mask=mask, n_samples=32)
print(captum)
