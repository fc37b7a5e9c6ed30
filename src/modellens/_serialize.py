"""Lossless conversion of result fields to and from JSON-ready structures.

Result objects hold numpy arrays, tuples, small dicts, strings, numbers,
``None``, category labels and dtypes.  :func:`to_jsonable` turns such a value
into nested ``dict``/``list``/``str``/``int``/``float``/``bool``/``None`` that
``json.dumps(..., allow_nan=False)`` accepts, and :func:`from_jsonable` turns
the parsed JSON back into an equal value.

Encoding
--------
Plain JSON values are written as themselves: ``None``, ``bool``, ``int``,
``str``, finite ``float``, ``list`` and ``dict`` with ``str`` keys.  Everything
else becomes a *tagged* dict, a dict holding the reserved key
``"__modellens__"`` (:data:`MARKER`) whose value names the tag:

``{"__modellens__": "tuple", "items": [...]}``
    A tuple.
``{"__modellens__": "dict", "items": [[key, value], ...]}``
    A dict whose keys are not all strings (keys are encoded like values, so a
    tuple key comes back as a tuple), or a dict that itself holds the key
    ``"__modellens__"``; this is how a user dict that looks like a tag is
    escaped.  Order of items is kept.
``{"__modellens__": "float", "value": "nan" | "inf" | "-inf"}``
    A non-finite Python float (finite floats, ``-0.0`` included, are plain
    JSON numbers: Python writes ``repr(float)``, which parses back exactly).
``{"__modellens__": "ndarray", "dtype": "<f4", "shape": [2, 3], "data": [...]}``
    A numpy array.  ``dtype`` is ``numpy.dtype.str`` (byte order included),
    ``data`` the C-order flat values:

    * kinds ``b``, ``i``, ``u``: JSON booleans / integers (any width, exact);
    * kind ``f`` (at most 64 bits): the values widened to float64, finite ones
      as JSON numbers and non-finite ones as the strings ``"nan"``, ``"inf"``,
      ``"-inf"``.  Widening is exact, so narrowing back gives the same bits
      except that every NaN comes back as numpy's default quiet NaN (its
      sign and payload are not kept);
    * kinds ``M``, ``m`` (datetime64, timedelta64): the underlying int64
      counts of the dtype's unit (``NaT`` is the minimum int64);
    * kind ``U``: JSON strings;
    * kind ``O``: each element encoded with :func:`to_jsonable`.
``{"__modellens__": "scalar", "dtype": "<f8", "data": value}``
    A numpy scalar (``np.float64``, ``np.int64``, ``np.bool_``,
    ``np.datetime64``, ``np.str_``, ...), ``data`` encoded as one array
    element.  It comes back as the *same numpy type*, not as a Python scalar.
``{"__modellens__": "timestamp", "value": int, "unit": "ns", "tz": ...}``
    A ``pandas.Timestamp``: its UTC count in its own unit; ``tz`` is ``None``,
    an IANA zone name, or a fixed UTC offset in integer microseconds.
``{"__modellens__": "timedelta", "value": int, "unit": "ns"}``
    A ``pandas.Timedelta``.
``{"__modellens__": "nat"}``, ``{"__modellens__": "na"}``
    ``pandas.NaT`` and ``pandas.NA``.
``{"__modellens__": "dtype", "str": "<f8"}``
    A numpy dtype (not structured ones).
``{"__modellens__": "categorical_dtype", "categories": ..., "categories_dtype": ..., "ordered": ...}``
    A ``pandas.CategoricalDtype``; ``categories`` is the encoded array of the
    levels (or ``None`` for unspecified categories) and ``categories_dtype`` the
    encoded dtype of the categories' Index, so e.g. a ``str`` Index stays one.
``{"__modellens__": "string_dtype", "storage": "python", "na_value": "NA" | "nan"}``
    A ``pandas.StringDtype``, spelled out because its short name (``"str"``)
    resolves differently depending on whether pyarrow is installed.
``{"__modellens__": "pandas_dtype", "name": "Int64"}``
    Any other pandas extension dtype whose string form parses back to an equal
    dtype (``"Int64"``, ``"Float64"``, ``"boolean"``, ``"datetime64[ns, UTC]"``,
    ``"period[D]"``, ...).

Types are matched exactly for containers and Python scalars: subclasses of
``tuple``, ``list``, ``dict``, ``int``, ``float`` and ``str`` (namedtuples,
enums, ``OrderedDict``) and ``ndarray`` subclasses (masked arrays, matrices)
raise :class:`TypeError` rather than coming back silently as their base type.
The numpy scalar subclasses of ``float`` and ``str`` (``np.float64``,
``np.str_``) are numpy scalars first.  Complex, bytes, structured and
extended-precision float values also raise :class:`TypeError`.

Result dicts
------------
Every result's ``to_dict`` returns one envelope, built by :func:`envelope`:
``{"type": <class name>, ["schema": <layout version>,] ["fields": <to_jsonable
of its fields>,] <parts>}``, where the parts are already JSON-ready values
(nested results' own dicts).  ``from_dict`` opens it with
:func:`open_envelope`, which checks the type tag and the layout version and
raises the one error every result gives for a dict it cannot read.
"""

