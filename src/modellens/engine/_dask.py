"""The one Dask driver: every family's work on Dask data or a Dask cluster goes through here.

Three kinds of request meet Dask, and each is mapped over partitions or
futures by this module, under one set of rules:

* **the engine's chunks on a cluster** (:func:`evaluate_on_client`): an
  in-memory request inside ``ml.config(client=...)``; every chunk a future;
* **plans that summarise, per partition** (:func:`map_partitions`, which
  :class:`~._out_of_core.OutOfCore` runs for the effects and the regional
  effects): each partition of a Dask table, encoded with the table's schema,
  runs the request's plans where it lies, and the results come back in
  partition order;
* **answers of one row per row, kept lazy** (:func:`map_rows`: the local
  attributions and ``ml.predict``): a lazy Dask DataFrame whose partitions
  run the method's in-memory call.

The rules they share:

* **client detection**: :func:`resolve_client` (``"current"``: Dask's
  current client); without one, Dask's default scheduler runs the partitions;
* **the engine inside a partition**: :func:`partition_options` (one thread,
  no bar, the request's ``chunk_size`` kept, so a worker's memory follows it;
  otherwise the tuned chunks under the 32 MiB cap);
* **what is shipped**: :func:`ship` (below), the model and large arrays once
  per ``ml.config`` block;
* **futures in flight**: :class:`_Ordered`, a bounded window (two per worker
  thread running, twice that many answers held) folded in order, the shipped
  pieces sent again when every copy of one was lost (at most
  ``RESHIP_ATTEMPTS`` times);
* **errors**: a worker lost for good is our ``ModelError``
  (:func:`lost_on_cluster`), never a partial result; an error of the model is
  raised as it was raised, with a note naming the chunk's worker or the
  partition and its rows (:func:`partition_note`);
* **progress**: chunks advance the request's bar as they are folded;
  partitions run without a bar (the worker's engine shows none).

The chunks' executor
--------------------
The client (this process) keeps what a local run keeps: the plans, the chunk
cuts and the folds.  The workers get, once per request, the model and the
segments without their answers (a description of the rows: the base table,
the columns and the settings), and for every chunk only its pieces
``(segment, start, stop)``: they build the rows, call the model and condense
the answers (:meth:`~.segments.Segment.condense`: averaged groups are summed
there).  The client folds the condensed answers in chunk order, so every
floating-point sum is the one a local run makes and the numbers are the same
bit for bit, whatever the number of workers.

Workers started by Dask's nanny get ``MALLOC_TRIM_THRESHOLD_=65536``, which
turns off glibc's adaptive mmap threshold, so every chunk-sized buffer is
mapped and zeroed afresh: for cheap models that doubled the time of a chunk.
The clusters ``ml.config(n_workers=k)`` starts leave it out; for a cluster of
your own, set ``distributed.nanny.pre-spawn-environ`` without it.

Data sent once
--------------
What a request ships (the model, the segments' base tables) is pickled with
its large arrays and the user's model left out, each named by a token of its
content (:func:`dask.base.tokenize` of an array, a hash of the model's
pickle); those go to every worker once per ``ml.config(client=...)`` block
(:class:`~modellens._config.ClusterStore`) and the next request of the block that holds the same
content names them again instead of sending them: only the small skeleton
travels, and the workers put the pieces back in.  A model refit in place or
data changed in place have another token and are sent again.  The block's
pieces are released from the workers when it ends.  A lazy frame of
:func:`map_rows` puts its call in the graph once (one key), so Dask sends it
to each worker once per request.
"""

from __future__ import annotations

import copy
import hashlib
import io
import pickle
import traceback
from collections import deque
from contextlib import contextmanager
from typing import NoReturn

import numpy as np

from .._config import import_distributed
from .._validation import InvalidParameterError
from ..models import ModelError
from ._chunks import chunk_rows

__all__ = ["evaluate_on_client", "resolve_client", "scatter_to_workers", "DASK_CHUNK_ROWS",
           "IN_FLIGHT_PER_THREAD", "ship", "open_shipped", "pieces_lost", "RESHIP_ATTEMPTS",
           "SHARE_MIN_BYTES", "lost_on_cluster", "ask_on_client"]

#: Rows per chunk on a cluster (unless the user sets ``chunk_size``): a task costs the
#: scheduler about a millisecond, so chunks are larger than local ones; the tuner
#: does not run there (the timings come from other machines).
DASK_CHUNK_ROWS = 2**18
#: Chunks running or queued per worker thread: one running, one queued behind it.
IN_FLIGHT_PER_THREAD = 2
#: Arrays of at least this many bytes are sent once per ``ml.config(client=...)`` block
#: and named in later requests; smaller ones travel with each request's skeleton.
SHARE_MIN_BYTES = 64 * 1024


