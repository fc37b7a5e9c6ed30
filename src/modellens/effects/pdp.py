"""Partial dependence and individual conditional expectation (ICE)."""

from __future__ import annotations

import numpy as np

from .._config import resolve_options
from .._validation import InvalidParameterError, check_choice
from ..data import Dataset, resolve_features, sample_rows
from ..engine import GridRows, Plan, run
from ..models import prepare
from ._dask_input import dask_pdp, is_dask_input
from ._grid import DEFAULT_POINTS, feature_grid, grid_spec, pair_specs
from .result import Effect, Effects

__all__ = ["pdp"]


def pdp(model, X, features=None, *, grid=DEFAULT_POINTS, ice: bool = False, center: bool = False,
        sample=None, random_state=None, target=None, response_method: str = "auto",
        feature_names=None, chunk_size: int | None = None, n_jobs: int | None = None,
        progress: bool | None = None, method: str = "brute") -> Effects:
    r"""Partial dependence (Friedman 2001) with ICE and centered ICE curves.

    For a feature set :math:`S` and the other features :math:`C`, the partial
    dependence at a grid point :math:`x_S` is estimated by

    .. math:: \hat f_S(x_S) = \frac{1}{n} \sum_{i=1}^n f(x_S, x_C^{(i)}),

    the average of the ICE curves :math:`\hat f^{(i)}(x_S) = f(x_S, x_C^{(i)})`.
    Centered ICE subtracts each curve's value at the first grid point.

    Parameters
    ----------
    model : estimator or callable
        ``predict_proba`` / ``predict`` / ``decision_function`` object,
        scikit-learn Pipeline, or a callable ``f(X) -> (n,)``.
    X : ndarray or DataFrame of shape (n, d), or Dask DataFrame / array
        Data whose other-feature values are averaged over.  Dask data stay
        where they are (out of core): each partition is averaged on its
        worker; numeric single features only, an int grid spans the exact
        minimum to maximum evenly (even for few distinct values), no ICE.
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
    target : class label or index, optional
        Class whose probability is explained (see :class:`modellens.model.Model`).
    response_method : {"auto", "predict_proba", "decision_function", "predict"}
    feature_names : list of str, optional
        Names for the columns of an array ``X``.
    chunk_size, n_jobs, progress : optional
        Execution options; None takes the value of :func:`modellens.config`
        (by default chunks tuned on the model's speed from 16,384 rows up to a
        64 MiB cap, one thread, a progress bar for long runs).  The numbers do
        not depend on them.
    method : {"brute", "tree"}, default="brute"
        ``"brute"`` evaluates the model on the grid rows.  ``"tree"`` reads a
        tree ensemble (the models of :func:`modellens.shapley`'s
        ``algorithm="tree"``) without evaluating rows: the weighted traversal
        of Friedman (2001), as scikit-learn's ``method="recursion"``.  A split
        on a grid feature follows the grid value; any other split sends the
        weight down both sides in proportion to the training data that went
        each way (the covers), so the curve averages over the *training*
        distribution recorded in the trees, conditioned along each path, not
        over ``X`` (``X`` only sets the grid).  It is on the model's raw
        scale (log-odds for boosted classifiers, the class probability for
        forests) and includes the model's baseline (boosting's initial
        prediction).  No ICE curves; ``sample`` does not apply.

    Returns
    -------
    Effects
        One :class:`Effect` with ``method="pdp"`` per requested feature.

    References
    ----------
    .. [1] Friedman, J. H. (2001). Greedy function approximation: a gradient
       boosting machine. *Annals of Statistics* 29(5), 1189-1232.
    .. [2] Goldstein, A., Kapelner, A., Bleich, J. & Pitkin, E. (2015). Peeking
       inside the black box: visualizing statistical learning with plots of
       individual conditional expectation. *JCGS* 24(1), 44-65.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).uniform(-1, 1, size=(500, 2))
    >>> effects = ml.pdp(lambda A: 3 * A[:, 0] + A[:, 1] ** 2, X, grid=5, ice=True)
    >>> effects["x0"].grid
    array([-0.99..., -0.49..., 0.00..., 0.50..., 0.99...])
    >>> bool(np.allclose(np.diff(effects["x0"].values), 3 * np.diff(effects["x0"].grid)))
    True
    >>> effects["x0"].ice.shape
    (500, 5)
    """
    options = resolve_options(chunk_size, n_jobs, progress)
    check_choice(method, "method", ("brute", "tree"))
    if method == "tree":
        return _tree_pdp(model, X, features, grid=grid, ice=ice, center=center, sample=sample,
                         target=target, response_method=response_method,
                         feature_names=feature_names)
    if is_dask_input(X):
        if ice or sample is not None:
            raise InvalidParameterError(
                "ice= and sample= need the data in memory (ICE curves are one per row); "
                "for Dask data pass a pandas sample of it, e.g. X.sample(frac=...).compute().")
        return dask_pdp(model, X, features, grid=grid, center=center, target=target,
                        response_method=response_method, feature_names=feature_names,
                        options=options)
    dataset, mdl = prepare(model, X, target=target, response_method=response_method,
                           feature_names=feature_names)
    feats = resolve_features(dataset, features)
    rows = sample_rows(dataset.n_rows, sample, random_state)
    base = dataset.values if rows is None else dataset.values[rows]
    plans = [_PDPlan(dataset, feat, grid, base, rows, ice=ice, center=center,
                     output=mdl.output_name) for feat in feats]
    return Effects(run(mdl, plans, options, desc="pdp"))


