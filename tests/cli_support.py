"""Running the command line inside a test."""

import contextlib

import pytest

from modellens.cli import main


def _run(argv, capsys):
    """Exit status, stdout and stderr; argparse's errors exit through SystemExit."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def _one_error_line(err):
    lines = [line for line in err.strip().splitlines() if line]
    assert "Traceback" not in err
    assert lines and "error:" in lines[-1]
    assert len(lines) == 1, err
    return lines[-1]


#: A child that imports the command line once, then forks a process per command: each
#: command runs as ``python -m modellens`` would (``sys.exit(main(argv))``: an uncaught
#: exception prints its traceback and exits 1, a signal kills only that process), in its
#: own working directory, its stderr (the file descriptor, so that a library's C code
#: writing there is seen too) in its own file.  Started fresh, each of those processes
#: paid ``import modellens.cli`` (about 1 s of CPU) and, for a .skops file,
#: ``import skops.io`` (about 4 s more) before a refusal that takes milliseconds.  Each
#: ends as the interpreter would, its exit handlers run, but without tearing down every
#: module the driver imported (``os._exit``): that teardown cost 1.4 s of CPU a command,
#: more than the refusal (9 commands: 23.4 s of CPU with it, 10.3 s without).
FORKING_DRIVER = """\
import atexit, json, os, signal, sys, time, traceback
import modellens.cli
for name in sys.argv[3:]:  # what every command of the batch imports anyway
    __import__(name)
commands, deadline = json.load(open(sys.argv[1])), float(sys.argv[2])
for i, (argv, cwd, err) in enumerate(commands):
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.chdir(cwd)
        os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        try:
            status = modellens.cli.main(argv)
        except SystemExit as stop:  # its status as the interpreter reads it
            status = stop.code
        except BaseException:
            traceback.print_exc()
            status = 1
        if not isinstance(status, (int, type(None))):
            print(status, file=sys.stderr)
        atexit._run_exitfuncs()
        sys.stderr.flush()
        # without tearing down what the driver imported (skops, torch: ~1 s of CPU each)
        os._exit(status if isinstance(status, int) else status is not None)
    end = time.monotonic() + deadline
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)  # -N: killed by signal N
            break
        if time.monotonic() > end:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            code = "hang"
            break
        time.sleep(0.01)
    print(json.dumps({"i": i, "code": code}), flush=True)
os._exit(0)  # (as its children: nothing to tear down)
"""


def run_commands_forked(commands, folder, *, preload=(), deadline=240, env=None):
    """``[(exit status, stderr)]`` of each ``(argv, working directory)`` in ``commands``, each
    in its own process forked from one that imported the command line (and ``preload``):
    a negative status is the signal that ended it, ``"hang"`` one killed at ``deadline``
    seconds.  Use it where a test needs a fresh process per command (a crash ends only that
    command) but not a fresh interpreter (a test of the import itself, or of ``-m``, does)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    folder = Path(folder)
    errs = [folder / f"stderr-{i}.txt" for i in range(len(commands))]
    manifest = folder / "commands.json"
    manifest.write_text(json.dumps([[[str(a) for a in argv], str(cwd), str(err)]
                                    for (argv, cwd), err in zip(commands, errs)]))
    done = subprocess.run([sys.executable, "-c", FORKING_DRIVER, str(manifest), str(deadline),
                           *preload], capture_output=True, text=True, env=env,
                          timeout=60 + deadline * len(commands))
    assert done.returncode == 0, done.stderr[-3000:]
    codes = {r["i"]: r["code"] for r in map(json.loads, done.stdout.splitlines())}
    assert sorted(codes) == list(range(len(commands))), done.stdout
    return [(codes[i], err.read_text() if err.exists() else "") for i, err in enumerate(errs)]


def _blank_png() -> bytes:
    """A valid 2 x 2 transparent PNG (its IHDR gives the page a width)."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + b"\x00" * 8 for _ in range(2))  # filter byte + 2 RGBA pixels
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


@contextlib.contextmanager
def pages_without_pictures():
    """Pages (``Report.to_html``, ``save``, the command line's ``--out``) whose pictures are
    a blank PNG instead of drawn: for a test that reads a page's text and a report's
    numbers, never its pixels.  Drawing the pictures is most of a small report's CPU
    (``savefig`` draws each figure twice, ~60 % of a 40-row report); the figures are still
    built with the sections, and tests/report draws and checks the real ones."""
    from modellens.report import _render

    blank = _blank_png()

    def keep_blank(figures):
        for figure in figures:
            if not figure.rendered:
                figure._keep(blank)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_render, "render_figures", keep_blank)
        yield
