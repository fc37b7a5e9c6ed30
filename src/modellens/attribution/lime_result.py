"""Result of a LIME kernel-width sweep (:func:`modellens.lime_width_sweep`)."""

from __future__ import annotations

from ..plot.lime import plot_width_sweep

__all__ = ["WidthSweep"]


class WidthSweep:
    """How one row's LIME explanation changes with the kernel width.

    Attributes
    ----------
    widths : ndarray of shape (W,)
    values : ndarray of shape (W, d)
        The surrogate's weights at each width.
    score, score_holdout : ndarray of shape (W,)
        Weighted R^2 on the samples, and leave-one-out.
    feature_names : list of str
    default_width : float
        LIME's default width, ``0.75 * sqrt(d)``.

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

    def __init__(self, widths, values, score, score_holdout, feature_names, default_width):
        self.widths, self.values = widths, values
        self.score, self.score_holdout = score, score_holdout
        self.feature_names, self.default_width = feature_names, default_width

    def __repr__(self):
        return f"WidthSweep(widths={len(self.widths)}, features={len(self.feature_names)})"

    def plot(self, *, max_display: int = 6, ax=None):
        """Draw each top feature's weight against the kernel width, to see if the answer holds.

        A line per feature (those with the largest weights), the width on a
        log scale with the default width dashed, and the held-out R^2 of the
        surrogate dotted on a second y axis: a width is trustworthy where the
        weights are flat and the R^2 is high.  The R^2 axis runs from at most
        -1 to 1; lower values (a surrogate much worse than a constant, common
        at narrow widths) are marked by triangles at -1.

        Parameters
        ----------
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
        return plot_width_sweep(self, max_display=max_display, ax=ax)
