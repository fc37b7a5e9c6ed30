"""What a report is asked for: one frozen, validated object instead of two dozen keywords."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from .._validation import InvalidParameterError, check_int, is_integer
from .._warm import Warming
from ..typing import ArrayLike, FeatureSpec, TargetSpec

__all__ = ["ReportOptions", "options_from"]

@dataclass(frozen=True)
class ReportOptions:
    """What :func:`~modellens.report` computes and shows, checked when it is made.

    Every field is also a keyword of :func:`~modellens.report`
    (``ml.report(model, X, grid=10)`` is ``ml.report(model, X,
    options=ml.ReportOptions(grid=10))``); keywords given beside ``options``
    replace its fields.  An invalid value raises
    :class:`~modellens.InvalidParameterError` here, before any model call.

    Parameters
    ----------
    features : list, optional
        Features of the effects sections (default: all).
    rows : list of int, optional
        Row positions in ``X`` drawn as waterfalls (default: the rows of
        ``X`` with the highest, lowest and median prediction), explained
        besides the ``n_explain`` sampled rows.
    sample, n_explain, n_background : int
        Effects and dependence run on ``sample`` rows, Shapley values on
        ``n_explain`` rows (plus ``rows``) against ``n_background`` background
        rows; each is capped at the number of rows.
    n_explain_tree : int, default=1000
        Rows whose TreeSHAP values the importance bar, beeswarm and
        dependence charts show when the model is a tree ensemble: the
        ``n_explain`` rows (whose waterfalls, LIME weights and row selector
        stay as they are) and more rows of the sample, at least
        ``n_explain``, at most the sample, and at most 60,000 Shapley
        values (rows x features x classes: they are in the page).  TreeSHAP
        costs little per row, and a thousand points show a feature's spread
        and its dependence curve far better than fifty; the interactive
        beeswarm draws at most 5,000 points.
    shapley_budget : int, default=300000
        Model rows Shapley values may cost: exact values when
        ``rows * 2**d * background`` fits, else TreeSHAP for tree ensembles,
        else antithetic permutation sampling with as many orders as fit (at
        least 10).
    grid : int, default=20
        PD grid points and ALE bins per feature (categorical features with
        more than 20 levels: PD at their 20 most frequent levels plus one
        "other" point, the frequency-weighted mean PD of the remaining levels).
    max_features : int, default=12
        Effects drawn (the most important ones).
    target : label or int, optional
        The class explained for classifiers (see :func:`modellens.pdp`).  For
        a model of several outputs None draws every output in the effects
        section and counts every class in the confusion matrix; the
        interaction, regions, Shapley and LIME sections compute every output
        in one pass each and draw their still pictures, like the one-class
        quality metrics, for the class of highest mean predicted probability,
        named in their heading.
    random_state : int, default=0
        Seed of every sample; the same seed gives the same report.
    sections : list of str, optional
        Keys of the sections to show (default: all that apply); sections they
        need are computed too.
    progress : bool, optional
        Progress bars for the sections and long model runs (default: the
        context's ``ml.config(progress=...)``).
    title, source : str, optional
        The page's title, and a sentence saying where data and model came
        from (printed under the title).
    holdout : bool, default=False
        The rows were not used to fit the model: the quality section says its
        numbers estimate the quality on new data.
    unused_columns : list of str, optional
        Columns of the user's file the model does not take, listed on the page
        (a column that leaks the target is one a reviewer wants to see).
    log : callable, optional
        Called with one line per section when it is done (its key and
        seconds), e.g. ``print``.
    client : dask.distributed.Client or "current", optional
        Evaluate the sections' model rows on this Dask cluster, as inside
        ``ml.config(client=...)``; the numbers are those of a run in this
        process, and the page says where it ran.
    n_workers : int, optional
        The same on a ``LocalCluster`` of this many processes, started for the
        report and closed after it.
    warm_up : bool or Warming, default=False
        For a tree ensemble in a fresh environment: True compiles the
        interaction screen's and TreeSHAP's kernels in a background process
        (:func:`modellens.warm_up` with ``background=True``) while the
        sections that need no kernels run; a :class:`~modellens.Warming`
        handle started earlier is waited for instead.  The numbers do not
        change.
    X_reference, y_reference : optional
        Earlier data with ``X``'s columns (and its targets): the "What
        changed" section decomposes the change from it to ``X`` of the mean
        prediction, and with ``y`` and ``y_reference`` of the model's loss,
        into the features' contributions (:func:`modellens.shift`), with their
        tests (Holm), the drift bar chart and each most-moved feature's PD on
        both data sets (in the explorer: pick a feature).  Checked against
        ``X`` before any model call: other columns, or a column holding
        numbers in one and text in the other, raise an error.
    interactive : bool, default=True
        The page opens with an "Explore" section whose feature, class, row
        and pair selectors (``data-ml-control="feature"``, ``"class"``,
        ``"row"``, ``"pair"``) redraw its charts (``data-ml-chart="pd"``,
        ``"ale"``, ``"dependence"``, ``"beeswarm"``, ``"waterfall"``,
        ``"lime"``, ``"interaction"``, ``"regions"``, ...) in the browser,
        offline.  False writes the still page only (as ``modellens report
        --static``).

    See Also
    --------
    report : Builds the page these options describe.

    Examples
    --------
    >>> import modellens as ml
    >>> options = ml.ReportOptions(grid=10, sections=["effects"])
    >>> options.grid, options.sample
    (10, 2000)
    >>> try:
    ...     ml.ReportOptions(grid=1)
    ... except ml.InvalidParameterError as exc:
    ...     print(exc)
    grid must be a number of grid points (at least 2), got 1.
    """

    features: FeatureSpec = None
    rows: ArrayLike | None = None
    sample: int = 2000
    n_explain: int = 50
    n_background: int = 50
    n_explain_tree: int = 1000
    shapley_budget: int = 300_000
    grid: int = 20
    max_features: int = 12
    target: TargetSpec = None
    random_state: int = 0
    sections: Sequence[str] | None = None
    progress: bool | None = None
    title: str | None = None
    source: str | None = None
    holdout: bool = False
    unused_columns: Sequence[str] | None = None
    log: Callable[[str], Any] | None = None
    client: Any = None
    n_workers: int | None = None
    warm_up: bool | Warming = False
    interactive: bool = True
    X_reference: Any = None
    y_reference: ArrayLike | None = None

    def __post_init__(self):
        rows = "a number of rows"
        for name, what, low in [("sample", rows, 1), ("n_explain", rows, 1),
                                ("n_background", rows, 1), ("n_explain_tree", rows, 1),
                                ("grid", "a number of grid points", 2),
                                ("shapley_budget", "a number of model rows", 1),
                                ("max_features", "a number of features", 1)]:
            object.__setattr__(self, name, check_int(getattr(self, name), name, low=low,
                                                     what=what))
        if not is_integer(self.random_state):
            raise InvalidParameterError(f"random_state must be an integer seed, got "
                                        f"{self.random_state!r}.")
        if not isinstance(self.interactive, (bool, np.bool_)):
            raise InvalidParameterError(f"interactive must be True (the explorer on top of the "
                                        f"page) or False (still pictures only), got "
                                        f"{self.interactive!r}.")
        if not isinstance(self.warm_up, (bool, Warming)):
            raise InvalidParameterError(f"warm_up must be True, False or the Warming handle of "
                                        f"ml.warm_up(background=True), got {self.warm_up!r}.")
        if self.y_reference is not None and self.X_reference is None:
            raise InvalidParameterError("y_reference holds the reference data's targets; pass "
                                        "X_reference (the reference data) with it.")
        if self.sections is not None:
            from ._sections import SECTIONS
            from ._sections.texts import TEXT_SECTIONS

            # a report of texts has its own sections (checked against its kind by report())
            known = list(dict.fromkeys([s.key for s in SECTIONS]
                                       + [key for key, _ in TEXT_SECTIONS]))
            unknown = [s for s in self.sections if s not in known]
            if unknown:
                raise InvalidParameterError(f"unknown sections {unknown}; valid ones are "
                                            f"{known}.")


def options_from(options: ReportOptions | None, given: dict) -> ReportOptions:
    """``options`` (default: the defaults) with the keywords ``given`` replacing its fields.

    A keyword that is no field is refused as Python refuses an unknown
    keyword argument (``TypeError``), naming the fields.
    """
    names = [f.name for f in fields(ReportOptions)]
    if options is not None and not isinstance(options, ReportOptions):
        raise InvalidParameterError(f"options must be a modellens.ReportOptions, got "
                                    f"{type(options).__name__}.")
    unknown = [k for k in given if k not in names]
    if unknown:
        raise TypeError(f"report() got an unexpected keyword argument {unknown[0]!r}; its "
                        f"options are {', '.join(names)}.")
    base = options if options is not None else ReportOptions()
    return replace(base, **given) if given else base