class _PDPlan(Plan):
    """The grid rows of one (1-D or 2-D) partial dependence and their reduction."""

    def __init__(self, dataset: Dataset, feat, grid, base, rows, *, ice, center, output):
        self.dataset, self.rows, self.ice, self.center, self.output = (dataset, rows, ice,
                                                                       center, output)
        self.cols = feat if isinstance(feat, tuple) else (feat,)
        specs = pair_specs(dataset, grid, feat) if isinstance(feat, tuple) else \
            (grid_spec(grid, dataset, feat),)
        self.axes = [feature_grid(dataset, j, s) for j, s in zip(self.cols, specs)]
        if len(self.axes) == 1:
            settings = self.axes[0][0][:, None]
        else:
            a, b = np.meshgrid(self.axes[0][0], self.axes[1][0], indexing="ij")
            settings = np.column_stack([a.ravel(), b.ravel()])
        self.settings = settings
        self.segment = GridRows(base, self.cols, settings, average=not ice)
        self.segments = [self.segment]

    def reduce(self) -> Effect:
        seg, dataset, cols = self.segment, self.dataset, self.cols
        shape = tuple(len(ax[0]) for ax in self.axes)
        curves = None
        if self.ice:
            # segment rows run setting-major: reshape to (settings, rows) then transpose
            curves = seg.result.reshape(len(seg.result) // seg.m, seg.m).T
            values = curves.mean(axis=0)
            curves = curves.reshape((seg.m,) + shape)
        else:
            values = seg.result
        values = values.reshape(shape)
        if self.center:
            origin = (0,) * len(shape)
            values = values - values[origin]
            if curves is not None:
                curves = curves - curves[(slice(None),) + origin][(slice(None),)
                                                                  + (None,) * len(shape)]
        names = tuple(dataset.columns[j].name for j in cols)
        kinds = tuple(dataset.columns[j].kind for j in cols)
        observed = tuple(dataset.observed_labels(j) for j in cols)
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
        )


class _TreePDPlan(_PDPlan):
    """The weighted-traversal partial dependence of a tree ensemble: no model rows."""

    def __init__(self, ens, dataset, feat, grid, *, center, output):
        super().__init__(dataset, feat, grid, dataset.values[:1], None, ice=False,
                         center=center, output=output)
        self.ens = ens
        self.segments = []

    def reduce(self) -> Effect:
        from ..models import _tree_kernels as K
        ens = self.ens
        position = np.full(ens.n_features, -1, np.int64)
        position[list(self.cols)] = np.arange(len(self.cols))
        # the trees' categorical splits read the model's own category codes
        full = np.zeros((len(self.settings), ens.n_features))
        full[:, list(self.cols)] = self.settings
        coded = ens.encode(full, self.dataset.columns)[:, list(self.cols)]
        settings = np.ascontiguousarray(ens.cast(coded))
        values = ens.base[0] + K.pd_recursion(
            settings, position, ens.left, ens.right, ens.feature, ens.threshold,
            ens.default_left, ens.missing, ens.cat_left, np.ascontiguousarray(ens.value[:, 0]),
            ens.cover,
            ens.roots)
        self.segment.result = values
        return super().reduce()


def _tree_pdp(model, X, features, *, grid, ice, center, sample, target, response_method,
              feature_names):
    """:func:`pdp` with ``method="tree"``."""
    from ..models._trees import output_column, tree_ensemble, unfit_data
    if ice or sample is not None:
        raise InvalidParameterError(
            "method='tree' gives the partial dependence from the trees' covers: it has no ICE "
            "curves and uses no sample of X; use method='brute' for ice= or sample=.")
    if response_method != "auto":
        raise InvalidParameterError(
            "method='tree' reads the trees' raw output (response_method='auto'); use "
            "method='brute' for another response.")
    ens = tree_ensemble(model)
    dataset = Dataset.from_data(X, feature_names=feature_names)
    why = unfit_data(ens, model, dataset, X, categorical=True)
    if why is not None:
        raise InvalidParameterError(f"method='tree' cannot use this data: {why}.")
    col, negate, output = output_column(ens, model, target)
    one = ens.select(col, negate=negate)
    feats = resolve_features(dataset, features)
    plans = [_TreePDPlan(one, dataset, feat, grid, center=center, output=output)
             for feat in feats]
    # the plans need no model rows: run() only reduces them
    return Effects(run(None, plans, desc="pdp (tree)"))
