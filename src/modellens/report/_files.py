"""Data and model files read the way the model expects them.

A CSV file holds text; ``read_csv`` guesses each column's type, and the guess
need not be what the model was fit on: a zip code fit as strings through a
``OneHotEncoder`` comes back as integers, every row becomes an unknown level
and the model's answer no longer depends on it, without an error.  The model
itself records what it saw (an encoder's ``categories_``, HistGradientBoosting's
categorical preprocessor, XGBoost's and LightGBM's category lists), so the
columns are read, and checked, against that record.

Model files: skops files hold data, not code, and load when every type in
them is on skops' own list or on :data:`SAFE_TYPES` (the tree models
modellens explains and the objects they hold); XGBoost's ``.json`` / ``.ubj``
and LightGBM's text model files carry no code and load through the
libraries' own loaders.  Pickle and joblib files run code while loading and
need ``trust``.  The libraries walk tree node arrays without bounds checks, so
without ``trust`` every tree is checked first (``trees/_checks.py``):
XGBoost's and LightGBM's before their libraries read them, scikit-learn's
after skops rebuilt them and before anything predicts.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .._validation import InvalidParameterError
from ..data import as_pandas
from ..models import Expected, expected_inputs, is_text, lightgbm_names, model_feature_names
from ..trees import UnsafeModelError, check_lightgbm_text, check_sklearn_objects, check_xgboost_model

__all__ = ["Expected", "expected_inputs", "model_feature_names", "lightgbm_names", "read_table",
           "conform",
           "check_frame", "load_model_file", "SAFE_TYPES", "FileError"]


class FileError(InvalidParameterError):
    """A file that cannot be read as the model expects, or a model file that is refused."""


# ------------------------------------------------------------------- data files
def read_table(path: Path, model=None) -> pd.DataFrame:
    """A CSV or Parquet file as a DataFrame, its columns read as ``model`` expects them.

    CSV columns the model saw as text are read as text (``"02134"`` stays
    ``"02134"``); then :func:`conform` checks and casts every column.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    expected = expected_inputs(model) if model is not None else {}
    try:
        if suffix in (".csv", ".txt"):
            header = pd.read_csv(path, nrows=0).columns
            text = {c: str for c in header if str(c) in expected and expected[str(c)].text}
            frame = pd.read_csv(path, dtype=text or None)
        elif suffix in (".parquet", ".pq"):
            frame = _read_parquet(path)
        else:
            raise FileError(f"cannot read {str(path)!r}: give a .csv or .parquet file.")
    except FileError:
        raise
    except Exception as exc:  # pandas and pyarrow raise many kinds
        raise FileError(f"cannot read {str(path)!r}: {_one_line(exc)}") from None
    frame.columns = [str(c) for c in frame.columns]
    return frame


def _read_parquet(path: Path) -> pd.DataFrame:
    """A Parquet file through the conversion polars and pyarrow tables get (``data.as_pandas``).

    A file polars wrote keeps its columns' meaning: a boolean column with
    nulls stays boolean (pandas would read objects, taken for text), a
    Categorical has its levels sorted, an Enum keeps its order.
    """
    try:
        pq = importlib.import_module("pyarrow.parquet")
    except ImportError:  # pandas may read it with fastparquet
        return pd.read_parquet(path)
    return as_pandas(pq.read_table(path), name=f"the file {path.name}")


def conform(frame: pd.DataFrame, model) -> pd.DataFrame:
    """``frame`` with each column cast to what ``model`` was fit on (a new frame).

    Raises
    ------
    FileError
        When a column cannot be what the model expects: text where it saw
        numbers, or no value at all among the levels it knows.
    """
    expected = expected_inputs(model)
    out = frame.copy()
    for name, exp in expected.items():
        if name not in out.columns:
            continue
        col = out[name]
        if exp.text is None:
            pass  # the model does not say: the file's own reading stands
        elif exp.text:
            if not (pd.api.types.is_object_dtype(col) or pd.api.types.is_string_dtype(col)
                    or isinstance(col.dtype, pd.CategoricalDtype)):
                col = col.map(lambda v: v if pd.isna(v) else _as_text(v)).astype(object)
        else:
            values = col.astype(object) if isinstance(col.dtype, pd.CategoricalDtype) else col
            if not pd.api.types.is_numeric_dtype(values):
                numbers = pd.to_numeric(values, errors="coerce")
                bad = values[numbers.isna() & values.notna()]
                if len(bad):
                    raise FileError(
                        f"column {name!r} holds text such as {str(bad.iloc[0])!r}, but the "
                        f"model ({exp.source}) was fit on numbers there.")
                col = numbers
        if exp.category:
            # without the model's levels (XGBoost before 3.1 stores codes only), pandas'
            # sorted levels are what astype("category") gave when the model was fit
            col = pd.Categorical(col.astype(object) if exp.text else col,
                                 categories=exp.levels)
            col = pd.Series(col, index=out.index, name=name)
        out[name] = col
    check_frame(out, model, expected=expected)
    return out


