"""Round trips through JSON for modellens._serialize."""

import collections
import datetime
import json
import math

import numpy as np
import pandas as pd
import pytest

from modellens._serialize import MARKER, DecodeError, from_jsonable, to_jsonable


def roundtrip(x):
    enc = to_jsonable(x)
    assert_plain_json(enc)
    return from_jsonable(json.loads(json.dumps(enc, allow_nan=False)))


def assert_plain_json(obj):
    """The encoder's output holds only the types JSON itself produces."""
    if obj is None or type(obj) in (bool, int, str):
        return
    if type(obj) is float:
        assert math.isfinite(obj)
    elif type(obj) is list:
        for v in obj:
            assert_plain_json(v)
    elif type(obj) is dict:
        for k, v in obj.items():
            assert type(k) is str
            assert_plain_json(v)
    else:
        raise AssertionError(f"non-JSON type {type(obj)!r} in encoder output")


def assert_same_array(a, b):
    """Same type, dtype (byte order included), shape and bits (NaNs as NaN)."""
    assert type(b) is np.ndarray
    assert b.dtype == a.dtype and b.dtype.str == a.dtype.str
    assert b.shape == a.shape
    if a.dtype.kind == "f":
        assert np.array_equal(a, b, equal_nan=True)
        nan = np.isnan(a)
        assert np.array_equal(nan, np.isnan(b))
        # array_equal treats 0.0 == -0.0, so compare the bits of everything but NaN.
        uint = np.dtype(f"u{a.dtype.itemsize}")
        assert np.array_equal(a[~nan].view(uint), b[~nan].view(uint))
    elif a.dtype.kind in "Mm":
        assert np.array_equal(a.view(np.int64), b.view(np.int64))
    elif a.dtype.kind == "O":
        for x, y in zip(a.ravel(), b.ravel()):
            assert_same_element(x, y)
    else:
        assert np.array_equal(a, b)


def assert_same_element(x, y):
    if isinstance(x, float) and math.isnan(x):
        assert type(y) is type(x) and math.isnan(y)
    elif x is None or x is pd.NaT or x is pd.NA:
        assert y is x
    else:
        assert type(y) is type(x)
        assert y == x


SPECIAL_FLOATS = [0.0, -0.0, 1.0, -1.5, np.nan, np.inf, -np.inf, 1e-300, 5e-324, 1.7976931348623157e308, 0.1]


