"""Names for the kinds of arguments modellens functions take.

The public functions are annotated with these aliases, so an IDE or a type
checker shows *what* to pass (a model, a table, a feature) rather than a long
union.  They are open on purpose: any object that behaves as described is
accepted at run time, whatever library it comes from.  ``ArrayLike`` is
numpy's (:mod:`numpy.typing`): anything :func:`numpy.asarray` takes.

Examples
--------
>>> import modellens as ml
>>> from modellens.typing import DataLike, FeatureSpec, ModelLike
>>> def explain(model: ModelLike, X: DataLike, features: FeatureSpec = None):
...     return ml.ale(model, X, features)
>>> from sklearn.linear_model import LinearRegression
>>> isinstance(LinearRegression(), ml.typing.Predictor)
True
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Protocol, Union, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["ArrayLike", "DataFrameLike", "DataLike", "DaskLike", "Predictor", "Classifier",
           "ModelLike", "PredictFn", "FeatureSpec", "TargetSpec", "GridSpec", "BinsSpec",
           "RandomStateLike"]


@runtime_checkable
class DataFrameLike(Protocol):
    """A table with named columns.

    A pandas DataFrame, and any other table that has a ``columns`` attribute:
    a Dask DataFrame (read out of core where a function says so), and the
    tables the functions convert at their boundary (polars, pyarrow).
    """

    @property
    def columns(self) -> Any: ...


#: What ``X`` (the data to explain) may be: an array of shape ``(n, d)``
#: (anything :func:`numpy.asarray` takes, a Dask array included) or a table
#: (:class:`DataFrameLike`).
DataLike = Union[ArrayLike, DataFrameLike]


@runtime_checkable
class DaskLike(Protocol):
    """A Dask DataFrame, Series or array: data explained where it lies, out of core.

    :func:`modellens.shapley` and :func:`modellens.lime` of such data return a
    :class:`~modellens.DistributedAttributions` (their overloads tell a type
    checker so); the other functions read it as any other ``X``.  Recognised
    by the two attributes every Dask collection with partitions has, so Dask
    is needed neither to import modellens nor to check its types.
    """

    def __dask_graph__(self) -> Any: ...

    @property
    def npartitions(self) -> Any: ...


@runtime_checkable
class Predictor(Protocol):
    """An estimator with ``predict(X)``: a regressor, a classifier, a Pipeline."""

    def predict(self, X: Any, /) -> Any: ...


@runtime_checkable
class Classifier(Protocol):
    """A classifier with ``predict_proba(X)``; the class is chosen with ``target=``."""

    def predict_proba(self, X: Any, /) -> Any: ...


#: What ``model`` may be: an estimator with ``predict_proba``, ``predict`` or
#: ``decision_function`` (scikit-learn and its Pipelines, XGBoost, LightGBM),
#: a PyTorch module (gradients for :func:`modellens.dale` come from autodiff),
#: or any callable ``f(X) -> (n,)`` (or ``(n, k)`` with ``target=``).
ModelLike = Union[Predictor, Classifier, Callable[..., Any]]

#: A function from a batch of inputs (a list of texts, an array of images) to
#: scores of shape ``(n,)`` or ``(n, k)``, as :func:`modellens.lime_text`,
#: :func:`modellens.lime_image` and :func:`modellens.shapley` with a masker take.
PredictFn = Callable[[Any], Any]

#: Which features to explain: None (all), one column name or index, or a list
#: of them; a pair ``(a, b)`` in the list asks for a two-feature effect.  An
#: integer is a column label when the table has integer labels, a position
#: otherwise.
FeatureSpec = Union[None, Hashable, Sequence[Union[Hashable, tuple[Hashable, Hashable]]]]

#: Which output to explain for a model with several (a classifier's classes):
#: a class label or its index; None takes the positive class of a binary
#: classifier or the single output of a regressor.
TargetSpec = Union[None, Hashable]

#: Grid points of :func:`modellens.pdp` and :func:`modellens.mplot`: a count,
#: the points themselves (levels for a categorical feature), or a dict from
#: feature (or pair) to either.
GridSpec = Union[int, ArrayLike, Mapping[Hashable, Any]]

#: Bins of :func:`modellens.ale` and :func:`modellens.dale`: a count of
#: quantile bins, the edges themselves, ``"auto"`` (DALE's variable-width
#: bins), or a dict from feature (or pair) to any of these.
BinsSpec = Union[int, str, ArrayLike, Mapping[Hashable, Any]]

#: A seed: None (fresh entropy), a non-negative int, or a numpy
#: ``Generator`` (a ``BitGenerator`` or ``SeedSequence`` too).  The same seed
#: gives the same numbers.
RandomStateLike = Union[None, int, np.random.Generator, np.random.BitGenerator,
                        np.random.SeedSequence]
