"""Word attributions of a small transformer: modellens vs shap's Partition explainer vs captum.

On the tiny BERT of ``tests/text_model.py`` (built offline in seconds) and texts
of ``--words`` words (64 to 256), each method gets the same budget of model
evaluations per text (``--budget`` masked texts):

* modellens: ``ml.shapley(pipe, text, algorithm="kernel", n_samples=budget)``,
  every class from the same forward passes, batched by padded tokens;
* owen: ``players="hierarchy"`` (Owen values, words within sentences), permutation
  sampling of ``budget // (2 (d - 1))`` orders;
* shap: ``shap.Explainer(f, shap.maskers.Text(tokenizer))`` (the Partition
  explainer over the tokenizer's tokens), ``max_evals=budget``;
* captum: ``ShapleyValueSampling`` over the words (a feature mask of each
  word's sub-word tokens, the mask token as baseline), ``n_samples`` orders so
  that the evaluations match the budget, one perturbation per forward pass
  (its default) and ``--captum-batch`` per pass.

Printed per method: forward passes and seconds per text, the deletion-curve
area (``ml.deletion_curves`` on the same model, the words ordered by each
method's values for the predicted class; smaller is more faithful), and for
modellens the model rows per text that ``tol=0.02`` needed.  Interleaved,
best of ``--repeats``; the machine may be loaded: read the ratios.

    python benchmarks/bench_text_transformer.py --words 64 --texts 3 --budget 512
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import modellens as ml  # noqa: E402
import text_model  # noqa: E402
from modellens.models import TextClassifier  # noqa: E402


def ours(pipe, text, budget):
    clf = TextClassifier(pipe.model, pipe.tokenizer)
    attr = ml.shapley(clf, text, algorithm="kernel", n_samples=budget, random_state=0)
    c = int(np.argmax(attr.prediction[0]))
    return attr.for_output(c).values[0], list(attr.feature_names), clf.n_forward, c


def ours_owen(pipe, text, budget):
    """Owen values over words within sentences at the same budget of masked texts."""
    clf = TextClassifier(pipe.model, pipe.tokenizer)
    d = len(ml.shapley(lambda t: np.zeros(len(t)), text).feature_names)
    attr = ml.shapley(clf, text, players="hierarchy", algorithm="permutation",
                      n_permutations=max(2, budget // (2 * (d - 1))), random_state=0)
    c = int(np.argmax(attr.prediction[0]))
    return attr.for_output(c).values[0], list(attr.feature_names), clf.n_forward, c


def word_features(tokenizer, text, words):
    """Each token's word (its position in ``words``), the specials a feature of their own."""
    import re

    enc = tokenizer(text, return_offsets_mapping=True, return_tensors="pt")
    index = {w: k for k, w in enumerate(words)}
    starts = {m.start(): index[m.group(0)] for m in re.finditer(r"\w+", text)}
    spans = [(m.start(), m.end()) for m in re.finditer(r"\w+", text)]
    feature = []
    for a, b in enc["offset_mapping"][0].tolist():
        if a == b:
            feature.append(len(words))  # [CLS], [SEP]
            continue
        start = max(s for s, _ in spans if s <= a)
        feature.append(starts[start])
    return enc["input_ids"], np.array(feature)


