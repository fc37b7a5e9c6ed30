"""Out-of-core data: PD, M-plots, ALE and DALE of a Dask DataFrame or Dask array.

The rows never come to the client.  One pass over the data computes what the
bins and grids need (Dask's approximate quantiles, the minimum and maximum);
a second pass runs, for every partition where it lies, the plan an in-memory
call makes for those rows (the engine on that worker, chunk by chunk) and
reduces it there to a few numbers per bin or grid point: counts, means and
sums of squared deviations.  The client merges them in partition order (the
pairwise update of Chan, Golub & LeVeque), so no partition's rows or
predictions leave its worker.

Quantile tolerance
------------------
Bin edges (ALE) and neighbourhoods (M-plots) of ``bins=int`` come from
``dask.dataframe``'s approximate quantiles, asked at ``QUANTILE_STEPS + 1``
evenly spaced probabilities and at the ``k / K`` of the bins: each partition's
quantiles are exact, and merging them interpolates the combined CDF between
them, so an edge's share of the data below it is within about
``1 / QUANTILE_STEPS`` (0.1%) of ``k / K`` (tested with shuffled and with
sorted partitions).  The edges lie between data values (interpolated, where
the in-memory edges are data values), so the curves agree with those of the
same data in memory within what moving each edge by that share of the data
changes (in the tests: less than the curve's own confidence band); with the
same explicit edges they agree to float rounding.

The client holds no rows: the first rows of the first partition (for the
columns' names and dtypes) and, per feature and partition, a few numbers per
bin.  Pass ``client=`` (``ml.config``) to send the model to the workers once;
without one, Dask's default scheduler runs the partitions.  No progress bar.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._config import Options
from .._validation import InvalidParameterError, ModellensWarning, is_integer
from ..data import Dataset, resolve_features
from ..engine import DataRows, GridRows, compact_index, evaluate, run
from ..models import prepare
from ._grid import DEFAULT_POINTS
from .binning import bin_index, check_edges, moment_stats
from .result import Band, Effect, Effects

__all__ = ["is_dask_input", "dask_ale", "dask_dale", "dask_pdp", "dask_mplot",
           "QUANTILE_STEPS"]

#: Evenly spaced probabilities (besides those asked) at which quantiles are merged.
QUANTILE_STEPS = 1000
#: Rows read from the first partition to learn the columns' names and dtypes.
_HEAD_ROWS = 1000
#: Values of each feature kept (spread over the partitions) as ``Effect.feature_values``.
FEATURE_SAMPLE = 10_000


def is_dask_input(X) -> bool:
    """A Dask DataFrame, Series or array (recognised without importing Dask)."""
    return hasattr(X, "__dask_graph__") and (hasattr(X, "npartitions") or hasattr(X, "chunks"))


def _import_dask():
    try:
        import dask
        import dask.dataframe as dd
    except ImportError as exc:
        raise ImportError("Dask input needs dask[dataframe], which is not installed; install "
                          "the extra: pip install \"modellens[dask]\"") from exc
    return dask, dd


class _Table:
    """The partitions of a Dask input and the schema of its first rows."""

    def __init__(self, X, feature_names, what):
        dask, dd = _import_dask()
        import dask.array as da

        if not isinstance(X, da.Array):
            if X.ndim == 1:
                X = X.to_frame()
            self.parts = list(X.to_delayed())
            with warnings.catch_warnings():  # a short first partition is fine
                warnings.simplefilter("ignore", UserWarning)
                head = X.head(_HEAD_ROWS, npartitions=1, compute=True)
            frame = X
        else:
            if X.ndim != 2:
                raise InvalidParameterError(f"a Dask array X must be 2-D, got {X.ndim}-D.")
            X = X.rechunk({1: -1})  # whole rows in every block
            self.parts = list(X.to_delayed().ravel())
            head = X[:_HEAD_ROWS].compute()
            frame = None
        if len(head) == 0:
            raise InvalidParameterError("the first partition of X has no rows; repartition it "
                                        "(X.repartition(...)) so that every partition has data.")
        self.head = head
        self.schema = Dataset.from_data(head, feature_names=feature_names)
        text = [c.name for c in self.schema.columns if c.is_categorical]
        if text:
            raise InvalidParameterError(
                f"{what} of Dask data takes numeric and boolean columns; {text} are "
                "categorical or text. Encode them as numbers first, or explain a pandas "
                "sample of the data.")
        if frame is None:
            frame = dd.from_dask_array(X, columns=self.schema.feature_names)
        self.frame = frame
        self.names = self.schema.feature_names

    def quantiles(self, client, columns, probs):
        """Approximate quantiles ``(len(probs), len(columns))`` of the non-missing values."""
        probs = np.union1d(np.linspace(0, 1, QUANTILE_STEPS + 1), probs)
        # as numbers: numpy cannot interpolate between booleans
        frame = self.frame[[self.frame.columns[j] for j in columns]].astype(np.float64)
        q, low, high = _compute(client, frame.quantile(probs), frame.min(), frame.max())
        empty = [self.names[j] for j, v in zip(columns, np.asarray(low, dtype=np.float64))
                 if np.isnan(v)]
        if empty:
            raise InvalidParameterError(f"feature {empty[0]!r} has no non-missing values; "
                                        "its bins or grid need data in it.")
        # a copy: the quantiles of one column come as a read-only view (copy-on-write)
        q = np.array(q, dtype=np.float64).reshape(probs.size, len(columns))
        # the merged quantiles can miss the ends (partitions of disjoint ranges): exact ones
        q[0], q[-1] = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
        return q, probs


def _compute(client, *collections):
    if client is None:
        dask, _ = _import_dask()
        out = dask.compute(*collections)
    else:
        out = client.gather(client.compute(list(collections)))
    return out[0] if len(collections) == 1 else tuple(out)


def _client(options):
    if options.client is None:
        return None
    from ..engine._dask import resolve_client

    return resolve_client(options.client)


def _per_partition(table, client, mdl, fn, *args):
    """``fn(values, model, index, *args)`` on every partition, results in partition order."""
    dask, _ = _import_dask()
    if client is not None:
        from ..engine._dask import scatter_to_workers

        model = scatter_to_workers(client, mdl)
    else:
        model = mdl
    tasks = [dask.delayed(_encoded_call, pure=False)(part, table.schema, fn, model, i, *args)
             for i, part in enumerate(table.parts)]
    if client is None:
        return _rewarn(dask.compute(*tasks))
    futures = client.compute(tasks)
    try:
        return _rewarn(client.gather(futures))
    finally:
        client.cancel(futures + [model])


def _rewarn(results):
    """The partitions' results; their warnings are raised here, each message once."""
    seen = set()
    for _, notes in results:
        for note in notes:
            if note not in seen:
                seen.add(note)
                warnings.warn(f"{note} (in a partition of the data)", ModellensWarning,
                              stacklevel=4)
    return [out for out, _ in results]


