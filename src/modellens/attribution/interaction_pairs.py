"""The strongest interacting pairs of features over the explained rows (``attr.interaction_pairs()``)."""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import pandas as pd

from .._validation import InvalidParameterError, is_integer
from ..models import own_output

__all__ = ["InteractionPairs", "interaction_pairs"]


@dataclass(eq=False)
class InteractionPairs:
    r"""Pairs of features ranked by how strongly they interact over the explained rows.

    The strength of the pair :math:`(i, j)` is the mean over the rows of the
    absolute SHAP interaction value, :math:`\frac1n \sum_r |\Phi_{ij}(x_r)|`
    (each row's :math:`\Phi_{ij} = \Phi_{ji}` is half the pair's Shapley
    interaction index), largest first.

    Attributes
    ----------
    feature_1, feature_2 : list of str
        The two features of each pair (``feature_1`` comes first in the columns).
    mean_abs : ndarray
        Mean absolute interaction value of each pair.
    mean : ndarray
        Mean signed interaction value (positive: the pair adds more together
        than apart, on average).
    std : ndarray or None
        Sampled interactions: the standard error of ``mean`` from the rows'
        own sampling errors (independent across rows); None when exact.
    output : str
        What was explained.
    n_rows : int
        Rows the means are over.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).normal(size=(100, 3))
    >>> attr = ml.shapley(lambda A: A[:, 0] * A[:, 1] + A[:, 2], X[:20], background=X,
    ...                   interactions=True)
    >>> pairs = attr.interaction_pairs()
    >>> isinstance(pairs, ml.InteractionPairs), len(pairs)
    (True, 3)
    >>> pairs.feature_1[0], pairs.feature_2[0]
    ('x0', 'x1')
    """

    feature_1: list
    feature_2: list
    mean_abs: np.ndarray
    mean: np.ndarray
    std: np.ndarray | None
    output: str
    n_rows: int

    def __len__(self) -> int:
        return len(self.feature_1)

    def to_frame(self) -> pd.DataFrame:
        """The pairs as a table, one row per pair, strongest first.

        Returns
        -------
        DataFrame
            Columns ``feature_1``, ``feature_2``, ``mean_abs``, ``mean``, and
            ``std`` for sampled interaction values.

        Examples
        --------
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(100, 3))
        >>> attr = ml.shapley(lambda A: A[:, 0] * A[:, 1] + A[:, 2], X[:20], background=X,
        ...                   interactions=True)
        >>> attr.interaction_pairs().to_frame().columns.tolist()
        ['feature_1', 'feature_2', 'mean_abs', 'mean']
        """
        frame = pd.DataFrame({"feature_1": self.feature_1, "feature_2": self.feature_2,
                              "mean_abs": self.mean_abs, "mean": self.mean})
        if self.std is not None:
            frame["std"] = self.std
        return frame

    def to_dict(self) -> dict:
        """A JSON-safe dict of every field, to save the pairs as JSON.

        Returns
        -------
        dict
            ``json.dumps`` works on it; :meth:`from_dict` rebuilds the pairs
            (arrays exactly, float64 bits included).

        Examples
        --------
        >>> import json
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(100, 3))
        >>> attr = ml.shapley(lambda A: A[:, 0] * A[:, 1] + A[:, 2], X[:20], background=X,
        ...                   interactions=True)
        >>> d = json.loads(json.dumps(attr.interaction_pairs().to_dict()))
        >>> d["type"], d["fields"]["feature_1"]
        ('InteractionPairs', ['x0', 'x0', 'x1'])
        """
        from .._result_dicts import envelope

        return envelope("InteractionPairs", {f.name: getattr(self, f.name) for f in fields(self)})

    @classmethod
    def from_dict(cls, d: dict) -> "InteractionPairs":
        """The pairs :meth:`to_dict` saved, as they were (JSON round trip included).

        Parameters
        ----------
        d : dict
            A dict made by :meth:`to_dict` (or read back from its JSON text).

        Returns
        -------
        InteractionPairs
            The same pairs, their arrays bit for bit.

        Examples
        --------
        >>> import json
        >>> import numpy as np, modellens as ml
        >>> pairs = ml.InteractionPairs(feature_1=["age"], feature_2=["bmi"],
        ...                             mean_abs=np.array([0.25]), mean=np.array([-0.125]),
        ...                             std=None, output="f(x)", n_rows=40)
        >>> text = json.dumps(pairs.to_dict())
        >>> ml.InteractionPairs.from_dict(json.loads(text)).to_frame()
          feature_1 feature_2  mean_abs   mean
        0       age       bmi      0.25 -0.125
        """
        from .._result_dicts import open_envelope
        from .._result_specs import check_interaction_pairs

        names = [f.name for f in fields(cls)]
        opened = open_envelope(d, "InteractionPairs")
        v = opened.fields(names, known=names)
        check_interaction_pairs(opened, v)
        return cls(**{name: v[name] for name in names})

    def for_output(self, output) -> "InteractionPairs":
        """The pairs of one output: these pairs, which are of one output.

        Parameters
        ----------
        output : label, str or int
            The output's name, the class it explains, or the position 0.

        Returns
        -------
        InteractionPairs
            This result (a name of another output is a KeyError).

        Examples
        --------
        >>> import numpy as np, modellens as ml
        >>> pairs = ml.InteractionPairs(feature_1=["age"], feature_2=["bmi"],
        ...                             mean_abs=np.array([0.25]), mean=np.array([-0.125]),
        ...                             std=None, output="f(x)", n_rows=40)
        >>> pairs.for_output("f(x)") is pairs
        True
        """
        own_output(self.output, output)
        return self

    def plot(self, ax=None, *, output=None, max_display: int = 10):
        """Draw the strongest pairs: a bar of mean ``|interaction value|`` each, largest on top.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; None (default) draws on a new figure.
        output : label, str or int, optional
            The one output these pairs are of (checked; they hold one).
        max_display : int, default=10
            Most pairs drawn.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(100, 3))
        >>> attr = ml.shapley(lambda A: A[:, 0] * A[:, 1] + A[:, 2], X[:20], background=X,
        ...                   interactions=True)
        >>> ax = attr.interaction_pairs().plot(max_display=2)
        >>> len(ax.patches)
        2
        """
        from ..plot.interaction_pairs import plot_interaction_pairs

        if output is not None:
            own_output(self.output, output)
        return plot_interaction_pairs(self, max_display=max_display, ax=ax)


