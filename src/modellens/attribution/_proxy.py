r"""KernelSHAP with a cross-fitted proxy of the game: a control variate of cubic interactions.

Shapley values are linear in the game, so for any proxy game :math:`g`

.. math:: \phi(v) = \phi(g) + \phi(v - g).

When :math:`\phi(g)` is known exactly and :math:`g` follows :math:`v`, the
residual game :math:`v - g` varies less from coalition to coalition and
KernelSHAP estimates its values with a smaller error (regression-adjusted
Monte Carlo; shapiq's RegressionMSR and ProxySHAP rest on the same identity).

Which proxy helps: KernelSHAP samples complementary pairs
:math:`(S, N \setminus S)`, and the Shapley values depend only on the odd part
:math:`v(S) - v(N \setminus S)` of a game.  The odd part of a pairwise term
:math:`z_i z_j` is linear (:math:`z_i + z_j - 1`), which the paired fit
already captures exactly, so a 2-additive proxy (what kADD-SHAP fits) adds
nothing here.  The first terms it does not capture are the cubic ones
:math:`z_i z_j z_k`, and the proxy is a 3-additive game

.. math:: g(S) = \sum_{|T| = 3} m_T \,[T \subseteq S],
          \qquad \phi_j(g) = \tfrac13 \sum_{T \ni j} m_T,

whose :math:`m_T` are fit by ridge regression (linear terms unpenalised, the
penalty chosen by generalised cross-validation) of the pair differences on
their odd features.  There are :math:`\binom d3` of them, so the fit is
done in its dual form with the kernel
:math:`\sum_T [T \subseteq A][T \subseteq B] = \binom{|A \cap B|}{3}`
(no :math:`\binom d3` features are ever formed).

Cross-fitting keeps the estimate honest: the sampled pairs are split in two
halves; the proxy fit on one half corrects the KernelSHAP fit of the other
(plus the enumerated coalitions, which both share), and the two are averaged.
A proxy never sees the pairs it corrects, so a poor proxy costs variance,
never bias beyond KernelSHAP's own, and the standard errors of the two
residual fits (the delta method of :mod:`.kernel`) combine into that of the
average.  A row with fewer than ``d`` sampled pairs per half (too few for a standard
error of each residual fit) keeps plain KernelSHAP.
"""

from __future__ import annotations

from math import comb

import numpy as np

from ._games import Estimate
from .kernel import KernelEstimator, constrained_fit

__all__ = ["ProxyKernelEstimator"]

#: Sampled pairs each half needs, per feature, for the proxy to be fit (fewer: plain KernelSHAP).
MIN_PAIRS_PER_FEATURE = 1
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


class _CubicProxy:
    """The 3-additive proxy fit to the pair differences of some coalitions (see module).

    ``S`` are the canonical members of the pairs, ``diff`` their
    :math:`v(S) - v(N \\setminus S)`, ``w`` their kernel weights.
    """

    def __init__(self, S, diff, w):
        d = S.shape[1]
        self.S = S
        sw = np.sqrt(w)
        X = (2.0 * S - 1.0) * sw[:, None]          # odd part of the linear terms
        Sb = ~S
        # odd part of the cubic indicators: [T in S] - [T in N \ S]; their Gram matrix
        K = _cubic(S, S) - _cubic(S, Sb) - _cubic(Sb, S) + _cubic(Sb, Sb)
        K = K * sw[:, None] * sw[None, :]
        y = diff * sw
        # project the linear terms out (they are not penalised): Frisch-Waugh
        Q, _ = np.linalg.qr(X)
        def proj(a):
            return a - Q @ (Q.T @ a)
        My = proj(y)
        MKM = proj(proj(K).T).T
        evals, evecs = np.linalg.eigh((MKM + MKM.T) / 2)
        evals = np.clip(evals, 0.0, None)
        n_free = len(y) - np.linalg.matrix_rank(X)
        uy = evecs.T @ My
        scale = max(evals.max(), 1e-300)
        grid = scale * np.logspace(-6, 1, 15)
        gcv = []
        for lam in grid:
            shrink = evals / (evals + lam)
            resid = np.sum(((1 - shrink) * uy) ** 2)
            gcv.append(resid / max(n_free - shrink.sum(), 1e-9) ** 2)
        lam = grid[int(np.argmin(gcv))]
        alpha = evecs @ (uy / (evals + lam))
        # primal cubic coefficients m = F^T M alpha (scaled by sqrt w): one number per pair
        self.beta = sw * proj(alpha)
        size = S.sum(axis=1)
        self._size = size
        self.d = d
        # phi_j(g) = (1/3) sum_{T ni j} m_T; sum over T ni j of the odd feature of S
        per_j = np.where(S, _c2(size - 1)[:, None], -_c2(d - size - 1)[:, None])
        self.shapley = self.beta @ per_j / 3.0
        self.total = float(self.beta @ (_c3(size) - _c3(d - size)))  # g(N) - g(empty)

    def __call__(self, masks) -> np.ndarray:
        """The proxy's worth :math:`g(S)` of each coalition (``g(empty) = 0``)."""
        return (_cubic(masks, self.S) - _cubic(masks, ~self.S)) @ self.beta


