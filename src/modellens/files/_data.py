"""Data files read the way the model expects them.

A CSV file holds text; ``read_csv`` guesses each column's type, and the guess
need not be what the model was fit on: a zip code fit as strings through a
``OneHotEncoder`` comes back as integers, every row becomes an unknown level
and the model's answer no longer depends on it, without an error.  The model
itself records what it saw (an encoder's ``categories_``, HistGradientBoosting's
categorical preprocessor, XGBoost's and LightGBM's category lists), so the
columns are read, and checked, against that record.
"""

from __future__ import annotations

import importlib
from os import PathLike
from pathlib import Path

import numpy as np
import pandas as pd

from ..data import as_pandas
from ..models import expected_inputs, is_text
from ..typing import ModelLike
from ._errors import FileError, one_line as _one_line

__all__ = ["read_data", "read_table", "sample_table", "conform", "check_frame"]


def read_data(path: str | PathLike[str], *, model: ModelLike | None = None) -> pd.DataFrame:
    """Read a CSV or Parquet data file, its columns as ``model`` was fit on them.

    Parameters
    ----------
    path : str or path-like
        A ``.csv`` (or ``.txt``) or ``.parquet`` (``.pq``) file.
    model : estimator, optional
        The fitted model the data are for.  Columns it saw as text are read as
        text (a zip code ``"02134"`` keeps its leading zero), columns it saw as
        numbers are cast to numbers, and columns it takes as categories get
        its levels.  Without a model the file is read as pandas guesses.

    Returns
    -------
    pandas.DataFrame
        A new frame; its column labels are strings.

    Raises
    ------
    modellens.files.FileError
        When the file cannot be read, or a column cannot be what the model
        expects (text where it saw numbers, or no value among the levels it
        knows).  A subclass of :class:`~modellens.InvalidParameterError`.

    See Also
    --------
    modellens.load_model : read a model file safely.

    Examples
    --------
    >>> import modellens as ml
    >>> import pandas as pd
    >>> pd.DataFrame({"zip": ["02134", "10001"], "x": [1.0, 2.0]}).to_csv("d.csv", index=False)
    >>> ml.read_data("d.csv")["zip"].tolist()  # pandas' guess, without a model
    [2134, 10001]
    """
    frame = read_table(path, model)
    return frame if model is None else conform(frame, model)


