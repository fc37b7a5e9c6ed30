"""The front door every public function shares: options, inputs, features, routing.

A public function calls :func:`open_request` once with what the user passed.
The door validates and resolves the execution options (``ml.config`` plus
the call's keywords, one meaning of ``n_jobs``), encodes ``X`` and any
reference table (``background=``, ``training_data=``) under ONE schema,
wraps the model, resolves the features, and picks where the request runs:

* in memory: ``request.dataset`` holds the rows (the explained rows first,
  ``request.reference`` the reference rows after them);
* out of core (``dask="out_of_core"``, the effects): ``request.table`` reads
  a Dask table's partitions where they lie, and :meth:`Request.run` runs the
  same plans per partition (summarised and merged);
* partition by partition (``dask="partitions"``, the local attributions and
  ``ml.predict``): ``request.partitions`` is the Dask input, which the method
  explains by its in-memory call on each partition's rows, each opening its
  own request through this door with the partition's ``options``;
* on a cluster: ``options.client``, which :meth:`Request.run` hands to the
  engine.

So no method tests for Dask input itself::

    request = open_request(model, X, features, target=target, chunk_size=chunk_size, ...)
    plans_for = lambda values, part, model: [MyPlan(design, values) for design in designs]
    return Effects(request.run(plans_for, desc="my method"))

Texts and images (``media=True``) pass the door for their options only: their
removal games wrap the ``predict_fn`` themselves.
"""

from __future__ import annotations

from contextlib import nullcontext
from functools import partial

import numpy as np

from .._children import safe_path
from .._config import Options, resolve_options
from .._validation import InvalidParameterError, check_choice
from ..data import Dataset, as_pandas, as_pandas_pair, encode_with, resolve_features, row_as_frame
from ..models import Model, model_feature_names, tree_ensemble_name, with_model_levels
from ._dask import ask_on_client
from ._out_of_core import OutOfCore, is_dask_input
from ._run import run_outputs
from ._threads import openmp_threads

__all__ = ["Request", "open_request"]


DASK_MODES = ("out_of_core", "partitions", "in_memory")


