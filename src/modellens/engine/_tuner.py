"""Rows per model call: the user's ``chunk_size``, or a size tuned on the model's speed.

:class:`ChunkSizer` is the policy alone: the engine feeds it the rows and the
seconds of every chunk it evaluated and reads the size of the next one.  It
holds no model and no clock, so it is tested with synthetic timings.
"""

from __future__ import annotations

__all__ = ["ChunkSizer", "ALIGN_ROWS", "DEFAULT_CHUNK_BYTES", "DEFAULT_CHUNK_ROWS"]

#: Memory cap of one chunk of encoded model rows (float64 matrix), and of the answers
#: that come with them.  A chunk, its answers and the model's own copies and temporaries
#: are alive at once beside what a method keeps (a feature's predictions, DALE's local
#: effects): at 64 MiB they took ALE to 0.74x and DALE to 1.6x the size of 1,000,000 x 10
#: data, and DALE past 2x on 400,000 rows.  Beyond a few 100,000 rows a call gains
#: nothing per row, for any model measured.
DEFAULT_CHUNK_BYTES = 32 * 2**20
#: Rows of the first chunks when the chunk size is tuned (``chunk_size=None``).
DEFAULT_CHUNK_ROWS = 16_384
#: Tuned chunks end at multiples of this many rows of a segment, so that every
#: averaged group is summed in the same pieces whatever sizes the tuner picks.
ALIGN_ROWS = 1024


