"""Progress bars end as one finished line (a terminal, a log, a notebook), not a frozen 0 %."""

import numpy as np
from tqdm import tqdm

import modellens as ml
from modellens._progress import _NotebookLine, progress_bar


class _Handle:
    """A stand-in for IPython's display handle: records what the output shows."""

    def __init__(self, shown):
        self.shown = shown

    def update(self, bundle, raw):
        assert raw
        self.shown.append(bundle["text/plain"])


class _Display:
    def __init__(self):
        self.outputs = []  # one list of successive states per output

    def __call__(self, bundle, raw, display_id):
        assert raw and display_id
        self.outputs.append([bundle["text/plain"]])
        return _Handle(self.outputs[-1])


def _states(err):
    """The bar's states as written to a stream (each starts with a carriage return)."""
    return [s.rstrip() for s in err.split("\r") if s.strip()]


def test_a_run_leaves_its_finished_line_in_a_log(capsys):
    X = np.random.default_rng(0).normal(size=(500, 2))
    ml.pdp(lambda A: A[:, 0], X, grid=10, chunk_size=100, progress=True)
    err = capsys.readouterr().err
    states = _states(err)
    assert states[0].startswith("pdp: 10,000 model rows:   0%")
    # the last state is the finished bar, on a line of its own (not blanked out)
    assert "100%" in states[-1] and "10000/10000" in states[-1]
    assert err.endswith("\n")


def test_a_bar_inside_another_clears_itself():
    outer = progress_bar(total=2, desc="outer")
    inner = progress_bar(total=3, desc="inner")
    assert outer.leave and not inner.leave
    inner.close()
    outer.close()
    assert progress_bar(total=1, desc="alone").leave  # none open any more


def test_notebook_line_keeps_only_the_final_state():
    display = _Display()
    bar = tqdm(total=400, desc="pdp", file=_NotebookLine(display), mininterval=0, leave=True,
               ncols=100, position=0)
    for _ in range(4):
        bar.update(100)
    bar.close()
    # one output, replaced in place; what a saved notebook keeps is its last state
    (shown,) = display.outputs
    assert shown[0].startswith("pdp:   0%")
    assert "100%" in shown[-1] and "400/400" in shown[-1]
    assert all("\r" not in s and "\n" not in s for s in shown)


def test_notebook_line_of_a_nested_bar_ends_empty():
    display = _Display()
    bar = tqdm(total=10, desc="inner", file=_NotebookLine(display), mininterval=0,
               leave=False, position=0)
    bar.update(10)
    bar.close()
    (shown,) = display.outputs
    assert any("100%" in s for s in shown) and shown[-1] == ""


def test_outside_a_kernel_the_bar_writes_to_stderr():
    assert _NotebookLine.if_in_notebook() is None
