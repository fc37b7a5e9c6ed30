"""The explained output of every row: the number each method of modellens explains."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

import numpy as np
import pandas as pd

from .data import as_pandas
from .engine import DataPredictions, Plan, open_request
from .engine import map_rows
from ._validation import InvalidParameterError
from .typing import DaskLike, DataLike, ModelLike, TargetSpec

__all__ = ["predict"]


class _Predictions(Plan):
    """Every row's prediction."""

    def __init__(self, values: np.ndarray):
        self.at_data = DataPredictions(values)
        self.shared_rows = [self.at_data]

    def reduce(self) -> np.ndarray:
        return self.at_data.at()


# Dask first: a Dask DataFrame is also a DataFrameLike.  Its lazy Series is untyped (Any).
@overload
def predict(model: ModelLike, X: DaskLike, *, target: TargetSpec = None,
            response_method: str = "auto", feature_names: Sequence[str] | None = None,
            chunk_size: int | None = None, n_jobs: int | None = None,
            progress: bool | None = None) -> Any: ...


@overload
def predict(model: ModelLike, X: DataLike, *, target: TargetSpec = None,
            response_method: str = "auto", feature_names: Sequence[str] | None = None,
            chunk_size: int | None = None, n_jobs: int | None = None,
            progress: bool | None = None) -> pd.Series | pd.DataFrame: ...


def predict(model: ModelLike, X: DaskLike | DataLike, *, target: TargetSpec = None,
            response_method: str = "auto", feature_names: Sequence[str] | None = None,
            chunk_size: int | None = None, n_jobs: int | None = None,
            progress: bool | None = None) -> Any:
    """What number does the model give each row, the one every modellens method explains?

    Each method explains one output per row: the probability of one class
    for a classifier (the positive class of a binary one unless ``target``
    says otherwise), the prediction of a regressor, or what a callable
    returns.  ``predict`` gives exactly that number for every row of ``X``,
    through the same model adapter and chunked evaluation as the
    explanations, so a Pipeline, a torch module and a plain function are
    called as the methods call them.  Use it to check which output an
    explanation is about, or to compare the explanations with the
    predictions they decompose (Shapley values sum to it).

    Parameters
    ----------
    model : estimator or callable
        ``predict_proba`` / ``predict`` / ``decision_function`` object,
        scikit-learn Pipeline, torch module, or a callable ``f(X) -> (n,)``.
    X : ndarray or DataFrame of shape (n, d), or Dask DataFrame / array
        The rows to predict.  A Series indexed by the model's feature names
        (``df.iloc[i]``) is one row; any other Series is one column.  Dask
        data give a lazy Dask Series, one partition per partition of ``X``,
        computed where the data are.
    target : class label, index, "all" or list, optional
        The class whose output is given, by label (``"yes"``) or position in
        ``classes_``; the same ``target`` as the explanation's gives its
        number.  None: the positive class of a binary classifier, every class
        of a multiclass one, every column of a model with several outputs;
        ``"all"`` or a list of classes (columns): those.
    response_method, feature_names, chunk_size, n_jobs, progress : optional
        As in :func:`modellens.pdp`: which method of the model to call
        (``"auto"``: ``predict_proba``, then ``decision_function``, then
        ``predict``), column names for an array ``X``, and execution options
        that do not change the numbers.

    Returns
    -------
    pandas.Series of float, or dask.dataframe.Series
        (a DataFrame with one column per output, named after it, when the
        model has several outputs; see the user guide's "Outputs")
        One value per row, with the index of a DataFrame ``X`` (positions
        for an array), named after the output, e.g. ``"P(y = 1)"`` or
        ``"prediction"``.  The pandas Series's ``attrs`` (a computed
        Dask one's too) say what the values are:
        ``"explained_class"`` (the classifier's class label whose
        probability or decision value it is, else None) and
        ``"probability"`` (whether they are ``predict_proba`` values).

    Raises
    ------
    ModelError
        When the model fails, returns the wrong number of values, or returns
        NaN or inf (the message names the rows and columns that hold NaN).

    See Also
    --------
    shapley : Attributions whose sum with the base value is this prediction.
    pdp : The average of these predictions with one feature set to a grid.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> import modellens as ml
    >>> X = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0], "b": [1.0, 0.0, 1.0, 0.0]})
    >>> clf = LogisticRegression().fit(X, [0, 0, 1, 1])
    >>> p = ml.predict(clf, X)
    >>> p.name
    'P(y = 1)'
    >>> bool(np.allclose(p, clf.predict_proba(X)[:, 1]))
    True
    >>> bool(np.allclose(ml.predict(clf, X, target=0), clf.predict_proba(X)[:, 0]))
    True
    >>> p.attrs
    {'explained_class': 1, 'probability': True}
    """
    X = as_pandas(X)  # (a one-row Series is that row: open_request reads it)
    request = open_request(model, X, None, target=target, response_method=response_method,
                           feature_names=feature_names, chunk_size=chunk_size, n_jobs=n_jobs,
                           progress=progress, dask="partitions", several=True)
    if request.partitions is not None:
        return _lazy(model, request.partitions, dict(
            target=target, response_method=response_method, feature_names=feature_names),
            request.options)
    per_output = request.run_outputs(lambda values, part, mdl: [_Predictions(values)],
                                     desc="predict")
    frame = request.X
    index = frame.index if isinstance(frame, (pd.DataFrame, pd.Series)) else None
    mdl = request.model
    out: pd.Series | pd.DataFrame
    if mdl.n_outputs > 1:
        out = pd.DataFrame(np.column_stack([values for (values,) in per_output]), index=index,
                           columns=pd.Index(mdl.outputs))
    else:
        ((values,),) = per_output
        out = pd.Series(np.asarray(values, dtype=float), index=index, name=mdl.output_name)
    out.attrs.update(_described(mdl))
    return out


