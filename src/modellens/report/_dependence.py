"""How well each feature is predicted by the others, and where PD leaves the data."""

from __future__ import annotations

import numpy as np

from ._warnings import quiet

__all__ = ["dependence"]

#: PD evaluates a (row, grid value) pair off the data when the grid value minus what
#: the row's other features predict lies outside these quantiles of the residuals
#: (numeric features), or when the other features make the level this many times
#: rarer than its share in the data (categorical features).
TAIL = 0.01
OFF_DATA_RATIO = 10.0
#: a feature gets a warning when at least this share of its PD points is off the data
WARN_SHARE = 0.25
#: Rows the measures read at most (a seeded sample of those given): a cross-validated score
#: and a share of points are stable to a few hundredths on a thousand rows, and the fits'
#: cost grows with the rows.
MAX_ROWS = 1000
#: a categorical feature with more levels is predicted as its most frequent levels plus
#: one "other" class (a classifier of 3,000 classes would take minutes)
MAX_CLASSES = 20


def dependence(dataset, grids, *, random_state=0, n_splits=3, progress=None, min_rows=0,
               max_rows=MAX_ROWS):
    """Dependence of each feature on the others, and PD's share of points off the data.

    For each feature :math:`j` an additive model of the other features
    predicts :math:`x_j`: a step function of each other feature (its
    ``FIT_BINS`` quantile bins, a categorical one's levels, missing values a
    bin of their own), fit by ridge backfitting (:func:`additive_oof`);
    beyond ``INPUTS`` others, of the ``INPUTS`` whose bins explain most of
    :math:`x_j` (see :func:`_screen`).  It sees any shape of dependence on
    each other feature, not their interactions (a feature equal to the
    product of two others is not explained).  Out of fold with
    ``n_splits``-fold cross-validation, all folds in one pass:

    - numeric :math:`x_j`: the score is the cross-validated
      :math:`R^2 = 1 - \\sum_i (x_{ij} - \\hat x_{ij})^2 / \\sum_i (x_{ij} - \\bar x_j)^2`,
      the share of its variance the other features explain;
    - categorical or boolean :math:`x_j`: the score is the chance-adjusted
      balanced accuracy :math:`(\\mathrm{BA} - 1/K) / (1 - 1/K)` over its
      :math:`K` levels (0: no better than guessing, 1: determined by the
      others), the classification counterpart of :math:`R^2`.

    Partial dependence sets :math:`x_j` to every grid value in every row.
    The pair (row :math:`i`, grid value :math:`g`) lies **off the data** when
    :math:`g - \\hat x_{ij}` is outside the 1% and 99% quantiles of the
    out-of-fold residuals :math:`x_{ij} - \\hat x_{ij}`, or, for a level
    :math:`g` of a categorical feature, when
    :math:`\\hat P(x_j = g \\mid x_{-j}) < \\hat P(x_j = g) / 10`.  From the
    share of such pairs the share of grid values outside the 1% and 99%
    quantiles of :math:`x_j` itself is subtracted: what remains is
    extrapolation caused by the dependence, which the report warns about from
    25% (a grid value in the feature's own sparse tails is as sparse for ALE).

    Below ``min_rows`` rows a cross-validated score is too noisy to read (on
    54 rows two features correlated at 0.84 can score R^2 = -0.24): no score
    is given, and the note names the largest Spearman rank correlation with
    another feature instead.

    Parameters
    ----------
    dataset : Dataset
        The rows to use (the report passes its sample).
    grids : dict
        Feature position -> the grid values (codes for categorical features)
        PD uses for it.
    min_rows : int
        Fewest rows with a value of the feature for a score.
    max_rows : int
        Most rows read: beyond, a sample of this many (drawn with
        ``random_state``).

    Returns
    -------
    list of dict
        Per feature: ``score``, ``score_name``, ``off_data`` (share of PD
        points off the data, NaN without a grid) and ``note`` (why a score is
        missing).
    """
    if dataset.n_rows > max_rows:
        from ..data import Dataset

        rows = np.sort(np.random.default_rng(random_state).choice(dataset.n_rows, max_rows,
                                                                   replace=False))
        dataset = Dataset(dataset.values[rows], dataset.columns, dataset.is_frame,
                          dataset.column_labels)
    return _dependence(dataset, grids, random_state, n_splits, progress, min_rows)


