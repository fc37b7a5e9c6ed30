"""A cluster used well: data sent once, faults in our words, Ctrl-C, the report on a cluster.

Counts of what travels come from two places that do not trust each other: the
block's own record (``ClusterStore.sent``) and a wrapper around the client's
``scatter`` / ``gather`` that pickles what passes (the bytes on the wire, give
or take framing).  The oracle for numbers is the run in this process.
"""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import modellens as ml
from modellens import ModelError
from modellens._config import _current, local_client

from cli_support import pages_without_pictures

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")
psutil = pytest.importorskip("psutil")
cloudpickle.register_pickle_by_value(sys.modules[__name__])

pytestmark = pytest.mark.dask

SRC = str(Path(__file__).resolve().parents[2] / "src")


class Wire:
    """Bytes the client sends (scatter) and receives (gather), pickled as Dask would."""

    def __init__(self, client, monkeypatch):
        self.sent, self.received = [], []
        scatter, gather = client.scatter, client.gather

        def counting_scatter(data, *args, **kwargs):
            self.sent.append(len(cloudpickle.dumps(data)))
            return scatter(data, *args, **kwargs)

        def counting_gather(futures, *args, **kwargs):
            out = gather(futures, *args, **kwargs)
            self.received.append(len(cloudpickle.dumps(out)))
            return out

        monkeypatch.setattr(client, "scatter", counting_scatter)
        monkeypatch.setattr(client, "gather", counting_gather)

    def clear(self):
        self.sent.clear()
        self.received.clear()


def linear_ish(A):
    A = np.asarray(A, dtype=float)
    return np.sin(A[:, 0]) * A[:, 1] + A[:, 2] ** 2 - 0.5 * A[:, 0] * A[:, 3]


class Weighted:
    """A picklable model whose parameters can change in place (as a refit does)."""

    def __init__(self, w):
        self.w = np.asarray(w, dtype=float)

    def predict(self, A):
        return np.asarray(A, dtype=float) @ self.w + np.sin(np.asarray(A, dtype=float)[:, 0])


def _same_effects(a, b):
    assert list(a) == list(b)
    for k in a:
        np.testing.assert_array_equal(a[k].values, b[k].values)


# ------------------------------------------------------------------ data sent once
def _fetched(client):
    """Bytes the workers have fetched from one another (their transfer logs)."""
    logs = client.run(lambda dask_worker: sum(e.get("total", 0)
                                              for e in dask_worker.transfer_incoming_log))
    return sum(logs.values())


def test_a_second_request_on_the_same_data_sends_no_data(client, monkeypatch):
    X = np.random.default_rng(0).normal(size=(60_000, 4))  # 1.9 MB
    model = Weighted([1.0, -2.0, 0.5, 3.0])
    local_pd = ml.pdp(model, X, features=[0, 1], grid=7)
    local_ale = ml.ale(model, X, features=[2], bins=10)
    wire = Wire(client, monkeypatch)
    with ml.config(client=client, progress=False):
        store = _current.get().store
        first = ml.pdp(model, X, features=[0, 1], grid=7)
        assert sum(wire.sent) >= X.nbytes  # the data went once
        assert any(n == X.nbytes for _, n in store.sent)
        wire.clear()
        store.sent.clear()
        fetched_before = _fetched(client)
        time.sleep(2.5)  # an active memory manager (2 s cycle) would drop copies meanwhile
        again = ml.pdp(model, X, features=[0, 1], grid=7)
        other = ml.ale(model, X, features=[2], bins=10)  # another method, the same data
        # only the requests' skeletons travelled: no table, no model
        assert [t for t, _ in store.sent] == ["skeleton", "skeleton"]
        assert sum(wire.sent) < 0.1 * X.nbytes, wire.sent
        # and the workers did not fetch the data from one another either
        assert _fetched(client) - fetched_before < 0.05 * X.nbytes
    _same_effects(local_pd, first)
    _same_effects(local_pd, again)
    _same_effects(local_ale, other)


