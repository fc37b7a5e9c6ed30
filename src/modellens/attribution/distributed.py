r"""Local attributions of every row of a Dask DataFrame, kept distributed.

:func:`modellens.shapley` and :func:`modellens.lime` of Dask data return a
:class:`DistributedAttributions`: a lazy Dask DataFrame with the input's
partitions and index, one row per explained row.  Every partition runs, on
the worker that holds it, the in-memory explanation of its own rows (the same
game, estimator and engine run as ``ml.shapley(model, rows)``), with the
random stream of each row set by its position in the whole table
(:class:`~._streams.RowStreams`): the values equal those of the in-memory
call on the same rows and seed, whatever the partitioning.

Layout of :attr:`DistributedAttributions.frame`
-----------------------------------------------
One ``float64`` column per feature (named as ``feature_names``: the value
:math:`\phi_j` of Shapley, the weight of LIME), then ``base_value`` (Shapley:
:math:`v(\emptyset)`; LIME: the intercept) and ``prediction`` (:math:`f(x)`);
LIME adds ``score`` (the surrogate's weighted :math:`R^2`).  A model of
several outputs (every class of a multiclass classifier, with ``target=None``)
is explained for all of them in one pass, as in memory (each partition's
in-memory call evaluates the model rows of one output): the frame then holds
those columns once per output, in output order, each named
``"<column> | <output>"`` (``"a | P(y = setosa)"``, ``"base_value | P(y =
setosa)"``); :meth:`DistributedAttributions.for_output` selects one output's
columns under their single-output names.

The rows' positions (needed by the sampling algorithms and by
:meth:`DistributedAttributions.summary`) come from one pass that counts each
partition's rows; the exact algorithms and TreeSHAP need none.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._config import Options
from .._validation import InvalidParameterError, check_int, check_random_state
from ..data import Dataset
from ..engine import compute_on, import_dask, map_rows, partition_offsets, take_rows
from ..models import own_output
from ._blocks import Subject
from .result import Attributions, build, keep_row_labels
from .summary import AttributionSummary

__all__ = ["DistributedAttributions", "AttributionSummary", "explain_partitions",
           "RESERVED_COLUMNS"]

#: Columns of the frame besides the features (LIME adds ``score``).
RESERVED_COLUMNS = ("base_value", "prediction", "score")
#: Methods whose rows draw random numbers (and so need their positions).
_SAMPLED = ("permutation", "kernel", "lime")


def _columns(attr: Attributions) -> np.ndarray:
    """The frame's columns of an in-memory result, ``(n, columns)`` (module docstring)."""
    blocks = []
    for c in range(attr.n_outputs):
        one = attr if attr.outputs is None else attr.for_output(c)
        extra = [one.base_values, one.prediction] + ([] if one.score is None else [one.score])
        blocks += [np.asarray(one.values, dtype=np.float64)] \
            + [np.asarray(e, dtype=np.float64) for e in extra]
    return np.column_stack(blocks)


def _single_names(attr: Attributions) -> list:
    """One output's columns: the features, then ``base_value``, ``prediction`` (``score``)."""
    return list(attr.feature_names) + list(RESERVED_COLUMNS[:2 if attr.score is None else 3])


def output_column(name: str, output: str) -> str:
    """The frame's column of ``name`` (a feature or a reserved column) for one of several outputs."""
    return f"{name} | {output}"


def _names(attr: Attributions) -> list:
    single = _single_names(attr)
    if attr.outputs is None:
        return single
    return [output_column(name, output) for output in attr.outputs for name in single]


class _Job:
    """What every partition needs: the explanation of rows, and the request's streams.

    One object in the graph (one key), so the model travels once per worker.
    """

    def __init__(self, explain, streams):
        self.explain, self.streams = explain, streams

    def __call__(self, X, offset, options):
        return self.explain(X, self.streams.at(offset), options)


