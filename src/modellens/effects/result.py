"""Result objects of the global-effect methods."""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._result_dicts import envelope, open_envelope
from .._result_specs import check_effect
from ..data import row_labels
from ..models import output_position, own_output
from ..plot.effects import plot_effect, plot_effects
from ._parts import (_PER_OUTPUT_EXTRA, Band, Bins, _same, _stack_extra, _stack_outputs,
                     _take_output)

__all__ = ["Effect", "Effects", "Band", "Bins"]


@dataclass(eq=False)
class Effect:
    """The effect of one feature (or a pair) on the model's prediction.

    Attributes
    ----------
    feature : str or tuple of str
        Feature name, or a pair of names for a 2-D effect.
    method : {"pdp", "mplot", "ale", "dale"}
    grid : ndarray or tuple of ndarray
        x positions: grid points (PD, M-plot), bin edges (ALE, DALE) or
        category labels; a pair of arrays for 2-D effects.
    values : ndarray
        The effect at ``grid``, shape ``(G,)`` or ``(G1, G2)``.
    ice : ndarray or None
        Individual conditional expectation curves, shape ``(n, G)``
        (``(n, G1, G2)`` for a 2-D PD), one per explained row.
    std : ndarray or None
        Heterogeneity: spread of the local effects (per bin for ALE / DALE,
        of the predictions in each neighbourhood for M-plots).
    counts : ndarray or None
        Data points per bin (ALE / DALE) or per neighbourhood (M-plot).
    kind : {"numeric", "categorical"} or tuple of them
        How the feature was treated.
    feature_values : ndarray or tuple of ndarray or None
        The feature's observed values (labels for categorical features),
        drawn as a rug.
    centered : bool
        True for centered ICE / PD (every curve starts at 0).
    output : str
        What was explained (``"prediction"``, ``"P(y = 1)"``, ...).
    ice_rows : ndarray or None
        Row positions (in ``X``) of the ICE curves, when a sample was drawn.
    ice_labels : ndarray or None
        The ICE curves' rows as labels in the index of the DataFrame ``X``
        (the ``ice_row`` of :meth:`to_frame`, to join back on ``X``); None
        where they are the positions (arrays, a default index).
    band : Band or None
        A band around ``values`` (ALE / DALE: a confidence band with its level;
        M-plots: +/- one standard deviation of the predictions).
    bins : Bins or None
        Per-bin quantities of ALE and DALE (between grid points, or per cell).
    empty_cells : ndarray of bool or None
        Second-order ALE: cells without data, ``(G1 - 1, G2 - 1)``; their
        effect is taken from the nearest cell with data.
    extra : dict
        Incidental diagnostics of the method (``"gradient"``: DALE's
        derivative source; ``"discrete"``, ``"level_codes"``: ALE level axes;
        ``"evaluated"``, ``"trees_refused"``: whether a tree ensemble's PD came
        from its trees or its model rows, and why not the trees;
        ``"n_model_rows"``: where the trees were tried, the rows the model
        answered, their agreement check's included).

    Notes
    -----
    **Per grid point or per bin.**  ``values``, ``ice`` and ``band`` have one
    entry per grid point.  ``bins`` and ``empty_cells`` have one entry per
    bin: the interval between two consecutive grid points (a cell of a 2-D
    grid), whose local effects ALE and DALE average.  ``std`` and ``counts``
    are each method's headline spread and sample size, kept where users of
    earlier versions read them: for ALE and DALE of a numeric feature they
    are ``bins.std`` and ``bins.counts`` (per bin, ``len(grid) - 1``
    entries); where every grid point has data of its own they are per grid
    point (``len(grid)`` entries): an M-plot point's neighbourhood, the rows
    at each level of a categorical or discrete ALE feature (``counts``; its
    ``std`` is per step between adjacent levels, as ``bins.std``).  For a
    per-bin quantity read ``bins``; :meth:`to_frame` lines both kinds up on
    the grid (a bin's numbers on its upper grid point).

    ``feature_values`` of a numeric feature without missing values may be a
    read-only view of the data (large data are not copied once per feature).

    Examples
    --------
    The ALE of ``x0`` in ``2 * x0 + x1`` rises by 2 per unit:

    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(400, 2))
    >>> effect = ml.ale(lambda A: 2 * A[:, 0] + A[:, 1], X, bins=5)["x0"]
    >>> effect
    Effect(method='ale', feature='x0', values shape=(6,))
    >>> effect.kind, len(effect.grid)
    ('numeric', 6)
    >>> print(np.round(np.diff(effect.values) / np.diff(effect.grid), 6))
    [2. 2. 2. 2. 2.]
    """

    # Any: a name or a pair of names; points, labels or a pair of arrays (see above)
    feature: Any
    method: str
    grid: Any
    values: np.ndarray
    ice: np.ndarray | None = None
    std: np.ndarray | None = None
    counts: np.ndarray | None = None
    kind: Any = "numeric"
    feature_values: Any = None
    centered: bool = False
    output: str = "prediction"
    ice_rows: np.ndarray | None = None
    band: Band | None = None
    bins: Bins | None = None
    empty_cells: np.ndarray | None = None
    extra: dict = field(default_factory=dict, repr=False)
    #: the names of the outputs of a multi-output effect (None: one output, ``output``)
    outputs: list | None = None
    #: what selects each output: class labels, or output columns (multi-output only)
    output_labels: list | None = None
    ice_labels: np.ndarray | None = None

    #: Effect classes by name, for :meth:`from_dict` (subclasses register themselves).
    _types: ClassVar[dict[str, type[Effect]]] = {}
    #: Fields (and fields of ``band`` / ``bins``) with one value per output, on the last axis.
    _per_output: ClassVar[tuple[str, ...]] = ("values", "ice", "std", "band", "bins")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        Effect._types[cls.__name__] = cls

    @property
    def is_2d(self) -> bool:
        """True for the effect of a pair of features."""
        return isinstance(self.feature, tuple)

    @property
    def n_outputs(self) -> int:
        """How many outputs the effect has (their values on the last axis when several)."""
        return 1 if self.outputs is None else len(self.outputs)

    @classmethod
    def stack(cls, effects: list, labels: list | None = None) -> "Effect":
        """One effect of several outputs from the single-output effects of each.

        Per-output quantities (``values``, ``ice``, ``std``, the band, the
        per-bin numbers) gain a last axis; everything else must be equal for
        every output (the same grid and data), else a ValueError says which.
        """
        first = effects[0]
        if len(effects) == 1 and labels is None:
            return first
        kwargs: dict = {}
        for f in fields(first):
            parts = [getattr(e, f.name) for e in effects]
            if f.name == "output":
                kwargs[f.name] = ", ".join(parts)
            elif f.name in first._per_output:
                kwargs[f.name] = _stack_outputs(parts)
            elif f.name == "extra":
                kwargs[f.name] = _stack_extra(parts, [e.output for e in effects], first.feature)
            else:
                if not all(_same(parts[0], p) for p in parts[1:]):
                    raise ValueError(
                        f"the outputs {[e.output for e in effects]} of {first.feature!r} differ "
                        f"in {f.name!r} (each output chose its own, e.g. bins='auto'); ask for "
                        "one output at a time with target=.")
                kwargs[f.name] = parts[0]
        kwargs["outputs"] = [e.output for e in effects]
        kwargs["output_labels"] = list(range(len(effects))) if labels is None else list(labels)
        return type(first)(**kwargs)

    def output_position(self, output) -> int:
        """The position of ``output`` (a class label, an output name or a position)."""
        return output_position(self.outputs, self.output_labels, output)

    def for_output(self, output) -> "Effect":
        """The single-output effect of one output, as if it alone had been asked for.

        Parameters
        ----------
        output : label, str or int
            A class label, an output name (``"P(y = setosa)"``) or a position.

        Returns
        -------
        Effect
            The effect the same call with ``target=`` that output returns
            (this effect when it has one output only).

        Examples
        --------
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(100, 2))
        >>> effect = ml.pdp(lambda A: A * [1.0, -1.0], X, grid=3)["x0"]
        >>> effect.outputs, effect.values.shape
        (['f(x)[0]', 'f(x)[1]'], (3, 2))
        >>> print(np.round(effect.for_output(1).values, 2))  # -x1 does not move with x0
        [-0.48 -0.48 -0.48]
        """
        if self.outputs is None:
            own_output(self.output, output)
            return self
        c = self.output_position(output)
        kwargs = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in self._per_output:
                value = _take_output(value, c)
            elif f.name == "extra":
                value = {key: tuple(_take_output(v, c) for v in part)
                         if key in _PER_OUTPUT_EXTRA else part for key, part in value.items()}
            kwargs[f.name] = value
        kwargs.update(output=self.outputs[c], outputs=None, output_labels=None)
        return type(self)(**kwargs)

    def to_dict(self) -> dict:
        """A JSON-safe dict of every field, to save the effect as JSON.

        ``json.dumps`` works on it, and :meth:`from_dict` rebuilds the effect.

        Returns
        -------
        dict

        Examples
        --------
        >>> import json
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(400, 2))
        >>> effect = ml.ale(lambda A: 2 * A[:, 0] + A[:, 1], X, bins=5)["x0"]
        >>> text = json.dumps(effect.to_dict())
        >>> ml.Effect.from_dict(json.loads(text))
        Effect(method='ale', feature='x0', values shape=(6,))
        """

        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, (Band, Bins)):
                value = {g.name: getattr(value, g.name) for g in fields(value)}
            if f.name in ("outputs", "output_labels", "ice_labels") and value is None:
                continue  # a single-output effect's dict is the one it always was
            out[f.name] = value
        return envelope(type(self).__name__, out)

    @classmethod
    def from_dict(cls, d: dict) -> "Effect":
        """Rebuild an effect (of the class that wrote it) from :meth:`to_dict` output.

        Parameters
        ----------
        d : dict
            What :meth:`to_dict` returned, also after a JSON round trip; its
            ``"type"`` names the class to rebuild.

        Returns
        -------
        Effect
            Of the class that wrote it: a DALE effect comes back able to re-bin.

        Examples
        --------
        >>> import json
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(400, 2))
        >>> effect = ml.ale(lambda A: 2 * A[:, 0] + A[:, 1], X, bins=5)["x0"]
        >>> back = ml.Effect.from_dict(json.loads(json.dumps(effect.to_dict())))
        >>> bool(np.array_equal(back.values, effect.values))
        True
        """

        opened = open_envelope(d, "Effect", kinds=Effect._types)
        kind = Effect._types[opened.kind]
        values = opened.fields([f.name for f in fields(kind)
                                if f.default is MISSING and f.default_factory is MISSING],
                               known=[f.name for f in fields(kind)])
        check_effect(opened, values)
        for name, typ in (("band", Band), ("bins", Bins)):
            if values.get(name) is not None:
                values[name] = typ(**values[name])
        return kind(**values)

    def __repr__(self):
        shape = np.shape(self.values)
        outputs = "" if self.outputs is None else f", outputs={self.outputs}"
        return (f"Effect(method={self.method!r}, feature={self.feature!r}, "
                f"values shape={shape}{outputs})")

    def to_frame(self, *, ice: bool = False) -> pd.DataFrame:
        """Long-format table: one row per grid point (per grid cell for 2-D).

        Columns: ``feature``, ``method``, ``grid`` (and ``grid2`` for pairs),
        ``value``, ``lower`` / ``upper`` where there is a band, and ``std`` /
        ``count`` where the method gives them.  Per-bin quantities of ALE and
        DALE sit on the bin's upper edge (on the upper corner of a 2-D cell,
        with ``empty_cell`` flagging cells without data); the rows without one
        hold NaN.

        Parameters
        ----------
        ice : bool, default=False
            Also one row per ICE curve and grid point, their ``ice_row``
            holding the curve's row in ``X``: its label in a DataFrame's
            index (``ice_labels``), else its position (``<NA>`` on the
            effect's own rows).

        Returns
        -------
        DataFrame

        Examples
        --------
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(400, 2))
        >>> effect = ml.ale(lambda A: 2 * A[:, 0] + A[:, 1], X, bins=5)["x0"]
        >>> frame = effect.to_frame()
        >>> list(frame.columns)
        ['feature', 'method', 'grid', 'value', 'lower', 'upper', 'std', 'count']
        >>> frame["count"].tolist()  # a bin's count sits on its upper edge
        [nan, 80.0, 80.0, 80.0, 80.0, 80.0]
        """
        if self.outputs is not None:
            # one block per output, named in an "output" column after "method"
            frames = []
            for c, name in enumerate(self.outputs):
                frame = self.for_output(c).to_frame(ice=ice)
                frame.insert(2, "output", name)
                frames.append(frame)
            return pd.concat(frames, ignore_index=True)
        label = " x ".join(self.feature) if self.is_2d else self.feature
        if self.is_2d:
            g1, g2 = (np.asarray(g) for g in self.grid)
            a, b = np.meshgrid(np.arange(len(g1)), np.arange(len(g2)), indexing="ij")
            frame = pd.DataFrame({"grid": g1[a.ravel()], "grid2": g2[b.ravel()],
                                  "value": np.asarray(self.values).ravel()})
            if self.bins is not None:
                for name, arr in (("std", self.bins.std), ("count", self.bins.counts)):
                    corner = np.full((len(g1), len(g2)), np.nan)
                    corner[1:, 1:] = np.asarray(arr, dtype=float)
                    frame[name] = corner.ravel()
            if self.empty_cells is not None:
                corner = np.zeros((len(g1), len(g2)), dtype=bool)
                corner[1:, 1:] = self.empty_cells
                frame["empty_cell"] = corner.ravel()
        else:
            grid = np.asarray(self.grid)
            frame = pd.DataFrame({"grid": grid, "value": np.asarray(self.values)})
            if self.band is not None:
                frame["lower"], frame["upper"] = self.band.lower, self.band.upper
            for name, given in (("std", self.std), ("count", self.counts)):
                if given is None:
                    continue
                arr = np.asarray(given, dtype=float)
                if arr.shape[0] == grid.shape[0] - 1:
                    arr = np.concatenate([[np.nan], arr])
                if arr.shape[0] == grid.shape[0]:
                    frame[name] = arr
        if ice and self.ice is not None:
            curves = np.asarray(self.ice).reshape(len(self.ice), -1)
            rows = np.arange(len(curves)) if self.ice_rows is None else np.asarray(self.ice_rows)
            if self.ice_labels is not None:
                rows = np.asarray(self.ice_labels)
            # integer rows (positions, or an integer index) as nullable integers; other
            # labels (strings, dates) as they are, missing on the effect's own rows
            dtype: Any = "Int64" if rows.dtype.kind in "iu" else "object"
            frame["ice_row"] = pd.array([pd.NA] * len(frame), dtype=dtype)
            per_curve = frame[[c for c in ("grid", "grid2") if c in frame]]
            lines = pd.DataFrame({
                **{c: np.tile(per_curve[c].to_numpy(), len(curves)) for c in per_curve},
                "value": curves.ravel(),
                "ice_row": pd.array(np.repeat(rows, curves.shape[1]), dtype=dtype),
            })
            frame = pd.concat([frame, lines], ignore_index=True)
        frame.insert(0, "method", self.method)
        frame.insert(0, "feature", label)
        return frame

    def plot(self, ax=None, *, output=None, **kwargs):
        """Draw the effect as a curve, to see how the prediction moves with the feature.

        A numeric feature gets its curve, its ICE lines (when computed; a
        random hundred of them when there are more), a band (plus or minus one
        standard deviation, or the confidence band where the method gives one)
        and a rug of the data; a categorical or boolean feature gets a point
        per level; a pair of features gets a heatmap with a few contour lines,
        cells without data marked.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; None (default) draws on a new figure.
        output : label, str or int, optional
            One output of an effect of several (a class label, an output name
            or a position), which otherwise draws a curve per output.
        **kwargs
            ``max_ice`` (default 100), ``rug``, ``band`` (default True) and
            ``random_state`` (which ICE lines are drawn), as in
            :func:`modellens.plot.plot_effect`.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on (never the Figure, so that Jupyter shows the
            picture once).

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(50, 2))
        >>> effect = ml.pdp(lambda A: A[:, 0] ** 2 + A[:, 1], X, "x0", grid=10, ice=True)["x0"]
        >>> ax = effect.plot()
        >>> ax.get_xlabel(), len(ax.lines) > 1  # the PD curve and the ICE lines
        ('x0', True)
        """

        if output is not None:
            kwargs["output"] = output
        return plot_effect(self, ax=ax, **kwargs)


