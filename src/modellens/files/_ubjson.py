"""A reader of the UBJSON XGBoost writes, bounded by the bytes it is given, and a writer.

XGBoost's own reader trusts the counts in the document; this one refuses a
count the remaining bytes cannot hold before anything is made, so a few
hostile bytes cannot ask for gigabytes or minutes.  A typed array of numbers
(XGBoost's node arrays) is read as one numpy array, not value by value, and
:func:`ubjson_bytes` writes it back with its own element type, so the checked
document goes back to XGBoost's binary reader bit for bit.
"""

from __future__ import annotations

import struct
from itertools import chain

import numpy as np

from ..trees import scan_xgboost_json

__all__ = ["Ubjson", "typed_arrays", "typed_json", "ubjson_bytes"]


class Ubjson:
    """A reader of the UBJSON XGBoost writes, bounded by the bytes it is given."""

    _NUMBERS = {ord("i"): ">i1", ord("U"): ">u1", ord("I"): ">i2", ord("l"): ">i4",
                ord("L"): ">i8", ord("d"): ">f4", ord("D"): ">f8"}
    #: Each as numpy reads it, and in native byte order.
    _DTYPES = {m: (np.dtype(code), np.dtype(code).newbyteorder("="))
               for m, code in _NUMBERS.items()}
    #: The same, as struct reads one (several times faster than a numpy view of it).
    _SCALARS = {ord(m): struct.Struct(">" + code)
                for m, code in (("i", "b"), ("U", "B"), ("I", "h"), ("l", "i"), ("L", "q"),
                                ("d", "f"), ("D", "d"))}

    #: Longest untyped array read (XGBoost's arrays of trees; its number arrays are typed).
    _MAX_UNTYPED = 2 ** 20

    def __init__(self, data: bytes):
        self.data, self.pos = memoryview(data), 0
        # every value read costs a byte of the document at least (a typed container
        # of numbers costs its itemsize per value): what a count promises beyond the
        # bytes left is refused before anything is made
        self.values_left = len(data)
        #: every construct read is one XGBoost writes and its binary reader (3.x) reads as
        #: this reader does (keys, strings and counts with int64 lengths, no F, C, H or D):
        #: XGBoost may be handed these very bytes
        self.canonical = True

    def document(self):
        out = self.value(self.byte(), 0)
        if self.pos != len(self.data):
            raise ValueError("bytes after the model document")
        return out

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise ValueError("the UBJSON document ends early")
        self.pos += 1
        return self.data[self.pos - 1]

    def take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("the UBJSON document ends early")
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def number(self, marker: int):
        scalar = self._SCALARS.get(marker)
        if scalar is None:
            raise ValueError(f"unknown UBJSON marker {chr(marker)!r}")
        return scalar.unpack(self.take(scalar.size))[0]

    def count(self) -> int:
        marker = self.byte()
        if marker != 0x4C:  # XGBoost reads lengths and counts as int64 (L) only
            self.canonical = False
        n = self.number(marker)
        if not isinstance(n, int) or n < 0 or n > len(self.data):
            raise ValueError(f"a UBJSON count of {n}")
        return n

    def text(self) -> str:
        return bytes(self.take(self.count())).decode("utf-8")

    def value(self, marker: int, depth: int):
        if depth > 64:
            raise ValueError("the UBJSON document nests too deep")
        if marker == ord("{"):
            return self.container(depth, obj=True)
        if marker == ord("["):
            return self.container(depth, obj=False)
        if marker == ord("S"):
            return self.text()
        if marker == ord("Z"):
            return None
        if marker == ord("T"):
            return True
        # XGBoost's binary reader reads C as an integer, H not at all and (some versions)
        # F as true: those are not read alike
        if marker == ord("H"):
            self.canonical = False
            return self.text()
        if marker == ord("C"):
            self.canonical = False
            return bytes(self.take(1)).decode("latin-1")
        if marker == ord("F"):
            self.canonical = False
            return False
        if marker == 0x44:  # D: float64, which some XGBoost versions do not read
            self.canonical = False
        return self.number(marker)

    def container(self, depth: int, *, obj: bool):
        kind = n = None
        if self.pos < len(self.data) and self.data[self.pos] == ord("$"):
            self.pos += 1
            kind = self.byte()
            if self.byte() != ord("#"):
                raise ValueError("a typed UBJSON container without a count")
            n = self.count()
        elif self.pos < len(self.data) and self.data[self.pos] == ord("#"):
            self.pos += 1
            n = self.count()
        if kind is not None and kind not in self._NUMBERS:
            # null, true/false, char and container elements cost no bytes each: a few
            # bytes would ask for millions of values; XGBoost types only number arrays
            raise ValueError(f"a typed UBJSON container of {chr(kind)!r} elements, which "
                             "XGBoost never writes")
        if obj and n is not None or kind == 0x44:
            # XGBoost reads no typed or counted object, and (some versions) no float64
            self.canonical = False
        if n is not None:
            self.values_left -= n
            if self.values_left < 0 or n > len(self.data) - self.pos:
                raise ValueError(f"a UBJSON container of {n} values, more than the document's "
                                 "bytes can hold")
        if not obj and kind in self._NUMBERS and n is not None:
            # one array (native byte order, a copy of its own), not n Python numbers
            dtype, native = self._DTYPES[kind]
            return np.frombuffer(self.take(n * dtype.itemsize), dtype).astype(native)
        if not obj and kind is None and n is not None and n > self._MAX_UNTYPED:
            # XGBoost writes its number arrays typed; a long untyped one is a slow trap
            raise ValueError(f"an untyped UBJSON array of {n} values")
        out: dict | list = {} if obj else []
        end = ord("}") if obj else ord("]")
        i = 0
        while n is None or i < n:
            if n is None and self.pos < len(self.data) and self.data[self.pos] == end:
                self.pos += 1
                break
            if obj:
                key = self.text()
                if key in out:
                    raise ValueError(f"the key {key!r} appears twice")
            item = self.value(self.byte() if kind is None else kind, depth + 1)
            if obj:
                out[key] = item  # type: ignore[call-overload]
            else:
                out.append(item)  # type: ignore[union-attr]
            i += 1
            if not obj and i > self._MAX_UNTYPED:
                raise ValueError(f"an untyped UBJSON array of over {self._MAX_UNTYPED} values")
        return out