def interaction_pairs(attr, max_pairs=None) -> InteractionPairs:
    """The pairs of a one-output ``Attributions`` with interaction values, strongest first."""
    if attr.interactions is None:
        raise InvalidParameterError(
            "these attributions hold no interaction values: call ml.shapley(..., "
            "interactions=True) (every model; exact on a handful of features, sampled beyond).")
    if max_pairs is not None and (not is_integer(max_pairs) or max_pairs < 1):
        raise InvalidParameterError(f"max_pairs must be a positive integer, got {max_pairs!r}.")
    inter = np.asarray(attr.interactions, dtype=float)
    n, d = inter.shape[:2]
    i, j = np.triu_indices(d, k=1)
    mean_abs = np.abs(inter[:, i, j]).mean(axis=0)
    mean = inter[:, i, j].mean(axis=0)
    std = None
    sampled = getattr(attr.sampling, "interactions_std", None)
    if sampled is not None:
        std = np.sqrt((np.asarray(sampled)[:, i, j] ** 2).sum(axis=0)) / n
    order = np.lexsort((np.arange(len(i)), -mean_abs))[:max_pairs]
    names = attr.feature_names
    return InteractionPairs(feature_1=[names[k] for k in i[order]],
                            feature_2=[names[k] for k in j[order]],
                            mean_abs=mean_abs[order], mean=mean[order],
                            std=None if std is None else std[order], output=attr.output,
                            n_rows=n)
