"""Result object of the local attribution methods (Shapley values, LIME)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._result_dicts import envelope, open_envelope
from .._result_specs import check_attributions
from .._validation import InvalidParameterError, check_level, is_integer
from ..data import Column, feature_position, row_labels
from ..models import output_position, own_output
from ._blocks import (BLOCKS, MediaBlock, SamplingBlock, Subject, SurrogateBlock,
                      block_property as _block_property)
from ._cohorts import mean_test as _mean_test
from ._indexing import Indexing

__all__ = ["Attributions", "build", "keep_row_labels", "SCHEMA_VERSION"]

#: Version of the layout :meth:`Attributions.to_dict` writes and :meth:`~Attributions.from_dict`
#: reads: the core fields, the typed blocks, and ``extra`` with incidental details only
#: (the project is unreleased: the flat layout 1 is no longer read).
SCHEMA_VERSION = 2

#: The fields an Attributions dict may hold.
_DICT_FIELDS = frozenset({"values", "base_values", "codes", "feature_names", "method", "output",
                          "prediction", "column_labels", "value_function", "interactions",
                          "columns", "outputs", "output_labels", "row_labels", "extra",
                          *BLOCKS})


@dataclass(init=False, repr=False, eq=False)
class Attributions(Indexing):
    """How much each feature moved each explained row's prediction.

    What :func:`~modellens.shapley`, :func:`~modellens.lime`,
    :func:`~modellens.lime_text` and :func:`~modellens.lime_image` return.  A small core that every method fills, and optional typed blocks for what
    only some methods produce.

    Attributes
    ----------
    values : ndarray of shape (n, d)
        Attribution of each feature for each explained row.  For Shapley
        values ``base_values + values.sum(axis=1)`` is the prediction.
    base_values : ndarray of shape (n,)
        The reference each row's attributions start from (Shapley values: the
        mean prediction over the background data; LIME: the intercept).
    codes : ndarray of shape (n, d)
        The explained rows, encoded: floats, with level codes for
        categorical columns (see ``columns``).  :attr:`data` gives them as the
        user knows them.
    feature_names : list of str
    method : str
        ``"shapley-exact"``, ``"shapley-permutation"``, ``"shapley-kernel"``,
        ``"shapley-tree"``, ``"owen-exact"``, ``"owen-permutation"`` (a text's
        ``players="hierarchy"``), ``"lime"``, ...
    output : str
        What was explained (``"prediction"``, ``"P(y = 1)"``, ...).
    prediction : ndarray of shape (n,) or None
        The model's output for each explained row.
    columns : list of Column or None
        The schema of the explained columns (kind, category levels, dtype);
        None means every column is numeric.
    column_labels : list or None
        A DataFrame's own column labels, for the feature lookup rule (an
        integer is a label when the frame had integer labels).
    value_function : str or None
        The game whose Shapley values these are (``"interventional"``: the
        background fills absent features; ``"tree_path_dependent"``: the
        trees' covers, see :mod:`modellens.attribution.tree`; ``"removal"``:
        absent words removed, absent superpixels filled).
    interactions : ndarray of shape (n, d, d) or None
        Pairwise interaction values, each row's matrix summing over its last
        axis to that row's values.
    surrogate : SurrogateBlock or None
        LIME: the local surrogate (intercept, R^2, held-out R^2, local
        prediction, conditions, kernel width, samples, discretisation,
        feature selection, stability).
    sampling : SamplingBlock or None
        Sampling estimators: standard errors, degrees of freedom, budget.
    media : MediaBlock or None
        Texts and images: the input and its words (spans) or superpixels.
    std : ndarray or None
        ``sampling.std`` (None without a sampling block): the standard error
        of each value; with ``sampling.dof``, the degrees of freedom of each
        row's standard errors, :meth:`confidence_interval` uses it.
    intercept, score, local_prediction : ndarray of shape (n,) or None
        The same fields of ``surrogate``.
    segments : int ndarray of shape (height, width) or None
        ``media.segments``: the superpixel of every pixel of an image,
        ``0 .. d - 1`` in the order of ``feature_names``.
    diagnostics : dict
        Incidental details: where the background came from and its size
        (``"background"``, ``"n_background"``), the cost (``"n_coalitions"``,
        ``"n_model_rows"``), TreeSHAP's ``"index"``, a masker's kind.
    row_labels : ndarray of shape (n,) or None
        The explained rows' labels in the index of the DataFrame ``X`` (the
        ``row`` column of :meth:`to_frame`, to join back on ``X``); None
        where they are the positions ``0 .. n - 1`` (arrays, a default index).

    Indexing selects rows and features as shap's ``Explanation`` does, but
    always keeps two dimensions: ``attr[0]`` is a one-row ``Attributions``,
    ``attr[:10]`` the first ten rows, ``attr[:, "bmi"]`` one feature,
    ``attr[mask, ["bmi", "bp"]]`` both at once.

    Examples
    --------
    Exact Shapley values of a linear model are its weights times each
    feature's distance from the background mean:

    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> w = np.array([1.0, 2.0, -1.0])
    >>> attr = ml.shapley(lambda A: A @ w, X[:5], background=X)
    >>> attr
    Attributions(method='shapley-exact', rows=5, features=3, output='f(x)')
    >>> bool(np.allclose(attr.values, w * (X[:5] - X.mean(axis=0))))
    True
    >>> bool(np.allclose(attr.base_values + attr.values.sum(axis=1), attr.prediction))
    True
    >>> attr[0], attr[:, "x1"].values.shape
    (Attributions(method='shapley-exact', rows=1, features=3, output='f(x)'), (5, 1))
    """

    # the fields (dataclasses.fields / replace / asdict work as before the blocks)
    values: np.ndarray
    base_values: np.ndarray
    codes: np.ndarray
    feature_names: list
    method: str
    output: str
    prediction: np.ndarray | None
    columns: list  # given None, the constructor makes numeric columns
    column_labels: list | None
    value_function: str | None
    interactions: np.ndarray | None
    surrogate: SurrogateBlock | None
    sampling: SamplingBlock | None
    media: MediaBlock | None
    diagnostics: dict
    outputs: list | None
    output_labels: list | None
    row_labels: np.ndarray | None

    def __init__(self, values, base_values, codes, feature_names, method, *,
                 output: str = "prediction", prediction=None, columns=None, column_labels=None,
                 value_function=None, interactions=None, surrogate: SurrogateBlock | None = None,
                 sampling: SamplingBlock | None = None, media: MediaBlock | None = None,
                 diagnostics: dict | None = None, outputs: list | None = None,
                 output_labels: list | None = None, row_labels=None):
        self.feature_names = [str(f) for f in feature_names]
        self.values = np.asarray(values, dtype=np.float64)
        self.base_values = np.asarray(base_values, dtype=np.float64)
        self.codes = np.asarray(codes, dtype=np.float64)
        self.method, self.output, self.prediction = method, output, prediction
        self.columns = [Column(name, "numeric") for name in self.feature_names] \
            if columns is None else columns
        self.column_labels, self.value_function = column_labels, value_function
        self.interactions = interactions
        #: the names of the outputs on the last axis (None: one output, today's shapes)
        self.outputs = None if outputs is None else [str(o) for o in outputs]
        self.output_labels = None if outputs is None else (
            list(range(len(outputs))) if output_labels is None else list(output_labels))
        k = () if outputs is None else (len(outputs),)
        if self.values.ndim != 2 + len(k) or self.values.shape[:2] != self.codes.shape \
                or self.values.shape[2:] != k \
                or len(self.feature_names) != self.values.shape[1] \
                or self.base_values.shape != (self.values.shape[0], *k):
            raise InvalidParameterError(
                f"inconsistent attributions: values {self.values.shape}, codes "
                f"{self.codes.shape}, base_values {self.base_values.shape}, "
                f"{len(self.feature_names)} feature names.")
        self.surrogate, self.sampling, self.media = surrogate, sampling, media
        #: Incidental details only; the blocks hold everything else.
        self.diagnostics = dict(diagnostics or {})
        self.row_labels = None if row_labels is None else np.asarray(row_labels)
        if self.row_labels is not None and self.row_labels.shape != (self.values.shape[0],):
            raise InvalidParameterError(
                f"row_labels has shape {self.row_labels.shape}; it needs one label per "
                f"explained row ({self.values.shape[0]}).")

    # ------------------------------------------------- the blocks' fields, flat
    std = _block_property("sampling", "std", "standard error of each value, or None")
    intercept = _block_property("surrogate", "intercept", "LIME's intercepts")
    score = _block_property("surrogate", "score", "LIME's weighted R^2")
    local_prediction = _block_property("surrogate", "local_prediction",
                                       "LIME's surrogate at the instance")
    segments = _block_property("media", "segments", "the superpixel of every pixel (images)")

    # ------------------------------------------------------------ reading
    def __len__(self) -> int:
        return self.values.shape[0]

    def __repr__(self):
        n, d = self.values.shape[:2]
        what = f"output={self.output!r}" if self.outputs is None else f"outputs={self.outputs!r}"
        return f"Attributions(method={self.method!r}, rows={n}, features={d}, {what})"

    def _repr_html_(self):
        """A notebook shows a text's explanation as the highlighted text (escaped); with
        several outputs each class is a ``<details>`` to open, the predicted one open."""
        from html import escape

        if self.media is None or getattr(self.media, "text", None) is None:
            return None  # (the notebook falls back to repr)
        if self.outputs is None:
            return self.plot.text_html()
        top = int(np.argmax(np.asarray(self.prediction)[0]))
        return "<div>" + "".join(
            f"<details{' open' if c == top else ''}><summary>{escape(str(name))}</summary>"
            f"{self.plot.text_html(output=c)}</details>" for c, name in enumerate(self.outputs)
        ) + "</div>"

    @property
    def shape(self) -> tuple:
        """``(n, d)``, or ``(n, d, k)`` with several outputs: as ``values.shape``."""
        return self.values.shape

    @property
    def n_outputs(self) -> int:
        """How many outputs were explained (their values on the last axis when several)."""
        return 1 if self.outputs is None else len(self.outputs)

    @classmethod
    def stack(cls, parts: list, labels: list | None = None) -> "Attributions":
        """One result of several outputs from the single-output results of each.

        The per-output numbers (``values``, ``base_values``, ``prediction``,
        ``interactions``, the standard errors) gain a last axis, as shap's
        multi-output values ``(n, d, k)``; the rows, features and the rest are
        the first part's (every part explains the same rows).
        """
        first = parts[0]
        if len(parts) == 1 and labels is None:
            return first

        def stacked(name, of=lambda a: a):
            got = [of(p) for p in parts]
            return None if got[0] is None else np.stack([np.asarray(g) for g in got], axis=-1)

        blocks: dict[str, Any] = {name: None if getattr(first, name) is None
                                  else kind.stack([getattr(p, name) for p in parts])
                                  for name, kind in (("sampling", SamplingBlock),
                                                     ("surrogate", SurrogateBlock))}
        return cls(values=stacked("values", lambda p: p.values),
                   base_values=stacked("base_values", lambda p: p.base_values),
                   codes=first.codes, feature_names=first.feature_names, method=first.method,
                   output=", ".join(p.output for p in parts),
                   prediction=stacked("prediction", lambda p: p.prediction),
                   columns=first.columns, column_labels=first.column_labels,
                   value_function=first.value_function,
                   interactions=stacked("interactions", lambda p: p.interactions),
                   media=first.media, diagnostics=dict(first.diagnostics), **blocks,
                   outputs=[p.output for p in parts],
                   output_labels=list(range(len(parts))) if labels is None else list(labels),
                   row_labels=first.row_labels)

    def output_position(self, output) -> int:
        """The position of ``output`` (a class label, an output name or a position)."""
        return output_position(self.outputs, self.output_labels, output)

    def compare_groups(self, mask, *, n_boot: int = 1000, confidence: float = 0.95,
                       random_state=None):
        """The mean attributions of the rows where ``mask`` holds (B) minus the others' (A).

        Per feature: the difference, a percentile bootstrap interval (rows
        resampled within each group, ``n_boot`` times) and Welch's t test of
        equal means, Holm-adjusted over the features.  Returns a
        :class:`~modellens.GroupComparison` (``to_frame``, ``plot``).
        """
        from ._cohorts import compare_groups

        return compare_groups(self, mask, n_boot=n_boot, confidence=confidence,
                              random_state=random_state)

    # per feature, Student's t test of "mean value 0 over the rows' population" (Holm)
    mean_test = _mean_test

    def for_output(self, output) -> "Attributions":
        """The single-output result of one output, as if it alone had been asked for.

        Parameters
        ----------
        output : label, str or int
            A class label, an output name (``"P(y = setosa)"``) or a position.

        Returns
        -------
        Attributions
            What the same call with ``target=`` that output returns (values
            ``(n, d)``, base values ``(n,)``).

        Examples
        --------
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(50, 2))
        >>> attr = ml.shapley(lambda A: A * [1.0, -1.0], X[:4], background=X)
        >>> attr.outputs, attr.values.shape, attr.base_values.shape
        (['f(x)[0]', 'f(x)[1]'], (4, 2, 2), (4, 2))
        >>> attr.for_output(1).values.shape
        (4, 2)
        """
        if self.outputs is None:
            own_output(self.output, output)
            return self
        c = self.output_position(output)

        def take(a):
            return None if a is None else np.ascontiguousarray(np.asarray(a)[..., c])

        blocks: dict[str, Any] = {
            name: None if getattr(self, name) is None else getattr(self, name).output(c)
            for name in ("sampling", "surrogate")}
        return Attributions(
            values=take(self.values), base_values=take(self.base_values), codes=self.codes,
            feature_names=self.feature_names, method=self.method, output=self.outputs[c],
            prediction=take(self.prediction), columns=self.columns,
            column_labels=self.column_labels, value_function=self.value_function,
            interactions=take(self.interactions), media=self.media,
            diagnostics=dict(self.diagnostics), row_labels=self.row_labels, **blocks)

    def _require_one_output(self, what: str) -> None:
        """Refuse a single-output view of a multi-output result, naming the outputs."""
        if self.outputs is not None:
            raise InvalidParameterError(
                f"{what} shows one output, and these attributions have {len(self.outputs)}: "
                f"{self.outputs}. Pick one with output= (a class label, an output name or a "
                "position), or attr.for_output(...).")

    @property
    def kinds(self) -> list:
        """How each column was treated: ``"numeric"`` or ``"categorical"``."""
        return [c.kind for c in self.columns]

    @property
    def data(self) -> np.ndarray:
        """The explained rows as the user knows them: floats, or an object array with labels."""
        if not any(c.is_categorical or c.is_boolean for c in self.columns):
            return self.codes.copy()
        out = np.empty(self.codes.shape, dtype=object)
        for j, col in enumerate(self.columns):
            x = self.codes[:, j]
            missing = np.isnan(x)
            if col.is_categorical:
                assert col.levels is not None  # every categorical column has its levels
                out[:, j] = None
                out[~missing, j] = col.levels[x[~missing].astype(np.intp)]
            elif col.is_boolean:
                out[:, j] = None
                out[~missing, j] = x[~missing].astype(bool)
            else:
                out[:, j] = x
        return out

    def levels(self, feature) -> list:
        """Category labels of a categorical feature, in code order (empty for numeric ones)."""
        col = self.columns[self.index_of(feature)]
        return list(col.levels) if col.is_categorical else []

    def index_of(self, feature) -> int:
        """Column position of a feature given by name or index (the rule of ``Dataset``)."""
        return feature_position(feature, self.feature_names, self.column_labels)

    def numeric_data(self) -> np.ndarray:
        """The explained rows as floats: categorical columns as level codes (colour scales)."""
        return self.codes.copy()

    def confidence_interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """How far sampled values may be from the exact ones: a confidence interval per value.

        Student's t quantiles with each row's ``dof`` degrees of freedom: at a
        small sampling budget the standard errors are estimated from few
        independent pieces, and normal quantiles would give intervals that
        miss far more often than ``1 - level``.  Exact values get a zero-width
        interval.

        Parameters
        ----------
        level : float, default=0.95
            Coverage of the interval.

        Returns
        -------
        lower, upper : ndarray of shape (n, d)

        Examples
        --------
        Permutation sampling against exact enumeration on the same background:

        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(200, 8))
        >>> def model(A):
        ...     return A[:, 0] * A[:, 1] + A[:, 2] * A[:, 3] * A[:, 4]
        >>> sampled = ml.shapley(model, X[:5], background=X[:50], algorithm="permutation",
        ...                      n_permutations=50, random_state=0)
        >>> exact = ml.shapley(model, X[:5], background=X[:50], algorithm="exact")
        >>> lower, upper = sampled.confidence_interval(0.95)
        >>> lower.shape
        (5, 8)
        >>> bool(np.all((lower - 1e-9 <= exact.values) & (exact.values <= upper + 1e-9)))
        True
        """
        from scipy.stats import t

        level = check_level(level, "level")
        if self.std is None:
            return self.values.copy(), self.values.copy()
        given = None if self.sampling is None else self.sampling.dof
        dof = np.full(len(self), np.inf) if given is None else np.asarray(given, float)
        with np.errstate(invalid="ignore"):
            q = np.where(dof > 0, t.ppf(0.5 + level / 2, np.where(dof > 0, dof, 1)), np.nan)
        half = q.reshape((-1,) + (1,) * (np.ndim(self.std) - 1)) * self.std
        return self.values - half, self.values + half

    def mean_abs(self) -> np.ndarray:
        """How important is each feature overall: the mean of ``|values|`` over the rows.

        Returns
        -------
        ndarray of shape (d,)
            One number per feature, in the order of ``feature_names``.

        Examples
        --------
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(200, 3))
        >>> w = np.array([1.0, 2.0, 0.0])  # x2 is not used by the model
        >>> attr = ml.shapley(lambda A: A @ w, X[:50], background=X)
        >>> importance = attr.mean_abs()
        >>> print(np.round(importance, 2))
        [0.94 1.39 0.  ]
        >>> bool(np.allclose(importance, np.abs(w * (X[:50] - X.mean(axis=0))).mean(axis=0)))
        True
        """
        return np.abs(self.values).mean(axis=0)

    def interaction_pairs(self, max_pairs=None, *, output=None):
        r"""Which pairs of features interact most: mean ``|interaction value|`` over the rows.

        Needs ``interactions`` (``ml.shapley(..., interactions=True)``).  The
        strength of a pair :math:`(i, j)` is
        :math:`\frac1n \sum_r |\Phi_{ij}(x_r)|`, :math:`\Phi_{ij}` the SHAP
        interaction value (half the Shapley interaction index).

        Parameters
        ----------
        max_pairs : int, optional
            Keep the strongest this many (default every pair).
        output : label, str or int, optional
            With several outputs, the one ranked (required then).

        Returns
        -------
        InteractionPairs
            ``to_frame()`` (``feature_1``, ``feature_2``, ``mean_abs``,
            ``mean``, and ``std`` for sampled values) and ``plot(ax=)``.

        Examples
        --------
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(100, 3))
        >>> attr = ml.shapley(lambda A: A[:, 0] * A[:, 1] + A[:, 2], X[:20], background=X,
        ...                   interactions=True)
        >>> pairs = attr.interaction_pairs()
        >>> pairs.to_frame()[["feature_1", "feature_2"]].iloc[0].tolist()
        ['x0', 'x1']
        >>> bool(pairs.mean_abs[1] < 1e-12)  # x2 enters alone
        True
        """
        from .interaction_pairs import interaction_pairs

        if output is not None:
            return interaction_pairs(self.for_output(output), max_pairs)
        self._require_one_output("interaction_pairs()")
        return interaction_pairs(self, max_pairs)

    # ------------------------------------------------------------ outputs
    def to_frame(self) -> pd.DataFrame:
        """Long-format table: one row per (explained row, feature).

        Columns: ``row`` (the row's label in ``X``'s index, see
        ``row_labels``; its position for an array), ``feature``, ``method``, ``feature_value``,
        ``value``, ``std``, ``model_rows`` and (under a stopping rule)
        ``converged`` (sampling estimators), ``base_value`` and
        ``prediction`` (when known).

        Returns
        -------
        DataFrame

        Examples
        --------
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(200, 3))
        >>> attr = ml.shapley(lambda A: A @ np.array([1.0, 2.0, -1.0]), X[:5], background=X)
        >>> frame = attr.to_frame()
        >>> frame.shape, list(frame.columns)
        ((15, 7), ['row', 'feature', 'method', 'feature_value', 'value', 'base_value', 'prediction'])
        >>> frame.groupby("feature")["value"].apply(lambda v: round(v.abs().mean(), 3))
        feature
        x0    1.038
        x1    1.031
        x2    0.608
        Name: value, dtype: float64
        """
        if self.outputs is not None:
            # one long table per output, an ``output`` column naming it
            parts = [self.for_output(c).to_frame() for c in range(len(self.outputs))]
            for name, part in zip(self.outputs, parts):
                part.insert(2, "output", name)
            return pd.concat(parts, ignore_index=True)
        n, d = self.values.shape
        frame = pd.DataFrame({
            "row": np.repeat(np.arange(n) if self.row_labels is None else self.row_labels, d),
            "feature": np.tile(np.asarray(self.feature_names, dtype=object), n),
            "feature_value": pd.Series(np.asarray(self.data, dtype=object).ravel(), dtype=object),
            "value": self.values.ravel(),
        })
        if self.std is not None:
            frame["std"] = np.asarray(self.std, dtype=float).ravel()
        for name in ("model_rows", "converged"):  # a sampling estimator's cost / stopping rule
            per_row = None if self.sampling is None else getattr(self.sampling, name)
            if per_row is not None:
                frame[name] = np.repeat(np.asarray(per_row), d)
        frame["base_value"] = np.repeat(self.base_values, d)
        if self.prediction is not None:
            frame["prediction"] = np.repeat(self.prediction, d)
        frame.insert(2, "method", self.method)
        return frame

    def to_shap(self) -> Any:
        """The same numbers as a ``shap.Explanation``, for shap's own plots (needs shap).

        Categorical columns go to shap as level codes in ``data`` (shap's
        colour scales need numbers) with their labels in ``display_data``.

        Returns
        -------
        shap.Explanation

        Examples
        --------
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(200, 3))
        >>> attr = ml.shapley(lambda A: A @ np.array([1.0, 2.0, -1.0]), X[:5], background=X)
        >>> explanation = attr.to_shap()
        >>> explanation.values.shape, explanation.feature_names
        ((5, 3), ['x0', 'x1', 'x2'])
        >>> import shap  # doctest: +SKIP
        >>> shap.plots.beeswarm(explanation)  # doctest: +SKIP
        """
        try:
            import shap
        except ImportError as exc:
            raise ImportError("to_shap() needs the shap package: pip install shap") from exc
        categorical = any(c.is_categorical for c in self.columns)
        # several outputs: values (n, d, k) and base_values (n, k), shap's multi-output layout
        named = {} if self.outputs is None else {"output_names": list(self.outputs)}
        return shap.Explanation(
            values=self.values.copy(), base_values=self.base_values.copy(),
            data=self.numeric_data(), display_data=self.data if categorical else None,
            feature_names=list(self.feature_names), **named)

    def to_dict(self) -> dict:
        """A JSON-safe dict of every field, to save the attributions as JSON.

        ``json.dumps`` works on it and :meth:`from_dict` rebuilds the object;
        ``"schema"`` gives the layout's version
        (``modellens.attribution.result.SCHEMA_VERSION``, now 2).

        Returns
        -------
        dict

        Examples
        --------
        >>> import json
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(200, 3))
        >>> attr = ml.shapley(lambda A: A @ np.array([1.0, 2.0, -1.0]), X[:5], background=X)
        >>> d = attr.to_dict()
        >>> d["type"], d["schema"]
        ('Attributions', 2)
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "attributions.json")
        >>> with open(path, "w") as f:
        ...     json.dump(d, f)
        """
        out: dict[str, Any] = {
            "values": self.values, "base_values": self.base_values, "codes": self.codes,
            "feature_names": self.feature_names, "method": self.method,
            "output": self.output, "prediction": self.prediction,
            "column_labels": self.column_labels, "value_function": self.value_function,
            "interactions": self.interactions,
            "columns": [_column_dict(c) for c in self.columns]}
        if self.outputs is not None:
            out["outputs"], out["output_labels"] = self.outputs, self.output_labels
        if self.row_labels is not None:
            out["row_labels"] = self.row_labels
        for name in BLOCKS:
            block = getattr(self, name)
            out[name] = None if block is None else block.to_fields()
        out["extra"] = self.diagnostics
        return envelope("Attributions", out, schema=SCHEMA_VERSION)

    @classmethod
    def from_dict(cls, d: dict) -> "Attributions":
        """Rebuild an :class:`Attributions` from :meth:`to_dict` output (also after JSON).

        Every field is checked (kind, shape agreeing with the others, counts
        that are counts) before anything is built; a dict that is not one
        :meth:`to_dict` wrote is an ``InvalidParameterError`` naming the field.

        Parameters
        ----------
        d : dict
            What :meth:`to_dict` returned (of this schema).

        Returns
        -------
        Attributions
            With its blocks (sampling, surrogate, media) filled as they were.

        Examples
        --------
        >>> import json
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(200, 3))
        >>> attr = ml.shapley(lambda A: A @ np.array([1.0, 2.0, -1.0]), X[:5], background=X)
        >>> back = ml.Attributions.from_dict(json.loads(json.dumps(attr.to_dict())))
        >>> bool(np.array_equal(back.values, attr.values)), back.feature_names
        (True, ['x0', 'x1', 'x2'])
        """
        opened = open_envelope(d, "Attributions", newest=SCHEMA_VERSION)
        values = opened.fields(("values", "base_values", "codes", "feature_names", "method",
                                "columns"), known=_DICT_FIELDS)
        check_attributions(opened, values)
        values["columns"] = [Column(**c) for c in values["columns"]]
        values["diagnostics"] = values.pop("extra", None)
        blocks: dict[str, Any] = {name: None if values.get(name) is None
                  else BLOCKS[name].from_fields(values.pop(name)) for name in BLOCKS}
        for name in BLOCKS:
            values.pop(name, None)
        return cls(**values, **blocks)

    @property
    def plot(self):
        """The pictures of the result: call it for the natural one, or pick one by name.

        ``attr.plot()`` draws the natural picture: a text's or image's
        highlights, one LIME row's weights, one row's waterfall, or the
        beeswarm of many rows.  One row: ``.plot.waterfall(i)``,
        ``.force(i)``, ``.weights(i)``, ``.text(i)``, ``.image(i)``; many
        rows: ``.plot.beeswarm()``, ``.bar()``, ``.dependence(feature)``
        (see :class:`~modellens.plot.attributions.AttributionPlots`).  Each
        takes ``ax=`` and returns its Axes, never the Figure, so that Jupyter
        shows the picture once.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(30, 3))
        >>> attr = ml.shapley(lambda A: A @ [1.0, 2.0, -1.0], X, background=X)
        >>> type(attr.plot()).__name__, type(attr.plot.waterfall(0)).__name__
        ('Axes', 'Axes')
        """
        # loaded on first use: the attribution plots import matplotlib
        from ..plot.attributions import AttributionPlots

        return AttributionPlots(self)


def _column_dict(col: Column) -> dict:
    return {"name": col.name, "kind": col.kind, "levels": col.levels, "ordered": col.ordered,
            "dtype": col.dtype}


def keep_row_labels(attr: Attributions, X) -> Attributions:
    """``attr`` with the labels of the explained rows ``X`` in their index (see ``row_labels``)."""
    labels = row_labels(X)
    if labels is not None and labels.shape == (len(attr),):  # (a text or image: one input)
        attr.row_labels = labels
    return attr


def build(subject: Subject, *, values, base_values, prediction, method: str,
          value_function: str | None = None, surrogate: SurrogateBlock | None = None,
          sampling: SamplingBlock | None = None, interactions=None,
          diagnostics: dict | None = None) -> Attributions:
    """The one way the methods assemble their result: the subject, the numbers, the blocks."""
    return Attributions(values=values, base_values=base_values, codes=subject.codes,
                        feature_names=subject.feature_names, method=method,
                        output=subject.output, prediction=prediction, columns=subject.columns,
                        column_labels=subject.column_labels, value_function=value_function,
                        interactions=interactions, diagnostics=diagnostics, surrogate=surrogate,
                        sampling=sampling, media=subject.media)