#: The element types of typed arrays XGBoost's binary reader reads, by numpy type.
_MARKERS = {np.dtype(np.float32).str: b"d", np.dtype(np.uint8).str: b"U", np.dtype(np.int8).str: b"i",
            np.dtype(np.int32).str: b"l", np.dtype(np.int64).str: b"L"}
_INT64 = struct.Struct(">q")
_FLOAT32 = struct.Struct(">f")


def ubjson_bytes(doc) -> bytes | None:
    """``doc`` (as :class:`Ubjson` reads one) as the UBJSON XGBoost's binary reader reads.

    Typed arrays keep their element type and bytes; integers are written as
    int64, floats as float32, strings and keys with int64 lengths (the only
    lengths XGBoost reads).  None where XGBoost's binary reader would read
    the document otherwise than it is or not at all: a ``false`` (it reads
    ``F`` as true), a float that float32 does not hold, an integer past 64
    bits, a typed array of another element type (write those as JSON).
    """
    out: list[bytes] = []
    stack: list = [doc]
    # thousands of trees repeat the same keys and element types: each written once
    keys: dict = {}
    kinds: dict = {}
    while stack:  # values and closing markers on a stack: no recursion per level
        value = stack.pop()
        if isinstance(value, bytes):
            out.append(value)
        elif isinstance(value, dict):
            out.append(b"{")
            stack.append(b"}")
            for key, item in reversed(list(value.items())):
                stack.append(item)
                head = keys.get(key)
                if head is None or type(key) is not str:
                    raw = str(key).encode("utf-8")
                    head = keys[key] = b"L" + _INT64.pack(len(raw)) + raw
                stack.append(head)
        elif isinstance(value, np.ndarray):
            kind = kinds.get(value.dtype)
            if kind is None:
                kind = kinds[value.dtype] = (_MARKERS.get(value.dtype.newbyteorder("=").str),
                                             value.dtype.newbyteorder(">"))
            if kind[0] is None or value.ndim != 1:
                return None
            out.append(b"[$" + kind[0] + b"#L" + _INT64.pack(len(value)))
            out.append(value.astype(kind[1], copy=False).tobytes())
        elif isinstance(value, list):
            out.append(b"[")
            stack.append(b"]")
            stack.extend(reversed(value))
        elif isinstance(value, str):
            raw = value.encode("utf-8")
            out.append(b"SL" + _INT64.pack(len(raw)) + raw)
        elif value is None:
            out.append(b"Z")
        elif value is True:
            out.append(b"T")
        elif isinstance(value, int) and value is not False and -2 ** 63 <= value < 2 ** 63:
            out.append(b"L" + _INT64.pack(value))
        elif isinstance(value, float) and (value != value or float(np.float32(value)) == value):
            out.append(b"d" + _FLOAT32.pack(value))
        else:
            return None
    return b"".join(out)


