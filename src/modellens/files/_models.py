"""Model files loaded without running code or trusting unchecked tree arrays.

skops files hold data, not code, and load when every type in them is on
skops' own list or on :data:`SAFE_TYPES` (the tree models modellens explains
and the objects they hold); XGBoost's ``.json`` / ``.ubj`` and LightGBM's text
model files carry no code and load through the libraries' own loaders.
Pickle and joblib files run code while loading and need ``trust``.  The
libraries walk tree node arrays without bounds checks, so without ``trust``
every tree is checked first (the checks of ``modellens.trees``): XGBoost's and
LightGBM's before their libraries read them, scikit-learn's after skops
rebuilt them and before anything predicts.
"""

from __future__ import annotations

import json
import re
import warnings
from os import PathLike
from pathlib import Path
from typing import Any

from .._validation import ModellensWarning, user_stacklevel
from ..trees import (UnsafeModelError, check_lightgbm_file, check_lightgbm_text,
                     check_sklearn_objects, check_xgboost_model, lightgbm_loaded_booster,
                     lightgbm_saved_text, scan_xgboost_ubjson, TreesAsRead)
from ._errors import FileError, one_line as _one_line
from ._read import read_all
from ._skops_ids import check_skops_ids, read_skops_schema, skops_private
from ._ubjson import Ubjson, typed_arrays, typed_json, ubjson_bytes

__all__ = ["load_model", "SAFE_TYPES"]

#: How the command line says ``trust=True``.
_FLAG = "(command line: --trust-model-file)"

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


