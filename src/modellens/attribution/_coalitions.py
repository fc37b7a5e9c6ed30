"""Coalitions as boolean masks: enumeration, Shapley weights, de-duplication."""

from __future__ import annotations

from math import comb

import numpy as np


__all__ = ["bit_masks", "exact_weights", "unique_masks", "size_weights"]


def bit_masks(codes, d: int) -> np.ndarray:
    """Boolean masks ``(len(codes), d)`` of integer coalition codes (feature j = bit j)."""
    codes = np.asarray(codes, dtype=np.int64)
    return ((codes[:, None] >> np.arange(d, dtype=np.int64)) & 1).astype(bool)


def exact_weights(d: int) -> np.ndarray:
    r"""The matrix ``W`` of shape ``(2**d, d)`` with ``phi = v @ W``.

    Row ``S`` (a bit code) holds the Shapley weight with which :math:`v(S)`
    enters each :math:`\phi_j`:

    .. math:: W_{S j} = \begin{cases} w(|S| - 1) & j \in S \\ -w(|S|) & j \notin S
              \end{cases}, \qquad w(s) = \frac{s!\,(d - s - 1)!}{d!}
              = \frac{1}{d \binom{d-1}{s}},

    which is :math:`\phi_j = \sum_{S \not\ni j} w(|S|)\,[v(S \cup j) - v(S)]`
    regrouped by coalition.
    """
    masks = bit_masks(np.arange(2 ** d), d)
    size = masks.sum(axis=1)
    w = np.array([1.0 / (d * comb(d - 1, s)) for s in range(d)])
    inside = w[np.clip(size - 1, 0, d - 1)][:, None]
    outside = -w[np.clip(size, 0, d - 1)][:, None]
    return np.where(masks, inside, outside)


def size_weights(d: int) -> np.ndarray:
    r"""Shapley-kernel weight of each coalition size ``s = 1 .. d-1``, summing to 1.

    The kernel weight of one coalition is :math:`\frac{d-1}{\binom{d}{s} s (d-s)}`,
    so all coalitions of size ``s`` together weigh :math:`\propto \frac{d-1}{s(d-s)}`.
    """
    s = np.arange(1, d, dtype=np.float64)
    mu = (d - 1) / (s * (d - s))
    return mu / mu.sum()


def unique_masks(masks):
    """Distinct rows of a boolean mask matrix.

    Returns ``(unique, first, inverse)``: ``masks == unique[inverse]`` and
    ``first`` the position of each distinct mask's first occurrence.
    """
    packed = np.ascontiguousarray(np.packbits(masks, axis=1))
    key = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return masks[first], first, inverse.ravel()