def test_data_or_model_changed_in_place_are_sent_again(client):
    X = np.random.default_rng(1).normal(size=(40_000, 4))
    model = Weighted([1.0, -2.0, 0.5, 3.0])
    with ml.config(client=client, progress=False):
        store = _current.get().store
        ml.pdp(model, X, features=[0], grid=5)
        X[:, 0] *= 2.0  # the same array object, other numbers
        store.sent.clear()
        changed_data = ml.pdp(model, X, features=[0], grid=5)
        assert any(n == X.nbytes for _, n in store.sent)
        model.w[1] = 7.0  # a "refit" in place
        store.sent.clear()
        changed_model = ml.pdp(model, X, features=[0], grid=5)
        assert any(t.startswith("model-") for t, _ in store.sent)
        assert not any(n == X.nbytes for _, n in store.sent)
    _same_effects(ml.pdp(model, X, features=[0], grid=5), changed_model)
    model.w[1] = -2.0
    _same_effects(ml.pdp(model, X, features=[0], grid=5), changed_data)


def _on_workers(client):
    return set().union(*map(set, client.has_what().values()))


def test_the_block_frees_what_it_sent_when_it_ends(client):
    X = np.random.default_rng(2).normal(size=(30_000, 4))
    before = _on_workers(client)
    with ml.config(client=client, progress=False):
        ml.pdp(linear_ish, X, features=[0], grid=5)
        keys = {f.key for f in _current.get().store.futures.values()}
        assert keys and keys <= _on_workers(client)
    deadline = time.monotonic() + 30
    while _on_workers(client) & keys and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _on_workers(client) & keys
    assert _on_workers(client) <= before | keys


def test_dask_dataframe_partitions_never_come_to_the_client(client, monkeypatch):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(rng.normal(size=(160_000, 4)), columns=list("abcd"))
    X = dd.from_pandas(frame, npartitions=8).persist()
    distributed.wait(X)
    wire = Wire(client, monkeypatch)
    data_bytes = frame.to_numpy().nbytes
    with ml.config(client=client, progress=False):
        store = _current.get().store
        effects = ml.pdp(linear_ish, X, features=["a", "b"], grid=6)
        assert sum(wire.received) < 0.05 * data_bytes, wire.received  # summaries only
        assert sum(wire.sent) < 0.05 * data_bytes, wire.sent
        store.sent.clear()
        ml.ale(linear_ish, X, features=["c"], bins=8)
        assert not any(t.startswith("model-") for t, _ in store.sent)  # the model stayed
    local = ml.pdp(linear_ish, frame, features=["a", "b"], grid=np.asarray(effects["a"].grid))
    np.testing.assert_allclose(effects["a"].values, local["a"].values, rtol=0, atol=1e-12)


# ------------------------------------------------------------------ faults
def fails_on_big_a(frame):
    a = np.asarray(frame["a"], dtype=float)
    if (a > 1e6).any():
        raise ValueError("the model cannot take a above a million")
    return a + np.asarray(frame["b"], dtype=float)


@pytest.mark.parametrize("on_cluster", [True, False])
def test_a_failing_partition_is_named_with_its_rows(client, on_cluster):
    frame = pd.DataFrame({"a": np.arange(12_000, dtype=float), "b": np.ones(12_000)})
    frame.loc[7_500, "a"] = 2e6  # in the third of four partitions: rows 6,000 to 8,999
    X = dd.from_pandas(frame, npartitions=4)
    block = ml.config(client=client) if on_cluster else ml.config()
    with block, pytest.raises(ModelError, match="a above a million") as caught:
        ml.pdp(fails_on_big_a, X, features=["b"], grid=3)
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    assert "partition 2 of 4" in notes and "rows 6,000 to 8,999" in notes, notes


def _dies_once(frame, flag):
    try:
        os.close(os.open(flag, os.O_CREAT | os.O_EXCL))  # one worker wins the flag...
    except FileExistsError:
        pass
    else:
        os._exit(1)  # ...and its process dies under the partition
    return np.asarray(frame["a"], dtype=float) * 2.0 + np.asarray(frame["b"], dtype=float)


def _always_dies(frame):
    os._exit(1)


@pytest.fixture
def fragile_client():
    """A cluster of its own (workers die here); Dask gives up after one retry."""
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        with local_client(2) as c:
            yield c


