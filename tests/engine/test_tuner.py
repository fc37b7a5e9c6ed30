"""The chunk-size policy, driven by synthetic timings (no model, no clock)."""

import math

import numpy as np
import pytest

from modellens.engine import _tuner
from modellens.engine._tuner import ALIGN_ROWS, DEFAULT_CHUNK_ROWS, ChunkSizer

START = DEFAULT_CHUNK_ROWS
SEEDS = range(20)


def _steps(n):
    """Ladder steps of ``n`` rows from the start size (64k is 1, 4096 is -1)."""
    return math.log(n / START, 4)


def mlp(n):
    """Per-row cost of a dense network whose activations leave the cache above 16k rows."""
    return 1.0 if n <= START else 1.0 + 0.6 * _steps(n)  # 1.6 at 64k, 2.2 at 256k


def tree(gain=0.15, flat_from=4 * 4 * START):
    """Per-row cost that falls by ``gain`` per x4 step, flat from ``flat_from`` rows on."""
    return lambda n: (1 - gain) ** _steps(min(n, flat_from))


def per_call(call=5e6, row=1.0):
    """A fixed cost per call (``call`` rows' worth) plus a small cost per row."""
    return lambda n: row + call / n


def noisy(seed, sigma=0.15, skew=0.0, outlier_within=8):
    """Multiplicative noise per chunk: lognormal jitter, an optional one-sided
    exponential slowdown (interference only adds time) and one chunk 3x slower
    among the first ``outlier_within`` (while the tuner explores)."""
    rng = np.random.default_rng(seed)
    slow = rng.integers(outlier_within)

    def factor(i):
        f = rng.lognormal(0.0, sigma) * (1.0 + rng.exponential(skew) if skew else 1.0)
        return 3.0 * f if i == slow else f
    return factor


def simulate(cost, total=20_000_000, *, width=8, chunk_size=None, tune=True, noise=None,
             slow=None, max_rows=None):
    """Run a sizer over ``total`` rows as the engine does; return it and the chunk sizes.

    ``slow`` maps chunk indices to extra slowdown factors (e.g. a straggling warm-up).
    """
    sizer = ChunkSizer(width, chunk_size, total, tune=tune, max_rows=max_rows)
    sizes, left = [], total
    while left:
        rows = min(sizer.size, left)
        seconds = rows * cost(rows)
        if noise is not None:
            seconds *= noise(len(sizes))
        if slow is not None:
            seconds *= slow.get(len(sizes), 1.0)
        sizer.record(rows, seconds)
        sizes.append(rows)
        left -= rows
        assert rows <= sizer.cap or chunk_size is not None
    return sizer, sizes


def test_mlp_like_model_returns_to_cache_sized_chunks_after_a_short_trial():
    sizer, sizes = simulate(mlp)
    assert not sizer.tuning and sizer.size == START
    assert sizes[-2] == START
    assert max(sizes) == 4 * START
    # the larger size only got its timed chunks, then every chunk was back at 16k
    assert sizes.count(4 * START) == ChunkSizer.SAMPLES


@pytest.mark.parametrize("slow", [{0: 10.0, 1: 2.0}, {0: 10.0, 1: 2.0, 2: 2.0}])
def test_a_straggling_warm_up_does_not_send_an_mlp_to_larger_chunks(slow):
    # torch-like warm-up: the first call is slow and the next one or two too; a
    # tuner that trusts the first timed chunk at 16k climbs to 64k here
    sizer, _ = simulate(mlp, slow=slow)
    assert sizer.size <= START