#: The element type XGBoost's binary writer gives each node array, by key (its JSON
#: writer writes the same numbers as lists).
_TYPED = {**dict.fromkeys(("split_conditions", "base_weights", "loss_changes", "sum_hessian",
                           "leaf_weights", "weights"), np.dtype(np.float32)),
          **dict.fromkeys(("left_children", "right_children", "parents", "split_indices",
                           "categories", "categories_nodes", "feature_segments", "sorted_idx"),
                         np.dtype(np.int32)),
          **dict.fromkeys(("default_left", "split_type"), np.dtype(np.uint8)),
          **dict.fromkeys(("categories_segments", "categories_sizes"), np.dtype(np.int64))}


def typed_arrays(doc, text: bytes):
    """A copy of an XGBoost JSON document (``text`` as orjson reads it, checked) with its
    node arrays as the typed arrays XGBoost's UBJSON holds, for :func:`ubjson_bytes`;
    None where XGBoost's JSON reader could read a number otherwise.

    XGBoost rounds a JSON number where it wants float32 straight to float32; here it
    was read as float64, then rounded: the same float32 unless the float64 lies exactly
    halfway between two float32 (the one case two roundings can differ: a number just
    past a halfway point read as that point, then rounded to even): any such value, an
    integer array holding a float or a value its type does not hold, or categories
    stored with the model (their element type is the file's), and None.  A text holding
    ``true``, ``false`` or ``null`` anywhere (XGBoost writes none; numpy would read them
    in a list of numbers as 1, 0 and NaN) is left to XGBoost's JSON reader too.
    """
    if _has_literals(text):
        return None
    places = _places(doc)
    if places is None:
        return None
    path, model, cats = places
    trees = _typed_objects(model.get("trees", []))
    typed = _typed_objects([model])  # a linear booster's weights
    if trees is None or typed is None:
        return None
    typed = typed[0]
    if "cats" in model:
        typed_cats = _typed_objects([cats])
        if typed_cats is None:
            return None
        typed["cats"] = typed_cats[0]
    if "trees" in model:
        typed["trees"] = trees
    return _replaced(doc, path, typed)


def _has_literals(text: bytes) -> bool:
    """Whether ``text`` holds ``true``, ``false`` or ``null`` anywhere (XGBoost writes none;
    numpy would read them in a list of numbers as 1, 0 and NaN): such a text is left to
    XGBoost's JSON reader."""
    return b"true" in text or b"false" in text or b"null" in text


def _places(doc):
    """``(path, model, cats)``: where :func:`typed_arrays` types a document's arrays (the
    booster's model, its trees and stored categories); None where it types none."""
    booster = doc["learner"]["gradient_booster"]
    path = ("learner", "gradient_booster") + (("gbtree",) if "gbtree" in booster else ()) + \
        ("model",)
    model = booster.get("gbtree", booster)["model"]
    cats = model.get("cats", {})
    if not isinstance(cats, dict) or cats.get("enc") or \
            not isinstance(model.get("trees", []), list):
        return None
    return path, model, cats


#: :data:`_TYPED` as :func:`~modellens.trees.scan_xgboost_json` takes it.
_TYPED_KEYS = tuple(_TYPED.items())


