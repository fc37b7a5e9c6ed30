"""The model seam: the only code that calls the user's model.

A :class:`Model` turns encoded rows (see :mod:`modellens.data`) into one float
per row.  It chooses the response (class probability, prediction, decision
function), feeds the model the input form it was fit on, and checks every
answer, so that methods never see a malformed prediction.
"""

from __future__ import annotations

import copy
import sys
import threading

import numpy as np
import pandas as pd

from .._children import safe_path
from .._validation import InvalidParameterError, check_choice
from ..data import Dataset
from ._answers import (MAX_MAGNITUDE, ModelError, _answer_names, _bound_class_names,
                       _check_magnitude, _numbers, _shown)
from ._gradient import Gradients
# (_requested_outputs: read from here by models/_trees.py, which lane trees moves)
from ._targets import (_RESPONSES, _column, _in_range, _requested_outputs, _response_classes,
                       booster_predict, class_position)
from ._output import PASS_TARGET, select_output, select_outputs
from ._torch import (is_torch_module, to_numpy, torch_max_rows, torch_predict, torch_spec,
                     warn_if_training)

__all__ = ["Model", "ModelError", "tree_ensemble_name"]

#: scikit-learn base classes of tree models: piecewise constant in every feature.
_SKLEARN_TREE_BASES = {"BaseDecisionTree", "BaseForest", "BaseGradientBoosting",
                       "BaseHistGradientBoosting", "BaseBagging", "IsolationForest"}
#: Libraries whose models are tree ensembles (their linear boosters aside).
_TREE_LIBRARIES = ("xgboost", "lightgbm", "catboost")


def tree_ensemble_name(model) -> str | None:
    """The class name of a known tree model (or of a Pipeline's last step), else None.

    Tree models are piecewise constant in every feature, so their derivatives
    are zero almost everywhere and infinite at the split thresholds.
    """
    steps = getattr(model, "steps", None)
    if isinstance(steps, list) and steps and isinstance(steps[-1], tuple):
        return tree_ensemble_name(steps[-1][1])
    cls = type(model)
    root = cls.__module__.split(".")[0]
    if root in _TREE_LIBRARIES:
        booster = getattr(model, "booster", None)
        if root == "xgboost" and isinstance(booster, str) and booster == "gblinear":
            return None
        return cls.__name__
    if root == "sklearn":
        names = {base.__name__ for base in cls.__mro__}
        if names & _SKLEARN_TREE_BASES:
            if "BaseBagging" in names and "BaseForest" not in names:
                # bagging of any estimator: a tree ensemble only when its base is a tree
                base = getattr(model, "estimator_", None) or getattr(model, "estimator", None)
                return cls.__name__ if base is None or tree_ensemble_name(base) else None
            return cls.__name__
    return None


