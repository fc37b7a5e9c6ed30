"""Result of a LIME kernel-width sweep (:func:`modellens.lime_width_sweep`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from .._result_dicts import flat_dict, flat_fields, floats, optional, strings
from .._validation import InvalidParameterError
from ..models import output_position, own_output
from ..plot.lime import plot_width_sweep

__all__ = ["WidthSweep"]

#: The fields of its dict with their conversions (to_dict and from_dict alike); those of
#: the outputs may be left out (None: one output).
_LAYOUT: dict[str, Callable[[Any], Any]] = {
    "widths": floats, "values": floats, "score": floats, "score_holdout": floats,
    "feature_names": strings, "default_width": float, "outputs": optional(strings),
    "output_labels": optional(list), "output": optional(str)}
_REQUIRED = ("widths", "values", "score", "score_holdout", "feature_names", "default_width")


class WidthSweep:
    """How one row's LIME explanation changes with the kernel width.

    Attributes
    ----------
    widths : ndarray of shape (W,)
    values : ndarray of shape (W, d), or (W, d, k) for k outputs
        The surrogate's weights at each width.
    score, score_holdout : ndarray of shape (W,), or (W, k)
        Weighted R^2 on the samples, and leave-one-out.
    feature_names : list of str
    default_width : float
        LIME's default width, ``0.75 * sqrt(d)``.
    outputs : list of str or None
        The names of the explained outputs when there are several (every
        output's surrogates are fit on the same samples); None for one.
        :meth:`for_output` takes one output's sweep.
    output : str or None
        The name of the one explained output (None with several).

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> train = np.random.default_rng(0).normal(size=(500, 3))
    >>> sweep = ml.lime_width_sweep(lambda A: A @ [2.0, -1.0, 0.0], train[:1],
    ...                             training_data=train, random_state=0)
    >>> sweep.widths.shape, sweep.values.shape, sweep.score.shape
    ((25,), (25, 3), (25,))
    >>> print(round(sweep.default_width, 4))  # 0.75 * sqrt(3)
    1.299
    >>> sweep.feature_names[int(np.argmax(np.abs(sweep.values[-1])))]
    'x0'
    """

    def __init__(self, widths, values, score, score_holdout, feature_names, default_width, *,
                 outputs=None, output_labels=None, output=None):
        self.widths, self.values = widths, values
        self.score, self.score_holdout = score, score_holdout
        self.feature_names, self.default_width = feature_names, default_width
        self.outputs, self.output_labels = outputs, output_labels
        self.output = output

    def __repr__(self):
        several = "" if self.outputs is None else f", outputs={len(self.outputs)}"
        return f"WidthSweep(widths={len(self.widths)}, features={len(self.feature_names)}" \
            f"{several})"

    def for_output(self, output) -> "WidthSweep":
        """The sweep of one output, as the same call with that ``target=`` gives it.

        Parameters
        ----------
        output : label, str or int
            A class label, an output name or a position.

        Returns
        -------
        WidthSweep
            ``values`` ``(W, d)``, ``score`` ``(W,)``.

        Examples
        --------
        >>> import numpy as np, modellens as ml
        >>> train = np.random.default_rng(0).normal(size=(300, 2))
        >>> sweep = ml.lime_width_sweep(lambda A: A * [1.0, -1.0], train[:1],
        ...                             training_data=train, num_samples=300, random_state=0)
        >>> sweep.outputs, sweep.values.shape
        (['f(x)[0]', 'f(x)[1]'], (25, 2, 2))
        >>> sweep.for_output(1).values.shape
        (25, 2)
        """
        if self.outputs is None:
            own_output(self.output, output)
            return self
        c = output_position(self.outputs, self.output_labels, output)
        return WidthSweep(self.widths, self.values[..., c], self.score[..., c],
                          self.score_holdout[..., c], self.feature_names, self.default_width,
                          output=self.outputs[c])

    def to_frame(self) -> pd.DataFrame:
        """One row per width (and output): the width, each feature's weight and the R^2.

        Returns
        -------
        DataFrame
            Columns ``width``, then one per feature, then ``score`` and
            ``score_holdout``; with several outputs an ``output`` column first
            and the widths once per output.

        Examples
        --------
        >>> import numpy as np, modellens as ml
        >>> train = np.random.default_rng(0).normal(size=(100, 2))
        >>> sweep = ml.lime_width_sweep(lambda A: A @ [2.0, -1.0], train[:1],
        ...                             training_data=train, num_samples=200, random_state=0)
        >>> frame = sweep.to_frame()
        >>> list(frame.columns), len(frame)
        (['width', 'x0', 'x1', 'score', 'score_holdout'], 25)
        """
        if self.outputs is not None:
            return pd.concat([self.for_output(c).to_frame().assign(output=name)
                              for c, name in enumerate(self.outputs)],
                             ignore_index=True)[["output", "width", *self.feature_names,
                                                 "score", "score_holdout"]]
        frame = pd.DataFrame(np.asarray(self.values), columns=list(self.feature_names))
        frame.insert(0, "width", np.asarray(self.widths))
        frame["score"], frame["score_holdout"] = self.score, self.score_holdout
        return frame

    def to_dict(self) -> dict:
        """A JSON-safe dict of every field, to save the sweep as JSON.

        Returns
        -------
        dict
            ``json.dumps`` works on it and :meth:`from_dict` rebuilds the sweep.

        Examples
        --------
        >>> import json
        >>> import numpy as np, modellens as ml
        >>> train = np.random.default_rng(0).normal(size=(100, 2))
        >>> sweep = ml.lime_width_sweep(lambda A: A @ [2.0, -1.0], train[:1],
        ...                             training_data=train, num_samples=200, random_state=0)
        >>> back = ml.WidthSweep.from_dict(json.loads(json.dumps(sweep.to_dict())))
        >>> bool(np.array_equal(back.values, sweep.values))
        True
        """
        return flat_dict(self, _LAYOUT)

    @classmethod
    def from_dict(cls, d: dict) -> "WidthSweep":
        """Rebuild the sweep from :meth:`to_dict` output (also after a JSON round trip).

        Parameters
        ----------
        d : dict
            What :meth:`to_dict` returned.

        Returns
        -------
        WidthSweep

        Examples
        --------
        >>> import json
        >>> import numpy as np, modellens as ml
        >>> train = np.random.default_rng(0).normal(size=(100, 2))
        >>> sweep = ml.lime_width_sweep(lambda A: A @ [2.0, -1.0], train[:1],
        ...                             training_data=train, num_samples=200, random_state=0)
        >>> ml.WidthSweep.from_dict(json.loads(json.dumps(sweep.to_dict()))).feature_names
        ['x0', 'x1']
        """
        from .._result_specs import check_width_sweep

        fields = flat_fields(d, "WidthSweep", _LAYOUT, check_width_sweep, required=_REQUIRED)
        return cls(**fields)

    def plot(self, ax=None, *, output=None, max_display: int = 6):
        """Draw each top feature's weight against the kernel width, to see if the answer holds.

        A line per feature (those with the largest weights), the width on a
        log scale with the default width dashed, and the held-out R^2 of the
        surrogate dotted on a second y axis: a width is trustworthy where the
        weights are flat and the R^2 is high.  The R^2 axis runs from at most
        -1 to 1; lower values (a surrogate much worse than a constant, common
        at narrow widths) are marked by triangles at -1.

        Parameters
        ----------
        output : label, str or int, optional
            Which output to draw, when the sweep has several (a class label,
            an output name or a position); required then.
        max_display : int, default=6
            Most features drawn.
        ax : matplotlib Axes, optional
            Where to draw; None (default) draws on a new figure.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes of the weights (the R^2 axis is its twin).

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> train = np.random.default_rng(0).normal(size=(100, 3))
        >>> sweep = ml.lime_width_sweep(lambda A: A @ [2.0, -1.0, 0.0], train[:1],
        ...                             training_data=train, num_samples=500, random_state=0)
        >>> ax = sweep.plot(max_display=2)
        >>> len(ax.lines), ax.get_xscale()  # two features, the default width, the zero line
        (4, 'log')
        """
        if self.outputs is None:
            if output is not None:
                raise InvalidParameterError(
                    f"output={output!r}: this sweep has one output; leave output= out.")
            return plot_width_sweep(self, max_display=max_display, ax=ax)
        if output is None:
            raise InvalidParameterError(
                f"the sweep has {len(self.outputs)} outputs: {self.outputs}. Pick the one to "
                "draw with output= (a class label, an output name or a position).")
        return plot_width_sweep(self.for_output(output), max_display=max_display, ax=ax)
