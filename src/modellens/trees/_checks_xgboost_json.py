"""One compiled pass over an XGBoost JSON text: its number arrays read straight into numbers.

orjson builds a Python number per value of a tree's node arrays and numpy then
reads them back into arrays (two thirds of a JSON file's check cost).  Here
:func:`scan_xgboost_json` walks the text once and takes out every array that is
the value of a named key (XGBoost's node arrays): its numbers go into one
float64 or int64 buffer, and the text keeps ``[]`` in its place, so that orjson
reads only the rest (a few hundred bytes a tree).  Everything else is copied as
it is; strings are skipped as JSON delimits them (a quote opens and closes one,
a backslash escapes the next byte), so a bracket inside a string is never taken.

A number is read only where the reading is exact by construction: JSON's
grammar (``-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?``), an integer where the
key's numbers are integers (within the key's type), and a float only where its
decimal digits make an integer ``m <= 2**53`` and its power of ten is at most 22
either way (then ``m`` and ``10**e`` are exact float64 and one multiplication or
division rounds once: the float64 every correct reader makes, Clinger's fast
path), then rounded to float32 where that float64 is not exactly halfway between two
float32 (the float32 XGBoost's reader rounds the decimal to straight); a power of
ten past 22 (to 66 down, 44 up) only where no float32 halfway point lies near
(:func:`_float32`).  Anything else declines the whole text (None), never refuses it: the
caller then reads it as before and names what is wrong.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

__all__ = ["scan_xgboost_json"]

#: The kinds of numbers a key's array holds: floats, int32, uint8, int64.
_FLOAT, _INT32, _UINT8, _INT64 = range(4)
_KINDS = {"f4": _FLOAT, "i4": _INT32, "u1": _UINT8, "i8": _INT64}
#: Exact float64 powers of ten (10**22 is the last one float64 holds exactly).
_POW10 = np.array([10.0 ** k for k in range(23)])
_EXACT = 2 ** 53


@njit(cache=True)
def _at(data, i, n):  # pragma: no cover - compiled
    """Byte ``i`` of ``data`` (0, which no token holds, past its end)."""
    return data[i] if i < n else 0


@njit(cache=True)
def _space(data, i, n):  # pragma: no cover - compiled
    """The first position from ``i`` that is not JSON whitespace."""
    while i < n and (data[i] == 32 or data[i] == 10 or data[i] == 13 or data[i] == 9):
        i += 1
    return i


@njit(cache=True)
def _digit(c):  # pragma: no cover - compiled
    return 48 <= c <= 57


@njit(cache=True)
def _number(data, i, n):  # pragma: no cover - compiled
    """The JSON number at ``i``: ``(end, integer, negative, m, e, ok)``, its value
    ``(-1)**negative * m * 10**e``; ``ok`` False where it is not one or has more than 18
    significant digits."""
    neg = _at(data, i, n) == 45
    i += neg
    m, digits, e, integer = 0, 0, 0, True
    c = _at(data, i, n)
    if c == 48:
        i += 1
        if _digit(_at(data, i, n)):
            return i, integer, neg, m, e, False
    elif 49 <= c <= 57:
        while _digit(_at(data, i, n)):
            if digits == 18:
                return i, integer, neg, m, e, False
            m, digits, i = m * 10 + (data[i] - 48), digits + 1, i + 1
    else:
        return i, integer, neg, m, e, False
    if _at(data, i, n) == 46:
        integer, i = False, i + 1
        if not _digit(_at(data, i, n)):
            return i, integer, neg, m, e, False
        while _digit(_at(data, i, n)):
            if m or data[i] != 48:  # leading zeros of a fraction count no digit
                if digits == 18:
                    return i, integer, neg, m, e, False
                m, digits = m * 10 + (data[i] - 48), digits + 1
            e, i = e - 1, i + 1
    if _at(data, i, n) == 101 or _at(data, i, n) == 69:
        integer, i = False, i + 1
        sign = -1 if _at(data, i, n) == 45 else 1
        i += _at(data, i, n) == 45 or _at(data, i, n) == 43
        if not _digit(_at(data, i, n)):
            return i, integer, neg, m, e, False
        x = 0
        while _digit(_at(data, i, n)):
            x, i = min(x * 10 + (data[i] - 48), 100000), i + 1
        e += sign * x
    return i, integer, neg, m, e, True


@njit(cache=True)
def _key_id(data, a, b, names, starts):  # pragma: no cover - compiled
    """The position in ``names`` of the key ``data[a:b]``, -1 where it is none of them."""
    for k in range(len(starts) - 1):
        s, t = starts[k], starts[k + 1]
        if t - s == b - a:
            same = True
            for j in range(b - a):
                if data[a + j] != names[s + j]:
                    same = False
                    break
            if same:
                return k
    return -1


@njit(cache=True)
def _float32(m, e, integer, neg):  # pragma: no cover - compiled
    """The float32 XGBoost reads for the decimal ``(-1)**neg * m * 10**e`` (rounded straight
    to float32), or NaN where declined.

    With ``|e| <= 22`` the float64 ``v`` is the decimal correctly rounded, and declined
    only where it is exactly halfway between two float32 (the one case where rounding
    to float64 first could differ).  Past that (XGBoost writes float32's subnormals, as
    ``1E-45``), ``v`` is reached by up to three roundings of float64 (each at most half
    its unit in the last place: ``v`` within ``2**-51 * |v|`` of the decimal, as the
    float64 the decimal rounds to is): declined where a float32 halfway point lies
    within ``2**-49 * |v|``, so that the decimal, its float64 and ``v`` all round to
    the same float32."""
    if m > _EXACT or e < -66 or e > 44:
        return np.float32(np.nan)
    if integer:  # read as an integer, then as the float it is (no -0.0)
        v, steps = float(-m if neg else m), 0
    else:
        v, steps = float(m), 0
        while e < -22 or e > 22:
            v, e, steps = (v / 1e22, e + 22, steps + 1) if e < 0 else (v * 1e22, e - 22,
                                                                         steps + 1)
        v = v * _POW10[e] if e >= 0 else v / _POW10[-e]
        v = -v if neg else v
    f = np.float32(v)
    back = np.float64(f)
    if np.isinf(f):
        return np.float32(np.nan)
    if back != v or steps:
        other = np.nextafter(f, np.float32(np.inf) if v > back else np.float32(-np.inf))
        middle = (back + np.float64(other)) / 2
        if v == middle or (steps and abs(v - middle) <= abs(v) * 2.0 ** -49):
            return np.float32(np.nan)
    return f


@njit(cache=True)
def _array(data, i, n, kind, floats, ints, counts):  # pragma: no cover - compiled
    """Read the array of numbers whose ``[`` is at ``i`` into ``floats`` (float32) or
    ``ints``, counted in ``counts``; its end, -1 where declined."""
    i = _space(data, i + 1, n)
    if _at(data, i, n) == 93:
        return i + 1
    while True:
        i, integer, neg, m, e, ok = _number(data, i, n)
        if not ok:
            return -1
        if kind == _FLOAT:
            f = _float32(m, e, integer, neg)
            if np.isnan(f):
                return -1
            floats[counts[0]] = f
            counts[0] += 1
        else:
            v = -m if neg else m
            if not integer or (kind == _INT32 and not -2 ** 31 <= v < 2 ** 31) or \
                    (kind == _UINT8 and not 0 <= v < 256):
                return -1
            ints[counts[1]] = v
            counts[1] += 1
        i = _space(data, i, n)
        c = _at(data, i, n)
        if c == 93:
            return i + 1
        if c != 44:
            return -1
        i = _space(data, i + 1, n)


@njit(cache=True)
def _scan(data, names, starts, kinds, out, meta, floats, ints):  # pragma: no cover - compiled
    """The pass: ``out`` the text without the named arrays' numbers, ``meta`` a row per array
    taken (its key, its first value in its buffer, its length) in the text's order.
    Returns ``(bytes out, arrays, floats, ints, keys)`` (``keys``: every object's keys,
    counted), the first -1 where declined (a key with an escape, a named array that is
    not numbers as above, a string left open)."""
    n, o, k, pending, keys = len(data), 0, 0, -1, 0
    counts = np.zeros(2, np.int64)
    i = 0
    while i < n:
        c = data[i]
        if c == 34:  # a string: to its closing quote, escapes skipped
            j, escaped = i + 1, False
            while j < n and data[j] != 34:
                escaped |= data[j] == 92
                j += 2 if data[j] == 92 else 1
            if j >= n:
                return -1, 0, 0, 0, 0
            out[o:o + j + 1 - i] = data[i:j + 1]
            o, pending = o + j + 1 - i, -1
            if _at(data, _space(data, j + 1, n), n) == 58:  # a key
                if escaped:
                    return -1, 0, 0, 0, 0
                pending, keys = _key_id(data, i + 1, j, names, starts), keys + 1
            i = j + 1
            continue
        if c == 91 and pending >= 0:  # a named key's array: its numbers taken out
            kind = kinds[pending]
            first = counts[0] if kind == _FLOAT else counts[1]
            end = _array(data, i, n, kind, floats, ints, counts)
            if end < 0:
                return -1, 0, 0, 0, 0
            meta[k, 0], meta[k, 1] = pending, first
            meta[k, 2] = (counts[0] if kind == _FLOAT else counts[1]) - first
            out[o], out[o + 1] = 91, 93
            o, k, i, pending = o + 2, k + 1, end, -1
            continue
        out[o] = c
        o, i = o + 1, i + 1
        if not (c == 32 or c == 10 or c == 13 or c == 9 or c == 58):
            pending = -1
    return o, k, counts[0], counts[1], keys


@functools.cache
def _table(keys: tuple) -> tuple:
    """The key names' bytes, where each begins, and each one's kind of numbers."""
    raw = [name.encode("ascii") for name, _ in keys]
    starts = np.cumsum([0] + [len(r) for r in raw]).astype(np.int64)
    kinds = np.array([_KINDS[np.dtype(dtype).str[1:]] for _, dtype in keys], np.int64)
    return np.frombuffer(b"".join(raw), np.uint8), starts, kinds


def scan_xgboost_json(data, keys: tuple):
    """The JSON text ``data`` with the arrays of the keys ``keys`` (``(name, dtype)`` pairs:
    float32, int32, uint8 or int64) taken out.

    Returns ``(text, floats, ints, arrays, n_keys)``: the text with ``[]`` for each array
    taken; the numbers of the float keys' arrays (float32: each the float32 its decimal
    rounds to) and of the others (int64: each inside its key's type); each array taken,
    in the text's order, as ``(name, first, count)`` (its values in its kind's buffer);
    and how many keys the text's objects hold.  None where declined (see the module's
    docstring).
    """
    raw = np.frombuffer(data, np.uint8)
    names, starts, kinds = _table(keys)
    out = np.empty(len(raw) + 2, np.uint8)
    # a value costs a byte and a separator, an array taken its key's quotes, colon and [
    meta = np.empty((len(raw) // 6 + 1, 3), np.int64)
    floats = np.empty(len(raw) // 2 + 1, np.float32)
    ints = np.empty(len(raw) // 2 + 1, np.int64)
    o, k, nf, ni, n_keys = _scan(raw, names, starts, kinds, out, meta, floats, ints)
    if o < 0:
        return None
    arrays = [(keys[key][0], first, count) for key, first, count in meta[:k].tolist()]
    return out[:o].tobytes(), floats[:nf], ints[:ni], arrays, n_keys
