"""The result of :func:`modellens.regions`: split trees, their evidence, regional effects."""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import pandas as pd

from .._result_dicts import envelope, open_envelope
from .._result_specs import check_region_tree
from .._serialize import DecodeError, from_jsonable, to_jsonable
from ..plot.regions import plot_regions
from .result import Effect, Effects

__all__ = ["Regions", "RegionNode", "Split", "RegionEffects"]

#: Columns of :attr:`Regions.splits`, in order.
SPLIT_COLUMNS = ["feature", "depth", "region", "split_feature", "threshold", "levels",
                 "heterogeneity_before", "heterogeneity_after", "gain", "p_value", "stability",
                 "heldout_gain", "rows", "rows_left", "rows_right", "flags"]


@dataclass
class Split:
    """One split of a region and the evidence for it.

    Attributes
    ----------
    feature : str
        The splitting feature.
    threshold : float or None
        Numeric split: rows with ``feature <= threshold`` go left.
    levels : tuple or None
        Categorical / boolean split: the levels that go left.
    heterogeneity_before, heterogeneity_after : float
        Mean squared deviation of the local effects from their bin means, in
        the region, and summed over the two sides (per local effect of the
        region).
    gain : float
        Share of the heterogeneity the split removes, ``1 - after / before``.
    p_value : float
        Permutation p-value of the best gain (NaN when not tested).
    stability : float
        Share of bootstrap resamples choosing the same split.
    heldout_gain : float
        Gain of the split chosen on half of the rows, measured on the other half.
    rows_left, rows_right : int
    flags : tuple of str
        Where the evidence disagrees with the gain and p-value:
        ``"held-out gain near zero"`` (held-out gain below half of
        ``min_gain``) and ``"low stability"`` (chosen again in fewer than half
        of the bootstrap resamples); empty when it agrees.
    """

    feature: str
    threshold: float | None
    levels: tuple | None
    heterogeneity_before: float
    heterogeneity_after: float
    gain: float
    p_value: float
    stability: float
    heldout_gain: float
    rows_left: int
    rows_right: int
    flags: tuple = ()

    def describe(self) -> str:
        """The split in words: ``x3 <= 0.01`` or ``season in {summer, fall}``."""
        if self.levels is not None:
            return f"{self.feature} in {{{', '.join(str(v) for v in self.levels)}}}"
        return f"{self.feature} <= {self.threshold:.4g}"

    def sentence(self) -> str:
        p = "not tested" if math.isnan(self.p_value) else f"p = {self.p_value:.3g}"
        return (f"split on {self.describe()} removes {self.gain:.0%} of the heterogeneity "
                f"({p}, stable in {self.stability:.0%} of resamples, {self.heldout_gain:.0%} "
                f"on held-out rows)" + (f" [{'; '.join(self.flags)}]" if self.flags else ""))


@dataclass(eq=False)
class RegionNode:
    """A region of the data and, when it was split, its split and two sub-regions.

    Attributes
    ----------
    region : str
        The conditions that define it, joined by ``&`` (``"all"`` for the whole data).
    conditions : tuple of str
    depth : int
    rows : int
    split : Split or None
        The accepted split; None for a leaf.
    left, right : RegionNode or None
    candidate : Split or None
        A leaf's best split that was not accepted, with its evidence.
    reason : str or None
        Why a leaf was not split.
    """

    region: str
    conditions: tuple
    depth: int
    rows: int
    split: Split | None = None
    left: RegionNode | None = None
    right: RegionNode | None = None
    candidate: Split | None = None
    reason: str | None = None
    row_index: Any = field(default=None, repr=False, compare=False)

    @property
    def is_leaf(self) -> bool:
        return self.split is None

    def leaves(self) -> list[RegionNode]:
        """The regions that were not split, left to right."""
        if self.is_leaf:
            return [self]
        assert self.left is not None and self.right is not None
        return self.left.leaves() + self.right.leaves()

    def nodes(self) -> Iterator[RegionNode]:
        """Every region, depth first."""
        yield self
        for child in (self.left, self.right):
            if child is not None:
                yield from child.nodes()

    def to_dict(self) -> dict:
        out: dict = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "row_index"}
        for key in ("split", "candidate"):
            if out[key] is not None:
                out[key] = {f.name: getattr(out[key], f.name) for f in fields(Split)}
        for key in ("left", "right"):
            if out[key] is not None:
                out[key] = out[key].to_dict()
        return out

    @classmethod
    def from_dict(cls, d: dict) -> RegionNode:
        d = dict(d)
        for key in ("split", "candidate"):
            if d.get(key) is not None:
                d[key] = Split(**dict(d[key], flags=tuple(d[key].get("flags", ()))))
        for key in ("left", "right"):
            if d.get(key) is not None:
                d[key] = cls.from_dict(d[key])
        d["conditions"] = tuple(d["conditions"])
        return cls(**d)

    def __repr__(self):
        what = self.split.describe() if self.split is not None else (self.reason or "leaf")
        return f"RegionNode(region={self.region!r}, rows={self.rows}, {what})"


