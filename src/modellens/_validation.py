"""Checks of user options at the boundary, one error class and one warning class.

Every public function validates its keyword options here, so that a wrong
option always raises :class:`InvalidParameterError` with a message that names
the option, says what it got and what it takes.
"""

from __future__ import annotations

import functools
import numbers
import os
import sys
import warnings
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar, cast

import numpy as np

__all__ = ["InvalidParameterError", "NotATreeModelError", "ModellensWarning", "user_stacklevel", "is_integer",
           "check_int",
           "check_choice", "check_level", "check_positive_float", "check_random_state"]


class InvalidParameterError(ValueError, TypeError):
    """An option has a wrong type or value.

    Both a ``ValueError`` and a ``TypeError`` (as scikit-learn's
    ``InvalidParameterError``), so ``except ValueError`` catches it whatever
    the mistake was.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).normal(size=(50, 2))
    >>> try:
    ...     ml.pdp(lambda A: A[:, 0], X, grid=1)
    ... except ValueError as error:
    ...     print(type(error).__name__, "-", error)
    InvalidParameterError - grid must be at least 2 points, got 1.
    """


class NotATreeModelError(InvalidParameterError):
    """The model is not a tree ensemble that the tree methods read.

    Raised by ``shapley(algorithm="tree")``, ``interactions(method="tree")``
    and ``pdp(method="tree")``; an :class:`InvalidParameterError`, so code
    that catches that catches this too.  Catch it to fall back to a
    model-agnostic method.

    Attributes
    ----------
    reason : str or None
        Why a tree-based model cannot be read (a Pipeline, several outputs
        per row, ...); None when the model is not a tree ensemble at all.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).normal(size=(50, 2))
    >>> try:
    ...     ml.shapley(lambda A: A[:, 0], X[:2], background=X, algorithm="tree")
    ... except ml.NotATreeModelError as error:
    ...     print(error.reason)
    None
    """

    def __init__(self, message: str, *, reason: str | None = None):
        super().__init__(message)
        self.reason = reason


class ModellensWarning(UserWarning):
    """A warning from modellens.

    Filter exactly ours with ``warnings.simplefilter("ignore", ModellensWarning)``.

    Examples
    --------
    Shapley values without a background take a sample of ``X`` and say so:

    >>> import warnings
    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).normal(size=(150, 2))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     attr = ml.shapley(lambda A: A.sum(axis=1), X)
    >>> caught[0].category.__name__, str(caught[0].message)[:38]
    ('ModellensWarning', 'background=None: using a random sample')
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", ml.ModellensWarning)  # silence ours only
    ...     attr = ml.shapley(lambda A: A.sum(axis=1), X)
    """



class MissingValuesWarning(ModellensWarning):
    """Rows with a missing value in a feature are left out of what needs its value.

    The warning carries what it says as fields, so that a program (the
    report among them) reads them instead of parsing the text.

    Attributes
    ----------
    column : str
        The feature's name.
    n_missing : int
        How many rows have a missing value in it.
    n_rows : int
        How many rows the data have.
    used_for : str
        What the rows are left out of (``"grid"``, ``"ALE bins"``, ...).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).normal(size=(50, 2))
    >>> X[:3, 0] = np.nan
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     pd_ = ml.pdp(lambda A: np.nan_to_num(A).sum(axis=1), X, features=[0], grid=3)
    >>> w = caught[0].message
    >>> type(w).__name__, w.column, w.n_missing, w.n_rows, w.used_for
    ('MissingValuesWarning', 'x0', 3, 50, 'grid')
    """

    def __init__(self, message: str, *, column: str, n_missing: int, n_rows: int,
                 used_for: str):
        super().__init__(message)
        self.column, self.n_missing, self.n_rows = column, n_missing, n_rows
        self.used_for = used_for


class UnknownLevelsWarning(ModellensWarning):
    """A categorical column holds levels the model never saw.

    Effects and attributions at such a level describe only how the model reads
    a level it never saw, which depends on the library (the message says how XGBoost
    reads it; others are named as reading an unknown level):
    a one-hot encoder with ``handle_unknown="ignore"`` reads it as no level at all,
    HistGradientBoosting as a missing value, and XGBoost (3.1+, its levels stored
    with the model) as the next larger level it knows, in its own order of the
    levels.

    Attributes
    ----------
    column : str
        The column's name.
    known_levels : list
        The levels the model knows.
    unknown_levels : list
        The levels of the data the model does not know.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np, pandas as pd, modellens as ml
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> X = pd.DataFrame({"hour": np.arange(40) % 4, "x": np.linspace(0, 1, 40)})
    >>> model = HistGradientBoostingRegressor(max_iter=5, categorical_features=["hour"])
    >>> model = model.fit(X, X["x"] + X["hour"])
    >>> data = X.assign(hour=X["hour"].where(X.index > 0, 7))  # 7: a level never seen
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     pd_ = ml.pdp(model, data, ["hour"])
    >>> w = [c.message for c in caught if c.category is ml.UnknownLevelsWarning][0]
    >>> w.column, w.unknown_levels, w.known_levels
    ('hour', [7], [0, 1, 2, 3])
    """

    def __init__(self, message: str, *, column: str, known_levels: list,
                 unknown_levels: list):
        super().__init__(message)
        self.column, self.known_levels = column, list(known_levels)
        self.unknown_levels = list(unknown_levels)


#: How a library reads a level it never saw, by the source of the model's levels (see
#: ``models.expected_inputs``); others: as an unknown level, whatever their rule for it is.
_UNSEEN_READINGS = {
    "XGBoost": "which XGBoost reads as the next larger level it knows (in its own sort order "
               "of the levels; past the largest it refuses the rows): their effects and "
               "attributions show the model at that other level",
}