def _rank_partner(values, j):
    """The largest |Spearman correlation| of column ``j`` with another column, and its index."""
    import pandas as pd

    frame = pd.DataFrame(values)
    corr = frame.corr(method="spearman").iloc[j].drop(index=j).abs()
    corr = corr.dropna()
    if corr.empty:
        return float("nan"), None
    k = int(corr.idxmax())
    return float(corr.loc[k]), k


#: Other features each feature's model reads: the ones a screen finds most related to
#: it.  With a fixed number of inputs every fit costs rows x INPUTS x sweeps, so the whole
#: measure grows linearly with rows x features instead of with rows x features^2.
INPUTS = 10
#: Bins of a numeric feature in the screen (quantiles; missing values are one more bin), and
#: most levels of a categorical one (the rest one bin).
SCREEN_BINS = 16


def _screen(values, is_cat, k=INPUTS) -> list:
    """For each column, the ``k`` other columns whose bins explain most of it.

    The measure is the correlation ratio: the share of a column's variance
    (for a categorical column, of its level indicators' variances) between
    the bins of the other column (quantile bins of a numeric column, its most
    frequent levels for a categorical one, missing values a bin of their
    own).  It sees any shape of dependence, not only a monotone one, and
    costs one pass over the rows per column: rows x features x targets.
    """
    n, d = values.shape
    if d - 1 <= k:
        return [[c for c in range(d) if c != j] for j in range(d)]
    targets, owners = [], []
    for j in range(d):
        x = values[:, j]
        if is_cat[j]:
            codes = _top_levels(np.nan_to_num(x, nan=-2.0), SCREEN_BINS)
            columns = [(codes == c).astype(float) for c in np.unique(codes)]
        else:
            columns = [np.where(np.isnan(x), np.nanmean(x) if (~np.isnan(x)).any() else 0.0,
                                x)]
        for col in columns:
            targets.append(col - col.mean())
            owners.append(j)
    T = np.column_stack(targets)
    total = np.einsum("ij,ij->j", T, T)
    owner = np.asarray(owners)
    explained = np.zeros((d, d))  # [column explained, column binned]
    for c in range(d):
        bins = _bins(values[:, c], is_cat[c])
        order = np.argsort(bins, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(bins[order]) != 0])
        sums = np.add.reduceat(T[order], starts, axis=0)
        counts = np.diff(np.r_[starts, n])
        between = np.sum(sums ** 2 / counts[:, None], axis=0)
        explained[:, c] = np.bincount(owner, between, minlength=d) / np.maximum(
            np.bincount(owner, total, minlength=d), 1e-300)
    np.fill_diagonal(explained, -np.inf)
    return [sorted(np.argsort(-explained[j], kind="stable")[:k].tolist()) for j in range(d)]


def _bins(x, categorical, n_bins=SCREEN_BINS) -> np.ndarray:
    """Bin codes of a column (missing values: bin -1): ``n_bins`` quantile bins of a
    numeric column, its ``n_bins`` most frequent levels of a categorical one."""
    out = np.full(x.shape, -1.0)
    present = ~np.isnan(x)
    if not present.any():
        return out
    if categorical:
        out[present] = _top_levels(x[present], n_bins)
        return out
    edges = np.unique(np.quantile(x[present], np.linspace(0, 1, n_bins + 1)[1:-1]))
    out[present] = np.searchsorted(edges, x[present], side="right")
    return out