def typed_json(text: bytes, read):
    """:func:`typed_arrays` of the JSON ``text`` without a Python number per node value,
    or None where :func:`typed_arrays` would return None or the scan declines.

    The node arrays' numbers are read straight from the text into their types
    (:func:`~modellens.trees.scan_xgboost_json`: exact or declined), ``read`` (orjson,
    or None where it refuses) reads the rest (no key repeated: its objects hold as many
    keys as the text writes), and each array goes back where the text held it: a walk
    in document order (each object's keys in the text's order) meets the arrays of the
    keys of :data:`_TYPED` in the order the scan took them.  Any one outside the places
    :func:`typed_arrays` types, or a key of :data:`_TYPED` there that is not an array,
    declines.
    """
    if _has_literals(text):
        return None
    scanned = scan_xgboost_json(text, _TYPED_KEYS)
    doc = None if scanned is None else read(scanned[0])
    places = None if doc is None else _places(doc)
    if places is None:
        return None
    _, floats, ints, taken, n_keys = scanned
    slots, held = _array_slots(doc)
    _, model, cats = places
    trees = model.get("trees", [])
    if held != n_keys or len(slots) != len(taken) or \
            not all(isinstance(tree, dict) for tree in trees):
        return None  # a key repeated (orjson kept one), or the arrays not met as taken
    # each key's values as its type (every one inside it: checked by the scan)
    typed = {np.dtype(np.float32): floats, np.dtype(np.int64): ints}
    typed.update({t: ints.astype(t) for t in (np.dtype(np.int32), np.dtype(np.uint8))})
    owners = {id(model), id(cats)} | {id(tree) for tree in trees}
    for (owner, key), (name, first, count) in zip(slots, taken):
        if key != name or owner[key] or id(owner) not in owners:
            return None
        owner[key] = typed[_TYPED[key]][first:first + count]
    # every key of _TYPED in those places held one of the arrays (each (object, key) is
    # met once): one that did not (not an array) is one more here than arrays placed
    keyed = sum(len(_TYPED.keys() & owner.keys()) for owner in [model, cats, *trees])
    return doc if keyed == len(slots) else None


def _array_slots(doc) -> tuple:
    """``(object, key)`` of each array that is the value of a key of :data:`_TYPED`, in
    document order (a walk that visits a value before the values after it), and how
    many keys the document's objects hold."""
    slots, held = [], 0
    stack = [doc]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is tuple:
            slots.append(node)
        elif kind is dict:
            held += len(node)
            stack.extend((node, key) if type(value) is list and key in _TYPED else value
                         for key, value in reversed(node.items())
                         if type(value) in (dict, list))
        elif kind is list:
            stack.extend(value for value in reversed(node) if type(value) in (dict, list))
    return slots, held


def _typed_objects(objs):
    """Copies of the dicts ``objs`` with the arrays of :data:`_TYPED` typed (each key's
    arrays of all of them typed at once: thousands of trees); None where one cannot be."""
    if not all(isinstance(obj, dict) for obj in objs):
        return None
    out = [dict(obj) for obj in objs]
    for key, dtype in _TYPED.items():
        at = [k for k, obj in enumerate(objs) if key in obj]
        parts = [objs[k][key] for k in at]
        if not at:
            continue
        if not all(isinstance(part, list) for part in parts):
            return None
        arr = _typed(list(chain.from_iterable(parts)), dtype)
        if arr is None:
            return None
        # slices by hand: np.split costs a few µs a piece (thousands of trees' arrays)
        ends = np.cumsum([len(p) for p in parts]).tolist()
        for k, start, end in zip(at, [0] + ends[:-1], ends):
            out[k][key] = arr[start:end]
    return out


def _typed(values, dtype):
    if not isinstance(values, list):
        return None
    try:
        wide = np.array(values, np.float64 if dtype.kind == "f" else None)
    except (TypeError, ValueError, OverflowError):
        return None
    if wide.ndim != 1 or (len(values) and wide.dtype.kind not in ("f" if dtype.kind == "f"
                                                                   else "i")):
        return None
    if dtype.kind != "f":
        info = np.iinfo(dtype)
        if len(wide) and (wide.min() < info.min or wide.max() > info.max):
            return None
        return wide.astype(dtype)
    return _float32(wide)


def _float32(wide):
    """float64 values as float32, each the float32 its decimal rounds to straight; None
    where a value is a halfway point between two float32 or past float32's range."""
    with np.errstate(over="ignore"):  # past float32: inf, declined below
        narrow = wide.astype(np.float32)
        # the float32 next to each value on the far side of it: the value is a halfway
        # point when it is the exact mean of the two (both float32: the mean is a float64)
        other = np.nextafter(narrow, np.where(wide > narrow, np.float32(np.inf),
                                              np.float32(-np.inf)))
    halfway = (wide != narrow) & (wide == (narrow.astype(np.float64) + other) / 2)
    if halfway.any() or not np.isfinite(narrow[np.isfinite(wide)]).all():
        return None
    return narrow


def _replaced(doc, path, new):
    """``doc`` with its value at ``path`` (keys) replaced by ``new``; the dicts on the way
    copied, the rest shared."""
    if not path:
        return new
    return dict(doc, **{path[0]: _replaced(doc[path[0]], path[1:], new)})
