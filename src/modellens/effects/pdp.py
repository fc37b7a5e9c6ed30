"""Partial dependence and individual conditional expectation (ICE)."""

from __future__ import annotations

import numbers

import numpy as np

from ..data import is_integer, resolve_features
from ..engine import GridRows, evaluate, prepare
from ._grid import feature_grid, grid_spec, pair_specs
from .result import Effect, Effects

__all__ = ["pdp"]


def pdp(model, X, features=None, *, grid=20, ice=False, center=False, sample=None,
        random_state=None, target=None, response_method="auto", feature_names=None,
        chunk_size=None, n_jobs=1, progress=None) -> Effects:
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
    X : ndarray or DataFrame of shape (n, d)
        Data whose other-feature values are averaged over.
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
    chunk_size : int, optional
        Model rows per call (default: tuned on the model's speed, from 16,384 rows
        up to a 64 MiB memory cap; the numbers do not depend on it).
    n_jobs : int, default=1
        Chunks evaluated in parallel threads.
    progress : bool, optional
        tqdm progress bar (shown for long runs when None).

    Returns
    -------
    Effects
        One :class:`Effect` with ``method="pdp"`` per requested feature.
    """
    dataset, mdl = prepare(model, X, target=target, response_method=response_method,
                           feature_names=feature_names)
    feats = resolve_features(dataset, features)
    rows = _sample_rows(dataset.n_rows, sample, random_state)
    base = dataset.values if rows is None else dataset.values[rows]

    plans = []
    for feat in feats:
        cols = feat if isinstance(feat, tuple) else (feat,)
        specs = pair_specs(dataset, grid, feat) if isinstance(feat, tuple) else \
            (grid_spec(grid, dataset, feat),)
        axes = [feature_grid(dataset, j, s) for j, s in zip(cols, specs)]
        if len(axes) == 1:
            settings = axes[0][0][:, None]
        else:
            a, b = np.meshgrid(axes[0][0], axes[1][0], indexing="ij")
            settings = np.column_stack([a.ravel(), b.ravel()])
        plans.append((feat, cols, axes, GridRows(base, cols, settings, average=not ice)))

    evaluate(mdl, [p[3] for p in plans], chunk_size=chunk_size, n_jobs=n_jobs,
             progress=progress, desc="pdp")

    effects = []
    for feat, cols, axes, seg in plans:
        shape = tuple(len(ax[0]) for ax in axes)
        curves = None
        if ice:
            # segment rows run setting-major: reshape to (settings, rows) then transpose
            curves = seg.result.reshape(len(seg.result) // seg.m, seg.m).T
            values = curves.mean(axis=0)
            curves = curves.reshape((seg.m,) + shape)
        else:
            values = seg.result
        values = values.reshape(shape)
        if center:
            origin = (0,) * len(shape)
            values = values - values[origin]
            if curves is not None:
                curves = curves - curves[(slice(None),) + origin][(slice(None),) + (None,) * len(shape)]
        names = tuple(dataset.columns[j].name for j in cols)
        kinds = tuple(dataset.columns[j].kind for j in cols)
        observed = tuple(dataset.labels(j, dataset.column_values(j)) for j in cols)
        effects.append(Effect(
            feature=names if len(cols) == 2 else names[0],
            method="pdp",
            grid=tuple(ax[1] for ax in axes) if len(cols) == 2 else axes[0][1],
            values=values,
            ice=curves,
            kind=kinds if len(cols) == 2 else kinds[0],
            feature_values=observed if len(cols) == 2 else observed[0],
            centered=bool(center),
            output=mdl.output_name,
            ice_rows=rows,
        ))
    return Effects(effects)


def _sample_rows(n, sample, random_state):
    """Sorted row positions of a subsample, or None for all rows."""
    if sample is None:
        return None
    if is_integer(sample):
        size = int(sample)
        if size < 1:
            raise ValueError(f"sample must be a positive count or a fraction in (0, 1], got {sample}.")
    elif isinstance(sample, numbers.Real) and 0 < sample <= 1:
        size = max(1, int(round(sample * n)))
    else:
        raise ValueError(f"sample must be a positive count or a fraction in (0, 1], got {sample!r}.")
    if size >= n:
        return None
    rng = np.random.default_rng(random_state)
    return np.sort(rng.choice(n, size=size, replace=False))
