r"""KernelSHAP with a cross-fitted proxy of the game as a control variate.

Shapley values are linear in the game, so for any proxy game :math:`g`

.. math:: \phi(v) = \phi(g) + \phi(v - g).

When :math:`\phi(g)` is known exactly and :math:`g` follows :math:`v`, the
residual game :math:`v - g` varies less from coalition to coalition and
KernelSHAP estimates its values with a smaller error (regression-adjusted
Monte Carlo; shapiq's RegressionMSR and ProxySHAP rest on the same identity).

**Which proxy.**  KernelSHAP samples complementary pairs
:math:`(S, N \setminus S)`, and the Shapley values depend only on the odd part
:math:`v(S) - v(N \setminus S)` of a game.  The odd part of a pairwise term
:math:`z_i z_j` is linear (:math:`z_i + z_j - 1`), which the paired fit
already captures exactly, so a 2-additive proxy (what kADD-SHAP fits) adds
nothing here.  The first terms it does not capture are the cubic ones
:math:`z_i z_j z_k`, and the proxy is a 3-additive game

.. math:: g(S) = \sum_j \gamma_j z_j + \sum_{|T| = 3} m_T \,[T \subseteq S],
          \qquad \phi_j(g) = \gamma_j + \tfrac13 \sum_{T \ni j} m_T,

fit to the pair differences on their odd features: the linear terms
unpenalised, the :math:`\binom d3` cubic ones by ridge regression with the
penalty chosen by generalised cross-validation, in the dual form with the
kernel :math:`\sum_T [T \subseteq A][T \subseteq B] = \binom{|A \cap B|}{3}`
(no :math:`\binom d3` features are ever formed).

**Cross-fitting keeps the estimate honest**: a proxy never corrects the draws
it was fit on, so a poor proxy costs variance, never bias beyond KernelSHAP's
own.  Two schemes, one per use:

* *halves* (a fixed budget, but see large games below): the sampled pairs
  are split in two; the proxy fit on one half (plus the enumerated
  coalitions, which both share) corrects the KernelSHAP fit of the other, and
  the two are averaged, with the standard errors of the two residual fits
  (the delta method of :mod:`.kernel`) combined into that of the average.
* *pooled* (the stopping rule, ``pooled=True``, and large games at small
  fixed budgets): the pairs are split into ``FOLDS`` folds; each fold's
  draws are corrected by a proxy fit on the enumerated pairs and the other
  folds (all folds' proxies from one inverse of the full fit), and one
  KernelSHAP fit of every residual gives the values (plus the folds' mean
  proxy values) and its delta-method standard error from every draw.  A
  stopping rule stops where an error estimate happens to be low, and an
  error from half the draws is noisy enough for that selection to show: by
  halves the intervals after ``tol=0.01`` held 82-91%, pooled they hold
  92-98% after ``tol=0.05`` and ``0.02``.  At a fixed budget the halves keep
  the better coverage (pooled held 89-90% at 64d on 10 features, where the
  sampled sizes are few and a large share of them is drawn).

A row with fewer than ``2 d`` sampled pairs keeps plain KernelSHAP.

Large games at small fixed budgets (``d >= LARGE_GAME`` features and at most
``SMALL_BUDGET_PER_FEATURE * d`` coalitions) enumerate no size and correct
every row with the proxy *pooled* over folds: enumerating the borders spends
a quarter of an ``8 d`` budget on 60 features, and a proxy fit on half the
pairs (the halves) is fit on too few of them.  Each draw's residual there
comes from a proxy, linear terms included, fit without it, so its error is
taken without the leverage inflation of :mod:`.kernel` (with it the
intervals held 98-99.6%; without, 92-97%).  On the first 20-60 columns of
shap's corrgroups60 / independentlinear60 with an XGBoost model (Musco &
Witter's games, 30 rows each) the paired median error was 0.70-0.97 of the
earlier rule's (plain KernelSHAP below ``12 d``, the halves with the borders
enumerated above) at ``8 d`` to ``16 d``, intervals holding 93-97%; at 12
and 16 features the halves with enumeration stay (the pooled proxy without
them was 0.73-1.54 there: no consistent gain).
"""

from __future__ import annotations

import numpy as np

from ._games import Estimate
from .kernel import KernelEstimator

__all__ = ["ProxyKernelEstimator"]

#: Features from which a small fixed budget samples every size, pooled proxy (see module).
LARGE_GAME = 20
#: Coalitions per feature up to which a large game's fixed budget counts as small.
SMALL_BUDGET_PER_FEATURE = 16

