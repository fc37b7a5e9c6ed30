"""Pictures of local surrogates: weights with R^2, width sweeps, highlighted texts and images."""

from __future__ import annotations

import html

import numpy as np

from .._validation import InvalidParameterError, check_int
from ._common import _NEG, _POS, _axes, _row, literal_text

__all__ = ["plot_weights", "plot_width_sweep", "text_html", "plot_text", "plot_image"]

#: Width of one character of a monospace font, in ems (DejaVu Sans Mono's advance).
_MONO_ADVANCE = 0.602


def _fit_title(a, i) -> str:
    parts = [a.output]
    fit = a.surrogate
    if fit is not None and fit.score is not None:
        parts.append(f"weighted R\u00b2 = {float(fit.score[i]):.2f}")
    held = None if fit is None else fit.score_holdout
    if held is not None:
        parts.append(f"held-out {float(np.asarray(held)[i]):.2f}")
    return " \u00b7 ".join(parts)


@literal_text
def plot_weights(a, i=0, *, max_display=10, ax=None):
    """Horizontal bars of one row's weights (largest first), R^2 in the title."""
    i = _row(a, i)
    max_display = check_int(max_display, "max_display", low=1)
    w = a.values[i]
    order = [j for j in np.argsort(-np.abs(w), kind="stable") if w[j] != 0][:max_display]
    conditions = None if a.surrogate is None else a.surrogate.conditions
    labels = [conditions[i][j] if conditions is not None else a.feature_names[j]
              for j in order]
    ax = _axes(ax, (6.4, 0.4 * max(len(order), 2) + 1.2))
    y = np.arange(len(order))[::-1]
    ax.barh(y, w[order], color=[_POS if w[j] > 0 else _NEG for j in order])
    ax.set_yticks(y, labels)
    ax.axvline(0, color="0.3", lw=0.8)
    ax.set_xlabel(f"weight ({a.method})")
    ax.set_title(_fit_title(a, i), fontsize="medium")
    return ax


#: The lowest held-out R^2 the width sweep's axis shows: below -1 the surrogate
#: predicts worse than a constant by more than the output's own spread, and
#: how much worse does not matter for choosing a width.
_R2_FLOOR = -1.0


@literal_text
def plot_width_sweep(sweep, *, max_display=6, ax=None):
    """Each top feature's weight against the kernel width, with R^2 on a twin axis.

    The held-out R^2 axis runs from at most -1 to 1: values below -1 (a
    surrogate much worse than a constant, common at narrow widths) run off
    the axis and are marked by triangles at -1.
    """
    max_display = check_int(max_display, "max_display", low=1)
    ax = _axes(ax, (7.0, 4.2))
    top = np.argsort(-np.abs(sweep.values).max(axis=0), kind="stable")[:max_display]
    for j in top:
        ax.plot(sweep.widths, sweep.values[:, j], marker=".", label=sweep.feature_names[j])
    ax.set_xscale("log")
    ax.axvline(sweep.default_width, color="0.5", ls="--", lw=0.8)
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_xlabel("kernel width (dashed: default 0.75 \u221ad)")
    ax.set_ylabel("surrogate weight")
    twin = ax.twinx()
    held = np.asarray(sweep.score_holdout, dtype=float)
    twin.plot(sweep.widths, held, color="0.4", ls=":", label="held-out R\u00b2")
    finite = held[np.isfinite(held)]
    low = max(_R2_FLOOR, min(0.0, float(finite.min()) if finite.size else 0.0))
    twin.set_ylim(low - 0.03 * (1.0 - low), 1.0)
    below = held < _R2_FLOOR
    if below.any():
        twin.plot(np.asarray(sweep.widths)[below], np.full(int(below.sum()), _R2_FLOOR),
                  "v", color="0.4", ms=5, clip_on=False,
                  label=f"held-out R\u00b2 < {_R2_FLOOR:g} (off the axis)")
    twin.set_ylabel("held-out weighted R\u00b2 (dotted)")
    handles, labels = ax.get_legend_handles_labels()
    more, more_labels = twin.get_legend_handles_labels()
    ax.legend(handles + more, labels + more_labels, fontsize="small", loc="best")
    return ax


def _text_parts(a, i):
    media = a.media
    text, spans = (None, None) if media is None else (media.text, media.spans)
    if text is None or spans is None:
        raise InvalidParameterError("this Attributions holds no text: text plots are for "
                                    "lime_text / shapley(..., masker='text') results.")
    return text, np.asarray(spans, dtype=np.intp).reshape(-1, 3), _shown_weights(a, i)


def _shown_weights(a, i):
    """Row ``i``'s weights with rounding noise set to 0.

    A model that ignores a word still gets a weight of ~1e-30 from the fit's
    rounding; scaled by the largest such weight it would be drawn as strongly as a
    real effect.  Weights under 1e-9 of the output's own scale are noise.
    """
    w = np.asarray(a.values[i], dtype=np.float64)
    scale = np.abs(w).max(initial=0.0)
    for ref in (a.prediction, a.base_values):
        if ref is not None:
            scale = max(scale, abs(float(np.asarray(ref)[i])))
    return np.where(np.abs(w) > 1e-9 * scale, w, 0.0)


def _rgba(w, scale):
    alpha = 0.0 if scale == 0 else min(1.0, abs(w) / scale) * 0.8
    r, g, b = (214, 64, 78) if w > 0 else (47, 127, 193)
    return f"rgba({r},{g},{b},{alpha:.2f})"


