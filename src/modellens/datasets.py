"""Bundled default data and model for the demo and the report."""

from __future__ import annotations

import pandas as pd


def load_demo(random_state: int = 0):
    """scikit-learn's diabetes data (shipped with scikit-learn) and a fitted model.

    Returns
    -------
    model : HistGradientBoostingRegressor
        Fitted on all 442 patients.
    X : DataFrame of shape (442, 10)
    y : Series
        Disease progression one year after baseline.
    """
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import HistGradientBoostingRegressor

    data = load_diabetes(as_frame=True, scaled=False)
    X = data.data.copy()
    X["sex"] = pd.Categorical(X["sex"].map({1.0: "female", 2.0: "male"}))
    y = data.target
    model = HistGradientBoostingRegressor(max_iter=200, learning_rate=0.05,
                                          categorical_features="from_dtype",
                                          random_state=random_state)
    from threadpoolctl import threadpool_limits

    # 442 rows: OpenMP's threads cost more than they share out, and on a busy machine they
    # spin waiting for each other (30 s instead of 1 s); the fitted model is the same
    with threadpool_limits(1, user_api="openmp"):
        model.fit(X, y)
    return model, X, y