class ChunkSizer:
    """Rows per model call, fixed by the user or tuned on measured per-row times.

    Parameters
    ----------
    width : int
        Columns of the rows of one chunk (float64), which set the memory cap.
    chunk_size : int or None
        The user's rows per call (an int >= 1, validated by the caller): used
        exactly, never tuned.  None tunes the size.
    total : int
        Rows this sizer will see in all (those of its call key), which bounds
        how much of the run exploration may take.
    tune : bool
        Tune the size (False: keep the start size; the engine passes False when
        chunks run in threads, whose timings share the cores).
    max_rows : int, optional
        A lower cap in rows, for models whose memory per row exceeds that of
        the input rows (a network's activations on a GPU).  It does not limit
        a user ``chunk_size``.
    large : bool, default=False
        The model runs fastest on the largest chunks (a tree ensemble): start
        at ``cap`` and keep it (with ``tune``; see the Notes).

    Attributes
    ----------
    size : int
        Rows the next chunk should have.
    align : int
        A chunk that stops inside a segment stops at a multiple of this many of
        the segment's rows: 1 for a user ``chunk_size`` (or a cap below
        ``ALIGN_ROWS``), ``ALIGN_ROWS`` otherwise.
    cap : int
        Most rows of a tuned chunk: ``DEFAULT_CHUNK_BYTES`` of float64 rows of
        ``width`` columns but at least ``ALIGN_ROWS``, and at most ``max_rows``.
    tuning : bool
        Still exploring; once False, ``size`` no longer changes.

    Notes
    -----
    The per-row time of a model depends on the chunk size in opposite ways:
    a fixed cost per call (Python overhead, a remote call) favours large
    chunks, tree ensembles run about 10% faster per row on 64k chunks than on
    16k, but a dense network whose activations leave the cache runs 1.6x
    slower per row at 64k.  A single timing per size cannot tell these apart
    from noise (a slow second call of a model still warming up sent an earlier
    tuner up to 64k on such a network), so the policy is:

    0. A model known to run fastest on the largest chunks (``large``: a tree
       ensemble) starts at ``cap`` when ``tune``, and is not tuned.  Its
       per-row time only falls with the chunk size (a call costs a pass of
       Python and an OpenMP region per tree, and it holds little beside the
       rows); on a run too short to explore, tuning kept it at 16k chunks,
       14-20% slower per row than one call on 200,000 rows of a
       HistGradientBoosting model (CPU time, one thread).
    1. Start at ``min(DEFAULT_CHUNK_ROWS, cap)``.  Tune only when ``tune``,
       ``total >= 8 * size`` and the cap leaves room above the start.
    2. The first chunk only warms the model up and is not timed.
    3. A candidate size is timed against the best size so far in alternating
       runs of ``RUN`` (2) chunks (candidate, candidate, best, best, ...;
       ``SAMPLES`` (4) each), and each side counts its minimum per-row time.
       Alternating compares the two under the same conditions: the speed of a
       shared machine drifts over a run, which a trial timed after the
       reference would read as a difference between the sizes.  Runs of two,
       because the first chunk after a change of size pays for the other
       size's leftovers in caches and allocator (a 4k chunk of a torch MLP
       right after a 16k one ran 1.6x slower per row than the next); the
       minimum keeps the clean one.  Interference only ever adds time, so the
       fastest chunk is each side's best estimate.  A chunk counts when it has
       between ``size - size // 16`` and ``size`` rows: the chunks the engine
       cuts short at a segment or call-key boundary (less than ``ALIGN_ROWS``
       short) are kept, since even a pure per-call cost moves by less than
       ``GAIN`` over 1/16 of the rows, while the last chunk and chunks built
       at another size are skipped.
    4. Try one step down first (the start ``/ STEP``, when at least
       ``ALIGN_ROWS``): a dense network whose activations fit the cache at
       4k rows runs faster per row there (a torch MLP of 256-256-128 units:
       its best chunk on a 2-core machine).  Its trial is cheap (small chunks;
       a model with a large cost per call loses little on four of them).
       Kept if faster by more than ``GAIN``, and then tuning ends: one more
       step would quadruple the per-call overhead again for a cache gain the
       first step has mostly taken.
    5. Otherwise climb the ladder ``x STEP`` from the start (64k, 256k, ...;
       the last step lands on ``cap``) while the new size is faster per row
       than the best so far by more than ``GAIN`` (5%).  Tree ensembles gain
       about 10% per step, so a 10% threshold let noise decide about half of
       their runs; at 5% they climb in most runs, while a model that gains
       nothing moves up only when noise fakes a 5% gain, which costs memory,
       not time.  A size that is not faster ends tuning on the best size.
    6. Every chunk does useful work, but the chunks of a bad size cost more
       (1.6x on the network above), so a size is only tried while its
       samples take at most ``1 / BUDGET`` of the rows left; otherwise tuning
       ends on the best size.  A losing step up thus slows at most a quarter
       of the rows left, and large sizes are only explored in runs long
       enough to pay them back.
    """

    #: A size replaces the best one only when faster per row by more than this share.
    GAIN = 0.05
    #: Full-size chunks timed per candidate size (their minimum per-row time counts).
    SAMPLES = 4
    #: Consecutive chunks of one size in a trial: the first after a change of size can
    #: pay for the other size's leftovers (caches, allocator), the second runs clean.
    RUN = 2
    #: Ladder factor between candidate sizes.
    STEP = 4
    #: A trial may take at most ``1 / BUDGET`` of the rows left.
    BUDGET = 4

    def __init__(self, width: int, chunk_size: int | None, total: int, *, tune: bool = True,
                 max_rows: int | None = None, large: bool = False):
        self.cap = max(ALIGN_ROWS, DEFAULT_CHUNK_BYTES // (8 * max(1, int(width))))
        if max_rows is not None:
            self.cap = min(self.cap, max(1, int(max_rows)))
        if chunk_size is not None:
            self.size, self.align, self.tuning = int(chunk_size), 1, False
            return
        large = bool(large) and bool(tune)
        self.size = self._start = self.cap if large else min(DEFAULT_CHUNK_ROWS, self.cap)
        # aligned cuts must fit in a chunk, or the chunker could not cut one
        self.align = ALIGN_ROWS if self.cap >= ALIGN_ROWS else 1
        self.tuning = bool(tune) and not large and total >= 8 * self.size \
            and self.size < self.cap
        self._total = total
        self._done = 0
        self._warm = False
        self._best = self.size
        self._up = True
        self._schedule: list[int] = []
        self._rates: dict[int, list[float]] = {}

    def record(self, rows: int, seconds: float) -> None:
        """Take the timing of one evaluated chunk (pass every chunk, short ones too).

        Parameters
        ----------
        rows : int
            Rows of the chunk.
        seconds : float
            Time of the model call alone (not building the rows or folding).
        """
        if not self.tuning:
            return
        self._done += rows
        if not self._warm:
            self._warm = True
            # one cheap step down first: a model bound by the cache is faster there
            if not self._duel(self._start // self.STEP, up=False):
                self._climb()
            return
        if not self.size - self.size // 16 <= rows <= self.size:
            return
        self._rates.setdefault(self.size, []).append(seconds / rows)
        self._schedule.pop(0)
        if self._schedule:
            self.size = self._schedule[0]
            return
        candidate = self._candidate
        faster = min(self._rates[candidate]) < (1 - self.GAIN) * min(self._rates[self._best])
        if faster:
            self._best = candidate
        self.size = self._best
        if self._up:
            if faster:
                self._climb()
            else:
                self._stop()
        elif faster:
            self._stop()
        else:
            self._climb()

    def _climb(self):
        if not self._duel(min(self._best * self.STEP, self.cap), up=True):
            self._stop()

    def _duel(self, size: int, *, up: bool) -> bool:
        """Time ``size`` against the best size in alternating chunks, if it is worth a try.

        Alternating compares the two under the same conditions: a machine's
        speed drifts over a run (other work, clock changes), which a trial
        after the reference would read as a difference between the sizes.
        """
        # only the candidate's chunks risk time: the best size's are what would run anyway
        affordable = self.BUDGET * self.SAMPLES * size <= self._total - self._done
        if size == self._best or size < ALIGN_ROWS or size > self.cap or not affordable:
            return False
        self._candidate, self._up = size, up
        self._rates = {}
        self._schedule = ([size] * self.RUN + [self._best] * self.RUN) \
            * (self.SAMPLES // self.RUN)
        self.size = size
        return True

    def _stop(self):
        self.size, self.tuning = self._best, False