def resolve_client(client):
    """The Client of ``client`` (``"current"``: the client Dask considers current)."""
    distributed = import_distributed()
    if isinstance(client, str):
        try:
            return distributed.default_client()
        except ValueError:
            raise InvalidParameterError(
                "client='current' found no Dask client; start one first "
                "(distributed.Client(...)) or pass it as client=.") from None
    return client


def scatter_to_workers(client, obj):
    """``obj`` (the model, with data) on every worker once; a clear error if it cannot go."""
    try:
        # broadcast: a lost worker's copy has twins; straight from here: through the
        # scheduler it cost a transient copy of the data
        return client.scatter(obj, broadcast=True, hash=False, direct=True)
    except (TypeError, pickle.PicklingError) as exc:
        _unpicklable(exc)


def _piece(store, client, token, obj, nbytes):
    """The future of the piece ``token`` on ``client``, sending ``obj`` if it is not there."""
    if client is not store.client:  # "current" may name another client later
        store.futures, store.client = {}, client
    future = store.futures.get(token)
    if future is None or future.status in ("error", "cancelled", "lost"):
        future = scatter_to_workers(client, obj)
        store.futures[token] = future
        store.sent.append((token, nbytes))
    return future


class _Shipped:
    """An object pickled without its shared pieces; unpickled once per worker."""

    def __init__(self, payload: bytes):
        self.payload = payload

    def __getstate__(self):
        return {"payload": self.payload}

    def open(self, pieces: dict):
        """The object, its pieces put back (``pieces``: token -> object on this worker)."""
        obj = self.__dict__.get("_obj")
        if obj is None:  # two threads may both unpickle: the same object either way
            unpickler = pickle.Unpickler(io.BytesIO(self.payload))
            unpickler.persistent_load = pieces.__getitem__  # type: ignore[method-assign]  # pickle's documented hook
            obj = self._obj = unpickler.load()
        return obj


def _model_token(model) -> tuple[str, int] | None:
    import cloudpickle

    try:
        data = cloudpickle.dumps(model)
    except Exception:  # noqa: BLE001 - it then travels (and fails, if it must) as before
        return None
    return "model-" + hashlib.sha256(data).hexdigest(), len(data)


def ship(client, store, obj, model=None):
    """Send ``obj`` to every worker: ``(skeleton_future, pieces)`` for a task's arguments.

    Arrays of ``SHARE_MIN_BYTES`` or more and ``model`` (the user's model
    object) are left out of the skeleton and sent through ``store`` once per
    content; ``pieces`` maps their tokens to their futures (Dask hands the
    task the objects on its worker).  Without a store everything is sent
    with the skeleton, for this request only.  :func:`open_shipped` undoes it
    on the worker.
    """
    import cloudpickle
    from dask.base import tokenize

    if store is None:
        return scatter_to_workers(client, _Shipped(_dumps(obj))), {}
    pieces, tokens = {}, {}
    model_token = _model_token(model) if model is not None else None

    def persistent_id(o):
        if model_token is not None and o is model:
            token, nbytes = model_token
        elif type(o) is np.ndarray and o.nbytes >= SHARE_MIN_BYTES and o.dtype != object:
            key = id(o)
            if key not in tokens:  # (the same base table under every segment: hashed once)
                tokens[key] = "array-" + tokenize(o)
            token, nbytes = tokens[key], o.nbytes
        else:
            return None
        if token not in pieces:
            pieces[token] = _piece(store, client, token, o, nbytes)
        return token

    buffer = io.BytesIO()
    pickler = cloudpickle.CloudPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.persistent_id = persistent_id
    try:
        pickler.dump(obj)
    except (TypeError, pickle.PicklingError) as exc:
        _unpicklable(exc)
    skeleton = scatter_to_workers(client, _Shipped(buffer.getvalue()))
    store.sent.append(("skeleton", buffer.tell()))
    return skeleton, pieces


def _dumps(obj) -> bytes:
    import cloudpickle

    try:
        return cloudpickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except (TypeError, pickle.PicklingError) as exc:
        _unpicklable(exc)


def _unpicklable(exc) -> NoReturn:
    cause = exc.__cause__ or exc.__context__ or exc
    raise ModelError(
        f"the model or the data could not be sent to the Dask workers ({cause}); Dask "
        "pickles them (cloudpickle), which a model holding a lock, an open file or a "
        "connection does not allow. Make it picklable, or run without client=.") from exc