def _described(model) -> dict:
    """What the values are, for code that reads them: the class and the kind of output.

    With several outputs, ``explained_class`` lists each column's class (None
    for columns of a model without classes).
    """
    if model.n_outputs > 1:
        views = [model.view(c) for c in range(model.n_outputs)]
        classes = [v.explained_class for v in views]
        return {"explained_class": classes if any(c is not None for c in classes) else None,
                "probability": views[0].explains_probability}
    return {"explained_class": model.explained_class,
            "probability": model.explains_probability}


def _lazy(model, X, options, client_options):
    """A Dask Series of the predictions, each partition predicted where it lies.

    The engine's one driver of lazy partition-by-partition answers
    (``engine._dask_tables.map_rows``, the local attributions' too): the first
    row is predicted at the call (a model that cannot predict the data fails
    then, not at compute) and names the output; nothing else is read now.
    """
    import dask.array as da

    if isinstance(X, da.Array) and any(np.isnan(c) for c in X.chunks[0]):
        raise InvalidParameterError(
            "X is a Dask array whose blocks have unknown numbers of rows, so the "
            "predictions could not be indexed by row position; call "
            "X.compute_chunk_sizes() first, or pass the Dask DataFrame it came from.")
    lazy = map_rows(X, _PredictRows(model, options), options=client_options,
                    columns_of=_as_columns, names_of=_names,
                    needs_offsets=lambda first: False)
    # several outputs: a lazy DataFrame, one column per output; one: a lazy Series
    return lazy.frame if isinstance(lazy.trial, pd.DataFrame) else lazy.frame[lazy.trial.name]


class _PredictRows:
    """The in-memory predictions of some rows (a partition's block), on a worker."""

    def __init__(self, model, options):
        self.model, self.options = model, options

    def __call__(self, rows, offset, options):
        return predict(self.model, rows, **{**self.options, "chunk_size": options.chunk_size,
                                            "n_jobs": options.n_jobs, "progress": False})


def _as_columns(p: pd.Series | pd.DataFrame) -> np.ndarray:
    values = p.to_numpy(dtype=float)
    return values if values.ndim == 2 else values[:, None]


def _names(first: pd.Series | pd.DataFrame) -> list:
    return list(first.columns) if isinstance(first, pd.DataFrame) else [first.name]
