"""The version of modellens, written in this one place (pyproject reads it)."""

__version__ = "0.1.0"
