"""Tests over the rows of one explanation: two groups' mean attributions, one mean against 0.

:func:`compare_groups` (``attr.compare_groups(mask)``) compares the rows where
``mask`` holds (group B) with the others (group A): per feature the
difference of the mean attributions, a percentile bootstrap confidence
interval (rows resampled within each group), and Welch's t test of "the
means are equal", its p-values adjusted over the features by Holm's method.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._result_dicts import flat_dict, flat_fields, floats, strings
from .._validation import InvalidParameterError, check_int, check_random_state

__all__ = ["holm", "compare_groups", "GroupComparison", "mean_test", "ROUNDING"]

#: Values within this fraction of the largest value are 0 to :func:`mean_test`: a dummy
#: player's values in float64 arithmetic (sums of differences of model outputs).
ROUNDING = 1e-12

#: The per-feature arrays of a comparison, and the fields of its dict with their
#: conversions (to_dict and from_dict alike).
_ARRAYS = ("mean_a", "mean_b", "difference", "ci_low", "ci_high", "std", "p_value",
           "p_value_unadjusted")
_LAYOUT: dict[str, Callable[[Any], Any]] = {
    "feature_names": strings, **dict.fromkeys(_ARRAYS, floats), "n_a": int, "n_b": int,
    "confidence": float, "output": str}


def holm(p) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error rate), in the given order.

    The ``i``-th smallest p-value is multiplied by ``m - i`` (``i`` from 0),
    made non-decreasing along the order and capped at 1 (Holm 1979).
    """
    p = np.asarray(p, dtype=np.float64)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = scaled
    return out


@dataclass(eq=False)
class GroupComparison:
    """Mean attributions of two groups of rows and their difference, per feature.

    Attributes
    ----------
    feature_names : list of str
    mean_a, mean_b : ndarray of shape (d,)
        Mean attribution of each feature over group A (``mask`` False) and
        group B (``mask`` True).
    difference : ndarray of shape (d,)
        ``mean_b - mean_a``.
    ci_low, ci_high : ndarray of shape (d,)
        Percentile bootstrap interval of the difference at ``confidence``.
    std : ndarray of shape (d,)
        Standard error of the difference (Welch).
    p_value : ndarray of shape (d,)
        Welch's t test of equal means, Holm-adjusted over the features.
    p_value_unadjusted : ndarray of shape (d,)
    n_a, n_b : int
        Rows in each group.
    confidence : float
    output : str

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).normal(size=(200, 2))
    >>> attr = ml.shapley(lambda A: A @ [1.0, 1.0], X, background=X[:50])
    >>> g = attr.compare_groups(X[:, 0] > 0, n_boot=200, random_state=0)
    >>> bool(g.p_value[0] < 0.01), bool(g.ci_low[0] > 0)  # the groups split on x0
    (True, True)
    """

    feature_names: list
    mean_a: np.ndarray
    mean_b: np.ndarray
    difference: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    std: np.ndarray
    p_value: np.ndarray
    p_value_unadjusted: np.ndarray
    n_a: int
    n_b: int
    confidence: float
    output: str = "prediction"

    def __repr__(self):
        return (f"GroupComparison(features={len(self.feature_names)}, n_a={self.n_a}, "
                f"n_b={self.n_b}, output={self.output!r})")

    def to_frame(self) -> pd.DataFrame:
        """One row per feature: ``feature``, the means, ``difference``, the interval,
        ``std``, ``p_value`` (Holm) and ``p_value_unadjusted``."""
        out: dict[str, Any] = {"feature": list(self.feature_names)}
        out.update({k: np.asarray(getattr(self, k)) for k in _ARRAYS})
        return pd.DataFrame(out)

    def to_dict(self) -> dict:
        """A JSON-safe dict of every field (:meth:`from_dict` reads it back)."""
        return flat_dict(self, _LAYOUT)

    @classmethod
    def from_dict(cls, d: dict) -> "GroupComparison":
        """Rebuild the result from :meth:`to_dict` output (also after a JSON round trip)."""
        from .._result_specs import check_group_comparison

        return cls(**flat_fields(d, "GroupComparison", _LAYOUT, check_group_comparison))

    def for_output(self, output=None) -> "GroupComparison":
        """This result (it holds one output: compare ``attr.for_output(o)``'s groups)."""
        if output not in (None, 0, self.output):
            raise InvalidParameterError(f"this comparison holds one output, {self.output!r}.")
        return self

    def plot(self, ax=None, *, output=None, max_features: int = 20):
        """The differences with their bootstrap intervals, the largest on top.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (a new figure when None).
        output : optional
            The one output held (None).
        max_features : int, default=20
            The features of largest difference drawn.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(200, 2))
        >>> attr = ml.shapley(lambda A: A @ [1.0, 1.0], X, background=X[:50])
        >>> ax = attr.compare_groups(X[:, 1] > 0, n_boot=100, random_state=0).plot()
        >>> [t.get_text() for t in ax.get_yticklabels()][-1]
        'x1'
        """
        from ..plot.change import plot_intervals

        self.for_output(output)
        return plot_intervals(self.feature_names, self.difference, self.ci_low, self.ci_high,
                              ax=ax, max_features=max_features,
                              xlabel=f"mean attribution, B - A ({self.output})")


