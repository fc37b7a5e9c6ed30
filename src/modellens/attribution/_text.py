"""Texts as Shapley games: the model (a function of texts or a transformers classifier),
the players (words or sentences) and the masking rule, the same for every method.

A transformers ``text-classification`` pipeline, or a model with
``hf_tokenizer=``, becomes a :class:`~modellens.models.TextClassifier` (every
class from the same forward passes); an absent player is replaced by the
tokenizer's mask token when it has one and deleted otherwise (a plain
function of texts: deleted), and the text is tokenized again, so the sub-word
tokens of one word always come and go together.
"""

from __future__ import annotations

from .._validation import InvalidParameterError
from ..models import TextClassifier, text_classifier
from ._games import RemovalGame, check_masker
from ._masking import TextInput, TextMasker

__all__ = ["is_text_list", "text_game", "text_input", "text_target"]


def is_text_list(X) -> bool:
    """A list or tuple of texts (each explained on its own)."""
    return isinstance(X, (list, tuple)) and len(X) > 0 and all(isinstance(t, str) for t in X)


def text_target(fn, target):
    """``target=`` for the model ``fn``: a transformer's class labels as their positions."""
    return fn.target(target) if isinstance(fn, TextClassifier) else target


def text_input(fn, text, *, tokenizer=None, players=None, masker=None, random_state=None):
    """The players of ``text`` for the model ``fn`` (after :func:`text_classifier`)."""
    mask = fn.mask_token if isinstance(fn, TextClassifier) else None
    if masker is None:
        masker = TextMasker(tokenizer, players=players)
    elif players is not None:
        masker = TextMasker(masker.tokenizer, players=players, mask_token=masker.mask_token)
    return masker.represent(text, random_state, mask_token=mask)


def text_game(model, X, *, masker, target, response_method, hf_tokenizer, players,
              random_state) -> RemovalGame:
    """The removal game of one text or image, every output of the model asked for."""
    masker = check_masker("text" if masker is None else masker)
    if not isinstance(masker, TextMasker):
        if hf_tokenizer is not None or players is not None or response_method != "auto":
            raise InvalidParameterError("an image takes no hf_tokenizer, players or "
                                        "response_method.")
        return RemovalGame(model, masker.represent(X, random_state), target=target,
                           several=True)
    fn = text_classifier(model, hf_tokenizer, response_method)
    rep: TextInput = text_input(fn, X, players=players, masker=masker,
                                random_state=random_state)
    game = RemovalGame(fn, rep, target=text_target(fn, target), several=True)
    if rep.hierarchy is not None:  # Owen values: the sentence of each word, said
        game.diagnostics["sentence_of_word"] = rep.hierarchy.tolist()
    return game
