"""A Hugging Face ``transformers`` text classifier as a function of a list of texts.

:func:`text_classifier` recognises a ``text-classification`` pipeline, or a
sequence-classification model given with its tokenizer (``hf_tokenizer=``),
and returns a :class:`TextClassifier`: ``f(list of str) -> (m, k)`` scores of
every class, named by the model's ``id2label``.  Text explanations call it
like any ``predict_fn`` (through :class:`~modellens.models.InputModel`), so
the engine's chunks become its calls; inside a call it

* tokenizes every text (truncated to the model's length), sorts the texts by
  their number of tokens, and cuts them into batches of at most
  ``batch_tokens`` padded tokens, so that padding is small and memory bounded;
* pads each batch to its longest text with an attention mask (padding never
  changes a score beyond float error: ``tests/attribution/test_text_transformer.py``);
* runs each batch under ``torch.no_grad()`` on the model's device, and returns
  every class's score from the same forward pass, in float64, in the order asked.

``transformers`` is imported only when a model of that library is given (the
``text`` extra).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._validation import InvalidParameterError, ModellensWarning
from ._inputs import text_function

__all__ = ["TextClassifier", "text_classifier", "is_transformers_model", "TEXT_OUTPUTS"]

#: What a transformer's classes are scored by: its probabilities (softmax over the
#: classes; a sigmoid per class for multi-label models and single-logit models, as the
#: pipeline does) or its logits.
TEXT_OUTPUTS = ("auto", "predict_proba", "decision_function")

#: Padded tokens per forward pass on the CPU (a GPU's follow its free memory).
CPU_BATCH_TOKENS = 8192


def is_transformers_model(model) -> bool:
    """A pipeline, model or tokenizer object of the ``transformers`` library."""
    return type(model).__module__.split(".")[0] == "transformers"


def _import_transformers():
    try:
        import transformers  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the extra is installed where tested
        raise ImportError(
            "explaining a Hugging Face model needs transformers, the optional extra 'text': "
            "pip install 'modellens[text]'.") from exc


def text_classifier(model, hf_tokenizer=None, response_method: str = "auto"):
    """``model`` as a :class:`TextClassifier` when it is a ``transformers`` classifier.

    Any other model goes through :func:`~modellens.models._inputs.text_function`
    (no ``hf_tokenizer`` given): a callable as it is, a scikit-learn text
    pipeline by its bound ``predict_proba`` / ``decision_function`` /
    ``predict`` (``response_method`` chooses among the first two).
    """
    if response_method not in TEXT_OUTPUTS:
        raise InvalidParameterError(
            f"response_method for a text classifier must be one of {TEXT_OUTPUTS} "
            f"('auto' and 'predict_proba': class probabilities, 'decision_function': logits), "
            f"got {response_method!r}.")
    if isinstance(model, TextClassifier):
        return model
    if not is_transformers_model(model):
        if hf_tokenizer is not None:
            raise InvalidParameterError(
                "hf_tokenizer= goes with a transformers sequence-classification model "
                f"(model=), got a model of type {type(model).__name__}.")
        # a function of texts as it is; a scikit-learn text pipeline by its bound method
        return text_function(model, response_method)
    _import_transformers()
    if hasattr(model, "task") and hasattr(model, "model"):  # a pipeline
        if model.task not in ("text-classification", "sentiment-analysis"):
            raise InvalidParameterError(
                f"a transformers pipeline of task {model.task!r} is not a text classifier; "
                "pass a 'text-classification' pipeline.")
        if hf_tokenizer is not None:
            raise InvalidParameterError("a pipeline brings its own tokenizer: drop hf_tokenizer=.")
        return TextClassifier(model.model, model.tokenizer, response_method=response_method)
    if hf_tokenizer is None:
        raise InvalidParameterError(
            f"a transformers model ({type(model).__name__}) needs its tokenizer: pass "
            "hf_tokenizer=AutoTokenizer.from_pretrained(...), or a 'text-classification' "
            "pipeline as the model.")
    return TextClassifier(model, hf_tokenizer, response_method=response_method)


class TextClassifier:
    """Every class's score of a transformers sequence classifier, for a list of texts.

    Parameters
    ----------
    model : transformers PreTrainedModel
        A sequence-classification model in evaluation mode (``model.eval()``).
    tokenizer : transformers tokenizer
    response_method : {"auto", "predict_proba", "decision_function"}
        Probabilities (``"auto"``, ``"predict_proba"``) or logits.
    batch_tokens : int, optional
        Padded tokens per forward pass; default ``CPU_BATCH_TOKENS`` on the
        CPU, and on a CUDA device the tokens whose estimated activations fit a
        quarter of its free memory.

    Attributes
    ----------
    labels : list of str
        The classes, in the model's order (``config.id2label``).
    mask_token : str or None
        The tokenizer's mask token, which stands for a removed word (None:
        removed words are deleted).
    n_calls, n_forward : int
        Calls and forward passes so far.
    """

    def __init__(self, model, tokenizer, *, response_method="auto", batch_tokens=None):
        import torch

        if not isinstance(model, torch.nn.Module) or not hasattr(model, "config"):
            raise InvalidParameterError(
                f"model must be a transformers sequence-classification model, got "
                f"{type(model).__name__}.")
        if model.training:
            raise InvalidParameterError(
                "the transformers model is in training mode (dropout makes its scores random): "
                "call model.eval() first.")
        if not callable(tokenizer):
            raise InvalidParameterError(f"hf_tokenizer must be a transformers tokenizer, got "
                                        f"{type(tokenizer).__name__}.")
        self.model, self.tokenizer = model, tokenizer
        self.response_method = response_method
        config = model.config
        k = int(getattr(config, "num_labels", 1))
        names = getattr(config, "id2label", None) or {}
        self.labels = [str(names.get(i, f"LABEL_{i}")) for i in range(k)]
        self.sigmoid = getattr(config, "problem_type", None) == "multi_label_classification" \
            or k == 1
        self.mask_token = getattr(tokenizer, "mask_token", None) or None
        limits = [getattr(tokenizer, "model_max_length", None),
                  getattr(config, "max_position_embeddings", None)]
        self.max_length = min(int(v) for v in limits if v and v < 10**7) \
            if any(v and v < 10**7 for v in limits) else 512
        self.batch_tokens = int(batch_tokens) if batch_tokens else self._default_tokens()
        self.n_calls = self.n_forward = 0
        self.warned_cut = False

    @property
    def device(self):
        for p in self.model.parameters():
            return p.device
        import torch

        return torch.device("cpu")

    def _default_tokens(self) -> int:
        import torch

        device = self.device
        if device.type != "cuda":
            return CPU_BATCH_TOKENS
        free, _ = torch.cuda.mem_get_info(device)
        config = self.model.config
        # activations of one token, about: hidden states and the feed-forward's, per layer
        width = int(getattr(config, "hidden_size", 768)) + \
            int(getattr(config, "intermediate_size", 3072))
        per_token = 4 * width * max(1, int(getattr(config, "num_hidden_layers", 12))) * 2
        return int(min(max(free // 4 // per_token, 1024), 2**20))

    def target(self, target):
        """``target=`` with class labels replaced by their positions (``"all"``, None kept).

        A label of ``config.id2label`` (``"POSITIVE"``) or a list of them names the
        classes to explain; positions pass as they are.
        """
        if target is None or (isinstance(target, str) and target == "all"):
            return target
        if isinstance(target, (list, tuple, np.ndarray)):
            return [self._position(t) for t in target]
        return self._position(target)

    def _position(self, target):
        if isinstance(target, (str, np.str_)):
            if str(target) in self.labels:
                return self.labels.index(str(target))
            raise InvalidParameterError(
                f"target={str(target)!r} is not a class of the model; its classes are "
                f"{self.labels} (config.id2label): pass one of them or its position "
                f"0..{len(self.labels) - 1}.")
        return target  # a position, checked against the scores' width when they come

    def __repr__(self):
        return (f"TextClassifier({type(self.model).__name__}, classes={self.labels}, "
                f"response_method={self.response_method!r})")

    def __call__(self, texts):
        import pandas as pd

        texts = [str(t) for t in texts]
        out = self.scores(texts)
        return pd.DataFrame(out, columns=self.labels)

    def scores(self, texts) -> np.ndarray:
        """``(m, k)`` float64 scores of ``texts`` (a list of str)."""
        import torch

        self.n_calls += 1
        ids = self._token_ids(texts)
        lengths = np.array([len(i) for i in ids])
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(texts), len(self.labels)))
        device = self.device
        start = 0
        with torch.no_grad():
            while start < len(order):
                # sorted by length: the batch's longest text is its last one
                stop = start + 1
                while stop < len(order) and \
                        (stop + 1 - start) * lengths[order[stop]] <= self.batch_tokens:
                    stop += 1
                batch = order[start:stop]
                enc = self.tokenizer.pad({"input_ids": [ids[i] for i in batch]},
                                         return_tensors="pt")
                logits = self.model(input_ids=enc["input_ids"].to(device),
                                    attention_mask=enc["attention_mask"].to(device)).logits
                self.n_forward += 1
                out[batch] = self._link(logits).to("cpu", torch.float64).numpy()
                start = stop
        return out

    def _token_ids(self, texts) -> list:
        """Token ids of each text, cut to the model's length, saying so once when a text is cut.

        A cut text's words past the cut cannot move the score, so their Shapley values are
        0 whatever they mean: a number that looks like an answer and is not one.
        """
        ids = self.tokenizer(texts, truncation=True, max_length=self.max_length + 1)["input_ids"]
        cut = [len(i) > self.max_length for i in ids]
        if any(cut):
            if not self.warned_cut:
                self.warned_cut = True
                warnings.warn(
                    f"{sum(cut)} of {len(texts)} texts are longer than the model's "
                    f"{self.max_length} tokens: the model sees only their first "
                    f"{self.max_length} tokens, so the words past the cut get values of 0 "
                    f"(they cannot change the score). Explain shorter pieces (split the text, "
                    f"or players='sentence' on each part) or use a model with a longer "
                    f"context.", ModellensWarning, stacklevel=2)
            ids = self.tokenizer(texts, truncation=True,
                                 max_length=self.max_length)["input_ids"]
        return ids

    def _link(self, logits):
        import torch

        if self.response_method == "decision_function":
            return logits
        logits = logits.to(torch.float64)  # the probabilities in float64, from the logits
        return torch.sigmoid(logits) if self.sigmoid else torch.softmax(logits, dim=-1)
