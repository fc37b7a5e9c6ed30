r"""Causal and asymmetric Shapley values of the conditional games.

``ml.shapley(..., dependence=..., causal_order=[[...], [...]], confounding=...,
asymmetric=...)`` follows R's shapr (Heskes et al. 2020; Frye et al. 2020).

``causal_order`` is a partial causal ordering: a list of components, each a
list of features (names or column positions), every feature exactly once; the
features of a component are caused by those of the earlier ones and are on one
level among themselves.

*Causal Shapley values* (``confounding`` given: one bool per component, or
one for all).  The worth of a coalition is the interventional expectation
:math:`v_i(S) = E[f(X) \mid do(X_S = x^{(i)}_S)]` of a causal chain graph
over the components.  Its draws are built component by component in the
causal order: the features of component :math:`\tau` outside :math:`S` are
drawn from the approach's conditional law given

* all features of the earlier components (the row's values on :math:`S`, the
  values drawn in the earlier steps elsewhere), and
* if the component is *not* confounded, also its own features in :math:`S`
  (conditioning on them equals intervening on them); if it is confounded, not
  those (intervening on a feature leaves its confounded partners' law alone),

keeping only the drawn features of :math:`\tau`; a component wholly in
:math:`S` is skipped.  A component with nothing to condition on is drawn from
its (estimated) marginal law.  ``confounding=False`` for every component
gives the ordinary conditional game; ``confounding=True`` with a single
component the marginal (interventional) game of the estimated law.

*Asymmetric Shapley values* (``asymmetric=True``): only the orders of the
players consistent with ``causal_order`` (every feature of an earlier
component joins before any of a later one) are averaged.  Feature
:math:`j` of component :math:`C` with :math:`P` the union of the earlier
components then gets the Shapley value of :math:`j` in the game
:math:`T \mapsto v(P \cup T)` over :math:`C`:

.. math:: \phi_j = \sum_{T \subseteq C \setminus \{j\}}
          \frac{|T|!\,(|C| - |T| - 1)!}{|C|!}\,
          \big(v(P \cup T \cup \{j\}) - v(P \cup T)\big),

which needs only the coalitions :math:`P \cup T`, enumerated exactly
(``algorithm="exact"``, and ``"auto"`` while no component has more than
``MAX_EXACT_FEATURES`` features).  ``algorithm="permutation"`` samples the
consistent orders instead (:class:`AsymmetricPermutations`: each component's
features in a uniform random order, the components in theirs), for large
components and for ``tol=``.  Without ``confounding`` the worths are the
conditional game's (asymmetric conditional Shapley values); with it, the
causal game's.
"""

from __future__ import annotations

from math import factorial
from typing import NamedTuple

import numpy as np

from .._validation import InvalidParameterError
from ._games import Estimate
from .permutation import PermutationEstimator

__all__ = ["CausalSpec", "check_causal", "resolve_causal", "CausalSampler",
           "AsymmetricEstimator", "AsymmetricPermutations"]


class CausalSpec(NamedTuple):
    """A validated request: components (as given until resolved: then feature positions),
    confounding per component (None: no causal draws), asymmetric."""

    components: list
    confounding: tuple | None
    asymmetric: bool