#: Sampled pairs a row needs, per feature, for the proxy (fewer: plain KernelSHAP, which
#: gives no standard error below d pairs, and which a proxy fit on about d pairs did not
#: beat: regression-adjusted Monte Carlo with the exact normal matrix, cross-fitted leave-
#: one-out, was 1.1-1.6x worse at 4d on 10 and 12 features on boosting and interactions).
MIN_PAIRS_PER_FEATURE = 2
#: Folds of the pooled cross-fit: each fold's draws are corrected by a proxy fit on the others.
FOLDS = 10
#: Most pairs a proxy is fit on (its dual fit costs their cube; the correction stays
#: unbiased whatever the proxy, so a large budget fits it on the first ones only).
MAX_PROXY_PAIRS = 400


def _c3(k):
    k = np.asarray(k, dtype=np.float64)
    return k * (k - 1) * (k - 2) / 6.0


def _c2(k):
    k = np.asarray(k, dtype=np.float64)
    return k * (k - 1) / 2.0


def _cubic(A, B):
    r"""Inner products of the cubic indicators of coalitions ``A`` and ``B``, ``(len(A), len(B))``:
    :math:`\binom{|A_k \cap B_l|}{3}`."""
    return _c3(A.astype(np.float64) @ B.astype(np.float64).T)


def _odd_gram(A, B):
    """Gram matrix of the odd parts of the cubic indicators of the pairs ``A`` and ``B``."""
    return _cubic(A, B) - _cubic(A, ~B) - _cubic(~A, B) + _cubic(~A, ~B)


def gcv_penalty(K, X, y) -> float:
    """The ridge penalty of the cubic terms that minimises generalised cross-validation.

    ``K`` is the (weighted) Gram matrix of the cubic features, ``X`` the
    unpenalised linear features, ``y`` the (weighted) pair differences.
    """
    Q, _ = np.linalg.qr(X)

    def proj(a):  # the linear terms projected out (Frisch-Waugh)
        return a - Q @ (Q.T @ a)

    MKM = proj(proj(K).T).T
    evals, evecs = np.linalg.eigh((MKM + MKM.T) / 2)
    evals = np.clip(evals, 0.0, None)
    n_free = len(y) - np.linalg.matrix_rank(X)
    uy = evecs.T @ proj(y)
    scale = max(evals.max(), 1e-300)
    grid = scale * np.logspace(-6, 1, 15)
    gcv = []
    for lam in grid:
        shrink = evals / (evals + lam)
        gcv.append(np.sum(((1 - shrink) * uy) ** 2) / max(n_free - shrink.sum(), 1e-9) ** 2)
    return float(grid[int(np.argmin(gcv))])


def _bordered(K, X, lam):
    """The matrix of the ridge fit with unpenalised linear terms (see :meth:`_CubicProxy.fit`)."""
    n, d = X.shape
    M = np.zeros((n + d, n + d))
    M[:n, :n] = K + lam * np.eye(n)
    M[:n, n:] = X
    M[n:, :n] = X.T
    return M


class _CubicProxy:
    """A 3-additive game: linear terms ``gamma`` and cubic ones given in the dual, one
    number ``beta`` per pair of ``S`` (see the module docstring)."""

    def __init__(self, S, beta, gamma):
        d = S.shape[1]
        self.S, self.beta, self.gamma = S, beta, gamma
        size = S.sum(axis=1)
        # phi_j(g) = gamma_j + (1/3) sum_{T ni j} m_T; sum over T ni j of the odd feature of S
        per_j = np.where(S, _c2(size - 1)[:, None], -_c2(d - size - 1)[:, None])
        self.shapley = gamma + beta @ per_j / 3.0
        # g(N) - g(empty)
        self.total = float(gamma.sum() + beta @ (_c3(size) - _c3(d - size)))

    @classmethod
    def fit(cls, S, diff, w, lam=None):
        r"""The proxy fit to the pair differences ``diff`` of the canonical members ``S``
        with kernel weights ``w``; ``lam`` the penalty of the cubic terms (None: GCV).

        Minimises :math:`\|y - X\gamma - K\alpha\|^2 + \lambda\alpha^\top K\alpha`
        (weighted): :math:`(K + \lambda)\alpha + X\gamma = y`, :math:`X^\top\alpha = 0`.
        """
        sw = np.sqrt(w)
        X = (2.0 * S - 1.0) * sw[:, None]          # odd part of the linear terms
        K = _odd_gram(S, S) * sw[:, None] * sw[None, :]
        y = diff * sw
        if lam is None:
            lam = gcv_penalty(K, X, y)
        n = len(y)
        M, rhs = _bordered(K, X, lam), np.concatenate([y, np.zeros(X.shape[1])])
        try:
            sol = np.linalg.solve(M, rhs)
        except np.linalg.LinAlgError:  # linear terms not all identified by these pairs
            sol = np.linalg.lstsq(M, rhs, rcond=None)[0]
        return cls(S, sw * sol[:n], sol[n:])

    def __call__(self, masks) -> np.ndarray:
        """The proxy's worth :math:`g(S)` of each coalition (``g(empty) = 0``)."""
        return masks @ self.gamma + (_cubic(masks, self.S) - _cubic(masks, ~self.S)) @ self.beta