def load_model(path: str | PathLike[str], *, trust: bool = False) -> Any:
    """Load a fitted model from a file, refusing files that could run code or crash.

    skops files hold data, not code, and load when every type in them is on
    skops' own list or on ``modellens.files.SAFE_TYPES`` (the tree models
    modellens explains and the objects they hold).  XGBoost's ``.json`` /
    ``.ubj`` and LightGBM's text (``.txt``) model files carry no code and load
    through the libraries' own loaders.  Pickle and joblib files
    (``.pkl``, ``.pickle``, ``.joblib``) run code while loading and load only
    with ``trust=True``.  The model libraries walk tree node arrays without
    bounds checks, so without ``trust`` every tree is checked first.

    Parameters
    ----------
    path : str or path-like
        A ``.skops``, ``.json``, ``.ubj``, ``.txt`` (``.lgb``, ``.lgbm``) file,
        or, with ``trust=True``, a pickle or joblib file.
    trust : bool, default=False
        You know where the file comes from: load the types skops does not
        trust (with a :class:`~modellens.ModellensWarning` naming them) and
        pickle and joblib files, and skip the tree checks.

    Returns
    -------
    object
        The fitted model: an estimator, or a LightGBM ``Booster``.

    Raises
    ------
    modellens.files.FileError
        When the file is refused or cannot be read, with the reason and the fix.
        A subclass of :class:`~modellens.InvalidParameterError`.

    See Also
    --------
    modellens.read_data : read a data file as the model expects it.

    Examples
    --------
    >>> import numpy as np
    >>> import skops.io as sio
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> import modellens as ml
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> sio.dump(DecisionTreeRegressor(max_depth=2).fit(X, X[:, 0]), "tree.skops")
    >>> ml.load_model("tree.skops").predict(X[:2])
    array([1., 1.])
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".skops":
        return _load_skops(path, trust)
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
                f"made this file yourself, load it with trust=True {_FLAG}.")
        import joblib

        try:
            return joblib.load(path)
        except Exception as exc:
            raise FileError(f"cannot load {str(path)!r}: {_one_line(exc)}") from None
    raise FileError(f"cannot load a model from {str(path)!r}: give a .skops file, an XGBoost "
                    ".json / .ubj or LightGBM .txt model file (or a "
                    f"{' / '.join(_PICKLES)} file with trust=True {_FLAG}).")


def _load_skops(path, trust):
    import io
    import zipfile

    import skops.io as sio

    try:
        archive = zipfile.ZipFile(path)
    except Exception as exc:
        raise FileError(f"cannot read the skops file {str(path)!r}: {_one_line(exc)}") from None
    # one opening of the file for the trust decision, the booster checks and the load (a
    # file replaced between two openings would load other types than those judged)
    with archive:
        whole = None
        try:
            nodes, schema, boosters = _skops_nodes(archive)
            if nodes is None:
                # a skops whose private functions differ (skops_private): its public ones,
                # every step on the bytes of this opening, held in memory
                opened = archive.fp
                assert opened is not None  # (open: inside the with)
                opened.seek(0)
                whole = opened.read()
                archive = zipfile.ZipFile(io.BytesIO(whole))
                schema = json.loads(archive.read("schema.json"))
                boosters = check_skops_ids(schema, archive)
            untrusted = sio.get_untrusted_types(data=whole) if nodes is None else \
                sorted(nodes.get_unsafe_set())
        except FileError as exc:
            raise FileError(f"refusing the skops file {str(path)!r}: {exc}") from None
        except Exception as exc:
            raise FileError(f"cannot read the skops file {str(path)!r}: {_one_line(exc)}") \
                from None
        _judge_types(path, untrusted, trust)
        # XGBoost and LightGBM boosters are rebuilt by their libraries while skops loads
        # (the walk of the ids saw every node's class: none is a Booster, no booster walk)
        data = None if trust or not boosters else \
            _refused(path, _check_skops_boosters, archive, schema)
        try:
            if data is None and nodes is not None:
                model = nodes.construct()  # the types judged above: skops' audit is that
            elif data is None:
                model = sio.loads(whole, trusted=list(untrusted) or None)
            else:
                model = sio.loads(data, trusted=list(untrusted) or None)
        except Exception as exc:
            raise FileError(f"cannot load the skops file {str(path)!r}: {_one_line(exc)}") \
                from None
    if not trust:
        # scikit-learn walks Tree and TreePredictor node arrays without bounds checks
        _refused(path, check_sklearn_objects, model)
    return model


def _skops_nodes(archive):
    """skops' tree of nodes of an open skops file, every type in it trusted only by skops'
    defaults (``get_unsafe_set()``: what ``skops.io.get_untrusted_types`` lists), as
    ``skops.io.load`` builds it before it audits and constructs:
    ``(nodes, schema, booster)``: skops' tree, the parsed schema it was built from and
    whether the schema names a ``Booster`` (``check_skops_ids``); ``(None, None, None)``
    where this skops version has not these functions, or takes other arguments (then its
    public ones read the file twice)."""
    private = skops_private()
    if private is None:  # another skops version
        return None, None, None
    get_tree, read_schema = private
    schema, context, walked = read_skops_schema(archive, read_schema)
    boosters = check_skops_ids(schema, archive, walked=walked)
    return get_tree(schema, context, trusted=None), schema, boosters


def _judge_types(path, untrusted, trust):
    """Refuse (or, with ``trust``, warn of) the types neither skops nor modellens trusts."""
    unknown = [t for t in untrusted if t not in SAFE_TYPES]
    if unknown and not trust:
        raise FileError(
            f"skops refuses {str(path)!r}: it holds types neither skops nor modellens trusts "
            f"({', '.join(unknown)}); if you know where the file comes from, load it with "
            f"trust=True {_FLAG}.")
    if unknown:
        warnings.warn(ModellensWarning(
            f"loading the types {', '.join(unknown)} from {str(path)!r}, which neither skops "
            f"nor modellens trusts (trust=True {_FLAG})"), stacklevel=user_stacklevel())


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


def _check_skops_boosters(archive, schema):
    """Check the booster states in a skops file's schema before their libraries read them
    (``archive``: the open file; ``schema``: its ``schema.json`` as json parsed it for the
    ids' walk, parsed once: a LightGBM booster's text in it is rewritten here, after skops'
    tree was built from it, which then loads the rewritten file instead).

    Returns the file's bytes with LightGBM's model texts read tree by tree (see
    :func:`_one_tree_at_a_time`), or None when it holds no LightGBM booster.
    """
    import io
    import zipfile

    rewritten = False
    # (called where the walk of the ids saw a Booster: no test of the bytes first, which
    # would miss one in a schema json reads as UTF-16 or UTF-32, as skops does)
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
            checked = check_lightgbm_text(text)
            if not checked.plain:
                # skops hands LightGBM this very text: what LightGBM reads of it is
                # checked here, as for a .txt file that is not plain
                _lightgbm_reads_as_checked(text, checked)
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
    found = _TREE_SIZES.search(text)
    if found is None:
        return text
    line = found.group(0)
    # str.replace copies the text once (slicing and joining it: twice), where the line is
    # the first of its kind
    if text.find(line) == found.start():
        return text.replace(line, "", 1)
    return text[:found.start()] + text[found.end():]


#: LightGBM's tree_sizes line.
_TREE_SIZES = re.compile(r"(?m)^tree_sizes=[^\r\n]*(?:\r\n?|\n)?")


def _load_xgboost(path):
    try:
        import xgboost
    except ImportError:
        raise FileError(f"{str(path)!r} looks like an XGBoost model file; install xgboost to "
                        "read it.") from None
    # XGBoost reads its node arrays unchecked (a parent index while loading, children
    # while predicting): the document is parsed and checked here, and XGBoost reads
    # exactly the checked document: the file's own bytes where both readers provably read
    # them alike (see _read_xgboost), else the checked document written back
    as_read = TreesAsRead()  # a UBJSON file's trees checked as it is read
    data = read_all(path, as_read)
    json_file = _is_json(data)  # decided once: every reader below is handed the answer
    raw = _scanned_and_checked(data, json_file, as_read)
    exact = scanned = raw is not None
    typed = None
    if raw is None and json_file:
        # XGBoost's own JSON file: its node arrays read straight into typed arrays
        raw = typed = _typed_json(data)
    if typed is not None:  # (set only here: every other reading leaves it None)
        exact = True
        _refused(path, check_xgboost_model, typed)
    elif raw is None:
        raw, exact = _refused(path, _read_xgboost, data, json_file)
        # a JSON document's node arrays typed first: the checks read typed arrays at a
        # fraction of the cost of lists, and check exactly the arrays XGBoost is handed;
        # only where orjson read it exactly (no NaN, no integer past 64 bits: json's
        # readings, which XGBoost's own reader may read otherwise)
        typed = _as_typed(raw, data) if json_file and exact else None
        _refused(path, check_xgboost_model, raw if typed is None else typed)
    # the checked document goes to XGBoost as UBJSON (its binary reader costs a fraction
    # of its JSON reader: a 16 MB JSON file, 0.26 s against 0.02 s): a UBJSON file's typed
    # arrays' bytes as they were read, a JSON file's number lists typed as XGBoost types
    # them where every float32 is provably the one XGBoost's JSON reader makes
    # (typed_arrays); else, or where the binary reader would read it otherwise, as JSON
    binary = (None if typed is None else ubjson_bytes(typed)) if json_file else \
        data if exact else ubjson_bytes(raw)
    # the wrapper from the checked document's objective: XGBoost reads the model once
    objective = _refused(path, lambda doc: str(doc["learner"]["objective"]["name"]), raw)
    if objective.startswith(("binary:", "multi:")):
        wrapper = xgboost.XGBClassifier
    elif objective.startswith(("rank:",)):
        wrapper = xgboost.XGBRanker
    else:
        wrapper = xgboost.XGBRegressor
    if binary is not None:
        model = wrapper()
        try:
            model.load_model(binary if isinstance(binary, bytearray) else bytearray(binary))
            return model
        except Exception:  # noqa: BLE001 - read again as JSON below
            # XGBoost's binary reader wants typed arrays where it writes them (its JSON
            # reader takes any array of numbers): the same checked document, as JSON
            if scanned:  # its trees were read flat: the Python reader's document
                raw = _refused(path, _read_xgboost, data, json_file)[0]
    model = wrapper()
    try:
        model.load_model(data if json_file and exact else bytearray(_json_bytes(raw)))
    except Exception as exc:
        raise FileError(f"cannot load the XGBoost model {str(path)!r}: {_one_line(exc)}") \
            from None
    return model


def _typed_json(data):
    """A JSON document XGBoost's own reader reads as orjson does (see :func:`_read_xgboost`)
    with its node arrays typed (:func:`~._ubjson.typed_json`), or None."""
    if data[:1] != b"{":
        return None
    try:
        return typed_json(data, _exact_json)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError, OverflowError):
        return None  # not the structure it types: the readers below name the fault


def _exact_json(text):
    """orjson's reading of ``text`` where XGBoost decodes its strings alike (no escape but
    those :func:`_read_xgboost` names), else None; repeated keys are the caller's."""
    try:
        import orjson
    except ImportError:  # optional: modellens[trees] installs it
        return None
    try:
        return None if _ODD_ESCAPE.search(text) else orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def _as_typed(doc, text):
    """A JSON document (read from ``text``, not yet checked) with its node arrays typed as
    XGBoost's binary reader reads them, or None (:func:`~._ubjson.typed_arrays`)."""
    try:
        return typed_arrays(doc, text)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError, OverflowError):
        return None  # not the structure it types: the checks name the fault