def check_frame(frame, model, *, expected=None) -> list:
    """Warnings about columns of ``frame`` the model will read wrongly; raises when none fits.

    A column none of whose values is among the levels the model knows would
    make every row an unknown level (a one-hot encoder with
    ``handle_unknown="ignore"`` maps them all to zeros): that raises, naming
    the column, an example of each side, and the likely fix.  Some unknown
    values give a warning with their share.
    """
    if not isinstance(frame, pd.DataFrame):
        return []
    expected = expected_inputs(model) if expected is None else expected
    notes = []
    for name, exp in expected.items():
        if name not in frame.columns or exp.levels is None or not len(exp.levels):
            continue
        col = frame[name]
        present = col.dropna()
        if present.empty:
            continue
        known = set(exp.levels.tolist())
        values = present.astype(object) if isinstance(col.dtype, pd.CategoricalDtype) \
            else present
        inside = values.isin(known)
        if not inside.any():
            cast = ""
            if exp.text and not is_text(np.asarray(values.to_numpy())):
                cast = (f" The model saw text there and the data holds {col.dtype} values: "
                        f"read the column as text (pandas: dtype={{{name!r}: str}}).")
            elif not exp.text and is_text(np.asarray(values.to_numpy(dtype=object))):
                cast = " The model saw numbers there and the data holds text."
            raise FileError(
                f"no value of column {name!r} (such as {values.iloc[0]!r}) is among the "
                f"{len(exp.levels)} levels the model ({exp.source}) knows (such as "
                f"{exp.levels[0]!r}): every row would be an unknown level.{cast}")
        unseen = 1.0 - float(inside.mean())
        if unseen > 0:
            notes.append(f"{unseen:.0%} of the values of {name!r} are levels the model never "
                         f"saw (such as {values[~inside].iloc[0]!r}); the model reads them as "
                         "unknown.")
    return notes


def _as_text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# ------------------------------------------------------------------ model files
#: Types a skops file may hold without ``trust``: the tree models modellens
#: explains and the objects they hold.  Each one is rebuilt from arrays and
#: plain values (``__setstate__`` of data, or a model buffer parsed by the
#: library); none calls code named in the file.  Functions and any type not
#: listed still need ``trust``; skops' own default list covers the rest of
#: scikit-learn's estimators and numpy.
SAFE_TYPES = frozenset({
    "sklearn.tree._tree.Tree",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    # HistGradientBoosting's categorical preprocessor holds check_array as a function
    # reference in a partial: named, never called while loading
    "functools.partial", "sklearn.utils.validation.check_array",
    "collections.OrderedDict",
    "xgboost.core.Booster", "xgboost.sklearn.XGBRegressor", "xgboost.sklearn.XGBClassifier",
    "xgboost.sklearn.XGBRFRegressor", "xgboost.sklearn.XGBRFClassifier",
    "lightgbm.basic.Booster", "lightgbm.sklearn.LGBMRegressor",
    "lightgbm.sklearn.LGBMClassifier",
    # SimpleImputer, KBinsDiscretizer and others keep a dtype: skops rebuilds it as the
    # dtype of an empty array read by np.load(allow_pickle=False), which runs no code
    # (skops leaves it off its own list only for want of a decision)
    "numpy.dtype",
})
# Not listed, and refused: functions.  A FunctionTransformer of a numpy ufunc (np.log1p,
# np.sqrt, ...) is on skops' own list; any other function, numpy's np.round included,
# is named by the file and would be called: it needs trust.  The rest of an ordinary
# pipeline (Pipeline, ColumnTransformer, SimpleImputer, the scalers, OneHotEncoder,
# OrdinalEncoder, linear models) is on skops' own list.

_PICKLES = (".pkl", ".pickle", ".joblib", ".jbl")
_XGBOOST = (".json", ".ubj")
_LIGHTGBM = (".txt", ".lgb", ".lgbm")


