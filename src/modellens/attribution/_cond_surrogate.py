r"""``dependence="surrogate"``: one regressor of :math:`f(x)` on :math:`x_S`, no draws.

The conditional expectation :math:`E[f(X) | X_S = x_S]` is the best predictor
of :math:`f(X)` from :math:`X_S`, so one model trained on masked copies of
the background estimates every coalition's worth at once (shapr's
``regression_surrogate``, Olsen et al. 2024): each background row
:math:`z` is copied ``SURROGATE_MASKS`` times, each copy with a random
coalition (its size uniform on :math:`1..d-1`, then its members uniform),
the absent features set missing and the coalition's indicator appended; the
target is :math:`f(z)`.  A :class:`~sklearn.ensemble.HistGradientBoostingRegressor`
(which routes missing values and takes categorical codes natively) is fit
per output of the model.  Its out-of-fold mean squared error (5 folds, the
copies of a background row kept in one fold) is reported in
``diagnostics["surrogate_oof_mse"]``: it estimates MSEv on the background's
own rows, plus the noise of :math:`f` around its conditional expectation.

A worth costs no model rows: the coalition rows are answered by the
surrogate (the segment's own ``answer``), through the same engine.
"""

from __future__ import annotations

import numpy as np

from ..engine import DataRows, Plan, Segment, run_outputs
from ._conditional import EstimatedGame, coalition_queries
from ._leaf_rows import CoalitionQueries, set_queries

__all__ = ["SURROGATE_MASKS", "Surrogate", "SurrogateRows", "SurrogateGame"]

#: Masked copies of each background row in the surrogate's training set.
SURROGATE_MASKS = 10
#: Folds of the out-of-fold error.
SURROGATE_FOLDS = 5


class _Predictions(Plan):
    def __init__(self, data):
        self.segments = [DataRows(data)]

    def reduce(self):
        return np.asarray(self.segments[0].result, dtype=float).copy()


def _masked(values, masks):
    """The surrogate's inputs: absent features missing, then the coalition's indicators."""
    return np.hstack([np.where(masks, values, np.nan), masks.astype(float)])


class Surrogate:
    """The fitted regressors (one per output) of :math:`f` on masked rows."""

    def __init__(self, model, background, categorical, rng):
        from sklearn.ensemble import HistGradientBoostingRegressor

        m, d = background.shape
        targets = np.column_stack(run_outputs(model, lambda one: [_Predictions(background)],
                                              desc="shapley (surrogate targets)"))
        targets = targets.reshape(m, -1)
        sizes = rng.integers(1, d, size=(m, SURROGATE_MASKS))
        keys = rng.random((m, SURROGATE_MASKS, d))
        ranks = np.argsort(np.argsort(keys, axis=2), axis=2)
        masks = (ranks < sizes[..., None]).reshape(-1, d)
        rows = np.repeat(np.arange(m), SURROGATE_MASKS)
        inputs = _masked(background[rows], masks)
        cats = np.concatenate([np.asarray(categorical, dtype=bool), np.zeros(d, dtype=bool)])
        seed = int(rng.integers(2 ** 31))

        def fit(x, y):
            return HistGradientBoostingRegressor(categorical_features=cats if cats.any()
                                                 else None, random_state=seed).fit(x, y)

        fold = rng.permutation(m)[rows] % SURROGATE_FOLDS
        errors = []
        for c in range(targets.shape[1]):
            y = targets[rows, c]
            oof = np.empty_like(y)
            for k in range(SURROGATE_FOLDS):
                test = fold == k
                oof[test] = fit(inputs[~test], y[~test]).predict(inputs[test])
            errors.append(float(np.mean((oof - y) ** 2)))
        self.regressors = [fit(inputs, targets[rows, c]) for c in range(targets.shape[1])]
        self.oof_mse = errors[0] if len(errors) == 1 else errors

    def predict(self, inputs):
        preds = np.column_stack([r.predict(inputs) for r in self.regressors])
        return preds[:, 0] if preds.shape[1] == 1 else preds


class SurrogateRows(CoalitionQueries, Segment):
    """One row per (explained row, coalition), answered by the surrogate: ``result`` is
    :math:`\\hat v_i(S)`."""

    def __init__(self, surrogate, foreground, masks, *, rows=None):
        self.surrogate = surrogate
        set_queries(self, foreground, masks, rows)
        self.n_rows, self.width, self.group = self.n_queries, 2 * foreground.shape[1], 1

    def call_key(self):
        return ("surrogate", id(self.surrogate), self.width)

    def answer(self, model, rows):
        return self.surrogate.predict(rows)

    def fill(self, start, stop, out):
        fg, masks = coalition_queries(self, np.arange(start, stop))
        out[...] = _masked(self.foreground[fg], masks)


class SurrogateGame(EstimatedGame):
    """A table whose worths the surrogate predicts (see the module)."""

    def __init__(self, model, dataset, n, background, note, surrogate):
        super().__init__(model, dataset, n, background, note)
        self.surrogate = surrogate
        self.rows_per_coalition = 0  # no model rows: the surrogate answers
        self.diagnostics = {**self.diagnostics, "dependence": "surrogate"}

    def _segment(self, masks, rows):
        return SurrogateRows(self.surrogate, self.foreground, masks, rows=rows)

    @property
    def sampler_diagnostics(self) -> dict:
        return {"surrogate_oof_mse": self.surrogate.oof_mse,
                "surrogate": f"HistGradientBoostingRegressor on {SURROGATE_MASKS} masked "
                             "copies of each background row"}
