"""The fields of a result dict, checked one by one before a result is rebuilt from it.

A result dict is data from outside (a file, a colleague, a network): its type
tag and layout are checked by :func:`~._result_dicts.open_envelope`, and here
every field a ``from_dict`` reads is checked for its kind (a string, a float
array, a list of names), its shape agreeing with the others (the rows ``n``,
features ``d``, outputs ``k``, grid points ``g`` ... named once and held to the
same count everywhere), finiteness where a count or an index is meant, and, for
region trees, a bounded depth.  What fails is :class:`InvalidParameterError`
naming the field, raised before the result exists; a dict that ``to_dict``
wrote passes unchanged.

A spec is a function ``check(value, dims) -> None`` that raises
:class:`Bad` with what is wrong; the constructors below build them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np

from ._serialize import short

__all__ = ["Bad", "check_fields", "array", "text", "flag", "count", "number", "texts",
           "seq", "mapping", "one_of", "either"]

Spec = Callable[[object, dict], None]


class Bad(Exception):
    """A field that does not hold what its spec says (the message says what)."""


def check_fields(opened, values: Mapping, specs: Mapping[str, Spec], dims: dict | None = None,
                 prefix: str = "", required=()) -> dict:
    """Check ``values`` against ``specs``; the error names the first field that fails.

    A field that is absent is left to its default, unless ``required``
    names it.  ``dims`` (the named counts seen so far) is filled and
    returned, so that the blocks of a result are held to its rows and
    features.
    """
    dims = {} if dims is None else dims
    for name in required:
        if name not in values:
            raise opened.error(prefix + name, "is missing")
    for name, spec in specs.items():
        if name not in values:
            continue
        try:
            spec(values.get(name), dims)
        except Bad as exc:
            raise opened.error(prefix + name, str(exc)) from None
    return dims


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of dtype {value.dtype.str} and shape {value.shape}"
    return f"a {type(value).__name__}"


def _bind(dims: dict, name: str, n: int, what: str):
    if name == "*":
        return
    if name.endswith("~"):  # a count seen or one less (per grid point or per bin)
        base = name[:-1]
        if base in dims and n not in (dims[base], dims[base] - 1):
            raise Bad(f"has {n} {what} where {dims[base]} (one per grid point) or "
                      f"{dims[base] - 1} (one per bin) belong")
        return
    if dims.setdefault(name, n) != n:
        raise Bad(f"has {n} {what} where the other fields have {dims[name]}")


def array(kinds: str, *shapes: str, optional: bool = False, finite: bool = False,
          nonnegative: bool = False) -> Spec:
    """A numpy array of a dtype kind in ``kinds`` and one of ``shapes`` ("n d", "g *", "").

    A shape names each axis's count: the same name is the same count in
    every field, ``*`` any count, ``g~`` the count ``g`` or one less.
    """
    patterns = [s.split() for s in shapes]

    def check(value, dims):
        if value is None and optional:
            return
        if not isinstance(value, np.ndarray) or value.dtype.kind not in kinds:
            raise Bad(f"is {_describe(value)}, not an array of kind {kinds!r}")
        fits = [p for p in patterns if len(p) == value.ndim]
        if patterns and not fits:
            raise Bad(f"has shape {value.shape}; it takes "
                      + " or ".join("(" + ", ".join(p) + ")" for p in patterns))
        if fits:
            # the pattern that agrees with the counts seen so far (else the first)
            agreeing = [p for p in fits if all(
                d == "*" or d.endswith("~") or dims.get(d, n) == n
                for d, n in zip(p, value.shape))]
            for d, n in zip((agreeing or fits)[0], value.shape):
                _bind(dims, d, n, "entries on an axis")
        if value.dtype.kind in "fiu" and value.size:
            if finite and not np.isfinite(value).all():
                raise Bad("holds NaN or infinite values")
            if nonnegative and (value < 0).any():
                raise Bad("holds negative values")
    return check


def text(optional: bool = False, choices: tuple | None = None) -> Spec:
    def check(value, dims):
        if value is None and optional:
            return
        if not isinstance(value, str):
            raise Bad(f"is {_describe(value)}, not a string")
        if choices is not None and value not in choices:
            raise Bad(f"is {short(value)}, not one of {list(choices)}")
    return check


def flag(optional: bool = False) -> Spec:
    def check(value, dims):
        if not (value is None and optional) and not isinstance(value, (bool, np.bool_)):
            raise Bad(f"is {_describe(value)}, not True or False")
    return check


def count(optional: bool = False, dim: str | None = None) -> Spec:
    """A whole number >= 0 (a Python or numpy int)."""
    def check(value, dims):
        if value is None and optional:
            return
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
                or value < 0:
            raise Bad(f"is {short(value, 40)}, not a count (a whole number >= 0)")
        if dim is not None:
            _bind(dims, dim, int(value), "as its count")
    return check


def number(optional: bool = False, finite: bool = False) -> Spec:
    def check(value, dims):
        if value is None and optional:
            return
        if isinstance(value, (bool, np.bool_)) or not isinstance(
                value, (int, float, np.integer, np.floating)):
            raise Bad(f"is {_describe(value)}, not a number")
        if finite and not math.isfinite(value):
            raise Bad(f"is {value}, not a finite number")
    return check


def seq(dim: str | None = None, optional: bool = False, item: Spec | None = None,
        kinds=(list,)) -> Spec:
    """A list (or tuple: ``kinds``) of ``dim`` entries, each checked by ``item``."""
    def check(value, dims):
        if value is None and optional:
            return
        if isinstance(value, np.ndarray) and value.ndim == 1 and np.ndarray in kinds:
            pass
        elif not isinstance(value, kinds):
            raise Bad(f"is {_describe(value)}, not a list")
        if dim is not None:
            _bind(dims, dim, len(value), "entries")
        if item is not None:
            for i, v in enumerate(value):
                try:
                    item(v, dims)
                except Bad as exc:
                    raise Bad(f"entry {i} {exc}") from None
    return check


def texts(dim: str | None = None, optional: bool = False) -> Spec:
    return seq(dim, optional, item=text())


def mapping(optional: bool = False) -> Spec:
    def check(value, dims):
        if not (value is None and optional) and not isinstance(value, dict):
            raise Bad(f"is {_describe(value)}, not a dict")
    return check


def one_of(*specs: Spec) -> Spec:
    """The first spec that accepts the value (the error of the last otherwise)."""
    def check(value, dims):
        error = None
        for spec in specs:
            trial = dict(dims)
            try:
                spec(value, trial)
            except Bad as exc:
                error = exc
                continue
            dims.update(trial)
            return
        raise error  # type: ignore[misc]
    return check


def either(spec: Spec) -> Spec:
    """``spec`` or a tuple of two values each checked by ``spec`` (a 2-D effect's pair)."""
    def pair(value, dims):
        if not isinstance(value, tuple) or len(value) != 2:
            raise Bad(f"is {_describe(value)}, not a pair")
        for v in value:
            spec(v, dims)
    return one_of(spec, pair)
