"""Execution options in one place: ``ml.config`` and the defaults every function reads.

The options say *how* a request runs, never *what* it computes: chunk sizes,
threads, progress bars, a Dask client.  They are read by the
engine; each public function also takes them as keywords, and a keyword given
to a function wins over the context.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
import os
import signal
import threading
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from typing import Any

from ._children import safe_path  # also the command line's (a leaf it may import)
from ._validation import InvalidParameterError, check_int

__all__ = ["config", "get_config", "Options", "resolve_options", "import_distributed", "safe_path",
           "local_client", "ClusterStore", "n_threads"]


@dataclass(frozen=True)
class Options:
    """Resolved execution options of one request.

    Attributes
    ----------
    chunk_size : int or None
        Model rows per call; None tunes the size on the model's speed.
    n_jobs : int
        ``n_jobs`` as given (see :func:`config`); :attr:`threads` is its count.
    progress : bool or None
        Show a tqdm bar; None shows one for long runs.
    client : object or None
        A ``dask.distributed.Client`` to run chunks on, or ``"current"`` for
        the client Dask considers current when the request runs.
    store : object or None
        What the ``ml.config`` block that set ``client`` has sent to the
        cluster (a ``ClusterStore``): data and models are sent once per block.
    """

    chunk_size: int | None = None
    n_jobs: int = 1
    progress: bool | None = None
    client: object = None
    store: object = None

    @property
    def threads(self) -> int:
        """The threads ``n_jobs`` asks for: :func:`n_threads` of it."""
        return n_threads(self.n_jobs)


def n_threads(n_jobs: int | None) -> int:
    """Threads of ``n_jobs``, scikit-learn's meaning: None is 1, -1 every core, -2 all but one.

    The one reading of ``n_jobs`` in the library: the engine's chunk threads
    and the tree kernels' numba threads both take this count.
    """
    if n_jobs is None:
        return 1
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    return max(1, n_jobs)


_current = contextvars.ContextVar("modellens_config", default=Options())
_UNSET: Any = object()  # a default that None cannot be (None has a meaning)


def _checked(chunk_size=_UNSET, n_jobs=_UNSET, progress=_UNSET, client=_UNSET) -> dict:
    out = {}
    if chunk_size is not _UNSET:
        out["chunk_size"] = check_int(chunk_size, "chunk_size", low=1,
                                      what="a positive number of rows", allow_none=True)
    if n_jobs is not _UNSET:
        n = check_int(n_jobs, "n_jobs", what="an integer (negative counts back from the "
                                             "number of cores)", allow_none=True)
        if n == 0:
            raise InvalidParameterError("n_jobs must not be 0; use 1 for no threads or -1 "
                                        "for one thread per core.")
        out["n_jobs"] = 1 if n is None else n
    if progress is not _UNSET:
        if progress is not None and not isinstance(progress, bool):
            raise InvalidParameterError(f"progress must be True, False or None (automatic), "
                                        f"got {progress!r}.")
        out["progress"] = progress
    if client is not _UNSET:
        if client is not None and not (isinstance(client, str) and client == "current") \
                and not (hasattr(client, "submit") and hasattr(client, "scatter")):
            raise InvalidParameterError(f"client must be a dask.distributed.Client, 'current' "
                                        f"or None, got {client!r}.")
        out["client"] = client
    return out


def get_config() -> dict[str, Any]:
    """Which execution options are in force here: chunk size, threads, progress bars, Dask client?

    Returns
    -------
    dict
        ``chunk_size``, ``n_jobs``, ``progress`` and ``client``, as the
        innermost :func:`config` block set them (the defaults outside any).

    See Also
    --------
    config : Set them for the calls inside a ``with`` block.

    Examples
    --------
    >>> import modellens as ml
    >>> ml.get_config()
    {'chunk_size': None, 'n_jobs': 1, 'progress': None, 'client': None}
    >>> with ml.config(n_jobs=2, progress=False):
    ...     print(ml.get_config()["n_jobs"])
    2
    """
    o = _current.get()
    return {"chunk_size": o.chunk_size, "n_jobs": o.n_jobs, "progress": o.progress,
            "client": o.client}


@contextmanager
def config(*, chunk_size: int | None = _UNSET, n_jobs: int | None = _UNSET,
           progress: bool | None = _UNSET, client: Any = _UNSET,
           n_workers: int | None = _UNSET) -> Iterator[None]:
    """Set how the calls inside a ``with`` block run: chunk size, threads, progress, a Dask cluster.

    The options change the speed and the memory a call takes, never its
    numbers.

    Options left out keep the value they have; nested blocks restore the
    outer values on exit.  A keyword given to a function call wins over the
    context for that call; None there means "not given" (the context's
    value), so inside a block that sets ``chunk_size`` a call asks for tuned
    chunks only by leaving the block.

    Parameters
    ----------
    chunk_size : int or None
        Model rows per call (None: tuned on the model's speed, from 16,384
        rows up to a 32 MiB memory cap; the numbers do not depend on it).
    n_jobs : int or None
        Threads, with scikit-learn's meaning: None (the default) is 1, a
        positive number that many, -1 every core, -2 all but one
        (``cores + 1 + n_jobs``); 0 is an error.  The same count everywhere:
        the chunks of model rows evaluated at once, and the threads of the
        compiled tree kernels (TreeSHAP, ``pdp(method="tree")``,
        ``interactions(method="tree")``).  A function's own ``n_jobs=``
        wins over the block's; None there means "not given".
    progress : bool or None
        tqdm progress bar: always, never, or None for runs of more than two
        million model rows.
    client : dask.distributed.Client or "current", optional
        Run the chunks on a Dask cluster: the model and the planned rows'
        description are sent to the workers once, each chunk's rows are built
        and evaluated there, and averaged groups are summed there; the
        answers are folded here in chunk order, so the numbers equal those of
        a local run.  Data and models are sent once per block: a later
        request in it on the same data (or model) names what the workers hold
        already (recognised by content, so data changed in place are sent
        again); they are freed from the workers when the block ends.  A Dask
        DataFrame is read where its partitions lie (persist it to read it
        once); they never come to this process.  ``"current"`` takes the client Dask considers current
        (``distributed.default_client()``) when a request runs.  Needs the
        ``dask`` extra (``pip install "modellens[dask]"``).
    n_workers : int, optional
        Start a ``LocalCluster`` of this many worker processes (one thread
        each, on loopback) for the block and run on it; it is closed when the
        block ends.  The answer for models that hold the GIL (pure Python,
        many scikit-learn predictors on small chunks), which ``n_jobs``
        threads cannot speed up.  Not together with ``client``.  Run it under
        ``if __name__ == "__main__":`` in a script: workers are new processes.

    See Also
    --------
    get_config : The options in force.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).normal(size=(200, 2))
    >>> with ml.config(chunk_size=1024, progress=False):
    ...     effects = ml.pdp(lambda A: A[:, 0] * 2.0, X, grid=5)
    >>> ml.get_config()["chunk_size"] is None
    True
    """
    with ExitStack() as stack:
        if n_workers is not _UNSET and n_workers is not None:
            if client is not _UNSET and client is not None:
                raise InvalidParameterError("give client= or n_workers=, not both: n_workers "
                                            "starts a local cluster of its own.")
            n = check_int(n_workers, "n_workers", low=1, what="a positive number of processes")
            client = stack.enter_context(local_client(n))
        given = _checked(chunk_size, n_jobs, progress, client)
        outer = _current.get()
        if given.get("client", outer.client) is not outer.client:
            # a block of its own client: what it sends is kept for its requests and
            # freed when it ends (a block on the same client shares the outer one's)
            given["store"] = None
            if given["client"] is not None:
                given["store"] = stack.enter_context(_released(ClusterStore()))
        token = _current.set(replace(outer, **given))
        try:
            yield
        finally:
            _current.reset(token)


class ClusterStore:
    """What one ``ml.config(client=...)`` block has sent to its cluster, by content token.

    Filled by the Dask executor (``engine._dask.ship``); a piece whose copies
    were all lost with their workers is sent again when next named.

    Attributes
    ----------
    futures : dict
        Token -> the piece's future on ``client``.
    client : object or None
    sent : list of (str, int)
        ``(token, bytes)`` of everything sent to the workers, in order: the
        shared pieces and each request's skeleton (what a test or a
        benchmark counts).
    """

    def __init__(self):
        self.futures, self.client, self.sent = {}, None, []

    def release(self):
        """Free the pieces on the workers (the block ended)."""
        futures, self.futures = list(self.futures.values()), {}
        client, self.client = self.client, None
        if futures and client is not None and getattr(client, "status", None) == "running":
            try:
                client.cancel(futures)
            except Exception:  # noqa: BLE001 - a closing client frees them anyway
                pass


@contextmanager
def _released(store):
    try:
        yield store
    finally:
        store.release()


def resolve_options(chunk_size=None, n_jobs=None, progress=None, client=None) -> Options:
    """The options of one call: each keyword that is not None wins over the context."""
    given = {k: v for k, v in (("chunk_size", chunk_size), ("n_jobs", n_jobs),
                               ("progress", progress), ("client", client)) if v is not None}
    return replace(_current.get(), **_checked(**given))


def import_distributed():
    """``dask.distributed``, or an ImportError that names the extra to install."""
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(
            "running on a Dask cluster needs dask.distributed, which is not installed; "
            "install the extra: pip install \"modellens[dask]\"") from exc
    return distributed


@contextmanager
def local_client(n_workers: int):
    """A ``LocalCluster`` of ``n_workers`` processes (one thread each) and its client.

    Loopback only; both are closed on exit.  Dask serves its HTTP endpoints
    (and the dashboard, when bokeh is installed) even with
    ``dashboard_address=None``, so they take a free loopback port instead of
    the default 8787, which a second cluster would find taken.  Its
    scheduler runs no active memory manager, which would drop the copies of
    the data and models sent to every worker once per ``ml.config`` block.

    Ctrl-C while the cluster starts or closes is held until that step is
    done (a second Ctrl-C does not wait), then raised as ``KeyboardInterrupt``
    with the cluster closed: an interrupt inside Dask's setup left worker
    processes running.  Whatever ends a start or a close early, the worker
    processes it started are killed.

    The processes it starts (the workers, a worker the nanny restarts, and
    multiprocessing's resource tracker) import nothing from the working
    directory: they are started as ``python -c ...``, which puts that folder
    first on ``sys.path``, so they get ``PYTHONSAFEPATH=1`` (see
    :func:`_safe_path_children`).
    """
    distributed = import_distributed()
    import dask

    # Dask's nanny sets MALLOC_TRIM_THRESHOLD_ in its workers, which turns off glibc's
    # adaptive mmap threshold: every chunk-sized buffer is then mapped and zeroed afresh
    # (page faults that doubled the cost of a chunk of cheap model rows); the workers
    # started here keep glibc's defaults, as this process has
    environ = {k: v for k, v in dask.config.get("distributed.nanny.pre-spawn-environ",
                                                default={}).items()
               if k != "MALLOC_TRIM_THRESHOLD_"}
    environ["PYTHONSAFEPATH"] = "1"  # a worker the nanny (re)starts: see _safe_path_children
    with _safe_path_children(), _running_cluster(distributed, dask, n_workers,
                                                 environ) as client:
        yield client


@contextmanager
def _running_cluster(distributed, dask, n_workers, environ):
    """The body of :func:`local_client`: start, yield the client, close."""
    before = _worker_children()
    cluster = client = None
    with _interrupt_held() as held:
        try:
            # the active memory manager would keep one copy of what is broadcast to the
            # workers (data sent once per block): the others would then fetch it again
            with dask.config.set({"distributed.nanny.pre-spawn-environ": environ,
                                  "distributed.scheduler.active-memory-manager.start": False}):
                cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                                   processes=True,
                                                   dashboard_address="127.0.0.1:0",
                                                   host="127.0.0.1")
            client = distributed.Client(cluster)
        except BaseException:
            # what the interrupted start spawned (only it spawned meanwhile, barring threads)
            _close(client, cluster, _worker_children() - before)
            raise
        if held:  # Ctrl-C came during the start: closed before it is raised (on leaving)
            _close(client, cluster, _worker_children() - before)
    started = _worker_children() - before
    try:
        yield client
    finally:
        with _interrupt_held():
            _close(client, cluster, started)


@contextmanager
def _safe_path_children():
    """``PYTHONSAFEPATH=1`` in this process's environment while a local cluster lives.

    Dask's workers and multiprocessing's resource tracker are started as
    ``python -c ...``, which puts the working directory first on their path
    (see :mod:`modellens._children`).  The nanny copies its pre-spawn
    variables into this process's environment before each start (a
    restarted worker included), so it is held for the cluster's life; the
    resource tracker, started once per process, is started under it.
    """
    from multiprocessing import resource_tracker

    with safe_path():
        resource_tracker.ensure_running()
        yield


def _close(client, cluster, pids):
    """Close the client and the cluster; kill its worker processes still running after.

    ``pids``: the workers' processes known before (a restarted worker's are
    read from the cluster); other processes of the user are left alone.
    """
    pids = set(pids) | _worker_pids(cluster)
    for closing in (client, cluster):
        if closing is not None:
            try:
                closing.close()
            except BaseException:  # noqa: BLE001 - what is left is killed below
                pass
    for pid in pids & _worker_children():  # still ours: not a reused pid
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:  # gone meanwhile, as it should be
            pass


def _worker_pids(cluster) -> set:
    pids = set()
    for nanny in dict(getattr(cluster, "workers", None) or {}).values():
        pid = getattr(getattr(nanny, "process", None), "pid", None)
        if pid:
            pids.add(pid)
    return pids


@contextmanager
def _interrupt_held():
    """Hold SIGINT (Ctrl-C) until the block ends, then deliver it; a second one at once.

    Yields the list of held signals (empty: none came).
    """
    if threading.current_thread() is not threading.main_thread():
        yield []  # signals reach the main thread only
        return
    held: list = []

    def hold(signum, frame):
        if held:
            raise KeyboardInterrupt
        held.append(signum)

    previous = signal.signal(signal.SIGINT, hold)
    try:
        yield held
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            signal.raise_signal(signal.SIGINT)  # the handler the user had: KeyboardInterrupt


def _worker_children() -> set:
    """Pids of this process's children that are Dask worker processes (not the resource tracker)."""
    import psutil  # a dependency of distributed

    out = set()
    for child in psutil.Process().children(recursive=True):
        try:
            line = " ".join(child.cmdline())
        except (psutil.Error, OSError):
            continue
        if "resource_tracker" not in line and ("multiprocessing" in line
                                               or "distributed" in line):
            out.add(child.pid)
    return out
