"""Nodes of one skops ``__id__`` are compared by one rule: type and value (floats by
``repr``), never Python's ``==`` alone (session 20's review: a silent substitution).

Under ``==``, ``1``, ``1.0`` and ``True`` are equal, and so are ``0`` and ``False``,
``0.0`` and ``-0.0``, and lists and dicts of them element by element.  skops builds
each id once, from the first of its nodes it reads: a file giving two flat nodes of
one id the values ``1`` and ``True`` loads one of them in both places, and the check
compared flat nodes as dicts (``node == head``, ``nodes.count(head)``) and let it pass.
The oracle of every case is :func:`_skops_ids._same` (itself checked against the
digests in ``test_model_file_skops_ids.py``).
"""

import functools
import io
import json
import zipfile
from collections import Counter

import pytest

from modellens.files import FileError, load_model
from modellens.files._skops_ids import _ArrayFiles, _flat_copies, _same

sio = pytest.importorskip("skops.io")
from test_model_file_skops_cost import _rewrite  # noqa: E402  (a schema changed, rewritten)
from test_model_file_skops_ids import _gradient_boosting_file  # noqa: E402

_gradient_boosting_file = functools.lru_cache(maxsize=1)(_gradient_boosting_file)

#: (value in the other copies, value planted in one copy): equal under ``==``, not alike.
PAIRS = {
    "1 / true": (1, True),
    "1 / 1.0": (1, 1.0),
    "0 / false": (0, False),
    "0.0 / -0.0": (0.0, -0.0),
    "[1] / [true]": ([1], [True]),
    '{"a": 1} / {"a": true}': ({"a": 1}, {"a": True}),
    "true / 1.0": (True, 1.0),
    "[0.0] / [-0.0]": ([0.0], [-0.0]),
}


def _in_order(schema):
    """Every dict of the schema, in the order of the file."""
    found, stack = [], [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found.append(node)
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))
    return found


def _flat_group(schema):
    """The id of most flat nodes (no dict or list in them: skops' TypeNodes, JsonNodes)
    and its nodes, in the order of the file."""
    nodes = [n for n in _in_order(schema) if "__id__" in n and
             not any(isinstance(v, (dict, list)) for v in n.values())]
    saved, count = Counter(n["__id__"] for n in nodes).most_common(1)[0]
    assert count > 2
    return saved, [n for n in nodes if n["__id__"] == saved]


@pytest.mark.parametrize("where", ["first", "last"])  # skops' first read, or a copy
@pytest.mark.parametrize("pair", list(PAIRS))
def test_values_equal_under_eq_but_not_alike_are_refused(tmp_path, pair, where):
    data = _gradient_boosting_file()
    usual, odd = PAIRS[pair]
    found = {}

    def plant(value_of):
        def change(schema):
            saved, nodes = _flat_group(schema)
            found["id"] = saved
            for i, node in enumerate(nodes):
                node["planted"] = value_of(i, len(nodes))
        return change

    path = tmp_path / "gb.skops"
    # the same value in every copy: a key skops does not read, and the file loads
    path.write_bytes(_rewrite(data, plant(lambda i, n: usual)))
    load_model(path)
    odd_at = 0 if where == "first" else -1
    path.write_bytes(_rewrite(data, plant(lambda i, n: odd if i == odd_at % n else usual)))
    with pytest.raises(FileError, match=rf"two objects of one id \({found['id']}\)"):
        load_model(path)


def test_a_json_flag_of_1_for_true_is_refused(tmp_path):
    """A JsonNode's own ``is_json``: ``1`` in one copy, ``true`` in the others."""
    found = {}

    def change(schema):
        nodes = [n for n in _in_order(schema) if n.get("is_json") is True]
        saved, _ = Counter(n["__id__"] for n in nodes).most_common(1)[0]
        found["id"] = saved
        [n for n in nodes if n["__id__"] == saved][-1]["is_json"] = 1

    path = tmp_path / "gb.skops"
    path.write_bytes(_rewrite(_gradient_boosting_file(), change))
    with pytest.raises(FileError, match=rf"two objects of one id \({found['id']}\)"):
        load_model(path)


def _copies():
    """(name, head, copy) of flat nodes: what the fast path must tell as :func:`_same`."""
    head = {"__class__": "str", "__module__": "builtins", "__loader__": "JsonNode",
            "content": "0", "is_json": True, "n": 1, "x": 0.5, "z": 0.0, "none": None, "__id__": 7}
    cases = {"a copy": dict(head), "keys in another order": dict(reversed(head.items())),
             "the __id__ true": {**head, "__id__": True}, "the __id__ 7.0": {**head, "__id__": 7.0}}
    for key, value in [("content", 0), ("is_json", 1), ("is_json", 1.0), ("n", True),
                       ("n", 1.0), ("x", "0.5"), ("z", -0.0), ("z", 0), ("z", False), ("none", 0), ("none", "null"),
                       ("content", None), ("n", [1]), ("content", {})]:
        cases[f"{key}: {value!r}"] = {**head, key: value}
    # two values swapped between keys, each equal to the other's under ==
    swap = {**head, "a": 1, "b": True}
    cases["1 and true swapped"] = {**head, "a": True, "b": 1}
    return [(name, swap if "swapped" in name else head, copy) for name, copy in cases.items()]


@pytest.mark.parametrize("name, head, copy", _copies(), ids=[c[0] for c in _copies()])
def test_the_fast_path_for_flat_copies_passes_only_what_same_passes(name, head, copy):
    files = _ArrayFiles(zipfile.ZipFile(io.BytesIO(_gradient_boosting_file())))
    exact = _same(head, copy, files, [10 ** 6])
    for nodes in ([head, copy], [head, dict(head), copy], [head, copy, dict(head)]):
        # the fast path may leave a group to _same (False), never pass one _same refuses
        assert not _flat_copies(head, nodes) or exact
    # the copies skops writes, the same values: passed by the fast path itself
    assert _flat_copies(head, [head] + [dict(head)] * 3)
    assert exact is (name in ("a copy", "keys in another order", "the __id__ true",
                              "the __id__ 7.0"))
    if name in ("a copy", "keys in another order"):
        assert _flat_copies(head, [head, copy])
