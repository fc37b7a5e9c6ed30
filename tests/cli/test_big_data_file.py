"""A data file bigger than the report needs is read in chunks, a uniform sample kept (issue 40).

Every section samples a few thousand rows; reading a 1,000,000-row file whole
cost its every byte in memory.  ``sample_table`` reads the file a chunk at a
time and keeps a uniform random sample (``--max-rows``, 200,000 by default),
the rows asked for with ``--rows`` always in it; the page says so.  The
oracle is the whole file read by pandas (or pyarrow) at the sampled rows.
"""

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from cli_support import _one_error_line, _run
from sklearn.linear_model import Ridge

from modellens.files import _data, read_table, sample_table

FAST = ["--sample", "40", "--explain", "2", "--grid", "3", "--seed", "0", "--static"]


def _table(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 9, n),
                          "c": rng.choice(["u", "v", "w"], n)})
    frame.loc[frame.index % 97 == 3, "a"] = np.nan
    return frame


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_the_sample_is_the_files_rows_at_its_positions(tmp_path, monkeypatch, suffix):
    whole = _table()
    path = tmp_path / f"d{suffix}"
    whole.to_csv(path, index=False) if suffix == ".csv" else whole.to_parquet(path)
    read = read_table(path)  # the whole file, as the report read it before
    monkeypatch.setattr(_data, "_CHUNK_CELLS", 3 * 70)  # chunks of 100 rows (the least)
    got, total = sample_table(path, max_rows=150, keep=[0, 999, 500], random_state=3)
    assert total == 1000 and len(got) == 150
    at = got.index.to_numpy()
    assert np.all(np.diff(at) > 0) and {0, 500, 999} <= set(at)
    pd.testing.assert_frame_equal(got, read.loc[at], check_dtype=False)
    # the keys come from one seeded stream: another chunk size, the same sample
    monkeypatch.setattr(_data, "_CHUNK_CELLS", 3 * 1000)
    again, _ = sample_table(path, max_rows=150, keep=[0, 999, 500], random_state=3)
    np.testing.assert_array_equal(again.index.to_numpy(), at)
    other, _ = sample_table(path, max_rows=150, keep=[0, 999, 500], random_state=4)
    assert not np.array_equal(other.index.to_numpy(), at)


def test_the_candidates_are_never_copied_together(tmp_path, monkeypatch):
    # a pruning joined all the candidates (twice the sample and a chunk) into one copy
    # before taking the kept rows; each part now gives its own kept rows
    path = tmp_path / "d.csv"
    _table(3000).to_csv(path, index=False)
    monkeypatch.setattr(_data, "_CHUNK_CELLS", 3 * 100)  # chunks of 100 rows
    joined = []
    real = pd.concat
    monkeypatch.setattr(pd, "concat", lambda parts, *a, **k: joined.append(
        sum(len(p) for p in parts)) or real(parts, *a, **k))
    got, total = sample_table(path, max_rows=400, random_state=1)
    monkeypatch.undo()
    assert total == 3000 and len(got) == 400 and joined
    assert max(joined) <= 400, joined  # only kept rows are ever joined
    pd.testing.assert_frame_equal(got, read_table(path).loc[got.index.to_numpy()],
                                  check_dtype=False)