def _scanned_and_checked(data, json_file=None, as_read=None):
    """The UBJSON document XGBoost writes, read by one compiled scan (its trees flat) and
    checked; None where the scan declines it or a check fails (the Python reader's
    document is then read and checked, and names the fault).  ``json_file``:
    :func:`_is_json` of ``data``, where the caller knows it; ``as_read``: the
    :class:`~modellens.trees.TreesAsRead` that saw it read."""
    if _is_json(data) if json_file is None else json_file:
        return None
    doc = scan_xgboost_ubjson(data, as_read)
    if doc is None:
        return None
    try:
        check_xgboost_model(doc)
    except (UnsafeModelError, ValueError, TypeError, KeyError, IndexError, AttributeError,
            OverflowError):
        return None
    return doc


def _json_bytes(doc) -> bytes:
    """``doc`` written as JSON, with orjson where it is installed and writes it exactly.

    json.dumps spends most of an XGBoost file's load writing its many floats;
    orjson writes the same numbers (shortest round-trip digits) ten times
    faster.  It writes NaN and infinities as null, and refuses integers past
    64 bits and lone surrogates: any 'null' in its output (XGBoost writes
    none; a name holding the word only costs the slow path) or a refusal, and
    json.dumps writes the document.  A UBJSON document's typed arrays (numpy)
    are written as lists of their numbers (float32 values in float32's
    shortest digits, which XGBoost reads back to the same float32).
    """
    try:
        import orjson
    except ImportError:  # optional: modellens[trees] installs it
        return _plain_json(doc)
    try:
        out = orjson.dumps(doc, option=orjson.OPT_SERIALIZE_NUMPY)
    except TypeError:
        return _plain_json(doc)
    return _plain_json(doc) if b"null" in out else out


