"""Seeded mutations of valid model files, run through the loader and a predict step.

``make_inputs`` writes valid files of every format ``modellens report`` loads
without ``--trust-model-file`` (skops files of a decision tree, a random
forest, HistGradientBoosting with a categorical feature and a Pipeline;
XGBoost ``.json`` and ``.ubj``, one with a categorical feature; LightGBM
``.txt``, one with a categorical feature) and mutated copies of them: child,
feature, category and size fields set to values out of range or to a node's
own index, arrays truncated or lengthened, elements swapped (cycles, shared
subtrees), values of the wrong type, random bytes flipped; and structure-aware
files (``structural``): trees that are chains of 50 to 20,000 splits, UBJSON
documents with typed containers of elements that cost no bytes or counts past
their end.  The child runs under a 4 GiB address-space cap (``CHILD_MEMORY``):
a memory blow-up is a MemoryError, counted.

``run_inputs`` runs them in a child process, one after another, with a
watchdog per input: the child prints when it starts an input and what came of
it; when it dies (a crash) or stays silent past the timeout (a hang), the
parent records that input and starts a new child at the next one.  Each
input ends as ``refused`` (a clean FileError), ``loaded`` (loaded, predicted,
and, for a tree model, its parsed trees give the model's own raw output),
``loaded-disagree`` (they do not), ``loaded-refused`` (loaded and predicted;
the tree parser refused it), ``loaded-model-error`` (loaded; the model's own
prediction fails, and the library's call of it, ``ml.predict``, says so with
its ``ModelError``), ``loaded-error`` (a Python exception other than the
library's escaped after a load: a fault), ``unclean`` (the loader raised something other than FileError),
``crash``, ``hang``; ``changed`` counts inputs whose bytes changed.

Run ``python tests/fuzz/model_fuzz.py --seconds 300`` for a longer run.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import select
import struct
import subprocess
import sys
import warnings
import time
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()


# ------------------------------------------------------------------ valid seeds
def _frame(n=200, seed=0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                      "c": rng.integers(0, 6, n).astype(float)})
    y = X.a - 2 * X.b + (X.c == 2) + rng.normal(scale=0.1, size=n)
    return X, y


def make_seeds(folder: Path) -> list[dict]:
    """Valid model files in ``folder``: dicts of path, format and the data they read."""
    import pandas as pd
    import skops.io as sio
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler
    from sklearn.tree import DecisionTreeRegressor

    folder.mkdir(parents=True, exist_ok=True)
    X, y = _frame()
    X.to_csv(folder / "numeric.csv", index=False)
    Xt = X.assign(c=X.c.map(lambda v: f"level{int(v)}"))
    Xt.to_csv(folder / "text.csv", index=False)
    seeds = []

    def skops(name, model, data="numeric.csv", fit=X):
        model.fit(fit, y)
        sio.dump(model, folder / name)
        seeds.append({"path": str(folder / name), "format": "skops", "data": data})

    skops("tree.skops", DecisionTreeRegressor(max_depth=5, random_state=0))
    skops("forest.skops", RandomForestRegressor(n_estimators=4, max_depth=4, random_state=0))
    skops("hgb.skops", HistGradientBoostingRegressor(max_iter=6, max_depth=3,
                                                     categorical_features=[2]))
    pipe = make_pipeline(ColumnTransformer([
        ("num", make_pipeline(SimpleImputer(), StandardScaler()), ["a", "b"]),
        ("cat", OneHotEncoder(handle_unknown="ignore"), ["c"])]), Ridge())
    skops("pipeline.skops", pipe, "text.csv", Xt)
    try:
        import xgboost as xgb
    except ImportError:
        xgb = None
    if xgb is not None:
        model = xgb.XGBRegressor(n_estimators=4, max_depth=3).fit(X, y)
        model.save_model(folder / "xgb.json")
        model.get_booster().save_model(folder / "xgb.ubj")
        seeds += [{"path": str(folder / "xgb.json"), "format": "json", "data": "numeric.csv"},
                  {"path": str(folder / "xgb.ubj"), "format": "ubj", "data": "numeric.csv"}]
        Xc = X.assign(c=pd.Categorical(X.c.astype(int)))
        model = xgb.XGBRegressor(n_estimators=4, max_depth=3, enable_categorical=True,
                                 max_cat_to_onehot=1).fit(Xc, y)
        model.save_model(folder / "xgb_cat.json")
        seeds.append({"path": str(folder / "xgb_cat.json"), "format": "json",
                      "data": "numeric.csv", "category": ["c"]})
    try:
        import lightgbm as lgb
    except ImportError:
        lgb = None
    if lgb is not None:
        for name, cats in (("lgb.txt", "auto"), ("lgb_cat.txt", [2])):
            model = lgb.LGBMRegressor(n_estimators=4, num_leaves=7, min_child_samples=5,
                                      verbose=-1).fit(X.to_numpy(), y, categorical_feature=cats)
            model.booster_.save_model(folder / name)
            seeds.append({"path": str(folder / name), "format": "txt", "data": "numeric.csv"})
    return seeds


# ------------------------------------------------------------------ mutations
def _odd_values(rng, n, i):
    """Values a tampered index or size might hold."""
    return [-1, -2, -(2 ** 31), 2 ** 31 - 1, 2 ** 31, 2 ** 32 + 1, 2 ** 62, n, n + 1, 0, i,
            int(rng.integers(0, max(n, 1))), 10 ** 9, 1e300, -1e300, float("nan"),
            float("inf"), 0.5, "x", None, [], {}]


def _leaves(doc, path=()):
    """(path, value) of every list and scalar in a JSON document."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(doc, list):
        yield path, doc
        if doc and isinstance(doc[0], (dict, list)):
            for k, v in enumerate(doc):
                yield from _leaves(v, path + (k,))
    else:
        yield path, doc


