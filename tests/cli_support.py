"""Running the command line inside a test."""

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
