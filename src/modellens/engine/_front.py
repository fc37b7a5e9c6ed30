"""The front door every public method shares: options, inputs, features, routing.

A public method calls :func:`open_request` once with what the user passed,
decides its design from ``request.dataset`` (or, out of core, from
``request.table``), and runs its plans with :meth:`Request.run`, which routes
them in memory (one engine pass) or over the partitions of Dask data (the
same plan classes, summarised and merged), so no method tests for Dask input
itself::

    request = open_request(model, X, features, target=target, chunk_size=chunk_size, ...)
    plans_for = lambda values, part, model: [MyPlan(design, values) for design in designs]
    return Effects(request.run(plans_for, desc="my method"))
"""

from __future__ import annotations

from dataclasses import dataclass

from .._config import Options, resolve_options
from .._validation import InvalidParameterError
from ..data import Dataset, as_pandas, resolve_features
from ..models import Model, OutputsFound, prepare
from ._out_of_core import OutOfCore, is_dask_input
from ._run import run_outputs

__all__ = ["Request", "open_request"]


@dataclass
class Request:
    """One public call's prepared inputs.

    Attributes
    ----------
    dataset : Dataset
        The data (in memory), or the schema of the whole table with its first
        rows as ``values`` (out of core).
    model : Model
        The wrapped model.
    features : list
        The requested features: column positions, and pairs of them.
    options : Options
        The resolved execution options.
    table : OutOfCore or None
        The Dask input, when ``X`` is one.
    X : object
        ``X`` as the method reads it: a polars or pyarrow table converted to
        pandas (once, here), anything else as given.
    """

    dataset: Dataset
    model: Model
    features: list
    options: Options
    table: OutOfCore | None = None
    X: object = None

    @property
    def out_of_core(self) -> bool:
        return self.table is not None

    @property
    def output_labels(self) -> list | None:
        """What selects each output of a multi-output model (None: one output)."""
        return self.model.output_labels if self.model.n_outputs > 1 else None

    def run(self, plans_for, *, desc: str = "modellens") -> list:
        """Each plan's result.

        Parameters
        ----------
        plans_for : callable ``(values, part, model) -> list of Plan``
            Builds the request's plans on encoded rows: in memory once, on
            ``dataset.values`` with ``part=None``; out of core on each
            partition's rows (``part`` its index, ``model`` the worker's copy;
            the plans must summarise) and once on no rows to merge and
            finish.  It is shipped to the workers: let it hold the design,
            not the request.
        """
        return self.run_outputs(plans_for, desc=desc)[0]

    def run_outputs(self, plans_for, *, desc: str = "modellens") -> list:
        """Each output's results (see :meth:`run`): one list per output of the model.

        In memory the plans of every output share one pass of the model
        (:func:`~._run.run_outputs`); out of core each output is run in turn.
        """
        model = self.model
        if self.table is None:
            return run_outputs(model, lambda one: plans_for(self.dataset.values, None, one),
                               self.options, desc=desc)
        # out of core the partitions' summaries are per plan: one pass per output (the
        # model is never called here: a model without classes tells its outputs from
        # its first answer on a partition, as in memory)
        if model.undetermined:
            try:
                return [self.table.run(model, plans_for, desc=desc)]
            except OutputsFound as found:
                model.settle_outputs(found.width)
        return [self.table.run(model.view(c), plans_for, desc=desc)
                for c in range(model.n_outputs)]

    def require_in_memory(self, what: str):
        """Refuse out-of-core data for an option that needs every row at once."""
        if self.table is not None:
            raise InvalidParameterError(
                f"{what} needs the data in memory; for Dask data pass a pandas sample of it, "
                "e.g. X.sample(frac=...).compute().")


def open_request(model, X, features=None, *, target=None, response_method: str = "auto",
                 feature_names=None, chunk_size=None, n_jobs=None, progress=None,
                 allow_pairs: bool = True, out_of_core: bool = True,
                 several: bool = False) -> Request:
    """Resolve the options, prepare data and model, and resolve the features.

    ``X`` may be a Dask collection when ``out_of_core`` (the method's plans
    summarise); the request then reads its partitions where they are.
    """
    options = resolve_options(chunk_size, n_jobs, progress)
    X = as_pandas(X)
    table = None
    if out_of_core and is_dask_input(X):
        table = OutOfCore(X, feature_names, options)
        dataset, mdl = prepare(model, table.schema, target=target,
                               response_method=response_method, several=several)
    else:
        dataset, mdl = prepare(model, X, target=target, response_method=response_method,
                               feature_names=feature_names, several=several)
    feats = resolve_features(dataset, features, allow_pairs=allow_pairs)
    return Request(dataset, mdl, feats, options, table, X)

