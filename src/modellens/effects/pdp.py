"""Partial dependence and individual conditional expectation (ICE)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._validation import InvalidParameterError, check_choice, check_sample_weight
from ..data import Dataset, sample_rows
from ..engine import GridRows, Plan, open_request, run
from ..typing import (ArrayLike, DataLike, FeatureSpec, GridSpec, ModelLike, RandomStateLike,
                      TargetSpec)
from ._design import pd_axes
from ._facts import MemoryFacts, facts_of
from ._grid import DEFAULT_POINTS, check_spec_keys, unseen_text_levels
from ._tree_ice import count_model_rows, tree_ice
from .result import Effect, Effects, keep_ice_labels

__all__ = ["pdp"]


def pdp(model: ModelLike, X: DataLike, features: FeatureSpec = None, *,
        grid: GridSpec = DEFAULT_POINTS, ice: bool = False, center: bool = False,
        sample: int | float | None = None, random_state: RandomStateLike = None,
        sample_weight: ArrayLike | None = None, target: TargetSpec = None,
        response_method: str = "auto", feature_names: Sequence[str] | None = None,
        chunk_size: int | None = None, n_jobs: int | None = None,
        progress: bool | None = None, method: str = "auto") -> Effects:
    r"""How does the model's average prediction change when one feature is set to each value?

    Partial dependence (PD) sets a feature to every point of a grid in every
    row of ``X`` and averages the predictions, so the curve shows the
    feature's effect with the other features as they are in the data.  The
    individual curves (ICE, one per row, ``ice=True``) show whether the rows
    agree; centered ICE (``center=True``) starts every curve at 0 so that
    differences in shape stand out.  A pair of features gives a 2-D surface.
    When features are correlated the grid rows leave the data (PD then
    extrapolates): prefer :func:`modellens.ale`.

    Parameters
    ----------
    model : estimator or callable
        ``predict_proba`` / ``predict`` / ``decision_function`` object,
        scikit-learn Pipeline, or a callable ``f(X) -> (n,)``.
    X : ndarray or DataFrame of shape (n, d), or Dask DataFrame / array
        Data whose other-feature values are averaged over.  Dask data stay
        where they are (out of core): each partition is averaged on its
        worker, and the sums are merged in partition order; an int grid
        spans the exact minimum to maximum evenly (even for few distinct
        values), categorical and text features take every observed level;
        ICE curves need ``sample=`` (the same rows as in memory for the same
        ``random_state``).
    features : name, index, or list of them, optional
        Features to explain (all when None); a pair ``(a, b)`` in the list
        gives a 2-D partial dependence.
    grid : int, array-like or dict, default=20
        Points per feature: an int gives evenly spaced points over the
        observed range (the distinct values when there are at most that many;
        every observed level for categorical features); an array gives the
        points (labels for categorical features); a dict maps features (or
        pairs) to either.  A pair takes one specification for both axes, a
        tuple of two (one per axis), or each feature's own dict entry.
    ice : bool, default=False
        Keep the ICE curves (``Effect.ice``, shape ``(n, G)``).
    center : bool, default=False
        Centered ICE: every curve, and the PD, minus its value at the first
        grid point.
    sample : int or float, optional
        Compute the curves for a random subsample of the rows only (a count,
        or a fraction in (0, 1]); the PD is then the mean of the sampled
        curves, and the model evaluates ``sample * G`` rows per feature
        instead of ``n * G``.
    random_state : int or Generator, optional
        Seed of the subsample.
    sample_weight : array-like of shape (n,), optional
        Weights of the rows of ``X`` in the average (the ICE curves are not
        weighted): equal to :func:`sklearn.inspection.partial_dependence`
        with ``sample_weight`` (which then uses ``method="brute"``).  With
        ``sample=``, the sampled rows keep their weights.  In memory only.
    target : class label or index, optional
        Which output to explain: a classifier's class (its probability, or
        its column of ``decision_function``), by label or position.  Default:
        the positive class of a binary classifier; required for more classes.
    response_method : {"auto", "predict_proba", "decision_function", "predict"}
        The model's method to call; ``"auto"`` takes ``predict_proba``, then
        ``decision_function``, then ``predict``.
    feature_names : list of str, optional
        Names for the columns of an array ``X``.
    chunk_size, n_jobs, progress : optional
        Execution options; None takes the value of :func:`modellens.config`
        (by default chunks tuned on the model's speed from 16,384 rows up to a
        32 MiB cap, one thread, a progress bar for long runs).  ``n_jobs`` has
        scikit-learn's meaning (None: 1, -1: every core; see
        :func:`modellens.config`), for the chunks and the tree kernels alike.
        The numbers do not depend on them.
    method : {"auto", "brute", "tree"}, default="auto"
        ``"brute"`` evaluates the model on the grid rows.  ``"auto"`` gives
        the same curves, from a tree ensemble's trees when they can give them
        exactly (no grid rows: each row's path through each tree, with the
        feature free at its splits, gives the raw output at every grid value,
        and the model's link, the logistic function or the softmax over every
        class, turns it into the model's response), and from the grid rows
        otherwise; ``Effect.extra["evaluated"]`` says which,
        ``extra["trees_refused"]`` why the trees did not serve a tree model, and
        ``extra["n_model_rows"]`` the rows the model answered where the trees
        were tried (their agreement check's 16 included).
        The trees serve the 1-D curves of scikit-learn, XGBoost and LightGBM
        models in memory (categorical splits and missing values included)
        whose response is the raw output, a class probability or a margin,
        once the model's own answers on a few data rows agree with theirs,
        and when the grid rows are many (200,000 and more: fewer cost the
        model a fraction of a second, less than the trees' kernel takes to
        compile on its first use).
        ``"tree"`` reads a
        tree ensemble (the models of :func:`modellens.shapley`'s
        ``algorithm="tree"``) without evaluating grid rows (the model answers
        only the agreement check's, its raw margin on the first 1,000 rows of
        ``X``: ``extra["n_model_rows"]``): the weighted traversal
        of Friedman (2001), as scikit-learn's ``method="recursion"``.  A split
        on a grid feature follows the grid value; any other split sends the
        weight down both sides in proportion to the training data that went
        each way (the covers), so the curve averages over the *training*
        distribution recorded in the trees, conditioned along each path, not
        over ``X`` (``X`` only sets the grid).  It is on the model's raw
        scale (log-odds for boosted classifiers, the class probability for
        forests) and includes the model's baseline (boosting's initial
        prediction).  No ICE curves; ``sample`` does not apply.  ``target``
        picks the outputs as for ``"brute"``; every output (each class of a
        multiclass model by default) comes from one traversal of the trees.

    Returns
    -------
    Effects
        One :class:`Effect` with ``method="pdp"`` per requested feature.

    See Also
    --------
    ale : Accumulated local effects, which stay inside the data.
    mplot : The mean prediction near each value (conditional, not partial).
    interactions : Friedman's H statistics, built from these partial dependences.

    Notes
    -----
    For a feature set :math:`S` and the other features :math:`C`, the partial
    dependence at a grid point :math:`x_S` is estimated by

    .. math:: \hat f_S(x_S) = \frac{1}{n} \sum_{i=1}^n f(x_S, x_C^{(i)}),

    the average of the ICE curves :math:`\hat f^{(i)}(x_S) = f(x_S, x_C^{(i)})`
    [1]_ [2]_.  Centered ICE subtracts each curve's value at the first grid
    point: :math:`\hat f^{(i)}(x_S) - \hat f^{(i)}(x_S^{(1)})`.  The model
    evaluates :math:`n G` rows per feature (:math:`G` grid points).

    References
    ----------
    .. [1] Friedman, J. H. (2001). Greedy function approximation: a gradient
       boosting machine. *Annals of Statistics* 29(5), 1189-1232.
    .. [2] Goldstein, A., Kapelner, A., Bleich, J. & Pitkin, E. (2015). Peeking
       inside the black box: visualizing statistical learning with plots of
       individual conditional expectation. *JCGS* 24(1), 44-65.

    Examples
    --------
    A model that adds ``3 * x0`` to a curve in ``x1``: the PD of ``x0`` rises
    by 3 per unit, and every ICE curve is parallel to it.

    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).uniform(-1, 1, size=(500, 2))
    >>> def model(A):
    ...     return 3 * A[:, 0] + A[:, 1] ** 2
    >>> effects = ml.pdp(model, X, grid=5, ice=True)
    >>> pd0 = effects["x0"]
    >>> print(np.round(np.diff(pd0.values) / np.diff(pd0.grid), 6))
    [3. 3. 3. 3.]
    >>> pd0.ice.shape
    (500, 5)

    Centered ICE of one feature and the 2-D partial dependence of a pair, for
    a scikit-learn model of the diabetes data:

    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.linear_model import LinearRegression
    >>> D, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> reg = LinearRegression().fit(D, y)
    >>> effects = ml.pdp(reg, D, ["bmi", ("bmi", "bp")], grid=10, ice=True, center=True)
    >>> print(float(abs(effects["bmi"].ice[:, 0]).max()))  # every curve starts at 0
    0.0
    >>> effects[("bmi", "bp")].values.shape
    (10, 10)
    >>> ax = effects["bmi"].plot()
    """
    check_choice(method, "method", ("auto", "brute", "tree"))
    if method == "tree" and sample_weight is not None:
        raise InvalidParameterError(
            "sample_weight= weights the rows of X in method='brute'; method='tree' averages "
            "over the training rows' covers and reads no rows of X: use method='brute'.")
    if method == "tree":
        return _tree_pdp(model, X, features, grid=grid, ice=ice, center=center, sample=sample,
                         target=target, response_method=response_method,
                         feature_names=feature_names, chunk_size=chunk_size, n_jobs=n_jobs,
                         progress=progress)
    request = open_request(model, X, features, target=target, response_method=response_method,
                           feature_names=feature_names, chunk_size=chunk_size, n_jobs=n_jobs,
                           progress=progress, several=True)
    dataset, table = request.dataset, request.table
    check_spec_keys(grid, dataset, request.features, "grid")
    unseen = unseen_text_levels(dataset, request.features, grid) if table is None else {}
    if unseen:  # grid values of text columns these rows lack: levels the model can take
        dataset = request.adopt(dataset.with_text_levels(unseen))
    if table is not None and ice and sample is None:
        raise InvalidParameterError(
            "ice=True on Dask data keeps a curve per row, which the client would hold for "
            "every row; pass sample= (a count or a fraction of the rows) for the ICE curves "
            "of a random sample, or a pandas sample of the data.")
    if table is not None and sample_weight is not None:
        raise InvalidParameterError(
            "sample_weight= weights rows in memory; for Dask data pass a pandas sample of "
            "it with its weights.")
    n_rows = dataset.n_rows if table is None else int(table.offsets()[-1])
    weights = check_sample_weight(sample_weight, n_rows)
    rows = sample_rows(n_rows, sample, random_state)
    if weights is not None and rows is not None:
        weights = weights[rows]
    if table is None:  # the missing values, said once (each output's plan reads the grid)
        dataset.warn_missing(sorted({j for f in request.features
                                     for j in (f if isinstance(f, tuple) else (f,))}), "grid")
    axes = pd_axes(facts_of(request), dataset, request.features, grid)
    offsets = None if table is None or rows is None else table.offsets()
    feats, in_memory = request.features, table is None
    trees = None
    if method == "auto" and in_memory:
        trees = tree_ice(request, feats, axes,
                         dataset.values if rows is None else dataset.values[rows])
    # read here, not in plans_for: a closure over the request would ship its Dask client
    outputs = request.model.outputs if request.model.n_outputs > 1 else None

    def plans_for(values, part, model):
        base, own = values, rows
        if rows is not None:
            if offsets is None:  # in memory
                base = values[rows]
            elif part is not None:  # the sample's rows in this partition
                lo, hi = np.searchsorted(rows, offsets[part:part + 2])
                base = values[rows[lo:hi] - offsets[part]]
        plans = [_PDPlan(dataset, feat, ax, base, own, ice=ice, center=center,
                         output=model.output_name, observed=in_memory, weights=weights)
                 for feat, ax in zip(feats, axes)]
        if trees is None:
            return plans
        if isinstance(trees, str):  # the trees were asked and refused: why, in the result
            for plan in plans:
                plan.extra = {"evaluated": "model rows", "trees_refused": trees}
            return plans
        # the model rows of the 1-D curves: given by the trees (pairs stay on model rows)
        c = 0 if outputs is None else outputs.index(model.output_name)
        return [plan if isinstance(feat, tuple) else _TreeICEPlan(plan, trees, feat, c)
                for feat, plan in zip(feats, plans)]

    effects = Effects.stack(request.run_outputs(plans_for, desc="pdp"), request.output_labels)
    if trees is not None:  # the trees were asked: the rows of their check are the model's too
        count_model_rows(effects, request)
    if table is None:
        return keep_ice_labels(effects, request.X)
    if ice and rows is not None:  # the sampled rows' labels in the table's index
        labels = table.row_labels(rows)
        for effect in effects.values():
            effect.ice_labels = labels
    return effects


class _PDPlan(Plan):
    """The grid rows of one (1-D or 2-D) partial dependence and their reduction.

    Out of core, a partition's summary is the sum of its curves at every grid
    setting, its number of rows, and its ICE curves (of the sampled rows);
    summaries merge by adding the sums and stacking the curves in order.
    """

    def __init__(self, dataset: Dataset, feat, axes, base, rows, *, ice, center, output,
                 observed=True, weights=None):
        self.dataset, self.rows, self.ice, self.center, self.output = (dataset, rows, ice,
                                                                       center, output)
        self.observed = observed  # out of core the client has no feature values to show
        self.cols = feat if isinstance(feat, tuple) else (feat,)
        self.axes = axes
        if len(self.axes) == 1:
            settings = self.axes[0][0][:, None]
        else:
            a, b = np.meshgrid(self.axes[0][0], self.axes[1][0], indexing="ij")
            settings = np.column_stack([a.ravel(), b.ravel()])
        self.settings = settings
        self.m = base.shape[0]
        self.weights = weights  # of the rows (in memory only): the curve is their weighted mean
        #: how the curves were evaluated, when the trees were asked (``Effect.extra``)
        self.extra: dict = {}
        self.segment = GridRows(base, self.cols, settings,
                                average=not ice and weights is None)
        self.segments = [self.segment] if self.m else []

    def _curves(self):
        seg = self.segment
        # segment rows run setting-major: reshape to (settings, rows) then transpose
        return seg.result.reshape(len(seg.result) // seg.m, seg.m).T

    def reduce(self) -> Effect:
        if self.weights is not None:
            curves = self._curves()
            # scikit-learn's weighted partial dependence (its method='brute')
            return self._effect(np.average(curves, axis=0, weights=self.weights),
                                curves if self.ice else None)
        if self.ice:
            curves = self._curves()
            return self._effect(curves.mean(axis=0), curves)
        return self._effect(self.segment.result, None)

    def summarise(self):
        k = self.settings.shape[0]
        if not self.m:
            return np.zeros(k), 0, (np.empty((0, k)) if self.ice else None)
        if self.ice:
            curves = self._curves()
            return curves.sum(axis=0), self.m, curves
        # means weighted by the partition's rows: the merge adds sums
        return self.segment.result * self.m, self.m, None

    def merge(self, summaries):
        total = np.zeros(self.settings.shape[0])
        for sums, _, _ in summaries:
            total += sums
        curves = np.concatenate([c for _, _, c in summaries]) if self.ice else None
        return total, sum(m for _, m, _ in summaries), curves

    def finish(self, summary):
        total, m, curves = summary
        if curves is not None:
            return self._effect(curves.mean(axis=0), curves)
        return self._effect(total / m, None)

    def _effect(self, values, curves) -> Effect:
        dataset, cols = self.dataset, self.cols
        shape = tuple(len(ax[0]) for ax in self.axes)
        if curves is not None:
            curves = curves.reshape((curves.shape[0],) + shape)
        values = values.reshape(shape)
        if self.center:
            origin = (0,) * len(shape)
            values = values - values[origin]
            if curves is not None:
                curves = curves - curves[(slice(None),) + origin][(slice(None),)
                                                                  + (None,) * len(shape)]
        names = tuple(dataset.columns[j].name for j in cols)
        kinds = tuple(dataset.columns[j].kind for j in cols)
        observed = tuple(dataset.observed_labels(j) if self.observed else None for j in cols)
        pair = len(cols) == 2
        return Effect(
            feature=names if pair else names[0],
            method="pdp",
            grid=tuple(ax[1] for ax in self.axes) if pair else self.axes[0][1],
            values=values,
            ice=curves,
            kind=kinds if pair else kinds[0],
            feature_values=observed if pair else observed[0],
            centered=bool(self.center),
            output=self.output,
            ice_rows=self.rows,
            extra=dict(self.extra),
        )


class _TreeICEPlan(Plan):
    """A 1-D :class:`_PDPlan` whose curves the trees give exactly: no model rows (but the
    agreement check's, the request's).

    The curves ``(m, G)`` of ``trees`` (:class:`~._tree_ice.TreeICE`) take
    the place of the folded answers of the plan's grid rows, laid out as the
    segment lays them (the mean per grid value, or every row setting-major),
    so that centering, weights and the effect are the plan's own.
    """

    def __init__(self, plan, trees, feat, output):
        self.plan, self.trees, self.feat, self.output = plan, trees, feat, output

    def reduce(self) -> Effect:
        from ._tree_ice import EVALUATED_BY_TREES

        plan = self.plan
        curves = self.trees.curves(self.feat, self.output)
        plan.segment.result = curves.T.reshape(-1) if plan.ice or plan.weights is not None \
            else curves.mean(axis=0)
        plan.extra = {"evaluated": EVALUATED_BY_TREES}
        return plan.reduce()


class _TreePDPlan(Plan):
    """The weighted-traversal partial dependence of a tree ensemble: no model rows beyond
    the agreement check's (``model_rows``, the request's).

    Every output of ``ens`` (its value columns) comes from one traversal;
    :meth:`reduce` gives one :class:`Effect` per output, named ``outputs``,
    shaped by a grid plan of the same feature (``curve``) whose rows are
    never evaluated.
    """

    def __init__(self, ens, dataset, feat, grid, *, center, outputs, model_rows=0):
        dataset.warn_missing(feat if isinstance(feat, tuple) else (feat,), "grid")
        axes = pd_axes(MemoryFacts(dataset), dataset, [feat], grid)[0]
        self.curve = _PDPlan(dataset, feat, axes, dataset.values[:1], None, ice=False,
                             center=center, output=outputs[0])
        # the request's model rows: the check of the trees' answers (every effect of it)
        self.curve.extra = {"n_model_rows": int(model_rows)}
        self.ens, self.outputs, self.dataset = ens, outputs, dataset
        self.segments = []

    def reduce(self) -> list:
        from ..trees import kernels as K
        ens, curve = self.ens, self.curve
        position = np.full(ens.n_features, -1, np.int64)
        position[list(curve.cols)] = np.arange(len(curve.cols))
        # the trees' categorical splits read the model's own category codes
        full = np.zeros((len(curve.settings), ens.n_features))
        full[:, list(curve.cols)] = curve.settings
        coded = ens.encode(full, self.dataset.columns)[:, list(curve.cols)]
        settings = np.ascontiguousarray(ens.cast(coded))
        value, tree_out = ens.traversal()
        values = ens.base + K.pd_recursion(settings, position, ens.nodes, value, tree_out,
                                           ens.n_outputs, ens.cover, ens.roots)
        effects = []
        for c, output in enumerate(self.outputs):
            curve.segment.result, curve.output = np.ascontiguousarray(values[:, c]), output
            effects.append(curve.reduce())
        return effects


def pd_grid(dataset: Dataset, j: int, grid=DEFAULT_POINTS) -> np.ndarray:
    """The encoded values :func:`pdp` evaluates column ``j`` of ``dataset`` at.

    PD's own design step (the rule of ``grid=``: every observed level of a
    categorical feature, a numeric feature's distinct values when there are no
    more than ``grid``, else ``grid`` evenly spaced points from its minimum to
    its maximum; explicit points as they are), for a reader that needs the grid
    without the curve (the report's share of PD points off the data).  Level
    codes for categorical features.
    """
    ((axis,),) = pd_axes(MemoryFacts(dataset), dataset, [j], grid)  # one feature, one axis
    values, _labels = axis
    return np.asarray(values, dtype=float)


def _tree_pdp(model, X, features, *, grid, ice, center, sample, target, response_method,
              feature_names, **options):
    """:func:`pdp` with ``method="tree"``: every output asked for from one traversal."""
    from ..trees import route, tree_outputs

    # the trees answer: no model rows but their check's (counted on the request as they are
    # spent, through a seam of the check's own), so the model is not wrapped
    request = open_request(model, X, features, feature_names=feature_names, dask="in_memory",
                           wrap_model=False, **options)
    dataset, X = request.dataset, request.X
    check_spec_keys(grid, dataset, request.features, "grid")
    # the trees answer as the model does on the first data rows (their raw margin, through
    # a model seam the route builds for the check: the request wraps no model)
    answer = route(model, dataset, X, method="pdp", response_method=response_method, ice=ice,
                   sample=sample, rows=dataset.values, strict=True, request=request)
    ens = answer.ensemble
    assert ens is not None  # (strict: a refusal raised)
    outputs, labels = tree_outputs(ens, model, target)
    chosen = ens.select_outputs([(c, negate) for c, negate, _ in outputs])
    names = [name for _, _, name in outputs]
    plans = [_TreePDPlan(chosen, dataset, feat, grid, center=center, outputs=names,
                         model_rows=request.n_model_rows) for feat in request.features]
    # the plans need no model rows: run() only reduces them (on n_jobs' threads)
    per_feature = run(None, plans, request.options, desc="pdp (tree)")
    return Effects.stack([[effects[c] for effects in per_feature] for c in range(len(outputs))],
                         labels)