def check_causal(causal_order, confounding, asymmetric, *, approach, algorithm):
    """The request's :class:`CausalSpec` (None without ``causal_order``); a clear error for
    what is not offered."""
    if not isinstance(asymmetric, (bool, np.bool_)):
        raise InvalidParameterError(f"asymmetric must be True or False, got {asymmetric!r}.")
    if causal_order is None:
        if confounding is not None or asymmetric:
            raise InvalidParameterError(
                "confounding= and asymmetric=True describe a causal_order=: give "
                "causal_order=[[first features], [their effects], ...] as well.")
        return None
    if isinstance(causal_order, (str, bytes)) or not hasattr(causal_order, "__iter__"):
        raise InvalidParameterError(
            "causal_order must be a list of components, each a list of features (names or "
            f"positions), e.g. [['trend'], ['cosyear', 'sinyear'], [...]]; got {causal_order!r}.")
    comps = [[c] if isinstance(c, (str, int, np.integer)) else list(c) for c in causal_order]
    if not comps or any(len(c) == 0 for c in comps):
        raise InvalidParameterError("causal_order has an empty component; every component "
                                    "names at least one feature.")
    if confounding is not None:
        if isinstance(confounding, (bool, np.bool_)):
            confounding = [bool(confounding)] * len(comps)
        confounding = list(confounding)
        if len(confounding) != len(comps) or \
                not all(isinstance(c, (bool, np.bool_)) for c in confounding):
            raise InvalidParameterError(
                f"confounding must be one bool, or one bool per component of causal_order "
                f"({len(comps)}), got {confounding!r}.")
        confounding = tuple(bool(c) for c in confounding)
    if approach == "independent":
        raise InvalidParameterError(
            "causal_order= needs a conditional game (dependence='gaussian', 'copula', "
            "'empirical' or 'tree'): the independent game draws the absent features from "
            "their marginal law whatever the order (confounding=True on one component).")
    if approach == "surrogate" and confounding is not None:
        raise InvalidParameterError(
            "dependence='surrogate' predicts conditional expectations directly and cannot "
            "draw a causal chain (confounding=); use 'gaussian', 'copula', 'empirical' or "
            "'tree'.")
    if asymmetric and algorithm not in ("auto", "exact", "permutation"):
        raise InvalidParameterError(
            "asymmetric=True averages the feature orders consistent with causal_order: "
            "algorithm='exact' (or 'auto') enumerates their coalitions, 'permutation' samples "
            f"the orders; KernelSHAP's coalitions are not restricted to them. Not {algorithm!r}.")
    if confounding is None and not asymmetric:
        raise InvalidParameterError(
            "causal_order= alone changes nothing: give confounding= (causal Shapley values) "
            "and/or asymmetric=True (asymmetric Shapley values).")
    return CausalSpec(comps, confounding, bool(asymmetric))


def resolve_causal(spec: CausalSpec, feature_names, grouped: bool) -> CausalSpec:
    """The spec with its components as arrays of feature positions."""
    if grouped:
        raise InvalidParameterError("causal_order= orders single features; it does not take "
                                    "groups= yet.")
    names = list(feature_names)
    d = len(names)
    comps = []
    for comp in spec.components:
        idx = []
        for f in comp:
            if isinstance(f, (int, np.integer)) and not isinstance(f, bool):
                if not 0 <= f < d:
                    raise InvalidParameterError(f"causal_order names column {f}, but X has "
                                                f"{d} features.")
                idx.append(int(f))
            elif f in names:
                idx.append(names.index(f))
            else:
                raise InvalidParameterError(f"causal_order names {f!r}, which is not a "
                                            f"feature; features: {names}.")
        comps.append(np.array(idx, dtype=np.intp))
    flat = np.concatenate(comps)
    if len(flat) != d or len(set(flat.tolist())) != d:
        raise InvalidParameterError(
            "causal_order must name every feature exactly once (a feature left out or "
            f"named twice); features: {names}.")
    return spec._replace(components=comps)