def test_mlp_that_is_faster_below_the_start_steps_down_once():
    def cost(n):  # activations already leave the cache at 16k: 4096 is 25% faster
        return mlp(n) * (0.75 if n <= START // 4 else 1.0) * (1 + 256 / n)

    sizer, sizes = simulate(cost)
    assert sizer.size == START // 4
    assert min(sizes[:-1]) == START // 4  # never below one step down, though 1024 would be as fast
    # a flat curve below the start does not move to smaller chunks
    sizer, _ = simulate(lambda n: mlp(n) * (1 + 256 / n))
    assert sizer.size == START


def test_tree_like_model_climbs_while_larger_chunks_are_faster():
    sizer, sizes = simulate(tree(0.15))
    assert not sizer.tuning
    assert sizer.size == 16 * START  # faster up to 256k, flat beyond: back from 1M
    assert sizes[-2] == 16 * START
    # a gain below GAIN is not worth a change
    sizer, _ = simulate(tree(0.05))
    assert sizer.size == START


@pytest.mark.parametrize("width", [3, 16, 100])
def test_fixed_cost_per_call_grows_to_the_cap(width):
    sizer, sizes = simulate(per_call(), total=60_000_000, width=width)
    assert sizer.cap == _tuner.DEFAULT_CHUNK_BYTES // (8 * width)
    assert sizer.size == sizer.cap  # the last step lands on the cap, not on 4x the size
    assert max(sizes) == sizer.cap


def test_a_shorter_run_stops_climbing_where_the_next_trial_does_not_fit():
    # 2M rows: after 16k and 64k, three 256k chunks would take over a quarter of the rest
    sizer, sizes = simulate(per_call(), total=2_000_000)
    assert sizer.size == 4 * START and max(sizes) == 4 * START


@pytest.mark.parametrize("seed", SEEDS)
def test_mlp_decision_holds_under_noise(seed):
    sizer, _ = simulate(mlp, noise=noisy(seed, sigma=0.15))
    assert sizer.size <= START


@pytest.mark.parametrize("seed", SEEDS)
def test_tree_decision_holds_under_noise(seed):
    # Timing noise is mostly one-sided (interference only adds time), which the
    # minimum of three chunks removes; symmetric noise as wide as the margin
    # (lognormal sigma 0.15 against 20% - 10%) cannot be resolved by a few chunks.
    sizer, _ = simulate(tree(0.2), noise=noisy(seed, sigma=0.03, skew=0.05))
    assert sizer.size > START


@pytest.mark.parametrize("seed", SEEDS)
def test_fixed_cost_decision_holds_under_noise(seed):
    sizer, _ = simulate(per_call(), total=60_000_000, width=16, noise=noisy(seed, sigma=0.15))
    assert sizer.size == sizer.cap


@pytest.mark.parametrize("width", [600, 5000, 10**6])
def test_cap_is_respected_for_wide_rows(width):
    sizer, sizes = simulate(per_call(), total=10_000_000, width=width)
    cap = max(ALIGN_ROWS, _tuner.DEFAULT_CHUNK_BYTES // (8 * width))
    assert sizer.cap == cap < START
    assert sizes[0] == cap and max(sizes) == cap
    assert not sizer.tuning  # nothing above the start to try


@pytest.mark.parametrize("max_rows", [2**15, 100_000])
def test_max_rows_lowers_the_cap(max_rows):
    sizer, sizes = simulate(per_call(), total=60_000_000, width=11, max_rows=max_rows)
    assert sizer.cap == max_rows and sizer.size == max_rows and max(sizes) == max_rows
    assert sizer.align == ALIGN_ROWS


def test_max_rows_below_the_alignment_gives_fixed_unaligned_chunks():
    sizer, sizes = simulate(per_call(), total=100_000, width=11, max_rows=500)
    assert sizer.cap == 500 and sizer.align == 1 and not sizer.tuning
    assert set(sizes) == {500}
    # a user chunk size is not limited by max_rows
    assert ChunkSizer(11, 4096, 10**6, max_rows=500).size == 4096


def test_a_trial_takes_at_most_a_quarter_of_the_rows_left():
    for total in [150_000, 400_000, 1_000_000, 3_000_000]:
        _, sizes = simulate(mlp, total=total)
        # rows spent on the losing 64k trial
        assert sum(s for s in sizes if s > START) <= total / ChunkSizer.BUDGET
    _, sizes = simulate(per_call(), total=400_000)
    assert max(sizes) == START  # too short a run to try 64k at all


@pytest.mark.parametrize("chunk_size", [1, 1000, 10**7])
def test_user_chunk_size_is_never_changed(chunk_size):
    total = min(3 * 10**7, 5000 * chunk_size)
    sizer, sizes = simulate(per_call(), total=total, width=5000, chunk_size=chunk_size)
    assert sizer.size == chunk_size and sizer.align == 1 and not sizer.tuning
    assert set(sizes[:-1]) == {chunk_size}


def test_no_tuning_keeps_the_start_size():
    sizer, sizes = simulate(per_call(), tune=False)
    assert not sizer.tuning and set(sizes[:-1]) == {START}
    assert sizer.align == ALIGN_ROWS
    sizer, sizes = simulate(per_call(), total=8 * START - 1)
    assert not sizer.tuning and sizes[0] == START and sizer.size == START


def _feed(sizer, rates, *, stale=0.0):
    """Answer the sizer's chunks until its trial ends, with a stale and a short chunk first."""
    candidate, trial = sizer._candidate, set(sizer._schedule)
    while sizer.tuning and sizer._candidate == candidate:
        size = sizer.size
        other = (trial - {size}).pop()
        sizer.record(other, other * stale)  # a chunk of the other size: ignored
        sizer.record(size // 2, 0.0)  # a short chunk, absurdly fast: ignored
        sizer.record(size, size * rates[size])


def test_chunks_of_another_size_are_not_compared():
    # The engine cuts chunks short at segment and call-key boundaries, and a chunk
    # built before a change of size can arrive after it; none of them is timed.
    sizer = ChunkSizer(8, None, 10**8)
    sizer.record(START, 1.0)  # warm-up
    assert sizer.size == START // 4  # the step down is tried first, against the start
    _feed(sizer, {START // 4: 1.0, START: 1.0})
    assert sizer.size == 4 * START  # not faster below: climb from the start
    _feed(sizer, {4 * START: 0.8, START: 1.0})
    assert sizer.size == 16 * START and sizer.tuning
    # a chunk up to 1/16 short counts (cut at an aligned boundary)
    while sizer.tuning:
        size = sizer.size
        sizer.record(size - START if size == 16 * START else size,
                     size * (1.0 if size == 16 * START else 0.8))
    assert sizer.size == 4 * START and not sizer.tuning


def test_alternating_trials_cancel_a_drift_of_the_machine():
    # the machine slows down steadily while a size that is really 10% faster is tried;
    # timed one after the other it would look slower, alternated it wins
    sizer = ChunkSizer(8, None, 10**8)
    cost = {START // 4: 1.1, START: 1.0, 4 * START: 0.9}
    drift = 1.0
    sizer.record(START, 1.0)
    while sizer.tuning and sizer.size in cost:
        drift *= 1.03
        sizer.record(sizer.size, sizer.size * cost[sizer.size] * drift)
    assert sizer.size >= 4 * START


def test_size_is_constant_once_tuning_ends():
    for cost in [mlp, tree(0.15), per_call()]:
        sizer = ChunkSizer(8, None, 20_000_000)
        sizes, left, ended = [], 20_000_000, None
        noise = noisy(0)
        while left:
            rows = min(sizer.size, left)
            sizer.record(rows, rows * cost(rows) * noise(len(sizes)))
            sizes.append(rows)
            left -= rows
            if ended is None and not sizer.tuning:
                ended = len(sizes)
        assert ended is not None
        assert set(sizes[ended:-1]) == {sizer.size}


@pytest.mark.parametrize("total", [20_000, 20_000_000])
def test_a_model_fastest_on_large_chunks_starts_at_the_cap_untuned(total):
    # a tree ensemble: chunks at the memory cap from the first, short run or long
    sizer = ChunkSizer(10, None, total, large=True)
    assert sizer.size == sizer.cap and not sizer.tuning and sizer.align == ALIGN_ROWS
    # threads (tune=False) keep the start size: their chunks share the work
    assert ChunkSizer(10, None, total, tune=False, large=True).size == START
    assert ChunkSizer(10, 500, total, large=True).size == 500  # the user's size is kept
    assert ChunkSizer(10, None, total, large=True, max_rows=2**15).size == 2**15
