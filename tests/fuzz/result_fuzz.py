"""Seeded, structure-aware mutations of result dicts, read back with ``from_dict``.

``base_dicts`` makes small valid results of every public type with
``from_dict`` (effects of each method, 1-D and 2-D, numeric and categorical,
several outputs, and a lone effect of each; attributions with every block;
interactions; importance; interaction pairs; regions; shifts of predictions
and of a metric; a group comparison; LIME width sweeps of one and of two
outputs; a text's deletion curves; attribution summaries of a Dask frame)
and takes their dicts through JSON.  ``mutate`` changes one place
of such a dict, chosen at random among every node of its JSON tree: the
value replaced by another type, a huge or negative number, a non-finite
token, a deep nest, an empty or swapped container; an array's shape
transposed, stretched or made negative, its data cut or lengthened, its
dtype made costly (``"<U400000000"``, a subarray dtype, ``"|V8"``) or of
another kind; a key added to or removed from a dict.

``run`` reads each mutant with its type's ``from_dict`` and sorts the
outcome: ``refused`` (our InvalidParameterError), ``result`` (a result
that then passes ``repr``, ``to_frame`` where it has one, and a JSON round
trip of its ``to_dict``), ``foreign`` (any other exception from
``from_dict``), ``unusable`` (accepted, then failing in that use).  The
caller's dict must be unchanged in every case.

Run ``python tests/fuzz/result_fuzz.py --inputs 20000`` for a long run.
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import random
import sys
import traceback
import warnings
from collections import Counter

import numpy as np
import pandas as pd

import modellens as ml

MARKER = "__modellens__"
COSTLY_DTYPES = ["<U400000000", "(1000000000,)f8", "|V8", "|S5", "<c16", "<f16", "O",
                 "<i1", "<U0", "f8,i4", "<m8[ns]", "<M8[D]", "|b1", "<u8", "bogus", 5, None]
ODD_VALUES = [None, True, 0, -1, 10 ** 30, -10 ** 30, 1.5, "nan", "x", "", [], {}, [[1, 2]],
              {"a": 1}, {MARKER: "nope"}, {MARKER: "float", "value": "inf"},
              {MARKER: "tuple", "items": [1, 2, 3]}, {MARKER: "ndarray"},
              {MARKER: "timestamp", "value": 10 ** 30, "unit": "ns", "tz": "../../etc/passwd"},
              {MARKER: "pandas_dtype", "name": "category"}, "\u202e\u200b<a href=x>"]


def _f(A):
    return A[:, 0] * A[:, 1] + 2 * A[:, 2]


def _f2(A):
    return np.column_stack([_f(A), A[:, 0] - A[:, 2]])


@functools.cache
def base_dicts() -> list:
    """(type name, dict after JSON) of small valid results of every kind."""
    warnings.simplefilter("ignore")
    X = np.random.default_rng(0).uniform(-1, 1, size=(60, 3))
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["c"] = pd.Categorical(np.where(X[:, 2] > 0, "u", "v"))

    def g(D):
        return np.asarray(D["a"] * D["b"] + (D["c"] == "u"), dtype=float)

    results = [
        ("Effects", ml.pdp(_f, X, ["x0", ("x0", "x1")], grid=3, ice=True)),
        ("Effects", ml.ale(_f, X, ["x0", ("x0", "x1")], bins=3)),
        ("Effects", ml.dale(_f, X, ["x1"], bins=3)),
        ("Effects", ml.mplot(_f, X, ["x2"], grid=3)),
        ("Effects", ml.pdp(_f2, X, ["x0"], grid=3)),
        ("Effects", ml.pdp(g, frame, ["c", "a"], grid=3)),
        ("Attributions", ml.shapley(_f, X[:3], background=X[:10])),
        ("Attributions", ml.shapley(_f, X[:3], background=X[:10], algorithm="kernel",
                                    n_samples=40, random_state=0)),
        ("Attributions", ml.shapley(_f2, X[:2], background=X[:10])),
        ("Attributions", ml.lime(_f, X[:2], training_data=X, num_samples=100,
                                 random_state=0)),
        ("Attributions", ml.shapley(g, frame.iloc[:2], background=frame.iloc[:10])),
        ("InteractionPairs", ml.shapley(_f, X[:3], background=X[:10],
                                        interactions=True).interaction_pairs()),
        ("Interactions", ml.interactions(_f, X[:15], sample=None, random_state=0)),
        ("Interactions", ml.interactions(_f2, X[:15], sample=None, random_state=0)),
        ("Importance", ml.importance(_f, X, _f(X), n_repeats=2, random_state=0)),
        ("Regions", ml.regions(lambda A: A[:, 0] * (A[:, 1] > 0), X, "x0",
                               n_permutations=10, random_state=0)),
        *_flat_results(X),
    ]
    return [(name, json.loads(json.dumps(r.to_dict(), allow_nan=False)))
            for name, r in results]


def _words(texts):
    """A text model: "good" raises the score, "dull" lowers it."""
    return np.array([("good" in t.split()) - 0.5 * ("dull" in t.split()) for t in texts])


def _flat_results(X) -> list:
    """(type name, result) of the types whose dicts hold plain fields, and of a lone effect."""
    attr = ml.shapley(_f, X[:12], background=X[:10])
    effects = ml.pdp(_f, X, ["x0", ("x0", "x1")], grid=3)
    return [
        ("Effect", effects["x0"]), ("Effect", effects[("x0", "x1")]),
        ("Shift", ml.shift(_f, X[:30], X[30:] + [0.5, 0, 0], n_pairs=8, random_state=0)),
        ("Shift", ml.shift(_f, X[:30], X[30:], _f(X[:30]), _f(X[30:]) + 1, n_pairs=8,
                           random_state=0)),
        ("GroupComparison", attr.compare_groups(X[:12, 0] > 0, n_boot=10, random_state=0)),
        ("WidthSweep", ml.lime_width_sweep(_f, X[:1], training_data=X, num_samples=40,
                                           random_state=0)),
        ("WidthSweep", ml.lime_width_sweep(_f2, X[:1], training_data=X, num_samples=40,
                                           random_state=0)),
        ("DeletionCurves", ml.deletion_curves(_words, ml.shapley(_words, "a good but dull film"))),
        *_summaries(X),
    ]


def _summaries(X) -> list:
    """(type name, summary) of one and of two outputs: a summary reads a Dask frame."""
    try:
        import dask.dataframe as dd
    except ImportError:  # an install without the test extras: the other types still run
        return []
    columns = ["a", "b", "c"]
    frame = dd.from_pandas(pd.DataFrame(X[:20], columns=columns), npartitions=2)
    background = pd.DataFrame(X[:8], columns=columns)

    def one(D):
        return D["a"].to_numpy() * D["b"].to_numpy()

    def two(D):
        return np.column_stack([one(D), D["c"].to_numpy()])

    return [("AttributionSummary", ml.shapley(model, frame, background=background)
             .summary(sample=3, random_state=0)) for model in (one, two)]


def _nodes(tree, path=()):
    """Every (path, value) of a JSON tree, the root included."""
    out = [(path, tree)]
    if isinstance(tree, dict):
        for k, v in tree.items():
            out.extend(_nodes(v, path + (k,)))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            out.extend(_nodes(v, path + (i,)))
    return out


def _set(tree, path, value):
    if not path:
        return value
    node = tree
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return tree


def _mutated_array(rng, node):
    node = dict(node)
    how = rng.randrange(7)
    shape, data = list(node.get("shape") or []), list(node.get("data") or [])
    if how == 0:
        node["dtype"] = rng.choice(COSTLY_DTYPES)
    elif how == 1 and shape:
        node["shape"] = shape[::-1] if len(shape) > 1 else [shape[0], 1]
        node["data"] = data if len(shape) > 1 else data
    elif how == 2:
        node["data"] = data[: rng.randrange(len(data) + 1)] if data else [1]
    elif how == 3:
        node["shape"] = [-1] + shape[1:] if shape else [-1]
    elif how == 4 and data:
        i = rng.randrange(len(data))
        data[i] = rng.choice(ODD_VALUES)
        node["data"] = data
    elif how == 5:
        node["shape"] = [0] * (len(shape) or 1)
        node["data"] = []
    else:
        node["shape"] = shape + [1]
    return node


def _deep(depth):
    out = 0
    for _ in range(depth):
        out = [out]
    return out


def mutate(rng: random.Random, d: dict) -> dict:
    """One structure-aware mutation of a copy of ``d``."""
    d = json.loads(json.dumps(d))
    nodes = _nodes(d)
    path, node = rng.choice(nodes[1:])
    if isinstance(node, dict) and node.get(MARKER) == "ndarray" and rng.random() < 0.7:
        return _set(d, path, _mutated_array(rng, node))
    how = rng.randrange(6)
    if how == 0:
        return _set(d, path, copy.deepcopy(rng.choice(ODD_VALUES)))
    if how == 1:
        return _set(d, path, _deep(rng.choice([50, 300, 5000])))
    if how == 2 and isinstance(node, dict) and node:
        key = rng.choice(list(node))
        del node[key]
        return d
    if how == 3 and isinstance(node, dict):
        node[rng.choice(["extra_key", MARKER, "left", "split", "0"])] = rng.choice(ODD_VALUES)
        return d
    if how == 4 and isinstance(node, list) and node:
        rng.shuffle(node)
        node.append(copy.deepcopy(node[0]))
        return d
    # another node's value put here (a swapped field)
    _, other = rng.choice(nodes[1:])
    return _set(d, path, json.loads(json.dumps(other)))


def _use(result) -> None:
    repr(result)
    if hasattr(result, "to_frame"):
        result.to_frame()
    json.dumps(result.to_dict(), allow_nan=False)


def _fingerprint(tree) -> list:
    """The tokens of a JSON tree, walked without recursion (mutants nest thousands deep)."""
    out, stack = [], [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            out.append(("dict", len(node)))
            for k, v in node.items():
                out.append(("key", k))
                stack.append(v)
        elif isinstance(node, list):
            out.append(("list", len(node)))
            stack.extend(node)
        else:
            out.append((type(node).__name__, repr(node)))
    return out


def run_one(name: str, d: dict) -> tuple[str, str]:
    """The outcome of one mutant and, for the bad ones, what happened."""
    kept = _fingerprint(d)
    cls = getattr(ml, name)
    try:
        result = cls.from_dict(d)
    except ml.InvalidParameterError:
        outcome, detail = "refused", ""
    except Exception as exc:  # noqa: BLE001 - what we count
        outcome, detail = "foreign", "".join(traceback.format_exception_only(exc))[-300:]
    else:
        try:
            _use(result)
            outcome, detail = "result", ""
        except Exception as exc:  # noqa: BLE001
            outcome, detail = "unusable", "".join(traceback.format_exception_only(exc))[-300:]
    if _fingerprint(d) != kept:
        outcome, detail = "changed", "from_dict changed the caller's dict"
    return outcome, detail


def run(n_inputs: int, seed: int = 0, verbose: bool = False,
        seconds: float | None = None) -> tuple[Counter, list]:
    """Read ``n_inputs`` mutants (fewer when ``seconds`` pass first); the outcome counts."""
    import time

    rng = random.Random(seed)
    bases = base_dicts()
    counts: Counter = Counter()
    bad = []
    warnings.simplefilter("ignore")
    end = None if seconds is None else time.monotonic() + seconds
    for i in range(n_inputs):
        if end is not None and time.monotonic() > end:
            break
        name, d = bases[i % len(bases)]
        mutant = mutate(rng, d)
        outcome, detail = run_one(name, mutant)
        counts[outcome] += 1
        if outcome in ("foreign", "unusable", "changed"):
            bad.append((i, name, outcome, detail))
            if verbose:
                print(i, name, outcome, detail.strip(), file=sys.stderr)
        if verbose and (i + 1) % 5000 == 0:  # a long run says how far it got
            print(f"{i + 1} read: {dict(counts)}", file=sys.stderr, flush=True)
    return counts, bad


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=None, help="stop after this long")
    args = parser.parse_args(argv)
    counts, bad = run(args.inputs, args.seed, verbose=True, seconds=args.seconds)
    print(json.dumps({"inputs": sum(counts.values()), **counts}))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