def unknown_levels_message(column: str, known_levels: list, unknown_levels: list,
                           source: str = "") -> str:
    """The text of an :class:`UnknownLevelsWarning`, in the words of how the model's
    library (``source``: where its levels were read) reads a level it never saw."""
    reading = _UNSEEN_READINGS.get(source, "which the model reads as unknown levels: their "
                                   "effects and attributions show only how it treats a "
                                   "level it never saw")
    return (f"column {column!r} is categorical to the model, which knows the levels "
            f"{known_levels[:10]}{' ...' if len(known_levels) > 10 else ''}; the data also "
            f"hold {unknown_levels[:5]}, {reading}.")


_F = TypeVar("_F", bound=Callable[..., Any])

#: The version whose release removes the keywords renamed in this one.
ALIAS_REMOVED_IN = "0.3"


def renamed(**old_to_new: str) -> Callable[[_F], _F]:
    """Keep renamed keywords working for one minor version, with a ``FutureWarning``.

    ``@renamed(x="X")`` on a public function lets ``f(x=...)`` still run (as
    ``f(X=...)``), warning that the old name goes in :data:`ALIAS_REMOVED_IN`;
    passing both names is an error.  The wrapped function's signature (what
    the documentation and ``inspect.signature`` show) has the new names only;
    ``__renamed__`` lists the aliases (the vocabulary test reads it).
    """

    def wrap(func: _F) -> _F:
        @functools.wraps(func)
        def with_aliases(*args, **kwargs):
            for old, new in old_to_new.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise InvalidParameterError(
                        f"{func.__name__}() got {old}= and {new}=; {old}= is the old name "
                        f"of {new}=: pass {new}= only.")
                warnings.warn(f"{func.__name__}({old}=...) is deprecated and will be removed "
                              f"in modellens {ALIAS_REMOVED_IN}; use {new}= instead.",
                              FutureWarning, stacklevel=2)
                kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        with_aliases.__renamed__ = dict(old_to_new)  # type: ignore[attr-defined]
        return cast(_F, with_aliases)

    return wrap

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning issued by the caller name the user's line.

    Counts the frames from the caller up to the first one outside modellens, so
    the warning points at the call of a public function however deep the
    engine (plans, reductions, the out-of-core driver) issued it.
    """
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def is_integer(x) -> bool:
    """True for a Python or numpy integer, but not a bool (``True`` is no count)."""
    return isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, bool)


def check_int(value, name: str, *, low: int | None = None, what: str = "an integer",
              allow_none: bool = False):
    """``value`` as an ``int`` at least ``low``; refuses floats, strings and bools.

    A float is refused even when it is whole (``2.5`` rows cannot be meant,
    and silently truncating ``2.0`` hides a unit mistake elsewhere).
    """
    if value is None and allow_none:
        return None
    if not is_integer(value):
        raise InvalidParameterError(
            f"{name} must be {what}, got {value!r} of type {type(value).__name__}.")
    if low is not None and value < low:
        raise InvalidParameterError(f"{name} must be {what} (at least {low}), got {value}.")
    return int(value)


def check_choice(value, name: str, choices):
    """``value`` if it is one of ``choices`` (compared with ``==``, strings only)."""
    if not isinstance(value, str) or value not in choices:
        raise InvalidParameterError(f"{name} must be one of {tuple(choices)}, got {value!r}.")
    return value


def check_level(value, name: str = "confidence"):
    """A probability level strictly between 0 and 1, as a float."""
    # typeshed's numbers.Real declares no comparison and no array protocol: the
    # ignores below are for that, the values are real numbers by the isinstance
    if not isinstance(value, numbers.Real) or isinstance(value, bool) \
            or not 0 < value < 1:  # type: ignore[operator]
        raise InvalidParameterError(
            f"{name} must be a level in (0, 1), such as 0.95; got {value!r}.")
    return float(value)


def check_positive_float(value, name: str, what: str = "a positive number"):
    """A finite number greater than 0, as a float."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool) \
            or not np.isfinite(value) or value <= 0:  # type: ignore[call-overload]
        raise InvalidParameterError(f"{name} must be {what}, got {value!r}.")
    return float(value)


def check_random_state(random_state, name: str = "random_state") -> np.random.Generator:
    """A numpy Generator from ``random_state``: None, a non-negative integer or a Generator.

    numpy's own errors for a string or a negative seed name none of our
    options, so they are caught here.
    """
    if random_state is None or isinstance(random_state, (np.random.Generator,
                                                         np.random.BitGenerator,
                                                         np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    if is_integer(random_state) and random_state >= 0:
        return np.random.default_rng(int(random_state))
    raise InvalidParameterError(
        f"{name} must be None, a non-negative integer or a numpy Generator, "
        f"got {random_state!r}.")


def check_sample_weight(sample_weight, n: int, name: str = "sample_weight"):
    """``sample_weight`` as ``n`` finite non-negative floats that do not all vanish (None stays)."""
    if sample_weight is None:
        return None
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"{name} must hold one number per row of X, got "
                                    f"{type(sample_weight).__name__}.") from None
    if w.shape != (n,):
        raise InvalidParameterError(f"{name} must hold one weight per row of X ({n}), got "
                                    f"shape {w.shape}.")
    if not np.isfinite(w).all() or (w < 0).any() or not w.sum() > 0:
        raise InvalidParameterError(f"{name} must be finite, non-negative and not all zero.")
    return w
