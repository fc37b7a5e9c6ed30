"""Figures as embedded images and the page rendered by Jinja2 with autoescaping."""

from __future__ import annotations

import base64
import io
import secrets
from dataclasses import dataclass

__all__ = ["Figure", "figure_from", "render_page"]


@dataclass(frozen=True)
class Figure:
    """One picture of a section: a PNG held in memory, embedded in the page as a data URI.

    Attributes
    ----------
    title : str
        What the picture shows (escaped on the page like every other string).
    png : bytes
    caption : str
    """

    title: str
    png: bytes
    caption: str = ""
    #: Width on the page in CSS pixels (the PNG holds twice as many, for HiDPI screens).
    width: int = 0

    @property
    def data_uri(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")


#: Points of the one font size of every picture (titles, labels, ticks, legends).
FONT_SIZE = 9
#: PNG pixels per CSS pixel: sharp on HiDPI screens and in print.
SCALE = 2


def figure_from(fig, title: str, caption: str = "", *, dpi: int = 80) -> Figure:
    """Encode a matplotlib figure as PNG at twice ``dpi`` and close it.

    PNG rather than SVG: a beeswarm or ICE plot has thousands of marks, which
    would make SVG files large and slow to open, while a PNG is a few tens of
    kilobytes whatever is drawn.  The page shows it at ``dpi`` (CSS pixels),
    so the PNG's ``SCALE`` x resolution stays sharp on HiDPI screens.  Every
    text of the figure is set to one size, so that pictures drawn by different
    renderers read alike.
    """
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    from ..plot import plain_figure

    buf = io.BytesIO()
    try:
        plain_figure(fig)  # names as text, long ones cut
        for text in fig.findobj(Text):
            if text.get_text():
                text.set_fontsize(FONT_SIZE)
        fig.savefig(buf, format="png", dpi=dpi * SCALE, bbox_inches="tight")
    finally:
        plt.close(fig)
    png = buf.getvalue()
    width = int.from_bytes(png[16:20], "big")  # the IHDR chunk's width
    return Figure(str(title), png, str(caption), width=max(1, round(width / SCALE)))


def _environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined

    # autoescape=True for every template: each string from the data or the model
    # (column names, category labels, file names) is escaped where it is printed
    return Environment(loader=PackageLoader("modellens.report", "templates"), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def render_page(**context) -> str:
    """The report as one HTML document (see ``templates/report.html``).

    Every script of the page carries a nonce drawn here, and the page's
    content security policy runs only scripts with it and loads nothing from
    the network, a second wall behind the escaping should a string ever slip
    through unescaped.
    """
    template = _environment().get_template("report.html")
    return template.render(nonce=secrets.token_urlsafe(16), **context)
