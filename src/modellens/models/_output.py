"""Picking the explained output from a model's answer: one rule for numpy and torch."""

from __future__ import annotations

__all__ = ["select_output"]

#: The hint for several outputs per row when ``target=`` can pick one.
PASS_TARGET = (" The model returns several outputs per row; pass target= (the column to explain; "
               "on the command line, --class INDEX).")


def select_output(y, index, m, *, required=True, several_hint=PASS_TARGET):
    """The explained output of a batch, shape ``(m,)``; ValueError with the reason otherwise.

    Works on numpy arrays and torch tensors alike (torch keeps its graph).

    Parameters
    ----------
    y : array or tensor
        The model's answer for ``m`` rows.
    index : int or None
        The output column to explain (negative ones count from the end).
    m : int
        Rows asked for.
    required : bool, default=True
        ``index`` was asked for by the user, so a one-output answer is an
        error; otherwise (a default column) it applies to two-dimensional
        answers only.
    several_hint : str
        Added when the answer has several outputs per row and none was chosen.
    """
    if index is not None and (y.ndim == 2 or required):
        if y.ndim != 2:
            raise ValueError(f"target={index} selects an output column, but the model returns "
                             f"shape {tuple(y.shape)}: one output per row. Leave target= out "
                             "for a model with one output.")
        k = y.shape[1]
        if not -k <= index < k:
            raise ValueError(f"target={index} is out of range: the model returns {k} output(s) "
                             f"per row (valid: 0..{k - 1}, or -{k}..-1 from the end).")
        y = y[:, index]
    elif y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if tuple(y.shape) != (m,):
        hint = several_hint if y.ndim == 2 and y.shape[0] == m else ""
        raise ValueError(f"the model returned shape {tuple(y.shape)} for {m} rows; "
                         f"expected ({m},).{hint}")
    return y
