"""The result of :func:`modellens.shift`: each player's share of a change, with its test."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._result_dicts import flat_dict, flat_fields, floats, strings
from .._validation import InvalidParameterError

__all__ = ["Shift"]

_ARRAYS = ("contribution", "std", "p_value", "p_value_unadjusted")
_NUMBERS = ("total_change", "unexplained", "unexplained_std", "reference_value",
            "current_value")
#: The fields of its dict, each with its conversion (to_dict and from_dict alike).
_LAYOUT: dict[str, Callable[[Any], Any]] = {
    "feature_names": strings, **dict.fromkeys(_ARRAYS, floats),
    **dict.fromkeys(_NUMBERS, float), "metric": str, "output": str, "n_pairs": int,
    "correction": str}


@dataclass(eq=False)
class Shift:
    """The change of a mean (prediction or metric) between two data sets, shared by feature.

    Attributes
    ----------
    feature_names : list of str
        The players: the features, then ``"(labels)"`` when labels were given.
    contribution : ndarray of shape (p,)
        Each player's Shapley value of the change (see :func:`modellens.shift`).
    std : ndarray of shape (p,)
        Its standard error.
    p_value : ndarray of shape (p,)
        Student's t test of "contribution 0", Holm-adjusted over the players.
    p_value_unadjusted : ndarray of shape (p,)
    total_change : float
        ``current_value - reference_value``, over every row.
    unexplained, unexplained_std : float
        ``total_change`` minus the sum of the contributions (the pairs'
        sampling error), and its standard error.
    reference_value, current_value : float
        The mean prediction (or metric) over each data set.
    metric : str
    output : str
        The model output whose predictions were read.
    n_pairs : int
    correction : str
        The multiple-testing correction of ``p_value`` (``"holm"``).

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> rng = np.random.default_rng(0)
    >>> ref, cur = rng.normal(size=(500, 2)), rng.normal(size=(500, 2)) + [0.5, 0.0]
    >>> s = ml.shift(lambda A: A @ [1.0, 1.0], ref, cur, random_state=0)
    >>> list(s.to_frame().feature)
    ['x0', 'x1', '(unexplained)']
    >>> bool(s.p_value[0] < 0.05)
    True
    """

    feature_names: list
    contribution: np.ndarray
    std: np.ndarray
    p_value: np.ndarray
    p_value_unadjusted: np.ndarray
    total_change: float
    unexplained: float
    unexplained_std: float
    reference_value: float
    current_value: float
    metric: str
    output: str
    n_pairs: int
    correction: str = "holm"

    def __repr__(self):
        return (f"Shift(metric={self.metric!r}, players={len(self.feature_names)}, "
                f"total_change={self.total_change:.4g}, n_pairs={self.n_pairs})")

    def to_frame(self) -> pd.DataFrame:
        """One row per player and one ``"(unexplained)"`` row: ``feature``,
        ``contribution``, ``std``, ``p_value`` (Holm), ``p_value_unadjusted``."""
        frame = pd.DataFrame({"feature": list(self.feature_names),
                              **{k: np.asarray(getattr(self, k)) for k in _ARRAYS}})
        rest = pd.DataFrame({"feature": ["(unexplained)"], "contribution": [self.unexplained],
                             "std": [self.unexplained_std], "p_value": [np.nan],
                             "p_value_unadjusted": [np.nan]})
        return pd.concat([frame, rest], ignore_index=True)

    def to_dict(self) -> dict:
        """A JSON-safe dict of every field (:meth:`from_dict` reads it back)."""
        return flat_dict(self, _LAYOUT)

    @classmethod
    def from_dict(cls, d: dict) -> "Shift":
        """Rebuild the result from :meth:`to_dict` output (also after a JSON round trip)."""
        from .._result_specs import check_shift

        return cls(**flat_fields(d, "Shift", _LAYOUT, check_shift))

    def for_output(self, output=None) -> "Shift":
        """This result (it holds one output; ``target=`` of :func:`~modellens.shift` picks it)."""
        if output not in (None, 0, self.output):
            raise InvalidParameterError(f"this shift holds one output, {self.output!r}.")
        return self

    def plot(self, ax=None, *, output=None, max_features: int = 20, confidence: float = 0.95):
        """The drift bar chart: each player's contribution with its interval, largest on top.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (a new figure when None).
        output : optional
            The one output held (None).
        max_features : int, default=20
            The players of largest contribution drawn.
        confidence : float, default=0.95
            The level of the normal intervals drawn (contribution +/- z std).

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> rng = np.random.default_rng(0)
        >>> ref, cur = rng.normal(size=(300, 2)), rng.normal(size=(300, 2)) + [0.0, 1.0]
        >>> ax = ml.shift(lambda A: A @ [1.0, 1.0], ref, cur, random_state=0).plot()
        >>> [t.get_text() for t in ax.get_yticklabels()][-1]  # the largest on top
        'x1'
        """
        from scipy import stats

        from ..plot.change import plot_intervals

        self.for_output(output)
        z = stats.norm.ppf(0.5 + confidence / 2)
        c, s = np.asarray(self.contribution), np.asarray(self.std)
        return plot_intervals(self.feature_names, c, c - z * s, c + z * s, ax=ax,
                              max_features=max_features,
                              xlabel=f"contribution to the change of the mean {self.metric}")
