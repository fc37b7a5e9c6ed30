"""The one error the file layer raises, and its one-line form of other libraries' errors."""

from __future__ import annotations

from .._validation import InvalidParameterError

__all__ = ["FileError", "one_line"]


class FileError(InvalidParameterError):
    """A file that cannot be read as the model expects, or a model file that is refused."""


def one_line(exc) -> str:
    """``exc``'s message on one line (pandas, pyarrow and the model libraries write several)."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__