def open_shipped(skeleton, pieces):
    """On a worker: the object :func:`ship` sent."""
    return skeleton.open(pieces)


class _Request:
    """What the workers need of one request: the model and the rows' description."""

    def __init__(self, model, segments):
        self.model = model
        self.segments = []
        for seg in segments:
            seg = copy.copy(seg)
            # the answers stay here; on_finish reaches back into the plan
            seg.result, seg.on_finish = None, None
            self.segments.append(seg)


def _answer_chunk(skeleton: _Shipped, shared: dict, pieces):
    """On a worker: the condensed answers of one chunk and its number of rows."""
    request = skeleton.open(shared)
    pieces = [(request.segments[i], a, b) for i, a, b in pieces]
    rows = chunk_rows(pieces)
    try:
        out = pieces[0][0].answer(request.model, rows)
    except Exception as exc:
        # Dask sends the exception back with the frames of this function only;
        # the model's own frames (the cause) travel in the message
        exc.add_note(f"Traceback on the Dask worker {_worker_address()}:\n"
                     + "".join(traceback.format_exception(exc)).rstrip())
        raise
    condensed, offset = [], 0
    for seg, a, b in pieces:
        condensed.append(seg.condense(a, b, out[offset: offset + b - a]))
        offset += b - a
    return condensed, len(rows)


@contextmanager
def lost_on_cluster(what: str):
    """Dask giving up on lost workers or data, raised as our ``ModelError``; never a partial result."""
    distributed = import_distributed()
    try:
        yield
    except distributed.KilledWorker as exc:
        raise ModelError(
            f"a Dask worker died while computing {what} ({exc}); Dask gave up after "
            "retrying the task on other workers (distributed.scheduler.allowed-failures), so "
            "no result is returned. The model may crash its process or need more memory per "
            "worker than it has: try a smaller chunk_size, smaller partitions "
            "(X.repartition(...)) or workers with more memory.") from exc
    except distributed.client.FutureCancelledError as exc:
        # every worker holding the request's data died (the scheduler cannot rebuild
        # scattered data), or the client was closed under the request
        raise ModelError(
            f"the Dask workers holding the data of {what} were lost ({exc}), so no result is "
            "returned. If a worker died, the model may crash its process or need more memory "
            "per worker than it has (try a smaller chunk_size); if the client was closed, "
            "run the request again on an open one.") from exc


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except Exception:  # noqa: BLE001 - only a label
        return "(unknown)"


def evaluate_on_client(client, model, segments, sizers, chunks, bar=None, store=None):
    """Evaluate the ``chunks`` of ``segments`` on a Dask ``client`` and fold them here.

    Parameters
    ----------
    client : dask.distributed.Client or "current"
    model : ModelLike
    segments : list of Segment
    sizers : dict
        The engine's chunk sizers by call key; their sizes are raised to
        ``DASK_CHUNK_ROWS`` (within each one's memory cap) unless the user
        fixed the chunk size.
    chunks : iterator of (key, pieces)
        The engine's chunk cuts, read lazily (so after the sizes are set).
    bar : tqdm, optional
        Advanced as each chunk is folded.
    store : modellens._config.ClusterStore, optional
        The ``ml.config`` block's pieces on the cluster: the model and the
        large arrays are sent once per block (without one, once per request).

    Raises
    ------
    ModelError
        A worker died repeatedly while evaluating a chunk (Dask gave up on it)
        or the request's data were lost with the workers holding them more
        than ``RESHIP_ATTEMPTS`` times (each time they are sent again and the
        chunks not folded yet rerun); no result is returned.  An error of the model itself is raised as it was
        raised on the worker, with the worker's traceback in its notes.
    """
    client = resolve_client(client)
    for sizer in sizers.values():
        if sizer.align != 1:  # tuned sizes: the user did not fix them
            sizer.size = max(sizer.size, min(DASK_CHUNK_ROWS, sizer.cap))
    position = {id(seg): i for i, seg in enumerate(segments)}

    def submit(skeleton, shared, pieces):
        positions = [(position[id(s)], a, b) for s, a, b in pieces]
        return client.submit(_answer_chunk, skeleton, shared, positions, pure=False)

    def fold(pieces, answer):
        condensed, n_rows = answer
        for (seg, a, b), part in zip(pieces, condensed):
            seg._fold(a, b, part)
        model.account(1, n_rows)  # the workers counted on their copies
        if bar is not None:
            bar.update(n_rows)

    job = _Ordered(client, store, _Request(model, segments), getattr(model, "model", None),
                   submit)
    job.run((pieces for _, pieces in chunks), fold, "the model's chunks")
    return segments