class ProxyKernelEstimator(KernelEstimator):
    """KernelSHAP's coalitions, fit with a cross-fitted cubic proxy as a control variate.

    Plans, grows and stops exactly as :class:`~.kernel.KernelEstimator` (the
    same coalitions at the same budget); only :meth:`estimate` differs (see
    the module docstring).  ``proxy_rows`` says, after :meth:`estimate`, which
    rows the proxy corrected (the others had too few pairs and keep plain KernelSHAP).
    """

    proxy_rows: np.ndarray

    @property
    def dof(self) -> np.ndarray:
        """Degrees of freedom of each row's standard errors: a corrected row's errors
        come from its halves' draws, so the smaller half's count sets them."""
        dof = super().dof
        rows = getattr(self, "proxy_rows", None)
        if rows is None or not rows.any():
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
        canon_e = None
        if self._enum is not None:
            enum_y = self._enum.result.reshape(n, -1) - v0
            Z = self.enum_masks
            canon_e = np.flatnonzero(~Z[:, 0])
            codes = {Z[k].tobytes(): k for k in range(len(Z))}
            comp_e = np.array([codes[(~Z[k]).tobytes()] for k in canon_e], dtype=np.int64)
        for i in range(n):
            L = len(self.pairs[i])
            if L >= self.capacity or L < 2 * MIN_PAIRS_PER_FEATURE * d:
                continue
            pairs, counts = self.pairs[i], self.counts[i]
            yy = np.concatenate(self._y[i]) - v0
            half = np.arange(L) % 2
            parts = []
            for a in (0, 1):
                fit, use = half == a, half != a
                S, diff, w = pairs[fit], yy[fit, 0] - yy[fit, 1], counts[fit].astype(float)
                w = self.w_sampled * w / (2.0 * counts[fit].sum())
                if canon_e is not None and len(canon_e):
                    S = np.concatenate([self.enum_masks[canon_e], S])
                    diff = np.concatenate([enum_y[i, canon_e] - enum_y[i, comp_e], diff])
                    w = np.concatenate([self.enum_weights[canon_e], w])
                keep = slice(None) if len(S) <= MAX_PROXY_PAIRS else np.concatenate(
                    [np.arange(len(S) - fit.sum(), len(S)),
                     np.arange(len(S) - fit.sum())])[:MAX_PROXY_PAIRS]
                S, diff, w = S[keep], diff[keep], w[keep]
                proxy = _CubicProxy(S, diff, w)
                parts.append(self._residual_fit(i, proxy, use, yy, enum_y, delta[i]))
            self.proxy_rows[i] = True
            values[i] = 0.5 * (parts[0][0] + parts[1][0])
            std[i] = 0.5 * np.sqrt(parts[0][1] ** 2 + parts[1][1] ** 2)
        return Estimate(values, std, v0, fx)

    def _residual_fit(self, i, proxy, use, yy, enum_y, delta):
        """KernelSHAP of the residual game on the enumerated and the ``use`` pairs, plus
        the proxy's exact values: ``(values, standard errors)``."""
        d = self.d
        A = np.zeros((d, d))
        b = np.zeros(d)
        if self._enum is not None:
            Z = self.enum_masks.astype(np.float64)
            wZ = Z * self.enum_weights[:, None]
            A = wZ.T @ Z
            b = (enum_y[i] - proxy(self.enum_masks)) @ wZ
        pairs, counts = self.pairs[i][use], self.counts[i][use]
        n_draws = int(counts.sum())
        Zb = np.concatenate([pairs, ~pairs])
        Z = Zb.astype(np.float64)
        y = np.concatenate([yy[use, 0], yy[use, 1]]) - proxy(Zb)
        w = self.w_sampled * np.concatenate([counts, counts]) / (2.0 * n_draws)
        wZ = Z * w[:, None]
        A = A + wZ.T @ Z
        b = b + y @ wZ
        phi, C = constrained_fit(A, b, delta - proxy.total)
        se = self._standard_error(Z, y, phi, counts, n_draws, C)
        return phi + proxy.shapley, se