def explain_partitions(X, explain, *, streams, options: Options,
                       feature_names) -> "DistributedAttributions":
    """The lazy, distributed result of ``explain`` on every partition of ``X``.

    Parameters
    ----------
    X : dask DataFrame, Series or 2-D array
    explain : callable ``(rows, streams, options) -> Attributions``
        The in-memory explanation of some rows (pandas), their random streams
        starting at their position.  It travels to the workers.
    streams : RowStreams
        The request's streams (``start`` 0).
    options : Options
        ``client`` computes the request's own passes there (the first rows'
        check, the rows per partition); ``chunk_size`` is kept for the
        partitions, which run on one thread without a bar.
    feature_names : list of str, optional
        Names of a Dask array's columns.
    """
    columns = getattr(X, "columns", ()) if feature_names is None else feature_names
    clash = [c for c in columns if str(c) in RESERVED_COLUMNS]
    if clash:
        raise InvalidParameterError(
            f"X has a column named {str(clash[0])!r}, a name the result's frame keeps for "
            f"itself {list(RESERVED_COLUMNS)}; rename it (X.rename(columns=...)).")
    lazy = map_rows(X, _Job(explain, streams), options=options, columns_of=_columns,
                    names_of=_names, needs_offsets=lambda trial: trial.method.rsplit(
                        "-", 1)[-1] in _SAMPLED)
    return DistributedAttributions(lazy.frame, lazy.parts, lazy.trial, lazy.offsets,
                                   lazy.client)