def _set(doc, path, value):
    for k in path[:-1]:
        doc = doc[k]
    doc[path[-1]] = value


def _mutate_list(values, rng):
    values = list(values)
    n = len(values)
    op = rng.integers(0, 6)
    if op == 0 and n:  # one element to an odd value
        i = int(rng.integers(0, n))
        choices = _odd_values(rng, n, i)
        values[i] = choices[int(rng.integers(0, len(choices)))]
    elif op == 1:  # truncated
        values = values[:int(rng.integers(0, n + 1))]
    elif op == 2:  # lengthened
        values = values + values[:int(rng.integers(1, 4))] if n else [0]
    elif op == 3 and n > 1:  # two swapped: children swapped across nodes make cycles
        i, j = rng.choice(n, 2, replace=False)
        values[i], values[j] = values[j], values[i]
    elif op == 4 and n:  # an element to a smaller index (often an ancestor: a cycle)
        i = int(rng.integers(0, n))
        values[i] = int(rng.integers(0, i + 1))
    else:  # a huge count of one value (of a number: copies of a tree would only be slow)
        scalar = n and not isinstance(values[0], (dict, list))
        values = [values[0] if n else 0] * int(rng.choice([0, 1, 10 ** 5 if scalar else 3]))
    return values


def mutate_json(doc, rng, rounds=None):
    """``doc`` with one to three of its arrays or values mutated (in place)."""
    for _ in range(rounds or int(rng.integers(1, 4))):
        leaves = list(_leaves(doc))  # afresh: a round may replace an array by a value
        path, value = leaves[int(rng.integers(0, len(leaves)))]
        if not path:
            continue
        if isinstance(value, list):
            _set(doc, path, _mutate_list(value, rng))
        else:
            n = value if isinstance(value, int) else 10
            choices = _odd_values(rng, n, 0) + [str(v) for v in (-1, 0, 10 ** 9, "nan")]
            _set(doc, path, choices[int(rng.integers(0, len(choices)))])
    return doc