def _dependence(dataset, grids, random_state, n_splits, progress, min_rows=0):
    values = dataset.values
    d = values.shape[1]
    is_cat = np.array([c.is_categorical or c.is_boolean for c in dataset.columns])
    few = np.array([np.unique(values[:, k][~np.isnan(values[:, k])]).size < 2 for k in range(d)],
                   dtype=bool)
    inputs = _screen(values, is_cat)
    settings = dict(n_splits=n_splits, random_state=random_state, min_rows=min_rows)

    def one(j):
        try:
            return _judge(dataset, j, inputs[j], is_cat, few, grids.get(j), **settings)
        except ValueError as exc:  # e.g. too few rows of a level for its folds
            return {"score": np.nan, "off_data": np.nan,
                    "score_name": "balanced accuracy (adjusted)" if is_cat[j] else "R^2",
                    "note": "not judged: " + " ".join(str(exc).split())}

    # the fits are a few array products each (milliseconds): in turn, in this thread
    jobs = map(one, range(d))
    with quiet():
        if progress:
            from .._progress import progress_bar

            jobs = progress_bar(jobs, total=d, desc="modellens report: feature dependence")
        return list(jobs)


def _judge(dataset, j, inputs, is_cat, few, grid, *, n_splits, random_state, min_rows):
    """Feature ``j``'s entry: its score from the columns ``inputs`` and its share off the data."""
    values = dataset.values
    d = values.shape[1]
    x = values[:, j]
    keep = ~np.isnan(x)
    others = values[keep][:, inputs]
    target = x[keep]
    entry = {"score": np.nan, "off_data": np.nan, "note": "",
             "score_name": "balanced accuracy (adjusted)" if is_cat[j] else "R^2"}
    levels = np.unique(target)
    if d < 2:
        entry["note"] = "no other features"
        return entry
    if levels.size < 2:
        entry["note"] = "all missing" if levels.size == 0 else "constant"
        return entry
    if target.size < max(2 * n_splits, min_rows):
        rho, k = _rank_partner(values, j)
        entry["note"] = "too few rows to judge" + (
            f"; rank correlation {rho:.2f} with {dataset.columns[k].name}"
            if k is not None else "")
        return entry
    cat_mask = is_cat[inputs].copy()
    # a column of at most one value besides missing ones says no more than whether it
    # is missing
    for k in np.flatnonzero(few[inputs]):
        others[:, k] = np.isnan(others[:, k])
        cat_mask[k] = False
    fit = dict(n_splits=n_splits, random_state=random_state)
    if is_cat[j]:
        entry.update(_categorical(others, target, cat_mask, grid, **fit))
    else:
        entry.update(_numeric(others, target, cat_mask, grid, **fit))
    return entry


def _categorical(others, target, cat_mask, grid, *, n_splits, random_state) -> dict:
    """Chance-adjusted balanced accuracy of a categorical feature, and its rare (row, level)
    pairs."""
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.model_selection import KFold, StratifiedKFold

    target = _top_levels(target, MAX_CLASSES)
    classes, codes, counts = np.unique(target, return_inverse=True, return_counts=True)
    splits = StratifiedKFold(n_splits, shuffle=True, random_state=random_state) \
        if counts.min() >= n_splits else KFold(n_splits, shuffle=True,
                                                random_state=random_state)
    fold = _folds(splits, others, codes)
    indicators = np.zeros((codes.size, classes.size))
    indicators[np.arange(codes.size), codes] = 1.0
    # each level's probability given the others: an additive model of the log-odds
    proba = additive_oof(_design(others, cat_mask), indicators, fold, n_splits, softmax=True)
    guess = np.argmax(proba, axis=1)
    out = {"score": float(balanced_accuracy_score(codes, guess, adjusted=True))}
    if grid is not None and len(grid):
        share = counts / counts.sum()
        col_of = {int(c): i for i, c in enumerate(classes)}
        rare = []
        for g in np.asarray(grid, dtype=float):
            if np.isnan(g) or int(g) not in col_of:
                continue
            i = col_of[int(g)]
            rare.append(proba[:, i] < share[i] / OFF_DATA_RATIO)
        if rare:
            out["off_data"] = float(np.mean(rare))
    return out


