"""The interventional value function of Shapley values, as engine segments.

A *query* is one (explained row, coalition): its value
:math:`v_i(S) = \\frac{1}{m} \\sum_b f(x^{(i)}_S, z^{(b)}_{\\bar S})` is the mean
prediction over the background rows :math:`z^{(b)}` with the features of the
coalition :math:`S` taken from the explained row.
"""

from __future__ import annotations

import numpy as np

from .._validation import InvalidParameterError
from ..engine import Segment

__all__ = ["MaskedRows"]


class MaskedRows(Segment):
    """Rows that mix an explained row with every background row under a coalition mask.

    Query ``q`` (one explained row with one mask) owns ``m`` contiguous rows
    ``where(mask, foreground[i], background[b])``, one per background row
    ``b``; they are averaged (``group = m``), so ``result`` holds one value
    :math:`v_i(S)` per query.

    Parameters
    ----------
    foreground : ndarray of shape (n, d)
        Explained rows (encoded; never written).
    background : ndarray of shape (m, d)
        Background rows that fill the features outside the coalition.
    masks : bool ndarray of shape (k, d) or (Q, d)
        Coalitions (True = the feature takes the explained row's value).
    rows : int ndarray of shape (Q,), optional
        Explained row of each mask.  When None, every mask is applied to
        every explained row: query ``q`` is row ``q // k`` with mask ``q % k``.
    """

    def __init__(self, foreground: np.ndarray, background: np.ndarray, masks, *, rows=None):
        masks = np.asarray(masks, dtype=bool)
        d = foreground.shape[1]
        if masks.ndim != 2 or masks.shape[1] != d or background.ndim != 2 \
                or background.shape[1] != d:
            raise InvalidParameterError(f"masks {masks.shape} and background {background.shape} "
                                        f"must have {d} columns like the explained rows")
        self.foreground = foreground
        self.background = background
        self.masks = masks
        self.m = background.shape[0]
        self.width = d
        if rows is None:
            self.query_rows = None
            self.k = masks.shape[0]
            n_queries = foreground.shape[0] * self.k
        else:
            self.query_rows = np.asarray(rows, dtype=np.intp)
            if self.query_rows.shape != (masks.shape[0],):
                raise InvalidParameterError(f"rows has shape {self.query_rows.shape}; expected "
                                            f"({masks.shape[0]},), one explained row per mask")
            n_queries = masks.shape[0]
        self.n_rows = n_queries * self.m
        self.group = self.m

    def rows(self, start, stop):
        m = self.m
        first, last = start // m, (stop - 1) // m + 1
        queries = np.arange(first, last)
        if self.query_rows is None:
            fg, mask = np.divmod(queries, self.k)
            mask = self.masks[mask]
        else:
            fg, mask = self.query_rows[queries], self.masks[queries]
        # broadcasting builds whole (query, background) blocks without gathering the background
        block = np.where(mask[:, None, :], self.foreground[fg][:, None, :],
                         self.background[None, :, :])
        block = block.reshape(-1, self.foreground.shape[1])
        lo = start - first * m
        return block[lo: lo + stop - start]

    def fill(self, start, stop, out):
        out[...] = self.rows(start, stop)