def test_out_of_core_lost_worker_is_retried_or_ends_in_model_error(fragile_client, tmp_path):
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"a": rng.normal(size=6_000), "b": rng.uniform(size=6_000)})
    X = dd.from_pandas(frame, npartitions=3)
    flag = str(tmp_path / "died")
    with ml.config(client=fragile_client, progress=False):
        # a worker dies once: Dask retries its partition elsewhere, the numbers are whole
        effects = ml.ale(lambda D: _dies_once(D, flag), X, features=["a"], bins=6)
        assert os.path.exists(flag)
        # every try dies: Dask gives up, and the user gets our error, not a partial result
        with pytest.raises(ModelError, match="(died|lost).*no result is returned"):
            ml.ale(_always_dies, X, features=["a"], bins=6)
    edges = np.asarray(effects["a"].grid)
    local = ml.ale(lambda D: _dies_once(D, flag), frame, features=["a"], bins=edges)
    np.testing.assert_allclose(effects["a"].values, local["a"].values, rtol=0, atol=1e-12)


# ------------------------------------------------------------------ Ctrl-C
_STARTER = """
import signal, sys, time
# Ctrl-C must reach this process whatever the test process had when it started it: a
# SIGINT ignored or blocked there (a library's resource tracker or kernel sets SIG_IGN and
# blocks it around a spawn) is inherited through exec, and the interrupt would never come
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
signal.signal(signal.SIGINT, signal.default_int_handler)
import psutil
import modellens as ml
if __name__ == "__main__":
    try:
        with ml.config(n_workers=2):
            print("started", flush=True)
            time.sleep(600)
    except KeyboardInterrupt:
        # at the moment the interrupt reaches the user no worker may still run; one killed
        # a moment ago may still be on its way out on a loaded machine, so give the kernel a
        # (generous) while to finish killing them: a worker left running stays far longer
        children = [p for p in psutil.Process().children(recursive=True)
                    if "resource_tracker" not in " ".join(p.cmdline())]
        _, alive = psutil.wait_procs(children, timeout=120)
        running = [p for p in alive if p.status() != psutil.STATUS_ZOMBIE]
        print(f"worker processes at the interrupt: {len(running)}", flush=True)
        raise
"""

#: Bounds of the waits below: generous, never deadlines a slow machine would miss (each
#: wait polls and ends as soon as what it waits for has happened).
PATIENCE = 300


def _is_worker(cmdline):
    line = " ".join(cmdline)
    return "resource_tracker" not in line


def _still_running(seen):
    """The processes of ``seen`` (pid: (process, command line)) still running.

    A process is the one seen, not another that got its pid since (other tests start
    processes at the same time, and pids are reused): ``is_running`` compares the
    start time psutil recorded when it first saw it."""
    left = []
    for pid, (p, cmdline) in seen.items():
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE \
                    and _is_worker(cmdline or p.cmdline()):
                left.append((pid, " ".join(p.cmdline())[:100]))
        except psutil.Error:
            pass
    return left


@pytest.mark.parametrize("moment", ["first_process", "starting", "running"])
def test_ctrl_c_leaves_no_worker_process(tmp_path, moment):
    """Only the processes the starter spawned are watched (never others left by earlier
    tests), and every wait polls up to a generous bound instead of sleeping a fixed time."""
    script = tmp_path / "start.py"
    script.write_text(textwrap.dedent(_STARTER))
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env, text=True,
                            start_new_session=True)  # its own group: no stray Ctrl-C
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    parent = psutil.Process(proc.pid)
    seen, first_seen = {}, None
    deadline = time.monotonic() + PATIENCE
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                for child in parent.children(recursive=True):
                    if child.pid not in seen:
                        try:
                            seen[child.pid] = (child, child.cmdline())
                        except psutil.Error:
                            seen[child.pid] = (child, [])
            except psutil.Error:
                break
            if seen and first_seen is None:
                first_seen = time.monotonic()
            if moment == "first_process" and first_seen is not None:
                break
            # a moment while the cluster starts (its first process is there, "started" not
            # yet printed); on a fast machine it may have started already, which is "running"
            if moment == "starting" and first_seen is not None \
                    and (time.monotonic() - first_seen > 1.0
                         or any("started" in line for line in lines)):
                break
            if moment == "running" and any("started" in line for line in lines):
                break
            time.sleep(0.005)
        assert proc.poll() is None, "".join(lines)
        assert seen
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=PATIENCE)
        reader.join(timeout=PATIENCE)
        output = "".join(lines)
        assert proc.returncode != 0
        assert "KeyboardInterrupt" in output, output
        assert "worker processes at the interrupt: 0" in output, output
        deadline = time.monotonic() + 120  # a poll: it ends when they have gone
        while _still_running(seen) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = _still_running(seen)
        assert not left, left
    finally:  # (a failing run must not leave its processes to the next tests)
        if proc.poll() is None:
            proc.kill()
        for pid, _ in _still_running(seen):
            try:
                seen[pid][0].kill()  # (psutil checks it is still the process seen)
            except psutil.Error:
                pass