#: Times a request's pieces are sent again when every copy of one was lost with workers.
RESHIP_ATTEMPTS = 2


def pieces_lost(skeleton, shared) -> bool:
    """Whether a piece :func:`ship` sent is gone from the cluster (all its copies lost)."""
    return any(f.status in ("cancelled", "lost", "error")
               for f in [skeleton, *shared.values()] if f is not None)


class _Ordered:
    """Futures of one request on the cluster, in a bounded window, folded in order.

    ``payload`` (what every task needs: the model, the rows' description) is
    shipped once (:func:`ship`; None ships nothing); ``submit(skeleton,
    shared, item)`` makes an item's future.  At most ``IN_FLIGHT_PER_THREAD``
    futures per worker thread run, and twice that many answers wait here for
    an earlier, slower one, so the client holds a few answers at a time.

    Scattered data cannot be rebuilt by Dask: when every copy of a piece is
    lost (the workers holding it died, or Dask's active memory manager had
    kept one replica and that worker died), the tasks that need it are
    cancelled.  The pieces are then sent again and the items not folded yet
    are submitted again, at most ``RESHIP_ATTEMPTS`` times.
    """

    def __init__(self, client, store, payload, user_model, submit):
        distributed = import_distributed()
        self.client, self.store, self.payload, self.user_model = \
            client, store, payload, user_model
        self._submit = submit
        self.skeleton, self.shared = self._ship()
        self.pending: deque = deque()
        self.done = distributed.as_completed()
        self.attempts = 0

    def _ship(self):
        if self.payload is None:
            return None, {}
        return ship(self.client, self.store, self.payload, model=self.user_model)

    def submit(self, item):
        future = self._submit(self.skeleton, self.shared, item)
        self.pending.append((future, item))
        self.done.add(future)

    def lost(self) -> bool:
        return pieces_lost(self.skeleton, self.shared)

    def ship_again(self) -> bool:
        distributed = import_distributed()
        if self.payload is None or self.attempts >= RESHIP_ATTEMPTS or not self.lost():
            return False
        self.attempts += 1
        again = list(self.pending)
        self.cancel()
        self.pending, self.done = deque(), distributed.as_completed()
        self.skeleton, self.shared = self._ship()
        for _, item in again:
            self.submit(item)
        return True

    def cancel(self):
        # (the shared pieces stay for the block's next requests)
        futures = [f for f, _ in self.pending]
        self.client.cancel(futures + ([] if self.skeleton is None else [self.skeleton]))

    def run(self, items, fold, what: str):
        """Submit ``items`` in the window and ``fold(item, answer)`` each, in order."""
        distributed = import_distributed()
        threads = sum(self.client.nthreads().values()) or 1
        running_limit = max(2, IN_FLIGHT_PER_THREAD * threads)
        held_limit = 2 * running_limit
        items = iter(items)

        def submit_more():
            while len(self.pending) < held_limit \
                    and sum(not f.done() for f, _ in self.pending) < running_limit:
                item = next(items, None)
                if item is None:
                    return
                self.submit(item)

        try:
            with lost_on_cluster(what):
                while True:
                    try:
                        self._fold_in_order(submit_more, fold)
                        break
                    except distributed.client.FutureCancelledError:
                        if not self.ship_again():  # not our pieces lost, or lost too often
                            raise
        finally:
            self.cancel()

    def _fold_in_order(self, submit_more, fold):
        submit_more()
        while self.pending:
            for future in self.done:
                if future.status == "error":
                    future.result()  # raises the worker's error at once, not in order
                # fold in order: the sums are then those of a local run
                while self.pending and self.pending[0][0].done():
                    head, item = self.pending[0]
                    answer = head.result()
                    self.pending.popleft()
                    fold(item, answer)
                    head.release()
                submit_more()
            # as_completed yields a future once: one whose answer was lost with its worker
            # after that is recomputed by Dask but not yielded again, so the items not
            # folded yet are waited for again (leaving here returned a partial result)
            self.done.update(future for future, _ in self.pending)


def ask_on_client(client, function, *args):
    """``function(*args)`` run once on a worker of ``client``, its value sent back.

    The door asks a model of unknown outputs its first row's answer there
    (``Model(ask=...)``): on a cluster the model answers on the workers only,
    as every chunk does.
    """
    client = resolve_client(client)
    with lost_on_cluster("the model's answer for one row"):
        return client.submit(function, *args, pure=False).result()
