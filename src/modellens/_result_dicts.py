"""Result dicts: the envelope every ``to_dict`` writes, and the checks of every field.

Every result's ``to_dict`` returns one envelope, built by :func:`envelope`:
``{"type": <class name>, ["schema": <layout version>,] ["fields": <to_jsonable
of its fields>,] <parts>}``, where the parts are already JSON-ready values
(nested results' own dicts).  ``from_dict`` opens it with
:func:`open_envelope`, which checks the type tag and the layout version and
raises the one error every result gives for a dict it cannot read; each field
is decoded on its own (:meth:`Envelope.fields`), so an undecodable one is
named, and then checked against the result's field specs
(:mod:`modellens._result_checks`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._serialize import MARKER, DecodeError, _type_name, from_jsonable, short, to_jsonable
from ._validation import InvalidParameterError

__all__ = ["envelope", "open_envelope", "Envelope", "flat_dict", "flat_fields", "floats",
           "strings", "optional"]


def envelope(kind: str, fields: dict | None = None, *, schema: int | None = None,
             **parts: Any) -> dict:
    """The dict a result's ``to_dict`` returns: its type tag, then its contents.

    Parameters
    ----------
    kind : str
        The type tag, the name of the result's class.
    fields : dict, optional
        The result's own fields, stored under ``"fields"`` through
        :func:`to_jsonable`; None leaves the key out.
    schema : int, optional
        The layout's version, stored under ``"schema"`` when given.
    **parts
        Further top-level entries, stored as given (in this order): values
        already JSON-ready, such as nested results' own dicts.

    Returns
    -------
    dict
        ``{"type": kind, "schema": schema, "fields": to_jsonable(fields), **parts}``
        without the entries that were not given.

    Examples
    --------
    >>> envelope("Thing", {"grid": (1, 2)}, schema=3)
    {'type': 'Thing', 'schema': 3, 'fields': {'grid': {'__modellens__': 'tuple', 'items': [1, 2]}}}
    """
    out: dict[str, Any] = {"type": kind}
    if schema is not None:
        out["schema"] = schema
    if fields is not None:
        out["fields"] = to_jsonable(fields)
    out.update(parts)
    return out


@dataclass(frozen=True)
class Envelope:
    """A result dict that :func:`open_envelope` accepted.

    Attributes
    ----------
    kind : str
        Its type tag.
    schema : int or None
        Its layout version; None for a result without versions.
    reader : str
        The class whose ``from_dict`` reads it, for the error messages.
    raw : dict
        The dict itself.
    """

    kind: str
    schema: int | None
    reader: str
    raw: dict

    def part(self, key: str) -> Any:
        """The top-level entry ``key`` as stored, or the error naming what is missing."""
        if key not in self.raw:
            raise InvalidParameterError(
                f"this {self.kind} dict has no {key!r} entry, so it is not a whole dict made "
                f"by {self.reader}.to_dict() (was it edited or cut short?).")
        return self.raw[key]

    def fields(self, required: Collection[str] = (), known: Collection[str] | None = None) -> dict:
        """The result's own fields, each decoded with :func:`from_jsonable`.

        ``required`` names the fields the result cannot be rebuilt without;
        ``known`` (default: any) every field it has.  A missing, unknown or
        undecodable field is the error that names it.
        """
        raw = self.part("fields")
        if not isinstance(raw, dict) or MARKER in raw:
            raise self.error("fields", f"is a {_type_name(raw)} where a dict of the fields "
                                       "is written")
        values = {}
        for name, value in raw.items():
            if known is not None and name not in known:
                raise self.error(name, "is not a field of this result")
            try:
                values[name] = from_jsonable(value)
            except DecodeError as exc:
                raise self.error(name, f"cannot be read: {exc}") from None
        for name in required:
            if name not in values:
                raise self.missing(name)
        return values

    def missing(self, name: str) -> InvalidParameterError:
        """The error for a field ``name`` this dict lacks and its result needs."""
        return InvalidParameterError(
            f"this {self.kind} dict has no {name!r} field, so it is not a whole dict "
            f"made by {self.reader}.to_dict() (was it edited or cut short?).")

    def error(self, name: str, what: str) -> InvalidParameterError:
        """The error for a field ``name`` of this dict that ``what`` describes."""
        return InvalidParameterError(
            f"the field {short(name)} of this {self.kind} dict {what}, so it is not a "
            f"dict made by {self.reader}.to_dict() (was it edited?).")


def open_envelope(d: Any, reader: str, *, kinds: Collection[str] | None = None,
                  newest: int | None = None) -> Envelope:
    """Check that ``d`` is a dict ``reader.to_dict()`` wrote, and open it.

    Parameters
    ----------
    d : object
        What the caller passed to ``from_dict``.
    reader : str
        The name of the class whose ``from_dict`` was called.
    kinds : collection of str, optional
        The type tags it reads (default: ``reader`` alone).
    newest : int, optional
        The layout version it reads, for a result whose dict carries
        ``"schema"`` (the project is unreleased: no older layout is read).
        None for a result without versions.

    Returns
    -------
    Envelope

    Raises
    ------
    InvalidParameterError
        If ``d`` is not a dict, has no type tag, another result's tag, or a
        layout newer than ``newest``; the message says what was given and
        what ``reader.from_dict`` expects.

    Examples
    --------
    >>> open_envelope({"type": "Thing", "fields": {"a": 1}}, "Thing").fields()
    {'a': 1}
    >>> try:
    ...     open_envelope({"type": "Other"}, "Thing")
    ... except ValueError as exc:
    ...     print(exc)
    Thing.from_dict() expects a dict made by Thing.to_dict() (its "type" is 'Thing'); got a dict whose "type" is 'Other'.
    """
    tags = (reader,) if kinds is None else tuple(kinds)
    wanted = (f"{tags[0]!r}" if len(tags) == 1
              else "one of " + ", ".join(repr(t) for t in tags))
    expects = (f"{reader}.from_dict() expects a dict made by {reader}.to_dict() "
               f"(its \"type\" is {wanted})")
    if not isinstance(d, dict):
        hint = ": read the JSON text with json.loads() first" if isinstance(d, (str, bytes)) else ""
        raise InvalidParameterError(f"{expects}; got a {_type_name(d)}{hint}.")
    if "type" not in d:
        raise InvalidParameterError(
            f"{expects}; got a dict without a \"type\" entry, which is not a modellens result.")
    kind = d["type"]
    if not isinstance(kind, str) or kind not in tags:
        raise InvalidParameterError(f"{expects}; got a dict whose \"type\" is {short(kind)}.")
    if newest is None:
        return Envelope(kind, None, reader, d)
    schema = d.get("schema")
    if type(schema) is not int or schema < 1 or schema < newest:
        raise InvalidParameterError(
            f"this {kind} dict has schema {short(schema, 40)}, which this version of modellens "
            f"does not write (it writes and reads schema {newest}), so it is not a dict made "
            f"by {reader}.to_dict().")
    if schema > newest:
        raise InvalidParameterError(
            f"this {kind} dict has schema {schema!r}; this version of modellens reads "
            f"schema {newest}: upgrade modellens to load it.")
    return Envelope(kind, schema, reader, d)


# ------------------------------------------------------------ results of flat fields
def floats(value) -> Any:
    """A float64 array (a field's ``to_dict`` and ``from_dict`` conversion)."""
    return np.asarray(value, dtype=np.float64)


def strings(value) -> list:
    """A list of strings (feature names, output names)."""
    return [str(v) for v in value]


def optional(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``convert``, with None left None (a field a result may not hold)."""
    return lambda value: None if value is None else convert(value)


def flat_dict(result: Any, layout: Mapping[str, Callable[[Any], Any]]) -> dict:
    """``to_dict`` of a result whose fields are plain values: one envelope of its fields.

    ``layout`` maps each field to its conversion (:func:`floats`, :func:`strings`,
    ``float``, ``int``, ``str``, ...), applied to the attribute of that name;
    the type tag is the result's class name.
    """
    return envelope(type(result).__name__,
                    {name: convert(getattr(result, name)) for name, convert in layout.items()})


def flat_fields(d: Any, reader: str, layout: Mapping[str, Callable[[Any], Any]],
                check: Callable[[Envelope, dict], None], *,
                required: Collection[str] | None = None) -> dict:
    """The keyword arguments that rebuild a :func:`flat_dict` result from ``d``, checked.

    ``d`` is opened for ``reader`` (:func:`open_envelope`), its fields decoded
    (``required``: default every field of ``layout``), checked by ``check``
    (the result's field specs, see :mod:`modellens._result_specs`) and each
    converted by its ``layout`` entry (an absent optional field: None).
    """
    opened = open_envelope(d, reader)
    values = opened.fields(tuple(layout) if required is None else required, known=tuple(layout))
    check(opened, values)
    return {name: convert(values.get(name)) for name, convert in layout.items()}
