"""The plots of a text's or an image's attributions (``attr.plot.text()``, ``.image()``).

A mixin of :class:`~modellens.plot.attributions.AttributionPlots`, which holds the
attributions as ``self._a``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .lime import plot_image, plot_text, text_html

__all__ = ["MediaPlots"]


class MediaPlots:
    """``attr.plot.text()``, ``attr.plot.text_html()`` and ``attr.plot.image()``."""

    _a: Any  # the attributions drawn (plots read their fields)

    def _media_output(self, output):
        """The single-output attributions drawn: ``output``'s, by default the predicted class's."""
        a = self._a
        if getattr(a, "outputs", None) is None:
            return a
        if output is None:
            output = int(np.argmax(np.asarray(a.prediction)[0]))
        return a.for_output(output)

    def text(self, i=0, *, width=80, ax=None, output=None):
        """Draw the text with its words coloured by their values, to see which words count.

        Each word sits in a box coloured by its value (red raises the
        output, blue lowers it, the stronger the darker), the lines wrapped
        at ``width`` characters; the title holds the fit's R^2 for LIME.  For
        :func:`modellens.lime_text` and ``shapley(..., masker="text")``.

        Parameters
        ----------
        i : int, default=0
            The row, by position.
        width : int, default=80
            Characters per line.
        ax : matplotlib Axes, optional
            Where to draw; None (default) draws on a new figure.
        output : str or int, optional
            The output (class) drawn when the result holds several; default
            the class the model predicts for the text.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> def predict_fn(texts):  # P(positive) rises with "great"
        ...     p = np.array([0.9 if "great" in t.split() else 0.2 for t in texts])
        ...     return np.column_stack([1 - p, p])
        >>> attr = ml.lime_text(predict_fn, "a great movie", target=1, num_samples=200,
        ...                     random_state=0)
        >>> ax = attr.plot.text()
        >>> [t.get_text() for t in ax.texts]  # one box per word
        ['a', 'great', 'movie']
        """
        return plot_text(self._media_output(output), i, width=width, ax=ax)

    def text_html(self, i=0, *, output=None) -> str:
        """Write the coloured text of :meth:`text` as HTML, for notebooks and reports.

        Each word's background is coloured by its value (red up, blue down)
        and its value is in the word's tooltip; everything from the text is
        HTML-escaped.

        Parameters
        ----------
        i : int, default=0
            The row, by position.
        output : str or int, optional
            As in :meth:`text`.

        Returns
        -------
        str
            A ``<div>`` element (``IPython.display.HTML`` shows it).

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> def predict_fn(texts):  # P(positive) rises with "great"
        ...     p = np.array([0.9 if "great" in t.split() else 0.2 for t in texts])
        ...     return np.column_stack([1 - p, p])
        >>> attr = ml.lime_text(predict_fn, "a great movie", target=1, num_samples=200,
        ...                     random_state=0)
        >>> html = attr.plot.text_html()
        >>> html.startswith("<div"), html.count("<span")  # one span per word
        (True, 3)
        """
        return text_html(self._media_output(output), i)

    def image(self, i=0, *, positive=5, negative=5, image=None, ax=None):
        """Draw the image with its strongest superpixels tinted, to see where the model looks.

        The ``positive`` superpixels with the largest values are tinted red,
        the ``negative`` with the most negative blue, and the superpixels'
        borders drawn.  For :func:`modellens.lime_image` and
        ``shapley(..., masker="image")``.

        Parameters
        ----------
        i : int, default=0
            The row, by position.
        positive, negative : int, default=5
            Superpixels tinted on each side.
        image : ndarray, optional
            The image to draw under the tint; default the explained one.
        ax : matplotlib Axes, optional
            Where to draw; None (default) draws on a new figure.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import numpy as np, modellens as ml
        >>> image = np.random.default_rng(0).random((16, 16, 3))
        >>> labels = (np.arange(16)[:, None] // 8) * 2 + np.arange(16)[None, :] // 8
        >>> def predict_fn(images):  # looks at the top-left quarter only
        ...     return images[:, :8, :8].std(axis=(1, 2, 3))
        >>> attr = ml.lime_image(predict_fn, image, segmentation=labels, num_samples=200,
        ...                      random_state=0)
        >>> ax = attr.plot.image(positive=1, negative=0)
        >>> len(ax.images), ax.images[0].get_array().shape[:2]  # the image, its size
        (1, (16, 16))
        """
        return plot_image(self._a, i, positive=positive, negative=negative, image=image, ax=ax)

    # -------------------------------------------------------- global plots