def ubjson(value) -> bytes:
    """``value`` in the UBJSON XGBoost reads (the mutated documents of ``.ubj`` inputs)."""
    if value is None:
        return b"Z"
    if value is True or value is False:
        return b"T" if value else b"F"
    if isinstance(value, int):
        if -(2 ** 31) <= value < 2 ** 31:
            return b"l" + struct.pack(">i", value)
        return b"L" + struct.pack(">q", max(min(value, 2 ** 63 - 1), -(2 ** 63)))
    if isinstance(value, float):
        return b"D" + struct.pack(">d", value)
    if isinstance(value, str):
        raw = value.encode()
        return b"S" + b"L" + struct.pack(">q", len(raw)) + raw
    if isinstance(value, list):
        if value and all(isinstance(v, float) for v in value):
            return b"[$d#L" + struct.pack(">q", len(value)) + np.asarray(
                value, ">f4").tobytes()
        return b"[" + b"".join(ubjson(v) for v in value) + b"]"
    if isinstance(value, dict):
        out = [b"{"]
        for k, v in value.items():
            raw = str(k).encode()
            out.append(b"L" + struct.pack(">q", len(raw)) + raw + ubjson(v))
        return b"".join(out) + b"}"
    raise TypeError(type(value))


def flip_bytes(data: bytes, rng) -> bytes:
    data = bytearray(data)
    op = rng.integers(0, 3)
    if op == 0 or not data:
        for _ in range(int(rng.integers(1, 9))):
            if data:
                data[int(rng.integers(0, len(data)))] = int(rng.integers(0, 256))
    elif op == 1:
        del data[int(rng.integers(0, len(data))):]
    else:
        i = int(rng.integers(0, len(data)))
        data[i:i] = bytes(rng.integers(0, 256, int(rng.integers(1, 16))).astype(np.uint8))
    return bytes(data)


def mutate_lightgbm(text: str, rng) -> str:
    lines = text.split("\n")
    tree_lines = [i for i, line in enumerate(lines) if "=" in line and not line.startswith(
        ("Tree=", "feature_names", "version", "objective"))]
    for _ in range(int(rng.integers(1, 4))):
        i = tree_lines[int(rng.integers(0, len(tree_lines)))]
        key, _, value = lines[i].partition("=")
        op = rng.integers(0, 4)
        if op == 0:
            new = _mutate_list(value.split(" ") if value else [], rng)
            lines[i] = f"{key}=" + " ".join(_text(v) for v in new)
        elif op == 1:
            lines[i] = f"{key}={_text(rng.choice(np.array(_odd_values(rng, 8, 0), object)))}"
        elif op == 2:
            lines.insert(i, lines[i])  # a repeated key
        else:
            del lines[i]
            tree_lines = [j - (j > i) for j in tree_lines if j != i]
    if rng.random() < 0.7:  # most files drop tree_sizes, so the trees themselves are read
        lines = [line for line in lines if not line.startswith("tree_sizes=")]
    return "\n".join(lines)


def _text(v) -> str:
    if isinstance(v, float) and v != v:
        return "nan"
    if isinstance(v, (list, dict)) or v is None:
        return "" if v is None else "[]"
    return str(v)


def mutate_skops(data: bytes, rng) -> bytes:
    """A skops zip with one array (a node array, usually) or one schema value mutated."""
    src = zipfile.ZipFile(io.BytesIO(data))
    names = src.namelist()
    arrays = [n for n in names if n.endswith(".npy")]
    out = io.BytesIO()
    target = None
    if arrays and rng.random() < 0.75:
        nodes = [n for n in arrays if np.load(io.BytesIO(src.read(n))).dtype.names]
        pool = nodes if nodes and rng.random() < 0.7 else arrays
        target = pool[int(rng.integers(0, len(pool)))]
    with zipfile.ZipFile(out, "w") as dst:
        for name in names:
            raw = src.read(name)
            if name == target:
                raw = _mutate_npy(raw, rng)
            elif name == "schema.json" and target is None:
                raw = json.dumps(_mutate_schema(json.loads(raw), rng)).encode()
            dst.writestr(name, raw)
    return out.getvalue()


