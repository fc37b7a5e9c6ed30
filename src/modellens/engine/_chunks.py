"""Chunks: the rows of many segments cut into model calls of about a chunk each.

Both executors read these cuts: the local one (threads) and the Dask one, whose
workers build each chunk's rows from its pieces.
"""

from __future__ import annotations

import numpy as np

__all__ = ["chunks", "chunk_rows"]


def chunks(segments, sizers):
    """Yield ``(key, pieces)``: lists of ``(segment, start, stop)`` of about a chunk each.

    Pieces of one chunk share a call key (the same kind of answer, rows of one
    width).  A chunk that stops inside a segment stops at a multiple of the
    sizer's ``align`` rows of that segment.
    """
    pieces: list[tuple] = []
    filled, key = 0, None
    for seg in segments:
        seg_key = seg.call_key()
        if pieces and seg_key != key:
            yield key, pieces
            pieces, filled = [], 0
        key = seg_key
        sizer = sizers[key]
        start = 0
        while start < seg.n_rows:
            target = sizer.size
            stop = min(seg.n_rows, start + target - filled)
            if stop < seg.n_rows:
                stop -= stop % sizer.align
            if stop <= start:  # no aligned cut fits in what is left of this chunk
                yield key, pieces
                pieces, filled = [], 0
                continue
            pieces.append((seg, start, stop))
            filled += stop - start
            start = stop
            if filled >= target:
                yield key, pieces
                pieces, filled = [], 0
    if pieces:
        yield key, pieces


def chunk_rows(pieces) -> np.ndarray:
    """The rows of one chunk: its pieces ``(segment, start, stop)`` one after the other."""
    if len(pieces) == 1:
        seg, a, b = pieces[0]
        rows = seg.rows(a, b)
        # the model may write into what it is given (X.fillna(0, inplace=True)): rows that
        # are the library's own memory, read again after the call, go out as a copy
        return rows.copy() if seg.lends_rows else rows
    # one buffer per chunk: segments write their rows straight into it
    rows = np.empty((sum(b - a for _, a, b in pieces), pieces[0][0].width))
    offset = 0
    for seg, a, b in pieces:
        seg.fill(a, b, rows[offset: offset + b - a])
        offset += b - a
    return rows
