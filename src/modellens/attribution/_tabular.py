"""LIME's sampler of a table: perturbed rows drawn from the training data's statistics.

A numeric column is drawn from a normal with the training column's mean and
standard deviation (or, discretised, within a quantile bin as a truncated
normal); a categorical one from the training frequencies of its levels.
:class:`TabularSampler` also gives each draw's interpretable representation and
the conditions (``"x0 <= 0.3"``) that name the features of a discretised LIME.
"""

from __future__ import annotations

import numpy as np

from .._validation import InvalidParameterError

__all__ = ["TabularSampler", "DISCRETIZERS"]

#: Quantiles that cut a numeric column into bins (lime's quartile and decile discretisers).
DISCRETIZERS = {"quartile": (25, 50, 75), "decile": tuple(range(10, 100, 10))}
#: Added to a bin's standard deviation so that a bin of tied values still has a scale.
_BIN_STD_FLOOR = 1e-11


class TabularSampler:
    r"""Where LIME's perturbed rows come from, and their interpretable representation.

    Built once from the training data (encoded with the explained rows'
    schema); every column is one of

    - *continuous* (numeric, ``discretize=None``): sample
      :math:`x_j \sim N(\mu_j, \sigma_j^2)` (training mean and standard
      deviation, not centred on the instance); :math:`z_j = (x_j - \mu_j) / \sigma_j`
      (a constant column stays constant, :math:`z_j = 0`).
    - *binned* (numeric, discretised at the training quartiles / deciles, bins
      ``(q_{k-1}, q_k]``): draw a bin with the training frequencies, then a
      value from a normal with the bin's training mean and standard deviation
      truncated to the bin's range; :math:`z_j = 1` when the bin is the
      instance's, else 0.
    - *level* (categorical, string or boolean): draw a level with the training
      frequencies; :math:`z_j = 1` when it is the instance's level.

    Missing values are drawn as the training data have them: column ``j`` is
    missing in a drawn row with its training missing rate :math:`p_j`,
    independently of the other columns, and its statistics (mean, bins,
    level frequencies) are those of its present values.  Missing is a bin
    (a level) of its own: :math:`z_j = 1` when the drawn row and the instance
    are both missing (a continuous column's missing draw has :math:`z_j = 0`,
    its mean).  Data without missing values are drawn as before.

    Row 0 of every neighbourhood is the instance itself.
    """

    #: The key of a missing draw in a binned or level column (bins and codes are >= 0).
    MISSING_KEY = -1.0

    def __init__(self, training: np.ndarray, columns, discretize):
        self.d = training.shape[1]
        self.kinds, self.mean, self.scale = [], np.zeros(self.d), np.ones(self.d)
        self.edges, self.levels, self.freqs, self.bin_stats = {}, {}, {}, {}
        self.constant = np.zeros(self.d, dtype=bool)
        #: column -> training missing rate, for the columns that have missing values
        self.missing: dict[int, float] = {}
        for j, col in enumerate(columns):
            x = training[:, j]
            absent = np.isnan(x)
            if absent.all():
                raise InvalidParameterError(
                    f"training_data column {col.name!r} holds only missing values; LIME "
                    "samples from the training statistics: drop the column or pass rows "
                    "where it is present.")
            if absent.any():
                self.missing[j] = float(absent.mean())
                x = x[~absent]
            if col.is_categorical or col.is_boolean:
                self.kinds.append("level")
                self.levels[j], counts = np.unique(x, return_counts=True)
                self.freqs[j] = counts / counts.sum()
                continue
            self.mean[j] = x.mean()
            std = x.std()
            self.scale[j] = std if std > 0 else 1.0
            self.constant[j] = std == 0
            if discretize is None:
                self.kinds.append("continuous")
                continue
            self.kinds.append("binned")
            edges = np.percentile(x, DISCRETIZERS[discretize])
            self.edges[j] = edges
            bins = np.searchsorted(edges, x)
            n_bins = edges.size + 1
            counts = np.bincount(bins, minlength=n_bins)
            self.freqs[j] = counts / counts.sum()
            means = np.array([x[bins == b].mean() if counts[b] else 0.0 for b in range(n_bins)])
            stds = np.array([x[bins == b].std() if counts[b] else 0.0 for b in range(n_bins)])
            lows = np.concatenate([[x.min()], edges])
            highs = np.concatenate([edges, [x.max()]])
            self.bin_stats[j] = (means, stds + _BIN_STD_FLOOR, lows, highs)
        self._tables()

    def _tables(self):
        """What every draw reads, laid out once: the binned columns' bin statistics as one
        table ``(4, columns * bins)`` (a row's bin picks its column's entry with one gather),
        their cumulative bin frequencies, and the columns keyed by a bin or level."""
        self._binned = self._index("binned")
        self._keyed = np.array([j for j, k in enumerate(self.kinds) if k in ("level", "binned")],
                               dtype=np.intp)
        if self._binned.size:
            stats = np.array([self.bin_stats[j] for j in self._binned])  # (columns, 4, bins)
            self._bin_table = np.ascontiguousarray(stats.transpose(1, 0, 2).reshape(4, -1))
            self._bin_offsets = np.arange(self._binned.size) * stats.shape[2]
            cdf = np.cumsum([self.freqs[j] for j in self._binned], axis=1)
            self._bin_cdf = cdf / cdf[:, -1:]

    def represent(self, x0: np.ndarray) -> np.ndarray:
        """The instance's own interpretable row :math:`z_0`."""
        z0 = np.ones(self.d)
        for j, kind in enumerate(self.kinds):
            if kind == "continuous":
                z0[j] = 0.0 if np.isnan(x0[j]) else (x0[j] - self.mean[j]) / self.scale[j]
        return z0

    def _key(self, j: int, value: float) -> float:
        """The key of the instance's value in a binned or level column."""
        if np.isnan(value):
            return self.MISSING_KEY
        return float(np.searchsorted(self.edges[j], value)) if self.kinds[j] == "binned" \
            else value

    def _index(self, kind):
        return np.array([j for j, k in enumerate(self.kinds) if k == kind], dtype=np.intp)

    def draw(self, size: int, rng):
        """``size`` perturbed rows, the same for any instance.

        Returns the encoded rows and their *keys*: the standardised value of a
        continuous column, the bin of a binned one, the level of a categorical
        one; :meth:`represent_draws` turns keys into ``z`` for an instance.
        """
        X = np.empty((size, self.d))
        K = np.empty((size, self.d))
        cont = self._index("continuous")
        if cont.size:
            z = rng.standard_normal((size, cont.size))
            # sigma = 0: N(mu, 0) is the constant itself (a unit scale would invent values)
            z[:, self.constant[cont]] = 0.0
            K[:, cont] = z
            X[:, cont] = self.mean[cont] + self.scale[cont] * z
        for j in self._index("level"):
            K[:, j] = X[:, j] = self.levels[j][_categorical(self.freqs[j], size, rng)]
        binned = self._binned
        if binned.size:
            # every binned column at once: one (size, columns) draw of bins, then of values
            cdf = self._bin_cdf
            u = rng.random((size, binned.size))
            bins = np.zeros(u.shape, dtype=np.intp)
            for k in range(cdf.shape[1] - 1):  # a bin index is the count of bounds passed
                bins += u >= cdf[:, k]
            # each draw's bin statistics, all four in one gather from the table
            mean, std, low, high = np.take(self._bin_table, bins + self._bin_offsets, axis=1)
            X[:, binned] = _truncated_normal(mean, std, low, high, rng)
            K[:, binned] = bins
        if self.missing:
            # after every other draw: data without missing values draw the same rows as ever
            cols = np.fromiter(self.missing, dtype=np.intp)
            rates = np.array([self.missing[j] for j in cols])
            gone = rng.random((size, cols.size)) < rates
            for k, j in enumerate(cols):
                X[gone[:, k], j] = np.nan
                K[gone[:, k], j] = np.nan if self.kinds[j] == "continuous" else self.MISSING_KEY
        return X, K

    def represent_draws(self, K: np.ndarray, x0: np.ndarray) -> np.ndarray:
        """``z`` of drawn rows (their keys ``K``) around the instance ``x0``."""
        keyed = self._keyed
        keys = np.array([self._key(j, x0[j]) for j in keyed])
        if keyed.size == self.d:  # every column a bin or a level: one comparison
            return (K == keys).astype(np.float64)
        Z = K.copy()
        Z[:, keyed] = K[:, keyed] == keys
        for j in self.missing:
            if self.kinds[j] == "continuous":
                Z[np.isnan(K[:, j]), j] = 0.0
        return Z

    def sample(self, x0: np.ndarray, size: int, rng):
        """``size`` rows around ``x0`` (row 0 is ``x0``): encoded rows and their ``z``."""
        X, K = self.draw(size, rng)
        Z = self.represent_draws(K, x0)
        X[0] = x0
        Z[0] = self.represent(x0)
        return X, Z

    def conditions(self, x0: np.ndarray, columns) -> list:
        """What ``z_j = 1`` means for this instance, one phrase per feature."""
        out = []
        for j, (kind, col) in enumerate(zip(self.kinds, columns)):
            if np.isnan(x0[j]):
                out.append(f"{col.name} is missing")
            elif kind == "continuous":
                out.append(col.name)
            elif kind == "level":
                label = bool(x0[j]) if col.is_boolean else \
                    col.levels[int(x0[j])] if col.is_categorical else x0[j]
                out.append(f"{col.name} = {label}")
            else:
                edges = self.edges[j]
                b = int(np.searchsorted(edges, x0[j]))
                low = self.bin_stats[j][2][0]  # the training minimum
                if b == 0 and edges[0] <= low:
                    # the first bin holds the minimum alone (fare 0 of many free tickets)
                    out.append(f"{col.name} = {edges[0]:.4g}")
                elif b == 0:
                    out.append(f"{col.name} <= {edges[0]:.4g}")
                elif b == edges.size:
                    out.append(f"{col.name} > {edges[-1]:.4g}")
                else:
                    out.append(f"{edges[b - 1]:.4g} < {col.name} <= {edges[b]:.4g}")
        return out


