"""The background of a Shapley game: one rule for every algorithm.

Rows passed as ``background`` are encoded with the explained rows (one
schema, by the front door ``engine.open_request``); ``None`` or a count
draws rows of ``X`` (seeded by ``random_state``); a game that has a meaning without background (TreeSHAP's
path-dependent game) takes ``None`` as "no background".
"""

from __future__ import annotations

import warnings

from .._validation import InvalidParameterError, ModellensWarning
from ..data import sample_rows

__all__ = ["DEFAULT_BACKGROUND", "choose_background"]

#: Background rows drawn from ``X`` when ``background=None``.
DEFAULT_BACKGROUND = 100
#: What ``background=None`` means to a game that needs none.
NO_BACKGROUND = "none: the path-dependent game conditions on the trees' covers"


def choose_background(dataset, n: int, background, rows, rng, *, optional: bool = False,
                      stacklevel: int = 3):
    """The background rows of a game and a sentence saying where they came from.

    ``rows`` are the passed rows (encoded with ``X`` by ``engine.open_request``), else
    ``background`` is None (up to :data:`DEFAULT_BACKGROUND` rows of ``X``, or
    no background when the game is ``optional`` about it) or a count.
    Warnings are issued with ``stacklevel`` (3: the caller of the function
    that called this one, the user's line when that function is public).
    """
    if rows is not None:
        return rows, f"the {len(rows)} rows passed as background"
    if background is None and optional:
        return None, NO_BACKGROUND
    size = DEFAULT_BACKGROUND if background is None else int(background)
    if size < 1:
        raise InvalidParameterError(f"background as a count must be positive, got {background}.")
    drawn = sample_rows(n, size, rng)
    if drawn is None:
        if background is None and n == 1:
            raise InvalidParameterError(
                "background=None takes the background from X, but X holds a single row (its "
                "Shapley values would all be 0); pass background= (for example training data).")
        if background is None and n < 20:
            warnings.warn(f"background=None: using the {n} rows of X as background data; so "
                          "few rows make a rough reference. Pass background= (for example "
                          "training data).", ModellensWarning, stacklevel=stacklevel)
        return dataset.values[:n], f"all {n} rows of X"
    note = f"a random sample of {drawn.size} of the {n} rows of X (seeded by random_state)"
    if background is None:
        warnings.warn(f"background=None: using {note} as background data. Pass background= "
                      "(rows or a count) to choose it.", ModellensWarning, stacklevel=stacklevel)
    return dataset.values[drawn], note