from __future__ import annotations

import datetime
import math
import zoneinfo
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._validation import InvalidParameterError

__all__ = ["to_jsonable", "from_jsonable", "MARKER", "envelope", "open_envelope", "Envelope"]

#: The one dict key reserved by the encoding; see the module docstring.
MARKER = "__modellens__"

_FLOAT_TOKENS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_ARRAY_KINDS = frozenset("biufMmUO")


def _type_name(obj) -> str:
    tp = type(obj)
    return tp.__qualname__ if tp.__module__ == "builtins" else f"{tp.__module__}.{tp.__qualname__}"


def _unsupported(obj) -> TypeError:
    return TypeError(f"to_jsonable cannot encode an object of type {_type_name(obj)}")


def _float_token(x: float):
    """A finite float as itself, a non-finite one as its string token."""
    if math.isfinite(x):
        return x
    if math.isnan(x):
        return "nan"
    return "inf" if x > 0 else "-inf"


def _parse_float(v) -> float:
    if isinstance(v, str):
        try:
            return _FLOAT_TOKENS[v]
        except KeyError:
            raise ValueError(f"not a float token: {v!r}") from None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"not a float value: {v!r}")
    return float(v)


# ----------------------------------------------------------------------------- encoding

def to_jsonable(obj):
    """Convert a result field into a structure that JSON can hold losslessly.

    Parameters
    ----------
    obj : object
        ``None``, ``bool``, ``int``, ``float``, ``str``, ``tuple``, ``list``,
        ``dict``, a numpy array of kind ``b``/``i``/``u``/``f``/``M``/``m``/``U``/
        ``O``, a numpy scalar, a ``pandas.Timestamp``/``Timedelta``,
        ``pandas.NaT``/``pandas.NA``, a numpy dtype or a pandas extension dtype,
        nested arbitrarily.

    Returns
    -------
    object
        Nested ``dict``/``list``/``str``/``int``/``float``/``bool``/``None``
        with no non-finite floats, so ``json.dumps(result, allow_nan=False)``
        succeeds.  The encoding is described in the module docstring.

    Raises
    ------
    TypeError
        If ``obj`` or anything inside it is of a type not listed above; the
        message names the type.

    See Also
    --------
    from_jsonable : The inverse.

    Examples
    --------
    >>> import json
    >>> x = {"grid": np.array([0.0, -0.0, np.nan], dtype=np.float32), "features": ("a", "b")}
    >>> y = from_jsonable(json.loads(json.dumps(to_jsonable(x), allow_nan=False)))
    >>> y["grid"].dtype, y["features"]
    (dtype('float32'), ('a', 'b'))
    """
    if obj is None or type(obj) is bool:
        return obj
    # Before int/float/str: np.float64 and np.str_ subclass float and str, and
    # would otherwise lose their numpy type.
    if isinstance(obj, np.generic):
        return _encode_scalar(obj)
    tp = type(obj)
    if tp is int or tp is str:
        return obj
    if tp is float:
        if math.isfinite(obj):
            return obj
        return {MARKER: "float", "value": _float_token(obj)}
    if tp is list:
        return [to_jsonable(v) for v in obj]
    if tp is tuple:
        return {MARKER: "tuple", "items": [to_jsonable(v) for v in obj]}
    if tp is dict:
        return _encode_dict(obj)
    if tp is np.ndarray:
        return _encode_array(obj)
    # NaT and NA are singletons that are not Timestamps, so test identity first.
    if obj is pd.NaT:
        return {MARKER: "nat"}
    if obj is pd.NA:
        return {MARKER: "na"}
    if isinstance(obj, pd.Timestamp):
        return _encode_timestamp(obj)
    if isinstance(obj, pd.Timedelta):
        return _encode_timedelta(obj)
    if isinstance(obj, np.dtype):
        return _encode_numpy_dtype(obj)
    if isinstance(obj, pd.api.extensions.ExtensionDtype):
        return _encode_extension_dtype(obj)
    raise _unsupported(obj)