Effect._types["Effect"] = Effect


def keep_ice_labels(effects, X):
    """``effects`` with their ICE curves' rows labelled by ``X``'s index (see ``ice_labels``)."""
    labels = row_labels(X)
    if labels is not None:
        for effect in effects.values():
            if effect.ice is not None:
                effect.ice_labels = labels if effect.ice_rows is None \
                    else labels[np.asarray(effect.ice_rows)]
    return effects


class Effects(Mapping):
    """Read-only mapping ``feature -> Effect`` in the order asked.

    Keys are feature names, and ``(a, b)`` tuples for 2-D effects (a list
    works too).  An integer is a column label when an effect has that name
    (frames with integer column labels), otherwise a position among the
    effects.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(400, 2))
    >>> effects = ml.ale(lambda A: 2 * A[:, 0] + A[:, 1], X, bins=5)
    >>> effects
    Effects(method=ale, features=['x0', 'x1'])
    >>> list(effects), len(effects)
    (['x0', 'x1'], 2)
    >>> effects["x1"].method
    'ale'
    """

    def __init__(self, effects):
        self._effects = {e.feature: e for e in effects}

    @classmethod
    def stack(cls, per_output: list, labels: list | None = None) -> "Effects":
        """Effects of several outputs from each output's list of effects (in the same order)."""
        if len(per_output) == 1 and labels is None:
            return cls(per_output[0])
        return cls([Effect.stack(list(parts), labels) for parts in zip(*per_output)])

    @property
    def outputs(self) -> list | None:
        """The names of the outputs when the effects have several, else None."""
        first = next(iter(self._effects.values()), None)
        return None if first is None else first.outputs

    def for_output(self, output) -> "Effects":
        """The single-output effects of one output (see :meth:`Effect.for_output`).

        Examples
        --------
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(100, 2))
        >>> effects = ml.ale(lambda A: A * [1.0, -1.0], X, bins=4)
        >>> effects.outputs
        ['f(x)[0]', 'f(x)[1]']
        >>> effects.for_output("f(x)[1]")["x1"].values.shape
        (5,)
        """
        effects = [e.for_output(output) for e in self._effects.values()]
        return self if self.outputs is None else type(self)(effects)

    def __getitem__(self, key: Hashable | list[Hashable]) -> Effect:
        if isinstance(key, list):
            key = tuple(key)
        if key in self._effects:
            return self._effects[key]
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            # an integer column label (names are the labels' str) first, then a position
            if str(key) in self._effects:
                return self._effects[str(key)]
            return list(self._effects.values())[key]
        raise KeyError(f"no effect for {key!r}; available: {list(self._effects)}")

    def __contains__(self, key) -> bool:
        """A feature's name (or its integer column label) is in; a position is not.

        ``effects[0]`` still reads the first effect, but membership and
        :meth:`get` follow the mapping's keys, as a ``Mapping``'s do.
        """
        if isinstance(key, list):
            key = tuple(key)
        try:
            if key in self._effects:
                return True
        except TypeError:  # an unhashable key is no key
            return False
        return isinstance(key, (int, np.integer)) and not isinstance(key, bool) \
            and str(key) in self._effects

    def get(self, key, default=None):
        """The effect of ``key`` (a feature's name or pair), ``default`` when there is none.

        Examples
        --------
        >>> import numpy as np, modellens as ml
        >>> effects = ml.pdp(lambda A: A[:, 0], np.zeros((10, 2)), grid=2)
        >>> effects.get("x0").feature, effects.get(0, "none"), 0 in effects
        ('x0', 'none', False)
        """
        return self[key] if key in self else default

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._effects)

    def __len__(self) -> int:
        return len(self._effects)

    def __repr__(self):
        methods = sorted({e.method for e in self._effects.values()})
        return f"Effects(method={'/'.join(methods)}, features={list(self._effects)})"

    def to_dict(self) -> dict:
        """A JSON-safe dict of every effect, in order, to save the results as JSON.

        Returns
        -------
        dict
            ``{"type": "Effects", "effects": [...]}``, each effect's own
            :meth:`Effect.to_dict`; ``json.dumps`` works on it and
            :meth:`from_dict` rebuilds the effects.

        Examples
        --------
        >>> import json
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(400, 2))
        >>> effects = ml.pdp(lambda A: A[:, 0] - A[:, 1], X, grid=5)
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "effects.json")
        >>> with open(path, "w") as f:
        ...     json.dump(effects.to_dict(), f)
        """
        return envelope("Effects", effects=[e.to_dict() for e in self._effects.values()])

    @classmethod
    def from_dict(cls, d: dict) -> "Effects":
        """Rebuild :class:`Effects` from :meth:`to_dict` output (also after a JSON round trip).

        Parameters
        ----------
        d : dict
            The dict of :meth:`to_dict`: every effect's own dict, in order.

        Returns
        -------
        Effects
            The effects in the order they were saved.

        Examples
        --------
        >>> import json
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(400, 2))
        >>> effects = ml.pdp(lambda A: A[:, 0] - A[:, 1], X, grid=5)
        >>> back = ml.Effects.from_dict(json.loads(json.dumps(effects.to_dict())))
        >>> back
        Effects(method=pdp, features=['x0', 'x1'])
        >>> bool(np.array_equal(back["x1"].values, effects["x1"].values))
        True
        """
        opened = open_envelope(d, "Effects")
        effects = opened.part("effects")
        if not isinstance(effects, list) or not effects:
            raise opened.error("effects", "is not a list of Effect dicts (one at least)")
        return cls([Effect.from_dict(e) for e in effects])

    def to_frame(self, *, ice: bool = False) -> pd.DataFrame:
        """All effects in one long-format table, one row per feature and grid point.

        Parameters
        ----------
        ice : bool, default=False
            Also the ICE curves' rows (see :meth:`Effect.to_frame`).

        Returns
        -------
        DataFrame
            The effects' tables (:meth:`Effect.to_frame`) one below the other.

        Examples
        --------
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(400, 2))
        >>> frame = ml.pdp(lambda A: A[:, 0] - A[:, 1], X, grid=5).to_frame()
        >>> frame.shape
        (10, 4)
        >>> frame.groupby("feature")["value"].apply(lambda v: round(v.iloc[-1] - v.iloc[0], 2))
        feature
        x0    0.99
        x1   -0.99
        Name: value, dtype: float64
        """
        return pd.concat([e.to_frame(ice=ice) for e in self._effects.values()],
                         ignore_index=True)

    def plot(self, ax=None, *, output=None, ncols=3, axes=None, figsize=None, sharey=False,
             **kwargs):
        """Draw every effect in a grid of panels, to compare the features side by side.

        Each panel is drawn as :meth:`Effect.plot` draws it; the legend
        (curves and bands) is drawn once, in the first panel that has one.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            One Axes, as the other plot methods take it: ``axes=[ax]``, so it
            serves a single effect (several need ``axes=``).
        output : label, str or int, optional
            One output of effects of several, as in :meth:`Effect.plot`.
        ncols : int, default=3
            Panels per row of the grid (fewer when there are fewer effects).
        axes : array of matplotlib Axes, optional
            Where to draw, at least one Axes per effect (the rest are hidden);
            None (default) draws on a new figure.  ``ax`` of the other plot
            methods, named in the plural as it takes several.
        figsize : (float, float), optional
            Size of the new figure in inches; default 4.2 by 3.3 per panel.
        sharey : bool, default=False
            Give the 1-D panels one y axis (the heatmaps of pairs keep theirs).
        **kwargs
            Options of every panel, as in :meth:`Effect.plot`.

        Returns
        -------
        numpy.ndarray of matplotlib.axes.Axes
            The Axes in the grid's shape ``(nrows, ncols)`` (the shape of
            ``axes`` when given); the figure is ``axes.flat[0].figure``.  Not
            the Figure, so that Jupyter shows the grid once.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(50, 3))
        >>> axes = ml.ale(lambda A: A @ [1.0, 2.0, 3.0], X, bins=5).plot(ncols=2)
        >>> axes.shape, [ax.get_xlabel() for ax in axes.flat]
        ((2, 2), ['x0', 'x1', 'x2', ''])
        >>> axes[1, 1].get_visible()  # four panels for three effects: the last is hidden
        False
        """

        if output is not None:
            kwargs["output"] = output
        return plot_effects(self, ncols=ncols, axes=axes, figsize=figsize, sharey=sharey,
                            ax=ax, **kwargs)
