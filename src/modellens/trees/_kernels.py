"""numba kernels of TreeSHAP, leaf by leaf.

Both tree games are sums over leaves of product games.  For a leaf ``l``
with value :math:`v_l` whose path splits on the features :math:`P_l` (a
feature split on twice is one player), a row reaches the leaf under the
coalition :math:`S` with weight

.. math:: w_l(S) = \\prod_{k \\in P_l} (o_k \\text{ if } k \\in S \\text{ else } z_k),

where :math:`o_k \\in \\{0, 1\\}` says whether the row satisfies every split on
:math:`k` along the path and :math:`z_k` is

* path-dependent: the product of the cover ratios of those splits;
* interventional: whether the background row satisfies them (0 or 1), so
  that a background row enters only through the mask of the path features
  it fails: the background is counted per leaf and mask once
  (:func:`background_counts`), and a row's values read those counts.

Features outside :math:`P_l` are dummies of the leaf's game, so the Shapley
value of :math:`j \\in P_l` is
:math:`v_l (o_j - z_j) \\sum_{S \\subseteq P_l \\setminus j} W(|S|, p)
\\prod_{k \\in S} o_k \\prod_{k \\notin S, k \\neq j} z_k` with
:math:`W(s, p) = s! (p - s - 1)! / p!` and :math:`p = |P_l|`.

**Path-dependent values by quadrature** (:func:`pd_quadrature`).  As
:math:`W(s, p) = \\int_0^1 t^s (1 - t)^{p - 1 - s} dt` (a Beta integral), the
sum over coalitions is an integral of one product of linear factors
(Quadrature-TreeSHAP, Wettenstein, Mitchell & Yu, arXiv 2605.04497; the
same identity as Linear TreeSHAP, Yu et al. 2022):

.. math:: \\phi_j = \\sum_l v_l (o_{lj} - z_{lj}) \\int_0^1
          \\prod_{k \\in P_l, k \\neq j} f_{lk}(t) \\, dt, \\qquad
          f_{lk}(t) = z_{lk} (1 - t) + o_{lk} t.

The integrand is a polynomial of degree :math:`p - 1`, so ``G = ceil(p_max /
2)`` Gauss-Legendre nodes :math:`t_g` with weights :math:`w_g` on [0, 1]
integrate it exactly (:func:`gauss_nodes`; 8 nodes up to 16 distinct path
features, more for deeper trees).  The weighted Banzhaf value
:math:`\\beta_j(t) = \\sum_l v_l (o_{lj} - z_{lj}) \\prod_{k \\neq j} f_{lk}(t)`
is the integrand itself; the Banzhaf value is :math:`\\beta_j(1/2)` (one node,
weight 1).  Leaves share the factors of their common ancestors, so the
products are carried down each tree and the sums over the leaves below each
edge carried up: :math:`O(G)` per node and row, :math:`O(L D)` per tree and
row, where the per-leaf polynomial forms cost :math:`O(L D^2)`.  A feature
split on again deeper down has one merged factor (the product of its
:math:`o` and of its cover ratios), replaced at each such split.

The pairwise Shapley interaction index of the product game has weights
:math:`s! (p - s - 2)! / (p - 1)! = \\int_0^1 t^s (1 - t)^{p - 2 - s} dt`, so off
the diagonal

.. math:: \\Phi_{ij} = \\frac12 \\sum_l v_l (o_{li} - z_{li})(o_{lj} - z_{lj})
          \\sum_g w_g \\prod_{k \\neq i, j} f_{lk}(t_g),

:math:`O(p^2 G)` per leaf and row (:func:`_leaf_pairs`), and the diagonal is
:math:`\\phi_i - \\sum_{j \\neq i} \\Phi_{ij}`.  Every term is a product of
factors in [0, 1] times a leaf value: no alternating sums of polynomial
coefficients, so depth costs no digits.

**Interventional values** (:func:`leaf_values`): the answer depends on the
row only through the bit mask :math:`o`, so small leaves get a table over
all :math:`2^p` masks (FastTreeSHAP's idea, Yang 2021) and a row then costs
:math:`O(p)` per leaf once its mask is known.
"""

from __future__ import annotations

from ._hstat import leaf_counts, leaf_paths, pair_sums, row_masks, single_sums
from ._pd import pd_recursion
from ._shap_background import (Counts, Tables, background_counts, background_masks,
                               interaction_values, leaf_tables, leaf_values, shapley_weights)
from ._shap_path import (expected_leaf_value, gauss_nodes, pd_quadrature, pd_task_bytes,
                         treeshap_bytes)
from ._traverse import (MAX_PATH_FEATURES, SERIAL_ROWS, SERIAL_TABLE, Layout, Nodes, predict_leaves,
                        root_layout, sized)

__all__ = ["Nodes", "Layout", "Counts", "Tables", "predict_leaves", "root_layout", "shapley_weights", "leaf_tables", "leaf_values",
           "background_counts", "background_masks", "interaction_values",
           "expected_leaf_value", "pd_quadrature", "pd_recursion", "pd_task_bytes",
           "treeshap_bytes",
           "gauss_nodes", "MAX_PATH_FEATURES", "sized", "SERIAL_ROWS", "SERIAL_TABLE",
           "leaf_paths", "row_masks", "leaf_counts", "single_sums", "pair_sums"]