def _encoded_call(part, schema, fn, model, index, *args):
    values = Dataset.from_data(part, feature_names=schema.feature_names, like=schema).values \
        if len(part) else np.empty((0, len(schema.columns)))
    # a worker's warnings would stay in its log: they travel back with the result
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ModellensWarning)
        out = fn(values, model, index, *args)
    return out, [str(w.message) for w in caught if issubclass(w.category, ModellensWarning)]


#: The engine on a worker: one thread, tuned chunks, no bar (the worker has its own).
_LOCAL_OPTIONS = Options(progress=False)


# ------------------------------------------------------------- moment merging
class _Moments:
    """Count, mean and sum of squared deviations per bin, merged partition by partition."""

    def __init__(self, n_bins):
        self.count = np.zeros(n_bins, dtype=np.int64)
        self.mean = np.zeros(n_bins)
        self.squares = np.zeros(n_bins)

    @staticmethod
    def of(bins, values, n_bins):
        out = _Moments(n_bins)
        out.count = np.bincount(bins, minlength=n_bins)
        total = np.bincount(bins, weights=values, minlength=n_bins)
        np.divide(total, out.count, out=out.mean, where=out.count > 0)
        dev = values - out.mean[bins]
        out.squares = np.bincount(bins, weights=dev * dev, minlength=n_bins)
        return out

    @staticmethod
    def merged(parts, n_bins):
        """The moments of all partitions, merged in partition order."""
        out = _Moments(n_bins)
        for part in parts:
            out.add(part)
        return out

    def add(self, other: "_Moments"):
        n = self.count + other.count
        delta = other.mean - self.mean
        share = np.divide(other.count, n, out=np.zeros(n.size), where=n > 0)
        self.mean = self.mean + delta * share
        self.squares = self.squares + other.squares + delta * delta * self.count * share
        self.count = n

    def stats(self):
        return moment_stats(self.count, self.mean, self.squares)


