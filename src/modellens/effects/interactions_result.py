"""The result of :func:`modellens.interactions`: H statistics per feature and per pair."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._validation import InvalidParameterError

__all__ = ["Interactions"]

PAIR_COLUMNS = ["feature_1", "feature_2", "h2", "h2_unnormalized", "std"]


@dataclass(eq=False)
class Interactions:
    """Which features and pairs interact, and how strongly: the result of :func:`~modellens.interactions`.

    Friedman and Popescu's H statistics of a model on a sample of rows.

    Attributes
    ----------
    overall : pandas.Series
        :math:`H^2_j` (the share of the variance of :math:`f` that comes from
        interactions of feature ``j`` with any others), indexed by feature.
    pairwise : pandas.DataFrame
        One row per pair: ``feature_1``, ``feature_2``, ``h2`` (:math:`H^2_{jk}`),
        ``h2_unnormalized`` (the root mean square of the pure interaction
        effect, on the prediction's scale) and ``std`` (the jackknife standard
        error of ``h2``), sorted by ``h2`` descending (undefined ones last).
    overall_unnormalized, overall_std : pandas.Series
        The overall statistic's root mean square residual (prediction scale)
        and the jackknife standard error of :math:`H^2_j`.
    sample_size : int
        Rows the statistics were computed on.
    rows : ndarray of int
        Their positions in ``X`` (in the order used, which sets the groups).
    method : {"brute", "tree"}
        How the partial dependences were obtained (the same quantities).
    output : str
        What the model's answer is (``"prediction"``, ``"P(y = 1)"``, ...).
    n_groups : int
        Groups of the delete-a-group jackknife (``std`` has ``n_groups - 1``
        degrees of freedom).
    n_model_rows : int
        Model rows evaluated: every row the model answered for the request (the tree
        method's: those of its agreement check, on at most 1,000 sampled rows).
    blocks_from_trees : bool
        Brute force (``method="auto"``) whose features' blocks were read from the
        trees' exact ICE curves (no model rows beyond their 16-row agreement check), only
        ``f`` and the pairs' blocks
        from model rows; False for the tree method and for brute force on model rows.
    notes : tuple of str
        What was adjusted on the way (for instance a sample larger than the data).

    Examples
    --------
    ``x0`` and ``x1`` only act as a product, ``x2`` adds on its own:

    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).uniform(-1, 1, size=(200, 3))
    >>> h = ml.interactions(lambda A: A[:, 0] * A[:, 1] + A[:, 2], X, sample=None)
    >>> h  # doctest: +ELLIPSIS
    Interactions(method='brute', ..., strongest pair=('x0', 'x1') h2=0.975)
    >>> print(h.overall.round(2).to_string())  # the product's share of the variance (1/4 in theory)
    x0    0.21
    x1    0.21
    x2    0.00
    """

    overall: pd.Series
    pairwise: pd.DataFrame
    overall_unnormalized: pd.Series
    overall_std: pd.Series
    sample_size: int
    rows: np.ndarray
    method: str
    output: str
    n_groups: int
    n_model_rows: int = 0
    notes: tuple = field(default_factory=tuple)
    blocks_from_trees: bool = False
    #: the names of the outputs when there are several (None: one output, ``output``)
    outputs: list | None = None
    #: what selects each output: class labels, or output columns (several outputs only)
    output_labels: list | None = None
    #: each output's single-output result (several outputs only)
    _parts: list = field(default_factory=list, init=False, repr=False)

    @classmethod
    def stack(cls, parts: list, labels: list) -> "Interactions":
        """The statistics of several outputs from each output's single-output result.

        ``overall``, ``overall_unnormalized`` and ``overall_std`` become
        DataFrames with a column per output; ``pairwise`` gains an ``output``
        column (each output's pairs sorted by ``h2``, one output after the
        other).
        """
        outputs = [p.output for p in parts]

        def by_output(name):
            return pd.DataFrame({o: getattr(p, name).to_numpy() for o, p in zip(outputs, parts)},
                                index=parts[0].overall.index)

        pairwise = pd.concat([p.pairwise.assign(output=o)[["output"] + PAIR_COLUMNS]
                              for o, p in zip(outputs, parts)], ignore_index=True)
        first = parts[0]
        out = cls(overall=by_output("overall"), pairwise=pairwise,
                  overall_unnormalized=by_output("overall_unnormalized"),
                  overall_std=by_output("overall_std"),
                  sample_size=first.sample_size, rows=first.rows, method=first.method,
                  output=", ".join(outputs), n_groups=first.n_groups,
                  n_model_rows=first.n_model_rows, notes=first.notes,
                  blocks_from_trees=first.blocks_from_trees, outputs=outputs,
                  output_labels=list(labels))
        out._parts = list(parts)
        return out

    def for_output(self, output) -> "Interactions":
        """The single-output statistics of one output (a class label, output name or position).

        They equal those of the same call with ``target=`` that output.

        Examples
        --------
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(-1, 1, size=(200, 3))
        >>> f = lambda A: np.column_stack([A[:, 0] * A[:, 1], A[:, 1] + A[:, 2]])
        >>> h = ml.interactions(f, X, sample=None)
        >>> h.overall.round(2)
            f(x)[0]  f(x)[1]
        x0     1.0      0.0
        x1     1.0      0.0
        x2     0.0      0.0
        >>> print(h.for_output(1).pairwise["h2"].round(2).tolist())
        [0.0, 0.0, 0.0]
        """
        from ..models import output_position, own_output
        if self.outputs is None:
            own_output(self.output, output)
            return self
        return self._parts[output_position(self.outputs, self.output_labels, output)]
    def __repr__(self):
        if self.outputs is not None:
            return (f"Interactions(method={self.method!r}, features={len(self.overall)}, "
                    f"sample_size={self.sample_size}, outputs={self.outputs})")
        top = ""
        if len(self.pairwise):
            r = self.pairwise.iloc[0]
            top = f", strongest pair=({r.feature_1!r}, {r.feature_2!r}) h2={r.h2:.3g}"
        return (f"Interactions(method={self.method!r}, features={len(self.overall)}, "
                f"pairs={len(self.pairwise)}, sample_size={self.sample_size}{top})")

    def to_frame(self) -> pd.DataFrame:
        """One table: the overall rows (``feature_2`` empty) then the pairs.

        Columns ``statistic`` (``"overall"`` or ``"pairwise"``), ``feature_1``,
        ``feature_2``, ``h2``, ``h2_unnormalized``, ``std``.

        Returns
        -------
        DataFrame

        Examples
        --------
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(-1, 1, size=(200, 3))
        >>> h = ml.interactions(lambda A: A[:, 0] * A[:, 1] + A[:, 2], X, sample=None)
        >>> frame = h.to_frame()
        >>> frame["statistic"].tolist()
        ['overall', 'overall', 'overall', 'pairwise', 'pairwise', 'pairwise']
        >>> frame.iloc[3][["feature_1", "feature_2"]].tolist()
        ['x0', 'x1']
        """
        if self.outputs is not None:  # an "output" column after "statistic"
            frames = []
            for name, part in zip(self.outputs, self._parts):
                frame = part.to_frame()
                frame.insert(1, "output", name)
                frames.append(frame)
            return pd.concat(frames, ignore_index=True)
        overall = pd.DataFrame({
            "statistic": "overall", "feature_1": self.overall.index.astype(object),
            "feature_2": None, "h2": self.overall.to_numpy(),
            "h2_unnormalized": self.overall_unnormalized.to_numpy(),
            "std": self.overall_std.to_numpy()})
        pairs = self.pairwise.assign(statistic="pairwise")[["statistic"] + PAIR_COLUMNS]
        return pd.concat([overall, pairs], ignore_index=True) if len(pairs) else overall

    def to_dict(self) -> dict:
        """A JSON-safe dict of every field, to save the result as JSON.

        Returns
        -------
        dict
            The statistics as arrays (one such dict per output under
            ``"parts"`` when there are several); ``json.dumps`` works on it and
            :meth:`from_dict` rebuilds the result.

        Examples
        --------
        >>> import json
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(-1, 1, size=(200, 3))
        >>> h = ml.interactions(lambda A: A[:, 0] * A[:, 1] + A[:, 2], X, sample=None)
        >>> d = json.loads(json.dumps(h.to_dict()))
        >>> d["type"], d["fields"]["sample_size"]
        ('Interactions', 200)
        """
        from .._result_dicts import envelope
        from .._serialize import to_jsonable

        if self.outputs is not None:
            return envelope("Interactions", outputs=list(self.outputs),
                            output_labels=to_jsonable(list(self.output_labels or [])),
                            parts=[part.to_dict() for part in self._parts])
        out = {
            "features": [str(x) for x in self.overall.index],
            "overall": self.overall.to_numpy(np.float64),
            "overall_unnormalized": self.overall_unnormalized.to_numpy(np.float64),
            "overall_std": self.overall_std.to_numpy(np.float64),
            "pairwise": {c: ([str(x) for x in self.pairwise[c]] if c in PAIR_COLUMNS[:2]
                             else self.pairwise[c].to_numpy(np.float64)) for c in PAIR_COLUMNS},
            "sample_size": int(self.sample_size), "rows": np.asarray(self.rows),
            "method": self.method, "output": self.output, "n_groups": int(self.n_groups),
            "n_model_rows": int(self.n_model_rows), "notes": list(self.notes),
            "blocks_from_trees": bool(self.blocks_from_trees),
        }
        return envelope("Interactions", out)

    @classmethod
    def from_dict(cls, d: dict) -> "Interactions":
        """Rebuild the result from :meth:`to_dict` output (also after a JSON round trip).

        Parameters
        ----------
        d : dict
            What :meth:`to_dict` returned, for one output or for several.

        Returns
        -------
        Interactions
            The statistics as tables again, stacked over the outputs if
            there were several.

        Examples
        --------
        >>> import json
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(-1, 1, size=(200, 3))
        >>> h = ml.interactions(lambda A: A[:, 0] * A[:, 1] + A[:, 2], X, sample=None)
        >>> back = ml.Interactions.from_dict(json.loads(json.dumps(h.to_dict())))
        >>> back.pairwise.equals(h.pairwise), back.overall.equals(h.overall)
        (True, True)
        """
        from .._result_dicts import open_envelope
        from .._result_specs import check_interactions
        from .._serialize import DecodeError, from_jsonable

        opened = open_envelope(d, "Interactions")
        if "outputs" in d:  # several outputs: one single-output dict each
            parts = opened.part("parts")
            try:
                labels = from_jsonable(opened.part("output_labels"))
            except DecodeError as exc:
                raise opened.error("output_labels", f"cannot be read: {exc}") from None
            if not isinstance(parts, list) or not parts or not isinstance(labels, list) \
                    or len(labels) != len(parts):
                raise opened.error("parts", "is not one dict per output label")
            return cls.stack([cls.from_dict(part) for part in parts], labels)
        required = ("features", "overall", "overall_unnormalized", "overall_std", "pairwise",
                    "sample_size", "rows", "method", "output", "n_groups", "notes")
        v = opened.fields(required, known=(*required, "n_model_rows", "blocks_from_trees"))
        check_interactions(opened, v)
        names = pd.Index([str(x) for x in v.pop("features")], dtype=object)
        series: dict[str, Any] = {k: pd.Series(v.pop(k), index=names, name=name) for k, name in (
            ("overall", "h2"), ("overall_unnormalized", "h2_unnormalized"),
            ("overall_std", "std"))}
        pw = v.pop("pairwise")
        pairwise = pd.DataFrame({c: (list(pw[c]) if c in PAIR_COLUMNS[:2] else pw[c])
                                 for c in PAIR_COLUMNS})
        return cls(pairwise=pairwise, notes=tuple(v.pop("notes")), **series, **v)

    def plot(self, ax=None, *, output=None, **kwargs):
        """Draw bars of each feature's interaction strength and a heatmap of the pairs.

        The bars show the overall statistic of each feature (the share of its
        effect's variance that comes from interactions), sorted by size, with
        their jackknife standard errors; the heatmap shows the pairwise
        statistic of the pairs computed, blank where a pair was not.  Together
        they answer which features interact, and with which.

        Parameters
        ----------
        ax : matplotlib Axes or a pair of them, optional
            None (default): a new figure with both panels; a pair of Axes:
            the bars on the first, the heatmap on the second; one Axes: the
            bars only.
        output : label, str or int, optional
            With several outputs, the one drawn (a class label, an output name
            or a position); required then.
        **kwargs
            ``max_features`` (default 30): the most bars drawn, as in
            :func:`modellens.plot.plot_interactions`.

        Returns
        -------
        matplotlib.axes.Axes or numpy.ndarray of Axes
            What it drew on: the pair of Axes, or the one Axes.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(-1, 1, size=(60, 3))
        >>> h = ml.interactions(lambda A: A[:, 0] * A[:, 1] + A[:, 2], X, sample=None)
        >>> bars, heatmap = h.plot()
        >>> sorted(t.get_text() for t in bars.get_yticklabels())  # one bar per feature
        ['x0', 'x1', 'x2']
        >>> len(heatmap.images)  # the pairwise heatmap
        1
        >>> h.plot(ax=bars) is bars  # one Axes: the bars only
        True
        """
        from ..plot.interactions import plot_interactions

        if self.outputs is not None:
            if output is None:
                raise InvalidParameterError(
                    f"the statistics have several outputs {self.outputs}; draw one with "
                    "output= (a class label, an output name or a position).")
            return plot_interactions(self.for_output(output), ax=ax, **kwargs)
        return plot_interactions(self, ax=ax, **kwargs)