def _plain_json(doc) -> bytes:
    return json.dumps(doc, default=_as_list).encode()


def _as_list(value):
    tolist = getattr(value, "tolist", None)  # a numpy array of a UBJSON document
    if tolist is None:
        raise TypeError(f"a {type(value).__name__} in the model document")
    return tolist()


def _no_repeats(pairs):
    out = {}
    for key, value in pairs:
        if key in out:  # two readers could disagree on which one counts
            raise ValueError(f"the key {key!r} appears twice")
        out[key] = value
    return out


def _is_json(data: bytes | bytearray) -> bool:
    """Whether XGBoost model bytes are JSON (else UBJSON)."""
    return _JSON_START.match(data) is not None


#: What a JSON object opens with: spaces (those bytes.lstrip strips), a brace, spaces, then a
#: quote or the closing brace (matched in place: stripping a bytearray copies it).
_JSON_START = re.compile(rb'[ \t\n\r\x0b\x0c]*\{[ \t\n\r\x0b\x0c]*["}]')


def _decode_xgboost(data: bytes, name: str):
    """XGBoost's model document from its JSON or UBJSON bytes (keys never repeated).

    UBJSON's typed arrays of numbers come as numpy arrays, the rest as JSON's
    Python values.
    """
    return _read_xgboost(data)[0]


#: An escape XGBoost's JSON reader does not decode as JSON does (it keeps \u as written).
_ODD_ESCAPE = re.compile(rb'\\[^"\\nrt]')


def _read_xgboost(data: bytes, json_file: bool | None = None):
    """``(document, exact)``: the document as :func:`_decode_xgboost` reads it, and whether
    XGBoost's own reader reads ``data`` as that very document (``json_file``:
    :func:`_is_json` of ``data``, where the caller knows it).

    JSON: where orjson read it (strict JSON: no NaN, no integer past 64 bits),
    no key repeated (no key with an escape), and no escape in a value but those
    XGBoost decodes as JSON does (\\" \\\\ \\n \\r \\t; it keeps \\u as written and
    refuses others): every string the same text, every number a literal that
    both read as an integer (no dot or exponent: XGBoost refuses anything else
    where it wants an integer) or a float (XGBoost rounds it to float32, which
    the checks compare with nothing but NaN).  UBJSON: where every value is
    written as :func:`ubjson_bytes` writes it (``Ubjson.canonical``): what
    XGBoost writes and its binary reader reads back.
    """
    if _is_json(data) if json_file is None else json_file:
        doc = _fast_json(data)
        if doc is not None:
            return doc, data[:1] == b"{" and not _ODD_ESCAPE.search(data)
        return json.loads(data, object_pairs_hook=_no_repeats), False
    reader = Ubjson(data)
    doc = reader.document()
    return doc, reader.canonical


#: A JSON text's strings (a key with its colon), brackets and braces.
_JSON_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"[ \t\n\r]*:?|[][{}]')
#: Bytes of numbers, separators and spaces: deleted before the scan for keys (the bulk of
#: an XGBoost file).  No quote, bracket, brace, colon or backslash, nor a byte that can
#: follow a backslash in JSON: the strings, brackets and braces stay where they were,
#: and equal keys stay equal.
_NOT_KEYS = b"0123456789.,-+eE \t\n\r"