def text_html(a, i=0) -> str:
    """The text with each word's background coloured by its weight (red up, blue down).

    Everything from the text is HTML-escaped; each word's weight is in its
    ``title`` (a tooltip).
    """
    i = _row(a, i)
    text, spans, w = _text_parts(a, i)
    scale = float(np.abs(w).max())
    out, pos = [], 0
    for start, end, k in spans:
        out.append(html.escape(text[pos:start]))
        word = html.escape(text[start:end])
        out.append(f'<span style="background:{_rgba(w[k], scale)};border-radius:3px;'
                   f'padding:0 1px" title="{html.escape(a.feature_names[k])}: '
                   f'{w[k]:+.4g}">{word}</span>')
        pos = end
    out.append(html.escape(text[pos:]))
    return (f'<div class="modellens-text" style="font-family:sans-serif;line-height:1.8">'
            f'<div style="font-size:small;color:#555">{html.escape(_fit_title(a, i))}</div>'
            f'<div>{"".join(out)}</div></div>')


@literal_text
def plot_text(a, i=0, *, width=80, ax=None):
    """The text drawn in matplotlib, words boxed in their weight's colour, lines of ``width``."""
    import matplotlib.colors as mcolors

    i = _row(a, i)
    width = check_int(width, "width", low=10)
    text, spans, w = _text_parts(a, i)
    scale = float(np.abs(w).max())
    pieces, pos = [], 0
    for start, end, k in spans:
        pieces.append((text[pos:start], None))
        pieces.append((text[start:end], w[k]))
        pos = end
    pieces.append((text[pos:], None))
    lines: list[list] = []
    line: list = []
    used = 0
    for piece, weight in pieces:
        for j, chunk in enumerate(piece.split("\n")):
            if j:
                lines.append(line)
                line, used = [], 0
            if used + len(chunk) > width and line:
                lines.append(line)
                line, used = [], 0
                chunk = chunk.lstrip() if weight is None else chunk
            line.append((chunk, weight))
            used += len(chunk)
    lines.append(line)
    from matplotlib.transforms import offset_copy

    size = 10.0
    advance = _MONO_ADVANCE * size  # points per character of a monospace font
    ax = _axes(ax, (advance * width / 72 + 0.4, 0.3 * len(lines) + 0.7))
    ax.set_axis_off()
    ax.set_ylim(len(lines), -0.5)
    # pieces are placed in points from the left edge, so the layout does not depend on
    # the axes' data scale (which a constrained layout changes when it draws)
    for r, line in enumerate(lines):
        column = 0
        for chunk, weight in line:
            if chunk.strip():
                box = None
                if weight is not None and scale > 0:
                    colour = mcolors.to_rgba(_POS if weight > 0 else _NEG,
                                             min(1.0, abs(weight) / scale) * 0.8)
                    box = {"facecolor": colour, "edgecolor": "none", "pad": 1.0}
                where = offset_copy(ax.get_yaxis_transform(), fig=ax.figure,
                                    x=column * advance, units="points")
                ax.text(0, r + 0.5, chunk, family="monospace", va="center", ha="left",
                        bbox=box, fontsize=size, transform=where)
            column += len(chunk)
    ax.set_title(_fit_title(a, i), fontsize="medium")
    return ax


def _boundaries(segments):
    edge = np.zeros(segments.shape, dtype=bool)
    edge[:-1] |= segments[:-1] != segments[1:]
    edge[:, :-1] |= segments[:, :-1] != segments[:, 1:]
    return edge


@literal_text
def plot_image(a, i=0, *, positive=5, negative=5, image=None, ax=None):
    """The image with its ``positive`` most positive superpixels tinted red and
    ``negative`` most negative tinted blue, superpixel borders drawn."""
    import matplotlib.colors as mcolors

    i = _row(a, i)
    media = a.media
    if media is None or media.segments is None:
        raise InvalidParameterError("this Attributions holds no segments: image plots are for "
                                    "lime_image / shapley(..., masker='image') results.")
    segments = media.segments
    image = media.image if image is None else image
    if image is None:
        raise InvalidParameterError("pass image=: the result does not carry the image.")
    positive = check_int(positive, "positive", low=0)
    negative = check_int(negative, "negative", low=0)
    img = np.asarray(image, dtype=np.float64)
    lo, hi = float(img.min()), float(img.max())
    img = (img - lo) / (hi - lo) if hi > lo else np.zeros_like(img)
    if img.ndim == 2 or img.shape[2] == 1:
        img = np.repeat(img.reshape(img.shape[0], img.shape[1], 1), 3, axis=2)
    img = img[..., :3]
    w = _shown_weights(a, i)
    order = np.argsort(-w, kind="stable")
    ups = [k for k in order[:positive] if w[k] > 0]
    downs = [k for k in order[::-1][:negative] if w[k] < 0]
    shown = img * 0.55 + 0.45 * img.mean(axis=2, keepdims=True)  # dim the rest
    for ids, colour in ((ups, _POS), (downs, _NEG)):
        rgb = np.array(mcolors.to_rgb(colour))
        inside = np.isin(segments, ids)
        shown[inside] = 0.5 * img[inside] + 0.5 * rgb
    shown[_boundaries(segments)] = 1.0
    ax = _axes(ax, (5.0, 5.0))
    ax.imshow(np.clip(shown, 0, 1))
    ax.set_axis_off()
    ax.set_title(_fit_title(a, i) + f"\nred: top {len(ups)} up, blue: top {len(downs)} down",
                 fontsize="medium")
    return ax
