"""Interaction strength: Friedman and Popescu's H statistics, overall and for every pair."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Hashable, Sequence

import numpy as np
import pandas as pd

from .._validation import (InvalidParameterError, ModellensWarning, check_choice, check_int,
                           check_random_state, is_integer)
from ..engine import DataRows, Plan, open_request, run, run_outputs
from ..models import tree_ensemble_name
from ..typing import DataLike, FeatureSpec, ModelLike, RandomStateLike, TargetSpec
from ._hstat import BlockRows, Groups, h_statistics, pairs_of_outputs, settings_of
from .interactions_result import PAIR_COLUMNS, Interactions

__all__ = ["interactions", "COST_WARN_ROWS", "TREE_SINGLES_NOTE"]

#: Planned model rows above which a request warns and names the cheaper choices.
COST_WARN_ROWS = 25_000_000


def interactions(model: ModelLike, X: DataLike, features: FeatureSpec = None, *,
                 pairs: Sequence[tuple[Hashable, Hashable]] | int | None = None,
                 shared_pairs: bool = False,
                 sample: int | float | None = 500, method: str = "auto",
                 random_state: RandomStateLike = None, target: TargetSpec = None,
                 response_method: str = "auto", feature_names: Sequence[str] | None = None,
                 chunk_size: int | None = None, n_jobs: int | None = None,
                 progress: bool | None = None) -> Interactions:
    r"""How much of the model is interaction: which features, and which pairs, act together?

    Friedman and Popescu's H statistics compare the model with the sum of its
    one-feature partial dependences.  For every feature, the overall statistic
    is the share of the prediction's variance that comes from the feature's
    interactions with any others; for every pair, the pairwise statistic is the
    share of their joint effect that is not the sum of their own effects.  Both
    run from 0 (additive) to 1 (a pure interaction) and come with standard
    errors.  Use them to find the pairs worth a 2-D plot
    (:func:`modellens.pdp` or :func:`modellens.ale` with a pair).

    Parameters
    ----------
    model, X, target, response_method, feature_names
        As in :func:`modellens.pdp`; ``X`` (in memory) holds at least two
        features.  Categorical, string and boolean features take their levels
        from the sample (the partial dependence is over levels).
    features : list of names or indices, optional
        The features whose overall statistic is computed, and among which
        pairs are formed (all when None); at least two.
    pairs : None, int or list of pairs, default=None
        None: every pair of ``features``.  An int ``k``: the pairs among the
        ``k`` features with the largest overall statistic (the screen of
        Friedman and Popescu, as R's ``hstats`` does; its pair rows are
        planned after the overall statistics).  A list of pairs
        ``[(a, b), ...]`` of ``features``: those only.  ``[]``: none.
    shared_pairs : bool, default=False
        With ``pairs=k`` and several outputs (``target=None`` on a
        multiclass model): one set of pairs for every output, among the
        ``k`` features whose interactions carry the most of the prediction
        vector's variance (the sum over the outputs of their unnormalised
        overall statistics squared; for one output the same order as
        :math:`H^2_j`).  The pair rows then do not grow with the outputs
        (one block per pair for every output), where by default each
        output reports the pairs among its own ``k`` strongest features,
        as its ``target=`` call does, and the blocks of their union are
        evaluated.
    sample : int or None, default=500
        Rows drawn from ``X`` (without replacement, with ``random_state``);
        at least 2: a cap, so None, or a count above the rows of ``X``,
        uses all of them (``sample_size`` says how many).  With the brute-force method the
        cost grows as ``n**2`` (below).
    method : {"auto", "brute", "tree"}, default="auto"
        ``"brute"`` evaluates the model on the blocks of rows described
        below.  ``"tree"`` computes the same quantities (each partial
        dependence with the sample as its background, equal to the brute
        force to float rounding) from the trees of an ensemble that
        :func:`modellens.shapley`'s ``algorithm="tree"`` reads, with no model
        rows: on the trees' raw output, so it needs a response that is that
        output (a regressor's prediction, a forest's class probability, a
        boosted classifier's ``response_method="decision_function"``).
        ``"auto"`` takes ``"tree"`` when it applies and ``"brute"`` otherwise;
        its brute force reads the features' blocks from the trees of a tree
        ensemble whose own answers they are (a boosted classifier's
        probabilities included: the exact ICE curves of
        :func:`modellens.pdp`, at the sample's values), so only
        :math:`f(x_i)` and the pairs' blocks cost model rows.
    random_state : int or Generator, optional
        Seed of the sample and of the jackknife groups.
    chunk_size, n_jobs, progress : optional
        Execution options of the brute-force method (see :func:`modellens.pdp`);
        the numbers do not depend on them, nor on a Dask client of
        :func:`modellens.config`.

    Returns
    -------
    Interactions
        ``.overall`` (Series of :math:`H^2_j`), ``.pairwise`` (DataFrame
        ``feature_1, feature_2, h2, h2_unnormalized, std``, by ``h2``
        descending), ``.sample_size``, ``.plot()``, ``.to_frame()``.

    See Also
    --------
    pdp : Partial dependence, of one feature or a pair.
    ale : Second-order ALE, the interaction of a pair inside the data.
    shapley : With ``interactions=True``, Shapley interaction values of tree models.

    Notes
    -----
    Friedman and Popescu's H statistics on a sample of :math:`n` rows
    :math:`x_1, \dots, x_n`, with every partial dependence function evaluated
    at the sampled rows themselves and the sample as its background,

    .. math:: F_S(x_{kS}) = \frac{1}{n} \sum_{i=1}^n f(x_{kS}, x_{i,-S}),

    and centred to mean zero over the sample (as is :math:`f`, written
    :math:`\tilde f`).  The **overall** statistic of feature :math:`j` is the
    share of the variance of :math:`f` that is not the sum of a function of
    :math:`x_j` and one of the other features,

    .. math:: H^2_j = \frac{\sum_i [\tilde f(x_i) - \tilde F_j(x_{ij})
              - \tilde F_{-j}(x_{i,-j})]^2}{\sum_i \tilde f(x_i)^2},

    and the **pairwise** statistic of features :math:`j, k` the share of the
    variance of their joint partial dependence that is not the sum of their
    own ones,

    .. math:: H^2_{jk} = \frac{\sum_i [\tilde F_{jk}(x_{ij}, x_{ik})
              - \tilde F_j(x_{ij}) - \tilde F_k(x_{ik})]^2}
              {\sum_i \tilde F_{jk}(x_{ij}, x_{ik})^2}.

    Both are 0 when the feature (pair) enters additively and 1 when its effect
    is a pure interaction; a pair whose joint partial dependence is flat (its
    spread below ``1e-11`` of the largest prediction: float rounding) gets 0,
    as does a feature of a constant model, where the ratio is undefined.  A pair whose joint effect is tiny can still get a
    large :math:`H^2_{jk}`, so the **unnormalised** statistic, the square root
    of the numerator's mean :math:`\sqrt{\frac1n \sum_i [\dots]^2}` (the root
    mean square of the pure interaction effect, on the scale of the
    prediction), is reported too: rank by it among the pairs with a
    meaningful :math:`H^2`.

    **Cost (brute force).**  For a feature set :math:`S` the block
    :math:`M_S[i, k] = f(x_{kS}, x_{i,-S})` gives both :math:`F_S` (the
    mean of column :math:`k`) and :math:`F_{-S}` (the mean of row
    :math:`i`), so every feature costs one block of :math:`n \cdot u_j`
    model rows (:math:`u_j` its distinct values in the sample, at most
    :math:`n`) and every pair one of :math:`n \cdot u_{jk}`; a feature's
    block serves its overall statistic and every pair it is in, and
    :math:`f(x_i)` costs :math:`n` rows.  All blocks are one engine plan.
    A request above ``COST_WARN_ROWS`` (25 million) planned rows warns and
    names the cheaper choices.

    **Standard errors** come with no further model call.  The sampled rows
    are split at random into :math:`G = 20` groups (fewer for tiny samples),
    and every block is kept as its sums over the rows of each group and over
    the columns of each group.  Removing one group from both sides of every
    block gives each statistic on the sample without that group (partial
    dependences re-estimated without it as well), and the delete-a-group
    jackknife (a numerical form of the delta method) gives

    .. math:: \mathrm{std} = \sqrt{\tfrac{G-1}{G} \sum_{g=1}^G
              (\hat H^2_{(g)} - \bar H^2_{(\cdot)})^2},

    with :math:`G - 1` degrees of freedom (a 95% interval is about
    :math:`\hat H^2 \pm 2.09\,\mathrm{std}`).  It measures the sampling
    variation of the statistic over samples of :math:`n` rows of ``X``'s
    distribution; like the statistic it is unreliable where the denominator
    is near 0 (a pair with almost no joint effect).

    **Tree ensembles.**  The prediction is the base value plus a sum over
    leaves :math:`l` of :math:`v_l \prod_{p \in P_l} 1[x_p \in A_{l,p}]`,
    the product over the features on the leaf's path.  So
    :math:`M_S[i, k]` sums, over the leaves, :math:`v_l` times "row
    :math:`k` satisfies the leaf's conditions on :math:`S`" times "row
    :math:`i` satisfies those on the other features", and its column and
    row sums need only, per leaf, the number of sampled rows that satisfy
    the conditions on all its path features but at most one or two; a leaf
    matters only for the features on its path.  The cost is about
    :math:`n \times` (leaves :math:`\times` path features and their pairs)
    :math:`\times G`, not :math:`n^2` model rows.

    References
    ----------
    .. [1] Friedman, J. H. & Popescu, B. E. (2008). Predictive learning via
       rule ensembles. *Annals of Applied Statistics* 2(3), 916-954,
       section 8.1.
    .. [2] Mayer, M. (2023). hstats: Interaction Statistics (R package);
       Molnar, C. (2022). *Interpretable Machine Learning*, 2nd ed., ch. 8.3.
    .. [3] Shao, J. & Wu, C. F. J. (1989). A general theory for jackknife
       variance estimation. *Annals of Statistics* 17(3), 1176-1197.

    Examples
    --------
    >>> import numpy as np, modellens as ml
    >>> X = np.random.default_rng(0).uniform(-1, 1, size=(300, 3))
    >>> h = ml.interactions(lambda A: A[:, 0] * A[:, 1] + A[:, 2], X, sample=None)
    >>> h.pairwise[["feature_1", "feature_2"]].iloc[0].tolist()
    ['x0', 'x1']
    >>> bool(abs(h.pairwise["h2"].iloc[0] - 1) < 0.05)  # x0 and x1: a pure interaction
    True
    >>> bool(h.overall["x2"] < 1e-20)  # x2 enters additively
    True
    """
    check_choice(method, "method", ("auto", "brute", "tree"))
    # the statistics need every sampled row at once: no out-of-core form
    request = open_request(model, X, features, target=target, response_method=response_method,
                           feature_names=feature_names, chunk_size=chunk_size, n_jobs=n_jobs,
                           progress=progress, allow_pairs=False, dask="in_memory",
                           several=True)
    dataset, feats, mdl = request.dataset, request.features, request.model
    if dataset.n_features < 2:
        raise InvalidParameterError(
            "interaction statistics need at least two features; X has one.")
    if len(feats) < 2:
        raise InvalidParameterError(
            f"features names one feature ({dataset.columns[feats[0]].name!r}); interaction "
            "statistics need at least two (the overall statistic of one feature is about its "
            "interactions with the others: pass features=None, or a list of two or more).")
    pair_request = _check_pairs(dataset, feats, pairs)
    if shared_pairs and pair_request[0] == "top":
        pair_request = ("shared", pair_request[1])
    rows, notes = _sample(dataset.n_rows, sample, check_random_state(random_state))
    base = dataset.values[rows]
    trees = _tree_model(request, method, target, response_method, base)
    groups = Groups.of(len(rows))
    if trees is not None:
        from ._interactions_tree import TreeStatisticsPlan

        ens, outputs, labels = trees
        # no model rows but the check's: the engine only reduces the plan (n_jobs' threads)
        stats = run(None, [TreeStatisticsPlan(ens, dataset, base, groups, feats, pair_request)],
                    request.options, desc="interactions (tree)")[0]
        used, from_trees = "tree", False
    else:
        screen = _BruteScreen(base, groups, feats)
        if method == "auto":
            screen.trees = _tree_singles(request, screen)
            if screen.trees is not None:
                notes.append(TREE_SINGLES_NOTE)
        _warn_cost(screen, pair_request, method_hint=tree_ensemble_name(model) is not None)
        stats = screen.run(mdl, pair_request, request.options)
        outputs, labels = mdl.outputs, request.output_labels
        used, from_trees = "brute", screen.trees is not None
    # every row the model answered: the trees' check (counted on the request as it ran)
    # and brute force's
    parts = [_result(dataset, feats, overall, pairwise, sample_size=len(rows), rows=rows,
                     method=used, output=output, n_groups=groups.G,
                     n_model_rows=request.n_model_rows, notes=notes,
                     blocks_from_trees=from_trees)
             for (overall, pairwise), output in zip(stats, outputs)]
    return parts[0] if labels is None else Interactions.stack(parts, labels)


def _result(dataset, feats, overall, pairwise, **fields) -> Interactions:
    """One output's :class:`Interactions` from its statistics by feature and by pair."""
    names = [dataset.columns[j].name for j in feats]
    index = pd.Index(names, dtype=object)
    o = np.array([overall[j] for j in feats], dtype=np.float64).reshape(-1, 3)
    table = pd.DataFrame(
        [(dataset.columns[a].name, dataset.columns[b].name) + tuple(v)
         for (a, b), v in pairwise.items()], columns=PAIR_COLUMNS)
    table = table.astype({c: np.float64 for c in PAIR_COLUMNS[2:]}) \
        .sort_values("h2", ascending=False, kind="stable", na_position="last") \
        .reset_index(drop=True)
    return Interactions(
        overall=pd.Series(o[:, 0], index=index, name="h2"),
        pairwise=table,
        overall_unnormalized=pd.Series(o[:, 1], index=index, name="h2_unnormalized"),
        overall_std=pd.Series(o[:, 2], index=index, name="std"),
        sample_size=fields["sample_size"], rows=np.asarray(fields["rows"]),
        method=fields["method"], output=fields["output"], n_groups=fields["n_groups"],
        n_model_rows=int(fields["n_model_rows"]), notes=tuple(fields["notes"]),
        blocks_from_trees=bool(fields["blocks_from_trees"]))


# ---------------------------------------------------------------------- the request
def _check_pairs(dataset, feats, pairs):
    """``("top", k)`` or ``("list", [(a, b), ...])`` in column indices."""
    name = lambda j: dataset.columns[j].name  # noqa: E731
    if pairs is None:
        return "list", list(itertools.combinations(feats, 2))
    if is_integer(pairs):
        k = check_int(pairs, "pairs", low=2, what="a count of features (the strongest k)")
        if k > len(feats):
            raise InvalidParameterError(
                f"pairs={k} asks for the pairs among the {k} strongest features, but only "
                f"{len(feats)} features are explained; pass at most {len(feats)} (or None "
                "for every pair).")
        return "top", k
    if isinstance(pairs, (str, bytes)) or not hasattr(pairs, "__iter__"):
        raise InvalidParameterError(
            f"pairs must be None, an int k, or a list of pairs [(a, b), ...]; got {pairs!r}.")
    out, seen, inside = [], set(), set(feats)
    for p in pairs:
        if isinstance(p, (str, bytes)) or not hasattr(p, "__len__") or len(p) != 2:
            raise InvalidParameterError(
                f"each entry of pairs must be a pair (a, b) of features, got {p!r}.")
        a, b = dataset.index_of(p[0]), dataset.index_of(p[1])
        if a == b:
            raise InvalidParameterError(
                f"the pair {tuple(p)!r} names the feature {name(a)!r} twice; a pair needs two "
                "different features.")
        for j in (a, b):
            if j not in inside:
                raise InvalidParameterError(
                    f"the pair {tuple(p)!r} names {name(j)!r}, which is not among features="
                    f"{[name(f) for f in feats]}; add it to features or leave features=None.")
        key = (a, b) if feats.index(a) < feats.index(b) else (b, a)
        if key in seen:
            raise InvalidParameterError(
                f"the pair ({name(key[0])!r}, {name(key[1])!r}) is asked for more than once.")
        seen.add(key)
        out.append(key)
    return "list", out


def _sample(n, sample, rng):
    """Positions of the sampled rows, in random order (which sets the jackknife groups)."""
    notes: list[str] = []  # nothing to say today: sample is a cap
    if n < 2:
        raise InvalidParameterError("interaction statistics need at least 2 rows of X.")
    if sample is None:
        size = n
    else:
        # a cap, as in ml.report: fewer rows than the cap are all used (sample_size says so)
        size = min(n, check_int(sample, "sample", low=2,
                                what="a count of rows (at least 2) or None"))
    rows = rng.permutation(n) if size == n else rng.choice(n, size=size, replace=False)
    return rows, notes


# ---------------------------------------------------------------------- brute force
class _BruteScreen:
    """The blocks of a request, planned through the engine, and their statistics."""

    def __init__(self, base, groups, feats):
        self.base, self.groups, self.feats = base, groups, feats
        self.n = len(base)
        self.settings = {j: settings_of(base[:, [j]]) for j in feats}
        self._pair_settings: dict = {}
        #: each output's features' blocks, folded from the trees' curves, or None
        self.trees: list | None = None

    def pair_settings(self, pair):
        """``(settings, inverse)`` of a pair, found once (the cost guard and each output's plan ask)."""
        if pair not in self._pair_settings:
            self._pair_settings[pair] = settings_of(self.base[:, list(pair)])
        return self._pair_settings[pair]

    def single_rows(self):
        if self.trees is not None:  # f(x_i) only
            return self.n
        return self.n + sum(self.n * len(s) for s, _ in self.settings.values())

    def pair_rows(self, pairs):
        return sum(self.n * len(self.pair_settings(p)[0]) for p in pairs)

    def run(self, mdl, pair_request, options):
        """Each output's ``(overall, pairwise)`` statistics, the outputs in one pass."""
        kind, what = pair_request
        plans: list = []

        outputs = mdl.outputs if mdl.n_outputs > 1 else None

        def first_plans(one):
            c = 0 if outputs is None else outputs.index(one.output_name)
            plans.append(_HPlan(self, list(what) if kind == "list" else [], output=c))
            return plans[-1:]

        run_outputs(mdl, first_plans, options, desc="interactions")
        # (plans of a pass that stopped to learn the outputs precede the last ones)
        plans = plans[-mdl.n_outputs:]
        assert all(p.overall is not None for p in plans)  # formed when the blocks finished
        overall = [dict(p.overall) for p in plans]
        if kind == "list":
            return [(o, p.pair_stats()) for o, p in zip(overall, plans)]
        # each output's strongest pairs (or one set for all, "shared"); one pass evaluates
        # the union of them, and each output reports its own (a pair's statistic does not
        # depend on the others)
        strongest = pairs_of_outputs(overall, self.feats, pair_request)
        union = list(dict.fromkeys(p for pairs in strongest for p in pairs))
        firsts = iter(plans)
        seconds: list = []

        def second_plans(one):
            seconds.append(_HPlan(self, union, first=next(firsts)))
            return seconds[-1:]

        run_outputs(mdl, second_plans, options, desc="interactions (pairs)")
        out = []
        for o, plan, pairs in zip(overall, seconds, strongest):
            stats = plan.pair_stats()
            out.append((o, {p: stats[p] for p in pairs}))
        return out


class _HPlan(Plan):
    """f at the sampled rows, a block per feature and per pair.

    Every block is folded into its group sums as its answers arrive (a pair's
    block keeps ``G x u`` column sums, never its ``n x u`` answers); the
    overall statistics are formed as soon as the features' blocks are done.
    With ``first`` (the plan that already evaluated ``f`` and the features'
    blocks) only the pairs' rows are planned.  With the screen's ``trees``
    the features' blocks are folded from the trees' exact curves of output
    ``output`` (the same sums, in the same order), and only ``f`` and the
    pairs are model rows.
    """

    def __init__(self, screen: _BruteScreen, pairs, first: "_HPlan | None" = None, *,
                 output: int = 0):
        self.screen, self.pairs = screen, pairs
        groups, base = screen.groups, screen.base
        self.segments = []
        if first is None:
            self.f_rows = DataRows(base)
            self.overall: dict | None = None
            if screen.trees is None:
                self.singles = {j: BlockRows(base, [j], screen.settings[j][0],
                                             screen.settings[j][1], groups, row_sums=True)
                                for j in screen.feats}
                self.segments = [self.f_rows, *self.singles.values()]
                for seg in self.singles.values():
                    seg.on_finish = self._single_finished
            else:  # folded from the trees' curves already
                self.singles = screen.trees[output]
                self.segments = [self.f_rows]
            # the overall statistics once f and every feature's block are in, whichever last
            self.f_rows.on_finish = self._single_finished
        else:
            self.f_rows, self.singles, self.overall = first.f_rows, first.singles, first.overall
            self._first = first
        self._pairs_done: dict = {}
        for p in pairs:
            settings, inverse = screen.pair_settings(p)
            seg = BlockRows(base, list(p), settings, inverse, groups, row_sums=False)
            seg.on_finish = lambda s, p=p: self._pair_finished(p, s)
            self.segments.append(seg)

    def _single_finished(self, seg):
        if all(s._left == 0 for s in (self.f_rows, *self.singles.values())):
            sums = {j: s.result for j, s in self.singles.items()}
            self.overall, _ = h_statistics(self.screen.groups, self.f_rows.result, sums, {},
                                           overall=self.screen.feats)

    def _pair_finished(self, pair, seg):
        self._pairs_done[pair] = seg.result

    def pair_stats(self):
        sums = {j: s.result for j, s in self.singles.items()}
        _, stats = h_statistics(self.screen.groups, self.f_rows.result, sums, self._pairs_done)
        return {p: stats[p] for p in self.pairs}

    def reduce(self):
        return None


def _warn_cost(screen: _BruteScreen, pair_request, *, method_hint):
    kind, what = pair_request
    n = screen.n
    single = screen.single_rows()
    if kind == "list":
        pair_rows = screen.pair_rows(what)
        n_pairs = len(what)
    else:
        n_pairs = what * (what - 1) // 2
        pair_rows = n_pairs * n * n  # at most
    total = single + pair_rows
    if total <= COST_WARN_ROWS:
        return
    d = len(screen.feats)
    cheaper = [f"pairs=5 (the pairs among the 5 strongest features: about "
               f"{single + 10 * n * n:,} rows)"] if d > 5 and not (
        kind == "top" and what <= 5) else []
    small = max(2, int(n * np.sqrt(COST_WARN_ROWS / total)))
    cheaper.append(f"sample={small} (about {int(total * (small / n) ** 2):,} rows; the "
                   f"standard errors grow as 1/sqrt(sample))")
    if method_hint:
        cheaper.append("method='tree' (no model rows beyond its agreement check; a tree "
                       "model's raw output)")
    warnings.warn(
        f"this request plans {total:,} model rows: {d} features' blocks ({single:,} rows) and "
        f"{n_pairs} pairs ({pair_rows:,} rows) of up to sample x sample = {n * n:,} rows each. "
        f"Cheaper: {'; '.join(cheaper)}.", ModellensWarning, stacklevel=3)


# ---------------------------------------------------------------------- trees
#: Grid rows of the features' blocks (sampled rows x their settings, summed) from which
#: the brute force reads them from the trees; fewer are model rows (a small request does
#: not wait for the ICE kernel's first compile).
TREE_SINGLES_ROWS = 50_000
#: Bytes of curves held at once (the features are walked in batches of this size).
TREE_SINGLES_BYTES = 1 << 26
TREE_SINGLES_NOTE = ("the features' blocks from the trees (exact ICE, no model rows beyond "
                     "their agreement check); f and the pairs' blocks from model rows")


def _tree_singles(request, screen):
    """Each output's features' blocks (``[{feature: BlockRows}]``), folded from the trees'
    exact ICE curves at the sample's settings (:class:`~._tree_ice.TreeICE`: row ``i``'s
    curve of feature ``j`` at setting ``u`` is ``M_j[i, u]``); None where the trees may not
    stand in for the model, or the blocks are few rows."""
    settings = screen.settings
    if tree_ensemble_name(request.raw_model) is None or \
            screen.n * sum(len(s) for s, _ in settings.values()) < TREE_SINGLES_ROWS:
        return None
    from ._tree_ice import TreeICE, trusted_trees

    trusted = trusted_trees(request, screen.base, "ice")
    if isinstance(trusted, str):
        return None
    ens, response = trusted
    n_out = len(response[1])
    blocks: list = [{} for _ in range(n_out)]
    widest = max(len(s) for s, _ in settings.values())
    step = max(1, TREE_SINGLES_BYTES // (8 * n_out * screen.n * widest))
    for lo in range(0, len(screen.feats), step):
        batch = screen.feats[lo:lo + step]
        ice = TreeICE(ens, response, screen.base, {j: settings[j][0][:, 0] for j in batch},
                      request.dataset)
        for j in batch:
            for c in range(n_out):
                values, inverse = settings[j]
                block = BlockRows(screen.base, [j], values, inverse, screen.groups,
                                  row_sums=True)
                block.fold_all(ice.curves(j, c).T.ravel())  # setting u: rows u*n:(u+1)*n
                blocks[c][j] = block
    return blocks


def _tree_model(request, method, target, response_method, base):
    """``(TreeEnsemble of the outputs, their names, labels or None)`` for the tree method
    (:func:`~modellens.trees.tree_outputs`: the black-box rules), or None for brute force.

    The route (:func:`~modellens.trees.route`) checks the trees' answers on the rows
    ``base`` the statistics use, counting the check's model rows on ``request`` whatever
    it finds: ``method="tree"`` refuses where they cannot serve, and ``"auto"`` falls back
    on brute force (with the route's warning where the trees answer otherwise than the
    model).
    """
    model = request.raw_model
    if method == "brute" or (method == "auto" and tree_ensemble_name(model) is None):
        return None
    from ..trees import route, tree_outputs

    answer = route(model, request.dataset, request.X, method="interactions",
                   response_method=response_method, rows=base, strict=method == "tree",
                   request=request, stacklevel=4)
    ens = answer.ensemble
    if ens is None:
        return None
    outputs, labels = tree_outputs(ens, model, target)
    return (ens.select_outputs([(c, negate) for c, negate, _ in outputs]),
            [name for _, _, name in outputs], labels)