# ------------------------------------------------------------------ the report
def _report_model():
    from sklearn.neural_network import MLPRegressor

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 4)), columns=list("abcd"))
    y = 2 * X.a + X.b ** 2 + X.c * X.d
    model = MLPRegressor(hidden_layer_sizes=(8,), max_iter=300, random_state=0).fit(X, y)
    return model, X, y


def test_report_on_a_cluster_says_so_and_has_the_same_numbers(client):
    import warnings

    model, X, y = _report_model()
    kwargs = dict(sample=120, n_explain=6, grid=5, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        here = ml.report(model, X, y, **kwargs)
        there = ml.report(model, X, y, client=client, **kwargs)
    assert "computed on" not in here.settings
    line = there.settings["computed on"]
    assert "Dask cluster" in line and "2 workers" in line and client.scheduler.address in line
    with pages_without_pictures():  # (the page's text is read, not its pictures)
        page = there.to_html()
    assert "computed on" in page and "Dask cluster (2 workers" in page
    a, b = here.sections, there.sections
    assert list(a) == list(b)
    _same_effects(a["effects"].data["pdp"], b["effects"].data["pdp"])
    for k in a["effects"].data["ale"]:
        np.testing.assert_array_equal(a["effects"].data["ale"][k].values,
                                      b["effects"].data["ale"][k].values)
    assert a["effects"].data["importance"] == b["effects"].data["importance"]
    assert a["interaction"].data["pair"] == b["interaction"].data["pair"]
    assert a["interaction"].data["strength"] == b["interaction"].data["strength"]
    for key in ("shapley", "lime"):
        np.testing.assert_array_equal(a[key].data["attributions"].values,
                                      b[key].data["attributions"].values)
    assert a["quality"].data["metrics"] == b["quality"].data["metrics"]


def test_cli_report_on_a_scheduler_or_workers(client, tmp_path, capsys, monkeypatch):
    from contextlib import contextmanager

    import skops.io as sio

    import modellens._config as config_module
    from modellens.cli import main

    model, X, y = _report_model()
    X.assign(target=y).to_csv(tmp_path / "data.csv", index=False)
    sio.dump(model, tmp_path / "model.skops")
    base = ["report", "--data", tmp_path / "data.csv", "--target", "target", "--model",
            tmp_path / "model.skops", "--sample", "120", "--explain", "6", "--grid", "5",
            "--trust-model-file"]

    def run(*extra):
        with pages_without_pictures():  # the pages' text is read, not their pictures
            return main([str(a) for a in base + list(extra)])

    out = tmp_path / "s.html"
    assert run("--out", out, "--scheduler", client.scheduler.address) == 0, \
        capsys.readouterr().err
    assert "Dask cluster (2 workers" in out.read_text(encoding="utf-8")
    # --workers N starts a LocalCluster of N processes (here: stands in the module's one)
    started = []

    @contextmanager
    def fake_local_client(n):
        started.append(n)
        yield client

    monkeypatch.setattr(config_module, "local_client", fake_local_client)
    out = tmp_path / "w.html"
    assert run("--out", out, "--workers", "3") == 0, capsys.readouterr().err
    assert started == [3] and "Dask cluster (2 workers" in out.read_text(encoding="utf-8")
    with pytest.raises(SystemExit):
        run("--out", out, "--workers", "2", "--scheduler", "tcp://x:1")
    assert "not allowed with argument" in capsys.readouterr().err
    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        code = run("--out", out, "--scheduler", "tcp://127.0.0.1:9")
    err = capsys.readouterr().err
    assert code == 1 and "--scheduler: could not connect" in err, err