def load_model_file(path: Path, *, trust: bool = False, say=print):
    """A fitted model from a file (see the module's notes for which files need ``trust``)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".skops":
        return _load_skops(path, trust, say)
    if suffix in _XGBOOST:
        return _load_xgboost(path)
    if suffix in _LIGHTGBM:
        return _load_lightgbm(path)
    if suffix in _PICKLES:
        if not trust:
            raise FileError(
                f"refusing to load {str(path)!r}: pickle and joblib files run arbitrary code "
                "when loaded. Save the model with skops (skops.io.dump(model, 'model.skops')) "
                "or, for XGBoost and LightGBM, with the library's own save_model, or, if you "
                "made this file yourself, rerun with --trust-model-file.")
        import joblib

        try:
            return joblib.load(path)
        except Exception as exc:
            raise FileError(f"cannot load {str(path)!r}: {_one_line(exc)}") from None
    raise FileError(f"cannot load a model from {str(path)!r}: give a .skops file, an XGBoost "
                    ".json / .ubj or LightGBM .txt model file (or a "
                    f"{' / '.join(_PICKLES)} file with --trust-model-file).")


def _load_skops(path, trust, say):
    import skops.io as sio

    try:
        untrusted = sio.get_untrusted_types(file=path)
    except Exception as exc:
        raise FileError(f"cannot read the skops file {str(path)!r}: {_one_line(exc)}") from None
    unknown = [t for t in untrusted if t not in SAFE_TYPES]
    if unknown and not trust:
        raise FileError(
            f"skops refuses {str(path)!r}: it holds types neither skops nor modellens trusts "
            f"({', '.join(unknown)}); if you know where the file comes from, rerun with "
            "--trust-model-file to load them.")
    if unknown:
        say(f"modellens: loading the types {', '.join(unknown)} from {str(path)!r} "
            "(--trust-model-file)")
    # XGBoost and LightGBM boosters are rebuilt by their libraries while skops loads
    data = None if trust else _refused(path, _check_skops_boosters, path)
    try:
        model = sio.load(path, trusted=list(untrusted) or None) if data is None else \
            sio.loads(data, trusted=list(untrusted) or None)
    except Exception as exc:
        raise FileError(f"cannot load the skops file {str(path)!r}: {_one_line(exc)}") from None
    if not trust:
        # scikit-learn walks Tree and TreePredictor node arrays without bounds checks
        _refused(path, check_sklearn_objects, model)
    return model


def _refused(path, check, *args):
    """Run a structure check of the model in ``path``; its failure as one line."""
    try:
        return check(*args)
    except UnsafeModelError as exc:
        raise FileError(f"{str(path)!r}: {_one_line(exc)}") from None
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError,
            RecursionError, UnicodeDecodeError) as exc:
        raise FileError(f"refusing {str(path)!r}: its model does not have the expected "
                        f"structure ({type(exc).__name__}: {_one_line(exc)[:200]})") from None


def _check_skops_boosters(path):
    """Check the booster states in a skops file's schema before their libraries read them.

    Returns the file's bytes with LightGBM's model texts read tree by tree (see
    :func:`_one_tree_at_a_time`), or None when it holds no LightGBM booster.
    """
    import io
    import zipfile

    rewritten = False
    with zipfile.ZipFile(path) as archive:
        schema = json.loads(archive.read("schema.json"))
        stack = [schema]
        while stack:
            node = stack.pop()
            if isinstance(node, list):
                stack.extend(node)
                continue
            if not isinstance(node, dict):
                continue
            stack.extend(node.values())
            if node.get("__class__") != "Booster":
                continue
            state = node.get("content", {}).get("content", {})
            if node.get("__module__") == "xgboost.core":
                blob = archive.read(state["handle"]["file"])
                check_xgboost_model(_decode_xgboost(blob, "the booster in the skops file")
                                    ["Model"])
            elif node.get("__module__") == "lightgbm.basic":
                text = json.loads(state["_handle"]["content"])
                check_lightgbm_text(text)
                state["_handle"]["content"] = json.dumps(_one_tree_at_a_time(text))
                rewritten = True
        if not rewritten:
            return None
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as copy:
            for name in archive.namelist():
                copy.writestr(name, json.dumps(schema) if name == "schema.json"
                              else archive.read(name))
        return out.getvalue()


def _one_tree_at_a_time(text: str) -> str:
    """A LightGBM model text without its ``tree_sizes`` line.

    With the sizes LightGBM parses the trees in parallel threads, where an
    error in one tree's text aborts the process instead of raising; without
    them it reads the trees one after another and raises.
    """
    import re

    return re.sub(r"(?m)^tree_sizes=[^\r\n]*(?:\r\n?|\n)?", "", text, count=1)


def _load_xgboost(path):
    try:
        import xgboost
    except ImportError:
        raise FileError(f"{str(path)!r} looks like an XGBoost model file; install xgboost to "
                        "read it.") from None
    # XGBoost reads its node arrays unchecked (a parent index while loading, children
    # while predicting): the document is parsed and checked here, and XGBoost reads
    # exactly the checked document, written back as JSON
    raw = _refused(path, _decode_xgboost, path.read_bytes(), str(path))
    _refused(path, check_xgboost_model, raw)
    checked = bytearray(json.dumps(raw).encode())
    try:
        booster = xgboost.Booster(model_file=checked)
        objective = json.loads(booster.save_config())["learner"]["objective"]["name"]
    except Exception as exc:
        raise FileError(f"cannot load the XGBoost model {str(path)!r}: {_one_line(exc)}") \
            from None
    if objective.startswith(("binary:", "multi:")):
        model = xgboost.XGBClassifier()
    elif objective.startswith(("rank:",)):
        model = xgboost.XGBRanker()
    else:
        model = xgboost.XGBRegressor()
    try:
        model.load_model(checked)
    except Exception as exc:
        raise FileError(f"cannot load the XGBoost model {str(path)!r}: {_one_line(exc)}") \
            from None
    return model


def _no_repeats(pairs):
    out = {}
    for key, value in pairs:
        if key in out:  # two readers could disagree on which one counts
            raise ValueError(f"the key {key!r} appears twice")
        out[key] = value
    return out


def _decode_xgboost(data: bytes, name: str):
    """XGBoost's model document from its JSON or UBJSON bytes (keys never repeated)."""
    body = data.lstrip()
    if body[:1] == b"{" and body[1:].lstrip()[:1] in (b'"', b"}"):
        return json.loads(data, object_pairs_hook=_no_repeats)
    return _Ubjson(data).document()