def _fast_json(data: bytes):
    """``data`` read by orjson where that is exactly json's reading with no key repeated;
    None otherwise (json's slower reading decides, and names a repeated key).

    orjson reads valid JSON as json does, but keeps a repeated key's last value
    and refuses NaN, integers past 64 bits and lone surrogates (json reads them):
    a refusal leaves the text to json.  In a text orjson accepted, one scan of
    its strings, brackets and braces (numbers deleted first) finds the keys of
    each object.  Keys are compared with those bytes deleted too: two keys equal
    but for them, or a key with an escape, leave the text to json.
    """
    try:
        import orjson
    except ImportError:  # optional: modellens[trees] installs it
        return None
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    keys: list = []  # the keys seen in each open object (None: an array)
    for token in _JSON_TOKENS.findall(data.translate(None, _NOT_KEYS)):
        first = token[0]
        if first == 0x7B:  # {
            keys.append(set())
        elif first == 0x5B:  # [
            keys.append(None)
        elif first in (0x7D, 0x5D):  # } ]
            keys.pop()
        elif token[-1] == 0x3A:  # "key":
            seen = keys[-1]
            if token in seen or b"\\" in token:
                return None
            seen.add(token)
    return doc


def _load_lightgbm(path):
    from .._config import resolve_options
    from ..models import kernel_threads

    try:
        import lightgbm
    except ImportError:
        raise FileError(f"{str(path)!r} looks like a LightGBM model file; install lightgbm to "
                        "read it.") from None
    # LightGBM trusts the text's tree sizes while loading and its node arrays while
    # predicting: the text is checked first, then what LightGBM made of it
    data, text = path.read_bytes(), None
    # the compiled scan reads the trees and their numbers in numba's threads: as many as
    # LightGBM's load reads them on right after (n_jobs does not bound that load, so one
    # thread here would leave its cores idle for the check), more where n_jobs asks
    with kernel_threads(max(resolve_options().threads, _lightgbm_threads(lightgbm))):
        # a plain text is checked on its bytes and, where its tree sizes are proven, they go
        # to LightGBM's loader as they are (no decoding, no encoding back); any other is
        # decoded (it is UTF-8 where the bytes were checked) and, where the scan did not
        # decide, read whole (the scan of its text would decide as that of its bytes did)
        checked = _refused(path, check_lightgbm_file, data)
        if checked is None or not checked.threads:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                raise FileError(f"cannot load the LightGBM model {str(path)!r}: it is not "
                                "UTF-8 text.") from None
            checked = checked or _refused(path, check_lightgbm_text, text)
    try:
        # tree_sizes kept (LightGBM then reads the trees in parallel threads) only where the
        # checks proved it jumps to exactly the checked trees (checked.threads), else dropped
        booster = lightgbm_loaded_booster(data) if text is None else lightgbm.Booster(
            model_str=text if checked.threads else _one_tree_at_a_time(text))
    except Exception as exc:
        raise FileError(f"cannot load the LightGBM model {str(path)!r}: {_one_line(exc)}") \
            from None
    if checked.plain:
        # written as LightGBM reads it line for line, every integer and threshold as both
        # readers read them (LightGBM's own files are): it read the very trees checked
        return booster
    _refused(path, _lightgbm_reads_as_checked, text, checked, booster)
    return booster


def _lightgbm_threads(lightgbm) -> int:
    """The threads LightGBM's load reads a model text's trees on (1 where unknown).

    LightGBM's loader reads the trees in an OpenMP loop of ``OMP_NUM_THREADS()``
    threads: OpenMP's default count (``omp_get_max_threads`` of the runtime its
    library links: ``OMP_NUM_THREADS``, else the cores this process may run on),
    capped by ``LGBM_SetMaxThreads`` where set.  Both are read through LightGBM's
    own library, so it is the count of the very runtime that will load the text.
    """
    import ctypes

    try:
        lib = lightgbm.basic._LIB
        count = int(lib.omp_get_max_threads())
        cap = ctypes.c_int(-1)
        if hasattr(lib, "LGBM_GetMaxThreads") and lib.LGBM_GetMaxThreads(ctypes.byref(cap)) == 0 \
                and cap.value > 0:
            count = min(count, cap.value)
    except (AttributeError, OSError, ValueError):  # a build without OpenMP, another layout
        return 1
    return max(1, count)


def _lightgbm_reads_as_checked(text, checked, booster=None):
    """Check the trees LightGBM reads from ``text``, as it writes them back.

    When they are the trees ``checked`` (its own file, written by another
    version), their checks are not run twice.
    """
    if booster is None:
        import lightgbm

        booster = lightgbm.Booster(model_str=_one_tree_at_a_time(text))
    check_lightgbm_text(lightgbm_saved_text(booster, len(text)), checked=checked)