def _feature_sample(x, index, n_parts):
    take = max(1, -(-FEATURE_SAMPLE // n_parts))
    if x.size <= take:
        return x.copy()
    return x[np.linspace(0, x.size - 1, take).astype(np.intp)]


def _warn_missing(name, n, what):
    if n:
        warnings.warn(f"{n} rows have no value in {name!r}; they are left out of its {what}.",
                      ModellensWarning, stacklevel=4)


def _numeric_features(table, features, allow_pairs, method):
    feats = resolve_features(table.schema, features, allow_pairs=allow_pairs)
    for j in feats:
        if isinstance(j, tuple):
            raise InvalidParameterError(
                f"{method} of Dask data explains single features; pairs need the data in "
                "memory (compute a pandas sample first).")
        if table.schema.columns[j].kind != "numeric":
            raise InvalidParameterError(
                f"{method} of Dask data explains numeric features; "
                f"{table.schema.columns[j].name!r} is {table.schema.columns[j].kind}.")
    return feats


def _quantile_edges(table, client, feats, n_bins):
    """Approximate quantile edges ``k / K`` per feature (ties collapsed), min and max exact.

    Also returns the quantiles ``q`` (a row per probability in ``asked``) they came from.
    """
    probs = np.arange(n_bins + 1) / n_bins
    q, asked = table.quantiles(client, feats, probs)
    rows = np.searchsorted(asked, probs)
    return [np.unique(q[rows, c]) for c in range(len(feats))], q, asked


def _start(model, X, features, *, what, allow_pairs, target, response_method, feature_names,
           options):
    """The table, client, wrapped model (on the schema of the first rows) and features."""
    table = _Table(X, feature_names, what)
    client = _client(options)
    schema, mdl = prepare(model, table.head, target=target,
                          response_method=response_method, feature_names=feature_names)
    return table, client, schema, mdl, _numeric_features(table, features, allow_pairs, what)


def _spec(table, spec, j):
    """A feature's entry of a per-feature dict of bins or grids (by name or position)."""
    if isinstance(spec, dict):  # features left out get the default, as in memory
        return spec.get(table.names[j], spec.get(j, DEFAULT_POINTS))
    return spec


def _edges(table, client, feats, specs):
    """Each feature's bin edges: approximate quantiles for an int, else the given edges."""
    edges = [None] * len(feats)
    quantile = [c for c, s in enumerate(specs) if is_integer(s)]
    for c in range(len(feats)):
        if specs[c] is None:
            raise InvalidParameterError(f"bins gives nothing for {table.names[feats[c]]!r}.")
        if c not in quantile:
            edges[c] = check_edges(specs[c], table.names[feats[c]])
    for n_bins in sorted({int(specs[c]) for c in quantile}):
        if n_bins < 1:
            raise InvalidParameterError(f"bins must be a positive number, got {n_bins}.")
        group = [c for c in quantile if int(specs[c]) == n_bins]
        for c, z in zip(group, _quantile_edges(table, client, [feats[c] for c in group],
                                               n_bins)[0]):
            edges[c] = z
    return edges


# ----------------------------------------------------------------------- ALE
class _BinnedAxis:
    """The fields of an ALE axis that its reduction reads, for edges chosen out of core."""

    binned, kind, discrete = True, "numeric", False

    def __init__(self, name, edges, feature_values):
        self.name, self.grid, self.labels = name, edges, edges
        self.feature_values = feature_values

    @property
    def n_cells(self):
        return self.grid.size - 1


def _ale_partition(values, model, index, feats, edges, n_parts):
    out, segments = [], []
    for j, z in zip(feats, edges):
        x = values[:, j]
        keep = ~np.isnan(x) & (x >= z[0]) & (x <= z[-1])
        rows = None if keep.all() else np.flatnonzero(keep)
        unit = bin_index(x[keep], z)
        seg = GridRows(values, (j,), z, rows=rows, index=compact_index(unit, z.size),
                       offsets=(0, 1))
        entry = {"missing": int(np.isnan(x).sum()),
                 "outside": int((~keep).sum() - np.isnan(x).sum()),
                 "sample": _feature_sample(x[keep], index, n_parts)}

        def collect(seg, unit=unit, entry=entry, n_cells=z.size - 1):
            pred = seg.result
            m = pred.size // 2
            entry["moments"] = _Moments.of(unit, pred[m:] - pred[:m], n_cells)
            seg.result = None  # reduced as soon as the feature's rows are in

        seg.on_finish = collect
        segments.append(seg)
        out.append(entry)
    evaluate(model, segments, _LOCAL_OPTIONS, desc="ale (partition)")
    return out


def dask_ale(model, X, features, *, bins, confidence, empty_bins, target, response_method,
             feature_names, options) -> Effects:
    """First-order ALE of numeric features of Dask data (see :func:`modellens.ale`)."""
    from .ale import _FeaturePlan

    table, client, _, mdl, feats = _start(
        model, X, features, what="ALE", allow_pairs=True, target=target,
        response_method=response_method, feature_names=feature_names, options=options)
    specs = [_spec(table, bins, j) for j in feats]
    edges = _edges(table, client, feats, specs)
    parts = _per_partition(table, client, mdl, _ale_partition, feats, edges, len(table.parts))
    effects = []
    for c, j in enumerate(feats):
        name = table.names[j]
        moments = _Moments.merged([part[c]["moments"] for part in parts], edges[c].size - 1)
        _warn_missing(name, sum(p[c]["missing"] for p in parts), "ALE bins")
        outside = sum(p[c]["outside"] for p in parts)
        if outside:
            warnings.warn(f"{outside} values of {name!r} lie outside the bin edges "
                          f"[{edges[c][0]:g}, {edges[c][-1]:g}]; they are left out of its "
                          "ALE bins.", ModellensWarning, stacklevel=3)
        sample = np.sort(np.concatenate([p[c]["sample"] for p in parts]))
        axis = _BinnedAxis(name, edges[c], sample)
        plan = _FeaturePlan.from_stats(axis, moments.stats(), output=mdl.output_name,
                                       confidence=confidence, empty_bins=empty_bins)
        effects.append(plan.reduce())
    return Effects(effects)


# ------------------------------------------------------------------------ PD
def _pd_partition(values, model, index, feats, grids):
    if not values.shape[0]:  # an empty partition adds nothing (its mean over no rows is 0/0)
        return [np.zeros(g.size) for g in grids], 0
    segments = [GridRows(values, (j,), g, average=True) for j, g in zip(feats, grids)]
    evaluate(model, segments, _LOCAL_OPTIONS, desc="pdp (partition)")
    # means weighted by the partition's rows: the client adds sums
    return [seg.result * values.shape[0] for seg in segments], values.shape[0]


def dask_pdp(model, X, features, *, grid, center, target, response_method, feature_names,
             options) -> Effects:
    """Partial dependence of numeric features of Dask data (see :func:`modellens.pdp`)."""
    table, client, _, mdl, feats = _start(
        model, X, features, what="Partial dependence", allow_pairs=True, target=target,
        response_method=response_method, feature_names=feature_names, options=options)
    grids = []
    ends = None
    for j in feats:
        spec = _spec(table, grid, j)
        if is_integer(spec):
            if int(spec) < 2:
                raise InvalidParameterError(f"grid must be at least 2 points, got {spec}.")
            if ends is None:
                ends = table.quantiles(client, feats, [0.0, 1.0])
            q, asked = ends
            c = feats.index(j)
            if table.schema.columns[j].is_boolean:  # the model sees False or True only
                grids.append(np.unique([q[0, c], q[-1, c]]))
            else:
                grids.append(np.linspace(q[0, c], q[-1, c], int(spec)))
        else:
            grids.append(check_edges(spec, table.names[j]))
    parts = _per_partition(table, client, mdl, _pd_partition, feats, grids)
    n = sum(p[1] for p in parts)
    effects = []
    for c, j in enumerate(feats):
        total = np.zeros(grids[c].size)
        for sums, _ in parts:
            total += sums[c]
        values = total / n
        if center:
            values = values - values[0]
        col = table.schema.columns[j]
        effects.append(Effect(feature=col.name, method="pdp",
                              grid=table.schema.labels(j, grids[c]), values=values,
                              kind=col.kind, centered=bool(center), output=mdl.output_name))
    return Effects(effects)


# ------------------------------------------------------------------- M-plots
def _mplot_partition(values, model, index, feats, edges):
    (seg,) = evaluate(model, [DataRows(values)], _LOCAL_OPTIONS, desc="mplot (partition)")
    out = []
    for j, z in zip(feats, edges):
        x = values[:, j]
        keep = ~np.isnan(x)
        out.append((_Moments.of(bin_index(x[keep], z), seg.result[keep], z.size - 1),
                    int((~keep).sum())))
    return out


def dask_mplot(model, X, features, *, grid, target, response_method, feature_names,
               options) -> Effects:
    """M-plots of numeric features of Dask data over quantile bins (``grid=int``)."""
    table, client, _, mdl, feats = _start(
        model, X, features, what="An M-plot", allow_pairs=False, target=target,
        response_method=response_method, feature_names=feature_names, options=options)
    if not is_integer(grid) or int(grid) < 2:
        raise InvalidParameterError("M-plots of Dask data take grid=int (at least 2): the "
                                    "neighbourhoods are quantile bins.")
    n_bins = int(grid)
    edges, q, asked = _quantile_edges(table, client, feats, n_bins)
    for c, j in enumerate(feats):
        if table.schema.columns[j].is_boolean:
            # one neighbourhood per value (quantile edges [0, 1] made one bin of both)
            edges[c] = np.array([-0.5, 0.5, 1.5])
    parts = _per_partition(table, client, mdl, _mplot_partition, feats, edges)
    effects = []
    for c, j in enumerate(feats):
        moments = _Moments.merged([part[c][0] for part in parts], edges[c].size - 1)
        _warn_missing(table.names[j], sum(p[c][1] for p in parts), "grid and neighbourhoods")
        # each bin's point is the median of the rows it holds: the quantile at the middle
        # of its share of the data (ties at an edge move rows between bins, so the
        # probabilities the bins were cut at can name another bin's median)
        cum = np.concatenate([[0], np.cumsum(moments.count)])
        middle = (cum[:-1] + cum[1:]) / 2 / max(cum[-1], 1)
        filled = moments.count > 0  # a bin between two approximate edges can be empty
        points = np.interp(middle, asked, q[:, c])[filled]
        if table.schema.columns[j].is_boolean:  # its bins hold False and True: exact
            points = np.array([0.0, 1.0])[filled]
        means, std, counts, _ = (a[filled] for a in moments.stats())
        col = table.schema.columns[j]
        effects.append(Effect(feature=col.name, method="mplot",
                              grid=table.schema.labels(j, points), values=means,
                              std=std, counts=counts, kind=col.kind, feature_values=None,
                              output=mdl.output_name,
                              band=Band(means - std, means + std, None,
                                        "+/- 1 std of predictions")))
    return Effects(effects)


# ---------------------------------------------------------------------- DALE
def _dale_partition(values, model, index, feats, edges, gradient, fd_step, scale, names,
                    n_parts):
    from ._derivatives import DerivativePlan

    out = []
    if values.shape[0]:
        plan = DerivativePlan(model, values, feats, gradient=gradient, fd_step=fd_step,
                              names=names, scale=scale)
        ((derivatives, _),) = run(model, [plan], _LOCAL_OPTIONS, desc="dale (partition)")
    for c, (j, z) in enumerate(zip(feats, edges)):
        x = values[:, j]
        g = derivatives[c] if values.shape[0] else np.empty(0)
        missing = np.isnan(x)
        finite = np.isfinite(g) & ~missing
        keep = finite & (x >= z[0]) & (x <= z[-1])
        out.append({"moments": _Moments.of(bin_index(x[keep], z), g[keep], z.size - 1),
                    "missing": int(missing.sum()), "not_finite": int((~missing).sum()
                                                                     - finite.sum()),
                    "outside": int(finite.sum() - keep.sum()),
                    "sample": _feature_sample(x[keep], index, n_parts)})
    return out


def dask_dale(model, X, features, *, bins, gradient, confidence, fd_step, empty_bins, target,
              response_method, feature_names, options) -> Effects:
    """DALE of numeric features of Dask data (see :func:`modellens.dale`).

    Bins are ``bins=int`` (Dask's approximate quantiles) or explicit edges;
    finite differences step by ``fd_step`` times each feature's standard
    deviation over the whole data.  The effects keep no local effects, so
    they cannot be re-binned without the model.
    """
    from ._derivatives import resolve_backend, scale_rule
    from .dale import _check_bins, _curve

    table, client, head, mdl, feats = _start(
        model, X, features, what="DALE", allow_pairs=False, target=target,
        response_method=response_method, feature_names=feature_names, options=options)
    backend = resolve_backend(mdl, gradient, head.values)  # errors before any pass
    # as in memory: a boolean has no derivative (shifted values reach the model as True)
    boolean = [table.names[j] for j in feats if table.schema.columns[j].is_boolean]
    if boolean:
        if features is not None:
            raise InvalidParameterError(
                f"DALE needs numeric features; {boolean} are boolean. Use ml.ale for them "
                "(it compares the levels directly).")
        warnings.warn(f"DALE skips the boolean feature(s) {boolean}; use ml.ale for them.",
                      ModellensWarning, stacklevel=3)
        feats = [j for j in feats if table.names[j] not in boolean]
        if not feats:
            raise InvalidParameterError("X has no numeric feature for DALE; use ml.ale for "
                                        "boolean ones.")
    specs = []
    for j in feats:
        spec = _check_bins(_spec(table, bins, j), table.names[j])
        if isinstance(spec, str):
            raise InvalidParameterError(
                "bins='auto' chooses bins from every local effect, which Dask data keep on "
                "the workers; pass an int or edges.")
        specs.append(spec)
    edges = _edges(table, client, feats, specs)
    scale = None
    if backend == "finite_differences":
        cols = [table.frame.columns[j] for j in feats]
        std, top = _compute(client, table.frame[cols].std(ddof=0), table.frame[cols].abs().max())
        scale = scale_rule(np.asarray(std, dtype=float), np.asarray(top, dtype=float))
    names = [table.names[j] for j in feats]
    parts = _per_partition(table, client, mdl, _dale_partition, feats, edges,
                           gradient if backend == "callable" else backend, fd_step, scale,
                           names, len(table.parts))
    effects = []
    for c, name in enumerate(names):
        moments = _Moments.merged([part[c]["moments"] for part in parts], edges[c].size - 1)
        _warn_missing(name, sum(p[c]["missing"] for p in parts), "DALE bins")
        for key, what in (("not_finite", f"the {backend} derivative is NaN or inf"),
                          ("outside", "the value lies outside the bin edges")):
            n = sum(p[c][key] for p in parts)
            if n:
                warnings.warn(f"{n} rows of {name!r} are left out of its DALE bins: {what}.",
                              ModellensWarning, stacklevel=3)
        sample = np.sort(np.concatenate([p[c]["sample"] for p in parts]))
        common = dict(feature=name, method="dale", kind="numeric", feature_values=sample,
                      output=mdl.output_name, local_effects=None,
                      extra={"gradient": backend, "empty_bins": empty_bins})
        effects.append(_curve(name, edges[c], moments.stats(), confidence=confidence,
                              empty_bins=empty_bins, common=common))
    return Effects(effects)