class _Ubjson:
    """A reader of the UBJSON XGBoost writes, bounded by the bytes it is given."""

    _NUMBERS = {ord("i"): ">i1", ord("U"): ">u1", ord("I"): ">i2", ord("l"): ">i4",
                ord("L"): ">i8", ord("d"): ">f4", ord("D"): ">f8"}

    #: Longest untyped array read (XGBoost's arrays of trees; its number arrays are typed).
    _MAX_UNTYPED = 2 ** 20

    def __init__(self, data: bytes):
        self.data, self.pos = memoryview(data), 0

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
        kind = self._NUMBERS.get(marker)
        if kind is None:
            raise ValueError(f"unknown UBJSON marker {chr(marker)!r}")
        value = np.frombuffer(self.take(np.dtype(kind).itemsize), kind)[0]
        return float(value) if kind[1] == "f" else int(value)

    def count(self) -> int:
        n = self.number(self.byte())
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
        if marker == ord("S") or marker == ord("H"):
            return self.text()
        if marker == ord("C"):
            return bytes(self.take(1)).decode("latin-1")
        if marker == ord("Z"):
            return None
        if marker in (ord("T"), ord("F")):
            return marker == ord("T")
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
        if not obj and kind in self._NUMBERS and n is not None:
            dtype = np.dtype(self._NUMBERS[kind])
            return np.frombuffer(self.take(n * dtype.itemsize), dtype).tolist()
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


def _load_lightgbm(path):
    try:
        import lightgbm
    except ImportError:
        raise FileError(f"{str(path)!r} looks like a LightGBM model file; install lightgbm to "
                        "read it.") from None
    # LightGBM trusts the text's tree sizes while loading and its node arrays while
    # predicting: the text is checked first, then what LightGBM made of it
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise FileError(f"cannot load the LightGBM model {str(path)!r}: it is not UTF-8 "
                        "text.") from None
    _refused(path, check_lightgbm_text, text)
    try:
        booster = lightgbm.Booster(model_str=_one_tree_at_a_time(text))
    except Exception as exc:
        raise FileError(f"cannot load the LightGBM model {str(path)!r}: {_one_line(exc)}") \
            from None
    _refused(path, check_lightgbm_text, booster.model_to_string())
    return booster


def _one_line(exc) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__
