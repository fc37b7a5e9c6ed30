"""Random streams of explained rows: each row draws from its own seed, set by its position.

A sampling explanation (permutation orders, KernelSHAP's coalitions, LIME's
neighbourhoods) of row ``i`` draws from ``default_rng([key, i])``, the
request's ``key`` drawn once from ``random_state``.  So a row's numbers depend
on the seed and on where the row is in the table, never on which other rows
were explained with it or on how a Dask DataFrame is partitioned: a partition
starting at row ``offset`` explains its rows with :meth:`RowStreams.at`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RowStreams"]

#: Exclusive bound of the request's key (numpy's SeedSequence takes any non-negative int).
_KEY_BOUND = 2**63 - 1
#: The place of draws shared by every row (no row's position: those are below 2**63).
_SHARED = 2**64 - 1


class RowStreams:
    """The random streams of a request's explained rows.

    Parameters
    ----------
    key : int
        The request's key (see :meth:`draw`).
    start : int, default=0
        The position, in the whole table, of the first explained row.
    """

    def __init__(self, key: int, start: int = 0):
        self.key, self.start = int(key), int(start)

    @classmethod
    def draw(cls, rng: np.random.Generator) -> "RowStreams":
        """The streams of a request whose ``random_state`` is the Generator ``rng``."""
        return cls(int(rng.integers(0, _KEY_BOUND)))

    def at(self, start: int) -> "RowStreams":
        """The same streams for rows that start at position ``start`` of the table."""
        return RowStreams(self.key, start)

    def seed(self, i: int, *more: int) -> list:
        """The seed of explained row ``i`` (``more``: sub-streams, e.g. LIME's repeats)."""
        return [self.key, self.start + int(i), *map(int, more)]

    def shared_seed(self, *more: int) -> list:
        """The seed of draws every row shares (LIME's ``sampling="shared"``), whatever ``start``."""
        return [self.key, _SHARED, *map(int, more)]

    def __call__(self, i: int, *more: int) -> np.random.Generator:
        """The Generator of explained row ``i``."""
        return np.random.default_rng(self.seed(i, *more))

    def __repr__(self):
        return f"RowStreams(key={self.key}, start={self.start})"