def _numeric(others, target, cat_mask, grid, *, n_splits, random_state) -> dict:
    """Cross-validated R^2 of a numeric feature, and PD's share of points off the data."""
    from sklearn.model_selection import KFold

    fold = _folds(KFold(n_splits, shuffle=True, random_state=random_state), others, target)
    pred = additive_oof(_design(others, cat_mask), target[:, None], fold, n_splits)[:, 0]
    resid = target - pred
    sst = float(np.sum((target - target.mean()) ** 2))
    out = {"score": 1.0 - float(np.sum(resid ** 2)) / sst}
    if grid is not None and len(grid):
        g = np.asarray(grid, dtype=float)[None, :]
        # off the data given the other features, less what is off the data for
        # the feature alone (grid points in its own sparse tails)
        lo, hi = np.quantile(resid, [TAIL, 1 - TAIL])
        given = ((g - pred[:, None]) < lo) | ((g - pred[:, None]) > hi)
        m_lo, m_hi = np.quantile(target, [TAIL, 1 - TAIL])
        alone = (g < m_lo) | (g > m_hi)
        out["off_data"] = max(0.0, float(given.mean() - alone.mean()))
    return out


def _folds(splits, others, target) -> np.ndarray:
    """Each row's fold (the fold whose model predicts it out of fold)."""
    fold = np.empty(len(target), np.intp)
    for f, (_, test) in enumerate(splits.split(others, target)):
        fold[test] = f
    return fold


#: Bins of a numeric input of the fits (its quantiles; missing values one more bin), and
#: most levels of a categorical one (the rest one bin).
FIT_BINS = 32
#: Boosting steps (each adds ``RATE`` times the best input's bin means of the residuals),
#: and the pseudo-rows that pull a bin of few rows toward zero.
STEPS = 100
RATE = 0.3
RIDGE = 1.0
#: Steps past the least out-of-fold error after which the boosting stops.
PATIENCE = 15


def _design(others, cat_mask) -> list:
    """The fits' inputs: each column's bin indicators ``(n, B)`` (missing values a bin of
    their own), and for a numeric column also its centred values ``(n, 1)`` (missing
    values 0), so that a straight line is not cut into steps."""
    from scipy import sparse

    n = others.shape[0]
    blocks = []
    for k in range(others.shape[1]):
        x = others[:, k]
        if cat_mask[k]:
            bins = np.where(np.isnan(x), -1.0, _top_levels(np.nan_to_num(x, nan=-2.0), FIT_BINS))
        else:
            bins = _bins(x, False, FIT_BINS)
        codes = np.unique(bins, return_inverse=True)[1].reshape(-1)
        blocks.append(sparse.csr_matrix((np.ones(n), (np.arange(n), codes)),
                                        shape=(n, int(codes.max()) + 1)))
        present = ~np.isnan(x)
        if not cat_mask[k] and present.any() and np.ptp(x[present]) > 0:
            line = np.where(present, x - x[present].mean(), 0.0)
            blocks.append(sparse.csr_matrix(line[:, None]))
    return blocks


