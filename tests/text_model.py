"""A small real transformer text classifier, built offline in a few seconds (tests, benchmarks).

The texts are drawn from a small vocabulary; the label is 1 exactly when the two
planted words ``SIGNAL = ("sunny", "beach")`` are both in the text (an AND: the
words matter only together, so their interaction is the model's signal).  A
WordPiece tokenizer over a fixed vocabulary (``vocabulary()``: the words of
the data, some of them cut into fixed sub-word pieces, and single characters
for any other word), and a tiny BERT
(``transformers.BertForSequenceClassification``, 2 layers of width 32) fit for
a few hundred steps on the CPU, from fixed seeds on one thread: two fresh
processes build the same weights (``test_the_tiny_model_is_the_same_in_every_process``).
Nothing is downloaded and nothing is written to disk: the pipeline lives in
memory.

Used by ``tests/attribution/test_text_transformer.py`` (a session fixture) and
``benchmarks/bench_text_transformer.py``.
"""

from __future__ import annotations

import numpy as np

#: the two words whose presence together makes the label 1
SIGNAL = ("sunny", "beach")

#: the share of words masked in each training batch (see ``_fit``)
MASK_RATE = 0.15
#: filler words (some long enough to be cut into sub-word tokens)
FILLER = ["the", "a", "day", "was", "we", "went", "to", "with", "friends", "and", "saw",
          "some", "birds", "near", "quiet", "water", "walked", "along", "streets", "ate",
          "bread", "after", "lunch", "evening", "yesterday", "mountains", "wonderful",
          "photographs", "afterwards", "everybody", "bicycles", "umbrella", "cold", "rain"]


def make_texts(n, *, rng, min_words=6, max_words=12, p_signal=0.55):
    """``n`` texts and their labels (1 iff both signal words occur)."""
    texts, labels = [], []
    for _ in range(n):
        k = int(rng.integers(min_words, max_words + 1))
        words = list(rng.choice(FILLER, size=k))
        has = [w for w in SIGNAL if rng.random() < p_signal]
        for w in has:
            words[int(rng.integers(len(words)))] = w
        texts.append(" ".join(words))
        labels.append(int(all(w in words for w in SIGNAL)))
    return texts, np.array(labels)


def long_text(n_words, *, rng, signal=True):
    """One text of ``n_words`` words in sentences of 8 to 16, the signal words in it."""
    words = list(rng.choice(FILLER, size=n_words))
    if signal:
        a, b = rng.choice(n_words, size=2, replace=False)
        words[a], words[b] = SIGNAL
    out, start = [], 0
    while start < n_words:
        stop = min(n_words, start + int(rng.integers(8, 17)))
        out.append(" ".join(words[start:stop]) + ".")
        start = stop
    return " ".join(out)


#: long words cut into fixed sub-word pieces (WordPiece, "##" marks a continuation), so that
#: "sub-word tokens of one word are masked together" is exercised by the tests
PIECES = {"yesterday": ["yester", "##day"], "mountains": ["mount", "##ains"],
          "wonderful": ["wonder", "##ful"], "photographs": ["photo", "##graph", "##s"],
          "afterwards": ["after", "##wards"], "everybody": ["every", "##body"],
          "bicycles": ["bi", "##cycle", "##s"], "umbrella": ["umb", "##rella"]}


def vocabulary() -> list:
    """The tokenizer's vocabulary, in a fixed order (no trainer: the same in every process).

    The special tokens; the punctuation and the letters and digits alone and as
    continuations (any other word is spelt out in pieces, never ``[UNK]``); every
    word of the data whole, except the words of ``PIECES``, which are cut.
    """
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    chars = list("abcdefghijklmnopqrstuvwxyz0123456789")
    punctuation = list(".,!?;:'\"&<>/()-")
    words = [w for w in SIGNAL + tuple(FILLER) if w not in PIECES]
    pieces = [p for w in FILLER if w in PIECES for p in PIECES[w]]
    vocab = specials + punctuation + chars + ["##" + c for c in chars] + words + pieces
    return list(dict.fromkeys(vocab))  # first occurrence kept ("after" is a word and a piece)


