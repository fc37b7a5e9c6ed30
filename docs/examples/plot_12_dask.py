"""
Scaling out with Dask
=====================

Every method plans the model rows it needs and evaluates them in large
chunks.  ``ml.config(client=...)`` sends those chunks to a Dask cluster: the
model and a description of the rows go to the workers once, the rows are
built and evaluated there, and the partial sums come back in a fixed order,
so the numbers are **bit for bit** those of a local run, whatever the number
of workers.

A real cluster would be ``Client("scheduler-address:8786")``.  To keep the
documentation build quick and self-contained this example starts a tiny
in-process cluster (two workers, threads, no dashboard); with a model that
holds the GIL you would use processes (``processes=True``, or simply
``ml.config(n_workers=4)``, which starts and closes a local cluster for
you).
"""

import numpy as np
from dask.distributed import Client, LocalCluster
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor

import modellens as ml

X, y = load_diabetes(return_X_y=True, as_frame=True)
model = HistGradientBoostingRegressor(max_iter=50, random_state=0).fit(X, y)

local = ml.ale(model, X, ["bmi", "s5"], bins=10)

with (
    LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        dashboard_address=None,
    ) as cluster,
    Client(cluster) as client,
):
    with ml.config(client=client, chunk_size=1024):
        print(
            "inside:",
            {k: v for k, v in ml.get_config().items() if k != "client"},
        )
        remote = ml.ale(model, X, ["bmi", "s5"], bins=10)

print(
    "outside, the options are back to their defaults:",
    ml.get_config()["chunk_size"],
)
for feature in ["bmi", "s5"]:
    same = np.array_equal(local[feature].values, remote[feature].values)
    print(f"{feature}: identical to the local run: {same}")

# %%
# ``ml.config`` also holds the local execution options, for a block of code:
# ``chunk_size`` (rows per model call), ``n_jobs`` (threads) and ``progress``
# (a progress bar on long runs).  A keyword given to a function wins over the
# block's setting.

with ml.config(n_jobs=2, progress=False):
    effects = ml.pdp(
        model, X, ["bmi"], grid=10, n_jobs=1
    )  # n_jobs=1 wins here
axes = effects.plot()

# %%
# Explaining every row of a Dask DataFrame
# ----------------------------------------
# ``ml.shapley`` and ``ml.lime`` of a Dask DataFrame return a
# :class:`~modellens.DistributedAttributions`: a lazy Dask DataFrame of the
# values with the partitions and index of the input, each partition explained
# where it lies (``attr.to_parquet(path)`` writes it from the workers).  The
# values equal the in-memory ones, whatever the partitioning; ``summary()``
# reads them once for the global importance and a stated sample of rows.

import dask.dataframe as dd

ddf = dd.from_pandas(X, npartitions=4)
attr = ml.shapley(model, ddf)  # TreeSHAP: a tree model and no background
print(attr)
in_memory = ml.shapley(model, X)
print(
    "equal to the in-memory values:",
    np.allclose(attr.frame[list(X.columns)].compute(), in_memory.values),
)
summary = attr.summary(sample=200, random_state=0)
assert isinstance(attr, ml.DistributedAttributions)
assert isinstance(summary, ml.AttributionSummary)
print(summary.importance.sort_values(ascending=False).head(3))
ax = summary.plot_beeswarm()
