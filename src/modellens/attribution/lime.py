r"""LIME for tables: local surrogates fit on perturbed samples, many rows in one pass.

For each explained row :math:`x` LIME (Ribeiro, Singh & Guestrin 2016) draws
``num_samples`` perturbed rows from the training data's statistics, maps them
to an interpretable representation :math:`z`, weights them by their proximity
to :math:`x` and fits a sparse weighted linear model (see
:mod:`._surrogate`).  The samples of every row are planned as engine segments
and evaluated in one chunked stream; each row's surrogate is fit as soon as its
answers are in, and its samples are released.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from functools import partial
from typing import overload

import numpy as np

from .._validation import (InvalidParameterError, ModellensWarning, check_choice, check_int,
                           check_positive_float, check_random_state, renamed)
from ..engine import DataRows, Plan, Segment, open_request
from ..typing import ArrayLike, DaskLike, DataLike, ModelLike, RandomStateLike, TargetSpec
from ._blocks import Subject
from .distributed import DistributedAttributions
from ._streams import RowStreams
from ._surrogate import (EveryOutput, check_budget, exponential_kernel, fit_many,
                         output_names, run_every_output, surrogate_attributions, warn_if_shrunk)
from ._tabular import DISCRETIZERS, TabularSampler
from .lime_result import WidthSweep
from .result import Attributions, keep_row_labels

__all__ = ["lime", "lime_width_sweep", "WidthSweep", "TabularSampler", "DISCRETIZERS"]

class _Instances(EveryOutput, DataRows):
    """The explained rows themselves (the shared sampling's row 0 of each neighbourhood)."""


class _Neighbourhood(EveryOutput, Segment):
    """Perturbed rows drawn from their own seed when first read (row 0 is ``x0``, if given).

    The rows exist from the first chunk that reads them until the surrogates
    that need them are fit, so a request never holds all rows at once.  Their
    answers keep every output of the model: the surrogates of all outputs are
    fit on these draws.
    """

    key: tuple[int, int]  # (repeat, row) of a per-row neighbourhood, set by its plan

    def __init__(self, sampler, x0, size, seed):
        self.sampler, self.x0, self.seed = sampler, x0, seed
        self.n_rows, self.width, self.group = size, sampler.d, 1
        self.X: np.ndarray | None = None
        self.K: np.ndarray | None = None

    def _draw(self):
        if self.X is None:
            self.X, self.K = self.sampler.draw(self.n_rows, np.random.default_rng(self.seed))
            if self.x0 is not None:
                self.X[0] = self.x0

    def rows(self, start, stop):
        self._draw()
        assert self.X is not None  # drawn
        return self.X[start:stop]

    def fill(self, start, stop, out):
        out[...] = self.rows(start, stop)

    def release(self):
        self.X = self.K = self.result = None


#: Where each row's perturbed samples come from (see :func:`lime`).
SAMPLINGS = ("per_row", "shared")
#: Neighbourhoods are fit in batches of about this many bytes of their samples: many
#: small fits in one batched solve cost little more than one.
FIT_BATCH_BYTES = 16 * 2**20


class _LimePlan(Plan):
    """Neighbourhoods of every (repeat, row) and the surrogate fits of every output.

    ``"per_row"``: one neighbourhood per (repeat, row), fit as soon as its
    answers are in.  ``"shared"``: one set of draws per repeat, answered once,
    plus the explained rows; every row's surrogate is fit on its own
    prediction followed by the shared draws.  ``keep=True`` keeps each
    neighbourhood's ``(Z, y, distances)`` in ``kept`` instead of fitting it.
    Row ``i``'s neighbourhood of repeat ``r`` is drawn from ``streams.seed(i, r)``
    (:class:`~._streams.RowStreams`), the shared draws from ``streams.shared_seed(r)``.

    A model of several outputs answers each sample once with all of them, and
    the surrogates of a neighbourhood are fit together
    (:func:`~._surrogate.fit_outputs`): ``fits[r][i]`` lists one fit per output.
    """

    def __init__(self, sampler, X, streams, repeats, num_samples, width, k, selection, *,
                 sampling="per_row", keep=False):
        self.sampler, self.X = sampler, X
        self.n, self.repeats = X.shape[0], repeats
        self.width, self.k, self.selection, self.keep = width, k, selection, keep
        self.sampling = sampling
        self.fits = [[None] * self.n for _ in range(self.repeats)]
        self.kept = {}
        self._pending: list = []  # (repeat, row, Z, Y) waiting to be fit together
        # about FIT_BATCH_BYTES of samples per batch of fits
        self.batch = max(1, FIT_BATCH_BYTES // (8 * num_samples * (sampler.d + 1)))
        self.segments = []
        if sampling == "shared":
            self.instances = _Instances(X)
            self.shared = [_Neighbourhood(sampler, None, num_samples - 1, streams.shared_seed(r))
                           for r in range(self.repeats)]
            self.segments = [self.instances, *self.shared]
            return
        for r in range(self.repeats):
            for i in range(self.n):
                seg = _Neighbourhood(sampler, X[i], num_samples, streams.seed(i, r))
                seg.key = (r, i)
                seg.on_finish = self._fit_own
                self.segments.append(seg)

    def _fit_own(self, seg):
        seg._draw()  # a neighbourhood of no model rows still needs its samples
        r, i = seg.key
        Z = self.sampler.represent_draws(seg.K, seg.x0)
        Z[0] = self.sampler.represent(seg.x0)
        self._fit(r, i, Z, seg.result)
        seg.release()

    def _fit(self, r, i, Z, y):
        Y = y.reshape(y.shape[0], -1)  # a column per output
        if self.keep:
            # the width sweep refits these samples itself, at every width
            self.kept[(r, i)] = (Z, Y.copy(), _distances(Z[None])[0])
            return
        # fit with others: many small fits cost little more than one in batched algebra
        self._pending.append((r, i, Z, Y))
        if len(self._pending) >= self.batch:
            self._fit_pending()

    def _fit_pending(self):
        """Fit the neighbourhoods waiting for their surrogates, all in one batch."""
        if not self._pending:
            return
        Z = np.stack([Zb for _, _, Zb, _ in self._pending])
        Y = np.stack([Yb for _, _, _, Yb in self._pending])
        weights = exponential_kernel(_distances(Z), self.width)
        fits = fit_many(Z, Y, weights, Z[:, 0], self.k, self.selection)
        for (r, i, _, Yb), row_fits in zip(self._pending, fits):
            for c, fit in enumerate(row_fits):
                fit.prediction = float(Yb[0, c])
            self.fits[r][i] = row_fits
        self._pending = []

    def reduce(self):
        if self.sampling == "shared":
            for r, seg in enumerate(self.shared):
                seg._draw()
                for i, x0 in enumerate(self.X):
                    Z = np.vstack([self.sampler.represent(x0)[None],
                                   self.sampler.represent_draws(seg.K, x0)])
                    y = np.concatenate([self.instances.result[i:i + 1], seg.result])
                    self._fit(r, i, Z, y)
                self._fit_pending()  # before the draws they rest on are released
                seg.release()
        self._fit_pending()
        return self.fits


def _distances(Z):
    """Euclidean distance of every sample to its neighbourhood's instance (row 0): ``(B, S)``."""
    return np.sqrt(((Z - Z[:, :1]) ** 2).sum(axis=2))


def _open(model, X, training_data, *, target, response_method, feature_names, discretize,
          options=None, dask="partitions", **given):
    """The request of a LIME call: ``X`` and ``training_data`` through the front door."""
    if training_data is None:
        raise InvalidParameterError(
            "training_data is required: LIME samples perturbed rows from its statistics "
            "(means, standard deviations, quantile bins, level frequencies).")
    if discretize is not None:
        check_choice(discretize, "discretize", tuple(DISCRETIZERS))
    # the model is wrapped after the data are checked (its errors come second)
    return open_request(model, X, reference=training_data, reference_name="training_data",
                        target=target, response_method=response_method,
                        feature_names=feature_names, options=options, dask=dask,
                        wrap_model=False, **given)


def _prepare(request, *, discretize, stacklevel=4):
    """The encoded rows to explain, their sampler and the model of an in-memory request."""
    dataset = request.dataset
    if dataset.values.shape[0] - request.n_explained < 2:
        raise InvalidParameterError("training_data needs at least 2 rows to give statistics.")
    Xe = request.explained
    sampler = TabularSampler(request.reference, dataset.columns, discretize)
    _warn_unseen_levels(sampler, Xe, dataset.columns, stacklevel)
    return dataset, Xe, sampler, request.model


def _warn_unseen_levels(sampler, Xe, columns, stacklevel):
    """Warn about rows whose level the sampler never draws (z_j = 1 on the row alone)."""
    for j, levels in sampler.levels.items():
        unseen = np.flatnonzero(~np.isin(Xe[:, j], levels) & ~np.isnan(Xe[:, j]))
        if unseen.size:
            col = columns[j]
            value = Xe[unseen[0], j]
            label = bool(value) if col.is_boolean else col.levels[int(value)] \
                if col.is_categorical else value
            warnings.warn(
                f"column {col.name!r}: the level {label!r} of {unseen.size} explained row(s) "
                f"(first: row {unseen[0]}) never occurs in training_data, so LIME never "
                "samples it and that feature's weight rests on the explained row alone; add "
                "rows with this level to training_data.", ModellensWarning,
                stacklevel=stacklevel)


# Dask data give a DistributedAttributions, everything else an Attributions: the Dask
# overload comes first because a Dask DataFrame is also a DataFrameLike
@overload
def lime(model: ModelLike, X: DaskLike, *, training_data: DataLike,
         num_features: int | None = None, num_samples: int = 5000,
         kernel_width: float | None = None, discretize: str | None = "quartile",
         feature_selection: str = "auto", sampling: str = "per_row",
         stability: int | None = None, stability_top_k: int | None = None,
         random_state: RandomStateLike = None, target: TargetSpec = None,
         response_method: str = "auto", feature_names: Sequence[str] | None = None,
         chunk_size: int | None = None, n_jobs: int | None = None,
         progress: bool | None = None) -> DistributedAttributions: ...


@overload
def lime(model: ModelLike, X: DataLike, *, training_data: DataLike,
         num_features: int | None = None, num_samples: int = 5000,
         kernel_width: float | None = None, discretize: str | None = "quartile",
         feature_selection: str = "auto", sampling: str = "per_row",
         stability: int | None = None, stability_top_k: int | None = None,
         random_state: RandomStateLike = None, target: TargetSpec = None,
         response_method: str = "auto", feature_names: Sequence[str] | None = None,
         chunk_size: int | None = None, n_jobs: int | None = None,
         progress: bool | None = None) -> Attributions: ...


def lime(model: ModelLike, X: DaskLike | DataLike, *, training_data: DataLike,
         num_features: int | None = None, num_samples: int = 5000,
         kernel_width: float | None = None, discretize: str | None = "quartile",
         feature_selection: str = "auto", sampling: str = "per_row",
         stability: int | None = None, stability_top_k: int | None = None,
         random_state: RandomStateLike = None, target: TargetSpec = None,
         response_method: str = "auto", feature_names: Sequence[str] | None = None,
         chunk_size: int | None = None, n_jobs: int | None = None,
         progress: bool | None = None) -> Attributions | DistributedAttributions:
    r"""Which features drive the prediction near this row, as a simple weighted linear model would say?

    LIME (local interpretable model-agnostic explanations) perturbs each row of
    ``X``, asks the model about the perturbed rows, and fits a small weighted
    linear model to the answers, giving the rows closest to the explained one
    the most weight.  Its weights are the explanation: how much each feature
    (by default "lies in the same quartile as the row", a yes/no question)
    moves the prediction near that row.  Check the fit before trusting it: the
    local R^2 (``score``, and the held-out ``surrogate.score_holdout``) says how
    well the linear model describes the model there, ``stability=`` repeats
    the fit with new samples, and :func:`modellens.lime_width_sweep` shows how
    the answer depends on the kernel width.

    Parameters
    ----------
    model : estimator or callable
        As in :func:`modellens.pdp`.
    X : ndarray, DataFrame or Dask DataFrame of shape (n, d)
        The rows to explain.  A Dask DataFrame (or array) is explained
        partition by partition where it lies, and the result stays
        distributed: a :class:`~modellens.DistributedAttributions` whose
        ``frame`` holds the weights, ``base_value`` (the intercept),
        ``prediction`` and ``score`` of every row, equal to the in-memory
        values of the same rows and seed whatever the partitioning.
    training_data : ndarray or DataFrame
        Rows with the columns of ``X`` whose statistics the samples come from.
    num_features : int, optional
        Most features with a non-zero weight: default ``min(10, d)``; more
        than ``d`` is an error.
    num_samples : int, default=5000
        Perturbed rows per explained row (model rows: ``n * num_samples``).
    kernel_width : float, optional
        :math:`w`; default ``0.75 * sqrt(d)``.
    discretize : {"quartile", "decile"} or None, default="quartile"
        Bins of the numeric features (training quantiles), or None for the
        continuous representation.
    feature_selection : {"auto", "forward", "highest_weights", "lasso_path", "none"}
        ``"forward"``: greedy, adding the feature that most raises the
        weighted R^2 of least squares; ``"highest_weights"``: the largest
        :math:`|\beta_j z_{0j}|` of a ridge fit (penalty 0.01) on all features;
        ``"lasso_path"``: the last point of the weighted lasso path with at
        most ``num_features`` features; ``"none"``: all; ``"auto"``:
        ``"forward"`` up to 6 features, ``"highest_weights"`` beyond.
    sampling : {"per_row", "shared"}, default="per_row"
        ``"per_row"`` draws every row's neighbourhood independently (as the
        lime package does): ``n * num_samples`` model rows.  ``"shared"``
        draws one set of ``num_samples - 1`` rows and puts each explained row
        in front of it: the draws do not depend on the instance (only their
        ``z`` does), so every explanation has exactly the distribution it has
        with ``"per_row"``, for ``num_samples - 1 + n`` model rows in all; the
        errors of different rows are then correlated (a comparison between
        rows shares its sampling noise).
    stability : int, optional
        Repeat the whole explanation with this many independent seeds (the
        first is the returned one; the cost grows in proportion) and report
        how stable it is in ``surrogate.stability``.
    stability_top_k : int, optional
        Size of the top-feature sets compared by ``stability``; default
        ``min(3, num_features)``.
    random_state : int or Generator, optional
        The same seed gives the same numbers; each row draws from its own
        stream, set by the seed and the row's position in ``X``, so rows are
        independent and a row's numbers do not depend on the other rows.
    target, response_method, feature_names, chunk_size, n_jobs, progress
        As in :func:`modellens.pdp`.

    Returns
    -------
    Attributions
        ``method="lime"``; ``values`` ``(n, d)``: the surrogate's weights
        (0 for unselected features), in units of the model output per unit of
        :math:`z`; ``intercept`` (also ``base_values``); ``score``: the
        weighted R^2 on the samples it was fit on; ``local_prediction``: the
        surrogate at :math:`z_0`; ``prediction``: :math:`f(x)`.  These and
        the rest of the fit are in the ``surrogate`` block
        (:class:`~modellens.attribution.SurrogateBlock`): ``score_holdout``
        (leave-one-out weighted R^2, each sample predicted
        by the surrogate fit without it, the selected features fixed: a low
        value means the explanation does not describe the model here),
        ``conditions`` (what :math:`z_j = 1` means for each row, e.g.
        ``"0.3 < age <= 0.7"``), ``kernel_width``, ``num_samples``,
        ``discretize``, ``feature_selection``, ``sampling``, and with
        ``stability`` a dict ``{"repeats", "top_k", "same_top_k" (n,),
        "top_k_overlap" (n,), "weight_std" (n, d)}``: whether every repeat chose the same top-k
        features, their mean pairwise overlap (fraction of k), and the
        standard deviation of each weight over the repeats.
        ``diagnostics["n_model_rows"]`` gives the cost.  A model of several
        outputs (``target=None`` on a multiclass classifier, a function
        returning ``(n, k)``) gives ``values`` ``(n, d, k)`` and the
        per-output figures on a last axis (``outputs`` names them,
        ``for_output`` takes one): every output's surrogate is fit on the
        same samples, drawn and answered once, so all outputs cost the
        model rows of one.

    See Also
    --------
    lime_width_sweep : One row's explanation at many kernel widths.
    lime_text : LIME for a text, word by word.
    lime_image : LIME for an image, superpixel by superpixel.
    shapley : Shapley values, additive attributions against background data.

    Notes
    -----
    For each row :math:`x`, ``num_samples`` rows are drawn (row 0 is
    :math:`x` itself) and mapped to an interpretable representation
    :math:`z`: with ``discretize`` each numeric
    feature becomes "lies in the same quantile bin as :math:`x`" (0/1), with
    ``discretize=None`` its standardised value :math:`(x_j - \mu_j)/\sigma_j`;
    categorical, string and boolean features are "has the same level as
    :math:`x`".  Samples are weighted by the exponential kernel

    .. math:: \pi(z) = \sqrt{\exp\!\big(-D(z, z_0)^2 / w^2\big)},

    :math:`D` the Euclidean distance between the representations, default
    width :math:`w = 0.75 \sqrt{d}`, and at most ``num_features`` features
    enter a weighted ridge regression (penalty 1) of the model's output on
    :math:`z`.  These are the defaults of the ``lime`` package's
    ``LimeTabularExplainer`` (Ribeiro et al. 2016).

    With binned and categorical features :math:`z` is 0/1, so
    :math:`D(z, z_0)^2` counts the features that left the instance's bin or
    level.  The weights of two features are comparable only in the units of
    :math:`z`: "being in this bin" for binned features, one standard
    deviation for continuous ones.

    References
    ----------
    .. [1] Ribeiro, M. T., Singh, S. & Guestrin, C. (2016). "Why should I trust
       you?": Explaining the predictions of any classifier. *KDD 2016*.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> rng = np.random.default_rng(0)
    >>> train = rng.normal(size=(500, 3))
    >>> f = lambda A: A @ [2.0, -1.0, 0.0]
    >>> attr = ml.lime(f, train[:4], training_data=train, discretize=None, random_state=0)
    >>> # continuous mode: z is standardised, so a linear model's weight is coef * std
    >>> bool(np.allclose(attr.values, [2.0, -1.0, 0.0] * train.std(axis=0), atol=0.03))
    True
    >>> bool((attr.score > 0.999).all())
    True
    """
    streams = RowStreams.draw(check_random_state(random_state))
    inputs = dict(training_data=training_data, target=target,
                  response_method=response_method, feature_names=feature_names,
                  discretize=discretize)
    settings = dict(num_features=num_features, num_samples=num_samples,
                    kernel_width=kernel_width, discretize=discretize,
                    feature_selection=feature_selection, sampling=sampling,
                    stability=stability, stability_top_k=stability_top_k)
    request = _open(model, X, chunk_size=chunk_size, n_jobs=n_jobs, progress=progress,
                    several=True, **inputs)
    if request.partitions is not None:
        from .distributed import explain_partitions

        if stability is not None:
            raise InvalidParameterError(
                "stability= repeats the explanation of rows in memory; for Dask data explain "
                "a sample with it (X.sample(frac=...).compute()).")
        return explain_partitions(
            request.partitions, partial(_lime_rows, model, inputs, settings), streams=streams,
            options=request.options, feature_names=feature_names)
    return keep_row_labels(_lime(request, streams=streams, stacklevel=4, **settings), request.X)


def _lime_rows(model, inputs, settings, X, streams, options) -> Attributions:
    """One partition's rows (rows ``streams.start`` on of the table), as in memory."""
    request = _open(model, X, options=options, several=True, **inputs)
    return _lime(request, streams=streams, stacklevel=4, **settings)


def _lime(request, *, num_features, num_samples, kernel_width, discretize, feature_selection,
          sampling, stability, stability_top_k, streams, stacklevel) -> Attributions:
    """LIME of a request's rows (in memory); row ``i`` draws from ``streams``."""
    dataset, Xe, sampler, mdl = _prepare(request, discretize=discretize,
                                         stacklevel=stacklevel + 1)
    n, d = Xe.shape
    num_features, num_samples, width = check_budget(
        num_features, num_samples, d, kernel_width, feature_selection,
        default_width=0.75 * np.sqrt(d))
    repeats = 1 if stability is None else check_int(stability, "stability", low=2)
    top_k = min(3, num_features) if stability_top_k is None else \
        check_int(stability_top_k, "stability_top_k", low=1)
    if stability is not None and top_k > num_features:
        raise InvalidParameterError(f"stability_top_k={top_k} is larger than "
                                    f"num_features={num_features}.")
    check_choice(sampling, "sampling", SAMPLINGS)
    fits = run_every_output(
        mdl, _LimePlan(sampler, Xe, streams, repeats, num_samples, width, num_features,
                       feature_selection, sampling=sampling),
        request.options, desc="lime").fits
    conditions = [sampler.conditions(Xe[i], dataset.columns) for i in range(n)]
    parts = [_lime_result(dataset, Xe, name, [[fit[c] for fit in rep] for rep in fits],
                          conditions=conditions, stacklevel=stacklevel + 1,
                          n_model_rows=mdl.n_rows, width=width, num_samples=num_samples,
                          discretize=discretize, feature_selection=feature_selection,
                          sampling=sampling, repeats=repeats, top_k=top_k)
             for c, name in enumerate(output_names(mdl))]
    return parts[0] if len(parts) == 1 else Attributions.stack(parts, mdl.output_labels)


def _lime_result(dataset, Xe, output_name, fits, *, conditions, stacklevel, n_model_rows,
                 width, num_samples, discretize, feature_selection, sampling, repeats, top_k):
    """The Attributions of one output's fits (``fits[r][i]``: repeat ``r``, row ``i``)."""
    main = fits[0]
    warn_if_shrunk(main, stacklevel=stacklevel + 1)
    subject = Subject(codes=Xe.copy(), feature_names=dataset.feature_names,
                      output=output_name, columns=dataset.columns,
                      column_labels=dataset.column_labels if dataset.is_frame else None)
    return surrogate_attributions(
        subject, main, prediction=np.array([f.prediction for f in main]),
        diagnostics={"n_model_rows": n_model_rows},
        interpretable="continuous" if discretize is None else "binned",
        conditions=conditions, kernel_width=width, num_samples=num_samples, discretize=discretize,
        feature_selection=feature_selection, sampling=sampling,
        stability=_stability(fits, top_k) if repeats > 1 else None)


def top_k_sets(values: np.ndarray, k: int) -> np.ndarray:
    """Boolean ``(..., d)``: the ``k`` features of largest ``|value|`` (ties by position)."""
    order = np.argsort(-np.abs(values), axis=-1, kind="stable")[..., :k]
    out = np.zeros(values.shape, dtype=bool)
    np.put_along_axis(out, order, True, axis=-1)
    return out


def _stability(fits, k) -> dict:
    coef = np.array([[f.coef for f in rep] for rep in fits])  # (R, n, d)
    tops = top_k_sets(coef, k)
    R = coef.shape[0]
    same = (tops == tops[:1]).all(axis=(0, 2))
    overlap = np.zeros(coef.shape[1])
    for a in range(R):
        for b in range(a + 1, R):
            overlap += (tops[a] & tops[b]).sum(axis=1) / k
    return {"repeats": R, "top_k": k, "same_top_k": same,
            "top_k_overlap": overlap / (R * (R - 1) / 2),
            "weight_std": coef.std(axis=0, ddof=1)}


@renamed(x="X")
def lime_width_sweep(model: ModelLike, X: DataLike, *, training_data: DataLike,
                     widths: ArrayLike | None = None, num_features: int | None = None,
                     num_samples: int = 5000, discretize: str | None = "quartile",
                     feature_selection: str = "none", random_state: RandomStateLike = None,
                     target: TargetSpec = None, response_method: str = "auto",
                     feature_names: Sequence[str] | None = None,
                     chunk_size: int | None = None, n_jobs: int | None = None,
                     progress: bool | None = None) -> WidthSweep:
    r"""How does one row's LIME explanation change with the kernel width?

    LIME's answer depends on the width of its kernel, which sets how local the
    explanation is, and no width is right for every model.  This draws one
    neighbourhood of the row (``num_samples`` model rows) and fits the
    surrogate at many widths: narrow widths describe the model very close to
    the row (few effective samples, noisy), wide ones average over the
    training distribution.  Plot it (``.plot()``) to see whether the
    explanation you report holds over a range of widths.

    Parameters
    ----------
    model : ModelLike
        As in :func:`modellens.lime`.
    X : ndarray or DataFrame with one row
        The row to explain (``x=``, its old name, works until 0.3 with a
        ``FutureWarning``).
    training_data : ndarray or DataFrame
        As in :func:`modellens.lime`.
    widths : array of float, optional
        Default: 25 widths from ``0.05`` to ``20`` times the default width
        ``0.75 * sqrt(d)`` (log-spaced).
    num_features : int, optional
        As in :func:`modellens.lime`; with the default
        ``feature_selection="none"`` every feature gets a weight.
    num_samples, discretize, feature_selection, random_state, target, response_method, feature_names
        As in :func:`modellens.lime`.
    chunk_size, n_jobs, progress
        Execution options (see :func:`modellens.config`).

    Returns
    -------
    WidthSweep
        ``widths``, the weights at each width (``values``, ``(W, d)``), the
        weighted R^2 on the samples and left out (``score``,
        ``score_holdout``), and ``.plot()``.  A model of several outputs
        gives ``values`` ``(W, d, k)`` and scores ``(W, k)`` from the same
        samples (``outputs``, ``for_output``, ``plot(output=...)``).

    See Also
    --------
    lime : LIME for the rows of a table at one width.
    WidthSweep : The result and its plot.

    Notes
    -----
    The width :math:`w` enters only the samples' weights
    :math:`\pi(z) = \sqrt{\exp(-D(z, z_0)^2 / w^2)}`, so one set of samples
    and one set of model answers serve every width: each width costs one
    weighted least-squares fit, no model rows.

    References
    ----------
    .. [1] Ribeiro, M. T., Singh, S. & Guestrin, C. (2016). "Why should I trust
       you?": Explaining the predictions of any classifier. *KDD 2016*.
    .. [2] Garreau, D. & von Luxburg, U. (2020). Explaining the explainer: a
       first theoretical analysis of LIME. *AISTATS 2020*.

    Examples
    --------
    A linear model: from the default width up, the weights are the
    coefficients times each feature's standard deviation (the continuous
    representation standardises the features); the narrowest widths keep too
    few samples to say anything:

    >>> import numpy as np, modellens as ml
    >>> train = np.random.default_rng(0).normal(size=(500, 3))
    >>> sweep = ml.lime_width_sweep(lambda A: A @ [2.0, -1.0, 0.0], train[:1],
    ...                             training_data=train, discretize=None, random_state=0)
    >>> sweep
    WidthSweep(widths=25, features=3)
    >>> wide = sweep.widths >= sweep.default_width
    >>> bool(np.allclose(sweep.values[wide], [2.0, -1.0, 0.0] * train.std(axis=0), atol=0.1))
    True
    >>> ax = sweep.plot()
    """
    request = _open(model, X, training_data, target=target, response_method=response_method,
                    feature_names=feature_names, discretize=discretize, dask="in_memory",
                    several=True, chunk_size=chunk_size, n_jobs=n_jobs, progress=progress)
    dataset, Xe, sampler, mdl = _prepare(request, discretize=discretize)
    if Xe.shape[0] != 1:
        raise InvalidParameterError(f"lime_width_sweep explains one row; X has {Xe.shape[0]}.")
    d = Xe.shape[1]
    k, num_samples, default = check_budget(num_features, num_samples, d, None,
                                           feature_selection, default_width=0.75 * np.sqrt(d))
    widths = default * np.geomspace(0.05, 20, 25) if widths is None else \
        np.asarray([check_positive_float(w, "widths") for w in np.atleast_1d(widths)])
    streams = RowStreams.draw(check_random_state(random_state))
    plan = run_every_output(
        mdl, _LimePlan(sampler, Xe, streams, 1, num_samples, default, k, feature_selection,
                       keep=True),
        request.options, desc="lime width sweep")
    Z, Y, distances = plan.kept[(0, 0)]
    # (W, outputs) fits: every width a problem of one batch on the same samples
    W = len(widths)
    fits = fit_many(np.broadcast_to(Z, (W,) + Z.shape), np.broadcast_to(Y, (W,) + Y.shape),
                    np.stack([exponential_kernel(distances, w) for w in widths]),
                    np.broadcast_to(Z[0], (W, Z.shape[1])), k, feature_selection)
    several = mdl.n_outputs > 1

    def field(name):
        got = np.array([[getattr(f, name) for f in at_width] for at_width in fits])
        return np.moveaxis(got, 1, -1) if several else got[:, 0]

    return WidthSweep(widths, field("coef"), field("score"), field("score_holdout"),
                      dataset.feature_names, default,
                      outputs=output_names(mdl) if several else None,
                      output_labels=list(mdl.output_labels) if several else None,
                      output=None if several else mdl.output_name)