def _encode_dict(obj: dict) -> dict:
    # A str-keyed dict that holds MARKER would be mistaken for a tag on the way
    # back, so it takes the same pair form as non-str keys.
    if MARKER not in obj and all(type(k) is str for k in obj):
        return {k: to_jsonable(v) for k, v in obj.items()}
    return {MARKER: "dict", "items": [[to_jsonable(k), to_jsonable(v)] for k, v in obj.items()]}


def _flat_data(arr: np.ndarray) -> list:
    """The C-order elements of ``arr`` as JSON values (see the module docstring)."""
    kind = arr.dtype.kind
    if kind not in _ARRAY_KINDS:
        raise TypeError(f"to_jsonable cannot encode a numpy array of dtype {arr.dtype}")
    if kind in "biuU":
        return arr.ravel().tolist()
    if kind == "f":
        if arr.dtype.itemsize > 8:
            # longdouble cannot pass through float64 without rounding.
            raise TypeError(f"to_jsonable cannot encode a numpy array of dtype {arr.dtype}")
        wide = arr.astype(np.float64).ravel()
        flat = wide.tolist()
        for i in np.flatnonzero(~np.isfinite(wide)):
            flat[i] = _float_token(flat[i])
        return flat
    if kind in "Mm":
        native = arr.astype(arr.dtype.newbyteorder("="), copy=False)
        return native.view(np.int64).ravel().tolist()
    return [to_jsonable(v) for v in arr.ravel()]


def _encode_array(arr: np.ndarray) -> dict:
    return {MARKER: "ndarray", "dtype": arr.dtype.str, "shape": list(arr.shape), "data": _flat_data(arr)}


def _encode_scalar(x: np.generic) -> dict:
    arr = np.asarray(x)
    if arr.dtype.kind not in _ARRAY_KINDS or arr.dtype.kind == "O" or (arr.dtype.kind == "f" and arr.dtype.itemsize > 8):
        raise _unsupported(x)
    return {MARKER: "scalar", "dtype": arr.dtype.str, "data": _flat_data(arr)[0]}


def _encode_timestamp(ts: pd.Timestamp) -> dict:
    # asm8 is the UTC instant for tz-aware stamps, so the count never depends
    # on the zone's rules.
    value = int(ts.asm8.view(np.int64))
    tz = ts.tzinfo
    if tz is None:
        tz_enc = None
    elif isinstance(tz, datetime.timezone):
        tz_enc = tz.utcoffset(None) // datetime.timedelta(microseconds=1)
    else:
        # zoneinfo names its zone `key`, pytz `zone`.
        tz_enc = getattr(tz, "key", None) or getattr(tz, "zone", None)
        if not isinstance(tz_enc, str):
            raise TypeError(f"to_jsonable cannot encode a Timestamp with time zone of type {_type_name(tz)}")
    return {MARKER: "timestamp", "value": value, "unit": ts.unit, "tz": tz_enc}


def _encode_timedelta(td: pd.Timedelta) -> dict:
    return {MARKER: "timedelta", "value": int(td.asm8.view(np.int64)), "unit": td.unit}


def _encode_numpy_dtype(dt: np.dtype) -> dict:
    # dtype.str drops field names and subarray shapes, so only accept dtypes it
    # describes completely.
    if dt.fields is not None or dt.subdtype is not None or np.dtype(dt.str) != dt:
        raise TypeError(f"to_jsonable cannot encode the numpy dtype {dt!r}")
    return {MARKER: "dtype", "str": dt.str}