class CausalSampler:
    """Draws of a coalition's absent features along the causal chain (module docstring).

    Wraps a fitted conditional sampler; step ``tau`` uses its own random numbers
    (``K`` rows, drawn once: common to every row and coalition, independent
    between steps and between draws).
    """

    def __init__(self, base, spec: CausalSpec, seed: int):
        self.base, self.n_draws = base, base.n_draws
        d = base.d
        self.members = [np.isin(np.arange(d), c) for c in spec.components]
        self.before = [np.zeros(d, dtype=bool)]
        for member in self.members[:-1]:
            self.before.append(self.before[-1] | member)
        self.confounding: tuple = spec.confounding or (False,) * len(self.members)
        ss = np.random.SeedSequence(seed)
        self.noise = []
        for child in ss.spawn(len(self.members)):
            rng = np.random.default_rng(child)
            self.noise.append(rng.standard_normal((self.n_draws, d)) if base.needs == "normal"
                              else rng.random(self.n_draws))

    def complete(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Rows ``(q, K, d)``: each row of ``x`` with the features outside ``mask`` drawn."""
        q, d = x.shape
        K = self.n_draws
        rows = np.repeat(x.astype(float), K, axis=0)  # draw k of row i at i * K + k
        draw = np.tile(np.arange(K), q)
        for tau, member in enumerate(self.members):
            todo = member & ~mask
            if not todo.any():
                continue
            given = self.before[tau] | (member & mask if not self.confounding[tau] else False)
            drawn = self.base.draw_rows(rows, given, self.noise[tau][draw])
            cols = np.flatnonzero(~given)
            keep = todo[~given]
            rows[:, cols[keep]] = drawn[:, keep]
        return rows.reshape(q, K, d)

    @property
    def diagnostics(self) -> dict:
        return self.base.diagnostics


def consistent_masks(components, d):
    """Every coalition ``P ∪ T`` (earlier components ``P``, ``T`` within the next one) once,
    as boolean masks ``(c, d)``, the empty one first and the full one last."""
    seen, masks = set(), []
    before = np.zeros(d, dtype=bool)
    for comp in components:
        c = len(comp)
        for code in range(2 ** c):
            m = before.copy()
            m[comp[(code >> np.arange(c)) & 1 == 1]] = True
            key = m.tobytes()
            if key not in seen:
                seen.add(key)
                masks.append(m)
        before = before.copy()
        before[comp] = True
    masks.sort(key=lambda m: m.sum())
    return np.array(masks)


def asymmetric_weights(components, masks) -> np.ndarray:
    """``W`` ``(c, d)`` with ``phi = v @ W`` over ``masks`` (module docstring's formula)."""
    d = masks.shape[1]
    index = {m.tobytes(): i for i, m in enumerate(masks)}
    W = np.zeros((len(masks), d))
    before = np.zeros(d, dtype=bool)
    for comp in components:
        c = len(comp)
        for code in range(2 ** c):
            inside = comp[(code >> np.arange(c)) & 1 == 1]
            base = before.copy()
            base[inside] = True
            t = len(inside)
            for j in comp:
                if base[j]:
                    continue
                w = factorial(t) * factorial(c - t - 1) / factorial(c)
                with_j = base.copy()
                with_j[j] = True
                W[index[with_j.tobytes()], j] += w
                W[index[base.tobytes()], j] -= w
        before[comp] = True
    return W


class AsymmetricEstimator:
    """The coalitions consistent with a causal order, for every row, combined exactly."""

    dof = None

    def __init__(self, game, components):
        self.n, self.d = game.n_explained, game.n_players
        masks = consistent_masks(components, self.d)
        self._weights = asymmetric_weights(components, masks)
        self._seg = game.coalition_rows(masks[1:-1])
        self.segments = [self._seg]
        self.n_coalitions = np.full(self.n, len(masks) - 2)

    def estimate(self, game) -> Estimate:
        v0, fx = game.ends()
        v = np.empty((self.n, self._weights.shape[0]))
        v[:, 0], v[:, -1] = v0, fx
        v[:, 1:-1] = self._seg.result.reshape(self.n, -1)
        return Estimate(v @ self._weights, None, v0, fx)


class AsymmetricPermutations(PermutationEstimator):
    """Permutation sampling over the orders consistent with the causal order.

    An order takes the components in their order and each component's features
    in a uniform random order; its antithetic partner reverses the order within
    every component (still consistent; for one component it is the reversed
    order of :class:`~.permutation.PermutationEstimator`).  The mean
    contribution over such orders is the asymmetric Shapley value; the pairs'
    spread gives its standard error, and :meth:`grow` (the stopping rule)
    draws more pairs from each row's stream.
    """

    def __init__(self, game, n_permutations: int, streams, components):
        self.components = [np.asarray(c, dtype=np.intp) for c in components]
        super().__init__(game, n_permutations, streams)

    def _orders(self, rng, pairs: int):
        """``(2 pairs, d)``: the drawn consistent orders, then their partners."""
        ahead, partner = [], []
        for comp in self.components:
            inner = comp[np.argsort(rng.random((pairs, comp.size)), axis=1)]
            ahead.append(inner)
            partner.append(inner[:, ::-1])
        return np.concatenate([np.concatenate(ahead, axis=1),
                               np.concatenate(partner, axis=1)])

    def _draw_orders(self, i: int, pairs: int):
        orders = self._orders(self._rngs[i], pairs)
        position = np.argsort(orders, axis=1)
        # the first t features of each order, t = 1 .. d - 1
        steps = np.arange(1, self.d)
        return orders, (position[:, None, :] < steps[None, :, None]).reshape(-1, self.d)

    def _absorb(self, v0, fx):
        d = self.d
        for seg, offsets, batch in self._pending:
            for k, (i, orders, inverse) in enumerate(batch):
                n_orders = len(orders)
                v = seg.result[offsets[k]: offsets[k + 1]][inverse].reshape(n_orders, d - 1)
                path = np.concatenate([np.full((n_orders, 1), v0), v,
                                       np.full((n_orders, 1), fx[i])], axis=1)
                per_order = np.empty((n_orders, d))
                # the t-th feature of an order joins after its first t - 1
                np.put_along_axis(per_order, orders, np.diff(path, axis=1), axis=1)
                half = n_orders // 2
                self._contrib[i].append(0.5 * (per_order[:half] + per_order[half:]))
        self._pending = []