def compare_groups(attr, mask, *, n_boot: int = 1000, confidence: float = 0.95,
                   random_state=None) -> GroupComparison:
    """The difference of the mean attributions of the rows where ``mask`` holds and the others.

    See :meth:`Attributions.compare_groups`.
    """
    if attr.outputs is not None:
        raise InvalidParameterError(
            "the explanation holds several outputs; compare the groups of one: "
            "attr.for_output(o).compare_groups(mask).")
    mask = np.asarray(mask)
    if mask.dtype != bool or mask.shape != (len(attr),):
        raise InvalidParameterError(
            f"mask must be a boolean array with one entry per explained row ({len(attr)}), "
            f"got dtype {mask.dtype} and shape {mask.shape}.")
    n_b, n_a = int(mask.sum()), int((~mask).sum())
    if min(n_a, n_b) < 2:
        raise InvalidParameterError(
            f"each group needs at least 2 rows (mask selects {n_b}, leaves {n_a}).")
    n_boot = check_int(n_boot, "n_boot", low=1)
    if not 0 < confidence < 1:
        raise InvalidParameterError(f"confidence must be in (0, 1), got {confidence!r}.")
    rng = check_random_state(random_state)
    A, B = attr.values[~mask], attr.values[mask]
    diff = B.mean(axis=0) - A.mean(axis=0)
    va, vb = A.var(axis=0, ddof=1) / n_a, B.var(axis=0, ddof=1) / n_b
    se = np.sqrt(va + vb)
    from scipy import stats

    with np.errstate(divide="ignore", invalid="ignore"):
        dof = (va + vb) ** 2 / (va ** 2 / (n_a - 1) + vb ** 2 / (n_b - 1))
        t = np.where(se > 0, diff / se, np.where(diff == 0, 0.0, np.inf))
    raw = 2 * stats.t.sf(np.abs(t), np.where(np.isfinite(dof), dof, 1.0))
    boots = np.empty((n_boot, A.shape[1]))
    for b in range(n_boot):  # each group resampled within itself
        boots[b] = B[rng.integers(0, n_b, n_b)].mean(axis=0) - \
            A[rng.integers(0, n_a, n_a)].mean(axis=0)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(boots, [alpha, 1 - alpha], axis=0)
    return GroupComparison(feature_names=list(attr.feature_names), mean_a=A.mean(axis=0),
                           mean_b=B.mean(axis=0), difference=diff, ci_low=low, ci_high=high,
                           std=se, p_value=holm(raw), p_value_unadjusted=raw, n_a=n_a,
                           n_b=n_b, confidence=float(confidence), output=str(attr.output))


def mean_test(self, *, confidence: float = 0.95) -> pd.DataFrame:
    r"""Per feature, is the mean attribution over the rows' population 0 (a t test, Holm)?

    ``attr.mean_test()`` (a method of :class:`~modellens.Attributions`).  For an
    :func:`modellens.compare` result: did the feature's attributions change, on
    average over the rows.

    The hypothesis of feature ``j``: :math:`H_0: E_{x \sim P}[\phi_j(x)] = 0`, with
    :math:`\phi_j` the attribution in the game the result was computed in (its
    background held fixed) and :math:`P` the population the explained rows are
    independent draws of (not the background rows themselves: there the mean of an
    additive term is 0 by construction).  The test is Student's one-sample t of the
    rows' values with ``n - 1`` degrees of freedom; a sampling estimator's noise is in
    the rows' spread (each row draws its own coalitions).  The p-values are
    Holm-adjusted over the features (family-wise error rate).  A feature whose
    values are all 0 (within rounding: ``ROUNDING`` times the largest value of any
    feature) gets p-value 1; one whose values are all equal, another, gets 0.

    Parameters
    ----------
    confidence : float, default=0.95
        The level of the t interval of each mean.

    Returns
    -------
    DataFrame
        One row per feature: ``feature``, ``mean``, ``std`` (its standard error),
        ``ci_low``, ``ci_high``, ``p_value`` (Holm), ``p_value_unadjusted`` and
        ``mean_abs`` (a change of both signs that averages 0 over the rows shows
        there, not in the test).

    See Also
    --------
    compare : The attributions of model_b - model_a.
    Attributions.compare_groups : Two groups of rows' mean attributions.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> rng = np.random.default_rng(0)
    >>> background = rng.normal(size=(50, 2))
    >>> X = rng.normal(size=(400, 2)) + [0.5, 0.0]     # the rows moved in x0
    >>> diff = ml.compare(lambda A: A @ [1.0, 1.0], lambda A: A @ [2.0, 1.5], X,
    ...                   background=background)
    >>> table = diff.mean_test()
    >>> list(table.columns[:3]), bool(table.p_value[0] < 0.001)
    (['feature', 'mean', 'std'], True)
    """
    attr = self
    if attr.outputs is not None:
        raise InvalidParameterError(
            "the explanation holds several outputs; test one: "
            "attr.for_output(o).mean_test().")
    if not 0 < confidence < 1:
        raise InvalidParameterError(f"confidence must be in (0, 1), got {confidence!r}.")
    values = np.asarray(attr.values, dtype=np.float64)
    n = len(values)
    if n < 2:
        raise InvalidParameterError(f"the test needs at least 2 explained rows, got {n}.")
    from scipy import stats

    mean = values.mean(axis=0)
    se = values.std(axis=0, ddof=1) / np.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, mean / se, np.where(mean == 0, 0.0, np.inf))
    raw = 2 * stats.t.sf(np.abs(t), n - 1)
    # a feature the game gives 0 (a dummy player) has values of rounding size, whose t
    # would be noise: such a column is 0
    size = np.abs(values).max(axis=0)
    raw = np.where(size <= ROUNDING * size.max(initial=0.0), 1.0, raw)
    half = stats.t.ppf(0.5 + confidence / 2, n - 1) * se
    return pd.DataFrame({"feature": list(attr.feature_names), "mean": mean, "std": se,
                         "ci_low": mean - half, "ci_high": mean + half,
                         "p_value": holm(raw), "p_value_unadjusted": raw,
                         "mean_abs": np.abs(values).mean(axis=0)})
