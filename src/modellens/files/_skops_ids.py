"""The ids of a skops file's schema: nodes of one ``__id__`` that skops builds once.

skops builds each ``__id__`` once, from the first of its nodes it reads, so a
file in which two nodes of one id hold other values loads other objects than
it says (:func:`check_skops_ids`); the same walk refuses a ``CachedNode`` and
tells whether a booster needs its own walk.
"""

from __future__ import annotations

import functools
import json

from ._errors import FileError

__all__ = ["check_skops_ids", "skops_private"]


@functools.lru_cache(maxsize=1)
def skops_private():
    """skops' private ``get_tree`` and ``read_schema``, or None where this skops version has
    not these functions or takes other arguments (asked once: ``inspect.signature`` costs
    more than a small file's load)."""
    import inspect

    try:
        from skops.io._audit import get_tree
        from skops.io._utils import read_schema
    except ImportError:  # pragma: no cover - another skops version
        return None
    # private functions: another skops may keep the names with other arguments, which
    # would refuse every file rather than fall back
    if list(inspect.signature(get_tree).parameters)[1:] != ["load_context", "trusted"] or \
            len(inspect.signature(read_schema).parameters) != 1:  # pragma: no cover
        return None
    return get_tree, read_schema


def check_skops_ids(schema, archive) -> bool:
    """Refuse a skops schema in which two nodes of one ``__id__`` would build other objects,
    or that holds a ``CachedNode``; whether it names a ``Booster``.

    skops writes the state of an object at each place it occurs, under the object's
    ``id``, and builds each ``__id__`` once, from the first of its nodes it reads: the
    others are never read (a dict of a known ``__id__`` is not read at all, whatever
    else it holds, and ``1``, ``1.0`` and ``true`` are one key of skops' memo, as of
    the dict here).  Small ints share one ``id`` in CPython, so a change to one
    of them (``verbose``) would reach every other place of that value (a column index of
    HistGradientBoosting's preprocessor: the model then reads other columns than its
    trees say).  Two nodes of one id must hold the same values: they may differ only in
    the ids of the temporaries skops made while saving (a shape, a state dict) and in
    the names of their array files, whose bytes must match.  Only nodes of a repeated
    id are compared: a flat node (most: a JsonNode of None, 0, "auto") as a dict, the
    others by digest, each node digested once, from its children's digests (so a
    schema costs at most its size, however nested); nodes whose digests differ are
    compared with their array files' bytes.  A ``CachedNode`` (a reference to a node
    read elsewhere) is refused: skops 0.16 never writes one, and these checks do not
    follow it.
    """
    by_id: dict = {}
    booster = False
    stack: list = [schema]
    pop, push = stack.pop, stack.extend
    while stack:  # every node of an id (a cheap walk: most ids occur once)
        node = pop()
        kind = type(node)
        if kind is dict:
            saved = node.get("__id__")
            if saved is not None and type(saved) not in (dict, list):  # a memo key
                by_id.setdefault(saved, []).append(node)
            if node.get("__loader__") == "CachedNode":
                raise FileError(
                    f"it holds a skops CachedNode (id {str(saved)[:40]}, said to be "
                    f"{str(node.get('__module__'))[:80]}.{str(node.get('__class__'))[:80]}): "
                    "a reference to an object stored elsewhere in the file, which skops "
                    "never writes for the models modellens loads and its checks do not "
                    "follow (the file was not written by skops.io.dump?)")
            booster = booster or node.get("__class__") == "Booster"
            push(node.values())
        elif kind is list:
            push(node)
    digests: dict[int, bytes] = {}  # id() of a node -> its digest
    for saved, nodes in by_id.items():
        if len(nodes) < 2:
            continue
        head = nodes[0]
        flat = not any(type(v) in (dict, list) for v in head.values())
        for node in nodes[1:]:
            # (ids equal as skops' memo keys: a flat node compared whole, as a dict)
            if flat and node == head:
                continue
            if _digest(node, digests) != _digest(head, digests) and \
                    not _same_values(head, node, archive):
                raise FileError(
                    f"two objects of one id ({str(saved)[:40]}) hold other values: skops "
                    "would build both from one of them (the file was changed after skops "
                    "saved it?)")
    return booster


def _digest(root, digests) -> bytes:
    """A skops schema node's digest, its ``__id__`` aside; each node digested once
    (``digests``: by ``id()``), from its children's digests."""
    import hashlib

    stack: list = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in digests or not isinstance(node, (dict, list)):
            continue
        items = sorted(node.items()) if isinstance(node, dict) else list(enumerate(node))
        if not ready:
            stack.append((node, True))
            stack.extend((v, False) for _, v in items if isinstance(v, (dict, list)))
            continue
        # a child as "#" and its digest, a value as "=" and its repr (a self-delimiting token
        # that tells 1, 1.0, True and "1" apart, NaN equal to NaN, as json.dumps, cheaper)
        h = hashlib.blake2b(b"d" if isinstance(node, dict) else b"l", digest_size=16)
        h.update(b"".join(
            repr(key).encode() + (b":#" + digests[id(value)] if type(value) in (dict, list)
                                  else b":=" + repr(value).encode()) + b","
            for key, value in items if key != "__id__"))
        digests[id(node)] = h.digest()
    return digests[id(root)]


def _same_values(a, b, archive) -> bool:
    """Two skops schema nodes equal but for ``__id__`` and the names of array files of
    equal bytes."""
    pairs = [(a, b)]
    names = set(archive.namelist())
    while pairs:
        x, y = pairs.pop()
        if isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                return False
            for key in x:
                if key == "file" and isinstance(x[key], str) and isinstance(y[key], str):
                    if x[key] != y[key] and not (x[key] in names and y[key] in names and
                                                 archive.read(x[key]) == archive.read(y[key])):
                        return False
                elif key != "__id__":
                    pairs.append((x[key], y[key]))
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                return False
            pairs.extend(zip(x, y))
        elif type(x) is not type(y) or json.dumps(x) != json.dumps(y):  # NaN equals NaN
            return False
    return True
