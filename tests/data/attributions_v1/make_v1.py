"""Write Attributions.to_dict() files with the code at commit 82fe1b3 (schema 1, no version)."""
import json, sys, warnings
import numpy as np, pandas as pd
import modellens as ml
from sklearn.ensemble import GradientBoostingRegressor

out = sys.argv[1]
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = pd.DataFrame({"a": rng.normal(size=40), "b": rng.normal(size=40),
                  "c": pd.Categorical(rng.choice(["red", "blue"], size=40))})
f = lambda D: D["a"].to_numpy() * 2 + (D["c"] == "red").to_numpy() * 1.0 + D["b"].to_numpy() ** 2
Xn = rng.normal(size=(60, 4))
g = lambda A: A[:, 0] * A[:, 1] + A[:, 2] - A[:, 3]
gbr = GradientBoostingRegressor(n_estimators=5, max_depth=3, random_state=0).fit(Xn, g(Xn))
def pf_text(texts):
    return np.array([0.2 + 0.5 * ("good" in t) + 0.1 * ("bad" in t) for t in texts])
img = rng.random((8, 8, 3))
labels = (np.arange(8)[:, None] // 4) * 2 + np.arange(8)[None, :] // 4
pf_img = lambda ims: ims[:, :4, :4].mean(axis=(1, 2, 3)) - ims[:, 4:, 4:].mean(axis=(1, 2, 3))
results = {
    "shapley_exact_frame": ml.shapley(f, X.iloc[:3], background=X.iloc[10:20]),
    "shapley_permutation": ml.shapley(g, Xn[:2], background=Xn[10:20], algorithm="permutation",
                                      n_permutations=10, random_state=1),
    "shapley_kernel": ml.shapley(g, Xn[:2], background=5, algorithm="kernel", n_samples=8,
                                 random_state=2),
    "shapley_tree_interactions": ml.shapley(gbr, Xn[:3], algorithm="tree", interactions=True),
    "shapley_tree_background": ml.shapley(gbr, Xn[:2], background=Xn[20:30], algorithm="tree"),
    "lime_tabular_stability": ml.lime(f, X.iloc[:3], training_data=X, num_samples=200,
                                      stability=3, random_state=3),
    "lime_continuous": ml.lime(g, Xn[:2], training_data=Xn, discretize=None, num_samples=100,
                               random_state=4),
    "lime_text": ml.lime_text(pf_text, "a good film, not bad, good", num_samples=50,
                              random_state=5),
    "lime_image": ml.lime_image(pf_img, img, segmentation=labels, num_samples=30,
                                random_state=6),
    "shapley_text": ml.shapley(pf_text, "a good film, not bad", masker="text"),
    "shapley_image_kernel": ml.shapley(pf_img, img, masker=ml.ImageMasker(segmentation=labels),
                                       algorithm="kernel", n_samples=6, random_state=7),
}
for name, attr in results.items():
    with open(f"{out}/{name}.json", "w") as fh:
        json.dump(attr.to_dict(), fh, allow_nan=False)
    print(name, attr.method, attr.values.shape)
