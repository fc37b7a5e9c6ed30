"""
LIME and Shapley values for an image classifier
===============================================

For images the "features" are superpixels: groups of neighbouring pixels
that are kept or hidden together.  modellens can cut the image with
scikit-image's quickshift or SLIC, or take your own label array, as here.

The classifier is a logistic regression on scikit-learn's bundled 8x8
handwritten digits; the superpixels are the sixteen 2x2 blocks, and a hidden
block is painted black (``hide_color=0``, the digits' background).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression

import modellens as ml

digits = load_digits()
clf = LogisticRegression(max_iter=500).fit(digits.data / 16, digits.target)


def predict_fn(images):
    """(m, 8, 8) images -> (m, 10) class probabilities."""
    return clf.predict_proba(
        np.asarray(images).reshape(len(images), 64) / 16
    )


image = digits.images[0]  # a zero
blocks = (np.arange(8)[:, None] // 2) * 4 + np.arange(8)[
    None, :
] // 2  # 16 labels
print("predicted:", predict_fn(image[None]).argmax())

# %%
# LIME: which blocks make this a zero?
# ------------------------------------

lime = ml.lime_image(
    predict_fn,
    image,
    segmentation=blocks,
    hide_color=0,
    target=0,
    num_samples=1000,
    random_state=0,
)
ax = lime.plot.image(0, positive=4, negative=2)

# %%
# Shapley values of the same blocks
# ---------------------------------
# ``masker=ml.ImageMasker(...)`` uses the same superpixels and fill; with 16
# blocks ``"auto"`` chooses KernelSHAP.

attr = ml.shapley(
    predict_fn,
    image,
    target=0,
    masker=ml.ImageMasker(segmentation=blocks, hide_color=0),
    n_samples=2048,
    random_state=0,
)
print(attr.method, attr.values.shape)

fig, axes = plt.subplots(1, 2, figsize=(7, 3.5))
axes[0].imshow(image, cmap="gray_r")
axes[0].set_title("the digit")
limit = np.abs(attr.values).max()
heat = axes[1].imshow(
    attr.values[0][attr.segments], cmap="RdBu_r", vmin=-limit, vmax=limit
)
axes[1].set_title("Shapley value of each block")
fig.colorbar(heat, ax=axes[1])
for ax in axes:
    ax.set_axis_off()