def _mutate_npy(raw: bytes, rng) -> bytes:
    arr = np.load(io.BytesIO(raw), allow_pickle=False).copy()
    if arr.size and rng.random() < 0.85:
        flat = arr.reshape(-1)
        i = int(rng.integers(0, flat.size))
        if arr.dtype.names:
            field = arr.dtype.names[int(rng.integers(0, len(arr.dtype.names)))]
            column = flat[field]
        else:
            column = flat
        kind = column.dtype.kind
        if kind == "f":
            choices = [np.nan, np.inf, -np.inf, 1e300, -1.0, 0.0, float(i)]
        else:
            info = np.iinfo(column.dtype) if kind in "iu" else None
            choices = [-1, 0, i, i + 1, flat.size, flat.size + 1, 255, 256, 2 ** 20]
            if info is not None:
                choices += [int(info.max), int(info.min)]
                choices = [c for c in choices if info.min <= c <= info.max]
        if kind in "iufb":
            column[i] = choices[int(rng.integers(0, len(choices)))]
    else:
        arr = arr.reshape(-1)[:int(rng.integers(0, arr.size + 1))] if arr.ndim else arr
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def _mutate_schema(schema, rng):
    nodes = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("__loader__") == "JsonNode":
                nodes.append(node)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    if nodes:
        node = nodes[int(rng.integers(0, len(nodes)))]
        node["content"] = str(rng.choice(["0", "-1", "1000000000", "1e308", "null", '"x"',
                                          "[]", "2", "3.5"]))
    return schema


# ------------------------------------------------------------ structure-aware inputs
# Files that are valid in every field and cost more than they weigh (issue 40): a
# tree that is a long chain of splits (depth), typed UBJSON containers of elements
# that cost no bytes, counts beyond the bytes.