def build_tokenizer():
    """A BERT-style WordPiece tokenizer over :func:`vocabulary` (``transformers`` fast tokenizer)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(vocabulary())}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]",
                                   model_max_length=512)


def build_pipeline(*, seed=0, steps=150, n_texts=1000):
    """The trained ``text-classification`` pipeline (CPU), with every class's score.

    About 3-8 s of one CPU core.  Returns ``(pipe, accuracy)``, the accuracy on
    fresh texts.
    """
    import torch

    rng = np.random.default_rng(seed)
    texts, labels = make_texts(n_texts, rng=rng)
    tokenizer = build_tokenizer()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny model: one thread is fastest, and sums in one order
    try:
        pipe, accuracy = _build(tokenizer, texts, labels, rng, seed, steps, n_texts)
    finally:
        torch.set_num_threads(threads)
    return pipe, accuracy


def _build(tokenizer, texts, labels, rng, seed, steps, n_texts):
    import torch
    from transformers import BertConfig, BertForSequenceClassification, pipeline

    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=512, num_labels=2,
                        id2label={0: "OTHER", 1: "SUNNY_BEACH"},
                        label2id={"OTHER": 0, "SUNNY_BEACH": 1},
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = BertForSequenceClassification(config)
    enc = tokenizer(texts, padding=True, return_tensors="pt")
    y = torch.tensor(labels)
    model.train()
    _fit(model, enc, y, rng, steps, n_texts)
    model.eval()
    test_texts, test_labels = make_texts(400, rng=np.random.default_rng(seed + 1))
    with torch.no_grad():
        enc = tokenizer(test_texts, padding=True, return_tensors="pt")
        pred = model(**enc).logits.argmax(-1).numpy()
    accuracy = float((pred == test_labels).mean())
    pipe = pipeline("text-classification", model=model, tokenizer=tokenizer, device=-1,
                    top_k=None)
    return pipe, accuracy


def _fit(model, enc, y, rng, steps, n_texts):
    import torch

    # the explainers ask the model about texts with words masked: each batch masks a
    # word now and then and labels by the words left, so that the AND holds on them too
    # (trained on whole texts only, the planted pair's interaction depended on the CPU's
    # floating-point kernels, and another word's could outrank it)
    vocab = vocabulary()
    special = torch.as_tensor([vocab.index(t) for t in ("[PAD]", "[CLS]", "[SEP]")])
    mask_id, signal = vocab.index("[MASK]"), [vocab.index(w) for w in SIGNAL]
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for _ in range(steps):
        idx = torch.as_tensor(rng.choice(n_texts, size=32, replace=False))
        ids = enc["input_ids"][idx].clone()
        hide = torch.as_tensor(rng.random(tuple(ids.shape)) < MASK_RATE)
        hide &= (enc["attention_mask"][idx] == 1) & ~torch.isin(ids, special)
        ids[hide] = mask_id
        labels = torch.stack([(ids == t).any(dim=1) for t in signal]).all(dim=0).long()
        out = model(input_ids=ids, attention_mask=enc["attention_mask"][idx], labels=labels)
        opt.zero_grad()
        out.loss.backward()
        opt.step()


#: texts whose logits identify a build of the model (:func:`logits_digest`)
DIGEST_TEXTS = ["we went to the sunny beach with birds",
                "yesterday the wonderful photographs of the mountains",
                "everybody saw some bicycles near the quiet water afterwards"]


def logits_digest(pipe) -> str:
    """SHA-256 of the model's float32 logits of ``DIGEST_TEXTS`` (one thread, one text a pass)."""
    import hashlib

    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            rows = [pipe.model(**pipe.tokenizer(t, return_tensors="pt")).logits[0].numpy()
                    for t in DIGEST_TEXTS]
    finally:
        torch.set_num_threads(threads)
    return hashlib.sha256(np.asarray(rows, dtype=np.float32).tobytes()).hexdigest()