def _check_regions_parts(opened, trees) -> None:
    """The settings and the three per-feature tables of a Regions dict agree."""
    from .._result_checks import check_fields, count, flag, text

    specs = {"effect": text(), "n_rows": count(), "min_region_rows": count(),
             "n_resamples": count(optional=True), "require_heldout": flag()}
    check_fields(opened, {name: opened.part(name) for name in specs}, specs)
    if not isinstance(trees, dict):
        raise opened.error("trees", "is not a dict of split trees by feature")
    for name in ("global", "regional"):
        table = opened.part(name)
        if not isinstance(table, dict) or set(table) != set(trees):
            raise opened.error(name, "does not hold one entry per feature of 'trees'")
    for key, pairs in opened.raw["regional"].items():
        if not isinstance(pairs, list) or not all(
                isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in pairs):
            raise opened.error(f"regional[{key[:40]!r}]", "is not a list of [region, effect] "
                                                          "pairs")


class RegionEffects(Effects):
    """Read-only mapping ``region -> Effect``: one feature's effect in each region."""

    def __init__(self, effects: Mapping[str, Effect]):
        self._effects = dict(effects)

    def __repr__(self):
        return f"RegionEffects(regions={list(self._effects)})"


class Regions:
    """Regional effects of one or more features: where each effect differs, and why.

    Built by :func:`modellens.regions`.  Of a model with several outputs
    (every class of a classifier, the columns of an ``(n, k)`` answer) each
    feature has one split tree, chosen for all outputs together (their
    heterogeneities summed), and every regional and global effect holds every
    output on its last axis; :meth:`for_output` keeps one.

    Attributes
    ----------
    effect : {"ale", "dale", "pdp"}
        Whose local effects were split (``method`` is its deprecated old name).
    features : list of str
        The features of interest, in the order asked.
    splits : pandas.DataFrame
        One row per accepted split (columns :data:`SPLIT_COLUMNS`); ``flags``
        names where a split's evidence disagrees (empty when it agrees).
    outputs : list of str or None
        The names of the outputs when there are several.
    n_rows, min_region_rows, n_resamples : int
        ``n_resamples``: the permutations of each split's test
        (``n_permutations`` is its deprecated old name).
    require_heldout : bool
        Whether a split had to hold on held-out rows to be accepted.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).uniform(-1, 1, size=(800, 3))
    >>> r = ml.regions(lambda A: A[:, 0] * (A[:, 1] > 0), X, ["x0", "x2"], random_state=0)
    >>> r.splits[["feature", "split_feature"]].values.tolist()
    [['x0', 'x1']]
    >>> r.no_split, r["x2"].reason[:50]  # the model ignores x2
    (['x2'], "no effect: the model's output does not change with")
    >>> list(r.effects("x0"))  # doctest: +ELLIPSIS
    ['x1 <= ...', 'x1 > ...']
    """

    def __init__(self, *, effect, trees, regional, global_effects, n_rows, min_region_rows,
                 n_resamples, require_heldout=True):
        self.effect = effect
        self._trees: dict[str, RegionNode] = dict(trees)
        self._regional = {k: RegionEffects(v) for k, v in regional.items()}
        self._global = dict(global_effects)
        self.n_rows, self.min_region_rows = int(n_rows), int(min_region_rows)
        self.n_resamples = int(n_resamples)
        self.require_heldout = bool(require_heldout)

    @property
    def method(self) -> str:
        """Deprecated name of ``effect`` (removed in the next minor version)."""
        warnings.warn("Regions.method is renamed Regions.effect; the old name goes in the next "
                      "minor version.", DeprecationWarning, stacklevel=2)
        return self.effect

    @property
    def n_permutations(self) -> int:
        """Deprecated name of ``n_resamples`` (removed in the next minor version)."""
        warnings.warn("Regions.n_permutations is renamed Regions.n_resamples; the old name goes "
                      "in the next minor version.", DeprecationWarning, stacklevel=2)
        return self.n_resamples

    @property
    def features(self) -> list[str]:
        return list(self._trees)

    def __getitem__(self, feature: Hashable) -> RegionNode:
        key = self._key(feature)
        return self._trees[key]

    def __iter__(self):
        return iter(self._trees)

    def __len__(self):
        return len(self._trees)

    def _key(self, feature):
        if feature in self._trees:
            return feature
        if isinstance(feature, (int, np.integer)) and not isinstance(feature, bool):
            if str(feature) in self._trees:
                return str(feature)
            return list(self._trees)[feature]
        raise KeyError(f"no regions for {feature!r}; available: {list(self._trees)}")

    @property
    def splits(self) -> pd.DataFrame:
        """The accepted splits with their evidence, one row each (depth first per feature)."""
        rows = []
        for feature, tree in self._trees.items():
            for node in tree.nodes():
                if node.split is not None:
                    s = node.split
                    rows.append(dict(feature=feature, depth=node.depth, region=node.region,
                                     split_feature=s.feature, threshold=s.threshold,
                                     levels=s.levels,
                                     heterogeneity_before=s.heterogeneity_before,
                                     heterogeneity_after=s.heterogeneity_after, gain=s.gain,
                                     p_value=s.p_value, stability=s.stability,
                                     heldout_gain=s.heldout_gain, rows=node.rows,
                                     rows_left=s.rows_left, rows_right=s.rows_right,
                                     flags="; ".join(s.flags)))
        frame = pd.DataFrame(rows, columns=SPLIT_COLUMNS)
        return frame.astype({"threshold": float, "depth": int}) if len(frame) else frame

    @property
    def outputs(self) -> list | None:
        """The names of the outputs when the effects have several, else None."""
        first = next(iter(self._global.values()), None)
        return None if first is None else first.outputs

    def for_output(self, output) -> Regions:
        """The regions with every effect of one output only (the split trees unchanged).

        The splits were chosen for all outputs together, so they may differ
        from those of ``ml.regions(..., target=output)``; the regional effects
        on a given split are the same.

        Parameters
        ----------
        output : label, str or int
            A class label, an output name or a position.

        Returns
        -------
        Regions
            These regions themselves when they have one output.
        """
        if self.outputs is None:
            for effect in self._global.values():
                effect.for_output(output)  # KeyError unless it names the one output
            return self
        return Regions(effect=self.effect, trees=self._trees,
                       regional={k: {r: e.for_output(output) for r, e in v.items()}
                                 for k, v in self._regional.items()},
                       global_effects={k: e.for_output(output) for k, e in self._global.items()},
                       n_rows=self.n_rows, min_region_rows=self.min_region_rows,
                       n_resamples=self.n_resamples, require_heldout=self.require_heldout)

    @property
    def no_split(self) -> list[str]:
        """Features whose effect was not split: no significant split was found."""
        return [f for f, tree in self._trees.items() if tree.is_leaf]

    def global_effect(self, feature) -> Effect:
        """The feature's effect over all rows (the one the regions re-aggregate)."""
        return self._global[self._key(feature)]

    def effects(self, feature) -> RegionEffects:
        """The feature's effect in each region (leaf), on the global bins or grid."""
        return self._regional[self._key(feature)]

    def to_frame(self) -> pd.DataFrame:
        """Every regional curve in long format, with a ``region`` column."""
        parts = []
        for feature, effects in self._regional.items():
            for region, effect in effects.items():
                frame = effect.to_frame()
                frame.insert(1, "region", region)
                parts.append(frame)
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()

    def plot(self, feature=None, ax=None, *, output=None, **kwargs):
        """Draw a feature's regional curves on one axes, to compare the regions at a glance.

        Each region's curve (its ALE / DALE confidence band shaded) is named by
        its conditions in the legend; the global curve is drawn dashed.
        Categorical and boolean features get a point per level and region.

        Parameters
        ----------
        feature : name, optional
            Default: the first feature.
        ax : matplotlib Axes, optional
            Where to draw; None (default) draws on a new figure.
        output : label, str or int, optional
            Of a multi-output model: the output to draw (a class label, an
            output name or a position); None draws every output, one line
            style each.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(-1, 1, size=(800, 3))
        >>> r = ml.regions(lambda A: A[:, 0] * (A[:, 1] > 0), X, "x0", random_state=0)
        >>> ax = r.plot("x0")
        >>> len(ax.get_legend().get_texts())  # two regions and the global curve
        3
        """
        key = self.features[0] if feature is None else self._key(feature)
        if output is not None:
            return self.for_output(output).plot(key, ax=ax, **kwargs)
        return plot_regions(self._global[key], self._regional[key], self._trees[key],
                            ax=ax, **kwargs)

    def to_dict(self) -> dict:
        """A JSON-safe dict of the split trees and every effect, to save the result as JSON.

        Returns
        -------
        dict
            Its type tag, the search's settings, each feature's split tree and
            the dicts of the global and regional effects; ``json.dumps`` works
            on it and :meth:`from_dict` rebuilds the regions.

        Examples
        --------
        >>> import json
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(-1, 1, size=(800, 3))
        >>> r = ml.regions(lambda A: A[:, 0] * (A[:, 1] > 0), X, "x0", random_state=0)
        >>> d = json.loads(json.dumps(r.to_dict()))
        >>> d["type"], d["effect"], list(d["regional"])
        ('Regions', 'ale', ['x0'])
        """
        parts = {"effect": self.effect, "n_rows": self.n_rows,
                 "min_region_rows": self.min_region_rows, "n_resamples": self.n_resamples,
                 "require_heldout": self.require_heldout,
                 "trees": to_jsonable({k: t.to_dict() for k, t in self._trees.items()}),
                 "global": {k: e.to_dict() for k, e in self._global.items()},
                 "regional": {k: [[r, e.to_dict()] for r, e in v.items()]
                              for k, v in self._regional.items()}}
        return envelope("Regions", **parts)

    @classmethod
    def from_dict(cls, d: dict) -> Regions:
        """Rebuild the regions that :meth:`to_dict` saved, without the model.

        Parameters
        ----------
        d : dict
            A dict made by :meth:`to_dict`, as it is or read back with ``json.loads``.

        Returns
        -------
        Regions
            The same split trees, global and regional effects.

        Examples
        --------
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).uniform(-1, 1, size=(800, 3))
        >>> r = ml.regions(lambda A: A[:, 0] * (A[:, 1] > 0), X, "x0", random_state=0)
        >>> back = ml.Regions.from_dict(r.to_dict())
        >>> back.splits.equals(r.splits), [leaf.region for leaf in back["x0"].leaves()]
        (True, ['x1 <= ...', 'x1 > ...'])
        """
        opened = open_envelope(d, "Regions")
        part = opened.part
        try:
            stored = from_jsonable(part("trees"))
        except DecodeError as exc:
            raise opened.error("trees", f"cannot be read: {exc}") from None
        _check_regions_parts(opened, stored)
        for key, tree in stored.items():
            check_region_tree(opened, tree, f"trees[{str(key)[:40]!r}]")
        trees = {k: RegionNode.from_dict(t) for k, t in stored.items()}
        return cls(effect=part("effect"), trees=trees,
                   regional={k: {r: Effect.from_dict(e) for r, e in v}
                             for k, v in part("regional").items()},
                   global_effects={k: Effect.from_dict(e) for k, e in part("global").items()},
                   n_rows=part("n_rows"), min_region_rows=part("min_region_rows"),
                   n_resamples=part("n_resamples"), require_heldout=part("require_heldout"))

    def __repr__(self):
        lines = [f"Regions(effect={self.effect!r}, features={self.features})"]
        for feature, tree in self._trees.items():
            if tree.is_leaf:
                why = tree.reason or "no split"
                best = ""
                if tree.candidate is not None:
                    c = tree.candidate
                    p = "" if math.isnan(c.p_value) else f", p = {c.p_value:.3g}"
                    best = f" (best: {c.describe()}, gain {c.gain:.0%}{p})"
                lines.append(f"  {feature}: no region found: {why}{best}.")
                continue
            for node in tree.nodes():
                if node.split is not None:
                    where = "" if node.depth == 0 else f" within {node.region}"
                    lines.append(f"  {feature}{where}: {node.split.sentence()}.")
        return "\n".join(lines)