class DistributedAttributions:
    """Attributions of every row of a Dask DataFrame, kept where the rows are.

    Returned by :func:`modellens.shapley` and :func:`modellens.lime` when
    ``X`` is a Dask DataFrame (or array).  Nothing is computed until asked:
    ``frame`` is a lazy Dask DataFrame with the partitions and index of ``X``
    (layout in :mod:`modellens.attribution.distributed`), each partition
    explained on its worker by the in-memory code, with the same numbers as
    the in-memory call on the same rows and ``random_state``.

    Attributes
    ----------
    frame : dask.dataframe.DataFrame
        One row per explained row: the feature columns (values), then
        ``base_value`` and ``prediction`` (LIME: and ``score``); with several
        outputs these columns once per output (module docstring).
    feature_names : list of str
    method : str
        As :attr:`Attributions.method` (``"shapley-tree"``, ``"lime"``, ...).
    output : str
        What was explained (``"prediction"``, ``"P(y = 1)"``, ...).
    outputs : list of str or None
        The names of the outputs when several were explained (None: one).
    output_labels : list or None
        What selects each output (class labels, or positions).
    value_function : str or None
    npartitions : int
    diagnostics : dict
        The request's incidental details that do not depend on the rows
        (``"background"``, ``"n_background"``, ...).

    Examples
    --------
    >>> import numpy as np, pandas as pd, dask.dataframe as dd, modellens as ml
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"])
    >>> f = lambda D: D["a"] + 2 * D["b"] * D["c"]
    >>> attr = ml.shapley(f, dd.from_pandas(df, npartitions=4), background=df[:10])
    >>> attr.method, attr.npartitions
    ('shapley-exact', 4)
    >>> list(attr.frame.columns)
    ['a', 'b', 'c', 'base_value', 'prediction']
    >>> same = ml.shapley(f, df, background=df[:10])
    >>> bool(np.allclose(attr.frame[["a", "b", "c"]].compute(), same.values, rtol=0, atol=1e-12))
    True
    >>> summary = attr.summary(sample=20, random_state=0)
    >>> bool(np.allclose(summary.importance, same.mean_abs()))
    True
    """

    def __init__(self, frame, parts, trial: Attributions, offsets, client):
        # client: the resolved Dask client of the request's passes (None: Dask's default)
        self.frame, self._parts, self._offsets, self._client = frame, parts, offsets, client
        self.feature_names = list(trial.feature_names)
        self.method, self.output = trial.method, trial.output
        self.outputs, self.output_labels = trial.outputs, trial.output_labels
        self.value_function = trial.value_function
        self._trial = trial
        self.diagnostics = {k: v for k, v in trial.diagnostics.items()
                      if k in ("background", "n_background", "n_trees", "library", "link",
                               "index")}

    @property
    def n_outputs(self) -> int:
        """How many outputs were explained (each its block of columns when several)."""
        return 1 if self.outputs is None else len(self.outputs)

    def for_output(self, output) -> "DistributedAttributions":
        """The single-output result of one output, as if it alone had been asked for.

        Lazy: a selection of ``frame``'s columns of that output, renamed as a
        single-output frame's (nothing is computed).

        Parameters
        ----------
        output : label, str or int
            A class label, an output name (``"P(y = setosa)"``) or a position.

        Examples
        --------
        >>> import numpy as np, pandas as pd, dask.dataframe as dd, modellens as ml
        >>> df = pd.DataFrame(np.random.default_rng(0).normal(size=(20, 2)), columns=["a", "b"])
        >>> f = lambda D: np.column_stack([D["a"], -D["b"]])
        >>> attr = ml.shapley(f, dd.from_pandas(df, npartitions=2), background=df)
        >>> attr.outputs, list(attr.frame.columns[:3])
        (['f(x)[0]', 'f(x)[1]'], ['a | f(x)[0]', 'b | f(x)[0]', 'base_value | f(x)[0]'])
        >>> list(attr.for_output(1).frame.columns)
        ['a', 'b', 'base_value', 'prediction']
        """
        if self.outputs is None:
            own_output(self.output, output)
            return self
        c = self._trial.output_position(output)
        trial = self._trial.for_output(c)
        single = _single_names(trial)
        frame = self.frame[[output_column(name, self.outputs[c]) for name in single]]
        frame.columns = single
        return DistributedAttributions(frame, self._parts, trial, self._offsets, self._client)

    def to_frame(self):
        """The attributions as a lazy Dask DataFrame: ``frame`` (nothing is computed).

        Returns
        -------
        dask.dataframe.DataFrame
            One row per explained row, with the partitions and index of ``X``.

        Examples
        --------
        >>> import numpy as np, pandas as pd, dask.dataframe as dd, modellens as ml
        >>> df = pd.DataFrame({"a": np.linspace(-1, 1, 8), "b": np.zeros(8)})
        >>> attr = ml.shapley(lambda D: 3 * D["a"], dd.from_pandas(df, npartitions=2),
        ...                   background=df)
        >>> attr.to_frame() is attr.frame, list(attr.to_frame().columns)
        (True, ['a', 'b', 'base_value', 'prediction'])
        """
        return self.frame

    @property
    def npartitions(self) -> int:
        return self.frame.npartitions

    def __repr__(self):
        return (f"DistributedAttributions(method={self.method!r}, "
                f"features={len(self.feature_names)}, partitions={self.npartitions}, "
                + (f"output={self.output!r})" if self.outputs is None
                   else f"outputs={self.outputs!r})"))

    def to_parquet(self, path, **kwargs):
        """Write ``frame`` with ``frame.to_parquet`` (each worker writes its partitions).

        Keywords go to :meth:`dask.dataframe.DataFrame.to_parquet`.  The rows do
        not pass through the client.
        """
        return self.frame.to_parquet(path, **kwargs)

    def persist(self) -> "DistributedAttributions":
        """The same result with ``frame`` computed and held on the cluster (``persist``)."""
        out = object.__new__(DistributedAttributions)
        out.__dict__.update(self.__dict__)
        out.frame = self.frame.persist() if self._client is None else \
            self._client.persist(self.frame)
        return out

    def offsets(self) -> np.ndarray:
        """The position of each partition's first row, and the number of rows."""
        if self._offsets is None:
            self._offsets = partition_offsets(self._client, self._parts)
        return self._offsets

    def summary(self, *, sample: int = 1000, random_state=0) -> "AttributionSummary":
        """Global summaries, computed in one pass over the rows.

        Parameters
        ----------
        sample : int, default=1000
            Rows kept for the beeswarm and the dependence plot: a uniform
            sample without replacement of the positions ``0 .. n - 1`` (seeded
            by ``random_state``; the positions are in ``rows``).
        random_state : int or Generator, default=0

        Returns
        -------
        AttributionSummary
            ``importance``: mean :math:`|\\phi_j|` over every row (as
            :meth:`Attributions.mean_abs`); ``sample``: an in-memory
            :class:`Attributions` of the sampled rows (their values, base
            values, predictions and data), equal to ``attr[rows]`` of the
            in-memory result.
        """
        sample = check_int(sample, "sample", low=1)
        rng = check_random_state(random_state)
        dask, _ = import_dask()
        offsets = self.offsets()
        n = int(offsets[-1])
        rows = np.sort(rng.choice(n, size=min(sample, n), replace=False))
        names = self._value_columns()
        tasks = [dask.delayed(_summarise_partition, pure=True)(
            res, data, rows[(rows >= offsets[i]) & (rows < offsets[i + 1])] - offsets[i], names)
            for i, (res, data) in enumerate(zip(self.frame.to_delayed(), self._parts))]
        parts = compute_on(self._client, *tasks)
        total = np.sum([p[0] for p in parts], axis=0)
        kept = pd.concat([p[1] for p in parts])
        data = pd.concat([p[2] for p in parts]) if hasattr(parts[0][2], "iloc") else \
            np.concatenate([p[2] for p in parts])
        mean = total / max(n, 1)
        importance: pd.Series | pd.DataFrame
        if self.outputs is None:
            importance = pd.Series(mean, index=self.feature_names, name="mean_abs")
        else:  # (features, outputs), as Attributions.mean_abs of several outputs
            importance = pd.DataFrame(mean.reshape(len(self.outputs), -1).T,
                                      index=self.feature_names, columns=self.outputs)
        return AttributionSummary(importance, self._sample(kept, data), rows, n, self)

    def _value_columns(self) -> list:
        """The frame's columns of the values, output by output."""
        if self.outputs is None:
            return list(self.feature_names)
        return [output_column(f, o) for o in self.outputs for f in self.feature_names]

    def _sample(self, kept: pd.DataFrame, data: pd.DataFrame | np.ndarray) -> Attributions:
        trial = self._trial
        dataset = Dataset.from_data(data, feature_names=trial.feature_names
                                    if isinstance(data, np.ndarray) else None)
        parts = []
        for output in [None] if self.outputs is None else self.outputs:
            def col(name, output=output):
                return name if output is None else output_column(name, output)

            subject = Subject(codes=dataset.values, feature_names=trial.feature_names,
                              output=trial.output if output is None else output,
                              columns=dataset.columns,
                              column_labels=dataset.column_labels if dataset.is_frame else None)
            parts.append(build(
                subject, values=kept[[col(f) for f in self.feature_names]].to_numpy(np.float64),
                base_values=kept[col("base_value")].to_numpy(np.float64),
                prediction=kept[col("prediction")].to_numpy(np.float64), method=self.method,
                value_function=self.value_function, diagnostics=dict(self.diagnostics)))
        sample = parts[0] if self.outputs is None else Attributions.stack(parts,
                                                                          self.output_labels)
        return keep_row_labels(sample, kept)  # the rows' labels in X's index, as in memory


def _summarise_partition(result: pd.DataFrame, data, rows, names):
    """One partition's sum of ``|values|`` and its sampled rows (results and data)."""
    values = result[names].to_numpy(np.float64)
    return np.abs(values).sum(axis=0), result.iloc[rows], take_rows(data, rows)