class Request:
    """One public call's prepared inputs.

    Attributes
    ----------
    dataset : Dataset or None
        The data (in memory: the explained rows, then the reference rows), or
        the schema of the whole table with its first rows as ``values`` (out
        of core); None for a text or image, and for Dask data explained
        partition by partition.
    model : Model
        The wrapped model, built when first read (not for a text, an image or
        Dask partitions, whose methods wrap it themselves).  It knows its
        outputs from then on: a model whose classes and ``target=`` do not
        tell them answers one row as it is wrapped (see
        :meth:`~modellens.models.Model._probe`), before any plan is made.
    raw_model : object
        The user's model as given (a tree ensemble is read from it).
    features : list
        The requested features: column positions, and pairs of them.
    options : Options
        The resolved execution options.
    table : OutOfCore or None
        The Dask input, when ``X`` is one and the method summarises.
    partitions : Dask collection or None
        The Dask input, when the method explains it partition by partition.
    X : object
        ``X`` as the method reads it: a polars or pyarrow table converted to
        pandas (once, here), a Series indexed by the feature names (the
        reference's, else the model's) as that one row (see
        :func:`~modellens.data.row_as_frame`), anything else as given.
    n_explained : int
        Rows of ``dataset`` that are ``X``'s (0 for a text, an image or Dask data).
    n_model_rows : int
        The model rows the request has spent so far: its model seam's, and those a
        method spent through a seam of its own (:meth:`account`).
    """

    def __init__(self, dataset, raw_model, features, options, *, table=None, partitions=None,
                 X=None, n_explained=0, target=None, response_method="auto", several=False):
        self.dataset, self.raw_model, self.features, self.options = (dataset, raw_model,
                                                                     features, options)
        self.table, self.partitions, self.X, self.n_explained = table, partitions, X, n_explained
        self._target, self._response_method, self._several = target, response_method, several
        self._model: Model | None = None
        #: (calls, rows) spent before the model was wrapped (see :meth:`account`)
        self._spent = (0, 0)

    def account(self, calls: int, rows: int) -> None:
        """Count ``calls`` model calls over ``rows`` rows that a method made through a seam
        of its own (the tree route's check of the library's raw margin) as the request's.

        They go on the model seam, wrapped or when it is wrapped (a tree route wraps none
        where the trees answer), so that ``model.n_rows`` is every row the model answered.
        """
        if self._model is not None:
            self._model.account(calls, rows)
        else:
            self._spent = (self._spent[0] + calls, self._spent[1] + rows)

    @property
    def n_model_rows(self) -> int:
        return self._spent[1] if self._model is None else self._model.n_rows

    @property
    def model(self) -> Model:
        if self._model is None:
            # a text, an image or Dask partitions: their methods wrap the model themselves
            assert self.dataset is not None, "this request has no table to wrap a model on"
            # on a cluster the one row that may tell the outputs is answered there too
            client = self.options.client
            ask = None if client is None else partial(ask_on_client, client)
            # the row that may tell the outputs: one OpenMP thread (see _one_row_threads)
            with _one_row_threads(self.raw_model):
                self._model = Model(self.raw_model, self.dataset, target=self._target,
                                    response_method=self._response_method,
                                    several=self._several, ask=ask)
            self._model.account(*self._spent)  # (the rows spent before it was wrapped)
            self._spent = (0, 0)
        return self._model

    def adopt(self, dataset):
        """Take ``dataset`` (the same rows, with more levels) as the request's; returns it.

        The model, if wrapped already, decodes rows with it from now on.
        """
        self.dataset = dataset
        if self._model is not None:
            self._model.dataset = dataset
        return dataset

    @property
    def out_of_core(self) -> bool:
        return self.table is not None

    @property
    def explained(self) -> np.ndarray:
        """The encoded rows of ``X`` (in memory)."""
        assert self.dataset is not None
        return self.dataset.values[:self.n_explained]

    @property
    def reference(self) -> np.ndarray | None:
        """The encoded reference rows (``background=`` / ``training_data=``), or None."""
        if self.dataset is None or self.dataset.n_rows == self.n_explained:
            return None
        return self.dataset.values[self.n_explained:]

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

        The plans of every output share one pass of the model: in memory
        (:func:`~._run.run_outputs`) and out of core, where every partition
        evaluates its rows once for all the outputs
        (:meth:`~._out_of_core.OutOfCore.run_outputs`).
        """
        model = self.model
        if self.table is None:
            assert self.dataset is not None, "a request of Dask partitions runs per partition"
            return run_outputs(model, lambda one: plans_for(self.dataset.values, None, one),
                               self.options, desc=desc)
        # (the model learnt its outputs when it was wrapped, on the table's first row:
        # every partition plans them all)
        return self.table.run_outputs(model, plans_for, desc=desc)


@safe_path()  # a model's pools started while it is probed: see modellens._children
def open_request(model, X, features=None, *, reference=None,
                 reference_name: str = "background", target=None,
                 response_method: str = "auto", feature_names=None, chunk_size=None,
                 n_jobs=None, progress=None, options: Options | None = None,
                 allow_pairs: bool = True, dask: str = "out_of_core", media: bool = False,
                 wrap_model: bool = True, several: bool = False) -> Request:
    """Resolve the options, encode the data with one schema, wrap the model, route.

    Parameters
    ----------
    reference : rows, optional
        A reference table read with ``X`` (``background=``, ``training_data=``):
        encoded with ``X`` under one schema (levels seen in either get a
        code), after ``X``'s rows; ``reference_name`` is its name in errors.
    options : Options, optional
        Options resolved already (a partition's, set by its driver); else
        ``chunk_size``, ``n_jobs`` and ``progress`` over ``ml.config``.
    dask : {"out_of_core", "partitions", "in_memory"}
        What a Dask ``X`` gives: a table whose plans summarise per partition
        (``request.table``), partitions the method explains one by one with
        its in-memory call (``request.partitions``), or an error saying to
        pass the rows in memory.
    media : bool
        ``X`` is a text or an image: options only (no dataset, no model).
    wrap_model : bool
        False builds the :class:`~modellens.models.Model` when
        ``request.model`` is first read (a tree ensemble read from its trees
        needs none).
    several : bool
        The method explains several outputs at once: ``target=None`` on a
        model with several outputs, ``"all"`` or a list select them.
    """
    check_choice(dask, "dask", DASK_MODES)
    options = resolve_options(chunk_size, n_jobs, progress) if options is None else options
    if media:
        if is_dask_input(X):
            raise InvalidParameterError(
                "a Dask collection is a table, not a text or an image: Dask data are explained "
                "row by row as tables (no masker=); texts and images are explained in memory.")
        return Request(None, model, [], options, X=X)
    if reference is not None and not is_dask_input(X):
        # polars / pyarrow: converted once, together (a polars Categorical's levels
        # become those of both sides)
        X, reference = as_pandas_pair(X, reference, other_name=reference_name)
    else:
        X = as_pandas(X)
    if is_dask_input(X):
        if dask == "partitions":
            return Request(None, model, [], options, partitions=X, target=target,
                           response_method=response_method)
        if dask == "out_of_core":
            table = OutOfCore(X, feature_names, options)
            table.adopt(with_model_levels(model, table.schema))  # the model's levels too
            request = Request(table.schema, model, [], options, table=table, X=X,
                              target=target, response_method=response_method,
                              several=several)
            if wrap_model:
                request.model  # noqa: B018 - a bad target or response is an error here
            request.features = resolve_features(table.schema, features,
                                                allow_pairs=allow_pairs)
            return request
        raise InvalidParameterError(
            "this method needs the data in memory; for Dask data pass a pandas sample of it, "
            "e.g. X.sample(frac=...).compute().")
    if reference is None:
        # a Series indexed by the model's names is that row (as shap reads it)
        X = row_as_frame(X, None, model_feature_names(model) or feature_names)
        dataset = Dataset.from_data(X, feature_names=feature_names)
        n = dataset.n_rows
    else:
        X = row_as_frame(X, reference)
        dataset, n = encode_with(X, reference, feature_names=feature_names,
                                 other_name=reference_name)
    # columns the model takes as categories are explained at the model's levels, whatever
    # dtype they arrive in
    dataset = with_model_levels(model, dataset)
    request = Request(dataset, model, [], options, X=X, n_explained=n, target=target,
                      response_method=response_method, several=several)
    if wrap_model:
        request.model  # noqa: B018 - a bad target or response is an error here
    request.features = resolve_features(dataset, features, allow_pairs=allow_pairs)
    return request


def _one_row_threads(model):
    """The context a tree ensemble answers the one row of its probe in: one OpenMP thread.

    A row is predicted on one thread whatever the count, but every tree's
    parallel region still waits for all of them at its barrier: on a busy
    two-core machine a HistGradientBoosting model of 100 trees took 1.7 s for
    the one row on two threads (each barrier waiting out a time slice), and
    about a millisecond on one.
    """
    return openmp_threads(1) if tree_ensemble_name(model) is not None else nullcontext()
