"""Segments: the rows they build, where the engine cuts chunks, and how answers are folded.

Every expectation is an independent, naive construction written here (numpy
loops, ``np.repeat`` / ``np.tile``), never a call back into the code under test.
"""

from types import SimpleNamespace

import numpy as np
import pytest

import modellens as ml
from modellens._config import Options, resolve_options
from modellens.attribution._masking import MaskedRows
from modellens.data import Dataset
from modellens.engine import (ALIGN_ROWS, ChunkSizer, DataRows, GradientRows, GridRows,
                              Segment, ShiftedRows, _tuner, evaluate)
from modellens.engine._run import _chunks
from modellens.models import Model


# ------------------------------------------------------------------ helpers
def _base(m, d, seed=0):
    return np.random.default_rng(seed).normal(size=(m, d))


def _windows(n, seed=0, count=25):
    """(start, stop) windows of rows: the whole range, empty ones, ends, and random ones."""
    rng = np.random.default_rng(seed)
    out = [(0, n), (0, 0), (n, n), (0, 1), (max(n - 1, 0), n)]
    for _ in range(count):
        a, b = np.sort(rng.integers(0, n + 1, size=2))
        out.append((int(a), int(b)))
    return out


def _model(fn, d, seed=0):
    """A Model wrapping a plain numpy function of (rows, d) arrays."""
    return Model(fn, Dataset.from_data(_base(5, d, seed)))


def _naive_grid_kc(base, rows, columns, values):
    """values (k, c): every setting applied to every (selected) base row, setting-major."""
    b = base if rows is None else base[rows]
    m, k = b.shape[0], values.shape[0]
    out = np.tile(b, (k, 1))
    out[:, columns] = np.repeat(values, m, axis=0)
    return out


def _naive_grid_kmc(base, rows, columns, values):
    """values (k, m, c): one value vector per setting and base row."""
    b = base if rows is None else base[rows]
    m = b.shape[0]
    out = []
    for s in range(values.shape[0]):
        for i in range(m):
            row = b[i].copy()
            row[columns] = values[s, i]
            out.append(row)
    return np.array(out).reshape(-1, base.shape[1])


def _naive_grid_index(base, rows, columns, table, index, offsets):
    """Row i of setting s takes table[index[i] + offsets[s]]."""
    b = base if rows is None else base[rows]
    out = []
    for s in offsets:
        for i in range(b.shape[0]):
            row = b[i].copy()
            row[columns] = table[int(index[i]) + s]
            out.append(row)
    return np.array(out).reshape(-1, base.shape[1])


def _check_windows(seg, expected, seed=0):
    assert seg.n_rows == expected.shape[0]
    assert seg.width == expected.shape[1]
    np.testing.assert_array_equal(seg.rows(0, seg.n_rows), expected)
    for a, b in _windows(seg.n_rows, seed):
        got = seg.rows(a, b)
        assert got.shape == (b - a, expected.shape[1])
        np.testing.assert_array_equal(got, expected[a:b], err_msg=f"rows({a}, {b})")
        # fill writes every cell of a buffer that already holds something else
        out = np.full((b - a, expected.shape[1]), np.nan)
        seg.fill(a, b, out)
        np.testing.assert_array_equal(out, expected[a:b], err_msg=f"fill({a}, {b})")


# GridRows.fill: windows over two or more whole settings take the broadcast path, the rest
# the gather path (m < 256) or the per-setting block path (m >= 256)
SIZES = [1, 7, 255, 256, 300]


# ------------------------------------------------------------------ GridRows
@pytest.mark.parametrize("m", SIZES)
@pytest.mark.parametrize("columns", [(2,), (0, 3), (3, 1, 0)])
def test_grid_rows_one_value_vector_per_setting(m, columns):
    base = _base(m, 4, seed=m)
    k = 5
    values = np.random.default_rng(1).normal(size=(k, len(columns)))
    seg = GridRows(base, columns, values)
    assert (seg.m, seg.k, seg.group) == (m, k, 1)
    _check_windows(seg, _naive_grid_kc(base, None, list(columns), values), seed=m)
    base_before = base.copy()
    seg.rows(0, seg.n_rows)
    np.testing.assert_array_equal(base, base_before)  # the shared base is never written


@pytest.mark.parametrize("m", SIZES)
def test_grid_rows_one_dimensional_values_are_one_column_settings(m):
    base = _base(m, 3, seed=m)
    grid = np.linspace(-1, 1, 6)
    seg = GridRows(base, 1, grid)
    _check_windows(seg, _naive_grid_kc(base, None, [1], grid[:, None]), seed=m)