def test_a_parquet_sample_holds_the_sample_and_a_row_group_not_the_file(tmp_path, monkeypatch):
    # the 1,000,000 x 502 Parquet file's 200,000-row sample peaked at 8.7 GB: pyarrow's
    # batch reader held the bytes of every row group it had read (4.6 GB, the whole
    # file, by the end). The kept rows are now chosen from the row count and read a row
    # group and a few columns at a time. Arrow's memory in use is read after every read
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    table = pa.table({f"x{i}": rng.normal(size=4000) for i in range(50)})
    path = tmp_path / "d.parquet"
    pq.write_table(table, path, row_group_size=250)  # 16 row groups of 100 KB
    file_bytes = 4000 * 50 * 8
    base, held = pa.total_allocated_bytes(), []

    def watched(name):
        real = getattr(pq.ParquetFile, name)

        def read(self, *args, **kwargs):
            out = real(self, *args, **kwargs)
            if name == "read_row_group":
                held.append(pa.total_allocated_bytes() - base)
                return out
            return _watch_batches(out)
        return read

    def _watch_batches(batches):
        for batch in batches:
            held.append(pa.total_allocated_bytes() - base)
            yield batch

    monkeypatch.setattr(pq.ParquetFile, "read_row_group", watched("read_row_group"))
    monkeypatch.setattr(pq.ParquetFile, "iter_batches", watched("iter_batches"))
    got, total = sample_table(path, max_rows=200, random_state=5)
    monkeypatch.undo()
    assert held and max(held) < file_bytes / 4, (max(held), file_bytes)
    assert total == 4000 and len(got) == 200
    want = table.to_pandas().iloc[got.index.to_numpy()]
    np.testing.assert_array_equal(got.to_numpy(), want.to_numpy())
    # the same rows as a CSV of the same table gives (one key stream, the same keys)
    table.to_pandas().to_csv(tmp_path / "d.csv", index=False)
    again, _ = sample_table(tmp_path / "d.csv", max_rows=200, random_state=5)
    np.testing.assert_array_equal(again.index.to_numpy(), got.index.to_numpy())


def test_the_sample_is_uniform_over_the_file(tmp_path, monkeypatch):
    # a sample of the first rows (or of the last chunk) would miss these bounds by far:
    # over 1,000 rows, 500 sampled without replacement, the mean position has a standard
    # error of about 9; four of them is the tolerance
    path = tmp_path / "d.csv"
    _table().to_csv(path, index=False)
    monkeypatch.setattr(_data, "_CHUNK_CELLS", 3 * 90)
    got, _ = sample_table(path, max_rows=500, random_state=0)
    assert abs(got.index.to_numpy().mean() - 499.5) < 4 * 9.2
    counts = np.histogram(got.index.to_numpy(), bins=4, range=(0, 1000))[0]
    assert counts.min() > 125 - 4 * 10, counts


def test_a_file_within_the_cap_is_read_whole(tmp_path):
    path = tmp_path / "d.csv"
    _table(50).to_csv(path, index=False)
    got, total = sample_table(path, max_rows=50)
    assert total == 50
    pd.testing.assert_frame_equal(got, read_table(path), check_index_type=False)


def _files(tmp_path, n=300):
    frame = _table(n)[["a", "b"]].fillna(0.0)
    data = tmp_path / "data.csv"
    frame.assign(target=frame.a - frame.b).to_csv(data, index=False)
    model = tmp_path / "model.skops"
    sio.dump(Ridge().fit(frame, frame.a - frame.b), model)
    return data, model


def test_the_report_on_a_bigger_file_says_it_is_on_a_sample(tmp_path, capsys):
    data, model = _files(tmp_path)
    out = tmp_path / "r.html"
    code, said, err = _run(["report", "--data", data, "--model", model, "--target", "target",
                            "--out", out, "--max-rows", "100", "--rows", "250", *FAST], capsys)
    assert code == 0, err
    page = out.read_text(encoding="utf-8")
    assert "a uniform random sample of 100 of its 300 rows" in page
    assert "100 rows" in said and "of its 300 rows" in said
    # a row past the file's end is refused against the file's rows, not the sample's
    code, _, err = _run(["report", "--data", data, "--model", model, "--target", "target",
                         "--out", out, "--max-rows", "100", "--rows", "300", *FAST], capsys)
    assert code == 1 and "the data has 300 rows" in _one_error_line(err)
    # more rows asked for than --max-rows: every one kept
    code, said, err = _run(["report", "--data", data, "--model", model, "--target", "target",
                            "--out", out, "--max-rows", "2", "--rows", "5", "6", "7", *FAST],
                           capsys)
    assert code == 0 and "sample of 3 of its 300 rows" in said, err


def test_every_row_with_max_rows_0(tmp_path, capsys):
    data, model = _files(tmp_path, n=120)
    out = tmp_path / "r.html"
    code, said, err = _run(["report", "--data", data, "--model", model, "--target", "target",
                            "--out", out, "--max-rows", "0", *FAST], capsys)
    assert code == 0, err
    assert "120 rows" in said and "sample of" not in out.read_text(encoding="utf-8")