def read_table(path: str | PathLike[str], model=None) -> pd.DataFrame:
    """A CSV or Parquet file as a DataFrame, its columns read as ``model`` expects them.

    CSV columns the model saw as text are read as text (``"02134"`` stays
    ``"02134"``); then :func:`conform` checks and casts every column.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    expected = expected_inputs(model) if model is not None else {}
    try:
        if suffix in (".csv", ".txt"):
            header = pd.read_csv(path, nrows=0).columns
            text = {c: str for c in header if str(c) in expected and expected[str(c)].text}
            frame = pd.read_csv(path, dtype=text or None)
        elif suffix in (".parquet", ".pq"):
            frame = _read_parquet(path)
        else:
            raise FileError(f"cannot read {str(path)!r}: give a .csv or .parquet file.")
    except FileError:
        raise
    except Exception as exc:  # pandas and pyarrow raise many kinds
        raise FileError(f"cannot read {str(path)!r}: {_one_line(exc)}") from None
    frame.columns = [str(c) for c in frame.columns]
    return frame


#: Cells of one chunk a sampled read holds at a time (about 160 MB of float64).
_CHUNK_CELLS = 20_000_000


def sample_table(path: str | PathLike[str], model=None, *, max_rows: int, keep=(),
                 random_state: int = 0) -> tuple[pd.DataFrame, int]:
    """A uniform random sample of at most ``max_rows`` rows of a CSV or Parquet file, read
    in chunks, and the file's row count.

    The file is read once, a chunk at a time: its memory is that of the sample
    and one chunk, not of the file.  Every row gets a random key from one
    stream seeded by ``random_state`` (so the sample does not depend on the
    chunk size) and the ``max_rows`` smallest keys are kept, with the rows
    ``keep`` (file positions) always among them.  The frame's index holds the
    kept rows' positions in the file, in file order.  Columns are read as
    :func:`read_table` reads them; a CSV chunk's types are pandas' guess for
    that chunk, combined as ``pandas.concat`` combines them.  A file of at
    most ``max_rows`` rows is read whole.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".txt", ".parquet", ".pq"):
        raise FileError(f"cannot read {str(path)!r}: give a .csv or .parquet file.")
    keep = np.asarray(sorted(set(int(r) for r in keep)), np.int64)
    max_rows = max(int(max_rows), len(keep), 1)  # the rows asked for are all kept
    expected = expected_inputs(model) if model is not None else {}
    try:
        if suffix in (".csv", ".txt"):
            header = pd.read_csv(path, nrows=0).columns
            text = {c: str for c in header if str(c) in expected and expected[str(c)].text}
            size = max(100, _CHUNK_CELLS // max(1, len(header)))
            chunks = pd.read_csv(path, dtype=text or None, chunksize=size)
            frame, total = _keep_smallest(chunks, max_rows, keep, random_state, pd.concat)
        else:
            frame, total = _sample_parquet(path, max_rows, keep, random_state)
        if frame is None:  # no rows: the file's header, read as a whole file is
            frame = read_table(path, model)
    except FileError:
        raise
    except Exception as exc:  # pandas and pyarrow raise many kinds
        raise FileError(f"cannot read {str(path)!r}: {_one_line(exc)}") from None
    frame.columns = [str(c) for c in frame.columns]
    return frame, total


def _keep_smallest(chunks, max_rows, keep, random_state, concat):
    """The rows of ``chunks`` (frames or tables, in file order) of the ``max_rows``
    smallest random keys (``keep`` first), and the row count.

    Candidates are pruned whenever they pass twice ``max_rows``, each part
    keeping its own chosen rows (no copy of all the candidates together): at
    most twice ``max_rows`` rows and one chunk are held, and the parts are
    joined once, at the end."""
    rng = np.random.default_rng(random_state)
    parts, keys, positions = [], [], []
    held = total = 0
    for chunk in chunks:
        n = len(chunk)
        key = rng.random(n)
        at = np.arange(total, total + n)
        key[np.isin(at, keep)] = -1.0  # asked for by position: always kept
        total += n
        parts.append(chunk)
        keys.append(key)
        positions.append(at)
        held += n
        if held > 2 * max_rows:
            parts, keys, positions = _prune(parts, keys, positions, max_rows, concat)
            held = sum(len(k) for k in keys)
    if not parts:
        return None, 0
    parts, keys, positions = _prune(parts, keys, positions, max_rows, concat)
    frame = concat(parts) if len(parts) > 1 else parts[0]
    del parts
    if not isinstance(frame, pd.DataFrame):  # a pyarrow table: converted once, whole
        frame = as_pandas(frame, name="the file")
    frame.index = pd.Index(np.concatenate(positions), name=None)
    return frame, total


#: Parts kept apart between prunings; past it the kept rows are joined (at most ``max_rows``).
_MAX_PARTS = 32


def _prune(parts, keys, positions, max_rows, concat):
    """The candidates of the ``max_rows`` smallest keys, in file order: each part's own
    chosen rows taken from it (a pyarrow table's ``take`` of all the parts together
    first copies them into one)."""
    sizes = np.cumsum([0] + [len(k) for k in keys])
    key = np.concatenate(keys)
    if len(key) > max_rows:
        chosen = np.sort(np.argpartition(key, max_rows - 1)[:max_rows])
    else:
        chosen = np.arange(len(key))
    at = np.concatenate(positions)[chosen]
    key = key[chosen]
    cuts = np.searchsorted(chosen, sizes)
    taken, kept_keys, kept_at = [], [], []
    for j, part in enumerate(parts):
        local = chosen[cuts[j]:cuts[j + 1]] - sizes[j]
        if len(local):
            taken.append(part.iloc[local] if isinstance(part, pd.DataFrame)
                         else part.take(local))
            kept_keys.append(key[cuts[j]:cuts[j + 1]])
            kept_at.append(at[cuts[j]:cuts[j + 1]])
        parts[j] = None  # its rows are copied out: freed before the next part's
    if len(taken) > _MAX_PARTS:
        taken = [concat(taken)]
        kept_keys, kept_at = [np.concatenate(kept_keys)], [np.concatenate(kept_at)]
    _release_arrow_memory()
    return taken, kept_keys, kept_at


def _release_arrow_memory() -> None:
    """Hand pyarrow's freed buffers back to the system (its pool keeps them otherwise)."""
    import sys

    pa = sys.modules.get("pyarrow")
    if pa is not None:
        try:
            pa.default_memory_pool().release_unused()
        except AttributeError:  # pragma: no cover - pyarrow before 9
            pass


def _sample_parquet(path, max_rows, keep, random_state):
    """A Parquet file's sample (pyarrow): the kept rows chosen from the row count alone,
    then read a row group and a few columns at a time, converted to pandas once.

    The keys are those a chunked read draws (one seeded stream, a key per row in file
    order), so the sample is the one :func:`_keep_smallest` keeps.  A row group holding
    no kept row is not read; pyarrow's batch reader held every row group's bytes it
    had read (a 4.6 GB file's sample peaked at 8.7 GB).
    """
    try:
        pq = importlib.import_module("pyarrow.parquet")
        pa = importlib.import_module("pyarrow")
    except ImportError:  # pandas may read it with fastparquet: read whole, then sampled
        whole = pd.read_parquet(path)
        return _keep_smallest([whole], max_rows, keep, random_state, pd.concat)
    file = pq.ParquetFile(path)
    total = file.metadata.num_rows
    if total == 0:
        return None, 0
    chosen = _smallest_keys(total, max_rows, keep, random_state)
    schema = file.schema_arrow
    names = schema.names
    pieces, start = [], 0
    for g in range(file.num_row_groups):
        n = file.metadata.row_group(g).num_rows
        local = chosen[np.searchsorted(chosen, start):np.searchsorted(chosen, start + n)] - start
        start += n
        if not len(local):
            continue
        step = max(1, _CHUNK_CELLS // max(n, 1))  # columns of one read
        columns: list = []
        for c in range(0, len(names), step):
            part = file.read_row_group(g, columns=names[c:c + step]).take(local)
            columns.extend(part.column(i).combine_chunks() for i in range(part.num_columns))
        pieces.append(pa.Table.from_arrays(columns, schema=schema))
        _release_arrow_memory()
    frame = as_pandas(pa.concat_tables(pieces) if len(pieces) > 1 else pieces[0],
                      name="the file")
    frame.index = pd.Index(chosen, name=None)
    return frame, total


def _smallest_keys(total, max_rows, keep, random_state, block=1 << 22):
    """File positions (sorted) of the ``max_rows`` smallest of ``total`` keys drawn from one
    seeded stream (``keep`` first), as :func:`_keep_smallest` keeps them; memory of a
    block and the sample."""
    rng = np.random.default_rng(random_state)
    best_key = np.empty(0)
    best_at = np.empty(0, np.int64)
    for start in range(0, total, block):
        key = rng.random(min(block, total - start))
        at = np.arange(start, start + len(key))
        key[np.isin(at, keep)] = -1.0  # asked for by position: always kept
        key, at = np.concatenate([best_key, key]), np.concatenate([best_at, at])
        if len(key) > max_rows:
            pick = np.argpartition(key, max_rows - 1)[:max_rows]
            key, at = key[pick], at[pick]
        best_key, best_at = key, at
    return np.sort(best_at)


def _read_parquet(path: Path) -> pd.DataFrame:
    """A Parquet file through the conversion polars and pyarrow tables get (``data.as_pandas``).

    A file polars wrote keeps its columns' meaning: a boolean column with
    nulls stays boolean (pandas would read objects, taken for text), a
    Categorical has its levels sorted, an Enum keeps its order.
    """
    try:
        pq = importlib.import_module("pyarrow.parquet")
    except ImportError:  # pandas may read it with fastparquet
        return pd.read_parquet(path)
    return as_pandas(pq.read_table(path), name=f"the file {path.name}")


def conform(frame: pd.DataFrame, model) -> pd.DataFrame:
    """``frame`` with each column cast to what ``model`` was fit on (a new frame).

    Raises
    ------
    FileError
        When a column cannot be what the model expects: text where it saw
        numbers, or no value at all among the levels it knows.
    """
    expected = expected_inputs(model)
    out = frame.copy()
    for name, exp in expected.items():
        if name not in out.columns:
            continue
        col = out[name]
        if exp.text is None:
            pass  # the model does not say: the file's own reading stands
        elif exp.text:
            if not (pd.api.types.is_object_dtype(col) or pd.api.types.is_string_dtype(col)
                    or isinstance(col.dtype, pd.CategoricalDtype)):
                col = col.map(lambda v: v if pd.isna(v) else _as_text(v)).astype(object)
        else:
            values = col.astype(object) if isinstance(col.dtype, pd.CategoricalDtype) else col
            if not pd.api.types.is_numeric_dtype(values):
                numbers = pd.to_numeric(values, errors="coerce")
                bad = values[numbers.isna() & values.notna()]
                if len(bad):
                    raise FileError(
                        f"column {name!r} holds text such as {str(bad.iloc[0])!r}, but the "
                        f"model ({exp.source}) was fit on numbers there.")
                col = numbers
        if exp.category:
            # without the model's levels (XGBoost before 3.1 stores codes only), pandas'
            # sorted levels are what astype("category") gave when the model was fit
            col = pd.Categorical(col.astype(object) if exp.text else col,
                                 categories=exp.levels)
            col = pd.Series(col, index=out.index, name=name)
        out[name] = col
    check_frame(out, model, expected=expected)
    return out


def check_frame(frame, model, *, expected=None) -> list:
    """Warnings about columns of ``frame`` the model will read wrongly; raises when none fits.

    A column none of whose values is among the levels the model knows would
    make every row an unknown level (a one-hot encoder with
    ``handle_unknown="ignore"`` maps them all to zeros): that raises, naming
    the column, an example of each side, and the likely fix.  Some unknown
    values give a warning with their share.
    """
    if not isinstance(frame, pd.DataFrame):
        return []
    expected = expected_inputs(model) if expected is None else expected
    notes = []
    for name, exp in expected.items():
        if name not in frame.columns or exp.levels is None or not len(exp.levels):
            continue
        col = frame[name]
        present = col.dropna()
        if present.empty:
            continue
        known = set(exp.levels.tolist())
        values = present.astype(object) if isinstance(col.dtype, pd.CategoricalDtype) \
            else present
        inside = values.isin(known)
        if not inside.any():
            cast = ""
            if exp.text and not is_text(np.asarray(values.to_numpy())):
                cast = (f" The model saw text there and the data holds {col.dtype} values: "
                        f"read the column as text (pandas: dtype={{{name!r}: str}}).")
            elif not exp.text and is_text(np.asarray(values.to_numpy(dtype=object))):
                cast = " The model saw numbers there and the data holds text."
            raise FileError(
                f"no value of column {name!r} (such as {values.iloc[0]!r}) is among the "
                f"{len(exp.levels)} levels the model ({exp.source}) knows (such as "
                f"{exp.levels[0]!r}): every row would be an unknown level.{cast}")
        unseen = 1.0 - float(inside.mean())
        if unseen > 0:
            notes.append(f"{unseen:.0%} of the values of {name!r} are levels the model never "
                         f"saw (such as {values[~inside].iloc[0]!r}); the model reads them as "
                         "unknown.")
    return notes


def _as_text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