def xgb_chain(doc: dict, m: int, tree: int = 0) -> dict:
    """``doc`` (an XGBoost model document) with tree ``tree`` a chain of ``m`` splits on x0."""
    t = doc["learner"]["gradient_booster"]["model"]["trees"][tree]
    n = 2 * m + 1  # split j at 2j: its left child a leaf (2j+1), its right the next split
    left, right, parents = [-1] * n, [-1] * n, [2147483647] * n
    for j in range(m):
        left[2 * j], right[2 * j] = 2 * j + 1, 2 * j + 2
        parents[2 * j + 1] = parents[2 * j + 2] = 2 * j
    t.update({"left_children": left, "right_children": right, "parents": parents,
              "split_indices": [0] * n,
              "split_conditions": [(j // 2 + 1) / (m + 1) if j % 2 == 0 and j < 2 * m
                                   else 0.01 for j in range(n)],
              "default_left": [0] * n, "split_type": [0] * n, "base_weights": [0.0] * n,
              "loss_changes": [0.0] * n, "sum_hessian": [float(n - j) for j in range(n)]})
    for key in ("categories", "categories_nodes", "categories_segments", "categories_sizes"):
        if key in t:
            t[key] = []
    t["tree_param"]["num_nodes"] = str(n)
    return doc


def lgb_chain(text: str, m: int, tree: int = 0) -> str:
    """A LightGBM model text with tree ``tree`` a chain of ``m`` numeric splits on feature 0."""
    leaves = m + 1
    block = {
        "num_leaves": [leaves], "num_cat": [0], "split_feature": [0] * m,
        "split_gain": [1.0] * m, "threshold": [(j + 1) / (m + 1) for j in range(m)],
        "decision_type": [2] * m, "left_child": [~j for j in range(m)],
        "right_child": [j + 1 for j in range(m - 1)] + [~m],
        "leaf_value": [j / leaves for j in range(leaves)], "leaf_weight": [1] * leaves,
        "leaf_count": [1] * leaves, "internal_value": [0.5] * m,
        "internal_weight": [leaves - j for j in range(m)],
        "internal_count": [leaves - j for j in range(m)]}
    out, current = [], None
    for line in text.split("\n"):
        if line.startswith("tree_sizes="):
            continue
        if line.startswith("Tree="):
            current = int(line.split("=")[1])
        key = line.split("=", 1)[0]
        if current == tree and key in block:
            out.append(f"{key}=" + " ".join(map(str, block[key])))
        elif current == tree and key in ("cat_boundaries", "cat_threshold"):
            continue
        else:
            out.append(line)
    return "\n".join(out)


def free_ubjson(data: bytes, rng) -> bytes:
    """A UBJSON document with a key whose value costs no bytes per element, or a count past its end."""
    kind = rng.choice([b"Z", b"T", b"F", b"[", b"{", b"C", b"N"])
    count = int(rng.choice([10, 10 ** 4, 10 ** 6, 2 ** 31 - 1]))
    inner = b"[$" + kind + b"#l" + struct.pack(">i", count)
    if rng.random() < 0.5:
        inner = b"[#l" + struct.pack(">i", 4000) + inner * 4000
    if rng.random() < 0.3:  # a typed number array longer than the bytes left
        inner = b"[$d#l" + struct.pack(">i", count) + b"\0" * 8
    body = data.lstrip()
    return b"{U\x04evil" + inner + body[1:]


def _ubj_doc(data: bytes):
    """A ``.ubj`` seed's document, its typed arrays (numpy, as the reader gives them) as lists."""
    from modellens.files._models import _decode_xgboost

    return json.loads(json.dumps(_decode_xgboost(data, "seed"), default=lambda a: a.tolist()))


def structural(data: bytes, fmt: str, rng) -> bytes | None:
    """A structure-aware input of ``fmt`` made from the seed ``data``, or None (no such kind)."""
    depth = int(rng.choice([50, 900, 1001, 1500, 20_000]))
    if fmt == "json":
        return json.dumps(xgb_chain(json.loads(data), depth)).encode()
    if fmt == "ubj":
        if rng.random() < 0.5:
            return free_ubjson(data, rng)
        return ubjson(xgb_chain(_ubj_doc(data), depth))
    if fmt == "txt":
        return lgb_chain(data.decode(), depth).encode()
    return None


#: Bytes a file is read in at a time (``files._read.READ_PART``), drawn for each input.
READ_PARTS = (61, 1000, 4096, 1 << 18)


def make_inputs(folder: Path, n: int, seed: int = 0) -> list[dict]:
    """``n`` mutated inputs (and the valid seeds) in ``folder``."""
    folder = Path(folder)
    seeds = make_seeds(folder)
    rng = np.random.default_rng(seed)
    # the parts an XGBoost file is read in (its trees checked as each arrives): drawn
    # apart, the inputs those before them
    parts = np.random.default_rng(seed + 1)
    inputs = [dict(s, seed=Path(s["path"]).name) for s in seeds]
    originals = {s["path"]: Path(s["path"]).read_bytes() for s in seeds}
    for k in range(n):
        s = seeds[k % len(seeds)]
        data = originals[s["path"]]
        fmt = s["format"]
        roll = rng.random()
        shaped = structural(data, fmt, rng) if roll < 0.15 else None
        if shaped is not None:
            new = shaped
        elif roll < 0.3:
            new = flip_bytes(data, rng)
        elif fmt == "json":
            new = json.dumps(mutate_json(json.loads(data), rng)).encode()
        elif fmt == "ubj":
            new = ubjson(mutate_json(_ubj_doc(data), rng))
        elif fmt == "txt":
            new = mutate_lightgbm(data.decode(), rng).encode()
        else:
            new = mutate_skops(data, rng)
        path = folder / f"m{k:05d}_{Path(s['path']).name}"
        path.write_bytes(new)
        inputs.append(dict(s, path=str(path), seed=Path(s["path"]).name,
                           part=int(parts.choice(READ_PARTS))))
    return inputs


# ------------------------------------------------------------------ one input
def _raw_output(model, X):
    """The model's own raw output (the sum of its leaves and base), or None."""
    name = type(model).__name__
    if name in ("DecisionTreeRegressor", "RandomForestRegressor"):
        return model.predict(X)
    if name == "HistGradientBoostingRegressor":
        return model._raw_predict(X)[:, 0]
    if name == "XGBRegressor":
        return model.predict(X, output_margin=True)
    if name == "Booster" and type(model).__module__.startswith("lightgbm"):
        return model.predict(X, raw_score=True)
    return None


def run_one(spec: dict, frames: dict) -> str:
    from modellens._validation import InvalidParameterError
    from modellens.trees import tree_ensemble
    from modellens.files import FileError, load_model

    from modellens.files import _read

    path = Path(spec["path"])
    X = frames[(spec["data"], tuple(spec.get("category", ())))]
    whole = _read.READ_PART
    _read.READ_PART = spec.get("part", whole)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = load_model(path)
    except FileError:
        return "refused"
    except Exception as exc:
        return f"unclean:{type(exc).__name__}"
    finally:
        _read.READ_PART = whole
    try:
        Xin = X.to_numpy() if type(model).__module__.startswith("lightgbm") else X
        raw = _raw_output(model, Xin)
        if raw is None:
            model.predict(X)
    except Exception:  # noqa: BLE001 - the model's own error: what does the library say?
        return _through_the_library(model, Xin)
    try:
        ens = tree_ensemble(model)
    except InvalidParameterError:
        return "loaded-refused" if raw is not None else "loaded"
    except Exception as exc:
        return f"loaded-error:{type(exc).__name__}"
    try:
        mine = ens.predict_raw(ens.encode(X.assign(**{c: X[c].cat.codes.astype(float)
                                                      for c in spec.get("category", ())})
                                          .to_numpy()))[:, 0]
    except Exception as exc:
        return f"loaded-error:{type(exc).__name__}"
    if raw is not None and not np.allclose(mine, np.asarray(raw, np.float64), rtol=1e-5,
                                           atol=1e-5, equal_nan=True):
        return "loaded-disagree"
    return "loaded"


def _through_the_library(model, X) -> str:
    """A loaded model that fails in its own ``predict``, called as every method calls it.

    ``loaded-model-error``: the library's :class:`~modellens.ModelError` (one line
    saying the model raised what on which rows); ``loaded-error:<type>``: any
    other exception escaped the library (a fault); ``loaded-predicts``: the
    library's call succeeded where the model's own did not.
    """
    import modellens as ml

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ml.predict(model, X, progress=False)
    except ml.ModelError:
        return "loaded-model-error"
    except Exception as exc:  # noqa: BLE001 - what we count
        return f"loaded-error:{type(exc).__name__}"
    return "loaded-predicts"


def _frames(inputs, folder) -> dict:
    import pandas as pd

    out = {}
    for spec in inputs:
        key = (spec["data"], tuple(spec.get("category", ())))
        if key not in out:
            X = pd.read_csv(Path(folder) / spec["data"])
            for c in key[1]:
                X[c] = pd.Categorical(X[c].astype(int))
            out[key] = X
    return out


#: The address space of the child that runs the inputs: past it an input is a memory
#: blow-up (a MemoryError, counted as such), not the machine's memory.
CHILD_MEMORY = 4 * 2 ** 30


def _child(listing: str, start: int):
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY, CHILD_MEMORY))
    inputs = json.loads(Path(listing).read_text())
    frames = _frames(inputs, Path(listing).parent)
    for i in range(start, len(inputs)):
        print(f"B {i}", flush=True)
        print(f"E {i} {run_one(inputs[i], frames)}", flush=True)


