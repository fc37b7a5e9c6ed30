r"""Conditional samplers: draws of the absent features given the present ones.

Each sampler is fitted once on the background (the training data) and
completes explained rows under a coalition :math:`S`: the features in
:math:`S` keep the row's values, those outside are drawn from an estimate of
the law of :math:`X_{\bar S}` given :math:`X_S = x_S`.  Every sampler draws
with *common random numbers*: ``K`` standard normals (``z``, shape
``(K, d)``) or uniforms (``u``, shape ``(K,)``) drawn once, reused by every
row and coalition.  Draw ``k`` of a query is then a fixed function of
``z[k]`` / ``u[k]``, so the rows a query asks for do not depend on which
chunk builds them, and the ``K`` draws of one row are independent across
``k`` (what the Monte Carlo standard errors of :mod:`._conditional` rely on).

* :class:`GaussianSampler`: a multivariate normal fit; the conditional law is
  normal with mean :math:`\mu_{\bar S} + \Sigma_{\bar S S}\Sigma_{SS}^{-1}
  (x_S - \mu_S)` and covariance :math:`\Sigma_{\bar S\bar S} - \Sigma_{\bar S
  S}\Sigma_{SS}^{-1}\Sigma_{S\bar S}`.  The sample covariance is replaced by
  the Ledoit-Wolf shrinkage estimate when it is ill-conditioned (condition
  number of the correlation matrix above ``ILL_CONDITIONED``) or the
  background has at most ``2 d`` rows.
* :class:`CopulaSampler`: the same in normal scores
  :math:`\Phi^{-1}(\hat F_j(x_j))` (empirical margins), drawn scores mapped
  back through the background's empirical quantiles.
* :class:`EmpiricalSampler`: background rows weighted by a Gaussian kernel of
  the Mahalanobis distance on the coordinates of :math:`S` (shapr's
  "empirical" approach with its fixed bandwidth ``sigma = 0.1``), drawn with
  those weights; the effective sample size of each query is recorded.
* :class:`TreeSampler`: a regression tree grown on the background predicting
  the features outside :math:`S` from those in it; a row's draws are the
  background rows in its leaf (shapr's ctree idea, with scikit-learn's CART and
  leaves of at least :math:`\sqrt m` rows); a leaf of at most ``K`` rows is
  evaluated on each of its rows once instead (:mod:`._leaf_rows`).
"""

from __future__ import annotations

import threading

import numpy as np

from .._validation import InvalidParameterError

__all__ = ["GaussianSampler", "CopulaSampler", "EmpiricalSampler", "TreeSampler",
           "ILL_CONDITIONED", "EMPIRICAL_SIGMA", "TREE_MIN_LEAF"]

#: Condition number of the background's correlation matrix above which the Gaussian and
#: copula samplers shrink it (Ledoit-Wolf).
ILL_CONDITIONED = 1e6
#: Bandwidth of the empirical sampler's kernel on the scaled Mahalanobis distance (shapr's
#: ``empirical.fixed_sigma`` default).
EMPIRICAL_SIGMA = 0.1
#: Smallest leaf of the tree sampler, at least (ctree's ``minbucket`` default); the rule
#: is ``max(TREE_MIN_LEAF, round(sqrt(m)))`` rows of the ``m`` background rows: a leaf's
#: rows are the draws, and a leaf of a few rows gives a worth that is off by their noise
#: (on simulated data with known law, sqrt(m) roughly halved the error of 7-row leaves)
TREE_MIN_LEAF = 7


def _key(mask) -> bytes:
    return np.packbits(mask).tobytes()


