"""The global summaries of attributions kept out of core (:class:`AttributionSummary`)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from .._result_dicts import envelope, open_envelope
from .._validation import InvalidParameterError
from ..models import output_position, own_output
from .result import Attributions

__all__ = ["AttributionSummary"]


class AttributionSummary:
    """Global summaries of a :class:`DistributedAttributions` (one pass over its rows).

    Attributes
    ----------
    importance : pandas.Series or pandas.DataFrame
        Mean :math:`|\\phi_j|` of every feature over every row (several
        outputs: a frame of one column per output).
    sample : Attributions
        The sampled rows, in memory: ``sample.plot.beeswarm()`` and
        ``sample.plot.dependence(feature)`` draw from it.
    rows : ndarray of int
        The sampled rows' positions in the table.
    n_rows : int
        Rows explained.

    Examples
    --------
    The mean absolute value of each feature over every row of a Dask
    DataFrame, and a sample of 5 rows in memory; for ``f = 3 a`` and a
    background whose mean of ``a`` is 0, the value of ``a`` in a row is
    ``3 a`` itself:

    >>> import numpy as np, pandas as pd, dask.dataframe as dd, modellens as ml
    >>> df = pd.DataFrame({"a": np.linspace(-1, 1, 21), "b": np.zeros(21)})
    >>> f = lambda D: 3 * D["a"]
    >>> attr = ml.shapley(f, dd.from_pandas(df, npartitions=3), background=df)
    >>> summary = attr.summary(sample=5, random_state=0)
    >>> summary.n_rows, len(summary.rows)
    (21, 5)
    >>> bool(np.isclose(summary.importance["a"], np.mean(np.abs(3 * df["a"]))))
    True
    >>> bool(np.allclose(summary.sample.values[:, 0], 3 * df["a"].to_numpy()[summary.rows]))
    True
    """

    def __init__(self, importance, sample, rows, n_rows, source):
        self.importance, self.sample, self.rows, self.n_rows = importance, sample, rows, n_rows
        self.outputs = source.outputs
        self.method, self.output = source.method, source.output
        self.feature_names = list(source.feature_names)

    def __repr__(self):
        return (f"AttributionSummary(method={self.method!r}, rows={self.n_rows}, "
                f"sample={len(self.rows)})")

    def mean_abs(self) -> np.ndarray:
        """``importance`` as an array (the bar plot reads it)."""
        return self.importance.to_numpy()

    @property
    def n_outputs(self) -> int:
        """How many outputs were explained."""
        return 1 if self.outputs is None else len(self.outputs)

    def for_output(self, output) -> "AttributionSummary":
        """The summary of one output, as if it alone had been explained.

        Parameters
        ----------
        output : label, str or int
            A class label, an output name or a position.

        Returns
        -------
        AttributionSummary
            ``importance`` a Series, ``sample`` that output's rows.

        Examples
        --------
        >>> import numpy as np, pandas as pd, dask.dataframe as dd, modellens as ml
        >>> df = pd.DataFrame({"a": np.linspace(-1, 1, 21), "b": np.zeros(21)})
        >>> f = lambda D: np.column_stack([3 * D["a"], -D["a"]])
        >>> attr = ml.shapley(f, dd.from_pandas(df, npartitions=3), background=df)
        >>> summary = attr.summary(sample=5, random_state=0)
        >>> summary.importance.shape, summary.for_output(1).importance.shape
        ((2, 2), (2,))
        """
        if self.outputs is None:
            own_output(self.output, output)
            return self
        c = output_position(self.outputs, self.sample.output_labels, output)
        name = self.outputs[c]
        importance = self.importance.iloc[:, c].rename("mean_abs")
        source = SimpleNamespace(outputs=None, method=self.method, output=name,
                                 feature_names=self.feature_names)
        return AttributionSummary(importance, self.sample.for_output(c), self.rows,
                                  self.n_rows, source)

    def to_frame(self) -> pd.DataFrame:
        """One row per feature (and output): its mean absolute value over every row.

        Returns
        -------
        DataFrame
            Columns ``feature`` and ``mean_abs``; with several outputs an
            ``output`` column first.

        Examples
        --------
        >>> import numpy as np, pandas as pd, dask.dataframe as dd, modellens as ml
        >>> df = pd.DataFrame({"a": np.linspace(-1, 1, 21), "b": np.zeros(21)})
        >>> attr = ml.shapley(lambda D: 3 * D["a"], dd.from_pandas(df, npartitions=3),
        ...                   background=df)
        >>> attr.summary(sample=5, random_state=0).to_frame().feature.tolist()
        ['a', 'b']
        """
        if self.outputs is None:
            return pd.DataFrame({"feature": list(self.feature_names),
                                 "mean_abs": self.importance.to_numpy(np.float64)})
        return pd.concat([self.for_output(c).to_frame().assign(output=name)
                          for c, name in enumerate(self.outputs)],
                         ignore_index=True)[["output", "feature", "mean_abs"]]

    def to_dict(self) -> dict:
        """A JSON-safe dict of the summary (the sampled rows' attributions included).

        Returns
        -------
        dict
            ``json.dumps`` works on it and :meth:`from_dict` rebuilds the summary.

        Examples
        --------
        >>> import json
        >>> import numpy as np, pandas as pd, dask.dataframe as dd, modellens as ml
        >>> df = pd.DataFrame({"a": np.linspace(-1, 1, 21), "b": np.zeros(21)})
        >>> attr = ml.shapley(lambda D: 3 * D["a"], dd.from_pandas(df, npartitions=3),
        ...                   background=df)
        >>> summary = attr.summary(sample=5, random_state=0)
        >>> back = ml.AttributionSummary.from_dict(json.loads(json.dumps(summary.to_dict())))
        >>> bool(back.importance.equals(summary.importance)), back.n_rows
        (True, 21)
        """
        return envelope("AttributionSummary", {
            "importance": self.mean_abs().astype(np.float64),
            "feature_names": [str(f) for f in self.feature_names],
            "outputs": None if self.outputs is None else [str(o) for o in self.outputs],
            "method": self.method, "output": self.output,
            "rows": np.asarray(self.rows, dtype=np.int64), "n_rows": int(self.n_rows)},
            sample=self.sample.to_dict())

    @classmethod
    def from_dict(cls, d: dict) -> "AttributionSummary":
        """Rebuild the summary from :meth:`to_dict` output (also after a JSON round trip).

        Parameters
        ----------
        d : dict
            What :meth:`to_dict` returned.

        Returns
        -------
        AttributionSummary

        Examples
        --------
        >>> import json
        >>> import numpy as np, pandas as pd, dask.dataframe as dd, modellens as ml
        >>> df = pd.DataFrame({"a": np.linspace(-1, 1, 21), "b": np.zeros(21)})
        >>> attr = ml.shapley(lambda D: 3 * D["a"], dd.from_pandas(df, npartitions=3),
        ...                   background=df)
        >>> text = json.dumps(attr.summary(sample=5, random_state=0).to_dict())
        >>> ml.AttributionSummary.from_dict(json.loads(text)).sample.values.shape
        (5, 2)
        """
        from .._result_specs import check_attribution_summary, check_summary_sample

        fields = ("importance", "feature_names", "outputs", "method", "output", "rows", "n_rows")
        env = open_envelope(d, "AttributionSummary")
        v = env.fields(fields, known=fields)
        check_attribution_summary(env, v)
        names, outputs = list(v["feature_names"]), v["outputs"]
        mean = np.asarray(v["importance"], dtype=np.float64)
        importance: pd.Series | pd.DataFrame
        if outputs is None:
            importance = pd.Series(mean, index=names, name="mean_abs")
        else:
            importance = pd.DataFrame(mean.reshape(len(names), len(outputs)), index=names,
                                      columns=list(outputs))
        source = SimpleNamespace(outputs=outputs, method=v["method"], output=v["output"],
                                 feature_names=names)
        sample = Attributions.from_dict(env.part("sample"))
        check_summary_sample(env, v, sample)
        return cls(importance, sample, np.asarray(v["rows"], dtype=np.int64), int(v["n_rows"]),
                   source)

    def plot(self, ax=None, *, output=None, max_display: int = 10):
        """Draw the mean absolute value of each feature over every row (:meth:`plot_bar`).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; None (default) draws on a new figure.
        output : label, str or int, optional
            With several outputs, the one drawn (a class label, an output
            name or a position).
        max_display : int, default=10
            Most bars drawn (the last one sums the rest).

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, pandas as pd, dask.dataframe as dd, modellens as ml
        >>> df = pd.DataFrame({"a": np.linspace(-1, 1, 21), "b": np.zeros(21)})
        >>> attr = ml.shapley(lambda D: 3 * D["a"], dd.from_pandas(df, npartitions=3),
        ...                   background=df)
        >>> ax = attr.summary(sample=10, random_state=0).plot()
        >>> [t.get_text() for t in ax.get_yticklabels()]
        ['a', 'b']
        """
        chosen = self if output is None else self.for_output(output)
        return chosen.plot_bar(max_display=max_display, ax=ax)

    def plot_bar(self, *, max_display: int = 10, ax=None):
        """Draw the mean absolute value of each feature over every row, to rank the features.

        One bar per feature, largest on top (the global importance
        ``importance``, computed from every row, not from the sample); the
        smallest are summed into one bar when there are more than
        ``max_display``.

        Parameters
        ----------
        max_display : int, default=10
            Most bars drawn (the last one sums the rest).
        ax : matplotlib Axes, optional
            Where to draw; None (default) draws on a new figure.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, pandas as pd, dask.dataframe as dd, modellens as ml
        >>> df = pd.DataFrame({"a": np.linspace(-1, 1, 21), "b": np.zeros(21)})
        >>> attr = ml.shapley(lambda D: 3 * D["a"], dd.from_pandas(df, npartitions=3),
        ...                   background=df)
        >>> summary = attr.summary(sample=10, random_state=0)
        >>> ax = summary.plot_bar()
        >>> [t.get_text() for t in ax.get_yticklabels()]  # largest on top
        ['a', 'b']
        """
        from ..plot.attributions import AttributionPlots

        return AttributionPlots(self).bar(max_display=max_display, ax=ax)

    def plot_beeswarm(self, *, max_display: int = 10, ax=None, output=None):
        """Draw the sampled rows' values as dots, to see how each feature's effect spreads.

        One line of dots per feature, coloured by the feature's value, as
        :meth:`Attributions.plot` draws its beeswarm, on the rows of
        ``sample`` (the whole table may not fit in memory).

        Parameters
        ----------
        max_display : int, default=10
            Most lines drawn (the last one sums the rest).
        ax : matplotlib Axes, optional
            Where to draw; None (default) draws on a new figure.
        output : label, str or int, optional
            With several outputs, the one drawn (a class label, an output
            name or a position).

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, pandas as pd, dask.dataframe as dd, modellens as ml
        >>> df = pd.DataFrame({"a": np.linspace(-1, 1, 21), "b": np.zeros(21)})
        >>> attr = ml.shapley(lambda D: 3 * D["a"], dd.from_pandas(df, npartitions=3),
        ...                   background=df)
        >>> summary = attr.summary(sample=10, random_state=0)
        >>> ax = summary.plot_beeswarm()
        >>> sum(len(dots.get_offsets()) for dots in ax.collections)  # 10 rows, 2 features
        20
        """
        return self.sample.plot.beeswarm(max_display=max_display, ax=ax, output=output)

    def plot_dependence(self, feature, *, color="auto", ax=None, output=None):
        """Draw a feature's value against its attribution, to see the shape of its effect.

        One dot per sampled row (the rows of ``sample``), as
        :meth:`Attributions.plot` draws its dependence plot.

        Parameters
        ----------
        feature : str or int
            The feature, by name or position.
        color : "auto", str, int or None, default="auto"
            The feature that colours the dots: ``"auto"`` picks the one that
            interacts most, a name or position chooses, None draws one colour.
        ax : matplotlib Axes, optional
            Where to draw; None (default) draws on a new figure.
        output : label, str or int, optional
            With several outputs, the one drawn (a class label, an output
            name or a position).

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, pandas as pd, dask.dataframe as dd, modellens as ml
        >>> df = pd.DataFrame({"a": np.linspace(-1, 1, 21), "b": np.zeros(21)})
        >>> attr = ml.shapley(lambda D: 3 * D["a"], dd.from_pandas(df, npartitions=3),
        ...                   background=df)
        >>> summary = attr.summary(sample=10, random_state=0)
        >>> ax = summary.plot_dependence("a", color=None)
        >>> ax.get_xlabel(), len(ax.collections[0].get_offsets())  # one dot per sampled row
        ('a', 10)
        """
        return self.sample.plot.dependence(feature, color=color, ax=ax, output=output)