def _encode_extension_dtype(dt) -> dict:
    if isinstance(dt, pd.CategoricalDtype):
        cats = dt.categories
        return {MARKER: "categorical_dtype",
                "categories": None if cats is None else _encode_array(np.asarray(cats.to_numpy())),
                "categories_dtype": None if cats is None else to_jsonable(cats.dtype),
                "ordered": dt.ordered}
    if isinstance(dt, pd.StringDtype):
        na = getattr(dt, "na_value", pd.NA)
        if na is pd.NA:
            na_enc = "NA"
        elif isinstance(na, float) and math.isnan(na):
            na_enc = "nan"
        else:
            raise TypeError(f"to_jsonable cannot encode {dt!r}")
        return {MARKER: "string_dtype", "storage": dt.storage, "na_value": na_enc}
    name = str(dt)
    try:
        back = pd.api.types.pandas_dtype(name)
    except (TypeError, ValueError):
        back = None
    # Only trust the name when it parses back to the very same dtype.
    if back is None or type(back) is not type(dt) or back != dt:
        raise TypeError(f"to_jsonable cannot encode the pandas dtype {dt!r} of type {_type_name(dt)}")
    return {MARKER: "pandas_dtype", "name": name}


# ----------------------------------------------------------------------------- decoding

def from_jsonable(obj):
    """Rebuild the value that :func:`to_jsonable` encoded.

    Parameters
    ----------
    obj : object
        The output of :func:`to_jsonable`, typically after a trip through
        ``json.dumps`` and ``json.loads``.

    Returns
    -------
    object
        A value equal to the one encoded: arrays with the same dtype, shape
        and values (NaNs as numpy's default NaN), tuples as tuples, numpy
        scalars as the same numpy type, Timestamps as ``pandas.Timestamp``
        (named zones as ``zoneinfo.ZoneInfo``, fixed offsets as
        ``datetime.timezone``).

    Raises
    ------
    TypeError
        If ``obj`` holds something that JSON cannot produce.
    ValueError
        If a tagged dict is malformed or names an unknown tag.

    See Also
    --------
    to_jsonable : The encoder, whose module docstring describes the format.
    """
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, list):
        return [from_jsonable(v) for v in obj]
    if isinstance(obj, dict):
        if MARKER not in obj:
            return {k: from_jsonable(v) for k, v in obj.items()}
        tag = obj[MARKER]
        decoder = _DECODERS.get(tag) if isinstance(tag, str) else None
        if decoder is None:
            raise ValueError(f"unknown {MARKER} tag {tag!r}")
        try:
            return decoder(obj)
        except KeyError as exc:
            raise ValueError(f"{MARKER} tag {tag!r} lacks the field {exc.args[0]!r}") from None
    raise TypeError(f"from_jsonable cannot decode an object of type {_type_name(obj)}")


def _items(d: dict) -> list:
    items = d["items"]
    if not isinstance(items, list):
        raise ValueError(f"{MARKER} tag {d[MARKER]!r}: 'items' must be a list")
    return items


def _decode_dict(d: dict) -> dict:
    out = {}
    for pair in _items(d):
        if not isinstance(pair, list) or len(pair) != 2:
            raise ValueError(f"{MARKER} tag 'dict': each item must be a [key, value] pair")
        out[from_jsonable(pair[0])] = from_jsonable(pair[1])
    return out


def _array_from_flat(dtype: np.dtype, data: list) -> np.ndarray:
    """A 1-d array of ``dtype`` from the flat JSON values of :func:`_flat_data`."""
    kind = dtype.kind
    if kind not in _ARRAY_KINDS:
        raise ValueError(f"unsupported array dtype {dtype.str!r}")
    if kind in "biuU":
        return np.array(data, dtype=dtype).reshape(-1)
    if kind == "f":
        return np.array([_parse_float(v) for v in data], dtype=np.float64).astype(dtype)
    if kind in "Mm":
        return np.array(data, dtype=np.int64).view(dtype.newbyteorder("=")).astype(dtype)
    # Filling element by element keeps numpy from reading a nested list or
    # tuple element as extra dimensions.
    out = np.empty(len(data), dtype=object)
    for i, v in enumerate(data):
        out[i] = from_jsonable(v)
    return out


def _decode_array(d: dict) -> np.ndarray:
    dtype = np.dtype(d["dtype"])
    shape, data = d["shape"], d["data"]
    if not isinstance(shape, list) or not isinstance(data, list):
        raise ValueError(f"{MARKER} tag 'ndarray': 'shape' and 'data' must be lists")
    shape = tuple(shape)
    if len(data) != math.prod(shape):
        raise ValueError(f"{MARKER} tag 'ndarray': {len(data)} values do not fill shape {shape}")
    return _array_from_flat(dtype, data).reshape(shape)


