"""The one pass's check of a LightGBM tree's float lines: byte classes, compiled to SIMD.

What a LightGBM model text's tree lines must guarantee before LightGBM reads
them, from its reader (``Tree::Tree(const char*, size_t*)`` in
``src/io/tree.cpp``, ``CommonC::StringToArray`` / ``StringToArrayFast`` /
``Atof`` / ``AtofPrecise`` and ``Common::Atoi`` in
``include/LightGBM/utils/common.h``), and from ours.  Two facts decide it:

* LightGBM's readers never fail quietly *out of bounds* on a number's text:
  ``Atoi`` reads a sign and digits and stops (a word of no digits is 0, an
  overflow wraps); ``Atof`` (``StringToArrayFast``'s floats, ``shrinkage``)
  reads a sign, digits, a fraction, an exponent and stops where they end (the
  next value is read from there), reads 'na'/'nan'/'null'/'inf', and stops the
  load with an error (``Log::Fatal``) at any other word; ``StringToArray``
  splits at spaces, stops the load where the count is not the tree's, and
  reads each word with ``AtofPrecise`` (fast_double_parser, else ``strtod``):
  the longest number prefix, an error where there is none.
* Our explanation never reads the file's floats: ``trees/_lightgbm.py``
  reads the trees from ``Booster.model_to_string()`` (LightGBM's own
  rewrite of the values it holds, doubles with 17 digits), so every float we
  explain with is the one LightGBM predicts with.  A float word LightGBM
  reads to a number (any number) cannot make our explanation differ from its
  predictions; what must hold is that it reads one, and reads the count.

==================  ==============================  =================================
key                 LightGBM's reading, and what    what the one pass checks (a text
                    a malformed value does there    it does not pass: the old path)
==================  ==============================  =================================
num_leaves,         ``Atoi`` (missing: an error);   ``-?[0-9]{1,9}``, once each;
num_cat             garbage reads 0 or a prefix;    num_leaves > 0, num_cat >= 0;
                    they size every array (a huge   every count below (so no array
                    allocation)                     is larger than its line)
is_linear           ``Atoi`` (missing: 0)           ``0`` only (a linear tree's
                                                    leaves depend on the row)
left_child,         ``StringToArrayFast<int>``: no  ``-?[0-9]{1,9}`` words, one space,
right_child,        count check (short: 0s read     count m; children inside the
split_feature,      past the end), garbage reads    tree, each node reached once
decision_type       0, '1-2' reads 1 then -2;       within MAX_TREE_DEPTH, features
                    predict indexes with them       >= 0 (then < the header's
                    unchecked (out of bounds)       count), 4-bit decision types
threshold           ``StringToArray<double>``:      count m, the byte classes; the
                    count: an error; each word      full grammar where the tree has a
                    ``AtofPrecise``'s longest       categorical split (its value, an
                    number prefix, an error where   int cast, indexes cat_boundaries)
                    none; a categorical split       or a word has a 3+ digit exponent
                    indexes cat_boundaries by it    (the old path reads '0e999' NaN)
leaf_value,         ``StringToArray<double>``, as   count (leaves), the byte classes
leaf_weight         threshold (an error stops the
                    load; LightGBM 4's threaded
                    read aborted the process)
split_gain,         ``StringToArrayFast``           count (splits), the byte classes
internal_value,     (``Atof``): no count check; a   (no letter reaches ``Atof``)
internal_weight     word it cannot read: an error
internal_count,     ``StringToArrayFast<int>``      count, the byte classes
leaf_count          (``Atoi``: garbage reads 0)
shrinkage           ``Atof`` (missing: 1)           one word at most, byte classes
cat_boundaries,     ``StringToArrayFast<int>`` /    ``-?[0-9]{1,9}`` / ``[0-9]{1,10}``,
cat_threshold       ``<uint32_t>``: they index the  boundaries increasing from 0,
                    bitsets, the last sizes         32-bit words, as many as the last
                    cat_threshold                   boundary, <= MAX_CATEGORY_CODE
==================  ==============================  =================================

The byte classes (:func:`float_line`, one comparison-only expression per
byte, which LLVM compiles to 32-byte SIMD): each byte a digit, a space, ``-``,
``+``, ``.``, ``e`` or ``E``, and each in a place it may stand in a number
next to its neighbours: a word starts with a digit or ``-`` and a digit, a
space stands between a digit and a word, ``.`` between two digits, ``e``
after a digit and before a digit or sign, ``+`` after ``e``, the line ends on
a digit.  Every word then starts a number LightGBM's readers read (``Atof``
and ``AtofPrecise`` never fail on it, no letters reach ``Atof``), single
spaces make the words' count LightGBM's, and the only words it passes that the
full grammar ``-?D+(\\.D+)?([eE][-+]?D+)?`` would not are those repeating a
part (``1.2.3``, ``1e2e3``, ``1e2.3``): LightGBM reads their longest number
prefix (``Atof`` reads the rest as the next value), and we explain with what
it read.  The old path refuses those in ``leaf_value`` and ``threshold`` (its
Python reading of them); there the verdict moves from a refusal to LightGBM's
own reading, which is what predicts.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint8, uint64

__all__: list[str] = []

#: the bytes the SIMD loop reads per step (a line's bytes are read in blocks of these)
BLOCK = 64
#: one bit in each byte of a 64-bit word
_ONES = np.uint64(0x0101010101010101)
#: the flags of a byte (:func:`_block_flags`)
_OK, _SPACE, _END, _BIG = 1, 2, 4, 8


@njit(cache=True, inline="always")
def _block_flags(seg, flags):  # pragma: no cover - compiled
    """``flags[q]`` of byte ``seg[q + 1]`` for q < BLOCK (``seg`` starts one byte before the
    block and runs four past it: no index is negative, so LLVM vectorises the loop):
    _OK where the byte may stand there in a number (see the module's docstring),
    _SPACE, _END (a line end), _BIG where it is an ``e`` of a 3+ digit exponent."""
    for q in range(1, BLOCK + 1):
        p, c, n = seg[q - 1], seg[q], seg[q + 1]
        dp = (p >= 48) & (p <= 57)
        dc = (c >= 48) & (c <= 57)
        dn = (n >= 48) & (n <= 57)
        ep = (p | 32) == 101
        ec = (c | 32) == 101
        ok = dc | ((c == 32) & dp & (dn | (n == 45))) \
            | ((c == 45) & ((p == 32) | (p == 61) | ep) & dn) \
            | ((c == 43) & ep & dn) | ((c == 46) & dp & dn) \
            | (ec & dp & (dn | (n == 43) | (n == 45)))
        n2, n3, n4 = seg[q + 2], seg[q + 3], seg[q + 4]
        big = ec & (n2 >= 48) & (n2 <= 57) & (n3 >= 48) & (n3 <= 57) \
            & (dn | ((n4 >= 48) & (n4 <= 57)))
        flags[q - 1] = uint8(ok) | (uint8(c == 32) << uint8(1)) \
            | (uint8(c == 10) << uint8(2)) | (uint8(big) << uint8(3))


@njit(cache=True)
def float_line(buf, i, flags):  # pragma: no cover - compiled
    """The float value from ``buf[i]`` (after its ``=``) to its line's end, by byte classes
    (see the module's docstring); ``flags``: BLOCK bytes of scratch.

    Returns where the line ends (-1: a byte out of class; -2: the line runs
    too near the buffer's end for the blocks, read it otherwise), its words'
    count, and whether a word has an exponent of 3 or more digits.
    """
    words = flags.view(np.uint64)
    j, good, spaces, big = i, True, 0, False
    while True:
        if j + BLOCK + 8 > len(buf):
            return -2, 0, big
        _block_flags(buf[j - 1:j + BLOCK + 5], flags)
        every, some = words[0], words[0]
        space = (words[0] >> uint64(1)) & _ONES
        for w in range(1, BLOCK // 8):
            every &= words[w]
            some |= words[w]
            space += (words[w] >> uint64(1)) & _ONES
        if some & (_ONES << uint64(2)):  # the line ends in this block: its bytes one by one
            break
        good &= (every & _ONES) == _ONES
        big |= (some & (_ONES << uint64(3))) != uint64(0)
        spaces += int((space * _ONES) >> uint64(56))  # the bytes' sum, in the top byte
        j += BLOCK
    for q in range(BLOCK):
        f = flags[q]
        if f & _END:
            j += q
            break
        good &= (f & _OK) == _OK
        spaces += (f & _SPACE) >> 1
        big |= (f & _BIG) != 0
    if not good:
        return -1, 0, big
    return j, 0 if j == i else spaces + 1, big