@pytest.mark.parametrize("m", SIZES)
@pytest.mark.parametrize("columns", [(1,), (0, 2)])
def test_grid_rows_one_value_vector_per_setting_and_row(m, columns):
    base = _base(m, 3, seed=m)
    k = 3
    values = np.random.default_rng(2).normal(size=(k, m, len(columns)))
    seg = GridRows(base, columns, values)
    _check_windows(seg, _naive_grid_kmc(base, None, list(columns), values), seed=m + 1)


@pytest.mark.parametrize("m", SIZES)
@pytest.mark.parametrize("per_row", [False, True])
def test_grid_rows_gather_a_subset_of_base_rows(m, per_row):
    big = _base(m + 40, 4, seed=m)
    rows = np.random.default_rng(3).choice(m + 40, size=m, replace=False)  # unsorted
    columns = (0, 2)
    k = 4
    rng = np.random.default_rng(4)
    if per_row:
        values = rng.normal(size=(k, m, 2))
        expected = _naive_grid_kmc(big, rows, list(columns), values)
    else:
        values = rng.normal(size=(k, 2))
        expected = _naive_grid_kc(big, rows, list(columns), values)
    seg = GridRows(big, columns, values, rows=rows)
    assert seg.m == m
    _check_windows(seg, expected, seed=m + 2)


@pytest.mark.parametrize("m", SIZES)
# index dtypes: uint8, uint8 at its top, uint16, uint32
@pytest.mark.parametrize("table_size", [6, 256, 257, 70_000])
@pytest.mark.parametrize("offsets", [None, (0, 1), (2, 0, 1)])
@pytest.mark.parametrize("with_rows", [False, True])
@pytest.mark.parametrize("c", [(1,), (1, 3)])  # one column has its own table path
def test_grid_rows_table_with_index_and_offsets(m, table_size, offsets, with_rows, c):
    rng = np.random.default_rng(m + table_size)
    table = rng.normal(size=(table_size, len(c)))
    shift = max(offsets) if offsets is not None else 0
    index = rng.integers(0, table_size - shift, size=m)
    index[0] = table_size - shift - 1  # the largest index the offsets allow
    big = _base(m + 10, 4, seed=m)
    rows = rng.permutation(m + 10)[:m] if with_rows else None
    base = big if with_rows else big[:m]
    seg = GridRows(base, c, table, index=index, offsets=offsets, rows=rows)
    expected = _naive_grid_index(base, rows, list(c), table, index,
                                 (0,) if offsets is None else offsets)
    assert seg.k == (1 if offsets is None else len(offsets))
    _check_windows(seg, expected, seed=table_size)


def test_grid_rows_index_single_column_on_both_paths():
    # ALE's use: one column, a table of bin edges, offsets (0, 1) for the two edges
    for m in (40, 700):
        rng = np.random.default_rng(m)
        base = _base(m, 2, seed=m)
        edges = np.sort(rng.normal(size=9))
        index = rng.integers(0, 8, size=m)
        seg = GridRows(base, (1,), edges, index=index, offsets=(0, 1))
        expected = np.vstack([base, base])
        expected[:m, 1] = edges[index]
        expected[m:, 1] = edges[index + 1]
        _check_windows(seg, expected, seed=m)


@pytest.mark.parametrize("m", [5, 300])
def test_grid_rows_average_groups_all_base_rows_of_a_setting(m):
    base = _base(m, 3, seed=m)
    values = np.arange(4.0)[:, None]
    seg = GridRows(base, (0,), values, average=True)
    assert seg.group == m and seg.n_rows == 4 * m
    f = lambda A: A[:, 0] * A[:, 1]  # noqa: E731
    evaluate(_model(f, 3), [seg], Options(chunk_size=3))
    assert seg.result.shape == (4,)
    np.testing.assert_allclose(seg.result, [np.mean(v * base[:, 1]) for v in values[:, 0]],
                               rtol=1e-12, atol=1e-15)
    kept = GridRows(base, (0,), values)
    assert kept.group == 1
    evaluate(_model(f, 3), [kept], Options(chunk_size=3))
    np.testing.assert_allclose(kept.result, np.repeat(values[:, 0], m) * np.tile(base[:, 1], 4),
                               rtol=1e-15)


