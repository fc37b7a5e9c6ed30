"""Figures as embedded images and the page rendered by Jinja2 with autoescaping."""

from __future__ import annotations

import base64
import contextlib
import io
import secrets

__all__ = ["Figure", "drawing", "figure_from", "render_figures", "render_page"]


@contextlib.contextmanager
def drawing(rc: dict):
    """A section's drawing: under the report's matplotlib settings ``rc``, every new figure
    a plain ``Figure`` outside pyplot (:func:`modellens.plot.plain_figures`): a user's open
    figures are neither counted nor touched."""
    import matplotlib

    from ..plot import plain_figures

    with matplotlib.rc_context(rc), plain_figures():
        yield


class Figure:
    """One picture of a section: a matplotlib figure, encoded as PNG when the page needs it.

    A report built only to read its numbers never encodes a picture; the page
    (:meth:`Report.to_html`, ``save``) encodes every one it has not yet, in
    parallel processes (:func:`render_figures`), and keeps the PNG.

    Attributes
    ----------
    title : str
        What the picture shows (escaped on the page like every other string).
    png : bytes
        The picture, encoded on first use.
    caption : str
    width : int
        Width on the page in CSS pixels (the PNG holds ``SCALE`` times as many).
    """

    def __init__(self, title: str, png: bytes | None = None, caption: str = "", *,
                 figure=None, dpi: int = 80):
        self.title, self.caption = str(title), str(caption)
        self._png, self._figure, self._dpi = png, figure, dpi

    @property
    def rendered(self) -> bool:
        return self._png is not None

    @property
    def png(self) -> bytes:
        if self._png is None:
            self._keep(_encode(self._figure, self._dpi))
        assert self._png is not None
        return self._png

    def _keep(self, png: bytes) -> None:
        self._png, self._figure = png, None  # the figure's memory goes with it

    @property
    def width(self) -> int:
        png = self.png
        return max(1, round(int.from_bytes(png[16:20], "big") / SCALE))  # IHDR's width

    @property
    def data_uri(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")


#: Points of the one font size of every picture (titles, labels, ticks, legends).
FONT_SIZE = 9
#: PNG pixels per CSS pixel: sharp on HiDPI screens and in print.
SCALE = 2


def figure_from(fig, title: str, caption: str = "", *, dpi: int = 80) -> Figure:
    """A section's picture of a matplotlib figure, to be encoded as PNG at ``SCALE`` x ``dpi``.

    PNG rather than SVG: a beeswarm or ICE plot has thousands of marks, which
    would make SVG files large and slow to open, while a PNG is a few tens of
    kilobytes whatever is drawn.  The page shows it at ``dpi`` (CSS pixels),
    so the PNG's ``SCALE`` x resolution stays sharp on HiDPI screens.  Every
    text of the figure is set to one size here, so that pictures drawn by
    different renderers read alike, and the figure is encoded when the page is written.
    The report draws on plain figures (:func:`modellens.plot.plain_figures`), outside
    pyplot; a figure of pyplot's given here leaves it (no window, no count of open
    figures).
    """
    from matplotlib.text import Text

    from ..plot import plain_figure

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    try:
        plain_figure(fig)  # names as text, long ones cut
        for text in fig.findobj(Text):
            if text.get_text():
                text.set_fontsize(FONT_SIZE)
    finally:
        if getattr(fig.canvas, "manager", None) is not None:  # pyplot's
            import matplotlib.pyplot as plt

            plt.close(fig)
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)  # drawn later by Agg, whatever pyplot's backend was
    return Figure(str(title), None, str(caption), figure=fig, dpi=dpi)


def _encode(fig, dpi: int) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi * SCALE, bbox_inches="tight")
    return buf.getvalue()


#: Fewest pictures worth starting processes for (a process costs about as much as one).
PARALLEL_FROM = 6
#: Most processes encoding pictures at once.
MAX_PROCESSES = 4
#: The pictures a forked process encodes: set by the parent just before it forks.
_PENDING: list = []


def _encode_pending(i: int) -> bytes:
    figure = _PENDING[i]
    return _encode(figure._figure, figure._dpi)


def render_figures(figures) -> None:
    """Encode every picture of ``figures`` not encoded yet, in parallel where it pays.

    Drawing a figure is single-threaded Python and C that holds the GIL, so
    threads would not overlap; forked processes inherit the figures, encode
    a share each and send back only PNG bytes.  Without ``fork`` (Windows,
    macOS' default), on one core, or for a few pictures, they are encoded
    here one after another, with the same bytes.
    """
    import multiprocessing

    from .._process import usable_cores

    pending = [f for f in figures if not f.rendered]
    cores = usable_cores(unknown=1)  # (the processes are forked: only where cores are known)
    workers = min(cores, MAX_PROCESSES)
    if workers < 2 or len(pending) < PARALLEL_FROM or \
            "fork" not in multiprocessing.get_all_start_methods():
        for f in pending:
            f.png  # noqa: B018 - encodes and keeps it
        return
    global _PENDING
    _PENDING = pending
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            encoded = pool.map(_encode_pending, range(len(pending)),
                               chunksize=max(1, len(pending) // (4 * workers)))
    except Exception:  # noqa: BLE001 - no processes to be had (a daemon, no memory): here,
        # one after another; an error of a figure itself is raised by this pass
        encoded = [_encode(f._figure, f._dpi) for f in pending]
    finally:
        _PENDING = []
    for f, png in zip(pending, encoded):
        f._keep(png)


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
