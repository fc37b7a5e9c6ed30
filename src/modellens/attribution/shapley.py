"""Shapley values of a model's predictions with an interventional value function."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..data import Dataset, is_integer
from ..effects.pdp import _sample_rows
from ..engine import DataRows, MaskedRows, evaluate, prepare
from ._coalitions import bit_masks, exact_weights
from .kernel import KernelPlan
from .permutation import PermutationPlan
from .result import Attributions

__all__ = ["shapley", "ALGORITHMS", "MAX_EXACT_FEATURES", "DEFAULT_BACKGROUND"]

ALGORITHMS = ("auto", "exact", "permutation", "kernel")
#: Largest number of features ``algorithm="exact"`` accepts (2**15 coalitions per row).
MAX_EXACT_FEATURES = 15
#: Background rows drawn from ``X`` when ``background=None``.
DEFAULT_BACKGROUND = 100
#: Default permutations (antithetic pairs count twice) of ``algorithm="permutation"``.
DEFAULT_PERMUTATIONS = 20


def default_kernel_samples(d: int) -> int:
    """KernelSHAP's default budget of coalitions per explained row: ``2 d + 2048``."""
    return 2 * d + 2048


def shapley(model, X, *, background=None, algorithm="auto", n_samples=None,
            n_permutations=None, random_state=None, target=None, response_method="auto",
            feature_names=None, chunk_size=None, n_jobs=1, progress=None) -> Attributions:
    r"""Shapley values of each row's prediction, against background data.

    Feature :math:`j`'s Shapley value for the row :math:`x` is its average
    marginal contribution over coalitions :math:`S` of the other features,

    .. math:: \phi_j(x) = \sum_{S \subseteq N \setminus \{j\}}
              \frac{|S|!\,(d - |S| - 1)!}{d!}\,\big(v(S \cup \{j\}) - v(S)\big),

    with the interventional value function
    :math:`v(S) = \frac{1}{m} \sum_{b=1}^m f(x_S, z^{(b)}_{\bar S})`: the
    features outside :math:`S` take the values of background row
    :math:`z^{(b)}` and the prediction is averaged over the :math:`m`
    background rows.  The values add up:
    :math:`\sum_j \phi_j(x) = f(x) - v(\emptyset)`, and the base value
    :math:`v(\emptyset)` is the mean prediction over the background.

    Every (explained row, coalition, background row) is one model row: the
    cost is ``n * coalitions * m`` rows, all planned first and streamed
    through the model in large chunks.  The empty coalition (shared by every
    row) costs ``m`` rows and the full one (``f(x)``) one row per explained row.

    Parameters
    ----------
    model : estimator or callable
        As in :func:`modellens.pdp`.
    X : ndarray or DataFrame of shape (n, d)
        The rows to explain.  DataFrames may hold categorical and string
        columns: a feature outside the coalition takes the background row's
        whole value (its category).
    background : ndarray, DataFrame or int, optional
        Rows that stand in for the absent features, with the columns of
        ``X``.  None (default) draws a random sample of at most
        ``DEFAULT_BACKGROUND = 100`` rows of ``X`` (seeded by
        ``random_state``; a warning says so when ``X`` has more rows); an
        int draws that many.  The cost grows linearly with its size.
    algorithm : {"auto", "exact", "permutation", "kernel"}, default="auto"
        ``"exact"`` evaluates all :math:`2^d` coalitions (up to
        ``MAX_EXACT_FEATURES = 15`` features).  ``"permutation"`` averages
        marginal contributions over random feature orders, in antithetic
        pairs (an order and its reverse).  ``"kernel"`` is KernelSHAP: a
        weighted least-squares fit with the Shapley kernel over enumerated and
        sampled complementary coalitions, the efficiency constraint exact (see
        :mod:`modellens.attribution.kernel`).  ``"auto"`` takes ``"exact"``
        when the kernel budget would cover every coalition anyway (by default
        up to 11 features) and ``"kernel"`` otherwise.
    n_samples : int, optional
        KernelSHAP's budget: coalitions evaluated per explained row (each
        costs ``m`` model rows), default ``2 d + 2048``.  A budget of
        ``2**d - 2`` or more gives the exact values.
    n_permutations : int, optional
        Feature orders per explained row for ``"permutation"`` (default 20),
        drawn as antithetic pairs (an odd number is rounded up).  A pair costs
        at most ``2 (d - 1)`` coalitions.
    random_state : int or Generator, optional
        Seeds the background sample and the sampled coalitions / orders; the
        same seed gives the same numbers.
    target, response_method, feature_names, chunk_size, n_jobs, progress
        As in :func:`modellens.pdp`.

    Returns
    -------
    Attributions
        ``values`` ``(n, d)``; ``base_values`` (the mean background
        prediction, for every row); ``prediction`` (:math:`f(x)`); ``std``:
        the standard error of each value for the sampling algorithms (the
        spread over antithetic pairs, or the delta-method error of the
        KernelSHAP fit; 0 where the budget enumerated every coalition), None
        for ``"exact"``.  ``extra`` records the background used and the cost.

    Notes
    -----
    The sampled coalitions are drawn independently for each explained row, so
    the sampling errors of different rows are independent.
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}.")
    combined = _with_background(X, background)
    dataset, mdl = prepare(model, X if combined is None else combined, target=target,
                           response_method=response_method, feature_names=feature_names)
    n = len(dataset.values) if combined is None else len(X)
    d = dataset.n_features
    rng = np.random.default_rng(random_state)
    algorithm, budget = _choose_algorithm(algorithm, d, n_samples, n_permutations)
    if combined is None:
        bg, note = _background(dataset, background, rng)
    else:
        bg = dataset.values[n:]
        note = f"the {len(bg)} rows passed as background"
    fg = dataset.values[:n]

    if d == 1:
        plan = None
    elif algorithm == "exact":
        plan = _ExactPlan(fg, bg)
    elif algorithm == "permutation":
        plan = PermutationPlan(fg, bg, budget, rng)
    else:
        plan = KernelPlan(fg, bg, budget, rng)

    empty, full = DataRows(bg), DataRows(fg)
    segments = [empty, full] + (plan.segments if plan is not None else [])
    evaluate(mdl, segments, chunk_size=chunk_size, n_jobs=n_jobs, progress=progress,
             desc=f"shapley ({algorithm})")
    v0 = float(empty.result.mean())
    fx = full.result.copy()
    if plan is None:  # one feature owns the whole difference
        values, std = (fx - v0)[:, None], (None if algorithm == "exact" else np.zeros((len(fx), 1)))
    else:
        values, std = plan.estimate(v0, fx)

    n_coal = plan.n_coalitions if plan is not None else 0
    extra = {
        "background": note,
        "n_background": bg.shape[0],
        "n_coalitions": n_coal,
        "n_model_rows": mdl.n_rows,
        "levels": {c.name: c.levels for c in dataset.columns if c.is_categorical},
    }
    if algorithm == "kernel":
        extra["n_samples"] = budget
    elif algorithm == "permutation":
        extra["n_permutations"] = 2 * plan.n_pairs if plan is not None else budget
    return Attributions(
        values=values,
        base_values=np.full(n, v0),
        data=_explained_data(dataset, n),
        feature_names=dataset.feature_names,
        method=f"shapley-{algorithm}",
        std=std,
        output=mdl.output_name,
        prediction=fx,
        kinds=[c.kind for c in dataset.columns],
        extra=extra,
    )


class _ExactPlan:
    """All ``2**d - 2`` proper coalitions for every row, combined by :func:`exact_weights`."""

    def __init__(self, foreground, background):
        self.n, self.d = foreground.shape
        masks = bit_masks(np.arange(1, 2 ** self.d - 1), self.d)
        self._seg = MaskedRows(foreground, background, masks)
        self.segments = [self._seg]
        self.n_coalitions = np.full(self.n, 2 ** self.d - 2)

    def estimate(self, v0, fx):
        v = np.empty((self.n, 2 ** self.d))
        v[:, 0] = v0
        v[:, -1] = fx
        v[:, 1:-1] = self._seg.result.reshape(self.n, -1)
        return v @ exact_weights(self.d), None


def _choose_algorithm(algorithm, d, n_samples, n_permutations):
    """Validate the budget options; resolve ``"auto"``.  Returns ``(algorithm, budget)``."""
    if n_samples is not None:
        if algorithm not in ("auto", "kernel"):
            raise ValueError(f"n_samples is the budget of algorithm='kernel'; "
                             f"algorithm={algorithm!r} does not use it.")
        if not is_integer(n_samples) or n_samples < 2:
            raise ValueError(f"n_samples must be an integer >= 2 (coalitions per explained "
                             f"row), got {n_samples!r}.")
    if n_permutations is not None:
        if algorithm != "permutation":
            raise ValueError("n_permutations is the budget of algorithm='permutation'; "
                             f"algorithm={algorithm!r} does not use it.")
        if not is_integer(n_permutations) or n_permutations < 2:
            raise ValueError(f"n_permutations must be an integer >= 2, got {n_permutations!r}.")
    kernel_budget = int(n_samples) if n_samples is not None else default_kernel_samples(d)
    if algorithm == "auto":
        exact_fits = d <= MAX_EXACT_FEATURES and 2 ** d - 2 <= kernel_budget
        algorithm = "exact" if exact_fits else "kernel"
    if algorithm == "exact":
        if d > MAX_EXACT_FEATURES:
            raise ValueError(
                f"algorithm='exact' evaluates all 2**d coalitions: with d={d} features that is "
                f"{2 ** d:,} coalitions times the background rows per explained row, too many. "
                f"Use algorithm='kernel' (budget n_samples=) or 'permutation' "
                f"(budget n_permutations=); 'exact' takes at most {MAX_EXACT_FEATURES} features."
            )
        return "exact", None
    if algorithm == "permutation":
        return "permutation", int(n_permutations or DEFAULT_PERMUTATIONS)
    return "kernel", kernel_budget


def _with_background(X, background):
    """``X`` with the background rows below it when they hold categories, else None.

    Category levels are learned from the data; encoding both together gives
    levels seen only in the background a code too.
    """
    if isinstance(X, pd.DataFrame) and isinstance(background, pd.DataFrame):
        names, bg_names = [str(c) for c in X.columns], [str(c) for c in background.columns]
        if sorted(names) != sorted(bg_names):
            raise ValueError(f"background columns {bg_names} do not match the columns of X "
                             f"{names}.")
        textual = [c for c in X.columns
                   if not pd.api.types.is_numeric_dtype(X[c].dtype)
                   or isinstance(X[c].dtype, pd.CategoricalDtype)]
        if not textual:
            return None
        bg = background.set_axis(bg_names, axis=1)[names].set_axis(X.columns, axis=1)
        # the model must see X's dtypes (category order, ordered flag, string dtype),
        # which a concat of differing dtypes would turn into plain objects
        cast = {}
        for c in textual:
            dtype = X[c].dtype
            if isinstance(dtype, pd.CategoricalDtype):
                present = pd.unique(bg[c].dropna().astype(object))
                unknown = [v for v in present if v not in set(dtype.categories)]
                if unknown:
                    raise ValueError(f"background column {c!r} holds levels {unknown} that are "
                                     f"not categories of X[{c!r}] ({list(dtype.categories)}).")
            cast[c] = dtype
        bg = bg.astype(cast)
        return pd.concat([X, bg], ignore_index=True)
    if isinstance(X, np.ndarray) and isinstance(background, np.ndarray) \
            and (X.dtype.kind not in "biuf" or background.dtype.kind not in "biuf") \
            and X.ndim == background.ndim == 2:
        if X.shape[1] != background.shape[1]:
            raise ValueError(f"background has {background.shape[1]} columns but X has "
                             f"{X.shape[1]}.")
        return np.concatenate([X.astype(object), background.astype(object)])
    return None


def _background(dataset: Dataset, background, rng):
    """Encoded background rows and a sentence saying where they came from."""
    n = dataset.n_rows
    if background is None or is_integer(background):
        size = DEFAULT_BACKGROUND if background is None else int(background)
        if size < 1:
            raise ValueError(f"background as a count must be positive, got {background}.")
        rows = _sample_rows(n, size, rng)
        if rows is None:
            if background is None and n == 1:
                raise ValueError("background=None takes the background from X, but X holds a "
                                 "single row (its Shapley values would all be 0); pass "
                                 "background= (for example training data).")
            if background is None and n < 20:
                warnings.warn(f"background=None: using the {n} rows of X as background data; "
                              "so few rows make a rough reference. Pass background= (for "
                              "example training data).", UserWarning, stacklevel=3)
            return dataset.values, f"all {n} rows of X"
        note = (f"a random sample of {rows.size} of the {n} rows of X "
                f"(seeded by random_state)")
        if background is None:
            warnings.warn(
                f"background=None: using {note} as background data. Pass background= "
                "(rows or a count) to choose it.", UserWarning, stacklevel=3)
        return dataset.values[rows], note
    if isinstance(background, bool) or np.isscalar(background):
        raise TypeError(f"background must be rows (array or DataFrame) or a count, "
                        f"got {background!r}.")
    has_categorical = any(c.is_categorical for c in dataset.columns)
    if dataset.is_frame and has_categorical and not hasattr(background, "columns"):
        raise TypeError("X is a DataFrame with categorical columns; pass background as a "
                        "DataFrame with the same columns so that categories can be matched.")
    bg = Dataset.from_data(background, like=dataset)
    if bg.n_features != dataset.n_features:
        raise ValueError(f"background has {bg.n_features} columns but X has "
                         f"{dataset.n_features}.")
    return bg.values, f"the {bg.n_rows} rows passed as background"


def _explained_data(dataset: Dataset, n: int) -> np.ndarray:
    """The explained rows (the first ``n``) as the user knows them: labels for categories."""
    values = dataset.values[:n]
    if not any(c.is_categorical for c in dataset.columns):
        return values.copy()
    out = np.empty(values.shape, dtype=object)
    for j, col in enumerate(dataset.columns):
        x = values[:, j]
        if col.is_categorical:
            missing = np.isnan(x)
            out[:, j] = None
            out[~missing, j] = dataset.labels(j, x[~missing])
        else:
            out[:, j] = x
    return out