def additive_oof(blocks, Y, fold, n_folds, *, softmax=False, steps=STEPS, rate=RATE,
                 ridge=RIDGE, patience=PATIENCE) -> np.ndarray:
    r"""Out-of-fold predictions ``(n, C)`` of ``Y`` by an additive model of the inputs.

    ``blocks`` are the inputs, each a sparse ``(n, B)`` matrix: a column's
    bin indicators (its step function) or its values (a line).  For each fold
    a model :math:`F = \mu + \sum_p Z_p \beta_p` is fit on the other folds'
    rows by componentwise boosting (Buhlmann and Yu 2003): each step takes a
    Newton step of every input on its own (:math:`\beta_p = Z_p^T r /
    (\mathrm{diag}(Z_p^T W Z_p) + \mathrm{ridge})` with the residuals
    :math:`r = y - \hat y`; for bins the residuals' bin means), keeps the
    input whose step removes the most loss and adds ``rate`` times it.  The
    prediction :math:`\hat y` is :math:`F` (squared error, :math:`W = 1`) or,
    with ``softmax``, the softmax of :math:`F` over the columns of ``Y`` (its
    classes' indicators: multinomial log-loss, :math:`W = \hat y (1 -
    \hat y)`), so that a class the inputs rule out gets a probability near 0.
    The number of steps is the one whose out-of-fold squared error (over every
    fold and column) is least: once the inputs related to ``y`` are fit,
    further steps fit noise and that error grows; ``patience`` steps past the
    least stop the boosting (None: every step, the last kept).  Every fold
    advances at once: :math:`F` is kept as ``(n, folds * C)`` and the
    residuals are zero where a row does not train that fold's model, so one
    product with the inputs sums every fold's bins.  Costs ``steps * n *
    inputs * folds * C``: linear in rows and inputs.
    """
    from scipy import sparse

    n, C = Y.shape
    train = fold[:, None] != np.arange(n_folds)[None, :]  # (n, folds)
    mask = np.repeat(train, C, axis=1).astype(float)
    means = np.stack([Y[train[:, f]].mean(axis=0) if train[:, f].any() else np.zeros(C)
                      for f in range(n_folds)])  # (folds, C)
    start = np.log(np.clip(means, 1e-3, None)) if softmax else means
    F = np.tile(start.reshape(1, -1), (n, 1))  # (n, folds * C): every fold's model, every row
    target = np.tile(Y, n_folds)
    offsets = np.concatenate([[0], np.cumsum([b.shape[1] for b in blocks])])
    Z_t = sparse.hstack(blocks).T.tocsr()
    Z2_t = Z_t.multiply(Z_t).tocsr()
    rows = np.arange(n)

    def answer(F):
        if not softmax:
            return F
        E = np.exp(F.reshape(n, n_folds, C) - F.reshape(n, n_folds, C).max(axis=2,
                                                                            keepdims=True))
        return (E / E.sum(axis=2, keepdims=True)).reshape(n, -1)

    def own_fold(A):
        return A.reshape(n, n_folds, C)[rows, fold]

    best = own_fold(answer(F))
    best_error, since = float(np.sum((Y - best) ** 2)), 0
    for _ in range(steps):
        A = answer(F)
        sums = Z_t @ ((target - A) * mask)
        weight = A * (1 - A) * mask if softmax else mask
        fit = sums / (Z2_t @ weight + ridge)
        # the loss each input's step removes, per fold (summed over the columns)
        gain = np.add.reduceat(fit * sums, offsets[:-1], axis=0).reshape(
            len(blocks), n_folds, C).sum(axis=2)
        for f, p in enumerate(np.argmax(gain, axis=0)):
            cols = slice(f * C, (f + 1) * C)
            F[:, cols] += blocks[p] @ (rate * fit[offsets[p]:offsets[p + 1], cols])
        oof = own_fold(answer(F))
        error = float(np.sum((Y - oof) ** 2))
        if patience is None or error < best_error:
            best, best_error, since = oof, error, 0
        else:
            since += 1
            if since >= patience:  # past the least error for long: only noise is left
                break
    return best


def _top_levels(codes, k):
    """Level codes with all but the ``k`` most frequent levels merged into one (code -1)."""
    levels, counts = np.unique(codes, return_counts=True)
    if levels.size <= k:
        return codes
    keep = levels[np.argsort(-counts, kind="stable")[:k]]
    return np.where(np.isin(codes, keep), codes, -1.0)