def test_grid_rows_reject_shapes_that_do_not_fit():
    base = _base(10, 3)
    with pytest.raises(ValueError, match="do not fit"):
        GridRows(base, (0, 1), np.zeros((4, 3)))  # 3 values for 2 columns
    with pytest.raises(ValueError, match="do not fit"):
        GridRows(base, (0,), np.zeros((4, 9, 1)))  # 9 rows for 10 base rows
    with pytest.raises(ValueError, match="does not fit"):
        GridRows(base, (0,), np.zeros((5, 1)), index=np.zeros(9, dtype=int))


# --------------------------------------------------------------- ShiftedRows
@pytest.mark.parametrize("m", [1, 7, 300])
@pytest.mark.parametrize("column", [0, 2])
def test_shifted_rows_move_one_column_by_each_shift(m, column):
    base = _base(m, 3, seed=m)
    shifts = np.array([0.5, -0.25, 3.0])
    seg = ShiftedRows(base, column, shifts)
    expected = np.tile(base, (shifts.size, 1))
    expected[:, column] += np.repeat(shifts, m)
    assert seg.group == 1
    _check_windows(seg, expected, seed=m)
    # written out by a loop over rows, as the docstring states it
    for r in range(seg.n_rows):
        row = base[r % m].copy()
        row[column] += shifts[r // m]
        np.testing.assert_array_equal(seg.rows(r, r + 1)[0], row)


# ------------------------------------------------------------------ DataRows
def test_data_rows_all_and_selected():
    data = _base(50, 3)
    seg = DataRows(data)
    _check_windows(seg, data)
    rows = np.random.default_rng(5).choice(50, size=80, replace=True)  # repeats allowed
    seg = DataRows(data, rows=rows)
    assert seg.n_rows == 80
    _check_windows(seg, np.array([data[r] for r in rows]))
    assert DataRows(data, rows=np.array([], dtype=int)).n_rows == 0


def test_data_rows_evaluated_keep_every_prediction():
    data = _base(37, 3)
    rows = np.random.default_rng(6).permutation(37)[:20]
    f = lambda A: A[:, 0] * 3 - A[:, 2]  # noqa: E731
    for chunk in (1, 6, 100):
        seg = DataRows(data, rows=rows)
        evaluate(_model(f, 3), [seg], Options(chunk_size=chunk))
        np.testing.assert_array_equal(seg.result, [f(data[r:r + 1])[0] for r in rows])


# -------------------------------------------------------------- GradientRows
@pytest.mark.parametrize("columns", [[0, 1, 2, 3], [2, 0], [3]])
@pytest.mark.parametrize("chunk", [1, 7, 1000])
def test_gradient_rows_are_feature_major_and_folded_per_chunk(columns, chunk):
    data = _base(53, 4, seed=9)
    calls = []

    def grad(Z):
        calls.append(Z.shape[0])
        # a different number in every cell, so a transposition or shift shows
        return Z * np.arange(1.0, 5.0) + 10 * np.arange(4.0)

    seg = GradientRows(data, columns, backend="callable", function=grad)
    assert seg.call_key()[0] == "gradient"
    model = _model(lambda A: A.sum(axis=1), 4)
    evaluate(model, [seg], Options(chunk_size=chunk))
    assert seg.result.shape == (len(columns), 53)
    expected = np.empty((len(columns), 53))
    for a, j in enumerate(columns):
        for i in range(53):
            expected[a, i] = data[i, j] * (j + 1) + 10 * j
    np.testing.assert_array_equal(seg.result, expected)
    assert sum(calls) == 53 and max(calls) <= chunk
    assert model.n_calls == len(calls)


def test_gradient_rows_never_share_a_call_with_predictions():
    data = _base(30, 2)
    seen = {"predict": [], "gradient": []}

    def f(A):
        seen["predict"].append(A.copy())
        return A[:, 0]

    def grad(A):
        seen["gradient"].append(A.copy())
        return np.ones_like(A)

    grid = GridRows(data, (1,), np.array([[0.0], [1.0]]))
    gradient = GradientRows(data, [0, 1], backend="callable", function=grad)
    evaluate(_model(f, 2), [grid, gradient, DataRows(data)], Options(chunk_size=1000))
    # one call per run of equal call keys: grid rows, then the gradient, then the data
    assert [len(a) for a in seen["predict"]] == [60, 30]
    assert [len(a) for a in seen["gradient"]] == [30]
    np.testing.assert_array_equal(seen["gradient"][0], data)


# --------------------------------------------------------------- MaskedRows
def _naive_masked(fg, bg, masks, rows):
    """All model rows of every query, query-major, background-minor, by loops."""
    out = []
    queries = [(i, masks[s]) for i in range(fg.shape[0]) for s in range(masks.shape[0])] \
        if rows is None else [(rows[q], masks[q]) for q in range(masks.shape[0])]
    for i, mask in queries:
        for b in range(bg.shape[0]):
            out.append(np.where(mask, fg[i], bg[b]))
    return np.array(out).reshape(-1, fg.shape[1]), queries


@pytest.mark.parametrize("n_bg", [1, 5, 33])
@pytest.mark.parametrize("with_rows", [False, True])
def test_masked_rows_mix_query_and_background_rows(n_bg, with_rows):
    rng = np.random.default_rng(n_bg)
    d = 4
    fg, bg = rng.normal(size=(6, d)), rng.normal(size=(n_bg, d)) + 10
    if with_rows:
        masks = rng.random((9, d)) < 0.5
        rows = rng.integers(0, 6, size=9)
    else:
        masks = rng.random((3, d)) < 0.5
        rows = None
    masks[0] = False  # the empty and the full coalition
    masks[-1] = True
    seg = MaskedRows(fg, bg, masks, rows=rows)
    expected, queries = _naive_masked(fg, bg, masks, rows)
    assert seg.group == n_bg
    _check_windows(seg, expected, seed=n_bg)

    def f(A):
        return np.sin(A[:, 0]) * A[:, 1] + A[:, 2] ** 2 - A[:, 3]

    truth = np.array([np.mean([f(np.where(mask, fg[i], bg[b])[None])[0]
                               for b in range(n_bg)]) for i, mask in queries])
    for chunk in (1, 7, 1000):
        seg = MaskedRows(fg, bg, masks, rows=rows)
        evaluate(_model(f, d), [seg], Options(chunk_size=chunk))
        assert seg.result.shape == (len(queries),)
        np.testing.assert_allclose(seg.result, truth, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------- where chunks are cut
class _Seg(Segment):
    """A segment of ``n`` rows under a given call key (for the chunking alone)."""

    def __init__(self, n, key="a", width=2):
        self.n_rows, self.width, self._key = n, width, key

    def call_key(self):
        return (self._key, self.width)


def _check_chunks(segments, sizers, chunks):
    """The invariants of _chunks; returns the chunks."""
    # every chunk is one call: one key, the key of each of its segments, not over its size
    for key, pieces in chunks:
        assert pieces, "an empty chunk was yielded"
        assert all(seg.call_key() == key for seg, _, _ in pieces)
        rows = sum(b - a for _, a, b in pieces)
        assert 0 < rows <= sizers[key].size
        for seg, a, b in pieces:
            assert 0 <= a < b <= seg.n_rows
            if b < seg.n_rows:  # the chunk stops inside the segment: on an aligned row
                assert b % sizers[key].align == 0, (seg.n_rows, a, b)
    # the pieces cover every row of every segment once, in order
    flat = [(seg, a, b) for _, pieces in chunks for seg, a, b in pieces]
    covered = {id(s): [] for s in segments}
    order = []
    for seg, a, b in flat:
        covered[id(seg)].append((a, b))
        if not order or order[-1] is not seg:
            order.append(seg)
    assert order == [s for s in segments if s.n_rows > 0]
    for seg in segments:
        spans = covered[id(seg)]
        pos = 0
        for a, b in spans:
            assert a == pos
            pos = b
        assert pos == seg.n_rows
    # greedy: a chunk short of its size ends only where the next rows could not join it
    for (key, pieces), (next_key, next_pieces) in zip(chunks, chunks[1:]):
        rows = sum(b - a for _, a, b in pieces)
        if next_key != key or rows == sizers[key].size:
            continue
        seg, a, _ = next_pieces[0]
        room = sizers[key].size - rows
        assert seg.n_rows - a > room, "the rest of the segment would have fit"
        align = sizers[key].align
        assert (a + room) // align * align <= a, "an aligned cut would have fit"
    return chunks


@pytest.mark.parametrize("size,align", [(1, 1), (7, 1), (1000, 1), (5000, 1), (1024, 1024),
                                        (3000, 1024), (4096, 1024), (100, 10)])
def test_chunks_cover_every_row_once_and_cut_on_aligned_rows(size, align):
    segments = [_Seg(n) for n in (5000, 1, 0, 2049, 1023, 3072, 7)]
    sizers = {("a", 2): SimpleNamespace(size=size, align=align)}
    chunks = _check_chunks(segments, sizers, list(_chunks(segments, sizers)))
    if size == 1024 and align == 1024:
        # pieces of the 5000-row segment start on 1024 boundaries
        starts = [a for _, pieces in chunks for seg, a, _ in pieces if seg is segments[0]]
        assert starts == [0, 1024, 2048, 3072, 4096]


@pytest.mark.parametrize("chunk_size", [None, 1, 7, 1000, 5000])
def test_chunks_with_chunk_sizers_and_mixed_call_keys(chunk_size):
    data = _base(700, 3)
    grad = lambda Z: Z  # noqa: E731
    segments = [GridRows(data, (0,), np.arange(9.0)),                 # 6300 rows
                GradientRows(data, [0, 1], backend="callable", function=grad),
                GridRows(data[:5], (2,), np.arange(3.0)),              # 15 rows
                ShiftedRows(data, 1, (0.1, -0.1)),                     # 1400 rows
                GridRows(data, (1,), np.zeros((0, 1))),                # no rows
                GradientRows(data[:3], [2], backend="callable", function=grad),
                DataRows(data, rows=np.arange(100))]
    sizers = {}
    for seg in segments:
        sizers.setdefault(seg.call_key(), ChunkSizer(seg.width, chunk_size, 10_000, tune=False))
    assert len(sizers) == 2
    if chunk_size is None:
        assert all(s.align == ALIGN_ROWS for s in sizers.values())
    chunks = _check_chunks(segments, sizers, list(_chunks(segments, sizers)))
    # a gradient segment never shares a chunk with prediction rows
    for key, pieces in chunks:
        kinds = {isinstance(seg, GradientRows) for seg, _, _ in pieces}
        assert len(kinds) == 1


def test_chunks_follow_a_size_that_changes_between_chunks():
    # the tuner moves the size between chunks; each chunk keeps to the size it was built at
    segments = [_Seg(n) for n in (9000, 4000, 12_345)]
    sizer = SimpleNamespace(size=1024, align=1024)
    gen = _chunks(segments, {("a", 2): sizer})
    seen = []
    for step, (key, pieces) in enumerate(gen):
        seen.append((key, pieces))
        assert sum(b - a for _, a, b in pieces) <= sizer.size
        sizer.size = (1024, 4096, 2048)[step % 3]
    flat = [(s, a, b) for _, p in seen for s, a, b in p]
    for seg in segments:
        spans = [(a, b) for s, a, b in flat if s is seg]
        assert spans[0][0] == 0 and spans[-1][1] == seg.n_rows
        assert all(b1 == a2 for (_, b1), (a2, _) in zip(spans, spans[1:]))
        assert all(b % 1024 == 0 for _, b in spans[:-1])


# ---------------------------------------------------------------- folding
def _pd_segments(data, values_a, values_b):
    return [GridRows(data, (0,), values_a, average=True),
            GridRows(data[:333], (1, 2), values_b, average=True)]


def _naive_means(data, values_a, values_b, f):
    out_a = []
    for v in values_a[:, 0]:
        rows = data.copy()
        rows[:, 0] = v
        out_a.append(np.mean(f(rows)))
    out_b = []
    for v in values_b:
        rows = data[:333].copy()
        rows[:, 1:3] = v
        out_b.append(np.mean(f(rows)))
    return np.array(out_a), np.array(out_b)


def _fold_data():
    rng = np.random.default_rng(11)
    data = rng.normal(size=(2500, 3))
    values_a = np.linspace(-2, 2, 5)[:, None]
    values_b = rng.normal(size=(4, 2))
    f = lambda A: np.sin(A[:, 0]) * A[:, 1] + A[:, 2] ** 2 + 100.0  # noqa: E731
    return data, values_a, values_b, f


def _recording(f, sizes):
    """``f``, noting the number of rows of every call in ``sizes``."""
    def model(A):
        sizes.append(len(A))
        return f(A)
    return model


@pytest.mark.parametrize("chunk", [1, 7, 1000, 5000])
def test_averaged_grid_rows_equal_the_naive_mean_at_any_chunk_size(chunk):
    data, values_a, values_b, f = _fold_data()
    truth_a, truth_b = _naive_means(data, values_a, values_b, f)
    sizes = []
    model = _recording(f, sizes)
    segs = _pd_segments(data, values_a, values_b)
    with ml.config(chunk_size=chunk):
        evaluate(Model(model, Dataset.from_data(data)), segs)
    assert max(sizes) <= chunk and sum(sizes) == 5 * 2500 + 4 * 333
    np.testing.assert_allclose(segs[0].result, truth_a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(segs[1].result, truth_b, rtol=1e-12, atol=1e-12)
    # the context's chunk size is what the engine resolves
    with ml.config(chunk_size=chunk):
        assert resolve_options().chunk_size == chunk
    assert resolve_options(chunk_size=3).chunk_size == 3


def test_tuned_chunk_sizes_give_bit_identical_averages(monkeypatch):
    # tuned runs cut chunks on multiples of ALIGN_ROWS of each segment, so every group is
    # summed in the same pieces whatever the start size; the second segment does not start
    # on an aligned row of the stream, which is what the per-segment alignment is for
    data, values_a, values_b, f = _fold_data()
    results = []
    for start in (ALIGN_ROWS, 2 * ALIGN_ROWS, 3 * ALIGN_ROWS, 8 * ALIGN_ROWS):
        monkeypatch.setattr(_tuner, "DEFAULT_CHUNK_ROWS", start)
        sizes = []
        model = _recording(f, sizes)
        segs = _pd_segments(data, values_a, values_b)
        evaluate(Model(model, Dataset.from_data(data)), segs, Options(chunk_size=None))
        assert max(sizes) <= start
        results.append([s.result.copy() for s in segs])
    for other in results[1:]:
        for a, b in zip(results[0], other):
            assert np.array_equal(a, b)
    truth = _naive_means(data, values_a, values_b, f)
    for got, want in zip(results[0], truth):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_threads_fold_in_order_and_give_the_same_numbers():
    data, values_a, values_b, f = _fold_data()
    out = []
    for n_jobs in (1, 3):
        segs = _pd_segments(data, values_a, values_b)
        evaluate(_model(f, 3), segs, Options(chunk_size=777, n_jobs=n_jobs))
        out.append([s.result for s in segs])
    for a, b in zip(*out):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("chunk", [1, 7, 1000, 5000, None])
def test_on_finish_once_per_segment_after_its_last_rows(chunk):
    data, values_a, values_b, f = _fold_data()
    truth_a, truth_b = _naive_means(data, values_a, values_b, f)
    model_rows = []
    model = _recording(f, model_rows)

    segs = [GridRows(data, (0,), values_a, average=True),
            GridRows(data, (0,), np.zeros((0, 1)), average=True),       # no rows
            DataRows(data, rows=np.arange(10)),
            GridRows(data[:333], (1, 2), values_b, average=True),
            DataRows(data, rows=np.array([], dtype=int))]                # no rows
    events = []

    def on_finish(seg):
        events.append((segs.index(seg), seg.result.copy(), sum(model_rows)))

    for s in segs:
        s.on_finish = on_finish
    evaluate(Model(model, Dataset.from_data(data)), segs, Options(chunk_size=chunk))
    assert sorted(e[0] for e in events) == [0, 1, 2, 3, 4]  # once each
    got = {e[0]: e for e in events}
    # the result handed over is complete (averaged already), and the rows through that
    # segment had all been answered when it was handed over
    np.testing.assert_allclose(got[0][1], truth_a, rtol=1e-12)
    np.testing.assert_array_equal(got[2][1], f(data[:10]))
    np.testing.assert_allclose(got[3][1], truth_b, rtol=1e-12)
    assert got[1][1].shape == (0,) and got[4][1].shape == (0,)
    through = np.cumsum([s.n_rows for s in segs])
    for i in (0, 2, 3):
        assert got[i][2] >= through[i]
    # segments with rows are handed over in their own order, as soon as they are done:
    # before the model has seen rows past the chunk holding their last row
    order = [e[0] for e in events if segs[e[0]].n_rows]
    assert order == [0, 2, 3]
    bounds = np.cumsum(model_rows)
    for i in (0, 2, 3):
        first_chunk_done = bounds[np.searchsorted(bounds, through[i])]
        assert got[i][2] == first_chunk_done


def test_on_finish_when_no_segment_has_rows():
    calls = []
    segs = [GridRows(_base(4, 2), (0,), np.zeros((0, 1)), average=True),
            DataRows(_base(4, 2), rows=np.array([], dtype=int))]
    for s in segs:
        s.on_finish = calls.append
    model_calls = []
    evaluate(_model(lambda A: model_calls.append(1) or A[:, 0], 2), segs)
    assert calls == segs and not model_calls
    assert all(s.result.shape == (0,) for s in segs)