def float_array(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    info = np.finfo(dtype)
    pool = np.array(SPECIAL_FLOATS, dtype=np.float64)
    with np.errstate(over="ignore"):
        pool = np.concatenate([pool.astype(dtype),
                               np.array([info.tiny, info.max, -info.max, info.smallest_subnormal], dtype=dtype),
                               (rng.standard_normal(64) * 10.0 ** rng.integers(-30, 30, 64)).astype(dtype)])
    return pool[rng.integers(0, len(pool), n)].reshape(shape).astype(dtype)


SHAPES = [(), (0,), (0, 3), (7,), (2, 3, 4)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", ">f8", ">f4"])
def test_float_arrays_bit_exact(dtype, shape):
    a = float_array(np.dtype(dtype), shape)
    assert_same_array(a, roundtrip(a))


def test_float_specials_keep_sign_and_nonfinite():
    for dtype in (np.float16, np.float32, np.float64):
        a = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dtype=dtype)
        b = roundtrip(a)
        assert_same_array(a, b)
        assert np.isnan(b[0]) and b[1] == np.inf and b[2] == -np.inf
        assert b[3] == 0 and np.signbit(b[3]) and not np.signbit(b[4])


def test_float32_stays_float32():
    # 0.1 in float32 widens to a float64 that is not 0.1; it must narrow back.
    a = np.array([0.1, 1 / 3], dtype=np.float32)
    b = roundtrip(a)
    assert b.dtype == np.float32
    assert np.array_equal(a.view(np.uint32), b.view(np.uint32))


INT_CASES = {
    "bool": np.array([[True, False], [False, True]]),
    "int8": np.array([-128, 0, 127], dtype=np.int8),
    "int16": np.array([-(2**15), 2**15 - 1], dtype=np.int16),
    "int32": np.array([-(2**31), 2**31 - 1], dtype=">i4"),
    "int64": np.array([np.iinfo(np.int64).min, -1, 0, np.iinfo(np.int64).max], dtype=np.int64),
    "uint8": np.array([0, 255], dtype=np.uint8),
    "uint64": np.array([0, 2**53 + 1, np.iinfo(np.uint64).max], dtype=np.uint64),
    "int64-0d": np.array(-7, dtype=np.int64),
    "bool-empty": np.zeros((0, 2), dtype=bool),
    "uint16-3d": np.arange(24, dtype=np.uint16).reshape(2, 3, 4),
}


@pytest.mark.parametrize("name", list(INT_CASES))
def test_bool_and_integer_arrays(name):
    a = INT_CASES[name]
    assert_same_array(a, roundtrip(a))


@pytest.mark.parametrize("a", [
    np.array(["2020-01-01T00:00:00.123456789", "NaT", "1677-09-22"], dtype="datetime64[ns]"),
    np.array([["2020-01-01", "NaT"], ["1970-01-01", "2262-04-11"]], dtype="datetime64[D]"),
    np.array([], dtype="datetime64[s]"),
    np.array("2021-06-01T12", dtype="datetime64[h]"),
    np.array([1, -5, np.iinfo(np.int64).max], dtype="timedelta64[ns]"),
    np.array(["NaT", 3], dtype="timedelta64[m]"),
], ids=["M8ns", "M8D-2d", "M8s-empty", "M8h-0d", "m8ns", "m8m-nat"])
def test_datetime_and_timedelta_arrays(a):
    assert_same_array(a, roundtrip(a))


def test_unicode_arrays():
    for a in (np.array(["a", "bc", "", "ünï"]), np.array([], dtype="<U3"), np.array([["x", "yy"]])):
        assert_same_array(a, roundtrip(a))


def test_object_array_of_labels():
    a = np.empty(12, dtype=object)
    a[:] = ["a", 3, 2.5, np.nan, True, None, np.int64(4), np.float32(0.5),
            pd.Timestamp("2020-01-01 10:00", tz="Europe/Berlin"), np.datetime64("2020-02-03", "D"),
            pd.NaT, -0.0]
    b = roundtrip(a)
    assert_same_array(a, b)
    assert math.copysign(1.0, b[11]) == -1.0


def test_object_array_2d_and_nested_elements():
    a = np.empty((2, 2), dtype=object)
    a[0, 0], a[0, 1], a[1, 0], a[1, 1] = (1, 2), ["x"], "s", None
    b = roundtrip(a)
    assert b.shape == (2, 2) and b.dtype == object
    assert b[0, 0] == (1, 2) and type(b[0, 0]) is tuple
    assert b[0, 1] == ["x"] and type(b[0, 1]) is list
    assert b[1, 0] == "s" and b[1, 1] is None


def test_object_array_empty():
    a = np.empty((0, 3), dtype=object)
    assert_same_array(a, roundtrip(a))


@pytest.mark.parametrize("x", [
    np.float64(-0.0), np.float64(np.nan), np.float32(0.1), np.float16(np.inf), np.int64(-3), np.int8(5),
    np.uint64(2**64 - 1), np.bool_(True), np.bool_(False), np.datetime64("2020-01-01T00:00", "m"),
    np.datetime64("NaT", "ns"), np.timedelta64(3, "h"), np.str_("lvl"),
], ids=repr)
def test_numpy_scalars_keep_their_type(x):
    y = roundtrip(x)
    assert type(y) is type(x)
    assert np.asarray(y).dtype == np.asarray(x).dtype
    if isinstance(x, np.floating):
        assert np.array_equal(np.asarray(x).view(f"u{x.itemsize}"), np.asarray(y).view(f"u{x.itemsize}")) or (
            np.isnan(x) and np.isnan(y))
    elif isinstance(x, np.datetime64 | np.timedelta64):
        assert np.asarray(x).view(np.int64) == np.asarray(y).view(np.int64)
    else:
        assert y == x


@pytest.mark.parametrize("x", [0.0, 1.5, 1e-310, 1.7976931348623157e308, math.inf, -math.inf, 0.1 + 0.2])
def test_python_floats(x):
    y = roundtrip(x)
    assert type(y) is float and y == x


def test_python_float_nan_and_negative_zero():
    y = roundtrip(math.nan)
    assert type(y) is float and math.isnan(y)
    z = roundtrip(-0.0)
    assert z == 0.0 and math.copysign(1.0, z) == -1.0


@pytest.mark.parametrize("x", [None, True, False, 0, -(2**70), "", "text", "ünïcödé"])
def test_plain_scalars(x):
    y = roundtrip(x)
    assert type(y) is type(x) and y == x


def test_tuples_stay_tuples_and_lists_stay_lists():
    x = ((1, 2), [3, (4, [5])], (), [], ("a",), [()])
    y = roundtrip(x)
    assert y == x
    assert type(y) is tuple
    assert type(y[0]) is tuple and type(y[1]) is list and type(y[1][1]) is tuple
    assert type(y[1][1][1]) is list and type(y[2]) is tuple and type(y[3]) is list
    assert type(y[5][0]) is tuple


def test_dicts_with_str_keys():
    x = {"b": 1, "a": {"nested": (1.0, None)}, "": [], "c": {}}
    y = roundtrip(x)
    assert y == x
    assert list(y) == list(x)
    assert type(y["a"]["nested"]) is tuple
    # A str-keyed dict stays readable JSON, not the pair form.
    assert "b" in to_jsonable(x)


def test_dicts_with_non_str_keys():
    x = {(0, 1): "pair", 3: "int", None: "none", 2.5: "float", True: "bool", "s": "str", ("a", ("b",)): 1}
    y = roundtrip(x)
    assert y == x
    assert list(y) == list(x)
    assert {type(k) for k in y} == {type(k) for k in x}
    assert (0, 1) in y and ("a", ("b",)) in y


def test_dict_that_looks_like_a_tag_is_escaped():
    fake = {MARKER: "tuple", "items": [1, 2]}
    for x in (fake, {"outer": fake}, {MARKER: "unknown"}, {MARKER: 1, "other": np.arange(2)}):
        y = roundtrip(x)
        assert type(y) is dict
        assert y.keys() == x.keys()
    assert roundtrip(fake) == fake


def test_marker_like_keys_stay_plain():
    x = {"__modellens_x": 1, "__ndarray__": [1], "__modellens": 2}
    y = roundtrip(x)
    assert y == x
    assert to_jsonable(x) == x


@pytest.mark.parametrize("dt", [
    np.dtype("float64"), np.dtype(">f4"), np.dtype("int8"), np.dtype("uint64"), np.dtype(bool),
    np.dtype(object), np.dtype("datetime64[ns]"), np.dtype("timedelta64[s]"), np.dtype("<U5"),
], ids=str)
def test_numpy_dtypes(dt):
    y = roundtrip(dt)
    assert isinstance(y, np.dtype) and y == dt and y.str == dt.str


@pytest.mark.parametrize("dt", [
    pd.CategoricalDtype(["b", "a", "c"], ordered=True),
    pd.CategoricalDtype(["b", "a", "c"], ordered=False),
    pd.CategoricalDtype([3, 1, 2]),
    pd.CategoricalDtype([0.5, 1.5], ordered=True),
    pd.CategoricalDtype(pd.Index(["x", "y"], dtype=object)),
    pd.CategoricalDtype(pd.to_datetime(["2020-01-01", "2021-01-01"])),
    pd.CategoricalDtype(pd.to_datetime(["2020-01-01", "2021-01-01"]).tz_localize("UTC")),
    pd.CategoricalDtype(),
], ids=repr)
def test_categorical_dtypes(dt):
    y = roundtrip(dt)
    assert isinstance(y, pd.CategoricalDtype)
    assert y == dt
    assert y.ordered == dt.ordered
    if dt.categories is None:
        assert y.categories is None
    else:
        # == ignores order for unordered dtypes; the level codes need it kept.
        assert list(y.categories) == list(dt.categories)
        assert y.categories.dtype == dt.categories.dtype


def test_categorical_order_is_kept():
    y = roundtrip(pd.CategoricalDtype(["b", "a"], ordered=True))
    assert y != pd.CategoricalDtype(["a", "b"], ordered=True)


@pytest.mark.parametrize("name", ["Int64", "Float64", "boolean", "string", "UInt8", "datetime64[ns, UTC]",
                                  "period[D]", "interval[int64, right]"])
def test_pandas_extension_dtypes(name):
    dt = pd.api.types.pandas_dtype(name)
    y = roundtrip(dt)
    assert type(y) is type(dt) and y == dt


def test_string_dtype_keeps_storage_and_na_value():
    dts = [pd.StringDtype(storage="python")]
    try:
        dts.append(pd.StringDtype(storage="python", na_value=np.nan))
    except TypeError:  # pandas without the na_value argument
        pass
    for dt in dts:
        y = roundtrip(dt)
        assert type(y) is pd.StringDtype and y == dt and y.storage == dt.storage
        assert (y.na_value is pd.NA) == (dt.na_value is pd.NA)


@pytest.mark.parametrize("ts", [
    pd.Timestamp("2021-03-04 05:06:07.123456789"),
    pd.Timestamp("2021-03-04").as_unit("s"),
    pd.Timestamp("2020-07-01 10:00", tz="Europe/Berlin"),
    pd.Timestamp("2020-01-01", tz="UTC"),
    pd.Timestamp("2020-01-01T00:00+05:30"),
], ids=str)
def test_timestamps(ts):
    y = roundtrip(ts)
    assert type(y) is pd.Timestamp
    assert y == ts and y.unit == ts.unit
    assert y.utcoffset() == ts.utcoffset()
    assert str(y.tz) == str(ts.tz)


def test_pandas_missing_values_and_timedelta():
    assert roundtrip(pd.NaT) is pd.NaT
    assert roundtrip(pd.NA) is pd.NA
    td = pd.Timedelta("1 days 3ns")
    y = roundtrip(td)
    assert type(y) is pd.Timedelta and y == td and y.unit == td.unit


def test_dict_holding_tuple_of_two_arrays():
    x = {"interval": (np.array([0.0, -0.0, np.nan], dtype=np.float32), np.array([1, 2, 3], dtype=np.int64)),
         "name": "age"}
    y = roundtrip(x)
    assert set(y) == {"interval", "name"} and y["name"] == "age"
    assert type(y["interval"]) is tuple and len(y["interval"]) == 2
    assert_same_array(x["interval"][0], y["interval"][0])
    assert_same_array(x["interval"][1], y["interval"][1])


def test_list_of_dicts_like_a_result():
    levels = np.array(["low", "mid", np.nan], dtype=object)
    x = [
        {"feature": "x1", "grid": np.linspace(0, 1, 5), "values": np.full((2, 5), np.nan), "std": None,
         "dtype": np.dtype("float32"), "seed": np.int64(7)},
        {"feature": "x2", "grid": levels, "values": np.arange(6, dtype=np.float32).reshape(2, 3),
         "dtype": pd.CategoricalDtype(["low", "mid"], ordered=True), "meta": {("a", 1): -math.inf}},
    ]
    y = roundtrip(x)
    assert type(y) is list and len(y) == 2
    assert_same_array(x[0]["grid"], y[0]["grid"])
    assert_same_array(x[0]["values"], y[0]["values"])
    assert y[0]["std"] is None and y[0]["dtype"] == np.float32
    assert type(y[0]["seed"]) is np.int64 and y[0]["seed"] == 7
    assert_same_array(levels, y[1]["grid"])
    assert_same_array(x[1]["values"], y[1]["values"])
    assert y[1]["dtype"] == x[1]["dtype"]
    assert y[1]["meta"] == {("a", 1): -math.inf}


def test_encoding_is_valid_strict_json():
    x = {"a": np.array([np.nan, np.inf]), "b": math.nan, "c": (np.float64(np.inf),)}
    text = json.dumps(to_jsonable(x), allow_nan=False)
    assert "NaN" not in text and "Infinity" not in text


Point = collections.namedtuple("Point", "x y")


@pytest.mark.parametrize("obj, name", [
    (object(), "object"),
    ({1, 2}, "set"),
    (1 + 2j, "complex"),
    (b"raw", "bytes"),
    (Point(1, 2), "Point"),
    (collections.OrderedDict(a=1), "OrderedDict"),
    (datetime.datetime(2020, 1, 1), "datetime"),
    (np.ma.masked_array([1, 2], mask=[0, 1]), "MaskedArray"),
    (np.zeros(2, dtype=np.complex128), "complex128"),
    (np.array([b"a"]), "S1"),
    (np.zeros(2, dtype=[("a", "f8")]), "'a'"),
    (np.complex64(1), "complex64"),
    (np.dtype([("a", "f8"), ("b", "i4")]), "dtype"),
    (pd.Series([1, 2]), "Series"),
    ({"ok": [1, {2, 3}]}, "set"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_unsupported_objects_raise_type_error(obj, name):
    with pytest.raises(TypeError, match=name):
        to_jsonable(obj)


@pytest.mark.skipif(np.dtype(np.longdouble).itemsize <= 8, reason="longdouble is float64 here")
def test_extended_precision_floats_are_refused():
    with pytest.raises(TypeError, match="float"):
        to_jsonable(np.ones(2, dtype=np.longdouble))


@pytest.mark.parametrize("bad", [
    {MARKER: "no-such-tag"},
    {MARKER: "ndarray", "dtype": "<f8", "shape": [3], "data": [1.0]},
    {MARKER: "ndarray", "dtype": "<f8", "shape": [1]},
    {MARKER: "float", "value": "NaN?"},
    {MARKER: "dict", "items": [[1]]},
])
def test_malformed_tags_raise_value_error(bad):
    with pytest.raises(ValueError):
        from_jsonable(bad)


def test_from_jsonable_refuses_non_json_input():
    with pytest.raises(DecodeError, match="set"):
        from_jsonable({"a": {1}})