class ProxyKernelEstimator(KernelEstimator):
    """KernelSHAP's coalitions, fit with a cross-fitted cubic proxy as a control variate.

    Plans, grows and stops exactly as :class:`~.kernel.KernelEstimator` (the
    same coalitions at the same budget); only :meth:`estimate` differs (see
    the module docstring).  ``proxy_rows`` says, after :meth:`estimate`, which
    rows the proxy corrected (the others had too few pairs and keep plain KernelSHAP).
    """

    proxy_rows: np.ndarray

    def __init__(self, game, n_samples: int, streams, *, pooled: bool = False):
        d = game.n_players
        #: a large game at a small fixed budget (see the module docstring): every size
        #: sampled, the proxy pooled over folds, errors without the leverage inflation
        self.large_game = (not pooled and d >= LARGE_GAME
                           and n_samples <= SMALL_BUDGET_PER_FEATURE * d)
        super().__init__(game, n_samples, streams, enumerate_borders=not self.large_game)
        #: one fit of every draw with ``FOLDS`` fold proxies (True) or two halves (False)
        self.pooled = pooled or self.large_game
        # the enumerated pairs as (canonical member, its complement's position)
        self._canon_e = self._comp_e = np.zeros(0, dtype=np.int64)
        if len(self.enum_masks):
            Z = self.enum_masks
            self._canon_e = np.flatnonzero(~Z[:, 0])
            codes = {Z[k].tobytes(): k for k in range(len(Z))}
            self._comp_e = np.array([codes[(~Z[k]).tobytes()] for k in self._canon_e],
                                    dtype=np.int64)
        #: per row: (draws, values, standard errors) of its last corrected estimate (the
        #: stopping rule re-estimates every row each round; most have not drawn more)
        self._cache: dict[int, tuple] = {}

    @property
    def dof(self) -> np.ndarray:
        """Degrees of freedom of each row's standard errors: a row corrected by halves
        has its errors from each half's draws, so the smaller half's count sets them."""
        dof = super().dof
        rows = getattr(self, "proxy_rows", None)
        if self.pooled or rows is None or not rows.any():
            return dof
        half = np.array([min(c[0::2].sum(), c[1::2].sum()) for c in self.counts])
        return np.where(rows, np.maximum(half - 1.0, 1.0), dof)

    def estimate(self, game) -> Estimate:
        plain = super().estimate(game)
        v0, fx = game.ends()
        n, d = self.n, self.d
        delta = fx - v0
        values = plain.values.copy()
        std = np.zeros_like(values) if plain.std is None else plain.std.copy()
        self.proxy_rows = np.zeros(n, dtype=bool)
        enum_y = np.zeros((n, 0))
        if self._enum is not None:
            enum_y = self._enum.result.reshape(n, -1) - v0
        fit = self._corrected if self.pooled else self._halves
        for i in range(n):
            L = len(self.pairs[i])
            if L >= self.capacity or L < MIN_PAIRS_PER_FEATURE * d or d < 3:
                continue  # (with fewer than 3 players there is no cubic term)
            self.proxy_rows[i] = True
            hit = self._cache.get(i)
            if hit is None or hit[0] != self.n_draws[i]:
                hit = (self.n_draws[i],) + fit(i, enum_y[i], delta[i], v0)
                self._cache[i] = hit
            values[i], std[i] = hit[1], hit[2]
        return Estimate(values, std, v0, fx)

    def _proxy_data(self, i, enum_y, v0):
        """Row ``i``'s pairs as the proxy sees them: the enumerated ones first, then the
        sampled ones; canonical members, differences, kernel weights (and the sampled
        pairs' two values)."""
        counts, n_draws = self.counts[i], int(self.n_draws[i])
        ratio = self._ratio[self.pairs[i].sum(axis=1)]  # importance weights p_s / q_s
        yy = np.concatenate(self._y[i]) - v0
        S = np.concatenate([self.enum_masks[self._canon_e], self.pairs[i]])
        diff = np.concatenate([enum_y[self._canon_e] - enum_y[self._comp_e],
                               yy[:, 0] - yy[:, 1]])
        w = np.concatenate([self.enum_weights[self._canon_e],
                            self.sampled_weights(counts, ratio, n_draws)])
        return S, diff, w, yy

    def _halves(self, i, enum_y, delta, v0):
        """Row ``i`` by halves: the proxy fit on one half of the sampled pairs (and the
        enumerated ones) corrects the KernelSHAP fit of the other; the two averaged."""
        n_e = len(self._canon_e)
        S, diff, w, yy = self._proxy_data(i, enum_y, v0)
        counts = self.counts[i]
        ratio = self._ratio[self.pairs[i].sum(axis=1)]
        half = np.arange(len(self.pairs[i])) % 2
        parts = []
        for a in (0, 1):
            fit = np.concatenate([np.ones(n_e, dtype=bool), half == a])
            wa = w.copy()
            wa[n_e:] *= counts.sum() / counts[half == a].sum()  # the half's own draws
            idx = np.flatnonzero(fit)[:MAX_PROXY_PAIRS]
            proxy = _CubicProxy.fit(S[idx], diff[idx], wa[idx])
            use = half != a
            pairs = self.pairs[i][use]
            r = np.concatenate([yy[use, 0] - proxy(pairs), yy[use, 1] - proxy(~pairs)])
            phi, se = self._residual_fit(i, enum_y - proxy(self.enum_masks), pairs, r,
                                         counts[use], ratio[use], delta - proxy.total)
            parts.append((phi + proxy.shapley, se))
        return 0.5 * (parts[0][0] + parts[1][0]), 0.5 * np.hypot(parts[0][1], parts[1][1])

    def _residual_fit(self, i, enum_r, pairs, r, counts, ratio, total, cross_fitted=False):
        """KernelSHAP of a residual game: its enumerated values ``enum_r``, the values
        ``r`` of the sampled ``pairs`` (members, then complements) drawn ``counts`` times
        with importance weights ``ratio``:
        ``(values, delta-method standard errors)``."""
        return self._fit_row(i, enum_r @ self._enum_wZ, pairs, r, counts, ratio,
                             int(counts.sum()), total, cross_fitted=cross_fitted)

    def _corrected(self, i, enum_y, delta, v0):
        """Row ``i`` pooled: each fold's draws minus a proxy fit on the enumerated pairs
        and the other folds, one KernelSHAP fit of all these residuals, plus the folds'
        mean proxy values (see the module docstring)."""
        d = self.d
        pairs, counts, n_draws = self.pairs[i], self.counts[i], int(self.n_draws[i])
        ratio = self._ratio[pairs.sum(axis=1)]
        weight = counts * ratio  # each pair's share of the sampled kernel weight
        L = len(pairs)
        n_e = len(self._canon_e)
        S, diff, w, yy = self._proxy_data(i, enum_y, v0)
        n_fit = min(len(S), MAX_PROXY_PAIRS)
        S_fit, sw = S[:n_fit], np.sqrt(w[:n_fit])
        K = _odd_gram(S_fit, S_fit) * sw[:, None] * sw[None, :]
        X = (2.0 * S_fit - 1.0) * sw[:, None]
        y = np.concatenate([diff[:n_fit] * sw, np.zeros(S.shape[1])])
        # every fold's fit from one inverse: dropping the fold's rows F from the bordered
        # system leaves the inverse P_kk - P_kF P_FF^-1 P_Fk on the rows k kept
        M = _bordered(K, X, gcv_penalty(K, X, y[:n_fit]))
        try:
            P = np.linalg.inv(M)
        except np.linalg.LinAlgError:  # linear terms not all identified by these pairs
            P = np.linalg.pinv(M, rcond=1e-13)
        folds = min(FOLDS, L)
        fold = np.arange(L) % folds
        enum = self.enum_masks
        r_in, r_out = np.empty(L), np.empty(L)
        g_enum, g_values, g_total = np.zeros(len(enum)), np.zeros(d), 0.0
        for k in range(folds):
            mine = fold == k
            drop = np.zeros(n_fit + S.shape[1], dtype=bool)
            drop[n_e:n_fit] = mine[:n_fit - n_e]
            keep = ~drop
            sol = P[np.ix_(keep, keep)] @ y[keep]
            if drop.any():
                cross = P[np.ix_(keep, drop)]
                sol -= cross @ np.linalg.solve(P[np.ix_(drop, drop)], cross.T @ y[keep])
            rows = np.flatnonzero(keep[:n_fit])
            proxy = _CubicProxy(S_fit[rows], sw[rows] * sol[:len(rows)], sol[len(rows):])
            z = pairs[mine]
            r_in[mine] = yy[mine, 0] - proxy(z)
            r_out[mine] = yy[mine, 1] - proxy(~z)
            # the fixed coalitions see the mean proxy, weighted as the folds' draws
            share = weight[mine].sum() / weight.sum()
            g_enum += share * proxy(enum)
            g_values += share * proxy.shapley
            g_total += share * proxy.total
        phi, se = self._residual_fit(i, enum_y - g_enum, pairs, np.concatenate([r_in, r_out]),
                                     counts, ratio, delta - g_total,
                                     cross_fitted=self.large_game)
        return phi + g_values, se