def captum_values(pipe, text, words, budget, c, batch):
    import torch
    from captum.attr import ShapleyValueSampling

    ids, feature = word_features(pipe.tokenizer, text, words)
    calls = [0]

    def forward(x):
        calls[0] += 1
        with torch.no_grad():
            return torch.softmax(pipe.model(input_ids=x).logits, -1)[:, c]

    mask_id = pipe.tokenizer.mask_token_id
    baseline = torch.where(torch.as_tensor(feature)[None] == len(words), ids, mask_id)
    p = len(words) + 1
    n_samples = max(1, budget // p)
    svs = ShapleyValueSampling(forward)
    out = svs.attribute(ids, baselines=baseline, feature_mask=torch.as_tensor(feature)[None],
                        n_samples=n_samples, perturbations_per_eval=batch)
    first = {k: int(np.argmax(feature == k)) for k in range(len(words))}
    return np.array([float(out[0, first[k]]) for k in range(len(words))]), calls[0]


def shap_values(pipe, text, words, budget, c):
    import re

    import shap

    calls = [0]
    clf = TextClassifier(pipe.model, pipe.tokenizer)

    def f(texts):
        calls[0] += 1
        return clf.scores([str(t) for t in texts])[:, c]

    explainer = shap.Explainer(f, shap.maskers.Text(pipe.tokenizer))
    exp = explainer([text], max_evals=budget, silent=True)
    # shap's players are tokens: a word's value is the sum over its tokens (every occurrence)
    tokens, vals = exp.data[0], exp.values[0]
    out = np.zeros(len(words))
    index = {w: k for k, w in enumerate(words)}
    word_of = []
    joined = ""
    for t in tokens:
        joined += t
        word_of.append(None)
    pos = 0
    spans = [(m.start(), m.end(), m.group(0)) for m in re.finditer(r"\w+", "".join(tokens))]
    for i, t in enumerate(tokens):
        a, b = pos, pos + len(t)
        pos = b
        for s, e, w in spans:
            if s < b and a < e and w.lower() in index:
                out[index[w.lower()]] += vals[i]
                break
    return out, calls[0], clf.n_forward


def deletion_area(pipe, text, words, values, c):
    """The deletion-curve area of ``values`` (one per word) for class ``c``, by modellens."""
    import copy

    attr = ml.shapley(lambda t: np.zeros(len(t)), text)  # the text's players, values 0
    order = {w: k for k, w in enumerate(attr.feature_names)}
    v = np.zeros((1, len(order)))
    for w, x in zip(words, values):
        v[0, order[w]] = x
    attr = copy.copy(attr)
    attr.values = v
    return ml.deletion_curves(pipe, attr, target=c).deletion_area


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--words", type=int, default=64)
    ap.add_argument("--texts", type=int, default=3)
    ap.add_argument("--budget", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--captum-batch", type=int, default=1)
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    pipe, accuracy = text_model.build_pipeline()
    print(f"model: tiny BERT, held-out accuracy {accuracy:.3f}; {args.texts} texts of "
          f"{args.words} words; budget {args.budget} evaluations per text (machine may be "
          "loaded: read the ratios)")
    rng = np.random.default_rng(0)
    texts = [text_model.long_text(args.words, rng=rng) for _ in range(args.texts)]
    rows = {"modellens": [], "owen": [], "captum": [], "shap": []}
    for text in texts:
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            vals, words, passes, c = ours(pipe, text, args.budget)
            rows["modellens"].append((time.perf_counter() - t0, passes,
                                      deletion_area(pipe, text, words, vals, c)))
            t0 = time.perf_counter()
            ov, ow, passes, oc = ours_owen(pipe, text, args.budget)
            rows["owen"].append((time.perf_counter() - t0, passes,
                                 deletion_area(pipe, text, ow, ov, oc)))
            t0 = time.perf_counter()
            cv, calls = captum_values(pipe, text, words, args.budget, c, args.captum_batch)
            rows["captum"].append((time.perf_counter() - t0, calls,
                                   deletion_area(pipe, text, words, cv, c)))
            try:
                t0 = time.perf_counter()
                sv, _, passes = shap_values(pipe, text, words, args.budget, c)
                rows["shap"].append((time.perf_counter() - t0, passes,
                                     deletion_area(pipe, text, words, sv, c)))
            except Exception as exc:  # shap's Text masker on this tokenizer
                print(f"shap failed: {type(exc).__name__}: {exc}")
    base = np.mean([r[0] for r in rows["modellens"]])
    print(f"{'method':10s} {'s/text':>8s} {'x ours':>7s} {'passes/text':>12s} "
          f"{'deletion area':>14s}")
    for name, r in rows.items():
        if not r:
            continue
        s, passes, area = (np.mean([x[i] for x in r]) for i in range(3))
        print(f"{name:10s} {s:8.2f} {s / base:7.2f} {passes:12.1f} {area:14.3f}")
    for text in texts[:2]:
        attr = ml.shapley(pipe, text, algorithm="kernel", tol=0.02, max_evals=40000,
                          random_state=0)
        print(f"tol=0.02: {int(attr.sampling.model_rows[0])} masked texts "
              f"(converged {bool(attr.sampling.converged[0])}) for {attr.values.shape[1]} "
              "distinct words")


if __name__ == "__main__":
    main()
