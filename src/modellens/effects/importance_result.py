"""The result of :func:`modellens.importance`: permutation importances and their spread."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


__all__ = ["Importance"]


@dataclass(frozen=True, eq=False)
class Importance:
    """Permutation feature importances: the drop of a score when a feature is shuffled.

    Attributes
    ----------
    feature_names : list of str
        The features, in the data's order.
    importances : ndarray of shape (d, n_repeats)
        Baseline score minus the score with the feature shuffled, per repeat.
    baseline : float
        The score on the data as given.
    scoring : str
        The score's name.
    n_rows : int
        The rows scored.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).normal(size=(100, 2))
    >>> imp = ml.importance(lambda A: 2 * A[:, 0], X, 2 * X[:, 0], n_repeats=3, random_state=0)
    >>> imp.importances.shape, imp.scoring
    ((2, 3), 'r2')
    >>> bool(imp.importances_mean[1] == 0)  # the model never reads x1
    True
    """

    feature_names: list
    importances: np.ndarray
    baseline: float
    scoring: str
    n_rows: int

    @property
    def importances_mean(self) -> np.ndarray:
        """Mean importance per feature over the repeats, shape ``(d,)``."""
        return self.importances.mean(axis=1)

    @property
    def importances_std(self) -> np.ndarray:
        """Standard deviation of the importance over the repeats (``ddof=0``), shape ``(d,)``."""
        return self.importances.std(axis=1)

    def __repr__(self):
        top = int(np.argmax(self.importances_mean))
        return (f"Importance(scoring={self.scoring!r}, features={len(self.feature_names)}, "
                f"n_repeats={self.importances.shape[1]}, baseline={self.baseline:.4g}, "
                f"top={self.feature_names[top]!r})")

    def to_frame(self) -> pd.DataFrame:
        """One row per feature: ``feature``, ``importances_mean``, ``importances_std``.

        Returns
        -------
        DataFrame
            In the data's feature order.

        Examples
        --------
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(100, 2))
        >>> imp = ml.importance(lambda A: A[:, 0], X, X[:, 0], random_state=0)
        >>> list(imp.to_frame().columns)
        ['feature', 'importances_mean', 'importances_std']
        """
        return pd.DataFrame({"feature": list(self.feature_names),
                             "importances_mean": self.importances_mean,
                             "importances_std": self.importances_std})

    def to_dict(self) -> dict:
        """A JSON-safe dict of every field, to save the result as JSON.

        Returns
        -------
        dict
            The importances of every repeat, the baseline score, the scoring
            and the rows; ``json.dumps`` works on it and :meth:`from_dict`
            rebuilds the result.

        Examples
        --------
        >>> import json
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(50, 2))
        >>> imp = ml.importance(lambda A: A[:, 0], X, X[:, 0], random_state=0)
        >>> back = ml.Importance.from_dict(json.loads(json.dumps(imp.to_dict())))
        >>> bool(np.array_equal(back.importances, imp.importances))
        True
        """
        from .._result_dicts import envelope

        out = {"feature_names": [str(f) for f in self.feature_names],
               "importances": np.asarray(self.importances, dtype=np.float64),
               "baseline": float(self.baseline), "scoring": str(self.scoring),
               "n_rows": int(self.n_rows)}
        return envelope("Importance", out)

    @classmethod
    def from_dict(cls, d: dict) -> "Importance":
        """Rebuild the result from :meth:`to_dict` output (also after a JSON round trip).

        Parameters
        ----------
        d : dict
            What :meth:`to_dict` returned.

        Returns
        -------
        Importance
            Every repeat's importance, the baseline score and the scoring.

        Examples
        --------
        >>> import json
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(50, 2))
        >>> imp = ml.importance(lambda A: A[:, 0], X, X[:, 0], random_state=0)
        >>> ml.Importance.from_dict(json.loads(json.dumps(imp.to_dict()))).scoring
        'r2'
        """
        from .._result_dicts import open_envelope
        from .._result_specs import check_importance

        names = ("feature_names", "importances", "baseline", "scoring", "n_rows")
        opened = open_envelope(d, "Importance")
        v = opened.fields(names, known=names)
        check_importance(opened, v)
        return cls(feature_names=list(v["feature_names"]),
                   importances=np.asarray(v["importances"], dtype=np.float64).reshape(
                       len(v["feature_names"]), -1),
                   baseline=float(v["baseline"]), scoring=str(v["scoring"]),
                   n_rows=int(v["n_rows"]))

    def plot(self, ax=None, *, max_features: int = 30):
        """Box plots of each feature's importances over the repeats, the largest on top.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (a new figure when None).
        max_features : int, default=30
            The most important features drawn.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(100, 3))
        >>> imp = ml.importance(lambda A: A[:, 0] + A[:, 1], X, X[:, 0] + X[:, 1],
        ...                     random_state=0)
        >>> ax = imp.plot()
        >>> [t.get_text() for t in ax.get_yticklabels()][-1]  # the most important on top
        'x0'
        """
        from ..plot.importance import plot_importance

        return plot_importance(self, ax, max_features=max_features)
