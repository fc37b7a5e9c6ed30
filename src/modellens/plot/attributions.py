"""Matplotlib pictures of attributions: waterfall, force, beeswarm, bar, dependence."""

from __future__ import annotations

import numpy as np

from .._validation import InvalidParameterError
from ._common import (_CMAP, _NEG, _POS, _axes, _fmt, _row, _signed, _value, literal_text,
                      value_bars)
from ._attribution_parts import (_NoOverlap, _is_boolean, _levels, _method_label, _partner_of,
                                 _swarm_offsets, _unit_scale, interaction_partner)
from ._media_plots import MediaPlots
from .lime import plot_weights

__all__ = ["AttributionPlots", "interaction_partner"]

#: Colours of the levels of an unordered category in a beeswarm (no low / high there).
_LEVEL_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860",
                  "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd")


class AttributionPlots(MediaPlots):
    """The plots of an :class:`~modellens.attribution.Attributions` (``attr.plot``).

    Calling it, ``attr.plot()``, draws the natural picture of the result
    (a text's or image's highlights, one LIME row's weights, one row's
    waterfall, the beeswarm of several rows); the methods draw them all:

    - one row: :meth:`waterfall`, :meth:`force` (Shapley values, or LIME with
      ``discretize=``), :meth:`weights` (LIME's surrogate, its R^2 in the title),
      ``text()`` / ``text_html()`` (texts), ``image()`` (images);
    - many rows: :meth:`beeswarm`, :meth:`bar`, :meth:`dependence`,
      :meth:`interactions` (the strongest pairs, with ``interactions=True``).

    Every method takes ``ax=`` (a new figure when None) and returns the Axes,
    never the Figure, so that Jupyter shows the picture once.
    """

    def __init__(self, attributions):
        self._a = attributions

    def __call__(self, ax=None, *, output=None, **kwargs):
        """Draw the natural picture of the result, the one to look at first.

        A text or an image: ``text()`` or ``image()`` of the first row.
        One row of LIME: its :meth:`weights`; one row of Shapley values: its
        :meth:`waterfall`.  Several rows: the :meth:`beeswarm`.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; None (default) draws on a new figure.
        output : label, str or int, optional
            With several outputs, the one drawn (a class label, an output
            name or a position).
        **kwargs
            Options of the method drawn.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on, as the method drawn returns it.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(30, 3))
        >>> attr = ml.shapley(lambda A: A @ [1.0, 2.0, -1.0], X, background=X)
        >>> attr.plot().get_xlabel()  # 30 rows: the beeswarm
        'SHAP value (impact on f(x))'
        >>> attr[0].plot().get_title()[:6]  # one row: its waterfall
        'row 0:'
        """
        if output is not None:
            return AttributionPlots(self._a.for_output(output))(ax=ax, **kwargs)
        return getattr(self, self._natural())(ax=ax, **kwargs)

    def _natural(self) -> str:
        """The name of the method that ``attr.plot()`` calls."""
        a = self._a
        media = a.media
        if media is not None and media.text is not None and media.spans is not None:
            return "text"
        if media is not None and media.segments is not None and media.image is not None:
            return "image"
        if len(a) > 1:
            return "beeswarm"
        return "weights" if a.surrogate is not None else "waterfall"

    # ------------------------------------------------------------- helpers
    def _one(self, output, what) -> "AttributionPlots":
        """The plots of one output; with several and none chosen, an error naming them."""
        a = self._a
        if a.outputs is None:
            raise InvalidParameterError(
                f"output={output!r}: these attributions explain one output ({a.output!r}); "
                "leave output= out.")
        if output is None:
            a._require_one_output(f"the {what} plot")
        return AttributionPlots(a.for_output(output))

    def _row(self, i):
        return _row(self._a, i)

    def _check_additive(self, what):
        # continuous LIME weights are slopes per standard deviation: stacked from the
        # intercept they do not build the prediction
        a = self._a
        if a.surrogate is not None and a.surrogate.interpretable == "continuous":
            raise InvalidParameterError(
                f"a {what} adds the values up to the prediction, but LIME with "
                "discretize=None gives slopes per standard deviation, not parts of it; use "
                "attr.plot.weights(i), or lime(..., discretize='quartile').")

    def _top(self, scores, max_display):
        """Feature order by score, and the features folded into 'other' (if any)."""
        if max_display is None or max_display < 1:
            raise InvalidParameterError(
                f"max_display must be a positive integer, got {max_display!r}.")
        order = np.argsort(-scores, kind="stable")
        if len(order) <= max_display:
            return order, order[:0]
        return order[:max_display - 1], order[max_display - 1:]

    def _prediction(self, i):
        a = self._a
        if a.prediction is not None:
            return float(a.prediction[i])
        return float(a.base_values[i] + a.values[i].sum())

    # --------------------------------------------------------- local plots
    @literal_text
    def waterfall(self, i=0, *, max_display=10, ax=None, output=None):
        """Draw how row ``i``'s prediction is built from the base value, one feature at a time.

        One bar per feature, from the base value (dashed) to the prediction
        (solid), each labelled with the feature's value in the row; features
        are sorted by ``|value|``, the largest on top, and the smallest are
        summed in one bar when there are more than ``max_display``.  For
        values that add up to the prediction: Shapley values, or LIME's
        discretized weights.

        Parameters
        ----------
        i : int, default=0
            The row, by position.
        max_display : int, default=10
            Most bars drawn (the last one sums the rest).
        ax : matplotlib Axes, optional
            Where to draw; None (default) draws on a new figure.
        output : label, str or int, optional
            With several outputs, the one drawn (a class label, an output
            name or a position); required then, and an error names the outputs.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(30, 3))
        >>> attr = ml.shapley(lambda A: A @ [1.0, 2.0, -1.0], X, background=X)
        >>> ax = attr.plot.waterfall(0)
        >>> len(ax.patches), ax.get_title()[:6]  # one bar per feature
        (3, 'row 0:')
        """
        if output is not None or self._a.outputs is not None:
            return self._one(output, "waterfall").waterfall(i, max_display=max_display, ax=ax)
        a = self._a
        i = self._row(i)
        self._check_additive("waterfall")
        phi = a.values[i]
        shown, rest = self._top(np.abs(phi), max_display)
        row = a[i].data[0]
        labels = [f"{a.feature_names[j]} = {_fmt(row[j])}" for j in shown]
        parts = list(phi[shown])
        if rest.size:
            labels.append(f"{rest.size} other features")
            parts.append(float(phi[rest].sum()))
        contrib = np.asarray(parts)
        k = len(contrib)
        ax = _axes(ax, (6.4, 0.45 * k + 1.6))
        base, pred = float(a.base_values[i]), self._prediction(i)
        # accumulate from the bottom bar (smallest) up to the top one (largest)
        y = np.arange(k)[::-1]
        ends = base + np.cumsum(contrib[::-1])[::-1]
        starts = ends - contrib
        colors = [_POS if c >= 0 else _NEG for c in contrib]
        ax.barh(y, contrib, left=starts, color=colors, height=0.6, zorder=2)
        span = max(np.ptp(np.concatenate([starts, ends, [base, pred]])), 1e-12)
        for yy, s, e, c in zip(y, starts, ends, contrib):
            shown_c = c if abs(c) > 1e-9 * span else 0.0  # rounding noise reads as 0
            ax.text(max(s, e) + 0.01 * span, yy, _signed(shown_c), va="center", ha="left",
                    fontsize=8)
        for yy in range(k - 1):
            ax.plot([ends[yy + 1]] * 2, [y[yy + 1] + 0.3, y[yy] - 0.3], color="0.6", lw=0.6,
                    zorder=1)
        ax.axvline(base, color="0.4", ls="--", lw=0.8)
        ax.axvline(pred, color="0.2", lw=0.8)
        ax.set_yticks(y)
        ax.set_yticklabels(labels, fontsize=8)
        ax.set_xlim(min(starts.min(), ends.min(), base, pred) - 0.05 * span,
                    max(starts.max(), ends.max(), base, pred) + 0.15 * span)
        ax.set_xlabel(a.output)
        ax.set_title(f"row {i}: f(x) = {_value(pred)}, base value = {_value(base)}",
                     fontsize=10)
        return ax

    @literal_text
    def force(self, i=0, *, min_label_share=0.05, ax=None, output=None):
        """Draw row ``i``'s attributions as forces on one axis, pushing the prediction up or down.

        Positive contributions push from the left up to the prediction, negative
        ones from the right down to it; segments with at least
        ``min_label_share`` of the total length are labelled, the largest
        first: a label that would overlap one already placed is left out (when
        the figure is drawn, at its final size).  A contribution shorter than
        the arrow tip is drawn as a plain bar, one of 0 (to ~1e-12 of the total)
        not at all.  A static picture of shap's force plot.

        Parameters
        ----------
        i : int, default=0
            The row, by position.
        min_label_share : float, default=0.05
            Smallest share of the total length of a labelled segment.
        ax : matplotlib Axes, optional
            Where to draw; None (default) draws on a new figure.
        output : label, str or int, optional
            With several outputs, the one drawn (a class label, an output
            name or a position); required then, and an error names the outputs.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(30, 3))
        >>> attr = ml.shapley(lambda A: A @ [1.0, 2.0, -1.0], X, background=X)
        >>> ax = attr.plot.force(0)
        >>> len(ax.patches)  # one arrow per feature
        3
        """
        if output is not None or self._a.outputs is not None:
            return self._one(output, "force").force(i, min_label_share=min_label_share, ax=ax)
        from matplotlib.patches import Polygon

        a = self._a
        i = self._row(i)
        self._check_additive("force plot")
        phi = a.values[i]
        row = a[i].data[0]
        base, pred = float(a.base_values[i]), self._prediction(i)
        ax = _axes(ax, (9, 2.4))
        total = max(np.abs(phi).sum(), 1e-12)
        height, tip = 0.5, 0.012 * total
        pos = [j for j in np.argsort(phi) if phi[j] > 0]          # largest ends at f(x)
        neg = [j for j in np.argsort(-phi) if phi[j] < 0]         # largest starts at f(x)
        x = pred - phi[pos].sum()
        segments = []
        for j in pos:
            segments.append((j, x, x + phi[j], _POS))
            x += phi[j]
        x = pred
        for j in neg[::-1]:
            segments.append((j, x, x - phi[j], _NEG))
            x -= phi[j]
        labels: list[tuple] = []  # (order, position, text)
        for j, lo, hi, color in segments:
            if abs(phi[j]) <= 1e-12 * total:
                continue  # rounding noise: nothing to draw
            # an arrow tip longer than the segment would turn the arrow inside out
            d = tip if abs(phi[j]) >= tip else 0.0
            d = d if color == _POS else -d
            head, tail = (hi, lo) if color == _POS else (lo, hi)
            pts = [(tail, -height / 2), (head - d, -height / 2), (head, 0),
                   (head - d, height / 2), (tail, height / 2), (tail + d, 0)]
            ax.add_patch(Polygon(pts, closed=True, facecolor=color, edgecolor="white", lw=0.8))
            if abs(phi[j]) >= min_label_share * total:
                labels.append((-abs(phi[j]), len(labels), ax.text(
                    (lo + hi) / 2, -height / 2 - 0.08, f"{a.feature_names[j]}\n= {_fmt(row[j])}",
                    ha="center", va="top", fontsize=7, color=color)))
        if labels:
            ax.add_artist(_NoOverlap([t for _, _, t in sorted(labels, key=lambda e: e[:2])]))
        ax.plot([pred, pred], [height / 2, height / 2 + 0.25], color="0.1", lw=1)
        ax.text(pred, height / 2 + 0.28, f"f(x) = {_value(pred)}", ha="center", va="bottom",
                fontsize=9, weight="bold")
        ax.plot([base, base], [height / 2, height / 2 + 0.12], color="0.5", lw=1)
        ax.text(base, height / 2 + 0.14, f"base value = {_value(base)}", ha="center",
                va="bottom", fontsize=8, color="0.4")
        lo = min(base, pred - phi[pos].sum(), pred)
        hi = max(base, pred - phi[neg].sum(), pred)
        pad = 0.06 * max(hi - lo, 1e-12)
        ax.set_xlim(lo - pad, hi + pad)
        ax.set_ylim(-1.3, 1.1)
        ax.set_yticks([])
        for side in ("left", "right", "top"):
            ax.spines[side].set_visible(False)
        ax.set_xlabel(a.output)
        return ax

    # ------------------------------------------ local surrogates, texts, images
    def weights(self, i=0, *, max_display=10, ax=None, output=None):
        """Draw one row's weights as bars, to see what the local surrogate says near it.

        One bar per feature with a non-zero weight, the largest ``|weight|``
        on top, labelled with what the feature means for LIME (for instance
        ``"0.3 < age <= 0.7"``); the title holds the surrogate's weighted R^2
        and its held-out R^2: read the bars only when these are high.

        Parameters
        ----------
        i : int, default=0
            The row, by position.
        max_display : int, default=10
            Most bars drawn.
        ax : matplotlib Axes, optional
            Where to draw; None (default) draws on a new figure.
        output : label, str or int, optional
            With several outputs, the one drawn (a class label, an output
            name or a position); required then, and an error names the outputs.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(30, 3))
        >>> attr = ml.lime(lambda A: A @ [1.0, 2.0, -1.0], X[:1], training_data=X,
        ...                num_samples=500, random_state=0)
        >>> ax = attr.plot.weights(0)
        >>> len(ax.patches), "R\u00b2" in ax.get_title()  # a bar per feature; the fit's R^2
        (3, True)
        """
        if output is not None or self._a.outputs is not None:
            return self._one(output, "weights").weights(i, max_display=max_display, ax=ax)
        return plot_weights(self._a, i, max_display=max_display, ax=ax)

    @literal_text
    def bar(self, *, max_display=10, ax=None, output=None):
        """Draw the mean absolute value of each feature, to rank the features over all rows.

        One bar per feature, the global importance ``mean_abs()``, largest on
        top; the smallest are summed into one bar when there are more than
        ``max_display``.

        Parameters
        ----------
        max_display : int, default=10
            Most bars drawn (the last one sums the rest).
        ax : matplotlib Axes, optional
            Where to draw; None (default) draws on a new figure.
        output : label, str or int, optional
            With several outputs, draw this one alone (a class label, an
            output name or a position); by default every output's share is
            stacked in each feature's bar, one colour per output, as shap's
            multi-output bar plot, the features sorted by their total.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(30, 3))
        >>> attr = ml.shapley(lambda A: A @ [1.0, 2.0, -1.0], X, background=X)
        >>> ax = attr.plot.bar()
        >>> len(ax.patches), ax.get_xlabel()
        (3, 'mean |SHAP value| (f(x))')
        """
        if output is not None:
            return self._one(output, "bar").bar(max_display=max_display, ax=ax)
        a = self._a
        # a Dask result's summary draws its bar here too, and has one output
        if getattr(a, "outputs", None) is not None:
            return self._stacked_bar(max_display, ax)
        imp = a.mean_abs()
        shown, rest = self._top(imp, max_display)
        labels = [a.feature_names[j] for j in shown]
        heights = list(imp[shown])
        if rest.size:
            labels.append(f"{rest.size} other features (sum)")
            heights.append(float(imp[rest].sum()))
        return value_bars(ax, labels, heights, xlabel=f"mean |{_method_label(a)}| ({a.output})",
                          margin=1.18)

    def interactions(self, *, max_display=10, ax=None, output=None):
        """Draw the strongest interacting pairs: mean ``|SHAP interaction value|`` over the rows.

        Needs ``ml.shapley(..., interactions=True)``; one bar per pair of
        :meth:`~modellens.attribution.Attributions.interaction_pairs`, largest on top.

        Parameters
        ----------
        max_display : int, default=10
            Most pairs drawn.
        ax : matplotlib Axes, optional
            Where to draw; None (default) draws on a new figure.
        output : label, str or int, optional
            With several outputs, the one drawn (required then).

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(60, 3))
        >>> attr = ml.shapley(lambda A: A[:, 0] * A[:, 1] + A[:, 2], X[:20], background=X,
        ...                   interactions=True)
        >>> ax = attr.plot.interactions()
        >>> len(ax.patches), ax.get_yticklabels()[0].get_text()
        (3, 'x0 × x1')
        """
        if output is None:  # the error names the call the user made
            self._a._require_one_output("the interactions plot")
        pairs = self._a.interaction_pairs(output=output)
        return pairs.plot(max_display=max_display, ax=ax)

    def _stacked_bar(self, max_display, ax):
        """Every output's mean ``|value|`` stacked in each feature's bar (shap's multi-output bar)."""
        a = self._a
        imp = a.mean_abs()  # (d, k)
        shown, rest = self._top(imp.sum(axis=1), max_display)
        labels = [a.feature_names[j] for j in shown]
        parts = [imp[j] for j in shown]
        if rest.size:
            labels.append(f"{rest.size} other features (sum)")
            parts.append(imp[rest].sum(axis=0))
        heights = np.array(parts)  # (bars, k)
        n_bars = len(labels)
        ax = _axes(ax, (6.4, 0.4 * n_bars + 1.6))
        y = np.arange(n_bars)[::-1]
        left = np.zeros(n_bars)
        for c, name in enumerate(a.outputs or []):
            ax.barh(y, heights[:, c], left=left, height=0.65, label=name,
                    color=_LEVEL_COLOURS[c % len(_LEVEL_COLOURS)])
            left += heights[:, c]
        ax.set_yticks(y)
        ax.set_yticklabels(labels, fontsize=8)
        ax.set_xlabel(f"mean |{_method_label(a)}| (stacked over the outputs)")
        ax.legend(fontsize=8, loc="lower right")
        return ax

    @literal_text
    def beeswarm(self, *, max_display=10, ax=None, random_state=0, output=None):
        """Draw every value as a dot, to see how each feature's effect spreads over the rows.

        One line of dots per feature, coloured by the feature's value (low
        blue, high red), so that the direction of an effect reads at a
        glance.  Features are sorted by mean ``|value|``; the rest are summed
        into one line when there are more than ``max_display``.

        Parameters
        ----------
        max_display : int, default=10
            Most lines drawn (the last one sums the rest).
        ax : matplotlib Axes, optional
            Where to draw; None (default) draws on a new figure.
        random_state : int, default=0
            Seed of the dots' vertical jitter.
        output : label, str or int, optional
            With several outputs, the one drawn (a class label, an output
            name or a position); required then, and an error names the outputs.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(30, 3))
        >>> attr = ml.shapley(lambda A: A @ [1.0, 2.0, -1.0], X, background=X)
        >>> ax = attr.plot.beeswarm()
        >>> sum(len(dots.get_offsets()) for dots in ax.collections)  # 30 rows, 3 features
        90
        """
        if output is not None or self._a.outputs is not None:
            return self._one(output, "beeswarm").beeswarm(max_display=max_display, ax=ax, random_state=random_state)
        a = self._a
        shown, rest = self._top(a.mean_abs(), max_display)
        numeric = a.numeric_data()
        # an unordered category has no low and high: its levels get colours of their own
        unordered = [a.columns[j].is_categorical and not a.columns[j].ordered for j in shown]
        lines = [(a.feature_names[j], a.values[:, j], numeric[:, j], u)
                 for j, u in zip(shown, unordered)]
        if rest.size:
            lines.append((f"{rest.size} other features (sum)", a.values[:, rest].sum(axis=1),
                          np.full(len(a), np.nan), False))
        k = len(lines)
        ax = _axes(ax, (6.4, 0.45 * k + 1.6))
        rng = np.random.default_rng(random_state)
        mappable = None
        for row, (name, phi, x, categorical) in enumerate(lines):
            y = (k - 1 - row) + _swarm_offsets(phi, rng)
            color = np.where(np.isnan(x), np.nan, 0.0) if categorical else _unit_scale(x)
            missing = np.isnan(color)
            if missing.any():
                ax.scatter(phi[missing], y[missing], s=9, color="0.6", lw=0, alpha=0.8)
            if categorical and (~missing).any():
                palette = np.array(_LEVEL_COLOURS, dtype=object)
                codes = x[~missing].astype(np.intp) % len(palette)
                ax.scatter(phi[~missing], y[~missing], c=list(palette[codes]), s=9, lw=0,
                           alpha=0.9)
            elif (~missing).any():
                mappable = ax.scatter(phi[~missing], y[~missing], c=color[~missing], s=9,
                                      cmap=_CMAP, vmin=0, vmax=1, lw=0, alpha=0.9)
        ax.axvline(0, color="0.5", lw=0.7, zorder=0)
        ax.set_yticks(np.arange(k)[::-1])
        ax.set_yticklabels([name for name, *_ in lines], fontsize=8)
        ax.set_ylim(-0.7, k - 0.3)
        ax.set_xlabel(f"{_method_label(a)} (impact on {a.output})")
        if mappable is not None:
            bar = ax.figure.colorbar(mappable, ax=ax, ticks=[0, 1], aspect=40, pad=0.02)
            bar.ax.set_yticklabels(["low", "high"])
            bar.set_label("feature value" + (" (numeric features; categories: a colour "
                                             "per level)" if any(unordered) else ""),
                          fontsize=8)
        return ax

    @literal_text
    def dependence(self, feature, *, color="auto", ax=None, random_state=0, output=None):
        """Draw a feature's values against its attributions, to see the shape of its effect.

        One dot per row, coloured by a second feature: an interaction shows
        as dots of different colours that part.  Categorical features sit at
        their level positions with a little jitter.

        Parameters
        ----------
        feature : str or int
            The feature, by name or position.
        color : "auto", str, int or None, default="auto"
            The feature that colours the dots: ``"auto"`` picks the one that
            interacts most (see :func:`interaction_partner`), a name or
            position chooses, None draws one colour.
        ax : matplotlib Axes, optional
            Where to draw; None (default) draws on a new figure.
        random_state : int, default=0
            Seed of the jitter of categorical features.
        output : label, str or int, optional
            With several outputs, the one drawn (a class label, an output
            name or a position); required then, and an error names the outputs.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> X = np.random.default_rng(0).normal(size=(30, 3))
        >>> attr = ml.shapley(lambda A: A @ [1.0, 2.0, -1.0], X, background=X)
        >>> ax = attr.plot.dependence("x1")
        >>> ax.get_xlabel(), ax.get_ylabel()
        ('x1', 'SHAP value of x1')
        """
        if output is not None or self._a.outputs is not None:
            return self._one(output, "dependence").dependence(feature, color=color, ax=ax, random_state=random_state)
        a = self._a
        j = a.index_of(feature)
        members = (a.diagnostics.get("groups") or {}).get(a.feature_names[j], [None])
        if len(members) > 1:
            raise InvalidParameterError(
                f"{a.feature_names[j]!r} is a group of {len(members)} features {members}: it "
                "has no one value to plot its Shapley values against. Use plot.beeswarm() or "
                "plot.bar() for groups, or explain without groups= for one feature's dependence.")
        numeric = a.numeric_data()
        x = numeric[:, j].copy()
        phi = a.values[:, j]
        categorical = a.kinds[j] == "categorical" or _is_boolean(a, j)
        if categorical:
            x += np.random.default_rng(random_state).uniform(-0.15, 0.15, size=x.shape)
        ax = _axes(ax, (5.4, 3.8))
        partner = None
        if isinstance(color, str) and color == "auto":
            partner = _partner_of(a, j)
        elif color is not None:
            partner = a.index_of(color)
        if partner is None:
            ax.scatter(x, phi, s=12, color=_NEG, lw=0, alpha=0.8)
        else:
            c = numeric[:, partner]
            missing = np.isnan(c)
            ax.scatter(x[missing], phi[missing], s=12, color="0.6", lw=0)
            pts = ax.scatter(x[~missing], phi[~missing], c=c[~missing], s=12, cmap=_CMAP, lw=0)
            bar = ax.figure.colorbar(pts, ax=ax, aspect=30, pad=0.02)
            bar.set_label(a.feature_names[partner], fontsize=8)
            if a.kinds[partner] == "categorical" or _is_boolean(a, partner):
                levels = _levels(a, partner)
                bar.set_ticks(np.arange(len(levels)))
                bar.set_ticklabels([str(v) for v in levels])
        if categorical:
            levels = _levels(a, j)
            ax.set_xticks(np.arange(len(levels)))
            ax.set_xticklabels([str(v) for v in levels], fontsize=8)
        ax.axhline(0, color="0.6", lw=0.6, zorder=0)
        ax.set_xlabel(a.feature_names[j])
        ax.set_ylabel(f"{_method_label(a)} of {a.feature_names[j]}")
        return ax
