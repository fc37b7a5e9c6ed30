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
Every result's ``to_dict`` wraps these values in one envelope, and its
``from_dict`` opens it and checks every field: see
:mod:`modellens._result_dicts`.
"""

from __future__ import annotations

import datetime
import math
import zoneinfo

import numpy as np
import pandas as pd

__all__ = ["to_jsonable", "from_jsonable", "MARKER", "DecodeError", "MAX_DEPTH", "short"]

#: The one dict key reserved by the encoding; see the module docstring.
MARKER = "__modellens__"


class DecodeError(ValueError):
    """A JSON structure that :func:`to_jsonable` did not write (see :func:`from_jsonable`)."""


#: The most nested containers :func:`from_jsonable` reads.  A result's dict nests a
#: few levels per region of a split tree; 200 is far above the regions any search
#: grows and far below Python's recursion limit.
MAX_DEPTH = 200
#: A string array's dtype may be at most this many characters wider than its longest
#: string (a slice of a wider array keeps its width); past that, a few bytes of JSON
#: would ask numpy for gigabytes (``"<U400000000"``).
MAX_STR_SLACK = 64


_FLOAT_TOKENS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_ARRAY_KINDS = frozenset("biufMmUO")


def short(value, width: int = 80) -> str:
    """``repr`` of a value for an error message: cut, and never walking a container."""
    if isinstance(value, (list, dict, tuple, set)):
        return f"a {type(value).__name__} of {len(value)}"
    return repr(value)[:width] if isinstance(value, str) else str(value)[:width]


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
            raise DecodeError(f"not a float token: {short(v)}") from None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise DecodeError(f"not a float value: {short(v, 80)}")
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
    data = _flat_data(arr)
    dtype = arr.dtype
    if dtype.kind == "U" and dtype.itemsize // 4 > max(map(len, data), default=0) + MAX_STR_SLACK:
        # what from_jsonable would refuse: written at the width its strings need
        dtype = np.dtype(f"{dtype.byteorder if dtype.byteorder in '<>' else '<'}U"
                         f"{max(max(map(len, data), default=0), 1)}")
    return {MARKER: "ndarray", "dtype": dtype.str, "shape": list(arr.shape), "data": data}


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

def from_jsonable(obj, *, max_depth: int = MAX_DEPTH):
    """Rebuild the value that :func:`to_jsonable` encoded.

    Parameters
    ----------
    obj : object
        The output of :func:`to_jsonable`, typically after a trip through
        ``json.dumps`` and ``json.loads``.
    max_depth : int, default=MAX_DEPTH
        The most nested containers read (lists, dicts, tags): deeper input is
        refused before Python's recursion limit is reached.

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
    DecodeError
        A ``ValueError`` for anything :func:`to_jsonable` does not write: a
        type JSON cannot produce, a malformed or unknown tag, an array whose
        values do not fit its dtype or shape, a dtype that is not one
        ``dtype.str`` of an encodable array, strings narrower than their
        dtype asks for (the dtype's bytes are bounded by the data:
        see :data:`MAX_STR_SLACK`), nesting deeper than ``max_depth``.

    See Also
    --------
    to_jsonable : The encoder, whose module docstring describes the format.
    """
    return _decode(obj, max_depth)


def _decode(obj, depth: int):
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if depth <= 0:
        raise DecodeError(f"nested deeper than {MAX_DEPTH} levels, which no result is")
    if isinstance(obj, list):
        return [_decode(v, depth - 1) for v in obj]
    if isinstance(obj, dict):
        if MARKER not in obj:
            return {k: _decode(v, depth - 1) for k, v in obj.items()}
        tag = obj[MARKER]
        decoder = _DECODERS.get(tag) if isinstance(tag, str) else None
        if decoder is None:
            raise DecodeError(f"unknown {MARKER} tag {short(tag, 80)}")
        try:
            return decoder(obj, depth - 1)
        except DecodeError:
            raise
        except KeyError as exc:
            raise DecodeError(f"{MARKER} tag {tag!r} lacks the field {exc.args[0]!r}") from None
        except (TypeError, ValueError, OverflowError, ArithmeticError, MemoryError) as exc:
            raise DecodeError(f"{MARKER} tag {tag!r} is malformed: {str(exc)[:200]}") from None
    raise DecodeError(f"from_jsonable cannot decode an object of type {_type_name(obj)}")


def _items(d: dict) -> list:
    items = d["items"]
    if not isinstance(items, list):
        raise DecodeError(f"{MARKER} tag {d[MARKER]!r}: 'items' must be a list")
    return items


def _decode_dict(d: dict, depth: int) -> dict:
    out = {}
    for pair in _items(d):
        if not isinstance(pair, list) or len(pair) != 2:
            raise DecodeError(f"{MARKER} tag 'dict': each item must be a [key, value] pair")
        key = _decode(pair[0], depth - 1)
        try:
            hash(key)
        except TypeError:
            raise DecodeError(f"{MARKER} tag 'dict': a key of type {_type_name(key)}") from None
        out[key] = _decode(pair[1], depth - 1)
    return out


def _dtype(spec) -> np.dtype:
    """The dtype a tag names, if it is the ``dtype.str`` of an encodable array."""
    if not isinstance(spec, str) or len(spec) > 40:
        raise DecodeError(f"not a dtype this encoding writes: {short(spec, 80)}")
    try:
        dtype = np.dtype(spec)
    except (TypeError, ValueError, SyntaxError):
        raise DecodeError(f"not a numpy dtype: {spec!r}") from None
    if dtype.str != spec or dtype.kind not in _ARRAY_KINDS or dtype.fields is not None or (
            dtype.kind == "f" and dtype.itemsize > 8):
        raise DecodeError(f"not a dtype this encoding writes: {spec!r}")
    return dtype


_ELEMENT_TYPES = {"b": (bool,), "i": (int,), "u": (int,), "M": (int,), "m": (int,), "U": (str,)}


def _array_from_flat(dtype: np.dtype, data: list, depth: int) -> np.ndarray:
    """A 1-d array of ``dtype`` from the flat JSON values of :func:`_flat_data`."""
    kind = dtype.kind
    types = _ELEMENT_TYPES.get(kind)
    if types is not None and not all(type(v) in types for v in data):
        raise DecodeError(f"an array of dtype {dtype.str!r} holds a value that is not a "
                          f"{types[0].__name__}")
    if kind == "U":
        longest = max(map(len, data), default=0)
        if dtype.itemsize // 4 > longest + MAX_STR_SLACK:
            raise DecodeError(f"dtype {dtype.str!r} asks for {dtype.itemsize // 4} characters "
                              f"per string; the longest has {longest}")
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
        out[i] = _decode(v, depth - 1)
    return out


def _decode_array(d: dict, depth: int) -> np.ndarray:
    dtype = _dtype(d["dtype"])
    shape, data = d["shape"], d["data"]
    if not isinstance(shape, list) or not isinstance(data, list):
        raise DecodeError(f"{MARKER} tag 'ndarray': 'shape' and 'data' must be lists")
    if len(shape) > 32 or not all(type(n) is int and n >= 0 for n in shape):
        raise DecodeError(f"{MARKER} tag 'ndarray': shape {short(shape)} is not a list of "
                          "at most 32 counts")
    if len(data) != math.prod(shape):
        raise DecodeError(f"{MARKER} tag 'ndarray': {len(data)} values do not fill shape "
                          f"{tuple(shape)}")
    return _array_from_flat(dtype, data, depth).reshape(tuple(shape))


def _decode_scalar(d: dict, depth: int) -> np.generic:
    dtype = _dtype(d["dtype"])
    if dtype.kind == "O":
        raise DecodeError(f"{MARKER} tag 'scalar' of dtype 'O'")
    return _array_from_flat(dtype, [d["data"]], depth)[0]


def _decode_timestamp(d: dict, depth: int) -> pd.Timestamp:
    value, unit = d["value"], d["unit"]
    if type(value) is not int or unit not in ("s", "ms", "us", "ns"):
        raise DecodeError(f"{MARKER} tag 'timestamp': bad value or unit")
    ts = pd.Timestamp(np.datetime64(value, unit))
    tz = d["tz"]
    if tz is None:
        return ts
    tzinfo: datetime.tzinfo
    if isinstance(tz, str):
        try:
            tzinfo = zoneinfo.ZoneInfo(tz)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
            raise DecodeError(f"{MARKER} tag 'timestamp': unknown time zone {short(tz)}") from None
    elif isinstance(tz, int) and not isinstance(tz, bool):
        tzinfo = datetime.timezone(datetime.timedelta(microseconds=tz))
    else:
        raise DecodeError(f"{MARKER} tag 'timestamp': bad tz {short(tz, 80)}")
    return ts.tz_localize("UTC").tz_convert(tzinfo)


def _decode_timedelta(d: dict, depth: int) -> pd.Timedelta:
    value, unit = d["value"], d["unit"]
    if type(value) is not int or unit not in ("s", "ms", "us", "ns"):
        raise DecodeError(f"{MARKER} tag 'timedelta': bad value or unit")
    return pd.Timedelta(np.timedelta64(value, unit))


def _decode_categorical_dtype(d: dict, depth: int) -> pd.CategoricalDtype:
    cats = d["categories"]
    if cats is not None:
        values, dtype = _decode(cats, depth - 1), _decode(d["categories_dtype"], depth - 1)
        try:
            cats = pd.Index(values, dtype=dtype)
        except (TypeError, ValueError, OverflowError, NotImplementedError) as exc:
            # pandas refuses some dtypes with NotImplementedError (bytes, found by the fuzzer)
            raise DecodeError(f"{MARKER} tag 'categorical_dtype': categories of dtype "
                              f"{short(dtype, 40)} ({type(exc).__name__})") from None
    if type(d["ordered"]) is not bool:
        raise DecodeError(f"{MARKER} tag 'categorical_dtype': 'ordered' is not a bool")
    return pd.CategoricalDtype(categories=cats, ordered=d["ordered"])


def _decode_string_dtype(d: dict, depth: int) -> pd.StringDtype:
    na, storage = d["na_value"], d["storage"]
    if storage not in ("python", "pyarrow"):
        raise DecodeError(f"{MARKER} tag 'string_dtype': bad storage {short(storage, 80)}")
    if na == "NA":
        return pd.StringDtype(storage=storage)
    if na == "nan":
        return pd.StringDtype(storage=storage, na_value=np.nan)
    raise DecodeError(f"{MARKER} tag 'string_dtype': bad na_value {short(na, 80)}")


def _decode_pandas_dtype(d: dict, depth: int):
    name = d["name"]
    if not isinstance(name, str) or len(name) > 80:
        raise DecodeError(f"{MARKER} tag 'pandas_dtype': bad name")
    dtype = pd.api.types.pandas_dtype(name)
    if not isinstance(dtype, pd.api.extensions.ExtensionDtype):
        raise DecodeError(f"{MARKER} tag 'pandas_dtype': {name!r} is not a pandas dtype")
    return dtype


_DECODERS = {
    "tuple": lambda d, depth: tuple(_decode(v, depth - 1) for v in _items(d)),
    "dict": _decode_dict,
    "float": lambda d, depth: _parse_float(d["value"]),
    "ndarray": _decode_array,
    "scalar": _decode_scalar,
    "timestamp": _decode_timestamp,
    "timedelta": _decode_timedelta,
    "nat": lambda d, depth: pd.NaT,
    "na": lambda d, depth: pd.NA,
    "dtype": lambda d, depth: _dtype(d["str"]),
    "categorical_dtype": _decode_categorical_dtype,
    "string_dtype": _decode_string_dtype,
    "pandas_dtype": _decode_pandas_dtype,
}