def _categorical(p, size, rng):
    """``size`` draws of ``0 .. len(p) - 1`` with probabilities ``p``."""
    cdf = np.cumsum(p)
    return np.minimum(np.searchsorted(cdf / cdf[-1], rng.random(size), side="right"),
                      len(p) - 1)


#: Rounds of redrawing rejected normal draws before the rest go by the inverse CDF.
_REJECTION_ROUNDS = 8


def _truncated_normal(mean, std, low, high, rng):
    """Normal draws truncated to ``[low, high]``, one per entry (vectorised).

    Rejection: a bin's mean lies inside its range and its standard deviation is
    at most half the range, so at least about half of the plain normal draws
    land inside and a few rounds of redrawing settle nearly all; the inverse CDF
    takes what is left (it is exact, but slower per draw).
    """
    shape = mean.shape
    mean, std, low, high = (np.ravel(a) for a in (mean, std, low, high))
    out = mean + std * rng.standard_normal(mean.size)
    todo = np.flatnonzero((out < low) | (out > high))
    for _ in range(_REJECTION_ROUNDS):
        if todo.size == 0:
            break
        out[todo] = mean[todo] + std[todo] * rng.standard_normal(todo.size)
        todo = todo[(out[todo] < low[todo]) | (out[todo] > high[todo])]
    if todo.size:
        out[todo] = _truncated_normal_icdf(mean[todo], std[todo], low[todo], high[todo], rng)
    return np.where(high > low, out, low).reshape(shape)


def _truncated_normal_icdf(mean, std, low, high, rng):
    """Normal draws truncated to ``[low, high]`` by the inverse CDF."""
    # imported here, not at the top: scipy.special costs ~0.5 s at ``import modellens``
    from scipy.special import ndtr, ndtri

    a, b = (low - mean) / std, (high - mean) / std
    # draw in the lower tail (flip when the interval lies right of the mean): the CDF
    # keeps its precision there
    flip = a > 0
    a, b = np.where(flip, -b, a), np.where(flip, -a, b)
    pa, pb = ndtr(a), ndtr(b)
    u = pa + rng.random(mean.shape) * (pb - pa)
    t = np.clip(ndtri(u), a, b)
    t = np.where(flip, -t, t)
    return np.where(high > low, mean + std * t, low)