# ------------------------------------------------------------------ the runner
class _Lines:
    """Lines from a pipe, each awaited at most ``limit`` seconds (None: none came, "": EOF)."""

    def __init__(self, fd: int):
        self.fd, self.buf = fd, b""

    def next(self, limit: float):
        end = time.monotonic() + limit
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return ""
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode(errors="replace") or " "


def _child_env() -> dict:
    """The children's environment: this modellens first on the path, one OpenMP thread, and
    this process's numba cache (``NUMBA_CACHE_DIR`` when set, else the package's
    ``__pycache__``), so that a kernel one child compiled is loaded by the next."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(__import__("modellens").__file__).resolve().parents[1]),
         os.environ.get("PYTHONPATH", "")]), OMP_NUM_THREADS="1")


def warm_kernels(inputs: list[dict], folder: Path, *, limit: float = 900.0) -> dict:
    """Run the clean inputs (the valid seeds among ``inputs``) once in a child with no
    watchdog but ``limit``, before the timed inputs: ``{"seconds", "outcomes"}``.

    A fresh install compiles the numba kernels of the file checks, the tree reader and
    the traversal on the first input that needs each (30-40 s on a loaded machine): a
    timed child would count that input as a hang.  The children share numba's on-disk
    cache (:func:`_child_env`), so the kernels the seeds compiled here load in each
    timed child.  ``outcomes``: the seeds' (all ``loaded`` where nothing is wrong).
    """
    folder = Path(folder)
    clean = [s for s in inputs if Path(s["path"]).name == s.get("seed")]
    listing = folder / "warm.json"
    listing.write_text(json.dumps(clean))
    t0 = time.monotonic()
    try:
        done = subprocess.run([sys.executable, str(HERE), "--child", str(listing), "0"],
                              capture_output=True, text=True, env=_child_env(),
                              timeout=limit).stdout
    except subprocess.TimeoutExpired as exc:
        done = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else \
            (exc.stdout or "")
    outcomes = {}
    for line in done.splitlines():
        tag, i, *rest = line.split() + [""]
        if tag == "E":
            outcomes[Path(clean[int(i)]["path"]).name] = rest[0]
    return {"seconds": time.monotonic() - t0, "outcomes": outcomes}


def run_inputs(inputs: list[dict], folder: Path, *, timeout: float = 30.0,
               first_timeout: float = 120.0, deadline: float | None = None) -> dict:
    """Run ``inputs`` in child processes with a watchdog each; the outcome counts.

    ``result["hangs"]``: each hung input's path, how long it ran before it was killed and
    the watchdog's limit then (``first_timeout`` for a child's first input of a format)."""
    folder = Path(folder)
    listing = folder / "inputs.json"
    listing.write_text(json.dumps(inputs))
    digests = [hashlib.sha256(Path(s["path"]).read_bytes()).hexdigest() for s in inputs]
    outcome: list[str | None] = [None] * len(inputs)
    hangs: dict = {}
    env = _child_env()
    start = 0
    while start < len(inputs) and (deadline is None or time.monotonic() < deadline):
        child = subprocess.Popen([sys.executable, str(HERE), "--child", str(listing),
                                  str(start)], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, env=env)
        lines = _Lines(child.stdout.fileno())  # type: ignore[union-attr]
        current, warm, began = None, set(), time.monotonic()
        while True:
            # a child's first input of a format imports its library and compiles the
            # scans (tens of seconds on a loaded machine): not a hang of that input
            fresh = current is None or inputs[current]["format"] not in warm
            limit = first_timeout if fresh else timeout
            line = lines.next(limit)
            if line is None or line == "":  # silent past the watchdog, or dead
                if line is None:
                    child.kill()
                code = child.wait()
                if current is None:  # between inputs: nothing to blame
                    start = len(inputs) if line == "" else start
                    if line is None:
                        start = next((k for k, o in enumerate(outcome) if o is None),
                                     len(inputs))
                    break
                outcome[current] = "hang" if line is None else (
                    "crash" if code != 0 else "lost")
                if line is None:  # (seconds rounded only when printed: 0.0 of a 1 ms watchdog)
                    hangs[inputs[current]["path"]] = {
                        "seconds": time.monotonic() - began, "limit": limit}
                start = current + 1
                break
            tag, i, *rest = line.split() + [""]
            if tag == "B":
                current, began = int(i), time.monotonic()
            elif tag == "E":
                warm.add(inputs[int(i)]["format"])
                outcome[int(i)], current = rest[0], None
                if deadline is not None and time.monotonic() > deadline:
                    child.kill()
                    child.wait()
                    start = len(inputs)
                    break
        if child.poll() is None:
            child.kill()
            child.wait()
    tried = [k for k, o in enumerate(outcome) if o is not None]
    counts = Counter(outcome[k] for k in tried)
    changed = sum(hashlib.sha256(Path(inputs[k]["path"]).read_bytes()).hexdigest()
                  != digests[k] for k in tried)
    by_seed: dict = {}
    for k in tried:
        by_seed.setdefault(inputs[k]["seed"], Counter())[outcome[k]] += 1
    return {"tried": len(tried), "counts": dict(counts), "changed": changed, "hangs": hangs,
            "by_seed": {k: dict(v) for k, v in by_seed.items()},
            "examples": {o: [inputs[k]["path"] for k in tried if outcome[k] == o][:5]
                         for o in set(outcome[k] for k in tried)
                         if o in ("crash", "hang", "loaded-disagree", "loaded-predicts") or
                         o.startswith(("unclean", "loaded-error"))}}


def summary(result: dict) -> str:
    c = result["counts"]
    loaded = sum(v for k, v in c.items() if k.startswith("loaded"))
    unclean = sum(v for k, v in c.items() if k.startswith("unclean"))
    return (f"inputs tried {result['tried']}, clean refusals {c.get('refused', 0)}, "
            f"loaded fine {loaded} (of which the tree parser refused "
            f"{c.get('loaded-refused', 0)}, the model's own error after loading, said by "
            f"the library's ModelError {c.get('loaded-model-error', 0)}, a foreign error "
            f"after loading {sum(v for k, v in c.items() if k.startswith('loaded-error'))}, "
            f"parsed trees disagreeing with the model "
            f"{c.get('loaded-disagree', 0)}), unclean loader errors {unclean}, "
            f"crashes {c.get('crash', 0)}, hangs {c.get('hang', 0)}, "
            f"memory blow-ups {sum(v for k, v in c.items() if k.endswith('MemoryError'))}, "
            f"inputs changed {result['changed']}{_other(c)}")


#: Outcomes the summary names; any other (``lost``: a child that exited 0 in the middle of
#: an input, ``loaded-predicts``) is listed after them, never dropped from the line.
_NAMED = ("refused", "loaded", "loaded-refused", "loaded-model-error", "loaded-disagree",
          "crash", "hang")


def _other(counts: dict) -> str:
    other = {k: v for k, v in counts.items() if k not in _NAMED and
             not k.startswith(("loaded-error", "unclean"))}
    return f", other outcomes {other}" if other else ""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--inputs", type=int, default=2000, help="mutations to make")
    parser.add_argument("--seconds", type=float, default=None, help="stop after this long")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--folder", type=Path, default=None)
    parser.add_argument("--no-warm", dest="warm", action="store_false",
                        help="skip running the clean inputs once before the timed ones")
    args = parser.parse_args(argv)
    if args.child:
        return _child(args.child[0], int(args.child[1]))
    import tempfile

    folder = args.folder or Path(tempfile.mkdtemp(prefix="modellens-fuzz-"))
    t0 = time.monotonic()
    inputs = make_inputs(folder, args.inputs, seed=args.seed)
    made = time.monotonic() - t0
    # (not timed: the kernels' first compile under load is no input's hang)
    warmed = warm_kernels(inputs, folder) if args.warm else {"seconds": 0.0, "outcomes": {}}
    deadline = None if args.seconds is None else t0 + args.seconds + warmed["seconds"]
    result = run_inputs(inputs, folder, deadline=deadline)
    print(summary(result))
    print(f"made {len(inputs)} inputs in {made:.0f} s, warmed the kernels on "
          f"{len(warmed['outcomes'])} clean inputs in {warmed['seconds']:.0f} s, ran "
          f"{result['tried']} in {time.monotonic() - t0 - made - warmed['seconds']:.0f} s; "
          "by seed file:")
    for seed, counts in sorted(result["by_seed"].items()):
        print(f"  {seed}: {counts}")
    for outcome, paths in result["examples"].items():
        print(f"  {outcome}: {' '.join(paths)}")
    for path, hung in result["hangs"].items():
        print(f"  hang: {path} killed after {hung['seconds']:.1f} s "
              f"(watchdog {hung['limit']:g} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