class Sampler:
    """What every sampler shares: common random numbers and a cache per coalition."""

    needs = "uniform"  # or "normal"

    def __init__(self, background: np.ndarray, n_draws: int, rng):
        self.background = background
        self.m, self.d = background.shape
        self.n_draws = int(n_draws)
        if self.needs == "normal":
            self.z = rng.standard_normal((self.n_draws, self.d))
        else:
            self.u = rng.random(self.n_draws)
        self._cache: dict = {}
        self._lock = threading.Lock()

    def _fitted(self, mask):
        key = _key(mask)
        with self._lock:  # chunks may be built in threads
            fit = self._cache.get(key)
            if fit is None:
                fit = self._cache[key] = self._fit(mask)
        return fit

    def complete(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Rows ``(q, K, d)``: each of ``x`` ``(q, d)`` with the features outside ``mask`` drawn."""
        out = np.empty((x.shape[0], self.n_draws, self.d))
        out[:, :, mask] = x[:, None, mask]
        out[:, :, ~mask] = self._draw(x, mask, self._fitted(mask))
        return out

    def draw_rows(self, x: np.ndarray, mask: np.ndarray, noise: np.ndarray) -> np.ndarray:
        """One draw of the features outside ``mask`` for each row of ``x`` ``(N, d)``, given
        its own values on ``mask``, from its own random numbers ``noise`` (``(N, d)``
        normals or ``(N,)`` uniforms, as ``needs`` says): ``(N, |S̄|)``.  ``mask`` may be
        empty (a draw from the marginal law).  The causal chain's steps use it."""
        return self._draw_rows(x, mask, self._fitted(mask), noise)

    def _fit(self, mask):  # pragma: no cover - abstract
        raise NotImplementedError

    def _draw(self, x, mask, fit):  # pragma: no cover - abstract
        raise NotImplementedError

    def _draw_rows(self, x, mask, fit, noise):  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def diagnostics(self) -> dict:
        return {}


def refuse_categorical(dataset, values, approach):
    """Gaussian and copula samplers model numbers: no categories, no missing values."""
    cats = [c.name for c in dataset.columns if c.is_categorical]
    if cats:
        raise InvalidParameterError(
            f"dependence={approach!r} models the features as (transformed) jointly normal "
            f"numbers and cannot draw the categorical features {cats}; use dependence='tree', "
            "'empirical' or 'surrogate', which take categorical and missing values.")
    if np.isnan(values).any():
        raise InvalidParameterError(
            f"dependence={approach!r} cannot draw features given missing values (NaN in X or "
            "the background); use dependence='tree', 'empirical' or 'surrogate', which take "
            "them, or impute first.")


def fit_covariance(data: np.ndarray):
    """``(mean, covariance, rule)``: the sample covariance, or Ledoit-Wolf's shrinkage of
    it when the correlation matrix is ill-conditioned or rows are few."""
    mean = data.mean(axis=0)
    m, d = data.shape
    cov = np.atleast_2d(np.cov(data, rowvar=False))
    scale = np.sqrt(np.clip(np.diag(cov), 1e-300, None))
    corr = cov / np.outer(scale, scale)
    if m > 2 * d and np.linalg.cond(corr) <= ILL_CONDITIONED:
        return mean, cov, "sample"
    from sklearn.covariance import LedoitWolf

    # shrink the standardised data (the shrinkage target is then a multiple of the identity
    # in correlation units, fair to features of any scale)
    lw = LedoitWolf().fit((data - mean) / scale)
    return mean, lw.covariance_ * np.outer(scale, scale), "ledoit-wolf"


class GaussianSampler(Sampler):
    """Conditional draws from a multivariate normal fit of the background."""

    needs = "normal"

    def __init__(self, background, n_draws, rng):
        super().__init__(background, n_draws, rng)
        self.mean, self.cov, self.rule = fit_covariance(self._scores(background))

    def _scores(self, values):
        return values

    def _fit(self, mask):
        """``(A, L)``: the conditional mean's slope and the conditional covariance's factor."""
        s, o = mask, ~mask
        cov = self.cov
        A = np.linalg.solve(cov[np.ix_(s, s)], cov[np.ix_(s, o)]).T if s.any() else \
            np.zeros((int(o.sum()), 0))  # (|o|, |s|)
        C = cov[np.ix_(o, o)] - A @ cov[np.ix_(s, o)]
        C = (C + C.T) / 2
        w, V = np.linalg.eigh(C)  # a PSD square root, robust to round-off
        return A, V * np.sqrt(np.clip(w, 0.0, None))

    def conditional_mean(self, x, mask):
        """:math:`E[X_{\\bar S} | X_S = x_S]` of the fitted normal, ``(q, |S̄|)``."""
        A, _ = self._fitted(mask)
        return self.mean[~mask] + (x[:, mask] - self.mean[mask]) @ A.T

    def _draw(self, x, mask, fit):
        A, L = fit
        # row by row (einsum, not BLAS): a row's draws must not depend on its chunk's size
        mu = self.mean[~mask] + np.einsum("qs,os->qo", self._scores(x)[:, mask] - self.mean[mask],
                                          A)
        return mu[:, None, :] + (self.z[:, ~mask] @ L.T)[None, :, :]

    def _draw_rows(self, x, mask, fit, noise):
        A, L = fit
        mu = self.mean[~mask] + np.einsum("qs,os->qo", self._scores(x)[:, mask] - self.mean[mask],
                                          A)
        return mu + np.einsum("qo,po->qp", noise[:, ~mask], L)

    @property
    def diagnostics(self):
        return {"covariance": self.rule}


class CopulaSampler(GaussianSampler):
    """A Gaussian copula over the background's empirical margins."""

    def __init__(self, background, n_draws, rng):
        self._sorted = np.sort(background, axis=0)
        m = background.shape[0]
        # the empirical CDF at the sorted values, kept inside (0, 1): rank / (m + 1)
        self._levels = np.arange(1, m + 1) / (m + 1)
        super().__init__(background, n_draws, rng)

    def _scores(self, values):
        u = np.empty_like(values, dtype=float)
        for j in range(values.shape[1]):
            u[:, j] = np.interp(values[:, j], self._sorted[:, j], self._levels)
        from scipy import stats  # here: scipy.stats costs ~1 s at ``import modellens``

        return stats.norm.ppf(u)

    def _draw(self, x, mask, fit):
        return self._values(super()._draw(x, mask, fit), mask)

    def _draw_rows(self, x, mask, fit, noise):
        return self._values(super()._draw_rows(x, mask, fit, noise), mask)

    def _values(self, z, mask):
        """Drawn normal scores of the features outside ``mask`` back on their scale."""
        from scipy import stats  # (see _scores)

        u = stats.norm.cdf(z)
        out = np.empty_like(z)
        for k, j in enumerate(np.flatnonzero(~mask)):
            out[..., k] = np.interp(u[..., k], self._levels, self._sorted[:, j])
        return out


def _weighted_picks(weights, u):
    """Background row of each uniform: inverse-CDF draws from each row of ``weights``."""
    cdf = np.cumsum(weights, axis=1)
    cdf /= cdf[:, -1:]
    picks = np.empty((weights.shape[0], u.size), dtype=np.intp)
    for r in range(weights.shape[0]):
        picks[r] = np.minimum(np.searchsorted(cdf[r], u, side="right"), weights.shape[1] - 1)
    return picks


class EmpiricalSampler(Sampler):
    """Background rows near ``x_S``, weighted by a kernel of the Mahalanobis distance.

    The squared distance on the present features is the Mahalanobis distance
    on the numeric ones (the background's covariance restricted to them)
    plus one for each categorical feature whose category differs and for
    each feature missing in one row but not the other, divided by
    :math:`|S|` (shapr's scaling); the weight is
    :math:`\\exp(-D^2 / (2 \\sigma^2))`, ``sigma = EMPIRICAL_SIGMA``.
    """

    def __init__(self, background, n_draws, rng, *, categorical):
        super().__init__(background, n_draws, rng)
        self.categorical = np.asarray(categorical, dtype=bool)
        num = background[:, ~self.categorical]
        filled = np.where(np.isnan(num), np.nanmean(num, axis=0), num)
        cov = np.atleast_2d(np.cov(filled, rowvar=False)) if num.shape[1] else np.zeros((0, 0))
        self.cov = cov + 1e-9 * np.trace(cov) / max(1, len(cov)) * np.eye(len(cov))
        self.ess: dict = {}

    def _fit(self, mask):
        num = mask & ~self.categorical
        idx = np.flatnonzero(num[~self.categorical])
        return np.linalg.inv(self.cov[np.ix_(idx, idx)]) if idx.size else None

    def weights(self, x, mask):
        """Kernel weight of every background row for each row of ``x``, ``(q, m)``."""
        prec = self._fitted(mask)
        bg = self.background
        num, cat = mask & ~self.categorical, mask & self.categorical
        d2 = np.zeros((x.shape[0], self.m))
        if num.any():
            diff = x[:, None, num] - bg[None, :, num]
            miss = np.isnan(diff)
            one_missing = np.isnan(x[:, None, num]) ^ np.isnan(bg[None, :, num])
            diff[miss] = 0.0
            d2 += np.einsum("qbi,ij,qbj->qb", diff, prec, diff) + one_missing.sum(axis=2)
        if cat.any():
            a, b = x[:, None, cat], bg[None, :, cat]
            d2 += ((a != b) & ~(np.isnan(a) & np.isnan(b))).sum(axis=2)
        d2 /= mask.sum()
        logw = -d2 / (2 * EMPIRICAL_SIGMA ** 2)
        return np.exp(logw - logw.max(axis=1, keepdims=True))

    def _draw(self, x, mask, fit):
        w = self.weights(x, mask)
        ess = w.sum(axis=1) ** 2 / (w ** 2).sum(axis=1)
        with self._lock:
            self.ess.setdefault(_key(mask), []).append(ess)
        picks = _weighted_picks(w, self.u)
        return self.background[:, ~mask][picks]

    def _draw_rows(self, x, mask, fit, noise):
        picks = np.empty(x.shape[0], dtype=np.intp)
        for lo in range(0, x.shape[0], 1024):  # (rows x background) weights a block at a time
            hi = min(lo + 1024, x.shape[0])
            if not mask.any():
                picks[lo:hi] = np.minimum((noise[lo:hi] * self.m).astype(np.intp), self.m - 1)
                continue
            cdf = np.cumsum(self.weights(x[lo:hi], mask), axis=1)
            picks[lo:hi] = np.minimum((cdf <= noise[lo:hi, None] * cdf[:, -1:]).sum(axis=1),
                                      self.m - 1)
        return self.background[:, ~mask][picks]

    @property
    def diagnostics(self):
        per = [np.concatenate(v) for v in self.ess.values()]
        if not per:
            return {}
        means = np.array([p.mean() for p in per])
        return {"effective_sample_size": {"per_coalition_mean": means,
                                          "min": float(min(p.min() for p in per)),
                                          "median": float(np.median(np.concatenate(per)))},
                "bandwidth": f"fixed sigma = {EMPIRICAL_SIGMA} (shapr's default)"}


class TreeSampler(Sampler):
    """Background rows sharing a leaf with ``x_S`` in a tree grown to predict ``X_{S̄}``.

    One :class:`~sklearn.tree.DecisionTreeRegressor` per coalition, on the
    present features (category codes as numbers, missing values routed by
    the tree) predicting the absent ones (numeric ones standardised,
    categorical ones one-hot, missing ones as the mean plus an indicator),
    leaves of at least ``max(TREE_MIN_LEAF, round(sqrt(m)))`` rows.
    """

    def __init__(self, background, n_draws, rng, *, categorical, seed):
        super().__init__(background, n_draws, rng)
        self.categorical = np.asarray(categorical, dtype=bool)
        self.seed = int(seed)
        # the trees' inputs (scikit-learn's float32) and each column's targets, made once:
        # they were remade for every coalition, a third of the fits' time
        self._inputs = np.asarray(background, dtype=np.float32)
        self._missing = np.isnan(background).any(axis=0)
        self._blocks = [self._target(j) for j in range(self.d)]

    def _target(self, j):
        """Column ``j`` as targets: standardised, or one-hot; a missing indicator if any."""
        col = self.background[:, j]
        nan = np.isnan(col)
        if self.categorical[j]:
            levels = np.unique(col[~nan])
            part = (col[:, None] == levels[None, :]).astype(float)
        else:
            sd = np.nanstd(col) if (~nan).any() else 1.0
            mu = np.nanmean(col) if (~nan).any() else 0.0
            part = np.where(nan, 0.0, (col - mu) / (sd or 1.0))[:, None]
        return np.hstack([part, nan[:, None].astype(float)]) if nan.any() else part

    def _targets(self, cols):
        return np.ascontiguousarray(np.hstack([self._blocks[j] for j in cols]))

    def _fit(self, mask):
        if not mask.any():  # nothing to condition on: one leaf, the whole background
            return None, np.arange(self.m), (np.zeros(1, dtype=np.intp),
                                             np.full(1, self.m, dtype=np.intp))
        return self._grow(mask, None, max(TREE_MIN_LEAF, int(round(np.sqrt(self.m)))),
                          self.seed)

    def _grow(self, mask, rows, leaf, seed):
        """``(tree, order, (start, count))``: a tree grown on background ``rows`` (None: all)
        with leaves of at least ``leaf`` of them; every background row's leaf, the rows
        sorted by leaf (``order``) and each node's span of that order."""
        from sklearn import config_context
        from sklearn.tree import DecisionTreeRegressor

        tree = DecisionTreeRegressor(min_samples_leaf=leaf, min_samples_split=2 * leaf,
                                     random_state=seed)
        inputs = np.ascontiguousarray(self._inputs[:, mask])
        targets = self._targets(np.flatnonzero(~mask))
        if rows is not None:
            fit_in, targets = inputs[rows], np.ascontiguousarray(targets[rows])
        else:
            fit_in = inputs
        # scikit-learn's input and parameter checks (half of a fit on a few hundred rows)
        # skipped: the parameters are ours, the inputs already its float32 and the targets
        # float64; its input checks kept where missing values need its mask of them
        with config_context(skip_parameter_validation=True):
            tree.fit(fit_in, targets, check_input=bool(self._missing[mask].any()))
        leaves = tree.tree_.apply(inputs)
        order = np.argsort(leaves, kind="stable")
        ids, starts, counts = np.unique(leaves[order], return_index=True, return_counts=True)
        # each node's span of the sorted background (only leaves are ever looked up)
        start, count = np.zeros(tree.tree_.node_count, dtype=np.intp), \
            np.ones(tree.tree_.node_count, dtype=np.intp)
        start[ids], count[ids] = starts, counts
        return tree, order, (start, count)

    def leaf_spans(self, x, mask):
        """``(order, first, count)``: the fitted tree's background order for ``mask`` and, for
        each row of ``x``, where its leaf's rows start in it and how many there are."""
        return self._spans(x, mask, self._fitted(mask))

    def _spans(self, x, mask, fit):
        tree, order, (start, count) = fit
        # the tree's own apply, without the per-call checks of the estimator's (same float32
        # input, same leaves): it was called per coalition and chunk, a quarter of the run
        leaf = np.zeros(x.shape[0], dtype=np.intp) if tree is None else \
            tree.tree_.apply(np.ascontiguousarray(x[:, mask], dtype=np.float32))
        return order, start[leaf], count[leaf]

    def _picks(self, x, mask, fit, u, common):
        """Background row of each uniform: ``u`` ``(K,)`` for every row of ``x`` (``common``,
        ``(q, K)`` picks) or one per row (``(N,)``)."""
        order, first, many = self._spans(x, mask, fit)
        if common:
            first, many = first[:, None], many[:, None]
        return order[first + np.minimum((u * many).astype(np.intp), many - 1)]

    def _draw(self, x, mask, fit):
        return self.background[:, ~mask][self._picks(x, mask, fit, self.u, True)]

    def _draw_rows(self, x, mask, fit, noise):
        return self.background[:, ~mask][self._picks(x, mask, fit, noise, False)]
