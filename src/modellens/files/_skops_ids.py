"""The ids of a skops file's schema: nodes of one ``__id__`` that skops builds once.

skops builds each ``__id__`` once, from the first of its nodes it reads, so a
file in which two nodes of one id hold other values loads other objects than
it says (:func:`check_skops_ids`); the same walk refuses a ``CachedNode`` and
tells whether a booster needs its own walk.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import struct
import zipfile
import zlib
from itertools import repeat
from operator import itemgetter

from ._errors import FileError

__all__ = ["check_skops_ids", "read_skops_schema", "skops_private"]

_CONTAINERS = frozenset((dict, list))
_MISSING = object()
#: The copies of one id from which :func:`_all_same` compares them all at once (a
#: gradient boosting's RandomState: 300 copies).
_ALL_AT_ONCE = 8
#: A zip entry's local header: its magic, flags, and the sizes of its name and extra field.
_LOCAL_HEADER = struct.Struct("<4s2xH18xHH")
#: The largest file read by ``os.pread``, which sizes its buffer by what the zip says
#: (zipfile reads a file a chunk at a time, and finds a false size at the file's end).
_PREAD_MAX = 1 << 24
#: Files of this many bytes or more are read apart from their local header.
_READ_ALONE = 1 << 16


@functools.lru_cache(maxsize=1)
def skops_private():
    """skops' private ``get_tree`` and ``read_schema``, or None where this skops version has
    not these functions or takes other arguments (asked once: ``inspect.signature`` costs
    more than a small file's load)."""
    import inspect

    try:
        from skops.io._audit import get_tree
        from skops.io._utils import LoadContext, read_schema
    except ImportError:  # pragma: no cover - another skops version
        return None
    if not dataclasses.is_dataclass(LoadContext) or \
            "src" not in {f.name for f in dataclasses.fields(LoadContext)}:  # pragma: no cover
        return None  # (read_skops_schema hands the archive to a copy of the context)
    # private functions: another skops may keep the names with other arguments, which
    # would refuse every file rather than fall back
    if list(inspect.signature(get_tree).parameters)[1:] != ["load_context", "trusted"] or \
            len(inspect.signature(read_schema).parameters) != 1:  # pragma: no cover
        return None
    return get_tree, read_schema


def read_skops_schema(archive, read_schema):
    """skops' schema of an open skops file and its load context, as skops' ``read_schema``
    returns them, and the nodes of the schema's ids (``walked`` of :func:`check_skops_ids`),
    gathered while json parses the schema: a hook of json's parse costs three quarters of a
    walk of the schema after it, sparing its stack and its look at each of the values (a
    gradient boosting's schema: 22k dicts, 124k values).

    skops' ``read_schema`` parses the schema and validates its protocol (the only value
    of the schema it reads): it is handed an archive of that protocol alone, and its
    context is given the archive back, read through :class:`_StoredReader`.  The hook
    sees every dict json makes, including one a repeated key of its parent then drops: no
    node is missed, and such a file may only be refused more often than by the walk.
    """
    hook, walked = _walking_hook()
    schema = json.loads(archive.read("schema.json"), object_hook=hook)
    if type(schema) is not dict:  # pragma: no cover - skops' reader refuses it, in its words
        return (*read_schema(archive), None)
    _, context = read_schema(_ProtocolOnly(schema.get("protocol")))
    return schema, dataclasses.replace(context, src=_StoredReader(archive)), walked()


class _StoredReader:
    """The archive skops' nodes read their array files from (their load context's
    ``src``): each file's bytes as ``archive.read`` returns them, read by
    :func:`_stored_bytes` where that can (a sixth of zipfile's cost: a gradient
    boosting's 1,200 array files cost skops 42 ms through zipfile, 7 ms so), by zipfile
    otherwise, which then reads them, or says what is wrong, itself.  The bytes the id
    checks compare are read the same way.  Whatever else skops may ask of the archive is
    the archive's."""

    def __init__(self, archive):
        self.archive = archive

    def read(self, name):
        data = _stored_bytes(self.archive, name) if type(name) is str else None
        return self.archive.read(name) if data is None else data

    def __getattr__(self, attr):
        return getattr(self.archive, attr)


class _ProtocolOnly:
    """An archive whose ``schema.json`` holds a schema's protocol alone (json's value)."""

    def __init__(self, protocol):
        self.text = json.dumps({"protocol": protocol}).encode()

    def read(self, name):
        if name != "schema.json":  # pragma: no cover - another skops reads more
            raise KeyError(name)
        return self.text


def _walking_hook():
    """The rule of each dict of a schema, as a hook for json's parse (or called on each dict
    by :func:`_nodes_by_id`), and a function returning what it gathered: ``(by_id,
    booster)``, the dicts whose ``__id__`` is a key of skops' memo by id (for the keys of
    two dicts or more) and whether a dict is of class ``Booster``; a ``CachedNode``
    refused."""
    heads: dict = {}  # memo key -> its first node
    by_id: dict = {}  # memo key -> its nodes, for the keys of two nodes or more
    booster: list = []
    setdefault, containers = heads.setdefault, _CONTAINERS

    def hook(node):
        saved = node.get("__id__")
        if saved is not None and type(saved) not in containers:  # a memo key
            head = setdefault(saved, node)
            if head is not node:
                group = by_id.get(saved)
                if group is None:
                    by_id[saved] = [head, node]
                else:
                    group.append(node)
        if node.get("__loader__") == "CachedNode":
            raise FileError(_cached_node(node, saved))
        if not booster and node.get("__class__") == "Booster":
            booster.append(True)
        return node

    return hook, lambda: (by_id, bool(booster))


def check_skops_ids(schema, archive, *, budget: int | None = None, walked=None) -> bool:
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
    others (and flat ones that differ) side by side with the first (:func:`_same`: a
    gradient boosting's 300 trees share one RandomState, written 301 times; an id of
    ``_ALL_AT_ONCE`` nodes or more first all at once, :func:`_all_same`), or, past
    ``budget`` values visited so (default: the schema's length in bytes), by digest,
    each node digested once, from its children's digests (so a schema costs at most
    about twice its size and its files', however its nodes of one id nest); each array
    file read once.  A ``CachedNode`` (a reference to a node read elsewhere) is
    refused: skops 0.16 never writes one, and these checks do not follow it.
    ``walked``: what :func:`read_skops_schema` gathered of ``schema`` (else walked here).
    """
    by_id, booster = _nodes_by_id(schema) if walked is None else walked
    digests: dict[int, bytes] | None = None  # id() of a node -> its digest, once needed
    files = _ArrayFiles(archive)
    # values the side-by-side comparisons may visit before the digests take over: the
    # schema's length in bytes, more than it holds values (so a schema costs at most
    # twice its size, however its nodes of one id nest in each other's)
    left = [archive.getinfo("schema.json").file_size if budget is None else budget]
    # the ids of flat nodes all alike (in C: thousands of copies of 0); the side-by-side
    # comparisons of the others pass over pairs of nodes of these ids (a RandomState's six
    # ``str`` TypeNodes)
    settled = {saved for saved, nodes in by_id.items() if _flat_copies(nodes[0], nodes)}
    for saved, nodes in by_id.items():
        if saved in settled:
            continue
        head = nodes[0]
        if digests is None and len(nodes) >= _ALL_AT_ONCE and \
                _all_same(head, nodes[1:], files, left, settled):
            continue  # (else each copy side by side, or by digest: they tell exactly)
        for node in nodes[1:]:
            same = None if digests is not None else _same(head, node, files, left, settled)
            if same is None:  # over budget: each node digested once from here on
                digests = {} if digests is None else digests
                same = _digest(node, digests, files) == _digest(head, digests, files)
            if not same:
                raise FileError(
                    f"two objects of one id ({str(saved)[:40]}) hold other values: skops "
                    "would build both from one of them (the file was changed after skops "
                    "saved it?)")
    return booster


def _nodes_by_id(schema):
    """What :func:`_walking_hook`'s rule gathers of a parsed schema, its dicts visited by a
    walk (depth first, the last value of a dict or list first).

    Only dicts and lists are stacked (the scalars, most of a schema, are looked at
    where they lie: a third of the cost of stacking every value).
    """
    rule, walked = _walking_hook()
    stack: list = [schema]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        if type(node) is dict:
            rule(node)
            values = node.values()
        else:
            values = node
        for value in values:
            kind = type(value)
            if kind is dict or kind is list:
                push(value)
    return walked()


def _flat_copies(head, nodes) -> bool:
    """Whether ``nodes`` are copies of their first, ``head``, a flat node (no dict or list
    in it): each value of the type of the head's and equal to it (floats by ``repr``), the
    ``__id__`` aside; False leaves them to :func:`_same`, which tells exactly.

    In C (a gradient boosting's schema holds 8461 copies of one ``str`` TypeNode): the
    nodes compared whole, as dicts, then, for each key of a value other than a string
    or None, its values' types (and a float's ``repr``): ``==`` alone is not the rule
    of :func:`_same`, as ``1``, ``1.0`` and ``True`` are equal, and so are ``0.0`` and
    ``-0.0``; a value equal to a string or to None is one (json's values: no subclass).
    The ``__id__``s are one memo key (how ``nodes`` were gathered), whatever their type.
    """
    count = len(nodes)
    if not _CONTAINERS.isdisjoint(map(type, head.values())) or nodes.count(head) != count:
        return False
    for key, value in head.items():
        kind = type(value)
        if kind is str or value is None or key == "__id__":
            continue
        values = list(map(itemgetter(key), nodes))  # (each node has the key: equal dicts)
        if list(map(type, values)).count(kind) != count or \
                kind is float and list(map(repr, values)).count(repr(value)) != count:
            return False
    return True


def _cached_node(node, saved) -> str:
    """Why a ``CachedNode`` is refused."""
    return (f"it holds a skops CachedNode (id {str(saved)[:40]}, said to be "
            f"{str(node.get('__module__'))[:80]}.{str(node.get('__class__'))[:80]}): a "
            "reference to an object stored elsewhere in the file, which skops never writes "
            "for the models modellens loads and its checks do not follow (the file was not "
            "written by skops.io.dump?)")


def _same(head, node, files, budget, settled=frozenset()) -> bool | None:
    """Whether two schema nodes hold the same values, their ``__id__`` aside (what
    :func:`_digest` tells, without digesting); None once ``budget[0]`` values are spent.

    Values compare as their ``repr`` (1, 1.0, True and "1" differ; NaN equals NaN), a
    ``file`` of a dict as the digest of the bytes of the archive file it names.  Two
    dicts of one int memo key of ``settled`` (ids whose nodes are all alike, as
    :func:`_flat_copies` found) are passed over, not compared again.
    """
    stack = [(head, node)]
    pop, push = stack.pop, stack.append
    left = budget[0]
    while stack:
        a, b = pop()
        left -= len(a) + 1
        if left < 0:
            budget[0] = left
            return None
        if type(a) is list:  # (the caller pushes pairs of one type)
            if len(a) != len(b):
                return False
            for x, y in zip(a, b):
                kind = type(x)
                if kind is dict:
                    if type(y) is not dict:
                        return False
                    saved = x.get("__id__")  # (an int id of settled: passed over)
                    if type(saved) is not int or saved not in settled or \
                            saved != y.get("__id__"):
                        push((x, y))
                elif kind is list:
                    if type(y) is not list:
                        return False
                    push((x, y))
                elif not _same_value(x, y):
                    return False
            continue
        if len(a) - ("__id__" in a) != len(b) - ("__id__" in b):
            return False
        for key, x in a.items():
            y = b.get(key, _MISSING)
            kind = type(x)
            if kind is str and type(y) is str and x == y or x is y or key == "__id__":
                continue  # (most values; an identical one is a singleton: true, null)
            if y is _MISSING:
                return False
            if kind is dict or kind is list:
                if type(y) is not type(x):
                    return False
                saved = x.get("__id__") if kind is dict else None
                if type(saved) is not int or saved not in settled or saved != y.get("__id__"):
                    push((x, y))
            elif key == "file" and type(y) not in _CONTAINERS:  # two names: one file's bytes?
                token = files.token(x)
                if token != files.token(y) or token is None and not _same_value(x, y):
                    return False
            elif not _same_value(x, y):
                return False
    budget[0] = left
    return True


def _all_same(head, copies, files, budget, settled) -> bool:
    """Whether every one of ``copies`` holds what ``head`` holds as :func:`_same` tells,
    proven position by position of the head for all the copies at once (each test a pass
    in C over the copies' values there: a gradient boosting's 300 RandomState copies cost
    a tenth of 300 comparisons side by side); False where that is not proven (a copy
    whose keys are not the head's, a value that differs, a file not in the archive,
    ``budget[0]`` spent: the caller then compares the copies one by one, which tells
    exactly).

    At each position the copies' values must be of the head's value's type and equal to
    it (floats by ``repr``), a ``file`` naming a file of the head's file's bytes, lists
    of its length, dicts of its keys (an ``__id__`` passed over, as by :func:`_same`;
    a dict of an int id of ``settled`` of that same id in every copy passed over).
    """
    count = len(copies)
    stack = [(head, copies)]
    pop, push = stack.pop, stack.append
    while stack:
        a, bs = pop()
        budget[0] -= count * (len(a) + 1)
        if budget[0] < 0:
            return False
        if type(a) is dict:
            if list(map(dict.keys, bs)).count(a.keys()) != count:
                return False
            pairs = [(key, x, list(map(itemgetter(key), bs))) for key, x in a.items()
                     if key != "__id__"]
        else:
            pairs = [(None, x, list(map(itemgetter(i), bs))) for i, x in enumerate(a)]
        for key, x, ys in pairs:
            kind = type(x)
            if list(map(type, ys)).count(kind) != count:
                return False
            if kind is dict:
                saved = x.get("__id__")
                if type(saved) is not int or saved not in settled or \
                        list(map(dict.get, ys, repeat("__id__"))).count(saved) != count:
                    push((x, ys))
            elif kind is list:
                if list(map(len, ys)).count(len(x)) != count:
                    return False
                push((x, ys))
            elif key == "file":  # (a dict's; types alike): names of one file's bytes
                token = files.token(x)
                if token is None or list(map(files.token, ys)).count(token) != count:
                    return False
            elif (ys.count(x) if kind is not float else
                  list(map(repr, ys)).count(repr(x))) != count:
                return False
    return True


def _same_value(x, y) -> bool:
    """Whether two scalars of a schema have one ``repr`` (floats by ``repr``: NaN, -0.0)."""
    return type(x) is type(y) and (x == y if type(x) is not float else repr(x) == repr(y))


def _digest(root, digests, files) -> bytes:
    """A skops schema node's digest, its ``__id__`` aside; each node digested once
    (``digests``: by ``id()``), from its children's digests; a ``file`` named in the
    archive as its bytes' digest (``files``), so that copies of one array saved under
    two names digest alike."""
    stack: list = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in digests or type(node) not in (dict, list):
            continue
        is_dict = type(node) is dict
        if not ready:
            kids = [(v, False) for v in (node.values() if is_dict else node)
                    if type(v) in (dict, list)]
            if kids or is_dict:
                stack.append((node, True))
                stack.extend(kids)
                continue
        # one repr of (is_dict, parts): a dict's parts are (key, part) sorted, a list's its
        # parts; a part is a value itself, or, as bytes, "#" and a child's digest or "@"
        # and a file's bytes' digest (a repr is self-delimiting and tells 1, 1.0, True and
        # "1" apart, NaN equal to NaN, as json.dumps did, cheaper; a list of values, as an
        # array of 624 ints of a RandomState, is its own parts)
        if is_dict:
            parts = [(key, value) if type(value) not in (dict, list) and key != "file" else
                     (key, _part(value, digests, files))
                     for key, value in sorted(node.items()) if key != "__id__"]
        else:
            parts = node if not ready else [_part(v, digests, None) for v in node]
        digests[id(node)] = hashlib.blake2b(repr((is_dict, parts)).encode(),
                                            digest_size=16).digest()
    return digests[id(root)]


def _part(value, digests, files):
    """A child's digest, a file's bytes' digest (as bytes; ``files`` None: not a file),
    or a value itself."""
    if type(value) in (dict, list):
        return b"#" + digests[id(value)]
    token = None if files is None else files.token(value)
    return value if token is None else token


class _ArrayFiles:
    """A skops archive's files, each read and digested once, and only where asked."""

    def __init__(self, archive):
        self.archive, self.names, self.tokens = archive, None, {}

    def token(self, name) -> bytes | None:
        """``b"@"`` and the digest of the bytes of the file ``name``; None where ``name``
        is not a string naming a file of the archive."""
        if not isinstance(name, str):
            return None
        if self.names is None:
            self.names = set(self.archive.namelist())
        if name not in self.names:
            return None
        if name not in self.tokens:
            data = _stored_bytes(self.archive, name)
            if data is None:  # not plainly stored: zipfile reads it, and says what is wrong
                data = self.archive.read(name)
            self.tokens[name] = b"@" + hashlib.blake2b(data, digest_size=16).digest()
        return self.tokens[name]


def _stored_bytes(archive, name) -> bytes | None:
    """The bytes ``archive.read(name)`` returns, for a file stored uncompressed, read with
    one ``os.pread`` (two where its header has an extra field or the file holds
    :data:`_READ_ALONE` bytes or more) rather than zipfile's reader (a tenth of its cost:
    a gradient boosting's 301 RandomState keys are a file each); None where zipfile
    would do more than read them (compression, flags, another name in the local header,
    a bad CRC, a short file, an entry running into the next where zipfile refuses that),
    or for a file said to be larger than 16 MB."""
    info = archive.getinfo(name)
    try:
        fd = archive.fp.fileno()
        pread = os.pread
    except (AttributeError, OSError, ValueError):  # an archive in memory, not POSIX
        return None
    if info.compress_type != zipfile.ZIP_STORED or info.flag_bits or \
            info.compress_size != info.file_size or info.file_size > _PREAD_MAX or \
            getattr(archive, "metadata_encoding", None) is not None:
        return None
    # one read of the local header, the name and the bytes, where the header has no extra
    # field (a cp437 name, no flags: as many bytes as the name has characters); a large
    # file's bytes read on their own (cut from the block, they were copied once more: an
    # extra trees' 100 MB of node arrays, 3 ms)
    size, named = _LOCAL_HEADER.size, len(info.orig_filename)
    alone = info.file_size >= _READ_ALONE
    block = pread(fd, size + named + (0 if alone else info.file_size), info.header_offset)
    if len(block) < size:
        return None
    magic, flags, name_size, extra_size = _LOCAL_HEADER.unpack_from(block)
    start = info.header_offset + size + name_size + extra_size
    end = start + info.file_size
    bound = getattr(info, "_end_offset", None)  # where newer zipfiles refuse an overlap
    if magic != b"PK\x03\x04" or flags or bound is not None and end > bound or \
            name_size != named or _name(block[size:size + named]) != info.orig_filename:
        return None
    data = block[size + named:] if not extra_size and not alone else \
        pread(fd, info.file_size, start)
    return data if len(data) == info.file_size and zlib.crc32(data) == info.CRC else None


def _name(raw: bytes) -> str:
    """A zip entry's name of no flags, as zipfile reads it: cp437 (ASCII where it is, the
    same characters, without a look-up of the codec)."""
    return raw.decode("ascii") if raw.isascii() else raw.decode("cp437")