def _decode_scalar(d: dict) -> np.generic:
    return _array_from_flat(np.dtype(d["dtype"]), [d["data"]])[0]


def _decode_timestamp(d: dict) -> pd.Timestamp:
    ts = pd.Timestamp(np.datetime64(d["value"], d["unit"]))
    tz = d["tz"]
    if tz is None:
        return ts
    tzinfo: datetime.tzinfo
    if isinstance(tz, str):
        tzinfo = zoneinfo.ZoneInfo(tz)
    elif isinstance(tz, int) and not isinstance(tz, bool):
        tzinfo = datetime.timezone(datetime.timedelta(microseconds=tz))
    else:
        raise ValueError(f"{MARKER} tag 'timestamp': bad tz {tz!r}")
    return ts.tz_localize("UTC").tz_convert(tzinfo)


def _decode_categorical_dtype(d: dict) -> pd.CategoricalDtype:
    cats = d["categories"]
    if cats is not None:
        cats = pd.Index(from_jsonable(cats), dtype=from_jsonable(d["categories_dtype"]))
    return pd.CategoricalDtype(categories=cats, ordered=d["ordered"])


def _decode_string_dtype(d: dict) -> pd.StringDtype:
    na = d["na_value"]
    if na == "NA":
        return pd.StringDtype(storage=d["storage"])
    if na == "nan":
        return pd.StringDtype(storage=d["storage"], na_value=np.nan)
    raise ValueError(f"{MARKER} tag 'string_dtype': bad na_value {na!r}")


_DECODERS = {
    "tuple": lambda d: tuple(from_jsonable(v) for v in _items(d)),
    "dict": _decode_dict,
    "float": lambda d: _parse_float(d["value"]),
    "ndarray": _decode_array,
    "scalar": _decode_scalar,
    "timestamp": _decode_timestamp,
    "timedelta": lambda d: pd.Timedelta(np.timedelta64(d["value"], d["unit"])),
    "nat": lambda d: pd.NaT,
    "na": lambda d: pd.NA,
    "dtype": lambda d: np.dtype(d["str"]),
    "categorical_dtype": _decode_categorical_dtype,
    "string_dtype": _decode_string_dtype,
    "pandas_dtype": lambda d: pd.api.types.pandas_dtype(d["name"]),
}


# ----------------------------------------------------------------------------- result dicts

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
        Its layout version (the oldest when the dict has none); None for a
        result without versions.
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

    def fields(self, required: Collection[str] = ()) -> dict:
        """The result's own fields, decoded with :func:`from_jsonable`.

        ``required`` names the fields the result cannot be rebuilt without;
        a missing one is the error that names it.
        """
        values = from_jsonable(self.part("fields"))
        if not isinstance(values, dict):
            raise InvalidParameterError(
                f"the 'fields' of this {self.kind} dict decode to a {_type_name(values)}, "
                f"not a dict, so it is not a dict made by {self.reader}.to_dict().")
        for name in required:
            if name not in values:
                raise InvalidParameterError(
                    f"this {self.kind} dict has no {name!r} field, so it is not a whole dict "
                    f"made by {self.reader}.to_dict() (was it edited or cut short?).")
        return values


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
        The newest layout version it reads, for a result whose dict carries
        ``"schema"`` (1 to ``newest``; a dict without one is version 1).  None
        for a result without versions.

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
        raise InvalidParameterError(f"{expects}; got a dict whose \"type\" is {kind!r}.")
    if newest is None:
        return Envelope(kind, None, reader, d)
    schema = d.get("schema", 1)
    if type(schema) is not int or schema < 1:
        raise InvalidParameterError(
            f"this {kind} dict has schema {schema!r}, which no version of modellens writes "
            f"(schemas are whole numbers from 1), so it is not a dict made by {reader}.to_dict().")
    if schema > newest:
        raise InvalidParameterError(
            f"this {kind} dict has schema {schema!r}; this version of modellens reads "
            f"schemas 1 to {newest}: upgrade modellens to load it.")
    return Envelope(kind, schema, reader, d)
