"""Picking the explained output from a model's answer: one rule for numpy and torch."""

from __future__ import annotations

import numpy as np

__all__ = ["select_output", "select_outputs", "output_position", "own_output"]

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


def select_outputs(y, columns, m, width, names):
    """The explained columns of a multi-output answer, shape ``(m, k)``; ValueError otherwise.

    ``width`` is the number of columns the model's answer had when its outputs
    were chosen; an answer of another width is refused (the outputs would no
    longer be the ones named).
    """
    if y.ndim != 2 or y.shape[0] != m or y.shape[1] != width:
        raise ValueError(
            f"the model returned shape {tuple(y.shape)} for {m} rows; expected ({m}, {width}): "
            f"its outputs {names} were chosen from an answer of {width} columns. A model must "
            "return the same outputs at every call.")
    return y[:, columns] if list(columns) != list(range(width)) else y


def output_position(outputs, labels, output) -> int:
    """The position among ``outputs`` of a class label, an output name or a position."""
    if outputs is None:
        raise KeyError("the result has one output; it needs no for_output().")
    k = len(outputs)
    if isinstance(output, str) and output in outputs:
        return outputs.index(output)
    if labels is not None:
        for c, label in enumerate(labels):
            # a label matches a value of its own kind only (the class 1 is not True)
            if _kind(label) == _kind(output) and label == output:
                return c
    if isinstance(output, (int, np.integer)) and not isinstance(output, bool) and \
            -k <= int(output) < k:
        return int(output) % k
    raise KeyError(f"{output!r} is none of the outputs {outputs} (nor their labels "
                   f"{labels}, nor a position 0..{k - 1}).")


def own_output(name, output) -> None:
    """Check that ``output`` names a single-output result's one output; KeyError otherwise.

    The same names :func:`output_position` takes: the output's name, the class
    label it explains (``"setosa"`` for ``"P(y = setosa)"``) or the position
    0 (or -1), so ``result.for_output(o)`` of a result asked for with
    ``target=[o]`` is the result itself.
    """
    if isinstance(output, (int, np.integer)) and not isinstance(output, (bool, np.bool_)) \
            and int(output) in (0, -1):
        return
    if name is not None and isinstance(output, (str, int, float, np.integer, np.floating)):
        if output == name:
            return
        head, sep, label = str(name).partition("(y = ")
        if sep and label.endswith(")") and label[:-1] == str(output):
            return
    raise KeyError(f"the result has one output, {name!r}; {output!r} is neither its name, "
                   "its class label nor the position 0.")


def _kind(x):
    if isinstance(x, (bool, np.bool_)):
        return "bool"
    if isinstance(x, (int, float, np.integer, np.floating)):
        return "number"
    if isinstance(x, str):
        return "str"
    return type(x)