class Model(Gradients):
    """Adapter from a fitted model (or callable) to ``rows -> (m,) floats``.

    Parameters
    ----------
    model : estimator or callable
        An object with ``predict_proba`` (classifiers), ``predict`` or
        ``decision_function``, a scikit-learn Pipeline, a plain callable
        ``f(X) -> (m,)``, or a PyTorch model: a ``torch.nn.Module`` or a
        function on tensors.  A torch model gets the encoded rows as one
        tensor (the dtype and device of its first floating parameter, else
        torch's default dtype on the CPU) and its output comes back as
        numpy; a plain callable is treated as a torch function when it fails
        on a numpy array and succeeds on a tensor.
    dataset : Dataset
        The schema used to build the model's input.
    target : label or int, optional
        The class whose probability is explained.  A class label is matched
        first, then a position in ``classes_``.  Binary classifiers default to
        the positive class (``classes_[1]``); multiclass ones require it.  For
        a ``torch.nn.Module`` with several outputs, the output column.
    response_method : {"auto", "predict_proba", "decision_function", "predict"}
        ``"auto"`` uses ``predict_proba`` for classifiers and ``predict``
        otherwise.
    input_format : {"auto", "frame", "array"}
        ``"auto"`` feeds a DataFrame when the data came as one, unless the
        model is a scikit-learn estimator fit on an unnamed array.
    ask : callable, optional
        ``ask(function, model)`` runs ``function(model)`` where the request's
        rows are answered (a Dask worker) for the one row that tells the
        outputs (see :meth:`_probe`); None: here.
    """

    #: the explained output's name and its column of the answer (set by ``_respond``)
    output_name: str
    class_index: int | None

    def __init__(self, model, dataset: Dataset, *, target=None, response_method="auto",
                 input_format="auto", several=False, ask=None):
        if isinstance(model, Model):
            raise InvalidParameterError("pass the user's model, not a modellens.Model")
        check_choice(response_method, "response_method", _RESPONSES)
        self.model = model
        self.dataset = dataset
        #: Model (or gradient) calls and rows evaluated so far; counted under a lock
        #: because the engine may call from several threads.
        self.n_calls = 0
        self.n_rows = 0
        self._count_lock = threading.Lock()
        #: "torch" when the model takes tensors (found at construction for a
        #: Module, at the first call for a function on tensors), else None.
        self.framework = None
        self._torch_spec = None
        self._may_take_tensors = False
        #: an explicit target= must select a column; a default one (predict_proba of a
        #: model without classes_) applies only when the output has columns
        self._target_given = target is not None
        #: the class label whose probability or decision value is explained (None when
        #: the output is not one class's: a regressor, a callable, a torch module)
        self.explained_class = None
        self.response_method = response_method
        #: the output columns of a multi-output model (None: one output, see class_index)
        self._columns: list | None = None
        #: columns of the model's whole answer, checked at every call (multi-output only)
        self._answer_width: int | None = None
        self.output_labels: list = []
        #: the output names a plain callable's answer gave (a DataFrame's columns, a
        #: Series' name), once it has answered; None until then or when it gives none
        # a bound predict_proba of a classifier names its columns by the classes, as the
        # classifier itself would be named; a DataFrame answer names them otherwise
        self._answer_names: list[str] | None = _bound_class_names(model)
        wanted = _requested_outputs(target, several)
        classes = _response_classes(model, response_method)
        if several and target is None and classes is not None and len(classes) > 2:
            wanted = "all"  # a multiclass model: every class
        if wanted is not None:
            # the response of the first output; _choose_outputs sets the columns
            target = classes[0] if classes is not None else None
        if is_torch_module(model):
            self.framework = "torch"
            self._torch_spec = torch_spec(model)
            warn_if_training(model)
            self.as_frame = False
        else:
            self.as_frame = self._choose_input(model, dataset, input_format)
        self._respond(target)
        # a plain callable may be a function on torch tensors; it is tried as one when it fails
        self._may_take_tensors = self.framework is None and self._fn is model
        if several:
            self._choose_outputs(wanted, None if wanted is not None else target, classes, ask)
        if wanted is None and self._target_given and self.class_index is not None \
                and self._fn is model and self._TABLE_ROWS:
            # target= one column of a plain callable: one output, named as its answer names
            # it (a DataFrame's column), as target=None and target=[j] name it
            self._probe(ask=ask)
            self.output_name = self._answer_name(self.output_name)
        #: the names of the explained outputs (one for a single-output model)
        self.outputs: list[str] = [self.output_name] if self._columns is None else self.outputs

    def _respond(self, target):
        """Set the response function, its name and column for ``target`` (one output)."""
        if self.framework == "torch":
            self._fn, self.output_name, self.class_index, self.negate = \
                self._torch_response(target, self.response_method)
        else:
            self._fn, self.output_name, self.class_index, self.negate, self.explained_class = \
                self._choose_response(self.model, target, self.response_method)
            self.output_name = self._answer_name(self.output_name)

    def _answer_name(self, default: str) -> str:
        """The name the answer gave the explained column (``default`` if it gave none).

        One rule for every method: a plain callable that returns a DataFrame
        names its outputs by its columns, one that returns a Series by its name.
        """
        names = self._answer_names
        if names is None or self._fn is not self.model or self.framework is not None:
            return default
        j = self.class_index
        if j is None:
            return names[0] if len(names) == 1 else default
        return names[j] if len(names) > 1 and -len(names) <= j < len(names) else default

    def _note_names(self, out) -> None:
        """Keep the output names of a plain callable's answer that tells its outputs.

        Called on the answer of the probe that learns the outputs (see
        :meth:`_probe`), for ``target=None`` or a list as for ``target=`` one
        column, whose name it gives.
        """
        if self._answer_names is None and self._fn is self.model and self.framework is None:
            self._answer_names = _answer_names(out)

    # ------------------------------------------------------------ outputs
    @property
    def answer_names(self) -> list[str] | None:
        """The output names a plain callable's answers gave (None: none yet, or none given)."""
        return self._answer_names

    @property
    def n_outputs(self) -> int:
        """How many outputs each answer has (1: :meth:`predict` returns ``(m,)``)."""
        return 1 if self._columns is None else len(self._columns)

    def _choose_outputs(self, wanted, target, classes, ask=None):
        """Several outputs: every class / column (``wanted="all"``), a list, or the default."""
        if classes is not None:
            if wanted is None:
                return  # one class: target=, or a binary model's positive class
            if self.response_method == "decision_function" and len(classes) == 2:
                raise InvalidParameterError(
                    "the decision function of a binary classifier has one column (positive for "
                    f"{classes[1]!r}); target='all' needs predict_proba.")
            labels = classes if wanted in (None, "all") else \
                [classes[class_position(classes, t)] for t in wanted]
            self._set_outputs(labels, [classes.index(label) for label in labels], len(classes))
            return
        if target is not None or (self.class_index is not None and wanted is None):
            return  # a column was chosen (or the binary default of predict_proba)
        for t in wanted if isinstance(wanted, list) else ():
            _column(t)  # not a column position: refused now, before the model runs
        # the model tells its outputs by answering one row, here, before any plan is made
        # (see _probe); outputs asked for by name: the model's own error, not "one output",
        # if it fails
        width = self._probe(strict=wanted is not None, ask=ask)
        if width is None:
            if wanted is not None:
                raise InvalidParameterError(
                    f"target={wanted!r} selects output columns, but the model returns one "
                    "output per row; leave target= out.")
            self.output_name = self._answer_name(self.output_name)
            return
        columns = list(range(width)) if wanted in (None, "all") else \
            [_in_range(_column(t), width) for t in wanted]
        self._set_outputs(columns, columns, width)

    def _set_outputs(self, labels, columns, width):
        if len(set(columns)) != len(columns):
            raise InvalidParameterError(
                f"target= names an output twice: {labels}; name each output once.")
        if len(columns) == 1:  # a list of one output: that output, as target= it
            self._target_given = True
            self._respond(labels[0])
            return
        self.output_labels, self._columns, self._answer_width = list(labels), list(columns), width
        self.outputs = [self.view(c).output_name for c in range(len(columns))]
        self.output_name = ", ".join(self.outputs)
        self.class_index, self.explained_class = None, None

    #: Whether the model's rows are rows of the table (not a text's or image's
    #: coalitions, see :class:`~modellens.models.InputModel`): a refused row can be
    #: shown, and a plain callable asked for one column (``target=j``) names its output
    #: as its answer does (a DataFrame's column), learnt from the probe (:meth:`_probe`).
    _TABLE_ROWS = True

    def _probe(self, *, strict: bool = False, ask=None) -> int | None:
        """Output columns of the model's answer for one row (None: one output).

        The one way the outputs of a model are learnt when its classes and
        ``target=`` do not tell them (a function, a torch module, a regressor
        that may have several outputs): the model answers one row when it is
        wrapped, at the front door, so every plan is made, and every chunk
        sized, for all the outputs from the first.  It costs the model one
        call of one row per request, not counted in :attr:`n_rows` (it is no
        method's row) and not kept: the plans ask their rows as they would of
        a model whose outputs were known.  A plain callable's answer names its
        outputs (:meth:`_note_names`).  On a Dask cluster (``ask``) the row is
        answered on a worker.  A model that raises: a :class:`ModelError`
        when ``strict``, else None (the first planned call raises with the
        full message); a :class:`ModelError` already (a ``predict_fn``'s, a
        worker lost) is raised as it is.
        """
        try:
            # (on a Dask worker when the request runs there: the model answers where its rows
            # are answered; a copy holding the one row travels, not the data)
            answer = self._probe_answer() if ask is None else ask(_first_answer, self._one_row())
            if answer is None:  # no row to ask: one output, as a model of no rows answers
                return None
            out = np.asarray(to_numpy(answer))
        except ModelError:
            raise  # (said already: by a predict_fn's seam, or a Dask worker lost)
        except Exception as exc:
            if not strict:
                return None
            raise self._raised(exc, 1) from exc
        self._note_names(answer)
        if out.ndim == 2 and out.shape[1] > 1:
            return int(out.shape[1])
        return None

    def _probe_answer(self):
        """The model's answer for the first data row (None: the data have no rows)."""
        rows = self.dataset.values[:1].copy()  # (a model may write into its rows)
        return self._call(rows) if rows.shape[0] else None

    def _one_row(self) -> "Model":
        """A copy whose data are the first row only (what a Dask worker needs to probe)."""
        one = copy.copy(self)
        d = self.dataset
        one.dataset = Dataset(d.values[:1].copy(), d.columns, d.is_frame, d.column_labels)
        return one

    def view(self, position: int) -> "Model":
        """The single-output model of output ``position``: as if asked with that ``target=``."""
        if self._columns is None:
            return self
        one = copy.copy(self)
        one._columns = None
        one._answer_width = None
        one._target_given = True
        one.output_labels = []
        one._respond(self.output_labels[position])
        one.outputs = [one.output_name]
        return one

    def __getstate__(self):
        # a Dask executor ships the Model to its workers; a lock does not pickle
        state = self.__dict__.copy()
        del state["_count_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._count_lock = threading.Lock()

    @property
    def explains_probability(self) -> bool:
        """Whether the output is a class's probability (``predict_proba``)."""
        return self.explained_class is not None and self.output_name.startswith("P(y = ")

    # ------------------------------------------------------------ response
    @staticmethod
    def _choose_response(model, target, response_method):
        classes = getattr(model, "classes_", None)
        has_proba = hasattr(model, "predict_proba")
        if response_method == "auto":
            if has_proba and classes is not None:
                response_method = "predict_proba"
            elif hasattr(model, "predict"):
                response_method = "predict"
            elif has_proba:
                response_method = "predict_proba"
            elif callable(model):
                if target is None:
                    return model, "f(x)", None, False, None
                return model, f"f(x)[{_column(target)}]", _column(target), False, None
            else:
                raise InvalidParameterError(
                    f"cannot explain a {type(model).__name__}: pass a fitted estimator with "
                    "predict / predict_proba, or a callable f(X) -> (n,) array."
                )
        fn = getattr(model, response_method, None)
        if fn is None:
            raise InvalidParameterError(f"{type(model).__name__} has no {response_method} method.")
        if response_method == "predict":
            fn = booster_predict(model) or fn
            if target is not None and classes is None:
                # a raw booster's (or a multi-output model's) predict: a column per output
                return fn, f"prediction[{_column(target)}]", _column(target), False, None
            if target is not None:
                raise InvalidParameterError(
                    "target= selects a class of predict_proba / decision_function, or an "
                    "output column (an int) of a multi-output predict; got "
                    f"{target!r} for {type(model).__name__}.predict.")
            return fn, "prediction", None, False, None
        if classes is None:
            if target is None:
                return fn, response_method, (1 if response_method == "predict_proba" else None), \
                    False, None
            return fn, f"{response_method}[{_column(target)}]", _column(target), False, None
        classes = list(np.asarray(classes).tolist())
        k = class_position(classes, target)
        name = f"P(y = {classes[k]})" if response_method == "predict_proba" else \
            f"decision({classes[k]})"
        if response_method == "decision_function" and len(classes) == 2:
            # binary decision functions return one column, positive for classes_[1]
            return fn, name, None, k == 0, classes[k]
        return fn, name, k, False, classes[k]

    def _torch_response(self, target, response_method):
        if response_method != "auto":
            raise InvalidParameterError(
                "a torch.nn.Module is called directly; "
                "response_method must be 'auto'.")
        if target is None:
            return self.model, "f(x)", None, False
        return self.model, f"output[{_column(target)}]", _column(target), False

    @staticmethod
    def _choose_input(model, dataset, input_format):
        check_choice(input_format, "input_format", ("auto", "frame", "array"))
        if input_format != "auto":
            return input_format == "frame"
        if not dataset.is_frame:
            return False
        fitted_on_array = hasattr(model, "n_features_in_") and not hasattr(model, "feature_names_in_")
        return not fitted_on_array

    @property
    def may_take_tensors(self) -> bool:
        """A plain callable (not an estimator) that might be a function on torch tensors."""
        return self._may_take_tensors

    @property
    def max_chunk_rows(self) -> int | None:
        """Most rows of one call the engine should make (None: only its byte cap).

        A torch model's rows are sized where it lives: ``TORCH_MAX_ROWS`` on the
        CPU, from the free memory of its GPU there (see
        :func:`~modellens.models._torch.torch_max_rows`).
        """
        if self.framework != "torch":
            return None
        return torch_max_rows(self._fn, self._torch_spec, self.dataset.values.shape[1])

    @property
    def large_chunks(self) -> bool:
        """Whether the model answers fastest in the largest chunks: a known tree ensemble.

        Its per-row time only falls with the rows of a call (each call costs a
        pass of Python and an OpenMP region per tree), so the engine gives it
        chunks at its memory cap instead of tuning their size (see
        :class:`~modellens.engine.ChunkSizer`).
        """
        return self.framework is None and tree_ensemble_name(self.model) is not None

    # ------------------------------------------------------------ predict
    def to_input(self, rows: np.ndarray):
        """Encoded rows in the form the model takes."""
        if self.as_frame:
            return self.dataset.to_frame(rows)
        return self.dataset.to_array(rows)

    def predict(self, rows: np.ndarray) -> np.ndarray:
        """Evaluate the model on encoded ``rows``: ``(m,)`` floats, ``(m, k)`` for k outputs."""
        try:
            # the pools a model's predict starts (loky's workers) import nothing from the
            # working directory, whoever calls (see modellens._children)
            with safe_path():
                out = self._call(rows)
        except Exception as exc:
            raise self._raised(exc, len(rows)) from exc
        self.account(1, len(rows))
        return self._check(out, rows)

    def _raised(self, exc: Exception, m: int) -> ModelError:
        """The error saying the model raised ``exc`` on ``m`` rows, and what it was given."""
        form = "tensor" if self.framework == "torch" else \
            "DataFrame" if self.as_frame else "array"
        fitted = getattr(self.model, "feature_names_in_", None)
        if fitted is not None and self.framework is None and not self.dataset.is_frame:
            # fit on named columns (a ColumnTransformer selecting them by name, say): the
            # cause is X, not the model; its names are not guessed for it (a wrong order
            # would explain a different model without an error)
            fitted = [str(c) for c in fitted]
            same = len(fitted) == len(self.dataset.feature_names)
            return ModelError(
                f"the model was fit on a DataFrame with columns {fitted} and raised "
                f"{type(exc).__name__} on the array X of {len(self.dataset.feature_names)} "
                "columns: pass X as a DataFrame with those columns"
                + (" (X has as many columns: if they are in that order, "
                   "pd.DataFrame(X, columns=model.feature_names_in_))" if same else "")
                + f". The model's error: {exc}")
        return ModelError(f"the model raised {type(exc).__name__} while predicting {m} rows "
                          f"(input: {form} with columns {self.dataset.feature_names}): {exc}")

    def account(self, calls: int, rows: int) -> None:
        """Add ``calls`` model calls over ``rows`` rows to :attr:`n_calls` / :attr:`n_rows`.

        The engine's row accounting (:class:`modellens.engine.ModelLike`):
        calls made here count themselves; a Dask executor adds those its
        workers made on their copies of the model.
        """
        with self._count_lock:
            self.n_calls += calls
            self.n_rows += rows

    _count = account  # the name the model seam used before ModelLike

    def _call(self, rows):
        if self.framework == "torch":
            return torch_predict(self._fn, rows, self._torch_spec)
        try:
            return self._fn(self.to_input(rows))
        except Exception as exc:
            if not (self._may_take_tensors and "torch" in sys.modules):
                raise
            try:
                out = torch_predict(self._fn, rows)
            except Exception:
                raise exc from None
            self.framework = "torch"
            return out

    def _check(self, out, rows):
        """The explained output(s) of the answer ``out`` for ``rows``, checked."""
        m = rows.shape[0]
        out = _numbers(to_numpy(out))
        if self._columns is not None:
            try:
                out = select_outputs(out, self._columns, m, self._answer_width, self.outputs)
            except ValueError as exc:
                raise ModelError(str(exc)) from None
            return self._check_finite(out, rows)
        index = None
        if self.negate:
            out = -out.reshape(-1) if out.ndim == 1 or out.shape[1:] == (1,) else out
        else:
            index = self.class_index
        # target= picks a column of a plain callable's output and of the predict of a model
        # without class labels (a raw multiclass booster); anything else must be wrapped
        takes_target = self._fn is self.model or getattr(self.model, "classes_", None) is None
        hint = PASS_TARGET if takes_target else (
            " The model returns several outputs per row; wrap it so that it returns one, "
            "for example lambda X: model.predict(X)[:, k].")
        try:
            out = select_output(out, index, m, required=self._target_given, several_hint=hint)
        except ValueError as exc:
            raise ModelError(str(exc)) from None
        return self._check_finite(out, rows)

    def _check_finite(self, out, rows):
        m = rows.shape[0]
        # one pass when all is well: the largest |answer| is NaN or inf when any answer is
        # (and is what the magnitude check and the engine's overflow check read)
        peak = float(np.max(np.abs(out))) if out.size else 0.0
        if not np.isfinite(peak):
            bad = ~np.isfinite(out).all(axis=1) if out.ndim == 2 else ~np.isfinite(out)
            where = ""
            if np.isnan(rows).any():
                nan_in = np.isnan(self.dataset.values)
                cols = [self.dataset.columns[j].name for j in np.flatnonzero(nan_in.any(axis=0))]
                where = (f" X holds NaN in {int(nan_in.any(axis=1).sum())} rows (columns {cols}), "
                         "which reached the model: impute them or use a model that accepts "
                         "missing values.")
            elif self._TABLE_ROWS and rows.ndim == 2 and rows.shape[1] == len(self.dataset.columns):
                # rows of a table the method built (a grid point, a coalition's mix of the row
                # and the background; not a text's or image's masks): name one, so the user
                # sees what the model refused
                first = self.dataset.to_frame(rows[np.flatnonzero(bad)[:1]]).iloc[0]
                shown = ", ".join(f"{k}={_shown(v)}" for k, v in list(first.items())[:8])
                more = ", ..." if len(first) > 8 else ""
                where = (f" The first: {{{shown}{more}}}. Every row a method builds from X and "
                         "the background or training data needs a finite answer (a mean over "
                         "NaN would be NaN or wrong): make the model answer such rows, or "
                         "explain it only where it is defined.")
            raise ModelError(
                f"the model returned NaN or inf for {int(bad.sum())} of {m} rows.{where}"
            )
        if peak > MAX_MAGNITUDE:
            _check_magnitude(out)  # (raises, saying how many)
        if out.size:  # the engine's overflow check reads the largest answer
            self.max_abs = max(getattr(self, "max_abs", 0.0), peak)
        return out




def _first_answer(model: Model):
    """The model's answer for its data's first row (run on a Dask worker: see ``Model._probe``)."""
    return model._probe_answer()
